# t_hook_routes.sh - every hook of shim/hooks.def, through every route that
# reaches it, runs the shim's wrapper, and leaves errno as the library left it
# (issue 26 item 15).  The client (tests/clients/gen_hookcall.py, hookcall_main.c)
# is written from hooks.def here: a new hook is a new call, and one the doubles
# do not export fails the build below.  Routes (docs/hooks.md): plt, dlsym, and
# for driver functions cuGetProcAddress, cuGetProcAddress_v2,
# cudaGetDriverEntryPoint, cudaGetDriverEntryPointByVersion.
#  1. each route reaches with the shim what it reaches without it (a getter
#     that hands out anything but dlsym's answer for the name shows here);
#  2. per route and hook, two forked children: one only looks the function up,
#     one also calls it once; the caller's exit event must count at least one
#     call more (a route that hands out the real function counts none);
#  3. errno: each hook called twice in a child with errno set to a marker
#     before; after the second call it must be what it is without the shim.
source "$(dirname "$0")/../lib.sh"
export CONVGUARD_QUIET=1
unset LD_LIBRARY_PATH
CC=${CC:-cc}
command -v python3 >/dev/null || skip_all "no python3"
[ -e "$DOUBLES/cudnn9/libcudnn.so.9" ] || skip_all "no doubles (make doubles)"
ROUTES="plt dlsym cuGetProcAddress cuGetProcAddress_v2 cudaGetDriverEntryPoint cudaGetDriverEntryPointByVersion"
HC=$WORK/hookcall

python3 "$ROOT/tests/clients/gen_hookcall.py" "$ROOT/shim/hooks.def" "$WORK/hookcall.c"
check "every hook of hooks.def is exported by the doubles (hookcall links against them)" \
    $CC -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -I"$ROOT/shim" -I"$ROOT/tests/doubles" -I"$ROOT/tests/clients" \
    -o "$HC" "$WORK/hookcall.c" "$ROOT/tests/clients/hookcall_main.c" \
    -L"$DOUBLES/cuda" -L"$DOUBLES/cudart" -L"$DOUBLES/cudnn9" -l:libcuda.so.1 -l:libcudart.so.13 -l:libcudnn.so.9 \
    -Wl,-rpath,"$DOUBLES/cuda:$DOUBLES/cudart:$DOUBLES/cudnn9" -Wl,--disable-new-dtags -ldl
[ -x "$HC" ] || { finish; exit 1; }

n_def=$(grep -c '^CG_HOOK[A-Z_]*(' "$ROOT/shim/hooks.def")
n_hc=$("$HC" list | wc -l)
check "hookcall calls all $n_def hooks of hooks.def ($n_hc)" test "$n_hc" = "$n_def"

# 1. what each route reaches
"$HC" routes >"$WORK/routes.plain" 2>"$WORK/routes.plain.err"
run_shim "$WORK/t-routes" "$HC" routes >"$WORK/routes.shim" 2>"$WORK/routes.shim.err"
check "each route reaches the same hooks with the shim as without ($(grep -c ' ok ' "$WORK/routes.plain") route x hook pairs)" \
    cmp "$WORK/routes.plain" "$WORK/routes.shim"
diff "$WORK/routes.plain" "$WORK/routes.shim" | head -5
check "every hook is reached by plt and dlsym" \
    test "$(grep -E '^(plt|dlsym) ' "$WORK/routes.plain" | grep -c ' ok ')" = $((2 * n_def))
n_drv=$("$HC" list | grep -c ' DRV$')
check "every driver hook ($n_drv) is reached by cuGetProcAddress_v2 and cudaGetDriverEntryPointByVersion" \
    test "$(grep -E '^cu(GetProcAddress_v2|daGetDriverEntryPointByVersion) ' "$WORK/routes.plain" | grep -c ' ok ')" = $((2 * n_drv))

# 2. the wrapper ran: one call more in the caller's count than in a lookup alone
run_shim "$WORK/t-fork" "$HC" fork $ROUTES >"$WORK/fork.out" 2>"$WORK/fork.err"
check "no child failed" bash -c "! grep -q '^bad' '$WORK/fork.out'"
jq -c 'select(.ev == "exit") | [.pid, .calls]' "$WORK"/t-fork/*.jsonl >"$WORK/exits" 2>/dev/null
python3 - "$WORK/fork.out" "$WORK/exits" >"$WORK/uncounted" <<'EOF'
import json, sys
calls = {}
for line in open(sys.argv[2]):
    pid, c = json.loads(line)
    calls[pid] = c
child = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "child":
        child[(f[1], f[2], f[3])] = int(f[4])
for (route, name, mode), pid in sorted(child.items()):
    if mode != "call":
        continue
    made = calls.get(pid, {}).get(name, 0) - calls.get(child.get((route, name, "lookup"), -1), {}).get(name, 0)
    print("%s %s %d" % (route, name, made) if made < 1 else "counted", file=sys.stdout)
EOF
n_pairs=$(grep -c ' ok ' "$WORK/routes.plain")
check "a child per reachable route x hook called it ($n_pairs)" test "$(grep -c '^counted$\|^[a-z]' "$WORK/uncounted")" = "$n_pairs"
check "every hook through every route that reaches it ran the wrapper (the call counted)" \
    bash -c "! grep -v '^counted$' '$WORK/uncounted' | grep -q ."
grep -v '^counted$' "$WORK/uncounted" | sed 's/^/    not counted: /' | head -10

# 3. errno as the library leaves it
"$HC" errno $ROUTES >"$WORK/errno.plain" 2>/dev/null
run_shim "$WORK/t-errno" "$HC" errno $ROUTES >"$WORK/errno.shim" 2>/dev/null
n_ok=$(grep -c ' call2 rc=0 ' "$WORK/errno.plain")
check "errno after every hooked call ($(grep -c ' call2 ' "$WORK/errno.plain"), $n_ok succeeding) as without the shim" \
    cmp <(grep ' call2 ' "$WORK/errno.plain") <(grep ' call2 ' "$WORK/errno.shim")
diff <(grep ' call2 ' "$WORK/errno.plain") <(grep ' call2 ' "$WORK/errno.shim") | head -6
check "the succeeding calls cover every family" \
    bash -c "grep ' call2 rc=0 ' '$WORK/errno.plain' | grep -q ' cudnn' && grep ' call2 rc=0 ' '$WORK/errno.plain' | grep -q ' cuda[A-Z]' &&
             grep ' call2 rc=0 ' '$WORK/errno.plain' | grep -q ' cu[A-Z]'"
# the first call of a cuDNN function also loads its sub-library (dlopen, dlerror): reported, not judged here
n_first=$(diff <(grep ' call1 ' "$WORK/errno.plain") <(grep ' call1 ' "$WORK/errno.shim") | grep -c '^<')
echo "  (first calls whose errno differs, the sub-library's dlopen/dlerror inside them: $n_first)"
finish
