# t_loader.sh - the loader layer (issue 2): every client's output identical with
# and without the shim, and the trace says which libraries loaded, from where,
# by which route, and why a load failed.
source "$(dirname "$0")/../lib.sh"
D=$DOUBLES
ALL=$D/cudnn9:$D/cudart:$D/cuda
REAL=/usr/local/cuda/lib
P=$UNIT/prog_basic
export CONVGUARD_QUIET=1
unset LD_LIBRARY_PATH

# 1. The invariant, for every client and case of the selftest: stdout (return
#    values, dlerror texts, /proc/self/maps) byte-identical with the shim.
out=$(CONVGUARD_DIR=$WORK/selftest CGT_SHIM=$SHIM sh "$ROOT/tests/clients/selftest.sh" 2>&1)
check "selftest with the shim: $(echo "$out" | tail -1)" test $? = 0 -a -n "$(echo "$out" | grep -E '^[0-9]+ checks, 0 failed$')"
echo "$out" | grep '^FAIL' | head -5
check "every selftest trace is valid JSON with gap-free seq" traces_valid "$WORK/selftest"

# 2. PLT route (PyTorch-like: DT_NEEDED under an RTLD_LOCAL extension module)
LD_LIBRARY_PATH=$D/cuda run_shim "$WORK/torch" "$CLIENTS/client_torchlike" "$CLIENTS/ext_torchlike.so" >/dev/null
T=$(trace_of "$WORK/torch")
check "PLT: libcudnn.so.9 recorded, needed by the extension module" jqt "$T" 'any(.[]; .ev=="lib" and .soname=="libcudnn.so.9" and (.needed_by|endswith("ext_torchlike.so")))'
check "PLT: the sub-library's version read (90100) and what CUDA it was built for" jqt "$T" 'any(.[]; .ev=="lib" and .soname=="libcudnn_graph.so.9" and .version==90100 and .cuda_built_for==13000)'
check "PLT: cudart version recorded" jqt "$T" 'any(.[]; .ev=="lib" and .soname=="libcudart.so.13" and .version==13000)'
check "PLT: driver version recorded" jqt "$T" 'any(.[]; .ev=="lib" and .soname=="libcuda.so.1" and .version==13000)'
check "PLT: cudnnCreate, cudaMalloc, cudnnConvolutionForward seen" jqt "$T" '.[-1].calls | (.cudnnCreate>=1 and .cudaMalloc>=1 and .cudnnConvolutionForward>=1 and .cudnnGetConvolutionForwardAlgorithm_v7>=1)'
check "PLT: cudart's own driver calls seen through entry points" jqt "$T" '.[-1].calls | (.cuGetProcAddress_v2>=1 and .cuMemAlloc_v2>=1)'
check "PLT: the graph library's probes recorded as benign" jqt "$T" 'any(.[]; .ev=="dlopen" and .ok and .name=="libcudnn_graph.so.9" and (.benign_probes|length)>=2)'
check "PLT: no unresolved failure" jqt "$T" '.[-1].failures == 0'

# 3. dlopen + dlsym route (TensorFlow-like)
LD_LIBRARY_PATH=$ALL run_shim "$WORK/tf" "$CLIENTS/client_tflike" >/dev/null
T=$(trace_of "$WORK/tf")
check "dlsym: dlopen of libcudnn.so.9 by the main program recorded with flags" jqt "$T" 'any(.[]; .ev=="dlopen" and .name=="libcudnn.so.9" and .ok and .caller=="(main program)" and .flags=="RTLD_NOW|RTLD_LOCAL")'
check "dlsym: wrapped functions were called" jqt "$T" '.[-1].calls | (.cudnnCreate>=1 and .cudnnFindConvolutionForwardAlgorithmEx>=1 and .cudnnConvolutionBackwardFilter>=1 and .cudaMalloc>=1)'

# 4. driver entry points (JAX-like plugin, no DT_NEEDED)
LD_LIBRARY_PATH=$D/cudnn9:$D/cuda run_shim "$WORK/jax" "$CLIENTS/client_jaxlike" "$CLIENTS/plugin_jaxlike.so" >/dev/null
T=$(trace_of "$WORK/jax")
check "entry points: cuMemAlloc_v2 reached through cuGetProcAddress_v2 is wrapped" jqt "$T" '.[-1].calls | (.cuGetProcAddress_v2>=1 and .cuMemAlloc_v2>=1 and .cuMemFree_v2>=1)'
check "entry points: graph API calls seen" jqt "$T" '.[-1].calls | (.cudnnBackendFinalize>=1 and .cudnnBackendExecute>=1)'
check "entry points: the dlopen of libcuda.so.1 names the plugin as caller" jqt "$T" 'any(.[]; .ev=="dlopen" and .name=="libcuda.so.1" and (.caller|endswith("plugin_jaxlike.so")))'

