#!/bin/sh
# selftest.sh - build the test doubles and clients and run every client
# WITHOUT any shim, checking the facts each must print.  Exit status 0 only
# if every check passed.  Logs: build/selftest/<case>.out / .err.
# Where /usr/local/cuda/lib holds NVIDIA's cuDNN 9 and cudart 13
# (CGT_CUDA_LIB to change), the same clients also run against them.
# CGT_SHIM=/path/libconvguard.so: every case runs a second time with
# LD_PRELOAD=$CGT_SHIM and its stdout must be byte-identical (<case>.shim.out).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
CUDA_LIB=${CGT_CUDA_LIB:-/usr/local/cuda/lib}
B=$ROOT/build
D=$B/doubles
C=$B/clients
LOG=$B/selftest
unset LD_PRELOAD LD_LIBRARY_PATH
unset CGTEST_NO_DEVICE CGTEST_GPU_TOTAL_MB CGTEST_GPU_HELD_MB CGTEST_HOLDER_PID CGTEST_DRIVER_VERSION \
      CGTEST_CUDNN_HANDLE_MB CGTEST_ALGO_WS_MB CGTEST_HEUR_COUNT CGTEST_PLAN_RULES CGTEST_EXEC_ALLOC_MB \
      CGTEST_CUDNN_ABORT CGTEST_TF_WS_MB CGTEST_TF_PREALLOC_MB

make -s doubles clients >/dev/null || { echo "FAIL build"; exit 1; }
rm -rf "$LOG" && mkdir -p "$LOG"

fails=0 checks=0 case= case_fails=0
fail() { echo "FAIL $case: $*"; fails=$((fails + 1)); }
# run CASE cmd...: stdout/stderr to the log; a non-zero exit is a failure
run() {
    case=$1 case_fails=$fails; shift
    "$@" >"$LOG/$case.out" 2>"$LOG/$case.err" || fail "exit status $? from: $*"
    if [ -n "${CGT_SHIM:-}" ]; then
        checks=$((checks + 1))
        env LD_PRELOAD="$CGT_SHIM" "$@" >"$LOG/$case.shim.out" 2>"$LOG/$case.shim.err" ||
            fail "exit status $? with LD_PRELOAD"
        cmp -s "$LOG/$case.out" "$LOG/$case.shim.out" ||
            fail "stdout differs with LD_PRELOAD: diff $LOG/$case.out $LOG/$case.shim.out"
    fi
}
# has 'exact line' ...: each line must appear in the last case's stdout
has() {
    for l in "$@"; do
        checks=$((checks + 1))
        grep -qxF -- "$l" "$LOG/$case.out" || fail "no line '$l'"
    done
}
hasnt() {
    for l in "$@"; do
        checks=$((checks + 1))
        ! grep -qF -- "$l" "$LOG/$case.out" || fail "unexpected '$l'"
    done
}
err_has() {
    checks=$((checks + 1))
    grep -qF -- "$1" "$LOG/$case.err" || fail "stderr lacks '$1'"
}
done_case() { [ "$fails" -eq "$case_fails" ] && echo "ok   $case" || echo "FAIL $case (log: $LOG/$case.out)"; }

DRV=$D/cuda
ALL=$D/cudnn9:$D/cudart:$D/cuda

# ---- ELF checks of the doubles
case=elf case_fails=0
# (the node's own name is listed too, as an absolute "A" symbol: skipped)
for s in $(nm -D --defined-only "$D/cudart/libcudart.so.13" | awk '$2 != "A" {print $3}'); do
    checks=$((checks + 1)); case $s in *@@libcudart.so.13) ;; *) fail "cudart symbol $s not in node libcudart.so.13";; esac
