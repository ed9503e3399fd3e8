# t_check.sh - convguard.check() in Python (python/convguard/_check.py), with the
# package as a source checkout holds it (PYTHONPATH=python, the command from
# build/): in a process that preloads the shim and called the real cuDNN 9.19
# cudnnCreate (CUDNN_STATUS_NOT_INITIALIZED here: no driver), in one without
# the shim, and in one with no CUDA library.  check() itself must load no CUDA
# library, leave no trace of its own children, and give the same rules'
# words as `convguard report` and `inspect` (no rule is in Python).
# Also `convguard kernel` of a make install finds the installed package.
source "$(dirname "$0")/../lib.sh"
PY=$(command -v python3) || skip_all "no python3"
REAL=${CG_REAL_CUDA_LIB:-/usr/local/cuda/lib}
[ -e "$REAL/libcudnn.so.9" ] || skip_all "no real cuDNN 9 in $REAL"
export PYTHONPATH=$ROOT/python CONVGUARD_BIN=$BUILD_DIR/convguard
cat >"$WORK/traced.py" <<PYEOF
import ctypes, json, os, sys
lib = ctypes.CDLL("$REAL/libcudnn.so.9")
h = ctypes.c_void_p()
rc = lib.cudnnCreate(ctypes.byref(h))
import convguard
import re
def cuda_files():
    return {l.split()[-1] for l in open("/proc/self/maps") if re.search(r"cuda|cudnn|nvidia|cublas|nvrtc|nccl", l)}
maps_before = cuda_files()
c = convguard.check()
maps_after = cuda_files()
again = convguard.check()  # the name stays the function (not shadowed by a submodule)
d = c.to_dict()
json.dump({"rc": rc, "text": str(c), "dict": d, "html": c._repr_html_(), "page": c.html(),
           "problems": c.problems, "preloaded": c.preloaded,
           "maps_same": maps_before == maps_after and len(maps_before) > 0,
           "again_same_trace": again.trace_path == c.trace_path}, open(sys.argv[1], "w"))