# 5. a load that fails: dlerror text, candidates in the search order
LD_LIBRARY_PATH=$D/cudnn8-broken:$D/cuda run_shim "$WORK/c8" "$CLIENTS/client_cudnn8" >/dev/null 2>&1
T=$(trace_of "$WORK/c8")
check "failed load: libcudnn_cnn_infer.so.8 recorded with its dlerror text" jqt "$T" 'any(.[]; .ev=="dlopen" and .name=="libcudnn_cnn_infer.so.8" and .ok==false and (.error|test("libcudnn_cnn_infer.so.8: cannot open shared object file")))'
check "failed load: candidates walk LD_LIBRARY_PATH then RUNPATH (\$ORIGIN expanded) then the cache" jqt "$T" 'first(.[] | select(.ev=="dlopen" and .name=="libcudnn_cnn_infer.so.8" and .ok==false)) | [.candidates[].source] as $s | ($s|index("LD_LIBRARY_PATH")) < ($s|index("RUNPATH")) and ($s|index("RUNPATH")) < ($s|index("ld.so.cache"))'
check "failed load: the RUNPATH entry is the dispatcher's own directory" jqt "$T" 'first(.[] | select(.ev=="dlopen" and .name=="libcudnn_cnn_infer.so.8" and .ok==false)) | any(.candidates[]; .source=="RUNPATH" and (.dir|endswith("doubles/cudnn8-broken")) and (.missing|not))'
check "failed load: counted as unresolved" jqt "$T" '.[-1].load_failures_unresolved >= 1'

# 6. NVIDIA's cuDNN 9.19 and cudart 13 on this GPU-less machine
if [ -e $REAL/libcudnn.so.9 ] && [ -e "$CLIENTS/ext_torchlike_real.so" ]; then
    run_shim "$WORK/real" "$CLIENTS/client_torchlike" "$CLIENTS/ext_torchlike_real.so" > "$WORK/real.out"
    T=$(trace_of "$WORK/real")
    rp=$(readlink -f $REAL/libcudnn.so.9)
    check "real: libcudnn.so.9 recorded with its real path" jqt "$T" "any(.[]; .ev==\"lib\" and (.path==\"$rp\" or .path==\"$REAL/libcudnn.so.9\"))"
    check "real: libcudnn_graph.so.9 9.19.0 loaded (version 91900, built for CUDA 13)" jqt "$T" 'any(.[]; .ev=="lib" and .soname=="libcudnn_graph.so.9" and .version==91900 and (.cuda_built_for/1000|floor)==13)'
    check "real: cudart 13000 recorded" jqt "$T" 'any(.[]; .ev=="lib" and .soname=="libcudart.so.13" and .version==13000)'
    check "real: libcuda.so.1's failed load recorded with its dlerror" jqt "$T" 'any(.[]; .ev=="dlopen" and .name=="libcuda.so.1" and .ok==false and .error=="libcuda.so.1: cannot open shared object file: No such file or directory")'
    check "real: cudnnCreate's real CUDNN_STATUS_NOT_INITIALIZED (1001) recorded" jqt "$T" 'any(.[]; (.ev=="call_failed" or .ev=="cudnn_handle") and .fn=="cudnnCreate" and .status==1001)'
    check "real: cudaMalloc's real cudaErrorInsufficientDriver (35) recorded" jqt "$T" 'any(.[]; (.ev=="call_failed" or .ev=="alloc_failed") and .fn=="cudaMalloc" and .status==35)'
    # a copy of libcudnn.so.9 + libcudnn_graph.so.9 in a folder, loaded by path
    mkdir -p "$WORK/copy" && cp $REAL/libcudnn.so.9 $REAL/libcudnn_graph.so.9 "$WORK/copy/"
    a=$("$CLIENTS/client_copyload" "$WORK/copy" 2>/dev/null)
    b=$(run_shim "$WORK/copyt" "$CLIENTS/client_copyload" "$WORK/copy" 2>/dev/null)
    check "copy: output (maps included) identical with the shim" test "$a" = "$b"
    check "copy: the graph library maps from the copy's folder" bash -c "echo '$b' | grep -qx 'maps: $WORK/copy/libcudnn_graph.so.9'"
    T=$(trace_of "$WORK/copyt")
    check "copy: the trace records the graph library from the copy's folder" jqt "$T" "any(.[]; .ev==\"lib\" and .path==\"$WORK/copy/libcudnn_graph.so.9\")"
else
    echo "  (no NVIDIA cuDNN 9 / cudart 13 in $REAL: real-library checks skipped)"
fi