done
for lib in cudnn9/libcudnn.so.9 cudnn9/libcudnn_graph.so.9 cudnn9/libcudnn_cnn.so.9 cudnn8/libcudnn.so.8; do
    node=${lib#*/}
    for s in $(nm -D --defined-only "$D/$lib" | awk '$2 != "A" {print $3}'); do
        checks=$((checks + 1)); case $s in *@@$node) ;; *) fail "$lib symbol $s not in node $node";; esac
    done
done
checks=$((checks + 1))
nm -D --defined-only "$D/cuda/libcuda.so.1" | grep -q @ && fail "libcuda.so.1 has versioned symbols"
for s in cuInit cuGetProcAddress cuGetProcAddress_v2 cuMemAlloc_v2 cuMemFree_v2 cuMemGetInfo_v2 cuMemCreate \
         cuMemAllocFromPoolAsync_ptsz cgtestGpuLiveBytes; do
    checks=$((checks + 1))
    nm -D --defined-only "$D/cuda/libcuda.so.1" | awk '{print $3}' | grep -qx "$s" || fail "libcuda.so.1 lacks $s"
done
# every CUDNN hook of the shim is exported by the dispatcher
for s in $(sed -n 's/^CG_HOOK[A-Z_]*(CUDNN, *[^,]*, *\([A-Za-z0-9_]*\),.*/\1/p' shim/hooks.def); do
    checks=$((checks + 1))
    nm -D --defined-only "$D/cudnn9/libcudnn.so.9" | grep -q " $s@@libcudnn.so.9\$" || fail "libcudnn.so.9 lacks $s"
done
dyn() { readelf -d "$1" | grep "($2)"; }
checks=$((checks + 6))
dyn "$D/cudnn9/libcudnn.so.9" NEEDED | grep -q cudnn && fail "dispatcher has DT_NEEDED on a sub-library"
dyn "$D/cudnn9/libcudnn.so.9" RUNPATH | grep -qF '[$ORIGIN]' || fail "dispatcher RUNPATH is not \$ORIGIN"
dyn "$D/cudnn9/libcudnn_cnn.so.9" NEEDED | grep -q 'libcudnn_graph.so.9' || fail "cnn lacks DT_NEEDED graph"
dyn "$D/cudart/libcudart.so.13" NEEDED | grep -q libcuda && fail "cudart has DT_NEEDED on libcuda"
dyn "$C/ext_torchlike.so" RPATH | grep -q "$D/cudnn9:$D/cudart" || fail "ext_torchlike.so has no RPATH"
dyn "$C/plugin_jaxlike.so" NEEDED | grep -q cu && fail "plugin_jaxlike.so needs a CUDA library"
done_case

# ---- PyTorch-like, against the doubles
run torch env LD_LIBRARY_PATH=$DRV "$C/client_torchlike" "$C/ext_torchlike.so"
has "cudnnGetVersion = 90100" "cudnnGetCudartVersion = 13000" "cudaRuntimeGetVersion = 0 version=13000" \
    "cudaDriverGetVersion = 0 version=13000" "cudaGetDeviceCount = 0 cudaSuccess count=1" \
    "cudaMalloc(1 MiB, 1048576) = 0 cudaSuccess" "cudnnCreate = 0 CUDNN_STATUS_SUCCESS" \
    "  perf[0] algo=2 status=0 memory=536870912" "cudnnConvolutionForward(algo=2) = 0" "conv ok" \
    "cudnnDestroy(h) = 0" "run = 0" "maps: $D/cudnn9/libcudnn.so.9" "maps: $D/cudnn9/libcudnn_graph.so.9" \
    "maps: $D/cudnn9/libcudnn_cnn.so.9" "maps: $D/cudart/libcudart.so.13" "maps: $D/cuda/libcuda.so.1"
hasnt "/usr/local/cuda"
done_case
run torch-again env LD_LIBRARY_PATH=$DRV "$C/client_torchlike" "$C/ext_torchlike.so"
checks=$((checks + 1)); cmp -s "$LOG/torch.out" "$LOG/torch-again.out" || fail "output differs between two runs"
done_case

