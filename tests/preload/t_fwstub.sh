# t_fwstub.sh - a framework's own CUDA stubs (TensorFlow's libtensorflow_framework.so.2
# defines cuInit, cudaMalloc, cudnnCreate, ... and loads the library on the
# first call; issue 13): every hooked call through the PLT reaches what it
# would have reached without the shim (the stub), for each family of
# shim/hooks.def, with and without each library present, from the stub
# library itself, from another library, from the program, loaded
# RTLD_GLOBAL and RTLD_LOCAL; every return value and out-parameter the same
# (tests/clients/fwstub_seq.c prints them).  A call passes the shim twice
# (PLT into the stub, the stub's dlsym into the library): counted once,
# each failure reported once.
source "$(dirname "$0")/../lib.sh"
C=$CLIENTS
D=$DOUBLES
REAL=/usr/local/cuda/lib
export CONVGUARD_QUIET=1
unset LD_LIBRARY_PATH

same() { # NAME CMD...: stdout and exit status identical with and without the shim (environment: $envs)
    local name=$1; shift
    env "${envs[@]}" "$@" > "$WORK/$name.plain" 2>/dev/null; local rp=$?
    env "${envs[@]}" CONVGUARD_DIR=$WORK/$name LD_PRELOAD=$SHIM "$@" > "$WORK/$name.shim" 2>/dev/null; local rs=$?
    [ $rp = $rs ] && diff "$WORK/$name.plain" "$WORK/$name.shim" >/dev/null
}
modes() { # SETUP LIBPATH [VAR=VALUE...]: the four ways of reaching the stubs
    local setup=$1
    envs=("LD_LIBRARY_PATH=$2" "${@:3}")
    check "$setup, RTLD_GLOBAL (TensorFlow's pywrap): identical" same "$setup.global" "$C/client_fwstub" global "$C/libfwuser.so"
    check "$setup, RTLD_LOCAL (a plugin): identical" same "$setup.local" "$C/client_fwstub" local "$C/libfwuser.so"
    check "$setup, the stub library calling itself: identical" same "$setup.self" "$C/client_fwstub" self "$C/libfwstub.so"
    check "$setup, DT_NEEDED of the program: identical" same "$setup.linked" "$C/client_fwstub_linked"
    check "$setup, two frameworks each with its own stubs, RTLD_LOCAL: identical" \
        same "$setup.two" "$C/client_fwstub" two "$C/libfwuser.so" "$C/libfwuser2.so"
}

# 1. the doubles, library by library (none: the stubs' own errors, 303 for
#    cuInit); CGTEST_STUB_SKIP hides what this machine's ld.so.cache may hold
modes nolib "" CGTEST_STUB_SKIP=libcudart.so.13:libcudnn.so.9
check "no library: the stub's own CUDA_ERROR_SHARED_OBJECT_INIT_FAILED (303) from cuInit, not the shim's" grep -qx 'cuInit = 303' "$WORK/nolib.global.shim"
check "no library: the stub's cudaErrorSharedObjectSymbolNotFound (302), CUDNN_STATUS_INTERNAL_ERROR (4000)" \
    bash -c "grep -qx 'cudaMalloc(1 MiB) = 302 ptr=NULL' '$WORK/nolib.global.shim' && grep -qx 'cudnnCreate = 4000 handle=NULL' '$WORK/nolib.global.shim'"
