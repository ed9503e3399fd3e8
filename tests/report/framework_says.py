#!/usr/bin/env python3
"""framework_says.py - a stand-in for a framework that fails: it drives the test
doubles into one failure (a client program of tests/clients, run as a child, does
the CUDA/cuDNN part the way the framework would), then prints the framework's log
lines and raises the framework's exception, with their exact texts, as PyTorch,
TensorFlow and JAX print them.  tests/report/t_capture_causes.sh runs each
scenario under `convguard run` and checks the cause the report gives.

usage: framework_says.py BUILD_DIR SCENARIO      (SCENARIO: see SCENARIOS; `list` lists them)
"""
import os
import subprocess
import sys

# name: (client, environment, log lines, exception class, exception text)
#   client: "torch" (PLT-linked, legacy convolution path), "tf" (dlopen + dlsym),
#   "graph" (cuDNN's graph API, as cudnn-frontend), "jax" (driver entry points), "pool" (XLA's
#   start: a pool of CG_POOL_FRACTION of the GPU, then GPU code loaded), "cudnn8" (TensorFlow 2 with
#   a cuDNN 8 whose convolution library is missing)
#   environment: CGTEST_* settings of the doubles; "nodriver" / "nocudnn" leave that
#   library's folder out of the search path.
GLOG = "E0000 00:00:1796166831.068002   11218 "
SCENARIOS = {
    "torch_no_engine": ("graph", {"CGTEST_PLAN_RULES": "0:notsup,1:notsup,2:notsup,3:notsup"}, [],
                        "RuntimeError", "GET was unable to find an engine to execute this computation"),
    "torch_no_valid_algo": ("torch", {"CGTEST_GPU_HELD_MB": "1000", "CGTEST_ALGO_WS_MB": "32,64,512"}, [],
                            "RuntimeError", "Unable to find a valid cuDNN algorithm to run convolution"),
    "torch_cudnn_status": ("tf", {"nodriver": "1"}, [],
                           "RuntimeError", "cuDNN error: CUDNN_STATUS_NOT_INITIALIZED"),
    "torch_oom": ("torch", {"CGTEST_GPU_HELD_MB": "1000"}, [],
                  "torch.OutOfMemoryError",
                  "CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 1.00 GiB of which "
                  "16.00 MiB is free. Process 4242 has 1000.00 MiB memory in use."),
    "torch_oom_limit": ("pool", {"CGTEST_CODE_MB": "16", "CG_POOL_FRACTION": "0.25"}, [],
                        "torch.OutOfMemoryError",
                        "CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 1.00 GiB of "
                        "which 760.00 MiB is free. Of the allocated memory 256.00 MiB is allocated by PyTorch, and "
                        "this process has a memory allocated limit of 256.00 MiB."),
    "tf_conv_algo": ("tf", {"CGTEST_GPU_HELD_MB": "1020"},
                     [GLOG + "cuda_dnn.cc:535] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR",
                      GLOG + "cuda_dnn.cc:539] Memory usage: 4194304 bytes free, 1073741824 bytes total."],
                     "tensorflow.python.framework.errors_impl.UnknownError",
                     "{{function_node __wrapped__Conv2D_device_/job:localhost/replica:0/task:0/device:GPU:0}} "
                     "Failed to get convolution algorithm. This is probably because cuDNN failed to initialize, so "
                     "try looking to see if a warning log message was printed above. [Op:Conv2D]"),
    "tf_cuinit": ("tf", {"nodriver": "1"},
                  [GLOG + "cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: "
                   "UNKNOWN ERROR (303)"], None, None),
    "tf_cudnn_handle": ("tf", {"CGTEST_TF_PREALLOC_MB": "1018"},
                        [GLOG + "cuda_dnn.cc:535] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR"],
                        "tensorflow.python.framework.errors_impl.UnknownError",
                        "Failed to get convolution algorithm. This is probably because cuDNN failed to initialize, "
                        "so try looking to see if a warning log message was printed above. [Op:Conv2D]"),
    "tf_dnn_not_found": ("cudnn8", {}, [],
                         "tensorflow.python.framework.errors_impl.UnimplementedError",
                         "DNN library is not found. [Op:Conv2D]"),
    "jax_dnn_init": ("pool", {"CGTEST_CODE_MB": "16", "CG_POOL_FRACTION": "0.995"},
                     [GLOG + "cuda_dnn.cc:535] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR"],
                     "jaxlib.xla_extension.XlaRuntimeError",
                     "FAILED_PRECONDITION: DNN library initialization failed. Look at the errors above for more "
                     "details."),
    "jax_resource_exhausted": ("pool", {"CGTEST_CODE_MB": "16", "CG_POOL_FRACTION": "0.75"}, [],
                               "jax.errors.JaxRuntimeError",
                               "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 2147483648 bytes."),
    "xla_hlo_config": ("graph", {"CGTEST_EXEC_ALLOC_MB": "2048"},
                       [GLOG + "gpu_conv_algorithm_picker.cc:512] Could not get config for HLO: %cudnn-conv = "
                        "(f32[8,64,56,56]{3,2,1,0}, u8[0]{0}) custom-call(...)"],
                       "jax.errors.JaxRuntimeError", "INTERNAL: Autotuning failed for HLO: %cudnn-conv"),
    "xla_cudnn_version": ("torch", {},
                          [GLOG + "cuda_dnn.cc:454] Loaded runtime CuDNN library: 9.1.0 but source was compiled "
                           "with: 9.8.0.  CuDNN library needs to have matching major version and equal or higher "
                           "minor version. If using a binary install, upgrade your CuDNN library.  If building from "
                           "sources, make sure the library loaded at runtime is compatible with the version "
                           "specified during compile configuration."],
                          "jax.errors.JaxRuntimeError",
                          "FAILED_PRECONDITION: DNN library initialization failed. Look at the errors above for "
                          "more details."),
    "torch_cudnn_version": ("torch", {}, [], "RuntimeError",
                            "cuDNN version incompatibility: PyTorch was compiled  against (9, 8, 0) but found "
                            "runtime version (9, 1, 0). PyTorch already comes bundled with cuDNN. One option to "
                            "resolving this error is to ensure PyTorch can find the bundled cuDNN."),
}