run torch-nodriver "$C/client_torchlike" "$C/ext_torchlike.so"
has "cudnnGetVersion = 90100" "cudaDriverGetVersion = 0 version=0" \
    "cudaGetDeviceCount = 35 cudaErrorInsufficientDriver count=-1" \
    "cudaMalloc(1 MiB, 1048576) = 35 cudaErrorInsufficientDriver" "cudnnCreate = 1001 CUDNN_STATUS_NOT_INITIALIZED" \
    'cudnnGetLastErrorString = "cudaGetDeviceCount(&count) != cudaSuccess"' "run = 1"
hasnt "libcuda.so.1"
done_case

run torch-nodevice env LD_LIBRARY_PATH=$DRV CGTEST_NO_DEVICE=1 "$C/client_torchlike" "$C/ext_torchlike.so"
has "cudaGetDeviceCount = 100 cudaErrorNoDevice count=0" "cudaMalloc(1 MiB, 1048576) = 100 cudaErrorNoDevice" \
    "cudnnCreate = 1001 CUDNN_STATUS_NOT_INITIALIZED" 'cudnnGetLastErrorString = "cudaGetDeviceCount(&count) != cudaSuccess"'
done_case

run torch-olddriver env LD_LIBRARY_PATH=$DRV CGTEST_DRIVER_VERSION=12080 "$C/client_torchlike" "$C/ext_torchlike.so"
has "cudaDriverGetVersion = 0 version=12080" "cudaMalloc(1 MiB, 1048576) = 35 cudaErrorInsufficientDriver" \
    "cudnnCreate = 1001 CUDNN_STATUS_NOT_INITIALIZED"
done_case

# another process holds 1000 of 1024 MiB: the handle fits, the workspaces do not
run torch-pressure env LD_LIBRARY_PATH=$DRV CGTEST_GPU_HELD_MB=1000 "$C/client_torchlike" "$C/ext_torchlike.so"
has "cudaMemGetInfo = 0 free=25165824 total=1073741824" "cudnnCreate = 0 CUDNN_STATUS_SUCCESS" \
    "cudaMalloc(workspace, 536870912) = 2 cudaErrorMemoryAllocation" \
    "cudaMalloc(workspace, 67108864) = 2 cudaErrorMemoryAllocation" "cudnnConvolutionForward(algo=0) = 0" "conv ok"
done_case

# 1020 MiB held: cudnnCreate cannot get its 8 MiB
run torch-full env LD_LIBRARY_PATH=$DRV CGTEST_GPU_HELD_MB=1020 "$C/client_torchlike" "$C/ext_torchlike.so"
has "cudnnCreate = 4000 CUDNN_STATUS_INTERNAL_ERROR" \
    'cudnnGetLastErrorString = "cudnnCreate: could not allocate handle workspace"'
done_case

# ---- TensorFlow-like
run tf env LD_LIBRARY_PATH=$ALL "$C/client_tflike"
has 'dlopen("libcudnn.so.9", RTLD_NOW|RTLD_LOCAL) = ok' "dlsym: 0 missing" "cuInit = 0" \
    "cuDriverGetVersion = 0 version=13000" "cudnnGetVersion = 90100" "cudnnCreate = 0 CUDNN_STATUS_SUCCESS" \
    "forward ok" "cudnnConvolutionForward(algo=2, no workspace) = 2000" \
    'cudnnGetLastErrorString = "workSpaceSizeInBytes (0) < workspace needed by algo 2 (536870912)"' \
    "cudnnFindConvolutionForwardAlgorithm = 0 returned=3" \
    "cudnnFindConvolutionForwardAlgorithmEx(workspace=67108864) = 0 returned=3" \
    "  perf[0] algo=1 status=0 time=1.0 memory=67108864" "  perf[2] algo=2 status=4004 time=-1.0 memory=536870912" \
    "backward data ok" "backward filter ok" "fused ok" "cudnnDestroy = 0"