PYEOF
mkdir -p "$WORK/run1" && (cd "$WORK/run1" && CONVGUARD_QUIET=1 LD_PRELOAD=$SHIM "$PY" "$WORK/traced.py" "$WORK/o1.json")
check "traced: the script ran (cudnnCreate returned 1001, NOT_INITIALIZED)" jq -e '.rc == 1001' "$WORK/o1.json"
TR=$(ls "$WORK"/run1/convguard-logs/*.jsonl 2>/dev/null)
check "traced: exactly one trace in ./convguard-logs (check()'s own commands wrote none)" test "$(echo "$TR" | grep -c .)" = 1
check "traced: preloaded, the trace's path" jq -e --arg t "$TR" '.preloaded and .dict.trace_path == $t' "$WORK/o1.json"
check "traced: the text names the trace file" jq -e --arg t "$TR" '.text | contains($t)' "$WORK/o1.json"
check "traced: the text names cuDNN 9.19.0, mapped now" jq -e '.text | test("libcudnn.so.9 +9\\.19\\.0")' "$WORK/o1.json"
check "traced: the text names the failure (cudnnCreate -> CUDNN_STATUS_NOT_INITIALIZED)" \
    jq -e '.text | contains("cudnnCreate -> CUDNN_STATUS_NOT_INITIALIZED")' "$WORK/o1.json"
check "traced: a Python process with no framework keeps the frameworks' words (not 'no framework seen')" \
    jq -e '(.text | contains("you see: TensorFlow: ")) and (.text | contains("no framework seen") | not)' "$WORK/o1.json"
check "traced: the headline counts the trace's problem" jq -e '.problems >= 1 and (.text | startswith("convguard check: pid ")) and (.text | test("[0-9]+ problems?;"))' "$WORK/o1.json"
# the same words as convguard report on that trace: the rule's cause line comes from C
"$BUILD_DIR/convguard" report --json "$TR" >"$WORK/rep.json" 2>/dev/null
check "traced: to_dict()'s trace model is the report's (same rule ids)" \
    bash -c "jq -S '[.dict.trace.findings[].rule]' '$WORK/o1.json' >'$WORK/a'; jq -S '[.findings[].rule]' '$WORK/rep.json' >'$WORK/b'; test -s '$WORK/a' && cmp -s '$WORK/a' '$WORK/b' && grep -q '\"' '$WORK/a'"
check "traced: to_dict()'s inspect model lists the mapped cuDNN with version 91900" \
    jq -e '[.dict.inspect.libraries[] | select(.soname == "libcudnn.so.9") | .version] | index(91900) != null' "$WORK/o1.json"
check "traced: check() called twice: the second names the same trace" jq -e '.again_same_trace' "$WORK/o1.json"
check "traced: check() mapped no CUDA-family file in the process" jq -e '.maps_same' "$WORK/o1.json"
check "traced: HTML in an iframe, the page holds the failure and the trace's path" \
    jq -e --arg t "$TR" '(.html | startswith("<iframe")) and (.page | contains("CUDNN_STATUS_NOT_INITIALIZED")) and (.page | contains($t))' "$WORK/o1.json"
check "traced: the page loads nothing from outside (no src=/href= to http, no <link>, no <script src>)" \
    jq -e '.page | test("(src|href)=\"(https?:)?//|<link |<script src") | not' "$WORK/o1.json"

# 2. no shim: the snapshot alone, and the way to get a trace
mkdir -p "$WORK/run2" && (cd "$WORK/run2" && "$PY" "$WORK/traced.py" "$WORK/o2.json")
check "untraced: not preloaded, no trace, the text says so" \
    jq -e '(.preloaded | not) and .dict.trace == null and (.text | contains("no trace: convguard is not preloaded here"))' "$WORK/o2.json"
check "untraced: still names cuDNN 9.19.0 mapped" jq -e '.text | test("libcudnn.so.9 +9\\.19\\.0")' "$WORK/o2.json"
check "untraced: the page names the kernel install command" jq -e '.page | contains("convguard kernel install --user")' "$WORK/o2.json"
check "untraced: no convguard-logs made" test ! -e "$WORK/run2/convguard-logs"

# 3. no CUDA library at all (inspect's exit status 6 is a state, not an error)
"$PY" -c 'import convguard; c = convguard.check(); print(c); assert c.to_dict()["inspect"]["exit_status"] == 6' >"$WORK/o3" 2>&1
check "no CUDA: check() works, says no CUDA library is mapped" grep -q "has no CUDA library mapped" "$WORK/o3"
# 4. another pid, and a bad one
"$PY" -c 'import convguard, os; print(convguard.check(os.getppid()).pid == os.getppid())' >"$WORK/o4" 2>&1
check "check(pid) of another process" grep -qx True "$WORK/o4"
"$PY" -c 'import convguard; convguard.check(4194304)' >"$WORK/o5" 2>&1
check "check() of a pid that does not exist: an error naming inspect's status 4" grep -q "exit status 4" "$WORK/o5"
# 5. without the command: a clear message
env -u CONVGUARD_BIN PYTHONPATH="$WORK/pkgonly" bash -c "mkdir -p '$WORK/pkgonly' && cp -r '$ROOT/python/convguard' '$WORK/pkgonly/' && rm -rf '$WORK/pkgonly/convguard/_bin' && '$PY' -c 'import convguard; convguard.check()'" >"$WORK/o6" 2>&1
check "no command anywhere: FileNotFoundError that says how to get it (pip install . / make wheel)" \
    bash -c "grep -q 'pip install \\.' '$WORK/o6' && grep -q 'make wheel' '$WORK/o6' && ! grep -q 'pip install convguard' '$WORK/o6'"

# 6. make install: `convguard kernel` runs the installed package (here without ipykernel: its message)
I=$WORK/inst
# -o: install what is built, whichever tree (make test-portable's too), without rebuilding it (as t_install)
make -s -C "$ROOT" install NEEDS_CHECK=0 BUILD="$BUILD_DIR" DESTDIR="$I" PREFIX=/opt/cg \
    -o "$BUILD_DIR/convguard" -o "$BUILD_DIR/libconvguard.so" >/dev/null 2>&1
check "make install: the Python package in share/convguard/python" test -f "$I/opt/cg/share/convguard/python/convguard/_check.py"
env -u PYTHONPATH -u CONVGUARD_BIN "$I/opt/cg/bin/convguard" kernel install --user >"$WORK/k" 2>&1; rc=$?
if "$PY" -c 'import ipykernel' 2>/dev/null; then
    check "installed convguard kernel: ran the package (ipykernel here)" grep -q "kernelspec\|kernel" "$WORK/k"
else
    check "installed convguard kernel: the package ran and said ipykernel is missing (exit 1)" \
        bash -c "test $rc = 1 && grep -q 'ipykernel is not installed' '$WORK/k'"
fi
finish