class FrameworkError(Exception):
    pass


def run_client(build, client, env):
    d = os.path.join(build, "doubles")
    folders = {"cuda": d + "/cuda", "cudart": d + "/cudart", "cudnn": d + "/cudnn9"}
    if env.pop("nodriver", None):
        del folders["cuda"]
    if env.pop("nocudnn", None):
        del folders["cudnn"]
    e = dict(os.environ)
    e.update(env)
    e["LD_LIBRARY_PATH"] = ":".join(folders.values())
    c = os.path.join(build, "clients")
    if client == "torch":
        cmd = [c + "/client_torchlike", c + "/ext_torchlike.so"]
    elif client == "tf":
        cmd = [c + "/client_tflike"]
    elif client == "graph":
        e["CLIENT_CUDNN"] = d + "/cudnn9/libcudnn.so.9"
        cmd = [c + "/client_graph", "conv"]
    elif client == "cudnn8":  # TensorFlow with a cuDNN 8 that lacks its convolution part
        e["LD_LIBRARY_PATH"] = d + "/cudnn8-broken:" + d + "/cuda"
        cmd = [c + "/client_cudnn8"]
    elif client == "pool":
        e["LD_LIBRARY_PATH"] = d + "/cuda:" + d + "/nvml"
        cmd = [c + "/client_memroutes", "pool"]
    else:
        cmd = [c + "/client_jaxlike", c + "/plugin_jaxlike.so"]
    subprocess.run(cmd, env=e, stdout=subprocess.DEVNULL)


def main():
    if len(sys.argv) > 1 and sys.argv[-1] == "list":
        print("\n".join(SCENARIOS))
        return 0
    build, name = sys.argv[1], sys.argv[2]
    client, env, log, exc, text = SCENARIOS[name]
    run_client(build, client, dict(env))
    for line in log:
        print(line, file=sys.stderr, flush=True)
    if exc:
        # the exception's class name as Python prints it in the traceback's last line
        FrameworkError.__module__ = exc.rpartition(".")[0] or "builtins"
        FrameworkError.__qualname__ = FrameworkError.__name__ = exc.rpartition(".")[2]
        raise FrameworkError(text)
    return 1


if __name__ == "__main__":
    sys.exit(main())