done_case
run tf-again env LD_LIBRARY_PATH=$ALL "$C/client_tflike"
checks=$((checks + 1)); cmp -s "$LOG/tf.out" "$LOG/tf-again.out" || fail "output differs between two runs"
done_case

run tf-pressure env LD_LIBRARY_PATH=$ALL CGTEST_GPU_HELD_MB=1000 "$C/client_tflike"
has "  perf[1] algo=2 status=4004 time=-1.0 memory=536870912" "cudaMalloc(scratch, 67108864) = 2 cudaErrorMemoryAllocation" \
    "cudnnFindConvolutionForwardAlgorithmEx(workspace=0) = 0 returned=3" "forward ok" "backward data ok" \
    "backward filter ok" "fused ok"
done_case

# TF's BFC allocator grabbed (almost) everything first: the seeds' failure
run tf-prealloc env LD_LIBRARY_PATH=$ALL CGTEST_TF_PREALLOC_MB=1020 "$C/client_tflike"
has "cuMemAlloc_v2(BFC region, 1020 MiB) = 0" "cudnnCreate = 4000 CUDNN_STATUS_INTERNAL_ERROR" \
    "Failed to get convolution algorithm. This is probably because cuDNN failed to initialize" \
    "cuMemFree_v2(BFC region) = 0"
done_case

run tf-nodevice env LD_LIBRARY_PATH=$ALL CGTEST_NO_DEVICE=1 "$C/client_tflike"
has "cuInit = 100" "cuDeviceGet = 3 dev=-1" "cudaSetDevice = 100 cudaErrorNoDevice" \
    "cudnnCreate = 1001 CUDNN_STATUS_NOT_INITIALIZED"
done_case

# no LD_LIBRARY_PATH: the sonames resolve through ld.so.cache, to NVIDIA's
# libraries where they are installed (as here), else to nothing
run tf-system "$C/client_tflike"
if ldconfig -p 2>/dev/null | grep -q 'libcudnn\.so\.9 '; then
    has 'dlopen("libcudnn.so.9", RTLD_NOW|RTLD_LOCAL) = ok' 'dlopen("libcuda.so.1", RTLD_NOW|RTLD_LOCAL) = NULL' \
        "dlerror = libcuda.so.1: cannot open shared object file: No such file or directory" "dlsym: 0 missing" \
        "stub cuInit" "cudnnGetVersion = 91900" "cudnnCreate = 1001 CUDNN_STATUS_NOT_INITIALIZED" \
        'cudnnGetLastErrorString = "cudaGetDeviceCount(&count) != cudaSuccess"' \
        "Failed to get convolution algorithm. This is probably because cuDNN failed to initialize"
else
    has 'dlopen("libcudnn.so.9", RTLD_NOW|RTLD_LOCAL) = NULL' \
        "dlerror = libcudnn.so.9: cannot open shared object file: No such file or directory" \
        "stub cudnnCreate" "cudnnCreate = 4000 ?"
fi
done_case

