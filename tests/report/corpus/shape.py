#!/usr/bin/env python3
"""tests/report/corpus/shape.py - writes the corpus cases that neither the
test doubles nor this machine can reproduce (an old CUDA on a new GPU, a
kernel module that differs from libcuda, a container started without GPUs,
MIG, a second process on the GPU...).  Each trace has the events, fields and
order the shim writes (docs/trace-format.md), with the numbers, paths and
versions of the public report in real-world-failures.md (row N): the shape a
real trace of that failure has.  Run it to rewrite them:

    python3 tests/report/corpus/shape.py

Not run by `make accuracy` or CI: the cases are committed files."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
GiB, MiB = 1 << 30, 1 << 20
SP = "/home/u/venv/lib/python3.10/site-packages"


class Proc:
    def __init__(self, pid, argv, exe="/usr/bin/python3.10", env=None, host="gpu1", ppid=1, uid=1000, **start):
        self.pid, self.ev, self.t = pid, [], 0.0
        e = {"convguard": "0.1.0", "ppid": ppid, "exe": exe, "argv": argv, "cwd": "/home/u/proj", "host": host,
             "rank": None, "uid": uid, "wall_time": 1790000000 + pid % 1000, "wall_time_ns": 0,
             "env": env or {}, "settings": {"fallback": False, "workspace_limit_mb": -1, "reserve_mb": 0},
             "max_mb": 256, "crash_unwinder": "glibc"}
        e.update(start)
        self.add("start", **e)

    def add(self, ev_name, **f):
        self.t += 0.01
        e = {"ev": ev_name, "seq": len(self.ev), "t": round(self.t, 6), "pid": self.pid, "tid": self.pid}
        e.update(f)
        self.ev.append(e)
        return e

    def lib(self, path, family, soname=None, via="(startup)", **f):
        soname = soname or os.path.basename(path)
        return self.add("lib", path=path, soname=soname, family=family, size=1000000, mtime=1780000000,
                        inode=100 + len(self.ev), dev=2049, **{k: v for k, v in f.items() if v is not None}, via=via)

    def dlopen_ok(self, name, path, caller, **f):
        return self.add("dlopen", name=name, flags="RTLD_NOW|RTLD_LOCAL", caller=caller, caller_offset="0x1234",
                        ok=True, path=path, **f)

    def dlopen_fail(self, name, error, caller, candidates, kind="absent", **f):
        stem = os.path.basename(name)
        stem = stem[:stem.index(".so") + 3] if ".so" in stem else stem
        return self.add("dlopen", name=name, flags="RTLD_NOW|RTLD_LOCAL", caller=caller, caller_offset="0x1234",
                        ok=False, error=error, stem=stem, error_kind=kind, candidates=candidates, **f)

    def exit(self, **f):
        e = {"libs": sum(1 for x in self.ev if x["ev"] == "lib"), "failures": 0, "load_failures_unresolved": 0,
             "calls": {}, "fails": {}, "dlopen_repeats": 0, "events_dropped": 0}
        e.update(f)
        self.add("exit", **e)

    def write(self, folder):
        with open(os.path.join(folder, "%s-%d.jsonl" % (self.ev[0]["host"], self.pid)), "w") as out:
            for e in self.ev:
                out.write(json.dumps(e, separators=(",", ":")) + "\n")


def mem(free, total, src="driver"):
    return {"free": free, "total": total, "source": src}


def cand(d, source, files=(), **f):
    c = {"dir": d, "source": source, "files": [{"name": n, "version": n.split(".so.")[1] if ".so." in n else ""}
                                              for n in files]}
    c.update(f)
    return c


def case(name, expect, *procs):
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        if f.endswith(".jsonl"):
            os.remove(os.path.join(d, f))
    for p in procs:
        p.write(d)
    with open(os.path.join(d, "expect"), "w") as out:
        out.write("".join("%s: %s\n" % kv for kv in expect))


def torch_libs(p, cudnn_dir, cudnn_ver, cudart="%s/nvidia/cuda_runtime/lib/libcudart.so.11.0" % SP, rt=11080,
               major=8, drv=12020):
    tc = SP + "/torch/lib/libtorch_cuda.so"
    p.lib(cudart, "cudart", soname="libcudart.so.%d.0" % (rt // 1000) if rt < 12000 else "libcudart.so.12",
          version=rt, needed_by=tc)
    p.lib(cudnn_dir + "/libcudnn.so.%d" % major, "cudnn", version=cudnn_ver, version_source="wheel", needed_by=tc)
    p.dlopen_ok("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", cudart)
    p.lib("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "driver", version=drv, file_version="535.104.05",
          via="libcuda.so.1")
    return tc


TF_FW = SP + "/tensorflow/libtensorflow_framework.so.2"
JAX_PLUGIN = SP + "/jax_plugins/xla_cuda12/xla_cuda_plugin.so"

# ---- row 2: cuDNN's runtime fusion asks for the unversioned libnvrtc.so
p = Proc(5102, ["python3", "train.py"])
cd = SP + "/nvidia/cudnn/lib"
torch_libs(p, cd, 8700)
p.dlopen_ok("libcudnn_cnn_infer.so.8", cd + "/libcudnn_cnn_infer.so.8", cd + "/libcudnn.so.8")
p.lib(cd + "/libcudnn_cnn_infer.so.8", "cudnn", version=8700, version_source="wheel", via="libcudnn_cnn_infer.so.8")
p.dlopen_fail("libnvrtc.so", "libnvrtc.so: cannot open shared object file: No such file or directory",
              cd + "/libcudnn_cnn_infer.so.8",
              [cand(cd, "RUNPATH", ["libcudnn_cnn_infer.so.8", "libcudnn.so.8"][:0]),
               cand("/etc/ld.so.cache", "ld.so.cache"),
               cand("/lib/x86_64-linux-gnu", "default"), cand("/usr/lib/x86_64-linux-gnu", "default"),
               cand(SP + "/nvidia/cuda_nvrtc/lib", "wheel", ["libnvrtc.so.11.2", "libnvrtc-builtins.so.11.8"],
                    searched=False)],
              caller_runpath="$ORIGIN")
p.add("graph_finalize_failed", desc_type="CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR", desc=7, status=3000,
      status_name="CUDNN_STATUS_NOT_SUPPORTED", reason=None)
p.exit(failures=2, load_failures_unresolved=1)
case("r02-nvrtc-unversioned", [
    ("row", "2"), ("what", "PyTorch 2.0 cu118: cuDNN's runtime fusion dlopens libnvrtc.so; the wheel ships only libnvrtc.so.11.2"),
    ("source", "shaped"), ("rule", "load_cuda_lib_failed"),
    ("cause", "libnvrtc.so (asked for by libcudnn_cnn_infer.so.8) | is in no folder"),
    ("fix", "ln -s | libnvrtc.so.11.2")], p)

# ---- row 3: a part missing from the wheel found by bare name in the system's newer cuDNN
p = Proc(5103, ["python3", "-c", "import torch; torch.nn.Conv2d(3,8,3).cuda()(torch.rand(1,3,8,8).cuda())"])
cd = SP + "/nvidia/cudnn/lib"
tc = torch_libs(p, cd, 92000, cudart=SP + "/nvidia/cuda_runtime/lib/libcudart.so.13", rt=13000, major=9, drv=13000)
p.dlopen_ok("libcudnn_graph.so.9", cd + "/libcudnn_graph.so.9", cd + "/libcudnn.so.9",
            benign_probes=["libcudnn_graph.so.9.20.0", "libcudnn_graph.so.9.20"])
p.lib(cd + "/libcudnn_graph.so.9", "cudnn", version=92000, cuda_built_for=13000, via="libcudnn_graph.so.9")
p.dlopen_ok("libcudnn_engines_runtime_compiled.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn_engines_runtime_compiled.so.9",
            cd + "/libcudnn_graph.so.9",
            benign_probes=["libcudnn_engines_runtime_compiled.so.9.20.0", "libcudnn_engines_runtime_compiled.so.9.20"])
p.lib("/usr/lib/x86_64-linux-gnu/libcudnn_engines_runtime_compiled.so.9", "cudnn", version=92100,
      version_source="file_name", file_version="9.21.0", via="libcudnn_engines_runtime_compiled.so.9")
p.add("verdict", kind="cudnn_sublib_mismatch", detail="a cuDNN sub-library was loaded from another directory than "
      "libcudnn.so itself (LD_LIBRARY_PATH is searched before cuDNN's own RUNPATH)", dispatcher=cd + "/libcudnn.so.9",
      sublib="/usr/lib/x86_64-linux-gnu/libcudnn_engines_runtime_compiled.so.9", when="load")
p.add("graph_finalize_failed", desc_type="CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR", desc=12, status=1002,
      status_name="CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", reason="cudnnFinalize failed")
p.exit(failures=1)
case("r03-part-from-system-cudnn", [
    ("row", "3"), ("what", "PyTorch + nvidia-cudnn-cu13 9.20: a part missing from the wheel came from the system's 9.21"),
    ("source", "shaped"), ("rule", "cudnn_sublib_mismatch"),
    ("cause", "(9.20.0) | (9.21.0) | libcudnn_engines_runtime_compiled.so.9 | system folder"),
    ("fix", "put every libcudnn*.so file of one version in"), ("symptom", "PyTorch:")], p)

# ---- row 9: TF 2.16 tensorflow[and-cuda]: the pip CUDA libraries are not on TF's search path
p = Proc(5109, ["python3", "-c", "import tensorflow as tf; print(tf.config.list_physical_devices('GPU'))"])
p.dlopen_ok("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", TF_FW)
p.lib("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "driver", version=12040, file_version="550.54.14", via="libcuda.so.1")
p.dlopen_fail("libcudart.so.12", "libcudart.so.12: cannot open shared object file: No such file or directory", TF_FW,
              [cand(SP + "/tensorflow", "RUNPATH"), cand("/etc/ld.so.cache", "ld.so.cache"),
               cand("/lib/x86_64-linux-gnu", "default"), cand("/usr/lib/x86_64-linux-gnu", "default"),
               cand(SP + "/nvidia/cuda_runtime/lib", "wheel", ["libcudart.so.12"], searched=False)],
              caller_runpath="$ORIGIN:$ORIGIN/..")
p.dlopen_fail("libcudnn.so.8", "libcudnn.so.8: cannot open shared object file: No such file or directory", TF_FW,
              [cand(SP + "/tensorflow", "RUNPATH"), cand("/etc/ld.so.cache", "ld.so.cache"),
               cand(SP + "/nvidia/cudnn/lib", "wheel", ["libcudnn.so.8"], searched=False)],
              caller_runpath="$ORIGIN:$ORIGIN/..")
p.exit(failures=2, load_failures_unresolved=2)
case("r09-tf-pip-libs-not-found", [
    ("row", "9"), ("what", "TF 2.16 tensorflow[and-cuda]: GPU not listed, the pip nvidia-* libraries not found"),
    ("source", "shaped"), ("rule", "load_cudart_failed"),
    ("cause", "libcudart.so.12 is in | a pip wheel's folder"),
    ("fix", "export LD_LIBRARY_PATH=%s/nvidia/cuda_runtime/lib" % SP), ("symptom", "TensorFlow:")], p)

# ---- row 10 (Linux's form of it): a dependency of a part is missing (zlib for cuDNN >= 8.3)
p = Proc(5110, ["python3", "infer.py"])
cd = "/usr/local/cuda/lib64"
p.dlopen_ok("libcudnn.so.8", cd + "/libcudnn.so.8", SP + "/cupy_backends/cuda/libs/cudnn.so")
p.lib(cd + "/libcudnn.so.8", "cudnn", version=8302, version_source="file_name", file_version="8.3.2",
      via="libcudnn.so.8")
p.dlopen_fail("libcudnn_ops_infer.so.8", "libz.so.1: cannot open shared object file: No such file or directory",
              cd + "/libcudnn.so.8", [cand(cd, "RUNPATH", ["libcudnn_ops_infer.so.8", "libcudnn_ops_infer.so.8.3.2"])],
              kind="dependency_absent", error_file="libz.so.1", caller_runpath="$ORIGIN")
p.add("cudnn_handle", fn="cudnnCreate", status=1, status_name="CUDNN_STATUS_NOT_INITIALIZED", ok=False, reason=None,
      driver="loaded", likely_cause={"kind": "cudnn_library", "detail": "cuDNN could not load its parts", "seq": None})
p.exit(failures=2, load_failures_unresolved=1)
case("r10-zlib-missing", [
    ("row", "10"), ("what", "cuDNN >= 8.3 needs zlib (row 10 is Windows' zlibwapi.dll; this is the same class on Linux)"),
    ("source", "shaped"), ("rule", "load_cudnn_sublib_failed"),
    ("cause", "a library it needs is missing: libz.so.1"), ("fix", "zlib1g")], p)

# ---- row 11: TF's allocator took nearly all memory before cuDNN made its handle
p = Proc(5111, ["python3", "train_cnn.py"], env={"LD_LIBRARY_PATH": "/usr/local/cuda-10.0/lib64"})
p.dlopen_ok("libcudart.so.10.0", "/usr/local/cuda-10.0/lib64/libcudart.so.10.0", TF_FW)
p.lib("/usr/local/cuda-10.0/lib64/libcudart.so.10.0", "cudart", version=10000, via="libcudart.so.10.0")
p.dlopen_ok("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", TF_FW)
p.lib("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "driver", version=10020, file_version="440.33.01", via="libcuda.so.1")
p.dlopen_ok("libcudnn.so.7", "/usr/local/cuda-10.0/lib64/libcudnn.so.7", TF_FW)
p.lib("/usr/local/cuda-10.0/lib64/libcudnn.so.7", "cudnn", version=7605, version_source="file_name",
      file_version="7.6.5", via="libcudnn.so.7")
p.add("cudnn_handle", fn="cudnnCreate", status=4, status_name="CUDNN_STATUS_INTERNAL_ERROR", ok=False, reason=None,
      device_count=1, driver="loaded", compute_capability="7.5", mem=mem(210 * MiB, 8 * GiB),
      gpu_mem={"live": 7600 * MiB, "largest_ok": 7400 * MiB}, holders=[{"pid": 5111, "name": "python3",
      "bytes": 7900 * MiB, "self": True}], nvml="ok",
      likely_cause={"kind": "out_of_memory", "detail": "210 MiB free", "seq": None})
p.exit(failures=1)
case("r11-tf-allocator-before-handle", [
    ("row", "11"), ("what", "TF 1.13-2.1 on RTX 20xx: Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR"),
    ("source", "shaped"), ("rule", "own_pool_took_memory"),
    ("cause", "this process holds | cudnnCreate failed"), ("fix", "set_memory_growth | TF_FORCE_GPU_ALLOW_GROWTH=true"),
    ("symptom", "TensorFlow:")], p)

# ---- row 12: JAX on a 2 GB GPU, 90% preallocated
p = Proc(5112, ["python3", "cnn_jax.py"])
p.dlopen_ok("libcudnn.so.8", SP + "/nvidia/cudnn/lib/libcudnn.so.8", JAX_PLUGIN)
p.lib(SP + "/nvidia/cudnn/lib/libcudnn.so.8", "cudnn", version=8906, version_source="wheel", via="libcudnn.so.8")
p.add("cudnn_handle", fn="cudnnCreate", status=4, status_name="CUDNN_STATUS_INTERNAL_ERROR", ok=False, reason=None,
      device_count=1, driver="loaded", compute_capability="6.1", mem=mem(52 * MiB, 2048 * MiB),
      gpu_mem={"live": 1843 * MiB, "largest_ok": 1843 * MiB}, holders=None, nvml="ok",
      likely_cause={"kind": "out_of_memory", "detail": "52 MiB free", "seq": None})
p.exit(failures=1)
case("r12-jax-prealloc-small-gpu", [
    ("row", "12"), ("what", "JAX, 2 GB GPU: 90% preallocation left too little for cuDNN"),
    ("source", "shaped"), ("rule", "own_pool_took_memory"),
    ("cause", "1.8 GiB in one allocation"), ("fix", "XLA_PYTHON_CLIENT_MEM_FRACTION"), ("symptom", "JAX:")], p)

# ---- row 13: several JAX processes on one GPU, each preallocating 75%
a = Proc(5201, ["python3", "worker.py", "--id", "0"])
a.dlopen_ok("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", JAX_PLUGIN)
a.lib("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "driver", version=12040, via="libcuda.so.1")
a.exit(gpu_mem={"live": 60 * GiB, "largest_ok": 60 * GiB})
b = Proc(5202, ["python3", "worker.py", "--id", "1"])
b.dlopen_ok("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", JAX_PLUGIN)
b.lib("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "driver", version=12040, via="libcuda.so.1")
b.add("alloc_failed", fn="cuMemAlloc_v2", route="dlsym", bytes=60 * GiB, status=2,
      status_name="CUDA_ERROR_OUT_OF_MEMORY", mem=mem(19 * GiB, 80 * GiB), exceeds_free=True, live=0, largest_ok=0,
      caller=JAX_PLUGIN, caller_offset="0x9a3c1", device_count=1, driver="loaded", compute_capability="8.0",
      holders=[{"pid": 5201, "name": "python3", "bytes": 61 * GiB}], nvml="ok", nvml_device="pci:0000:07:00.0")
b.exit(failures=1)
case("r13-jax-processes-share-gpu", [
    ("row", "13"), ("what", "JAX, several processes on one GPU: each preallocates 75%"),
    ("source", "shaped"), ("rule", "alloc_memory_held"),
    ("cause", "process 5201 (python3) holds"), ("fix", "XLA_PYTHON_CLIENT_PREALLOCATE=false"), ("symptom", "JAX:")], a, b)

# ---- row 14: TF and JAX in one process, TF grabbed the memory
p = Proc(5114, ["python3", "train_flax.py"])
p.dlopen_ok("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", TF_FW)
p.lib("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "driver", version=11020, via="libcuda.so.1")
p.dlopen_ok("libcudnn.so.8", "/usr/local/cuda/lib64/libcudnn.so.8", SP + "/jaxlib/xla_extension.so")
p.lib("/usr/local/cuda/lib64/libcudnn.so.8", "cudnn", version=8100, via="libcudnn.so.8")
p.add("cudnn_handle", fn="cudnnCreate", status=4, status_name="CUDNN_STATUS_INTERNAL_ERROR", ok=False, reason=None,
      device_count=1, driver="loaded", compute_capability="7.0", mem=mem(45 * MiB, 16 * GiB),
      gpu_mem={"live": 15 * GiB, "largest_ok": 15 * GiB}, holders=[{"pid": 5114, "name": "python3",
      "bytes": 15800 * MiB, "self": True}], nvml="ok",
      likely_cause={"kind": "out_of_memory", "detail": "45 MiB free", "seq": None})
p.exit(failures=1)
case("r14-tf-and-jax-one-process", [
    ("row", "14"), ("what", "TF + JAX in one process: CUBLAS_STATUS_NOT_INITIALIZED / DNN library is not found"),
    ("source", "shaped"), ("rule", "frameworks_share_gpu"),
    ("cause", "TensorFlow and JAX"), ("fix", "tf.config.set_visible_devices([], 'GPU')")], p)

# ---- row 15: JAX on GB200, CUBIN load with no headroom
p = Proc(5115, ["python3", "-m", "marin.train"], env={"XLA_PYTHON_CLIENT_MEM_FRACTION": "0.97"})
p.dlopen_ok("libcuda.so.1", "/usr/lib/aarch64-linux-gnu/libcuda.so.1", JAX_PLUGIN)
p.lib("/usr/lib/aarch64-linux-gnu/libcuda.so.1", "driver", version=12080, via="libcuda.so.1")
p.add("code_load_failed", fn="cuModuleLoadData", status=1, status_name="CUDA_ERROR_INVALID_VALUE", caller=JAX_PLUGIN,
      caller_offset="0x12f00", mem=mem(58 * MiB, 184 * GiB), gpu_mem={"live": 178 * GiB, "largest_ok": 178 * GiB},
      device_count=4, driver="loaded", compute_capability="10.0")
p.exit(failures=1)
case("r15-jax-cubin-no-headroom", [
    ("row", "15"), ("what", "JAX 0.10, GB200: Failed to load in-memory CUBIN ... CUDA_ERROR_INVALID_VALUE"),
    ("source", "shaped"), ("rule", "own_pool_took_memory"),
    ("cause", "CUDA_ERROR_INVALID_VALUE | 58 MiB"), ("fix", "XLA_PYTHON_CLIENT_MEM_FRACTION"), ("symptom", "JAX:")], p)

# ---- row 16: TF 1.5, CUDA 9.0 runtime, a driver for CUDA 8.0
p = Proc(5116, ["python", "train.py"], exe="/usr/bin/python3.5")
p.dlopen_ok("libcudart.so.9.0", "/usr/local/cuda-9.0/lib64/libcudart.so.9.0", TF_FW)
p.lib("/usr/local/cuda-9.0/lib64/libcudart.so.9.0", "cudart", version=9000, via="libcudart.so.9.0")
p.dlopen_ok("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", TF_FW)
p.lib("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "driver", version=8000, file_version="375.26", via="libcuda.so.1")
p.add("verdict", kind="driver_older_than_runtime", detail="the CUDA driver is older than the CUDA runtime this process "
      "loaded", driver_version="8000", runtime_version="9000", when="load")
p.add("cudnn_handle", fn="cudnnCreate", status=1, status_name="CUDNN_STATUS_NOT_INITIALIZED", ok=False, reason=None,
      driver="not_initialized", likely_cause={"kind": "driver_not_initialized", "detail": "cuInit never succeeded",
                                              "seq": None})
p.exit(failures=1)
case("r16-tf-driver-too-old", [
    ("row", "16"), ("what", "TF 1.5, CUDA 9.0, driver 375: CUDNN_STATUS_NOT_INITIALIZED ... possibly insufficient driver version"),
    ("source", "shaped"), ("rule", "driver_older_than_runtime"),
    ("cause", "up to 8.0 | CUDA 9.0 runtime"), ("fix", "upgrade the NVIDIA driver"), ("symptom", "TensorFlow:")], p)

# ---- row 17: JAX's CUDA 12 wheels on a driver for CUDA 11.4
p = Proc(5117, ["python3", "main.py"])
p.dlopen_ok("libcudart.so.12", SP + "/nvidia/cuda_runtime/lib/libcudart.so.12", JAX_PLUGIN)
p.lib(SP + "/nvidia/cuda_runtime/lib/libcudart.so.12", "cudart", version=12030, via="libcudart.so.12")
p.dlopen_ok("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", JAX_PLUGIN)
p.lib("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "driver", version=11040, file_version="470.182.03", via="libcuda.so.1")
p.add("verdict", kind="driver_older_than_runtime", detail="the CUDA driver is older than the CUDA runtime this process "
      "loaded", driver_version="11040", runtime_version="12030", when="load")
p.exit()
case("r17-jax-driver-too-old", [
    ("row", "17"), ("what", "JAX: DNN library initialization failed, Possibly insufficient driver version: 470.182.3"),
    ("source", "shaped"), ("rule", "driver_older_than_runtime"),
    ("cause", "up to 11.4 | CUDA 12.3 runtime"), ("fix", "upgrade the NVIDIA driver"), ("symptom", "JAX:")], p)

# ---- row 18: PyTorch 1.5 cu101 on an RTX 3080 Ti (sm_86)
p = Proc(5118, ["python", "train.py"], exe="/usr/bin/python3.8")
tl = "/home/u/venv/lib/python3.8/site-packages/torch/lib"
p.lib(tl + "/libcudart-80664282.so.10.1", "cudart", soname="libcudart.so.10.1", version=10010,
      needed_by=tl + "/libtorch_cuda.so")
p.lib(tl + "/libcudnn.so.7", "cudnn", version=7603, version_source="file_name", needed_by=tl + "/libtorch_cuda.so")
p.dlopen_ok("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", tl + "/libcudart-80664282.so.10.1")
p.lib("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "driver", version=11040, via="libcuda.so.1")
p.add("conv_exec_failed", fn="cudnnConvolutionForward", op="forward", algo=1,
      algo_name="CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM", workspace=8 * MiB, status=8,
      status_name="CUDNN_STATUS_EXECUTION_FAILED", reason=None, mem=mem(11 * GiB, 12 * GiB), device_count=1,
      driver="loaded", compute_capability="8.6")
p.exit(failures=1)
case("r18-torch-sm86-on-cuda101", [
    ("row", "18"), ("what", "PyTorch 1.5 cu101, RTX 3080 Ti: CUDNN_STATUS_EXECUTION_FAILED, sm_86 is not compatible"),
    ("source", "shaped"), ("rule", "gpu_arch_unsupported"),
    ("cause", "compute capability 8.6 | CUDA 10.1"), ("fix", "CUDA 11.1 or newer"), ("symptom", "PyTorch:")], p)

# ---- row 19: XLA runs an old ptxas from PATH; the driver cannot take the PTX either
j = Proc(5119, ["python3", "model.py"], env={"LD_LIBRARY_PATH": "/usr/local/cuda-11.1/lib64"})
j.dlopen_ok("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", SP + "/jaxlib/xla_extension.so")
j.lib("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "driver", version=11020, via="libcuda.so.1")
j.add("code_load_failed", fn="cuModuleLoadDataEx", status=222, status_name="CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
      caller=SP + "/jaxlib/xla_extension.so", caller_offset="0x2c1f0", mem=mem(30 * GiB, 40 * GiB),
      gpu_mem={"live": 9 * GiB, "largest_ok": 9 * GiB}, device_count=1, driver="loaded", compute_capability="8.0")
j.exit(failures=1)
pt = Proc(5120, ["/usr/local/cuda-11.1/bin/ptxas", "-arch=sm_80", "/tmp/tempfile-xla-1.ptx", "-o", "/tmp/x.cubin"],
          exe="/usr/local/cuda-11.1/bin/ptxas", ppid=5119, cuda_tool={"name": "ptxas", "toolkit_version": "11.1.105"})
pt.exit()
case("r19-ptxas-older-than-ptx", [
    ("row", "19"), ("what", "jaxlib: no kernel image is available, ptxas: Unsupported .version"),
    ("source", "shaped"), ("rule", "ptxas_mismatch"),
    ("cause", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION | /usr/local/cuda-11.1/bin/ptxas (CUDA 11.1.105"),
    ("fix", "take /usr/local/cuda-11.1/bin out of PATH | nvidia-cuda-nvcc")],
    j, pt)

# ---- row 20: an NGC TensorFlow container started without --gpus
p = Proc(5120, ["python", "-c", "import tensorflow as tf; tf.config.list_physical_devices('GPU')"], host="3f2a9c1d7e60",
         uid=0, container={"kind": "docker", "nvidia_devices": False})
p.dlopen_fail("libcuda.so.1", "libcuda.so.1: cannot open shared object file: No such file or directory", TF_FW,
              [cand("/usr/local/cuda/lib64", "LD_LIBRARY_PATH", ["libcudart.so.12"][:0]),
               cand("/etc/ld.so.cache", "ld.so.cache"), cand("/lib/x86_64-linux-gnu", "default"),
               cand("/usr/lib/x86_64-linux-gnu", "default")], caller_runpath="$ORIGIN:$ORIGIN/..")
p.exit(failures=1, load_failures_unresolved=1)
case("r20-container-without-gpus", [
    ("row", "20"), ("what", "NGC TF container: The NVIDIA Driver was not detected (started without --gpus)"),
    ("source", "shaped"), ("rule", "no_driver"),
    ("cause", "docker container | /dev/nvidia"), ("fix", "docker run --gpus all"),
    ("symptom", "TensorFlow: \"failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)\"")], p)

# ---- row 21: two MIG instances named for one process
p = Proc(5121, ["python", "train.py"], env={"CUDA_VISIBLE_DEVICES": "MIG-6f3c0a1e-5a7d-5b2a-9e1c-0d4b7a2c1f3e,"
                                                                     "MIG-0a9b8c7d-1e2f-5a3b-8c4d-5e6f7a8b9c0d"})
tc = torch_libs(p, SP + "/nvidia/cudnn/lib", 90100, cudart=SP + "/nvidia/cuda_runtime/lib/libcudart.so.12",
                rt=12010, major=9)
p.exit()
case("r21-mig-two-instances", [
    ("row", "21"), ("what", "PyTorch, A100 MIG x2: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED"),
    ("source", "shaped"), ("rule", "mig_one_per_process"),
    ("cause", "names 2 MIG instances"), ("fix", "one process per MIG instance"), ("symptom", "PyTorch:")], p)

# ---- row 22: the driver was upgraded, the old kernel module is still loaded
p = Proc(5122, ["python3", "-c", "import torch; print(torch.cuda.is_available())"])
tl = SP + "/torch/lib"
p.lib(SP + "/nvidia/cuda_runtime/lib/libcudart.so.11.0", "cudart", version=11080, needed_by=tl + "/libtorch_cuda.so")
p.dlopen_ok("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
            SP + "/nvidia/cuda_runtime/lib/libcudart.so.11.0")
p.lib("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "driver", version=12020, file_version="535.104.05",
      kernel_module="530.30.02", via="libcuda.so.1")
p.add("context_failed", fn="cuInit", status=803, status_name="CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", device=0,
      mem=mem(None, None, "unknown"), device_count=None, driver="not_initialized", compute_capability=None)
p.exit(failures=1)
case("r22-driver-module-mismatch", [
    ("row", "22"), ("what", "PyTorch: Unexpected error from cudaGetDeviceCount(); nvidia-smi: Driver/library version mismatch"),
    ("source", "shaped"), ("rule", "driver_module_mismatch"),
    ("cause", "530.30.02 | 535.104.05"), ("fix", "reboot"), ("symptom", "PyTorch:")], p)

# ---- row 23: a ~/.nv that a run under sudo left owned by root
p = Proc(5123, ["python", "dqn.py"], nv_cache={"path": "/home/u/.nv", "owner": 0, "writable": False})
p.dlopen_ok("libcudnn.so.7", "/usr/local/cuda/lib64/libcudnn.so.7", TF_FW)
p.lib("/usr/local/cuda/lib64/libcudnn.so.7", "cudnn", version=7102, via="libcudnn.so.7")
p.dlopen_ok("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", TF_FW)
p.lib("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "driver", version=9010, via="libcuda.so.1")
p.add("cudnn_handle", fn="cudnnCreate", status=0, status_name="CUDNN_STATUS_SUCCESS", ok=True)
p.add("cudnn_handle", fn="cudnnCreate", status=4, status_name="CUDNN_STATUS_INTERNAL_ERROR", ok=False, reason=None,
      device_count=1, driver="loaded", compute_capability="6.1", mem=mem(6 * GiB, 8 * GiB), holders=[], nvml="ok",
      likely_cause={"kind": "unknown", "detail": "", "seq": None})
p.exit(failures=1)
case("r23-nv-cache-not-writable", [
    ("row", "23"), ("what", "TF 1.x: could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR mid-run (a broken ~/.nv)"),
    ("source", "shaped"), ("rule", "nv_cache_unwritable"),
    ("cause", "/home/u/.nv | belongs to user 0"), ("fix", "rm -rf /home/u/.nv"), ("symptom", "TensorFlow:")], p)

# ---- row 25: the base image's apt libcudnn8 beside the wheel's cuDNN
p = Proc(5125, ["python", "predict.py"], host="cog-model", uid=0,
         env={"LD_LIBRARY_PATH": "/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu"})
cd = SP + "/nvidia/cudnn/lib"
tc = torch_libs(p, cd, 8700)
p.dlopen_ok("libcudnn_ops_infer.so.8", "/usr/lib/x86_64-linux-gnu/libcudnn_ops_infer.so.8", cd + "/libcudnn.so.8")
p.lib("/usr/lib/x86_64-linux-gnu/libcudnn_ops_infer.so.8", "cudnn", version=8906, file_version="8.9.6",
      via="libcudnn_ops_infer.so.8")
p.add("verdict", kind="cudnn_sublib_mismatch", detail="a cuDNN sub-library was loaded from another directory than "
      "libcudnn.so itself (LD_LIBRARY_PATH is searched before cuDNN's own RUNPATH)", dispatcher=cd + "/libcudnn.so.8",
      sublib="/usr/lib/x86_64-linux-gnu/libcudnn_ops_infer.so.8", when="load")
p.add("graph_all_plans_failed", graph=3, when="every_config_tried", ops=[{"op": "convolution_forward"}],
      heuristics_returned=6, plans_tried=6, plans_finalized=0, plans_not_supported=6, plans_failed_other=0,
      last_status=3000, last_status_name="CUDNN_STATUS_NOT_SUPPORTED", last_reason=None)
p.exit(failures=1)
case("r25-apt-libcudnn8-beside-wheel", [
    ("row", "25"), ("what", "PyTorch in a CUDA base image: GET was unable to find an engine (apt libcudnn8 beside the wheel)"),
    ("source", "shaped"), ("rule", "cudnn_sublib_mismatch"),
    ("cause", "(8.7.0) | (8.9.6) | dpkg -S"), ("fix", "apt-get remove --allow-change-held-packages"),
    ("symptom", "PyTorch:")], p)

# ---- row 26: a crash in a part of the system's cuDNN 8.9.2 under PyTorch built with 8.8.1
p = Proc(5126, ["python", "run.py"], env={"LD_LIBRARY_PATH": "/usr/lib/x86_64-linux-gnu"})
tl = SP + "/torch/lib"
p.lib(tl + "/libcudnn.so.8", "cudnn", version=8801, version_source="file_name", file_version="8.8.1",
      needed_by=tl + "/libtorch_cuda.so")
p.dlopen_ok("libcudnn_cnn_infer.so.8", "/usr/lib/x86_64-linux-gnu/libcudnn_cnn_infer.so.8", tl + "/libcudnn.so.8")
p.lib("/usr/lib/x86_64-linux-gnu/libcudnn_cnn_infer.so.8", "cudnn", version=8902, file_version="8.9.2",
      via="libcudnn_cnn_infer.so.8")
p.add("verdict", kind="cudnn_sublib_mismatch", detail="a cuDNN sub-library was loaded from another directory",
      dispatcher=tl + "/libcudnn.so.8", sublib="/usr/lib/x86_64-linux-gnu/libcudnn_cnn_infer.so.8", when="load")
p.add("crash", signal=11, signal_name="SIGSEGV", code=1, code_name="SEGV_MAPERR", addr="0x18", thread="python",
      unwinder="glibc", backtrace=[{"module": "/usr/lib/x86_64-linux-gnu/libcudnn_cnn_infer.so.8",
                                    "offset": "0x4a1c2f"}, {"module": tl + "/libtorch_cuda.so", "offset": "0x91f3e0"}],
      last_failure=None, next="default")
case("r26-crash-parts-of-two-versions", [
    ("row", "26"), ("what", "PyTorch built with cuDNN 8.8.1 crashes; some parts from the system's 8.9.2"),
    ("source", "shaped"), ("rule", "cudnn_sublib_mismatch"),
    ("cause", "(8.8.1) | (8.9.2)"), ("fix", "take /usr/lib/x86_64-linux-gnu out of LD_LIBRARY_PATH")], p)

# ---- row 27: every algorithm's workspace failed to allocate: another process holds the GPU
p = Proc(5127, ["python", "train.py", "--batch", "16"], env={"TORCH_CUDNN_V8_API_DISABLED": "1"})
cd = SP + "/nvidia/cudnn/lib"
tc = torch_libs(p, cd, 8902)
algos = [("CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1", 1, 1536 * MiB), ("CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0", 0, 620 * MiB),
         ("CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3", 3, 3 * GiB)]
p.add("conv_algos", fn="cudnnGetConvolutionBackwardFilterAlgorithm_v7", op="backward_filter", api="get_v7", status=0,
      status_name="CUDNN_STATUS_SUCCESS", x={"dims": [16, 256, 128, 160], "dtype": "float", "layout": "NCHW"},
      w={"dims": [256, 256, 3, 3], "dtype": "float", "layout": "NCHW"},
      y={"dims": [16, 256, 128, 160], "dtype": "float", "layout": "NCHW"}, requested=8, returned=3,
      algos=[{"algo": a, "algo_name": n, "status": 0, "status_name": "CUDNN_STATUS_SUCCESS", "time_ms": -1,
              "workspace": w, "determinism": "DETERMINISTIC", "math_type": "DEFAULT"} for n, a, w in algos],
      mem=mem(310 * MiB, 24 * GiB), algos_over_free=3, signature=None)
for n, a, w in algos:
    p.add("alloc_failed", fn="cudaMalloc", route="plt", bytes=w + MiB, status=2, status_name="cudaErrorMemoryAllocation",
          driver_status=2, driver_status_name="CUDA_ERROR_OUT_OF_MEMORY", mem=mem(300 * MiB, 24 * GiB),
          exceeds_free=True, live=1200 * MiB, largest_ok=400 * MiB, caller=tl if False else SP + "/torch/lib/libc10_cuda.so",
          caller_offset="0x41c20", holders=[{"pid": 31337, "name": "python", "bytes": 22 * GiB},
                                            {"pid": 5127, "name": "python", "bytes": 1300 * MiB, "self": True}],
          nvml="ok", nvml_device="pci:0000:01:00.0", device_count=1, driver="loaded", compute_capability="8.6")
p.exit(failures=3)
case("r27-no-valid-algorithm-gpu-taken", [
    ("row", "27"), ("what", "PyTorch legacy path: Unable to find a valid cuDNN algorithm to run convolution"),
    ("source", "shaped"), ("rule", "lookup_workspace"),
    ("cause", "cudnnGetConvolutionBackwardFilterAlgorithm_v7 | CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 | 310 MiB | "
              "process 31337 (python) holds"),
    ("fix", "kill 31337 | CUDNN_CONV_WSCAP_DBG"), ("symptom", "PyTorch:")], p)

# ---- row 28: a distribution's cuDNN built for CUDA 12 with only CUDA 13 installed
p = Proc(5128, ["python3", "-c", "import onnxruntime as ort; ort.InferenceSession('m.onnx', providers=['CUDAExecutionProvider'])"],
         exe="/usr/bin/python3.13")
ort = "/usr/lib64/python3.13/site-packages/onnxruntime/capi/libonnxruntime_providers_cuda.so"
p.dlopen_ok("libcudart.so.13", "/usr/local/cuda-13.0/lib64/libcudart.so.13", ort)
p.lib("/usr/local/cuda-13.0/lib64/libcudart.so.13", "cudart", version=13000, via="libcudart.so.13")
p.dlopen_ok("libcudnn.so.9", "/usr/lib64/libcudnn.so.9", ort)
p.lib("/usr/lib64/libcudnn.so.9", "cudnn", version=92100, version_source="file_name", file_version="9.21.0",
      via="libcudnn.so.9")
p.dlopen_ok("libcudnn_graph.so.9", "/usr/lib64/libcudnn_graph.so.9", "/usr/lib64/libcudnn.so.9",
            benign_probes=["libcudnn_graph.so.9.21.0", "libcudnn_graph.so.9.21"])
p.lib("/usr/lib64/libcudnn_graph.so.9", "cudnn", version=92100, cuda_built_for=12090, via="libcudnn_graph.so.9")
p.add("verdict", kind="cudnn_cuda_major_mismatch", detail="cuDNN was built for another CUDA major version than the "
      "runtime loaded", cudnn_built_for="12090", cudart_version="13000", when="load")
p.dlopen_fail("libcublasLt.so.12", "libcublasLt.so.12: cannot open shared object file: No such file or directory",
              "/usr/lib64/libcudnn_graph.so.9",
              [cand("/usr/lib64", "RUNPATH"), cand("/etc/ld.so.cache", "ld.so.cache"),
               cand("/usr/local/cuda-13.0/lib64", "LD_LIBRARY_PATH", ["libcublasLt.so.13"])])
p.exit(failures=1, load_failures_unresolved=1)
case("r28-cudnn-for-cuda12-on-cuda13", [
    ("row", "28"), ("what", "onnxruntime on Fedora: Invalid handle. Cannot load symbol cublasLtGetVersion"),
    ("source", "shaped"), ("rule", "cudnn_cuda_major_mismatch"),
    ("cause", "built for CUDA 12.9 | CUDA 13.0 runtime | libcublasLt.so.12"), ("fix", "nvidia-cudnn-cu13")], p)

# ---- the headline (issue 14, class 1): a TF-style legacy lookup whose first choice did not fit
p = Proc(6401, ["python3", "tests/gpu/conv_big.py", "--legacy"])
cd = SP + "/nvidia/cudnn/lib"
p.dlopen_ok("libcudnn.so.9", cd + "/libcudnn.so.9", TF_FW)
p.lib(cd + "/libcudnn.so.9", "cudnn", version=91900, version_source="wheel", via="libcudnn.so.9")
p.dlopen_ok("libcudnn_graph.so.9", cd + "/libcudnn_graph.so.9", cd + "/libcudnn.so.9",
            benign_probes=["libcudnn_graph.so.9.19.0", "libcudnn_graph.so.9.19"])
p.lib(cd + "/libcudnn_graph.so.9", "cudnn", version=91900, cuda_built_for=13000, via="libcudnn_graph.so.9")
p.add("cudnn_handle", fn="cudnnCreate", status=0, status_name="CUDNN_STATUS_SUCCESS", ok=True)
fw = [("CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM", 1, 643 * MiB), ("CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM", 0, 0),
      ("CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING", 5, 1100 * MiB), ("CUDNN_CONVOLUTION_FWD_ALGO_GEMM", 2, 0)]
p.add("conv_algos", fn="cudnnGetConvolutionForwardAlgorithm_v7", op="forward", api="get_v7", status=0,
      status_name="CUDNN_STATUS_SUCCESS", x={"dims": [256, 64, 224, 224], "dtype": "float", "layout": "NCHW"},
      w={"dims": [64, 64, 3, 3], "dtype": "float", "layout": "NCHW"}, requested=8, returned=4,
      algos=[{"algo": a, "algo_name": n, "status": 0, "status_name": "CUDNN_STATUS_SUCCESS", "time_ms": -1,
              "workspace": w, "determinism": "DETERMINISTIC", "math_type": "DEFAULT"} for n, a, w in fw],
      mem=mem(297 * MiB, 143771 * MiB), algos_over_free=2, signature=None)
p.add("alloc_failed", fn="cuMemAlloc_v2", route="dlsym", bytes=643 * MiB, status=2,
      status_name="CUDA_ERROR_OUT_OF_MEMORY", mem=mem(297 * MiB, 143771 * MiB), exceeds_free=True,
      live=140 * GiB, largest_ok=139 * GiB, caller=TF_FW, caller_offset="0x2a1b3c", device_count=1,
      driver="loaded", compute_capability="9.0", holders=[{"pid": 6401, "name": "python3", "bytes": 141 * GiB,
                                                           "self": True}], nvml="ok")
p.exit(failures=1)
case("x-headline-legacy-lookup", [
    ("row", "-"), ("what", "issue 14 class 1: Get_v7 proposed IMPLICIT_PRECOMP_GEMM first, 643 MiB, with 297 MiB free"),
    ("source", "shaped"), ("rule", "lookup_workspace"),
    ("cause", "IMPLICIT_PRECOMP_GEMM | 643 MiB | 297 MiB | IMPLICIT_GEMM (0 bytes)"),
    ("fix", "convguard run --fallback | TF_CUDNN_WORKSPACE_LIMIT_IN_MB"), ("symptom", "TensorFlow:")], p)

# ---- class 7: a CPU-only framework under pyenv's shims: "the GPU was never used", once
root = Proc(7001, ["bash", "/home/u/.pyenv/shims/python3", "train.py"], exe="/usr/bin/bash")
root.exit()
helpers = []
for k, (exe, argv) in enumerate([("/usr/bin/readlink", ["readlink", "-f", "/home/u/.pyenv"]),
                                 ("/usr/bin/bash", ["bash", "/home/u/.pyenv/libexec/pyenv", "exec", "python3"]),
                                 ("/usr/bin/head", ["head", "-1", "/home/u/proj/.python-version"])]):
    h = Proc(7002 + k, argv, exe=exe, ppid=7001)
    h.exit()
    helpers.append(h)
py = Proc(7010, ["python3", "train.py"], exe="/home/u/.pyenv/versions/3.12.3/bin/python3.12", ppid=7003)
py.exit(frameworks=["torch"])
case("x-gpu-never-used-tree", [
    ("row", "-"), ("what", "class 7: CPU-only PyTorch under pyenv (old-style files for every helper process)"),
    ("source", "shaped"), ("rule", "gpu_never_used"),
    ("cause", "python3 train.py (which ran PyTorch)"), ("fix", "download.pytorch.org")], root, py, *helpers)
print("shaped", HERE)
