# t_dlsym_filter.sh - dlsym's name filters (issue 8, shim/routes.c): every
# hooked name in shim/hooks.def is still handed out wrapped, and every other
# name gets exactly what it gets without the shim (address, dlerror text,
# errno).  The names: the real cuDNN, cudart and driver exports where a CUDA
# toolkit is installed, and names made to look like hooked ones (every
# prefix, each byte changed in turn, a suffix added), so that both filters
# see names that share any prefix, or all bytes but one, with a hooked name.
# The libraries are stubs built here, one per family, exporting all of these
# names, so the test follows hooks.def as it changes.
source "$(dirname "$0")/../lib.sh"
export CONVGUARD_QUIET=1
unset LD_LIBRARY_PATH
CC=${CC:-cc}
CUDA=/usr/local/cuda

hooks() { sed -n "s/^CG_HOOK[A-Z_]*($1, *[^,]*, *\([A-Za-z0-9_]*\),.*/\1/p" "$ROOT/shim/hooks.def"; }
hooks '[A-Z]*' | sort -u >"$WORK/hooked"
check "hooks.def lists hooked names ($(wc -l <"$WORK/hooked"))" test -s "$WORK/hooked"

# look-alikes of every hooked name; none of them is hooked
awk '{
    n = length($0)
    for (i = 1; i < n; i++) print substr($0, 1, i)
    for (i = 2; i <= n; i++) print substr($0, 1, i - 1) (substr($0, i, 1) == "X" ? "Y" : "X") substr($0, i + 1)
    print $0 "X"; print $0 "_v9"; print $0 "Descriptor"
}' "$WORK/hooked" | sort -u | comm -23 - "$WORK/hooked" >"$WORK/lookalikes"
# exported functions of a real library, without version suffixes
exports() { [ -e "$1" ] && nm -D --defined-only "$1" | awk '$2 ~ /^[TW]$/ {sub(/@.*/, "", $3); print $3}'; }

# stub FAMILY SONAME REAL: a library SONAME exporting FAMILY's hooked names,
# the look-alikes and REAL's exports.  Each returns an error code: the shim may
# ask a driver or runtime stub its version, and must learn nothing.
stub() {
    local dir=$WORK/$1
    mkdir -p "$dir"
    { hooks "$1"; cat "$WORK/lookalikes"; exports "$3" | comm -23 <(sort -u) "$WORK/hooked"; } | sort -u >"$dir/names"
    awk '{print "int " $0 "(void) { return 999; }"}' "$dir/names" >"$dir/stub.c"
    $CC -shared -fPIC -w -o "$dir/$2" "$dir/stub.c" -Wl,-soname,"$2"
}

cat >"$WORK/syms.c" <<'EOF'
/* syms LIB MODE < names: dlopen LIB, then for each name (copied to a heap
 * block of its exact size, so memcheck sees any read past its end) print
 * what dlsym answered: the object and symbol, or NULL and dlerror's text;
 * "errno!" when errno changed.  MODE: handle (the dlopen handle) or default
 * (RTLD_GLOBAL, then RTLD_DEFAULT). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int deflt = strcmp(argv[2], "default") == 0;
    void *h = dlopen(argv[1], RTLD_NOW | (deflt ? RTLD_GLOBAL : RTLD_LOCAL));
    if (!h) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        char *name = strdup(line);
        errno = 4321;
        void *r = dlsym(deflt ? RTLD_DEFAULT : h, name);
        int e = errno;
        const char *err = r ? NULL : dlerror();
        Dl_info i;
        if (r && dladdr(r, &i) && i.dli_fname) {
            const char *slash = strrchr(i.dli_fname, '/');
            printf("%s %s:%s", name, slash ? slash + 1 : i.dli_fname, i.dli_sname ? i.dli_sname : "?");
        } else {
            printf("%s %s %s", name, r ? "?" : "NULL", err ? err : "(no error)");
        }
        printf("%s\n", e == 4321 ? "" : " errno!");
        free(name);
    }
    return 0;
}
EOF
$CC -std=c11 -D_GNU_SOURCE -O1 -o "$WORK/syms" "$WORK/syms.c" -ldl || skip_all "no C compiler"

# what to ask: the stub's names, every hooked name, a few names no library has
asked() { { cat "$WORK/$1/names" "$WORK/hooked"; printf '%s\n' "" cudnnGetVersionMissing cuda_missing; } | sort -u >"$WORK/$1/asked"; }

for f in CUDNN:libcudnn.so.9:$CUDA/lib/libcudnn.so.9 CUDART:libcudart.so.13:$CUDA/lib/libcudart.so.13 \
         DRV:libcuda.so.1:$CUDA/lib64/stubs/libcuda.so; do
    IFS=: read -r fam so real <<<"$f"
    stub "$fam" "$so" "$real" || { fail "$fam: stub library built"; continue; }
    asked "$fam"
    n_real=$(exports "$real" | wc -l)
    n_hooked=$(hooks "$fam" | wc -l)
    for mode in handle default; do
        lib=$WORK/$fam/$so
        "$WORK/syms" "$lib" $mode <"$WORK/$fam/asked" >"$WORK/$fam/$mode.plain" 2>&1
        run_shim "$WORK/$fam/t-$mode" "$WORK/syms" "$lib" $mode <"$WORK/$fam/asked" >"$WORK/$fam/$mode.shim" 2>&1
        # the hooked names of this family: answered from the shim, nothing else changed
        hooks "$fam" | sed 's/.*/^& /' >"$WORK/$fam/pat"
        wrapped=$(grep -f "$WORK/$fam/pat" "$WORK/$fam/$mode.shim" | grep -c ' libconvguard\.so:[^ ]*$')
        check "$fam by $mode: all $n_hooked hooked names handed out wrapped ($wrapped)" test "$wrapped" = "$n_hooked"
        check "$fam by $mode: the other $(($(wc -l <"$WORK/$fam/asked") - n_hooked)) names ($n_real real exports) answered as without the shim" \
            cmp <(grep -v -f "$WORK/$fam/pat" "$WORK/$fam/$mode.plain") <(grep -v -f "$WORK/$fam/pat" "$WORK/$fam/$mode.shim")
        check "$fam by $mode: hooked names found as without the shim, errno kept" \
            bash -c "! grep -f '$WORK/$fam/pat' '$WORK/$fam/$mode.plain' | grep -q -e ' NULL ' -e 'errno!'"
    done
done

# memcheck: no read past the end of any name (each is a heap block of its size)
if [ -n "${CG_SANITIZED:-}" ]; then
    echo "  (sanitized shim: memcheck check skipped)"
elif command -v valgrind >/dev/null; then
    CONVGUARD_DIR=$WORK/vg LD_PRELOAD=$SHIM valgrind --error-exitcode=9 --log-file="$WORK/vg.log" \
        "$WORK/syms" "$WORK/CUDNN/libcudnn.so.9" handle <"$WORK/CUDNN/asked" >/dev/null 2>&1
    check "memcheck: no error with the shim over $(wc -l <"$WORK/CUDNN/asked") cuDNN-like names" \
        grep -q 'ERROR SUMMARY: 0 errors' "$WORK/vg.log"
else
    echo "  (no valgrind: memcheck check skipped)"
fi
finish