# ---- JAX-like
run jax env LD_LIBRARY_PATH=$D/cudnn9:$DRV "$C/client_jaxlike" "$C/plugin_jaxlike.so"
has 'cuGetProcAddress_v2("cuMemAlloc", 12000, 0) = 0 status=0 found; same as dlsym("cuMemAlloc_v2"): yes' \
    'cuGetProcAddress_v2("cuMemFree", 12000, 0) = 0 status=0 found; same as dlsym("cuMemFree_v2"): yes' \
    'cuGetProcAddress_v2("cuMemGetInfo", 12000, 0) = 0 status=0 found; same as dlsym("cuMemGetInfo_v2"): yes' \
    'cuGetProcAddress_v2("cuMemAllocAsync", 12000, 2) = 0 status=0 found; same as dlsym("cuMemAllocAsync_ptsz"): yes' \
    'cuGetProcAddress_v2("cuNoSuchFunction", 12000, 0) = 500 status=1 NULL; same as dlsym("cuNoSuchFunction"): no' \
    "cuCtxGetCurrent before cuInit = 3" "cuInit = 0" "cuCtxGetCurrent = 0 context=NULL" \
    "cuCtxGetCurrent = 0 context=set" "cuMemAlloc(16 MiB, 16777216) = 0" "cudnnCreate = 0" \
    "cudnnBackendFinalize(no-dims) = 2000" 'cudnnGetLastErrorString = "_nbDims < 1"' \
    "cudnnBackendFinalize(graph) = 0" "cudnnBackendGetAttribute(heuristics, RESULTS, 0) = 0 count=4" \
    "engine config 3: global index = 0 3" "cudnnBackendFinalize(plan) = 3000" \
    'cudnnGetLastErrorString = "engine 1: bad parameter (CGTEST_PLAN_RULES)"' \
    "plan 2 workspace = 0 bytes=268435456" "plan 3 workspace = 0 bytes=0" "executing plan 2" \
    "cuMemAlloc(workspace, 268435456) = 0" "cudnnBackendExecute = 0" "cudnnBackendExecute(no workspace) = 2000" \
    "cudnnDestroy = 0" "run = 0" "maps: $D/cudnn9/libcudnn_graph.so.9"
hasnt "libcudnn_cnn.so.9"
done_case
run jax-again env LD_LIBRARY_PATH=$D/cudnn9:$DRV "$C/client_jaxlike" "$C/plugin_jaxlike.so"
checks=$((checks + 1)); cmp -s "$LOG/jax.out" "$LOG/jax-again.out" || fail "output differs between two runs"
done_case

run jax-execoom env LD_LIBRARY_PATH=$D/cudnn9:$DRV CGTEST_EXEC_ALLOC_MB=2000 CGTEST_HEUR_COUNT=8 \
    CGTEST_PLAN_RULES=0:notsup,5:ws=1 "$C/client_jaxlike" "$C/plugin_jaxlike.so"
has "cudnnBackendGetAttribute(heuristics, RESULTS, 8) = 0 returned=8" "engine config 7: global index = 0 7" \
    "plan 5 workspace = 0 bytes=1048576" "executing plan 5" "cudnnBackendExecute = 4004" \
    'cudnnGetLastErrorString = "cudnnBackendExecute: could not allocate 2097152000 bytes of device memory"'
done_case

run jax-nodevice env LD_LIBRARY_PATH=$D/cudnn9:$DRV CGTEST_NO_DEVICE=1 "$C/client_jaxlike" "$C/plugin_jaxlike.so"
has "cuInit = 100" "cuMemGetInfo = 3 free=0 total=0" "cudnnCreate = 1001" \
    'cudnnGetLastErrorString = "cudaGetDeviceCount(&count) != cudaSuccess"' "cudnnBackendFinalize(no-dims) = 2000"
done_case

# ---- lookups with nothing loaded, then libcudnn.so.9 RTLD_GLOBAL
run probe env LD_LIBRARY_PATH=$D/cudnn9:$DRV "$C/client_probe"
has 'dlsym(RTLD_DEFAULT, "cudnnCreate") = NULL' "dlerror = $C/client_probe: undefined symbol: cudnnCreate" \
    'dlsym(RTLD_DEFAULT, "cuMemAlloc_v2") = NULL' 'dlopen("libcudnn.so.7", RTLD_NOW) = NULL' \
    "dlerror = libcudnn.so.7: cannot open shared object file: No such file or directory" "dlerror again = (null)" \
    'dlsym(RTLD_NEXT, "cudnnCreate") = NULL' 'dlopen("libcudnn.so.9", RTLD_NOW|RTLD_GLOBAL) = ok' \
    'dlsym(RTLD_DEFAULT, "cudnnCreate") = found' "RTLD_DEFAULT and handle agree: yes" \
    "cudnnCreate through the pointer = 0" "RTLD_NEXT and handle agree: yes" "dlopen(NULL) and handle agree: yes"
