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
# issue 29 item 10: the cuDNN the framework here loads is the one tested (PyTorch's nvidia-cudnn wheel
# beside torch, found without importing torch), and smoke says so and names the loader's too
if command -v python3 >/dev/null; then
    SP=$WORK/sp
    mkdir -p "$SP/torch" "$SP/nvidia/cudnn/lib"
    touch "$SP/torch/__init__.py"
    cp "$DOUBLES"/cudnn9/libcudnn.so.9 "$SP/nvidia/cudnn/lib/"
    PYTHONPATH=$SP "$CG" smoke --dir "$WORK/f" >"$WORK/out3" 2>&1
    check "a PyTorch with its cuDNN wheel: smoke says it tests that one" \
        grep -q "testing the cuDNN PyTorch here loads: $SP/nvidia/cudnn/lib/libcudnn.so.9" "$WORK/out3"
    check "... and loads it (step 1 names that file)" grep -q "^\[1\] load cuDNN .* $SP/nvidia/cudnn/lib/libcudnn.so.9" "$WORK/out3"
    "$CG" smoke --dir "$WORK/g" >"$WORK/out4" 2>&1
    check "no framework here: it says it tests the loader's libcudnn.so.9" \
        grep -q "testing the cuDNN a program loading libcudnn.so.9 by name gets" "$WORK/out4"
    PYTHONPATH=$SP "$CG" smoke --dir "$WORK/h" --cudnn "$WORK/nowhere/libcudnn.so.9" >"$WORK/out5" 2>&1
    check "--cudnn still wins over the framework's" grep -q "testing $WORK/nowhere/libcudnn.so.9 (--cudnn)" "$WORK/out5"
fi
finish
