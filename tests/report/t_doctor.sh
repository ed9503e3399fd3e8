# t_doctor.sh - `convguard doctor` on this machine, and with stand-in
# libraries in LD_LIBRARY_PATH whose versions it must read from the library
# itself (in a child), including one that crashes when loaded.
source "$(dirname "$0")/../lib.sh"
export COLUMNS=1000 # lines whole, for the greps below; the width itself: t_width.sh
CG=$BUILD_DIR/convguard

"$CG" doctor >"$WORK/out" 2>&1
rc=$?
"$CG" doctor --json >"$WORK/j" 2>/dev/null
check "--json is valid and has copies, picks, nvml, problems" jq -e 'has("copies") and has("picks") and has("nvml") and has("problems")' "$WORK/j"
if ! ldconfig -p | grep -q 'libcuda\.so\.1 '; then
    check "no driver here: exit 1" test $rc = 1
    check "no driver here: the verdict says so" grep -q "\[error\] no NVIDIA driver: libcuda.so.1 cannot be loaded" "$WORK/out"
    check "no driver here: NVML absent is said plainly" grep -q "libnvidia-ml.so.1 not found" "$WORK/out"
fi
if [ -e /usr/local/cuda/lib/libcudnn.so.9 ]; then
    check "the real cuDNN is listed with the version it reports (9.19)" grep -qE "^  9\.19\.[0-9]+ +/usr/local/cuda[^ ]*/lib/libcudnn.so.9" "$WORK/out"
    check "the bare name libcudnn.so.9 resolves, and its graph part is named" grep -q "libcudnn.so.9 .*its graph part" "$WORK/out"
fi

# stand-ins: a cuDNN 8.9.7, a driver for CUDA 12.8, and a cuDNN that crashes when loaded
F=$WORK/fake
mkdir -p "$F" "$WORK/crash"
printf 'unsigned long cudnnGetVersion(void){return 8907;}\nunsigned long cudnnGetCudartVersion(void){return 12020;}\n' >"$WORK/c8.c"
printf 'int cuDriverGetVersion(int *v){*v=12080;return 0;}\n' >"$WORK/drv.c"
printf 'int cudaRuntimeGetVersion(int *v){*v=13000;return 0;}\n' >"$WORK/rt.c"
printf '__attribute__((constructor)) static void boom(void){*(volatile int*)0=1;}\nunsigned long cudnnGetVersion(void){return 1;}\n' >"$WORK/boom.c"
gcc -shared -fPIC -o "$F/libcudnn.so.8" "$WORK/c8.c" -Wl,-soname,libcudnn.so.8
gcc -shared -fPIC -o "$F/libcuda.so.1" "$WORK/drv.c" -Wl,-soname,libcuda.so.1
gcc -shared -fPIC -o "$F/libcudart.so.13" "$WORK/rt.c" -Wl,-soname,libcudart.so.13
gcc -shared -fPIC -o "$WORK/crash/libcudnn.so.7" "$WORK/boom.c"
LD_LIBRARY_PATH=$F:$WORK/crash "$CG" doctor >"$WORK/out2" 2>&1
rc=$?
LD_LIBRARY_PATH=$F:$WORK/crash "$CG" doctor --json >"$WORK/j2" 2>/dev/null
check "stand-ins: exit 1 (problems)" test $rc = 1
check "the version comes from the library, not its name: 8.9.7" grep -qE "^  8\.9\.7 +$F/libcudnn.so.8 +\(for CUDA 12.2\) +\[LD_LIBRARY_PATH\]" "$WORK/out2"
check "a bare-name libcuda.so.1 now resolves to the stand-in (12.8)" jq -e --arg p "$F/libcuda.so.1" '.picks["libcuda.so.1"].path == $p and .picks["libcuda.so.1"].version == 12080' "$WORK/j2"
check "driver older than the runtime is a problem" grep -q "the driver supports CUDA 12.8, older than the CUDA runtime 13.0" "$WORK/out2"
check "a library that crashes when loaded does not take the doctor down" grep -q "libcudnn.so.7  (does not load: Segmentation fault)" "$WORK/out2"
if [ -e /usr/local/cuda/lib/libcudnn.so.9 ]; then
    check "two cuDNN versions on the machine: a warning" grep -qE "several cuDNN versions on this machine: .*8\.9\.7" "$WORK/out2"
fi
# copies in environments that are not active: a venv and a conda env under $HOME
H=$WORK/home
mkdir -p "$H/.virtualenvs/old/lib/python3.11/site-packages/nvidia/cudnn/lib" "$H/miniconda3/envs/tf/lib"
cp "$F/libcudnn.so.8" "$H/.virtualenvs/old/lib/python3.11/site-packages/nvidia/cudnn/lib/"
cp "$F/libcudnn.so.8" "$H/miniconda3/envs/tf/lib/"
HOME=$H "$CG" doctor >"$WORK/out4" 2>&1
check "a venv that is not active: its cuDNN is listed, marked so" \
    grep -qE "^  8\.9\.7 +$H/.virtualenvs/old/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.8 .*\[venv \(not active\)\]" "$WORK/out4"
check "a conda env that is not active: listed, marked so" \
    grep -qE "^  8\.9\.7 +$H/miniconda3/envs/tf/lib/libcudnn.so.8 .*\[conda env \(not active\)\]" "$WORK/out4"
check "it says where it did not look" grep -q "not in other users' homes" "$WORK/out4"
CUDA_VISIBLE_DEVICES=-1 "$CG" doctor >"$WORK/out3" 2>&1
check "CUDA_VISIBLE_DEVICES=-1 is a problem" grep -q 'CUDA_VISIBLE_DEVICES="-1" hides every GPU' "$WORK/out3"
"$CG" doctor --bogus >/dev/null 2>&1
check "a bad option: exit 2" test $? = 2
# the real cuDNN's dispatcher with another cuDNN 9 (the test double, 9.1.0) in LD_LIBRARY_PATH:
# loaded by its path it takes the double's graph part; its own version is read from its folder
if [ -e /usr/local/cuda/lib/libcudnn.so.9 ] && [ -e "$DOUBLES/cudnn9/libcudnn_graph.so.9" ]; then
    RD=$(dirname "$(realpath /usr/local/cuda/lib/libcudnn.so.9)")
    LD_LIBRARY_PATH=$DOUBLES/cudnn9 "$CG" doctor --json >"$WORK/j3" 2>/dev/null
    LD_LIBRARY_PATH=$DOUBLES/cudnn9 "$CG" doctor >"$WORK/out3" 2>&1
    check "mixed: the real dispatcher keeps its own version 9.19 (from its folder), runs as 9.1.0, graph from the double" \
        jq -e --arg rd "$RD" --arg dd "$DOUBLES/cudnn9" '[.copies[] | select(.path == $rd + "/libcudnn.so.9")][0]
            | (.version / 100 | floor) == 919 and .runs_as == 90100 and (.graph_from | startswith($dd))' "$WORK/j3"
    check "mixed: the verdict names the two installs, the folder to take out of LD_LIBRARY_PATH" \
        bash -c "grep -q '\[error\] cuDNN of two installs in one process: $RD/libcudnn.so.9' '$WORK/out3' &&
                 grep -q 'fix: take $DOUBLES/cudnn9 out of LD_LIBRARY_PATH' '$WORK/out3'"
    check "alone: no copy runs another folder's parts, no such verdict" \
        bash -c "jq -e '[.copies[] | select(has(\"graph_from\"))] | length == 0' '$WORK/j' && ! grep -q 'two installs' '$WORK/out'"
fi
finish