done_case

# ---- a copy of the doubles' cuDNN, loaded by path
T=$(mktemp -d)
cp "$D/cudnn9/libcudnn.so.9" "$D/cudnn9/libcudnn_graph.so.9" "$T/"
run copy env LD_LIBRARY_PATH=$DRV "$C/client_copyload" "$T"
has "cudnnGetVersion = 90100" "cudnnCreate = 0" "maps: $T/libcudnn.so.9" "maps: $T/libcudnn_graph.so.9"
hasnt "$D/cudnn9/"
done_case
rm -rf "$T"

# ---- the dispatcher's probes (LD_DEBUG is glibc's own trace)
run probes env LD_LIBRARY_PATH=$ALL LD_DEBUG=libs "$C/client_tflike"
for n in libcudnn_graph.so.9.1.0 libcudnn_graph.so.9.1 libcudnn_cnn.so.9.1.0 libcudnn_cnn.so.9.1; do
    checks=$((checks + 1))
    grep -q "find library=$n \[0\]; searching" "$LOG/$case.err" || fail "no dlopen probe of $n"
done
done_case

# ---- cuDNN 8 and its famous missing sub-library
run cudnn8 env LD_LIBRARY_PATH=$D/cudnn8:$DRV "$C/client_cudnn8"
has "cudnnGetVersion = 8907" "cudnnCreate = 0 CUDNN_STATUS_SUCCESS" "conv ok" \
    "maps: $D/cudnn8/libcudnn_cnn_infer.so.8"
done_case
run cudnn8-broken env LD_LIBRARY_PATH=$D/cudnn8-broken:$DRV "$C/client_cudnn8"
has "cudnnGetVersion = 8907" "cudnnCreate = 0 CUDNN_STATUS_SUCCESS" "cudnnSetTensor4dDescriptor(x) = 0" \
    "cudnnCreateConvolutionDescriptor = 1 CUDNN_STATUS_NOT_INITIALIZED" \
    "cudnnGetConvolutionForwardAlgorithm_v7 = 1 CUDNN_STATUS_NOT_INITIALIZED returned=0" "conv not run"
err_has "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open shared object file: No such file or directory"
done_case

# ---- NVIDIA's libraries, where present (no driver on this kind of host)
if [ -f "$C/ext_torchlike_real.so" ] && [ -f "$CUDA_LIB/libcudnn.so.9" ]; then
    REAL=$(cd "$CUDA_LIB" && pwd -P)
    run real-torch "$C/client_torchlike" "$C/ext_torchlike_real.so"
    has "cudnnGetVersion = 91900" "cudaRuntimeGetVersion = 0 version=13000" "cudaDriverGetVersion = 0 version=0" \
        "cudaMalloc(1 MiB, 1048576) = 35 cudaErrorInsufficientDriver" \
        "cudnnCreate = 1001 CUDNN_STATUS_NOT_INITIALIZED" \
        'cudnnGetLastErrorString = "cudaGetDeviceCount(&count) != cudaSuccess"' \
        "maps: $REAL/libcudnn.so.9" "maps: $REAL/libcudnn_graph.so.9"
    done_case
    T=$(mktemp -d)
    cp "$CUDA_LIB/libcudnn.so.9" "$CUDA_LIB/libcudnn_graph.so.9" "$T/"
    run real-copy "$C/client_copyload" "$T"
    has "cudnnGetVersion = 91900" "cudnnCreate = 1001" \
        'cudnnGetLastErrorString = "cudaGetDeviceCount(&count) != cudaSuccess"' \
        "maps: $T/libcudnn.so.9" "maps: $T/libcudnn_graph.so.9"
    hasnt "$REAL/libcudnn"
    done_case
    rm -rf "$T"
else
    echo "skip: no NVIDIA cuDNN 9 + cudart 13 in $CUDA_LIB"
fi

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
