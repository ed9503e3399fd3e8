#!/usr/bin/env python3
"""tests/report/shape27.py - writes the traces of issue 27's third round (the held-out H200 runs'
classes of failure, never their numbers): runs in the shape the shim and `convguard run` write them
(docs/trace-format.md), each a folder of `<host>-<pid>.jsonl` files and the run's `.stderr` capture.

    python3 tests/report/shape27.py        rewrites tests/report/outcome27/* and two rule traces

Written by hand from the formats, not recorded: JAX, PyTorch and NCCL do not run here.  Each case
says in CASES what it is; t_outcome27.sh checks what the report must say of it.  Not run by CI:
the files are committed."""
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
SP = "/home/u/venv/lib/python3.12/site-packages"
TORCH = [SP + "/torch/lib/libc10_cuda.so", SP + "/torch/lib/libtorch_cuda.so"]
JAX = [SP + "/jax_plugins/xla_cuda13/xla_cuda_plugin.so"]
DRIVER = "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
GIB = 1 << 30
TOTAL = 150109880320  # an H200's, as the driver says it


class Proc:
    def __init__(self, host, pid, ppid, wall, argv=("python3", "train.py"), env=None, rank=None, forked=None,
                 start_extra=None):
        self.host, self.pid, self.ev, self.t = host, pid, [], 0.0
        f = dict(convguard="0.1.0", ppid=ppid, exe="/usr/bin/python3.12", argv=list(argv), cwd="/home/u/proj",
                 host=host, rank=rank, uid=1000, wall_time=wall, wall_time_ns=0, env=env or {},
                 settings={"fallback": False, "workspace_limit_mb": -1, "reserve_mb": 0}, max_mb=256,
                 crash_unwinder="glibc")
        if forked:
            f["forked_from"] = forked
        f.update(start_extra or {})
        self.add("start", **f)

    def add(self, ev_name, **f):
        self.t += 0.01
        e = {"ev": ev_name, "seq": len(self.ev), "t": round(self.t, 6), "pid": self.pid, "tid": self.pid}
        e.update(f)
        self.ev.append(e)
        return e

    def lib(self, path, family="other", **f):
        f.setdefault("via", "(startup)")
        return self.add("lib", path=path, soname=f.pop("soname", os.path.basename(path)), family=family,
                        size=1000000, mtime=1780000000, inode=100 + len(self.ev), dev=2049, **f)

    def fw(self, libs):
        for p in libs:
            self.lib(p)
        self.lib(SP + "/nvidia/cu13/lib/libcudart.so.13", "cudart", version=13000)
        self.lib(DRIVER, "driver", version=13000, driver_log="registered")

    def exit(self, **f):
        f.setdefault("libs", sum(1 for e in self.ev if e["ev"] == "lib"))
        f.setdefault("failures", 0)
        f.setdefault("calls", {})
        f.setdefault("fails", {})
        for k, v in (("load_failures_unresolved", 0), ("dlopen_repeats", 0), ("events_dropped", 0)):
            f.setdefault(k, v)
        self.add("exit", **f)

    def write(self, folder):
        name = "%s-%s%d.jsonl" % (self.host, "r%d-" % self.ev[0]["rank"] if self.ev[0]["rank"] is not None else "",
                                  self.pid)
        with open(os.path.join(folder, name), "w") as out:
            for e in self.ev:
                out.write(json.dumps(e, separators=(",", ":")) + "\n")


def capture(folder, host, pid, child, wall, status, tail, ranks=None):
    """the run's .stderr: the tail, and a section per rank (lines with their prefixes, as written)"""
    body = ("\n".join(tail) + "\n").encode()
    secs = [{"name": "tail", "bytes": len(body), "cut": False}]
    for r, lines in sorted((ranks or {}).items()):
        b = ("\n".join(lines) + "\n").encode()
        secs.append({"name": "rank %d" % r, "prefix": "torchrun", "rank": r, "bytes": len(b), "lines": len(lines),
                     "cut": False})
        body += b
    hdr = {"convguard_capture": 1, "host": host, "pid": pid, "child": child, "start": wall - 1, "end": wall + 30,
           "mode": "pipe", "bytes": len(body), "status": status, "passing_stopped": False, "handed_over": False,
           "sections": secs}
    with open(os.path.join(folder, "%s-%d.stderr" % (host, pid)), "wb") as out:
        out.write(json.dumps(hdr, separators=(",", ":")).encode() + b"\n" + body)


