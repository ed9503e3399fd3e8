# t_report_rules.sh - every rule of tools/rules/rules.def has a trace in traces/
# (<rule>.jsonl, variants <rule>.<what>.jsonl); `convguard report` names that
# rule first, prints its cause and fix, and exits 1.  Healthy traces exit 0.
source "$(dirname "$0")/../lib.sh"
CG=$BUILD_DIR/convguard
T=$ROOT/tests/report/traces
norm() { tr -s ' \n' '  '; }

# one concrete thing each report must say (the PID, the variable, the command)
declare -A SAYS=(
    [handle_no_driver]="libcuda.so.1 could not be loaded"
    [handle_no_driver.handle_event]="no NVIDIA driver"
    [no_driver]="nvidia-smi"
    [gpu_hidden]='CUDA_VISIBLE_DEVICES="-1" hides every GPU'
    [gpu_hidden.empty]='CUDA_VISIBLE_DEVICES="" hides every GPU'
    [no_gpu_device]="nvidia-smi -L"
    [gpu_device_denied]="/dev/nvidia0 exists but this process cannot open it (EACCES; mode 0660 root:video; this process (uid 1000) is not in group video)"
    [gpu_device_denied.mode]="NVreg_DeviceFileMode"
    [no_device_files]="no NVIDIA device file (/dev/nvidia*) exists"
    [uvm_missing]="sudo modprobe nvidia-uvm"
    [visible_devices_unknown]='CUDA_VISIBLE_DEVICES="3" starts with 3, a GPU this machine does not have (NVML lists 2: 0 (GPU-5e2a0c1d'
    [visible_devices_unknown.uuid]="starts with GPU-deadbeef"
    [driver_older_than_runtime]="one for CUDA 13.0 or newer"
    [load_cudart_failed]="found instead: /usr/local/cuda/lib64/libcudart.so.13"
    [load_cudnn_failed]="nvidia-cudnn-cu12"
    [load_cudnn_sublib_failed]="install libnvrtc.so.11.2"
    [load_cudnn_sublib_failed.graph9]="its part libcudnn_graph.so.9 is in no folder"
    [load_cuda_lib_failed]="libcublasLt.so.13"
    [cudnn_sublib_mismatch]="take /usr/lib/x86_64-linux-gnu out of LD_LIBRARY_PATH"
    [cudnn_cuda_major_mismatch]="pip install nvidia-cudnn-cu13"
    [cudnn_multiple_copies]="/usr/lib/x86_64-linux-gnu/libcudnn.so.9, a system package's file, are both mapped"
    [lib_replaced_on_disk]="restart the process"
    [handle_memory_held]="kill 4242"
    [context_memory_held]="too little even for the CUDA context"
    [context_out_of_memory]="cuDevicePrimaryCtxRetain -> CUDA_ERROR_OUT_OF_MEMORY: only 24 MiB"
    [handle_out_of_memory]="only 180 MiB of 140.0 GiB"
    [handle_failed]="cublasLtCreate failed"
    [conv_workspace_exceeds_free]="--workspace-limit 700"
    [lookup_workspace]="TF_CUDNN_WORKSPACE_LIMIT_IN_MB=657"
    [lookup_workspace.graph]="needs a 6.0 GiB workspace, but only 2.0 GiB"
    [conv_no_algorithm]="CUDNN_STATUS_NOT_SUPPORTED"
    [conv_no_algorithm.graph]="11 not supported"
    [conv_exec_failed]="CUDNN_STATUS_EXECUTION_FAILED"
    [graph_finalize_failed]="TORCH_CUDNN_V8_API_DISABLED=1"
    [alloc_fragmented]="expandable_segments:True"
    [alloc_failed]="500 MiB of 24.0 GiB was free"
    [alloc_larger_than_gpu]="the request (150.0 GiB) is larger than the whole GPU (139.7 GiB): no setting makes it fit"
    [alloc_larger_than_gpu.message]="the request (150.0 GiB) is larger than the whole GPU (139.7 GiB)"
    [framework_pool_in_process]="JAX preallocated 104.8 GiB (75% of the GPU's 139.7 GiB"
    [framework_pool_in_process.message]="of which PyTorch holds 2 MiB (386 KiB allocated)"
    [alloc_memory_held]="kill 4242"
    [alloc_failed.call]="cudaErrorMemoryAllocation"
    [gpu_never_used]="python3 train.py --epochs 3"
    [gpu_not_used]="libcuda.so.1, the driver, is not mapped"
    [fallback_acted]="given 512 MiB"
    [crashed]="SIGSEGV"
    [crashed.abort]="Aborted (core dumped)"
    [own_pool_took_memory]="loading GPU code (cuModuleLoadData) failed with CUDA_ERROR_OUT_OF_MEMORY with only 5 MiB"
    [own_pool_took_memory.torch_h200]="holds 138.3 GiB in one allocation"
    [own_pool_took_memory.jax_h200]="loading GPU code (cuModuleLoadData) failed with CUDA_ERROR_OUT_OF_MEMORY with only 53 MiB"
    [code_load_failed]="install the framework build for this GPU"
    [pool_exhausted]="JAX: give the pool more"
    [cudnn_older_than_build]="JAX/XLA was built with cuDNN 9.8.0 but cuDNN 9.1.0 was loaded"
    [lookup_workspace.tf_headline]="2 other candidates fitted: CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM (0 bytes)"
    [driver_module_mismatch]="the loaded kernel module is 530.30.02"
    [mig_one_per_process]="one process per MIG instance"
    [cudnn_shadowed]="which is in LD_LIBRARY_PATH and is searched before libtorch_cuda.so's own RUNPATH"
    [cudnn_parts_split]="the versions match, so this works"
    [frameworks_share_gpu]="tf.config.set_visible_devices([], 'GPU')"
    [nv_cache_unwritable]="rm -rf /home/u/.nv"
    [gpu_arch_unsupported]="builds code for compute capabilities 3.0 to 7.5 only"
    [ptxas_mismatch.tree]="take /usr/local/cuda-11.1/bin out of PATH"
    [code_arch_mismatch]="the code has sm_80 machine code and no PTX; this GPU is 9.0"
    [code_arch_mismatch.module]="sm_80, sm_86 machine code and no PTX"
    [ptx_newer_than_driver]="PTX of ISA version 9.9"
    [code_arch_mismatch.h200_static]="(loaded by (main program) through cuLibraryLoadData)"
    [code_arch_mismatch.h200_shared]="the code has sm_80 machine code and no PTX; this GPU is 9.0 (loaded by libcudart.so.13"
    [ptx_newer_than_driver.h200]="driver: \"JIT compilation failed\" \"No device code available for GPU ISA 90\""
    [code_for_other_gpu]="cuLibraryLoadData (called by (main program)) was given code that has sm_80 machine code and no PTX; this GPU is 9.0"
    [printed_busy]="--compute-mode=0"
    [printed_code]="torch.cuda.get_arch_list()"
    [printed_cuda]="XLA_PYTHON_CLIENT_PREALLOCATE=false"
    [printed_cudnn]="x.contiguous()"
    [printed_device]="nvidia-smi -L"
    [printed_driver]="after a driver upgrade reboot"
    [printed_host]="--shm-size=8g"
    [printed_kernel]="ignore_index"
    [printed_launch]="num_stages"
    [printed_load]="cupy-cuda12x[ctk]"
    [printed_nccl]="NCCL_DEBUG=INFO"
    [printed_oom]="torch.distributed.barrier()"
    [printed_usage]="torch.version.cuda"
    [printed_version]="torch.cuda.nccl.version()"
    [printed_warning]="pip uninstall cupy"
    [alloc_failed.cupy_pool]="the allocation was CuPy's (its memory pool); this process holds 136.0 GiB of the 139.8 GiB itself"
    [alloc_failed.torch_message]="PyTorch holds 136.0 GiB (allocated) / 136.0 GiB reserved of the 139.8 GiB"
    [alloc_failed.gpu_full]="the allocation was made by libffi.so.8, outside any framework's allocator"
    [pool_exhausted.mem_fraction]="this process set XLA_PYTHON_CLIENT_MEM_FRACTION=.02: a pool of 2% of the GPU"
    [printed_usage.deserialize]='map_location="cpu"'
    [ptx_newer_than_driver.cupy]="compile with a toolkit no newer than CUDA 13.0"
    [oom_memory_held.jax_two]="process 6102 (python3) holds 105.0 GiB; cuMemAlloc_v2 of 104.9 GiB failed with 36.0 GiB of 139.8 GiB free, and a smaller pool of 33.0 GiB was all it got"
    [ranks_share_gpu.torchrun]="2 ranks of this job ran on gpu1: rank 0 (pid 6201), rank 1 (pid 6202); CUDA_VISIBLE_DEVICES was not set for them"
    [driver_reported_error]="cuModuleGetFunction (a call convguard does not wrap: seen in the driver's log) returned CUDA_ERROR_INVALID_HANDLE (400)"
)

