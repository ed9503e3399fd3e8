# t_smoke.sh - `convguard smoke`: each step printed; with a GPU all pass and
# match the CPU; without a driver it fails fast at the handle and prints the
# report of its own trace naming the missing driver.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard

start=$(date +%s)
"$CG" smoke --dir "$WORK/s" >"$WORK/out" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
check "finishes in a few seconds ($took s)" test "$took" -le 20
check "the trace of the smoke run is in --dir" bash -c "ls '$WORK/s'/*.jsonl >/dev/null"
if grep -q "^\[1\] load cuDNN .* FAILED" "$WORK/out"; then
    check "no cuDNN: exit 1 and the report says what did not load" bash -c "test $rc = 1 && grep -q 'convguard report' '$WORK/out'"
elif ldconfig -p | grep -q 'libcuda\.so\.1 '; then
    check "with a driver: exit 0" test $rc = 0
    check "forward, backward data and backward filter match the CPU" grep -q "^smoke: ok: cuDNN forward, backward data and backward filter match the CPU" "$WORK/out"
else
    check "no driver: exit 1" test $rc = 1
    check "steps printed: cuDNN and cudart loaded" bash -c "grep -q '^\[1\] load cuDNN .* ok' '$WORK/out' && grep -q '^\[2\] load the CUDA runtime .* ok' '$WORK/out'"
    check "stops at the handle with the status and cuDNN's reason" grep -q "cudnnCreate -> CUDNN_STATUS_NOT_INITIALIZED (1001); cuDNN says:" "$WORK/out"
    check "then the report of its own trace names the missing driver" grep -q "no NVIDIA driver: libcuda.so.1 could not be loaded" "$WORK/out"
fi
"$CG" smoke --dir "$WORK/m" --cudnn "$WORK/nowhere/libcudnn.so.9" >"$WORK/out2" 2>&1
check "a cuDNN that is not there: exit 1, load step FAILED" bash -c "test $? = 1 && grep -q '^\[1\] load cuDNN .* FAILED' '$WORK/out2'"
check "... and the report says cuDNN cannot be loaded" grep -q "cuDNN (.*libcudnn.so.9) cannot be loaded" "$WORK/out2"
finish
