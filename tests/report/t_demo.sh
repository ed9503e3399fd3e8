# t_demo.sh - README's `make demo` works on a machine without a GPU: the seeds'
# failure replayed on the test doubles, and the report names the one cause.
source "$(dirname "$0")/../lib.sh"
[ -x "$BUILD_DIR/convguard" ] || skip_all "CLI not built"
out=$(CONVGUARD_DEMO_DOUBLES=1 TMPDIR=$WORK "$ROOT/examples/demo.sh" 2>&1)
check "demo: the program saw the seeds' failure (cudnnCreate INTERNAL_ERROR)" bash -c "echo \"\$1\" | grep -q 'cudnnCreate = 4000 CUDNN_STATUS_INTERNAL_ERROR'" _ "$out"
check "demo: one problem, the other process holding the memory" bash -c "echo \"\$1\" | grep -q '1 problem' && echo \"\$1\" | grep -q 'another process holds the GPU memory cuDNN needs'" _ "$out"
check "demo: the fix names the holder's pid" bash -c "echo \"\$1\" | grep -qE 'kill [0-9]+'" _ "$out"
finish