def folder(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def gpu_mem(largest, allocs=4, live=None, failures=0):
    return {"live": largest if live is None else live, "allocs": allocs, "frees": 0, "largest_ok": largest,
            "alloc_failures": failures, "alloc_failed_unwritten": 0, "untracked": 0, "unknown_frees": 0}


def holders(*hs):
    return [{"pid": p, "name": n, "bytes": b} for p, n, b in hs]


TB = "Traceback (most recent call last):"


# ---- JAX next to another JAX process that preallocated 75%: the pool shrinks, then runs out (rule oom_memory_held)
def jax_two(d, nvml=True):
    d = folder(d)
    main = Proc("gpu1", 6101, 6100, 1790300000, ["python3", "two.py"])
    main.fw(JAX)
    main.add("alloc_failed", fn="cuMemAlloc_v2", route="dlsym", bytes=112582410240, status=2,
             status_name="CUDA_ERROR_OUT_OF_MEMORY", mem={"free": 36 * GIB, "total": TOTAL, "source": "driver"},
             exceeds_free=True, live=0, largest_ok=0, caller=JAX[0], caller_offset="0x9a3c1", device_count=1,
             driver="loaded", compute_capability="9.0",
             holders=holders((6102, "python3", 105 * GIB), (6101, "python3", 600 << 20)) if nvml else None,
             nvml="ok" if nvml else "libnvidia-ml.so.1 not loadable: libnvidia-ml.so.1: cannot open shared object "
             "file: No such file or directory", nvml_device="pci:0000:1b:00.0")
    main.t = 20.0  # the run's end: it lived while the holder held its pool
    main.exit(failures=1, calls={"cuMemAlloc_v2": 9}, fails={"cuMemAlloc_v2": 1}, frameworks=["jax"],
              gpu_mem=gpu_mem(33 * GIB, failures=1))
    holder = Proc("gpu1", 6102, 6101, 1790300001, ["python3", "two.py", "holder"])
    holder.fw(JAX)
    holder.exit(calls={"cuMemAlloc_v2": 3}, frameworks=["jax"], gpu_mem=gpu_mem(105 * GIB))
    main.write(d), holder.write(d)
    capture(d, "gpu1", 6100, 6101, 1790300000, 1, [
        "W0101 10:00:05.000000   6101 bfc_allocator.cc:501] Allocator (GPU_0_bfc) ran out of memory trying to "
        "allocate 40.00GiB (rounded to 42949672960)requested by op",
        TB, '  File "two.py", line 24, in <module>', "    x = jnp.ones((40 << 30) // 4, jnp.float32)",
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
        "42949672960 bytes."])


# ---- torchrun, two ranks on one GPU, no set_device; NCCL probes its kernels (209 from a lookup)
def two_ranks(d):
    d = folder(d)
    run = Proc("gpu1", 6200, 6199, 1790310000, ["/usr/bin/python3", "-m", "torch.distributed.run",
                                                "--nproc_per_node=2", "ranks.py"])
    run.fw(TORCH)
    run.exit(frameworks=["torch"])
    run.write(d)
    ranks = {}
    for r in (0, 1):
        env = {"RANK": str(r), "LOCAL_RANK": str(r), "WORLD_SIZE": "2"}
        p = Proc("gpu1", 6201 + r, 6200, 1790310002, ["python3", "ranks.py"], env=env, rank=r)
        p.fw(TORCH + [SP + "/nvidia/nccl/lib/libnccl.so.2"])
        p.add("driver_log", level="error", message="Returning 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) from "
              "cuLibraryGetKernel", fn="cuLibraryGetKernel", status=209, status_name="CUDA_ERROR_NO_BINARY_FOR_GPU",
              hooked=False)
        p.exit(failures=1, calls={"cuInit": 1, "cuLibraryLoadData": 40}, frameworks=["torch"],
               code_images={"described": 40, "no_fit": 0}, driver_log={"messages": 3, "written": 1},
               gpu_mem=gpu_mem(4 << 20))
        p.write(d)
        pre = "[rank%d]: " % r
        ranks[r] = [pre + l for l in [
            TB, '  File "ranks.py", line 9, in <module>', "    dist.all_reduce(x)",
            "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
            "ProcessGroupNCCL.cpp:3699, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.27.5",
            "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.", "Last error:",
            "Duplicate GPU detected : rank %d and rank %d both on CUDA device 1b000" % (r, 1 - r)]]
    capture(d, "gpu1", 6199, 6200, 1790310000, 1, [
        "E0101 10:00:09.000000 6200 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: 1) "
        "local_rank: 0 (pid: 6201) of binary: /usr/bin/python3", TB,
        '  File "/usr/lib/python3.12/runpy.py", line 198, in _run_module_as_main',
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
        "============================================================", "ranks.py FAILED",
        "------------------------------------------------------------", "Failures:", "[1]:",
        "  time      : 2026-12-03_10:00:09", "  host      : gpu1", "  rank      : 1 (local_rank: 1)",
        "  exitcode  : 1 (pid: 6202)", "  error_file: <N/A>",
        "------------------------------------------------------------", "Root Cause (first observed failure):",
        "[0]:", "  time      : 2026-12-03_10:00:09", "  host      : gpu1", "  rank      : 0 (local_rank: 0)",
        "  exitcode  : 1 (pid: 6201)", "  error_file: <N/A>",
        "============================================================"] + ranks[0] + ranks[1], ranks)


# ---- JAX with CUDA_VISIBLE_DEVICES=99: its plugin logs cuInit's failure and JAX runs on the CPU, exit 0
def jax_cpu(d):
    d = folder(d)
    p = Proc("gpu2", 6301, 6300, 1790320000, ["python3", "fallback.py"], env={"CUDA_VISIBLE_DEVICES": "99"})
    p.fw(JAX)
    p.add("context_failed", fn="cuInit", status=100, status_name="CUDA_ERROR_NO_DEVICE",
          mem={"free": None, "total": None, "source": "unknown"}, device_count=None, driver="not_initialized",
          device_count_status="CUDA_ERROR_NOT_INITIALIZED", compute_capability=None,
          nvml_gpus={"count": 1, "nvml": "ok", "gpus": [{"index": 0, "uuid": "GPU-5e2a0c1d-aaaa-bbbb-cccc-0123456789ab"}]},
          dev_nodes=[{"path": "/dev/nvidiactl", "exists": True, "access": "ok"},
                     {"path": "/dev/nvidia0", "exists": True, "access": "ok"}])
    p.exit(failures=1, calls={"cuInit": 1}, fails={"cuInit": 1}, frameworks=["jax"])
    p.write(d)
    capture(d, "gpu2", 6300, 6301, 1790320000, 0, [
        "ERROR:2026-12-03 10:00:01,000:jax._src.xla_bridge:487: Jax plugin configuration error: Exception when "
        "calling jax_plugins.xla_cuda13.initialize()", TB,
        '  File "%s/jax/_src/xla_bridge.py", line 485, in discover_pjrt_plugins' % SP,
        "    plugin_module.initialize()",
        "RuntimeError: jaxlib/cuda/versions_helpers.cc:113: operation cuInit(0) failed: CUDA_ERROR_NO_DEVICE",
        "WARNING:2026-12-03 10:00:01,500:jax._src.xla_bridge:905: An NVIDIA GPU may be present on this machine, "
        "but a CUDA-enabled jaxlib is not installed. Falling back to cpu."])


# ---- JAX next to an untraced hog: its first preallocation fails, a smaller pool works, exit 0
def pool_shrinks(d):
    d = folder(d)
    p = Proc("gpu2", 6401, 6400, 1790330000, ["python3", "shrink.py"])
    p.fw(JAX)
    p.add("alloc_failed", fn="cuMemAlloc_v2", route="dlsym", bytes=112582410240, status=2,
          status_name="CUDA_ERROR_OUT_OF_MEMORY", mem={"free": 40 * GIB, "total": TOTAL, "source": "driver"},
          exceeds_free=True, live=0, largest_ok=0, caller=JAX[0], caller_offset="0x9a3c1", device_count=1,
          driver="loaded", compute_capability="9.0", holders=holders((6350, "python3", 99 * GIB)), nvml="ok",
          nvml_device="pci:0000:1b:00.0")
    p.exit(failures=1, calls={"cuMemAlloc_v2": 6}, fails={"cuMemAlloc_v2": 1}, frameworks=["jax"],
           gpu_mem=gpu_mem(36 * GIB, failures=1))
    p.write(d)
    capture(d, "gpu2", 6400, 6401, 1790330000, 0, [
        "E1203 10:00:02.000000    6401 cuda_driver.cc:120] failed to allocate 104.85GiB (112582410240 bytes) "
        "from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory"])


# ---- forked workers that use CUDA the parent started: each raises and leaves through os._exit(1)
def fork_reinit(d, children_traced):
    d = folder(d)
    parent = Proc("gpu3", 6501, 6500, 1790340000, ["python3", "fork.py"])
    parent.fw(TORCH)
    parent.exit(calls={"cuInit": 1}, frameworks=["torch"], gpu_mem=gpu_mem(2 << 20))
    parent.write(d)
    tail = []
    for k in (0, 1):
        tail += ["Process Process-%d:" % (k + 1), TB,
                 '  File "/usr/lib/python3.12/multiprocessing/process.py", line 314, in _bootstrap',
                 "    self.run()",
                 "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, "
                 "you must use the 'spawn' start method"]
        if children_traced:
            c = Proc("gpu3", 6502 + k, 6501, 1790340001, ["python3", "fork.py"], forked=6501)
            c.add("exit", via="_exit", exit_status=1, failures=0, calls={}, fails={}, events_dropped=0)
            c.write(d)
    capture(d, "gpu3", 6500, 6501, 1790340000, 0, tail)


# ---- DataLoader workers with a 16 MiB /dev/shm: a worker dies of SIGBUS (the shim's crash, with shm)
def small_shm(d):
    d = folder(d)
    shm = {"total": 16 << 20, "free": 0}
    main = Proc("gpu3", 6601, 6600, 1790350000, ["python3", "loader.py"], start_extra={"shm": {"total": 16 << 20,
                                                                                              "free": 16 << 20}})
    main.fw(TORCH)
    main.exit(calls={"cuInit": 1}, frameworks=["torch"], gpu_mem=gpu_mem(2 << 20))
    main.write(d)
    w = Proc("gpu3", 6602, 6601, 1790350001, ["python3", "loader.py"], forked=6601)
    w.add("crash", signal=7, signal_name="SIGBUS", code=2, code_name="BUS_ADRERR", addr="0x7f3a5c000000",
          unwinder="glibc", backtrace=[], last_failure=None, shm=shm, next="default")
    w.write(d)
    capture(d, "gpu3", 6600, 6601, 1790350000, 1, [
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory "
        "(shm).", TB, '  File "loader.py", line 20, in <module>', "    for step, batch in enumerate(loader):",
        "RuntimeError: DataLoader worker (pid 6602) is killed by signal: Bus error. It is possible that "
        "dataloader's workers are out of shared memory. Please try to raise your shared memory limit."])


# ---- PyTorch with a partial copy of its cuDNN first in LD_LIBRARY_PATH; the missing part from the system
def cudnn_partial(d, system_version, status):
    d = folder(d)
    copy = "/tmp/cg2-cudnn-x1"
    p = Proc("gpu4", 6701 if status else 6711, 6700, 1790360000, ["python3", "conv.py"],
             env={"LD_LIBRARY_PATH": copy})
    p.fw(TORCH)
    p.lib(copy + "/libcudnn.so.9", "cudnn", via="libcudnn.so.9")
    for part in ("graph", "ops", "cnn", "heuristic"):
        p.lib("%s/libcudnn_%s.so.9" % (copy, part), "cudnn", via="libcudnn_%s.so.9" % part,
              **({"version": 91900, "cuda_built_for": 13010} if part == "graph" else {}))
    sysf = "/usr/lib/x86_64-linux-gnu/libcudnn_engines_precompiled.so.9"
    p.lib(sysf, "cudnn", file_version=system_version, real_dir="/usr/lib/x86_64-linux-gnu",
          via="libcudnn_engines_precompiled.so.9")
    p.exit(calls={"cudnnCreate": 1}, frameworks=["torch"], gpu_mem=gpu_mem(64 << 20))
    p.write(d)
    tail = [] if not status else [TB, '  File "conv.py", line 30, in <module>', "    y = conv(x)",
                                  "RuntimeError: cuDNN error: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"]
    capture(d, "gpu4", 6700, p.pid, 1790360000, status, tail)


# ---- JAX's CPU fallback where its logger's record has no level prefix (JAX's own handler writes the bare
# message): the traceback starts in the function that caught it, not at <module>; exit 0
def jax_cpu_bare(d):
    d = folder(d)
    p = Proc("gpu2", 6311, 6310, 1790320100, ["python3", "fallback.py"], env={"CUDA_VISIBLE_DEVICES": "7"})
    p.fw(JAX)
    p.add("context_failed", fn="cuInit", status=100, status_name="CUDA_ERROR_NO_DEVICE",
          mem={"free": None, "total": None, "source": "unknown"}, device_count=None, driver="not_initialized",
          device_count_status="CUDA_ERROR_NOT_INITIALIZED", compute_capability=None,
          nvml_gpus={"count": 2, "nvml": "ok", "gpus": [{"index": 0, "uuid": "GPU-11112222-aaaa-bbbb-cccc-0123456789ab"},
                                                        {"index": 1, "uuid": "GPU-33334444-aaaa-bbbb-cccc-0123456789ab"}]})
    p.exit(failures=1, calls={"cuInit": 1}, fails={"cuInit": 1}, frameworks=["jax"])
    p.write(d)
    capture(d, "gpu2", 6310, 6311, 1790320100, 0, [
        "Jax plugin configuration error: Exception when calling jax_plugins.xla_cuda13.initialize()", TB,
        '  File "%s/jax/_src/xla_bridge.py", line 496, in discover_pjrt_plugins' % SP,
        "    plugin_module.initialize()",
        '  File "%s/jax_plugins/xla_cuda13/__init__.py", line 369, in initialize' % SP,
        "    _check_cuda_versions(raise_on_first_error = True)",
        "RuntimeError: jaxlib/cuda/versions_helpers.cc:135: operation cuInit(0) failed: CUDA_ERROR_NO_DEVICE",
        "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed. Falling back to "
        "cpu."])


# ---- a run that exited 0 whose output holds a traceback from <module> after a line the program printed (no
# log record): Python's own report of an uncaught exception, of a process convguard has no trace of
def module_traceback(d):
    d = folder(d)
    p = Proc("gpu2", 6321, 6320, 1790320200, ["python3", "main.py"])
    p.fw(JAX)
    p.exit(calls={"cuInit": 1}, frameworks=["jax"], gpu_mem=gpu_mem(1 << 30))
    p.write(d)
    capture(d, "gpu2", 6320, 6321, 1790320200, 0, [
        "epoch 3: loss 0.412", TB, '  File "main.py", line 40, in <module>', "    shard = load(7)",
        '  File "main.py", line 12, in load', "    raise ValueError(\"bad shard %d\" % i)",
        "ValueError: bad shard 7"])


# ---- DataLoader workers and a 16 MiB /dev/shm where the worker's exception is caught and re-raised in the
# main process ("Caught RuntimeError in DataLoader worker process 0." wrapping the worker's traceback); the
# workers leave through _exit(0), their start events carry /dev/shm's size
def shm_wrapped(d):
    d = folder(d)
    shm = {"total": 16 << 20, "free": 16 << 20}
    main = Proc("gpu3", 6611, 6610, 1790350100, ["python3", "loader.py"], start_extra={"shm": shm})
    main.fw(TORCH)
    main.exit(calls={"cuInit": 1}, frameworks=["torch"], gpu_mem=gpu_mem(2 << 20))
    main.write(d)
    for k in (0, 1):
        w = Proc("gpu3", 6612 + k, 6611, 1790350104, ["python3", "loader.py"], forked=6611,
                 start_extra={"shm": {"total": 16 << 20, "free": (16 << 20) - 57344}})
        w.add("exit", via="_exit", exit_status=0, failures=0, calls={}, fails={}, events_dropped=0)
        w.write(d)
    dl = SP + "/torch/utils/data"
    capture(d, "gpu3", 6610, 6611, 1790350100, 1, [
        TB, '  File "loader.py", line 35, in <module>', "    for step, batch in enumerate(loader):",
        '  File "%s/dataloader.py", line 1586, in _process_data' % dl, "    data.reraise()",
        '  File "%s/torch/_utils.py", line 785, in reraise' % SP, "    raise exception",
        "RuntimeError: Caught RuntimeError in DataLoader worker process 0.",
        "Original Traceback (most recent call last):",
        '  File "%s/_utils/worker.py", line 358, in _worker_loop' % dl, "    data = fetcher.fetch(index)",
        '  File "%s/_utils/collate.py", line 273, in collate_tensor_fn' % dl,
        "    storage = elem._typed_storage()._new_shared(numel, device=elem.device)",
        "RuntimeError: unable to allocate shared memory(shm) for file </torch_6612_1757594141_0>: No space left on "
        "device (28)", ""])


# ---- a partial copy of the wheel's cuDNN first in LD_LIBRARY_PATH; the part it lacks is found by its name in
# the system's cuDNN of another version, whose file the loader refuses (another build's symbols); cuDNN goes on
# without it (exit 0), or PyTorch finds no engine (exit 1)
def cudnn_part_refused(d, status):
    d = folder(d)
    copy = "/tmp/cg2-cudnn-y2"
    p = Proc("gpu4", 6721 + status, 6720, 1790360100, ["python3", "conv.py"],
             env={"LD_LIBRARY_PATH": copy + ":/usr/local/nvidia/lib64"})
    p.fw(TORCH)
    p.lib(SP + "/nvidia/cudnn/lib/libcudnn.so.9", "cudnn", version=91900, version_source="wheel",
          via="libcudnn.so.9")
    graph = copy + "/libcudnn_graph.so.9"
    p.lib(graph, "cudnn", version=91900, cuda_built_for=13010, file_version="9", via="libcudnn_graph.so.9",
          shadowed=[{"path": SP + "/nvidia/cudnn/lib/libcudnn_graph.so.9", "source": "RUNPATH"}])
    p.add("cudnn_handle", fn="cudnnCreate", status=0, status_name="CUDNN_STATUS_SUCCESS", ok=True)
    name = "libcudnn_engines_precompiled.so"
    sysd = "/lib/x86_64-linux-gnu"
    for ask in ("9.19.0", "9.19"):
        p.add("dlopen", name="%s.%s" % (name, ask), flags="RTLD_NOW|RTLD_LOCAL", caller=graph,
              caller_offset="0x264775", ok=False, error="%s.%s: cannot open shared object file: No such file or "
              "directory" % (name, ask), stem=name, error_kind="absent", likely_probe=True)
    cands = [{"dir": copy, "source": "LD_LIBRARY_PATH", "files": []},
             {"dir": "/usr/local/nvidia/lib64", "source": "LD_LIBRARY_PATH", "files": []},
             {"dir": copy, "source": "RUNPATH", "files": []},
             {"dir": "/etc/ld.so.cache", "source": "ld.so.cache",
              "files": [{"name": name + ".9", "path": "%s/%s.9" % (sysd, name), "version": "9"}]},
             {"dir": sysd, "source": "default", "files": [{"name": name, "version": ""},
                                                          {"name": name + ".9", "version": "9"},
                                                          {"name": name + ".9.14.0", "version": "9.14.0"}]}]
    sym = "_ZNK5cudnn3cnn15EngineInterface23create_kernel_cache_keyE, version libcudnn_graph.so.9"
    p.add("dlopen", name=name + ".9", flags="RTLD_NOW|RTLD_LOCAL", caller=graph, caller_offset="0x264809",
          ok=False, error="%s/%s.9: undefined symbol: %s" % (sysd, name, sym), stem=name,
          error_kind="undefined_symbol", error_file="%s/%s.9" % (sysd, name), error_file_size=232917984,
          candidates=cands)
    p.lib(copy + "/libcudnn_engines_runtime_compiled.so.9", "cudnn", file_version="9",
          via="libcudnn_engines_runtime_compiled.so.9")
    p.exit(failures=1, load_failures_unresolved=1, calls={"cudnnCreate": 1, "cudnnBackendExecute": 2},
           frameworks=["torch"], gpu_mem=gpu_mem(64 << 20))
    p.write(d)
    tail = [] if not status else [TB, '  File "conv.py", line 30, in <module>', "    y = conv(x)",
                                  "RuntimeError: GET was unable to find an engine to execute this computation"]
    capture(d, "gpu4", 6720, p.pid, 1790360100, status, tail)


# ---- a misspelt PYTORCH_CUDA_ALLOC_CONF key
def alloc_conf(d):
    d = folder(d)
    p = Proc("gpu4", 6801, 6800, 1790370000, ["python3", "alloc.py"],
             env={"PYTORCH_CUDA_ALLOC_CONF": "expandable_segment:True"})
    p.fw(TORCH)
    p.exit(calls={"cuInit": 1}, frameworks=["torch"])
    p.write(d)
    capture(d, "gpu4", 6800, 6801, 1790370000, 1, [
        TB, '  File "alloc.py", line 12, in <module>', '    x = torch.zeros(1 << 20, device="cuda")',
        "RuntimeError: Unrecognized key 'expandable_segment' in Accelerator allocator config."])


# ---- a run that exited 0 whose child ran to exit() (status not recorded) after a failure
def ok_child(d):
    d = folder(d)
    top = Proc("gpu5", 6901, 6900, 1790380000, ["python3", "main.py"])
    top.fw(TORCH)
    top.exit(calls={"cuInit": 1}, frameworks=["torch"], gpu_mem=gpu_mem(2 << 20))
    top.write(d)
    c = Proc("gpu5", 6902, 6901, 1790380001, ["python3", "probe.py"])
    c.fw(TORCH)
    c.lib(SP + "/nvidia/cudnn/lib/libcudnn.so.9", "cudnn")
    c.add("cudnn_handle", fn="cudnnCreate", status=4000, status_name="CUDNN_STATUS_INTERNAL_ERROR", ok=False,
          reason=None, device_count=1, driver="loaded", mem={"free": 100 * GIB, "total": TOTAL, "source": "driver"})
    c.exit(failures=1, calls={"cudnnCreate": 1}, fails={"cudnnCreate": 1}, frameworks=["torch"])
    c.write(d)
    capture(d, "gpu5", 6900, 6901, 1790380000, 0, [])


def main():
    out = os.path.join(HERE, "outcome27")
    os.makedirs(out, exist_ok=True)
    jax_two(os.path.join(HERE, "traces", "oom_memory_held.jax_two"))
    jax_two(os.path.join(out, "jax-two-no-nvml"), nvml=False)
    two_ranks(os.path.join(HERE, "traces", "ranks_share_gpu.torchrun"))
    jax_cpu(os.path.join(out, "jax-cpu-fallback"))
    pool_shrinks(os.path.join(out, "jax-pool-shrinks"))
    fork_reinit(os.path.join(out, "fork-reinit"), True)
    fork_reinit(os.path.join(out, "fork-reinit-untraced"), False)
    small_shm(os.path.join(out, "small-shm"))
    cudnn_partial(os.path.join(out, "cudnn-part-system-fails"), "9.14.0", 1)
    cudnn_partial(os.path.join(out, "cudnn-part-same-ok"), "9.19.0", 0)
    alloc_conf(os.path.join(out, "alloc-conf-typo"))
    jax_cpu_bare(os.path.join(out, "jax-cpu-fallback-bare-log"))
    module_traceback(os.path.join(out, "ok-run-module-traceback"))
    shm_wrapped(os.path.join(out, "small-shm-wrapped"))
    cudnn_part_refused(os.path.join(out, "cudnn-part-refused-ok"), 0)
    cudnn_part_refused(os.path.join(out, "cudnn-part-refused-fails"), 1)
    ok_child(os.path.join(out, "ok-run-child"))


if __name__ == "__main__":
    main()
