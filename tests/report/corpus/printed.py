#!/usr/bin/env python3
"""tests/report/corpus/printed.py - writes the corpus cases `p-<message id>` of
the rows of tools/model/patterns.def: for each message family a minimal trace of
the process that printed it (the shape the shim writes, docs/trace-format.md:
its framework's libraries, the driver, an exit with the job's status: 1, or 0
for a warning, after which the program runs on) and the
capture file `convguard run` keeps of its stderr (docs/trace-format.md,
"Captured stderr") holding the message as users posted it in the row's source
thread.  Nothing in the trace tells the cause: the report must find it in what
the program printed.  Also writes tests/report/traces/printed_<kind>.jsonl (+
.stderr) for t_report_rules.sh.  Run it to rewrite them:

    python3 tests/report/corpus/printed.py

Not run by `make accuracy` or CI: the cases are committed files."""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SP = "/home/u/venv/lib/python3.11/site-packages"
HOST = "gpu7"  # no other case or test trace lives on this host: captures tie by host

# the finding each kind of patterns.def becomes (rules.def, the printed_* rows)
RULE_OF_KIND = {
    "kernel": "printed_kernel", "launch": "printed_launch", "driver": "printed_driver", "init": "printed_driver",
    "device": "printed_device", "busy": "printed_busy", "load": "printed_load", "dnn_missing": "printed_load",
    "version": "printed_version", "code": "printed_code", "oom": "printed_oom", "host": "printed_host",
    "cudnn": "printed_cudnn", "no_algo": "printed_cudnn", "autotune": "printed_cudnn", "nccl": "printed_nccl",
    "usage": "printed_usage", "cuda": "printed_cuda", "warn": "printed_warning",
}

LIBS = {
    "torch": [SP + "/torch/lib/libc10_cuda.so", SP + "/torch/lib/libtorch_cuda.so"],
    "tf": [SP + "/tensorflow/libtensorflow_framework.so.2"],
    "jax": [SP + "/jax_plugins/xla_cuda12/xla_cuda_plugin.so"],
    "cupy": [SP + "/cupy/_core/core.cpython-311-x86_64-linux-gnu.so"],
    "c": [],
}
# rows a rule of the trace explains before the printed_* rows (rules.def), with its words
RULE_OF_ID = {
    "nccl_duplicate_gpu": ("ranks_share_gpu", "refuses a communicator with two ranks on one GPU"),
    "nccl_same_gpu": ("ranks_share_gpu", "refuses a communicator with two ranks on one GPU"),
}
FRAMEWORKS = {"torch": ["torch"], "tf": ["tensorflow"], "jax": ["jax"], "cupy": ["cupy"], "c": []}


def messages():
    """id -> (kind, source) of every MESSAGE row"""
    text = open(os.path.join(ROOT, "tools/model/patterns.def")).read()
    rows = {}
    for m in re.finditer(r'^MESSAGE\((\w+), "(\w+)",(.*?)"(https://[^"]+)"\)', text, re.S | re.M):
        rows[m.group(1)] = (m.group(2), m.group(4))
    return rows


def tb(exc, *frames):
    out = ["Traceback (most recent call last):"]
    for f in frames or ('File "train.py", line 42, in <module>', "    main()"):
        out.append("  " + f if not f.startswith("    ") else f)
    out.append(exc)
    return out