modes driver "$D/cuda" CGTEST_STUB_SKIP=libcudart.so.13:libcudnn.so.9
check "no library, two frameworks: each call site reached its own stub (303, 999)" bash -c "
    [ \"\$(grep '^cuInit = ' '$WORK/nolib.two.shim' | tr '\n' ' ')\" = 'cuInit = 303 cuInit = 999 cuInit = 303 cuInit = 999 ' ]"
check "driver only: cuInit succeeds through the stub" grep -qx 'cuInit = 0' "$WORK/driver.global.shim"
modes runtime "$D/cuda:$D/cudart" CGTEST_STUB_SKIP=libcudnn.so.9
modes all "$D/cuda:$D/cudart:$D/cudnn9"
check "all: the convolution ran and cuDNN's reason for the one refused" bash -c "grep -qx 'cudnnConvolutionForward = 0' '$WORK/all.global.shim' &&
    grep -q 'cudnnGetLastErrorString = \"workSpaceSizeInBytes (0) < workspace needed' '$WORK/all.global.shim'"
modes nodevice "$D/cuda:$D/cudart:$D/cudnn9" CGTEST_NO_DEVICE=1
check "no device: the driver's CUDA_ERROR_NO_DEVICE (100) through the stub" grep -qx 'cuInit = 100' "$WORK/nodevice.local.shim"

# 2. through the shim twice, seen once: PLT (into the stub) and the stub's
#    dlsym (into the library); counted and reported where the library is reached
for m in global local self linked; do
    T=$(trace_of "$WORK/all.$m")
    # (cuInit: 1 from the sequence, 1 from cudart's and 1 from cuDNN's own
    # start, tests/doubles/README.md; cudaMalloc: 6 from the sequence)
    check "all, $m: each call counted once, as it reached the library" jqt "$T" '
        .[-1].calls | .cuInit == 3 and .cudnnCreate == 1 and .cudaGetDriverEntryPoint == 1 and .cudaGetDriverEntryPointByVersion == 1
          and .cudnnBackendCreateDescriptor == 1 and .cudnnBackendExecute == 1 and .cudnnGetConvolutionForwardAlgorithm_v7 == 1
          and .cuModuleLoadData == 1 and .cudaMalloc == 6 and .cudnnConvolutionForward == 2'
    check "all, $m: each failure reported once, by the route it reached the library (the stub's dlsym)" jqt "$T" '
        ([.[] | select(.ev=="conv_exec_failed" and .fn=="cudnnConvolutionForward")] | length == 1)
        and ([.[] | select(.ev=="graph_finalize_failed")] | length == 1)
        and ([.[] | select(.ev=="alloc_failed")] | length == 2 and all(.route == "dlsym"))
        and ([.[] | select(.ev=="code_load_failed" and (.caller|endswith("libfwstub.so")))] | length == 1)
        and .[-1].fails.cudnnConvolutionForward == 1 and .[-1].fails.cuModuleLoadData == 1'
    check "all, $m: trace valid" traces_valid "$WORK/all.$m"
done
T=$(trace_of "$WORK/nodevice.global")
check "no device: each failed cuInit (the sequence's, cudart's, cuDNN's) one context_failed event" jqt "$T" '
    ([.[] | select(.ev=="context_failed" and .fn=="cuInit" and .status==100)] | length == 3) and .[-1].calls.cuInit == 3
      and .[-1].fails.cuInit == 3'
T=$(trace_of "$WORK/nolib.global")
check "no library: the stub's failed dlopen of libcuda.so.1 recorded, no call counted (none reached a library)" jqt "$T" '
    any(.[]; .ev=="dlopen" and .name=="libcuda.so.1" and .ok==false) and (.[-1].calls | has("cuInit") | not)'

# 3. NVIDIA's cudart 13 and cuDNN 9 on this GPU-less machine (no driver)
if [ -e $REAL/libcudnn.so.9 ] && [ -e $REAL/libcudart.so.13 ]; then
    modes real "$REAL"
    check "real: cudart's own cudaErrorInsufficientDriver (35) through the stub" grep -qx 'cudaMalloc(1 MiB) = 35 ptr=NULL' "$WORK/real.global.shim"
    check "real: cuDNN's own CUDNN_STATUS_NOT_INITIALIZED (1001) through the stub" grep -qx 'cudnnCreate = 1001 handle=NULL' "$WORK/real.global.shim"
else
    echo "  (no NVIDIA cuDNN 9 / cudart 13 in $REAL: real-library checks skipped)"
fi
finish