# what the headline's fix must not say: another framework's knobs (issue 27 item 5), words of H200 runs
declare -A FIX_NOT=(
    [code_arch_mismatch.h200_static]="PyTorch|torch."
    [ptx_newer_than_driver.cupy]="Triton|JAX"
    [alloc_failed.cupy_pool]="PyTorch|PYTORCH_|XLA_|TensorFlow"
    [alloc_failed.torch_message]="CuPy|XLA_|TensorFlow"
    [pool_exhausted.mem_fraction]="PyTorch|TensorFlow|CuPy"
)

# what the headline's fix must say itself (not only a later finding's)
declare -A FIX_HAS=(
    [printed_usage.deserialize]='torch.load(path, map_location="cpu")'
    [alloc_failed.cupy_pool]="free_all_blocks()"
    [oom_memory_held.jax_two]="XLA_PYTHON_CLIENT_PREALLOCATE=false"
    [ranks_share_gpu.torchrun]='torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))'
)

# a trace file, or a folder of them (a rule about a process tree: <rule>.<what>/)
for f in "$T"/*.jsonl "$T"/*/; do
    f=${f%/}
    name=$(basename "$f" .jsonl)
    rule=${name%%.*}
    check "$name: $rule is a rule of rules.def" grep -q "^RULE($rule," "$ROOT/tools/rules/rules.def"
    "$CG" report --json "$f" >"$WORK/j" 2>"$WORK/err"
    check "$name: exit status 1 (problems found)" test $? = 1
    check "$name: names $rule first" jq -e --arg r "$rule" '.findings[0].rule == $r' "$WORK/j"
    "$CG" report "$f" 2>&1 | norm >"$WORK/txt"
    cause=$(jq -r --arg r "$rule" '[.findings[] | select(.rule == $r)][0].cause' "$WORK/j" | norm)
    fix=$(jq -r --arg r "$rule" '[.findings[] | select(.rule == $r)][0].fix' "$WORK/j" | norm)
    check "$name: text gives the cause" grep -qF -e "cause: $cause" "$WORK/txt"
    check "$name: text gives the fix" grep -qF -e "fix: $fix" "$WORK/txt"
    check "$name: no unfilled {placeholder}" bash -c "! grep -qE '\{[a-z_.]+(:[a-z]+)?\}' '$WORK/txt'"
    want=${SAYS[$name]:-}
    if [ -n "$want" ]; then
        check "$name: says '$want'" grep -qF -e "$want" "$WORK/txt"
    else
        fail "$name: no expectation in SAYS"
    fi
    if [ -n "${FIX_HAS[$name]:-}" ]; then
        check "$name: the headline's fix says '${FIX_HAS[$name]}'" \
            jq -e --arg w "${FIX_HAS[$name]}" '.findings[0].fix | contains($w)' "$WORK/j"
    fi
    if [ -n "${FIX_NOT[$name]:-}" ]; then
        check "$name: the fix names none of '${FIX_NOT[$name]}'" \
            bash -c '! jq -r ".findings[0].fix" "$1" | grep -qE "$2"' _ "$WORK/j" "${FIX_NOT[$name]//./\\.}"
    fi
done

for r in $(sed -n 's/^RULE(\([a-z_0-9]*\),.*/\1/p' "$ROOT/tools/rules/rules.def"); do
    check "rule $r has a test trace" bash -c "ls -d '$T/$r.jsonl' '$T/$r'.*.jsonl '$T/$r'.*/ 2>/dev/null | grep -q ."
done

H=$ROOT/tests/report/healthy
"$CG" report "$H/single.jsonl" >"$WORK/out"
check "healthy trace: exit 0" test $? = 0
check "healthy trace: says no problem found" grep -q "no problem found" "$WORK/out"
"$CG" report "$H/bash-parent.jsonl" "$H/python-child.jsonl" >"$WORK/out"
check "bash starting python that used the GPU: exit 0 (the parent is not 'GPU never used')" test $? = 0
"$CG" report --json "$H" >"$WORK/j"
check "healthy directory, --json: problems 0, 3 processes" jq -e '.problems == 0 and (.processes | length) == 3' "$WORK/j"
check "--json: the child's parent is the bash process" jq -e '[.processes[] | select(.pid == 7002) | .parent] == [1]' "$WORK/j"
finish