# id: (framework, lines as printed, cause words, fix words[, extra events, GPU libs])
CASES = {
    # ---- NCCL
    "nccl_shm_segment": ("torch", [
        "gpu7:2143:2561 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device",
        "gpu7:2143:2561 [1] misc/shmutils.cc:132 NCCL WARN Error while creating shared memory segment "
        "/dev/shm/nccl-WU88OE (size 9637888), error: No space left on device (28)"] +
        tb("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
           "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5"),
        "/dev/shm was too small", "--shm-size"),
    "nccl_shm_extend": ("torch", [
        "ubuntu:9621:9691 [6] misc/shmutils.cc:71 NCCL WARN Error: failed to extend /dev/shm/nccl-fjwOOB to "
        "5967876 bytes"], "/dev/shm was too small", "NCCL_SHM_DISABLE=1"),
    "nccl_duplicate_gpu": ("torch", tb(
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, "
        "invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3") + [
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.", "Last error:",
        "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 2000"],
        "more than one rank on this machine runs on one GPU", "torch.cuda.set_device"),
    "nccl_same_gpu": ("torch", [
        "[rank1]:[W init.cc:1057] NCCL WARN Multiple Ranks are using the same GPU/Partition. Set "
        "NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration."],
        "more than one rank on this machine runs on one GPU", "--nproc_per_node"),
    "nccl_version_mismatch": ("torch", [
        "node2:3301:3390 [0] init.cc:1043 NCCL WARN Mismatched NCCL version detected : rank 3 version 22005 rank 0 "
        "version 21805"], "loaded different NCCL libraries", "torch.cuda.nccl.version()",
        [("lib", {"path": SP + "/nvidia/nccl/lib/libnccl.so.2", "soname": "libnccl.so.2", "family": "other"})]),
    "nccl_cuda_oom": ("torch", [
        "gpu7:4021:4077 [0] include/alloc.h:103 NCCL WARN Cuda failure 'out of memory'",
        "gpu7:4021:4077 [0] NCCL INFO include/alloc.h:109 -> 1"],
        "NCCL allocates buffers on every GPU", "torch.distributed.barrier()"),
    "nccl_cuda_failure": ("torch", [
        "[rank7]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275",
        "gpu7:2657296:2658232 [0] include/alloc.h:102 NCCL WARN Cuda failure 1 'invalid argument'"],
        "the CUDA error is the cause", "NCCL_DEBUG=INFO"),
    "nccl_unhandled_cuda": ("torch", ["terminate called after throwing an instance of 'std::runtime_error'",
                                      "  what():  NCCL Error 1: unhandled cuda error"],
        "printed only with NCCL_DEBUG", "NCCL WARN Cuda failure"),
    "nccl_remote_error": ("torch", tb(
        "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, "
        "remote process exited or there was a network error, NCCL version 2.21.5") + [
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
        "Last error:", "socketProgressOpt: Call to recv from 172.16.4.21<33759> failed : Connection reset by peer"],
        "NCCL lost a peer", "ibstat"),
    "nccl_system_error": ("torch", [
        "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
        "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5",
        "[rank0]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device "
        "error."], "socket, shared-memory or InfiniBand setup failed", "NCCL_SOCKET_IFNAME"),
    "nccl_invalid_usage": ("torch", [
        "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1287, invalid usage, NCCL version 2.17.1",
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library."],
        "NCCL rejected the communicator", "NCCL_DEBUG=WARN"),
    "nccl_no_socket": ("torch", ["gpu7:1201:1201 [0] bootstrap.cc:126 NCCL WARN Bootstrap : no socket interface found"],
        "NCCL needs an IP interface for its bootstrap", "ip -br addr"),
    # ---- CuPy
    "cupy_oom": ("cupy", tb("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 8,589,934,592 bytes "
                            "(allocated so far: 16,106,127,360 bytes)."),
        "CuPy's memory pool also keeps freed blocks", "free_all_blocks()"),
    "cupy_softlink": ("cupy", tb("RuntimeError: CuPy failed to load libnvrtc.so.12: OSError: libnvrtc.so.12: cannot "
                                 "open shared object file: No such file or directory"),
        "is missing or is for another CUDA", "cupy-cuda12x[ctk]"),
    "cupy_multiple": ("cupy", [
        "UserWarning: --------------------------------------------------------------------------------",
        "  CuPy may not function correctly because multiple CuPy packages are installed",
        "  in your environment:", "    cupy, cupy-cuda12x"],
        "install the same files over each other", "conda uninstall cupy"),
    "nvrtc_builtins": ("torch", tb("RuntimeError: nvrtc: error: failed to open libnvrtc-builtins.so.11.1.") + [
        "  Make sure that libnvrtc-builtins.so.11.1 is installed correctly."],
        "not libnvrtc-builtins.so of its own CUDA version", "nvidia-cuda-nvrtc-cu12"),
    # ---- PyTorch
    "torch_oom_tried": ("torch", tb(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
        "23.65 GiB of which 9.06 MiB is free. Including non-PyTorch memory, this process has 23.63 GiB memory in "
        "use. Of the allocated memory 22.99 GiB is allocated by PyTorch, and 185.47 MiB is reserved by PyTorch but "
        "unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."),
        "asked the GPU for more than was free", "expandable_segments:True"),
    "torch_cudnn_not_supported": ("torch", tb(
        "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a "
        "non-contiguous input."), "a tensor larger than cuDNN handles", "x.contiguous()"),
    "torch_cudnn_mapping": ("torch", tb("RuntimeError: cuDNN error: CUDNN_STATUS_MAPPING_ERROR"),
        "could not access the memory it was given", "CUDA_LAUNCH_BLOCKING=1"),
    "torch_sm_incompatible": ("torch", [
        "/home/u/venv/lib/python3.11/site-packages/torch/cuda/__init__.py:230: UserWarning:",
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
        "installation.", "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 "
        "sm_90."], "not among those the installed PyTorch wheel", "torch.cuda.get_arch_list()"),
    "torch_gpu_too_old": ("torch", [
        "UserWarning: Found GPU0 Tesla K80 which is of cuda capability 3.7.",
        "    PyTorch no longer supports this GPU because it is too old.",
        "    The minimum cuda capability supported by this library is 5.0."],
        "below the oldest one", "older wheel"),
    "torch_not_compiled": ("torch", tb('AssertionError: Torch not compiled with CUDA enabled',
                                       'File "train.py", line 9, in <module>', '    model.cuda()'),
        "built without CUDA", "torch.version.cuda"),
    "torch_fork_reinit": ("torch", tb("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA "
                                      "with multiprocessing, you must use the 'spawn' start method"),
        "CUDA cannot run in a forked child", "set_start_method(\"spawn\")"),
    "torch_same_device": ("torch", tb(
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
        "cpu!"), "a tensor a module keeps as a plain attribute", "self.register_buffer"),
    "torch_nll_assert": ("torch", [
        "../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: "
        "[5,0,0] Assertion `t >= 0 && t < n_classes` failed."] +
        tb("RuntimeError: CUDA error: device-side assert triggered"),
        "not below the number of classes", "ignore_index"),
    "torch_index_assert": ("torch", [
        "../aten/src/ATen/native/cuda/Indexing.cu:1289: indexSelectLargeIndex: block: [19,0,0], thread: [101,0,0] "
        "Assertion `srcIndex < srcSelectDimSize` failed.",
        "../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [19,0,0], thread: [102,0,0] Assertion "
        "`index >= -sizes[i] && index < sizes[i] && \"index out of bounds\"` failed."] +
        tb("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmStridedBatchedExFix("
           "handle, opa, opb, m, n, k, (void*)(&falpha), a, CUDA_R_16F, lda, stridea, b, CUDA_R_16F, ldb, strideb, "
           "(void*)(&fbeta), c, CUDA_R_16F, ldc, stridec, num_batches, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`"),
        "a token id not below the embedding size", "resize_token_embeddings"),
    "torch_shm_bus": ("torch", [
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory "
        "(shm)."], "through /dev/shm, which was too small", "--ipc=host"),
    "torch_shm_write": ("torch", tb("RuntimeError: unable to write to file </torch_27158_3207425541_0>: No space "
                                    "left on device (28)"),
        "could not write a tensor into /dev/shm", "set_sharing_strategy"),
    "torch_worker_killed": ("torch", tb("RuntimeError: DataLoader worker (pid 325) is killed by signal: Bus error. "),
        "killed while writing to /dev/shm", "num_workers=0"),
    "torch_nccl_watchdog": ("torch", [
        "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, "
        "Timeout(ms)=600000) ran for 600060 milliseconds before timing out."],
        "one rank never joined it", "TORCH_NCCL_DUMP_ON_TIMEOUT=1"),
    "torch_deserialize_cuda": ("torch", tb(
        "RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
        "If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to "
        "map your storages to the CPU."), "restores tensors onto the GPU", "map_location=\"cpu\""),
    "torch_cuda_devicecount": ("torch", [
        "/home/u/venv/lib/python3.11/site-packages/torch/cuda/__init__.py:128: UserWarning: CUDA initialization: "
        "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
        "NumCudaDevices() that might have already set an error? Error 999: unknown error (Triggered internally at "
        "../c10/cuda/CUDAFunctions.cpp:108.)"], "cudaGetDeviceCount failed", "reboot"),
    # ---- TensorFlow
    "tf_no_cuda_drivers": ("tf", [
        "2024-03-01 10:12:03.482513: I external/local_tsl/tsl/cuda/cudart_stub.cc:31] Could not find cuda drivers "
        "on your machine, GPU will not be used."], "libcuda.so.1 could not be loaded", "--gpus all"),
    "tf_not_built_for_cc": ("tf", [
        "2023-02-10 09:01:12.211: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1934] TensorFlow was not built "
        "with CUDA kernel binaries compatible with compute capability 8.9. CUDA kernels will be jit-compiled from "
        "PTX, which could take 30 minutes or longer."], "compiles them from PTX", "CUDA_CACHE_MAXSIZE"),
    # ---- JAX
    "jax_cpu_fallback": ("jax", [
        "WARNING:jax._src.xla_bridge:An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not "
        "installed. Falling back to cpu."], "falls back to the CPU", "jax[cuda12]"),
    "jax_cuda_components": ("jax", tb(
        "RuntimeError: Unable to use CUDA because of the following issues with CUDA components:") + [
        "Outdated cuDNN installation found.", "Version JAX was built against: 90800",
        "Minimum supported: 90100", "Installed version: 90000"],
        "older than it was built against", "fresh environment"),
    "jax_outdated": ("jax", ["Outdated cuSPARSE installation found.", "Version JAX was built against: 12500",
                             "Minimum supported: 12100", "Installed version: 12002"],
        "a system or conda copy that won over the pip one", "LD_LIBRARY_PATH"),
    "jax_unable_load": ("jax", ["Unable to load cuSPARSE. Is it installed?"],
        "taken from another CUDA first on LD_LIBRARY_PATH", "unset it"),
    "jaxlib_newer": ("jax", tb("RuntimeError: jaxlib version 0.4.30 is newer than and incompatible with jax "
                               "version 0.4.23. Please update your jax and/or jaxlib packages."),
        "newer than the jax package", "pip install -U jax jaxlib"),
    "jax_cusolver_internal": ("jax", tb("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: cuSolver internal error"),
        "JAX's preallocated pool had taken it", "XLA_PYTHON_CLIENT_PREALLOCATE=false"),
    "xla_ptxas_missing": ("jax", [
        "W external/xla/xla/stream_executor/cuda/cuda_asm_compiler.cc:218] Couldn't get ptxas version : FAILED_PRECONDITION: "
        "Couldn't get ptxas version string: INTERNAL: Couldn't invoke ptxas --version"],
        "found none it could run", "it brings ptxas"),
    "xla_libdevice": ("tf", [
        "2023-05-02 11:30:41.120: W tensorflow/compiler/xla/service/gpu/llvm_gpu_backend/gpu_backend_lib.cc:530] "
        "libdevice not found at ./libdevice.10.bc"], "nvvm/libdevice", "xla_gpu_cuda_data_dir"),
    # ---- Triton
    "triton_out_of_resource": ("torch", tb(
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131072, Hardware limit: "
        "101376. Reducing block sizes or `num_stages` may help."), "more shared memory per block", "num_stages"),
    "triton_cuda_error": ("torch", tb("RuntimeError: Triton Error [CUDA]: invalid argument"),
        "Triton passes on the CUDA error", "read the CUDA error"),
    # ---- cuDNN / cuBLAS / cuFFT
    "cudnn_exec_failed": ("torch", tb("RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED"),
        "no kernels for this GPU's architecture", "torch.cuda.get_arch_list()"),
    "cublas_not_initialized": ("torch", tb("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling "
                                           "`cublasCreate(handle)`"),
        "GPU memory was used up", "a smaller batch"),
    "cublas_alloc_failed": ("torch", tb("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling "
                                        "`cublasCreate(handle)`"), "could not allocate its workspace",
        "CUBLAS_WORKSPACE_CONFIG"),
    "cublas_execution_failed": ("torch", tb(
        "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, "
        "n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`"), "an earlier kernel had already failed",
        "token ids are below the embedding size"),
    "cufft_internal": ("torch", tb("RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR",
                                   'File "/home/u/venv/lib/python3.11/site-packages/torch/functional.py", line 665, '
                                   'in stft', "    return _VF.stft(input, n_fft, hop_length, win_length, window,"),
        "RTX 40xx", "cu118"),
    # ---- CUDA statuses
    "cuda_forward_compat": ("torch", [
        "/opt/conda/lib/python3.8/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: "
        "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
        "NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on "
        "non supported HW (Triggered internally at /opt/conda/conda-bld/pytorch_1623448278899/work/c10/cuda/"
        "CUDAFunctions.cpp:115.)"], "cuda-compat package", "/usr/local/cuda/compat"),
    "cuda_system_not_ready": ("torch", tb("RuntimeError: cuda runtime error (802) : system not yet initialized at "
                                          "/opt/conda/conda-bld/pytorch_1579022034529/work/aten/src/THC/"
                                          "THCGeneral.cpp:50"), "Fabric Manager", "nvidia-fabricmanager"),
    "cuda_display_driver": ("torch", [
        "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
        "functions before calling NumCudaDevices() that might have already set an error? Error 803: system has "
        "unsupported display driver / cuda driver combination"], "old kernel module stayed loaded", "modprobe"),
    "cuda_devices_busy": ("torch", [
        "THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1503970438496/work/torch/lib/THC/generic/THCStorage.cu "
        "line=66 error=46 : all CUDA-capable devices are busy or unavailable"] +
        tb("RuntimeError: cuda runtime error (46) : all CUDA-capable devices are busy or unavailable at "
           "/opt/conda/conda-bld/pytorch_1503970438496/work/torch/lib/THC/generic/THCStorage.cu:66"),
        "Exclusive Process", "--compute-mode=0"),
    "cuda_insufficient_name": ("cupy", tb(
        "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInsufficientDriver: CUDA driver version is "
        "insufficient for CUDA runtime version"), "supports an older CUDA", "cupy-cuda11x"),
    "cuda_no_device_name": ("tf", [
        "2023-01-07 08:24:25.870501: E tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc:267] failed call "
        "to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"],
        "gives this process no GPU", "nvidia-smi -L"),
    "cuda_no_binary_name": ("tf", [
        "2020-11-02 13:20:11.315: E tensorflow/stream_executor/cuda/cuda_driver.cc:1013] failed to load PTX text "
        "as a module: CUDA_ERROR_NO_BINARY_FOR_GPU"], "no machine code for this GPU", "compute capability"),
    "cuda_ptx_version_name": ("jax", [
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to load PTX text as a module: "
        "CUDA_ERROR_UNSUPPORTED_PTX_VERSION: the provided PTX was compiled with an unsupported toolchain."],
        "newer CUDA toolkit than this driver", "update the NVIDIA driver"),
    "cuda_ptx_toolchain": ("torch", tb("RuntimeError: CUDA error: the provided PTX was compiled with an unsupported "
                                       "toolchain."), "newer CUDA toolkit than this driver", "no newer than the driver"),
    "cuda_device_assert": ("torch", tb("RuntimeError: CUDA error: device-side assert triggered") + [
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
        "be incorrect.", "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."],
        "index out of range", "CUDA_LAUNCH_BLOCKING=1"),
    "cuda_illegal_address": ("torch", tb("RuntimeError: CUDA error: an illegal memory access was encountered") + [
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
        "be incorrect."], "outside its buffers", "compute-sanitizer",
        [("driver_log", {"level": "error", "message": "Returning 700 (CUDA_ERROR_ILLEGAL_ADDRESS) from cuLaunchKernel",
                         "fn": "cuLaunchKernel", "status": 700, "status_name": "CUDA_ERROR_ILLEGAL_ADDRESS",
                         "hooked": False})]),
    "cuda_illegal_address_name": ("jax", [
        "E0513 10:11:12.345678 1234 pjrt_stream_executor_client.cc:2985] Execution of replica 0 failed: INTERNAL: "
        "Failed to complete all kernels launched on stream 0x55d3c8: CUDA error: Could not synchronize CUDA stream: "
        "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered"],
        "outside its buffers", "compute-sanitizer"),
    "cuda_misaligned": ("torch", tb("RuntimeError: CUDA error: misaligned address"),
        "not aligned to its size", ".contiguous()"),
    "cuda_launch_failure": ("torch", tb("RuntimeError: CUDA error: unspecified launch failure"),
        "does not name", "Xid"),
    "cuda_too_many_resources": ("c", ["GPUassert: too many resources requested for launch sim.cu 1589"],
        "registers per thread", "-maxrregcount"),
    "cuda_error_oom": ("torch", tb("RuntimeError: CUDA error: out of memory") + [
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
        "be incorrect."], "outside the framework's allocator", "set_per_process_memory_fraction"),
    # ---- the driver
    "nvsmi_no_driver": ("c", ["NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make "
                              "sure that the latest NVIDIA driver is installed and running."],
        "kernel module is not loaded", "Secure Boot"),
    # ---- issue 27 item 4, second batch (appended: the cases above keep their pids)
    "triton_invalid_image": ("torch", tb("RuntimeError: Triton Error [CUDA]: device kernel image is invalid",
                                         'File "/home/u/venv/lib/python3.11/site-packages/triton/compiler/'
                                         'compiler.py", line 285, in _init_handles',
                                         "    self.module, self.function, self.n_regs, self.n_spills = "
                                         "driver.utils.load_binary("),
        "older than the CUDA of the ptxas Triton ships", "TRITON_PTXAS_PATH"),
    "triton_ptxas_gpu_name": ("torch", [
        "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error",
        "`ptxas` stderr:", "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'"],
        "comes from a CUDA older than this GPU's architecture", "TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas"),
    "triton_ptx_codegen": ("torch", tb("RuntimeError: Internal Triton PTX codegen error: ") + [
        "ptxas /tmp/tmpdy7phawp.ptx, line 1322; error   : Feature '.bf16' requires .target sm_80 or higher"],
        "ptxas could not compile Triton's PTX", "upgrade Triton"),
    "triton_passmanager": ("torch", tb("RuntimeError: PassManager::run failed",
                                       'File "/home/u/venv/lib/python3.11/site-packages/triton/backends/nvidia/'
                                       'compiler.py", line 311, in make_ttgir', "    pm.run(mod)"),
        "too old for the GPU's architecture", "pip install -U torch triton"),
    "torch_no_gpus": ("torch", tb("RuntimeError: No CUDA GPUs are available",
                                  'File "/home/u/venv/lib/python3.11/site-packages/torch/cuda/__init__.py", line 293, '
                                  'in _lazy_init', "    torch._C._cuda_init()"),
        "names a GPU this machine does not have", "hard-coded CUDA_VISIBLE_DEVICES"),
    "tf_cupti_missing": ("tf", [
        "2020-05-13 15:49:23.364143: I tensorflow/core/profiler/lib/profiler_session.cc:163] Profiler session "
        "started.",
        "2020-05-13 15:49:23.365471: W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not "
        "load dynamic library 'libcupti.so.10.1'; dlerror: libcupti.so.10.1: cannot open shared object file: No "
        "such file or directory"], "extras/CUPTI/lib64", "tensorflow[and-cuda]"),
    "cupti_load": ("tf", [
        "2022-07-21 10:02:11.881230: E tensorflow/core/profiler/internal/gpu/cupti_error_manager.cc:135] "
        "cuptiGetTimestamp: ignored due to a previous error.",
        "2022-07-21 10:02:11.881302: E tensorflow/core/profiler/internal/gpu/cupti_tracer.cc:1415] function "
        "cupti_interface_->Subscribe( &subscriber_, (CUpti_CallbackFunc)ApiCallback, this)failed with error "
        "CUPTI could not be loaded or symbol could not be found.",
        "Failed to load libcupti (is it installed and accessible?)"],
        "found no libcupti it could load", "/usr/local/cuda/extras/CUPTI/lib64"),
    "xla_conv_algo_failed": ("jax", tb(
        "jaxlib.xla_extension.XlaRuntimeError: UNKNOWN: Failed to determine best cudnn convolution algorithm for:") + [
        "%cudnn-conv-bias-activation.641 = (f32[1,64,1200,1200]{3,2,1,0}, u8[0]{0}) custom-call(...), "
        "custom_call_target=\"__cudnn$convBiasActivationForward\""],
        "an out-of-memory in disguise", "XLA_PYTHON_CLIENT_PREALLOCATE=false"),
    "cublas_invalid_value": ("torch", tb(
        "RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasSgemmStridedBatched( handle, "
        "opa, opb, m, n, k, &alpha, a, lda, stridea, b, ldb, strideb, &beta, c, ldc, stridec, num_batches)`"),
        "nearly used up", "LD_LIBRARY_PATH"),
    "cuda_launch_timeout": ("torch", tb("RuntimeError: CUDA error: the launch timed out and was terminated") + [
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
        "be incorrect."], "also drives a display", "TdrDelay"),
    "cuda_ecc": ("torch", tb("RuntimeError: CUDA error: uncorrectable ECC error encountered") + [
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
        "be incorrect."], "a hardware fault", "nvidia-smi -q -d ECC"),
    "cuda_invalid_ordinal": ("torch", tb("RuntimeError: CUDA error: invalid device ordinal",
                                         'File "teacher_train.py", line 61, in <module>',
                                         "    model = _Teacher(patch_size).to(device)"),
        "on a one-GPU machine", "torch.cuda.device_count()"),
    "torch_expandable_not_supported": ("torch", tb("RuntimeError: CUDA driver error: operation not supported"),
        "virtual-memory driver calls", "expandable_segments:False"),
    "cuda_not_supported": ("c", ["Error: DriverError(CUDA_ERROR_NOT_SUPPORTED, \"operation not supported\")"],
        "a virtual GPU lacks", "cudaDevAttrMemoryPoolsSupported"),
    "cuda_peer_access": ("torch", [
        "gpu7:909608:910337 [0] include/alloc.h:186 NCCL WARN Cuda failure 'peer access is not supported between "
        "these two devices'", "gpu7:909608:910337 [0] NCCL INFO transport.cc:68 -> 1"],
        "GeForce cards without P2P", "NCCL_P2P_DISABLE=1"),
    "nvml_unknown": ("c", ["Failed to initialize NVML: Unknown Error"],
        "systemctl daemon-reload", "create-dev-char-symlinks"),
    # ---- issue 27 item 4, third batch (appended: the cases above keep their pids)
    "torch_alloc_conf_key": ("torch", tb("RuntimeError: Unrecognized key 'expandable_segment' in Accelerator allocator "
                                         "config."), "refuses a key it does not know", "expandable_segments:True"),
    "torch_alloc_conf_option": ("torch", tb("RuntimeError: Unrecognized CachingAllocator option: expandable_segments"),
        "newer than this PyTorch", "env -u PYTORCH_CUDA_ALLOC_CONF"),
    "torch_alloc_conf_bool": ("torch", tb("RuntimeError: Expected a single True/False argument for expandable_segments"),
        "only `True` or `False`", "expandable_segments:True"),
    "torch_alloc_backend": ("torch", tb("RuntimeError: Unknown allocator backend, options are native and "
                                        "cudaMallocAsync"), "`native` or `cudaMallocAsync` only",
        "backend:cudaMallocAsync"),
    "torch_cublas_deterministic": ("torch", tb(
        "RuntimeError: Deterministic behavior was enabled with either `torch.use_deterministic_algorithms(True)` or "
        "`at::Context::setDeterministicAlgorithms(true)`, but this operation is not deterministic because it uses "
        "CuBLAS and you have CUDA >= 10.2. To enable deterministic behavior in this case, you must set an "
        "environment variable before running your PyTorch application: CUBLAS_WORKSPACE_CONFIG=:4096:8 or "
        "CUBLAS_WORKSPACE_CONFIG=:16:8."), "fixed workspace configuration", "CUBLAS_WORKSPACE_CONFIG=:4096:8"),
    "torch_worker_exited": ("torch", tb("RuntimeError: DataLoader worker (pid(s) 17081, 17084, 17087, 17090) exited "
                                        "unexpectedly"), "out-of-memory killer", "num_workers=0"),
    "torch_worker_oom_killed": ("torch", tb("RuntimeError: DataLoader worker (pid 8102) is killed by signal: Killed."),
        "out-of-memory killer", "prefetch_factor"),
    "torch_cuda_home": ("torch", tb("OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA "
                                    "install root.", 'File "setup.py", line 24, in <module>', "    CUDAExtension("),
        "not nvcc", "CUDA_HOME=/usr/local/cuda"),
    "torch_ext_cuda_mismatch": ("torch", [
        "Traceback (most recent call last):", '  File "setup.py", line 30, in <module>', "    setup(",
        "RuntimeError:", "The detected CUDA version (12.4) mismatches the version that was used to compile",
        "PyTorch (11.8). Please make sure to use the same CUDA versions."],
        "another CUDA version", "torch.version.cuda"),
    "torch_store_port_in_use": ("torch", tb(
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
        "The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use). The server "
        "socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already in use)."),
        "another job on this host", "--master_port"),
    "tf_devices_initialized": ("tf", tb("RuntimeError: Physical devices cannot be modified after being initialized"),
        "work only before TensorFlow initialises", "TF_FORCE_GPU_ALLOW_GROWTH=true"),
    "tf_blas_launch": ("tf", tb("tensorflow.python.framework.errors_impl.InternalError: Blas GEMM launch failed : "
                                "a.shape=(32, 116032), b.shape=(116032, 256), m=32, n=256, k=116032"),
        "reserves nearly the whole GPU", "set_memory_growth"),
    "tf_dst_tensor": ("tf", tb("tensorflow.python.framework.errors_impl.InternalError: Dst tensor is not initialized."),
        "did not fit", "tf.data"),
    "jax_plugin_error": ("jax", [
        "ERROR:2026-05-14 18:46:33,572:jax._src.xla_bridge:487: Jax plugin configuration error: Exception when "
        "calling jax_plugins.xla_cuda12.initialize()", "Traceback (most recent call last):",
        '  File "/home/u/venv/lib/python3.11/site-packages/jax/_src/xla_bridge.py", line 485, in discover_pjrt_plugins',
        "    plugin_module.initialize()",
        "RuntimeError: jaxlib/cuda/versions_helpers.cc:113: operation cuInit(0) failed: CUDA_ERROR_NO_DEVICE"],
        "JAX logs it and goes on", "JAX_PLATFORMS=cuda"),
    "jax_no_visible_gpu": ("jax", tb("jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: No visible GPU "
                                     "devices."), "driver showed it no GPU", "--gpus all"),
    "triton_gpu_too_old": ("torch", tb(
        "RuntimeError: Found NVIDIA GeForce GTX 1080 Ti which is too old to be supported by the triton GPU compiler, "
        "which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is "
        "of CUDA capability 6.1"), "needs compute capability 7.0", "TORCHDYNAMO_DISABLE=1"),
    "triton_libcuda_missing": ("torch", tb("AssertionError: libcuda.so cannot found!"), "through `ldconfig -p`",
        "TRITON_LIBCUDA_PATH"),
    "triton_ld_lcuda": ("torch", ["/usr/bin/ld: cannot find -lcuda", "collect2: error: ld returned 1 exit status"] +
        tb("subprocess.CalledProcessError: Command '['/usr/bin/gcc', '/tmp/tmpq1/main.c', '-O3', '-lcuda', '-o', "
           "'/tmp/tmpq1/cuda_utils.so']' returned non-zero exit status 1."),
        "links the launcher it compiles with -lcuda", "ldconfig"),
    "cudnn_sublib_loading": ("torch", tb("RuntimeError: CUDNN_BACKEND_TENSOR_DESCRIPTOR cudnnFinalize failed "
                                         "ptrDesc->finalize() cudnn_status: CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED"),
        "loads its parts", "whole cuDNN of one version"),
    "cudnn_sublib_version": ("torch", tb("RuntimeError: cuDNN error: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"),
        "checks that every part", "LD_LIBRARY_PATH"),
    "cuda_stub_library": ("c", ["CUDA API Error at line 28: CUDA driver is a stub library"], "lib64/stubs",
        "LIBRARY_PATH", [("lib", {"path": "/usr/local/cuda-12.4/targets/x86_64-linux/lib/stubs/libcuda.so",
                                  "soname": "libcuda.so.1", "family": "driver"})]),
    "cuda_stub_library_name": ("c", tb("numba.cuda.cudadrv.driver.CudaAPIError: [34] Call to cuInit results in "
                                       "CUDA_ERROR_STUB_LIBRARY"), "found before the driver", "for linking only"),
    "cuda_jit_compiler_missing": ("torch", tb("RuntimeError: CUDA error: PTX JIT compiler library not found"),
        "libnvidia-ptxjitcompiler.so.1", "NVIDIA_DRIVER_CAPABILITIES"),
    "cuda_invalid_device_function": ("torch", tb("RuntimeError: CUDA error: invalid device function"),
        "a build made on another machine", "TORCH_CUDA_ARCH_LIST"),
    "cuda_stream_capturing": ("torch", tb("RuntimeError: CUDA error: operation not permitted when stream is capturing"),
        "records a CUDA graph", "warm up outside the capture"),
    "cuda_initialization_error": ("cupy", tb("cupy_backends.cuda.api.runtime.CUDARuntimeError: "
                                             "cudaErrorInitializationError: initialization error"),
        "used after fork", "set_start_method"),
    "numba_fork": ("c", tb("numba.cuda.cudadrv.error.CudaDriverError: CUDA initialized before forking"),
        "refuses CUDA in a child", "spawn"),
    "nvcc_unsupported_arch": ("torch", ["nvcc fatal   : Unsupported gpu architecture 'compute_89'",
                                        "ninja: build stopped: subcommand failed."] +
        tb("RuntimeError: Error compiling objects for extension"), "does not know the architecture",
        "newer CUDA toolkit"),
    "cuda_invalid_configuration": ("torch", tb("RuntimeError: CUDA error: invalid configuration argument"),
        "out of range", "smaller batch"),
    # PyTorch 2.x: a DataLoader worker's shared-memory file, re-raised wrapped in the main process
    "torch_shm_alloc": ("torch", tb("RuntimeError: Caught RuntimeError in DataLoader worker process 0.") + [
        "Original Traceback (most recent call last):",
        '  File "/home/u/venv/lib/python3.11/site-packages/torch/utils/data/_utils/worker.py", line 358, in '
        "_worker_loop", "    data = fetcher.fetch(index)",
        "RuntimeError: unable to allocate shared memory(shm) for file </torch_1496_1757594141_0>: Resource "
        "temporarily unavailable (11)"],
        "make room in /dev/shm", "--shm-size"),
}


class Proc:
    def __init__(self, pid, fw):
        self.pid, self.ev, self.t = pid, [], 0.0
        exe = "/home/u/bin/app" if fw == "c" else "/usr/bin/python3.11"
        argv = ["/home/u/bin/app"] if fw == "c" else ["python3", "train.py"]
        self.add("start", convguard="0.1.0", ppid=pid - 1, exe=exe, argv=argv, cwd="/home/u/proj", host=HOST,
                 rank=None, uid=1000, wall_time=1790100000 + (pid % 1000) * 10, wall_time_ns=0, env={},
                 settings={"fallback": False, "workspace_limit_mb": -1, "reserve_mb": 0}, max_mb=256,
                 crash_unwinder="glibc")

    def add(self, ev_name, **f):
        self.t += 0.01
        e = {"ev": ev_name, "seq": len(self.ev), "t": round(self.t, 6), "pid": self.pid, "tid": self.pid}
        e.update(f)
        self.ev.append(e)


def lib(p, path, family, soname=None, **f):
    p.add("lib", path=path, soname=soname or os.path.basename(path), family=family, size=1000000, mtime=1780000000,
          inode=100 + len(p.ev), dev=2049, via="(startup)", **f)


def write_case(folder, name, pid, fw, lines, extra=(), gpu=True, status=1):
    p = Proc(pid, fw)
    for path in LIBS[fw]:
        lib(p, path, "other")
    if gpu:
        cudart = SP + "/nvidia/cuda_runtime/lib/libcudart.so.12" if fw != "c" else "/usr/local/cuda/lib64/libcudart.so.12"
        lib(p, cudart, "cudart", version=12040)
        lib(p, "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "driver", version=12040)
    for kind, f in extra:
        if kind == "lib":
            lib(p, f["path"], f["family"], soname=f["soname"])
        else:
            p.add(kind, **f)
    libs = sum(1 for e in p.ev if e["ev"] == "lib")
    p.add("exit", libs=libs, failures=sum(1 for e in p.ev if e["ev"] == "driver_log"), load_failures_unresolved=0,
          calls={}, fails={}, dlopen_repeats=0, events_dropped=0, frameworks=FRAMEWORKS[fw])
    with open(os.path.join(folder, "%s-%d.jsonl" % (HOST, pid)) if name is None else
              os.path.join(folder, name + ".jsonl"), "w") as out:
        for e in p.ev:
            out.write(json.dumps(e, separators=(",", ":")) + "\n")
    body = ("\n".join(lines) + "\n").encode()
    start = p.ev[0]["wall_time"] - 1
    hdr = {"convguard_capture": 1, "host": HOST, "pid": pid - 1, "child": pid, "start": start, "end": start + 5,
           "mode": "pipe", "bytes": len(body), "status": status, "passing_stopped": False, "handed_over": False,
           "sections": [{"name": "tail", "bytes": len(body), "cut": False}]}
    stem = "%s-%d" % (HOST, pid - 1) if name is None else name
    with open(os.path.join(folder, stem + ".stderr"), "wb") as out:
        out.write(json.dumps(hdr, separators=(",", ":")).encode() + b"\n" + body)


def exit_status(kind):
    """the job's status: a warning's program ran on (0: the report says the warning, not a failure);
    every other message is what a failed job printed (1)"""
    return 0 if kind == "warn" else 1


def main():
    rows = messages()
    for d in os.listdir(HERE):
        if d.startswith("p-"):
            for f in os.listdir(os.path.join(HERE, d)):
                os.remove(os.path.join(HERE, d, f))
            os.rmdir(os.path.join(HERE, d))
    pid = 8000
    for mid, case in CASES.items():
        fw, lines, cause, fix = case[:4]
        extra = case[4] if len(case) > 4 else ()
        kind, source = rows[mid]
        d = os.path.join(HERE, "p-" + mid.replace("_", "-"))
        os.makedirs(d)
        pid += 2
        write_case(d, None, pid, fw, lines, extra, status=exit_status(kind))
        rule, cause = RULE_OF_ID.get(mid, (RULE_OF_KIND[kind], cause))
        with open(os.path.join(d, "expect"), "w") as out:
            out.write("row: -\nwhat: %s\nsource: printed\nmessage: %s\nthread: %s\nrule: %s\ncause: %s\nfix: %s\n"
                      % (lines[-1][:160].replace("\n", " "), mid, source, rule, cause, fix))
    # one trace per printed_* rule for t_report_rules.sh (the first case of its kind)
    traces = os.path.join(ROOT, "tests/report/traces")
    done = set()
    for mid, case in CASES.items():
        rule = RULE_OF_KIND[rows[mid][0]]
        if rule in done or mid in RULE_OF_ID:
            continue
        done.add(rule)
        pid += 2
        write_case(traces, rule, pid, case[0], case[1], case[4] if len(case) > 4 else (),
                   status=exit_status(rows[mid][0]))


if __name__ == "__main__":
    main()