# 7. facts the verdicts are drawn from: the shim writes none (issue 27), the
# report draws them (tools/analysis/diagnose.c) from the lib events
# two different cuDNN files mapped
run_shim "$WORK/two" "$P" load "$D/cudnn9/libcudnn.so.9" call:cudnnGetVersion "$D/cudnn8/libcudnn.so.8" >/dev/null
mkdir -p "$WORK/c9b" && cp "$D"/cudnn9/* "$WORK/c9b/"
run_shim "$WORK/two9" "$P" load "$D/cudnn9/libcudnn.so.9" call:cudnnGetVersion "$WORK/c9b/libcudnn.so.9" call:cudnnGetVersion >/dev/null
check "two libcudnn files: two lib events of libcudnn.so.9, two inodes, no verdict written" jqt "$(trace_of "$WORK/two9")" \
    '([.[] | select(.ev=="lib" and .soname=="libcudnn.so.9")] | length == 2 and .[0].inode != .[1].inode) and all(.[]; .ev!="verdict")'
check "two libcudnn files: the report says cudnn_multiple_copies" bash -c "'$BUILD_DIR/convguard' report --json '$WORK/two9' | jq -e '[.findings[].rule] | index(\"cudnn_multiple_copies\")'"
check "cuDNN 8 beside 9, one copy each: no cudnn_multiple_copies" bash -c "'$BUILD_DIR/convguard' report --json '$WORK/two' | jq -e '[.findings[].rule] | index(\"cudnn_multiple_copies\") == null'"
# the field-notes trap: LD_LIBRARY_PATH searched before the dispatcher's RUNPATH
if [ -e $REAL/libcudnn_graph.so.9 ]; then
    LD_LIBRARY_PATH=$REAL run_shim "$WORK/mix" "$P" load "$D/cudnn9/libcudnn.so.9" call:cudnnGetVersion >/dev/null 2>&1
    T=$(trace_of "$WORK/mix")
    check "mix: the graph part's lib event from LD_LIBRARY_PATH's folder, with its own version" jqt "$T" \
        "any(.[]; .ev==\"lib\" and .soname==\"libcudnn_graph.so.9\" and (.path|startswith(\"$REAL\") or startswith(\"$(readlink -f $REAL)\")) and .version > 0)"
    # (the shadowed copy is the root cause: it takes the versions group, the mix's too)
    check "mix: the report says the part in LD_LIBRARY_PATH won over the dispatcher's own (cudnn_shadowed)" bash -c \
        "'$BUILD_DIR/convguard' report --json '$WORK/mix' | jq -e '.findings[0].rule == \"cudnn_shadowed\"'"
fi
# cuDNN 8 double is built for CUDA 12.2; cudart 13 loaded beside it
run_shim "$WORK/major" "$P" load "$D/cudnn8/libcudnn.so.8" call:cudnnGetVersion "$D/cudart/libcudart.so.13" >/dev/null
check "major: cuda_built_for 12020 on cuDNN's part, cudart 13000" jqt "$(trace_of "$WORK/major")" \
    'any(.[]; .ev=="lib" and .family=="cudnn" and .cuda_built_for==12020) and any(.[]; .ev=="lib" and .family=="cudart" and .version==13000)'
check "major: the report says cudnn_cuda_major_mismatch" bash -c "'$BUILD_DIR/convguard' report --json '$WORK/major' | jq -e '.findings[0].rule == \"cudnn_cuda_major_mismatch\"'"
# driver older than runtime
CGTEST_DRIVER_VERSION=12080 run_shim "$WORK/olddrv" "$P" load "$D/cudart/libcudart.so.13" "$D/cuda/libcuda.so.1" >/dev/null
check "olddrv: the driver's version 12080 and the runtime's 13000 in their lib events" jqt "$(trace_of "$WORK/olddrv")" \
    'any(.[]; .ev=="lib" and .family=="driver" and .version==12080) and any(.[]; .ev=="lib" and .family=="cudart" and .version==13000)'
check "olddrv: the report says driver_older_than_runtime" bash -c "'$BUILD_DIR/convguard' report --json '$WORK/olddrv' | jq -e '.findings[0].rule == \"driver_older_than_runtime\"'"
# a mapped library replaced on disk while the process runs
mkdir -p "$WORK/repl" && cp "$D"/cudart/libcudart.so.13 "$WORK/repl/" && cp "$D"/cuda/libcuda.so.1 "$WORK/repl/new.so"
run_shim "$WORK/replt" "$P" load "$WORK/repl/libcudart.so.13" "mv:$WORK/repl/new.so:$WORK/repl/libcudart.so.13" >/dev/null
check "replaced on disk after load: a lib_changed event (checked at exit)" jqt "$(trace_of "$WORK/replt")" "any(.[]; .ev==\"lib_changed\" and .path==\"$WORK/repl/libcudart.so.13\" and .when==\"exit\" and .deleted==false)"
check "replaced on disk: the report says lib_replaced_on_disk" bash -c "'$BUILD_DIR/convguard' report --json '$WORK/replt' | jq -e '[.findings[].rule] | index(\"lib_replaced_on_disk\")'"

# 8. nothing CUDA at all: no file, no line
out=$(CONVGUARD_QUIET=0 run_shim "$WORK/cpu" "$P" echo x 2>&1 >/dev/null)
check "no CUDA library: no trace file, nothing on stderr" bash -c "[ -z '$out' ] && [ -z \"\$(ls '$WORK/cpu')\" ]"
out=$(CONVGUARD_QUIET=0 LD_LIBRARY_PATH=$D/cuda run_shim "$WORK/line" "$CLIENTS/client_torchlike" "$CLIENTS/ext_torchlike.so" 2>&1 >/dev/null)
check "exit line names cuDNN's version, path, failures and the trace" bash -c "echo '$out' | grep -qE '^convguard: libcudnn.so.9 9.1.0 \(.*/doubles/cudnn9/libcudnn.so.9\); 0 failures; trace .*\.jsonl$'"
finish
