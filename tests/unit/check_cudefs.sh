# check_cudefs.sh - our own CUDA/cuDNN declarations match NVIDIA's headers,
# and every hooked name exists in the real library of its family; the Error Log Management
# shapes drvlog.c uses are asserted at compile time in cudefs_real.c / cudefs_ours.c.
source "$(dirname "$0")/../lib.sh"
[ -x "$UNIT/check_cudefs" ] || skip_all "no CUDA headers in /usr/local/cuda/include"
out=$("$UNIT/check_cudefs")
check "cudefs.h values and layouts match the real headers ($(echo "$out" | tail -1))" "$UNIT/check_cudefs"
LIB=/usr/local/cuda/lib
[ -e $LIB/libcudnn.so.9 ] || LIB=/usr/local/cuda/lib64
missing=""
while read -r fam name; do
    case $fam in
        CUDNN) f=$LIB/libcudnn.so.9 ;;
        CUDART) f=$LIB/libcudart.so.13 ;;
        DRV) f=$(ls /usr/local/cuda/lib*/stubs/libcuda.so 2>/dev/null | head -1) ;;
    esac
    [ -e "$f" ] || continue
    nm -D --defined-only "$f" | awk '{print $3}' | sed 's/@.*//' | grep -qx "$name" || missing="$missing $name"
done < <(grep -oE '^CG_HOOK(_PLAIN|_EXEC)?\((CUDNN|CUDART|DRV), *[A-Za-z_0-9]+, *[A-Za-z_0-9]+' "$ROOT/shim/hooks.def" |
         sed -E 's/^CG_HOOK(_PLAIN|_EXEC)?\(([A-Z]+), *[A-Za-z_0-9]+, *([A-Za-z_0-9]+)/\2 \3/')
check "every hooked name is exported by the real library of its family${missing:+ (missing:$missing)}" test -z "$missing"
STUB=$(ls /usr/local/cuda/lib*/stubs/libcuda.so 2>/dev/null | head -1)
if [ -n "$STUB" ]; then
    check "the driver exports the cuLogsRegisterCallback drvlog.c looks up (CUDA 12.9+)" \
        bash -c "nm -D --defined-only '$STUB' | awk '{print \$3}' | grep -qx cuLogsRegisterCallback"
fi
finish
