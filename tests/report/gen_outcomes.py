#!/usr/bin/env python3
"""tests/report/gen_outcomes.py - random runs for the outcome invariant
(t_outcome_property.sh, issue 27 item 1): each run a folder holding the traces
of its processes (the shape the shim writes, docs/trace-format.md) and the
capture `convguard run` keeps of its stderr ("Captured stderr"), with:

  - processes: the program `convguard run` started (it may have no trace: a
    shell wrapper), forked children (forked_from), ranks with torchrun's
    "[rankN]:" prefixes on their lines;
  - how each ended: an exit line, a crash event whose signal killed it (no exit
    line), or neither (killed by SIGKILL, os._exit);
  - the run's exit status (0, 1, 2, 128+signal);
  - failing calls (cuInit, cudaMalloc, a cuDNN call, a code load) or none;
  - captured lines: Python tracebacks, known error texts of patterns.def,
    benign warnings, noise.

    gen_outcomes.py DIR N SEED

writes DIR/run000 ... and DIR/manifest.json: per run `failed` (a process of it
had a non-zero exit, a fatal signal or an exception line in its output: the
report must never say "no problem found" of it) and `succeeded` (every
process's end is known and good: the program exited 0 with no other
process, nothing failed, no exception: the report may hold notes and warnings,
never an error)."""
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def known_texts():
    """texts of patterns.def rows that are errors (no `*`), and the benign ones"""
    src = open(os.path.join(ROOT, "tools/model/patterns.def")).read()
    err, benign = [], []
    for m in re.finditer(r'^MESSAGE\(\w+, "(\w+)", "[^"]*", "((?:[^"\\]|\\.)*)"', src, re.M):
        kind, text = m.group(1), m.group(2).replace('\\"', '"')
        if "*" in text or "\\" in text:
            continue
        if kind == "benign":
            benign.append(text)
        elif kind not in ("warn", "memory"):
            err.append(text)
    return err, benign


ERR, BENIGN = known_texts()
EXCEPTIONS = ["ValueError: bad shard 7", "RuntimeError: expected scalar type Float but found Half",
              "KeyError: 'labels'", "AssertionError", "ZeroDivisionError: division by zero",
              "OSError: [Errno 28] No space left on device"]
NOISE = ["epoch 1/10", "loading checkpoint from /data/ckpt.pt", "step 100 loss 0.731", "WARNING: slow step"]
FAILS = [
    ("context_failed", {"fn": "cuInit", "status": 100, "status_name": "CUDA_ERROR_NO_DEVICE",
                        "mem": {"free": None, "total": None, "source": "unknown"}, "device_count": 0}),
    ("alloc_failed", {"fn": "cudaMalloc", "route": "plt", "bytes": 8 << 30, "status": 2,
                      "status_name": "cudaErrorMemoryAllocation", "mem": {"free": 1 << 30, "total": 80 << 30,
                                                                           "source": "driver"},
                      "live": 70 << 30, "largest_ok": 1 << 30}),
    ("call_failed", {"fn": "cudnnGetConvolutionForwardWorkspaceSize", "status": 3,
                     "status_name": "CUDNN_STATUS_BAD_PARAM"}),
    ("code_load_failed", {"fn": "cuModuleLoadData", "status": 209, "status_name": "CUDA_ERROR_NO_BINARY_FOR_GPU",
                          "caller": "/usr/lib/libnccl.so.2"}),
]
SIGNALS = [(11, "SIGSEGV"), (6, "SIGABRT"), (7, "SIGBUS")]


def traceback(exc):
    return ["Traceback (most recent call last):", '  File "train.py", line 42, in <module>', "    main()", exc]


class Proc:
    def __init__(self, host, pid, ppid, wall, rank=None, forked_from=None):
        self.pid, self.ev, self.t = pid, [], 0.0
        start = dict(pid=pid, tid=pid, convguard="0.1.0", ppid=ppid, exe="/usr/bin/python3.11",
                     argv=["python3", "train.py"], cwd="/home/u", host=host, rank=rank, uid=1000,
                     wall_time=wall, wall_time_ns=0, env={}, max_mb=256, crash_unwinder="glibc")
        if forked_from is not None:
            start["forked_from"] = forked_from
        self.add("start", **start)
        self.add("lib", path="/usr/lib/x86_64-linux-gnu/libcuda.so.1", soname="libcuda.so.1", family="driver",
                 size=1000000, mtime=1780000000, inode=100 + pid, dev=2049, via="(startup)", version=12040)

    def add(self, name, **f):
        self.t += 0.01
        e = {"ev": name, "seq": len(self.ev), "t": round(self.t, 3)}
        e.update(f)
        e.setdefault("pid", self.pid)
        self.ev.append(e)

    def write(self, path):
        with open(path, "w") as out:
            for e in self.ev:
                out.write(json.dumps(e, separators=(",", ":")) + "\n")


def one_run(rng, d, k):
    host = "gen%03d" % k
    wall = 1790000000 + k * 100
    conv_pid, top = 40000 + k * 10, 40001 + k * 10
    clean = rng.random() < 0.25  # one process that exits 0: its failing calls, if any, it went on from
    top_traced = clean or rng.random() < 0.8
    nkids = 0 if clean else rng.choice([0, 0, 1, 2])
    ranks = 0 if clean else rng.choice([0, 0, 2])
    status = 0 if clean else rng.choice([0, 0, 0, 1, 2, 128 + 9, 128 + 11])
    procs, failed, known = [], status != 0, True
    if top_traced:
        procs.append(Proc(host, top, conv_pid, wall))
    for c in range(nkids):
        procs.append(Proc(host, top + 1 + c, top, wall, forked_from=top))
    for r in range(ranks):
        procs.append(Proc(host, top + 5 + r, top, wall, rank=r))
    if not procs:  # the wrapper alone has no trace: one child of it has
        procs.append(Proc(host, top + 1, top, wall))
    exc_lines = []
    for p in procs:
        if rng.random() < 0.4:
            name, f = rng.choice(FAILS)
            for _ in range(rng.choice([1, 2])):
                p.add(name, **f)
            if p.pid != top or len(procs) > 1:
                known = False  # a failure whose end is not known
        end = 1.0 if clean else rng.random()
        calls = {"cuInit": 3, "cudaMalloc": 10, "cuModuleLoadData": 5, "cudnnGetConvolutionForwardWorkspaceSize": 4}
        fails = {}
        for e in p.ev:
            if "fn" in e and e["ev"] != "lib":
                fails[e["fn"]] = fails.get(e["fn"], 0) + 1
        if end < 0.15:
            sig, name = rng.choice(SIGNALS)
            p.add("crash", signal=sig, signal_name=name, code=0, code_name="SI_KERNEL", addr=None, next="default",
                  thread="python3", frames=[])
            failed = True
        elif end < 0.25:
            known = False  # no exit line: killed, _exit
        else:
            p.add("exit", libs=1, failures=sum(fails.values()), load_failures_unresolved=0, calls=calls,
                  fails=fails, dlopen_repeats=0, events_dropped=0,
                  gpu_mem={"live": 0, "allocs": 10, "frees": 10, "largest_ok": 1 << 30, "alloc_failures":
                           fails.get("cudaMalloc", 0)})
        p.write(os.path.join(d, "%s-%d.jsonl" % (host, p.pid)))
    lines = [rng.choice(NOISE) for _ in range(rng.randint(0, 4))]
    if rng.random() < 0.3:
        lines.append(rng.choice(BENIGN))
    if not clean and rng.random() < 0.25:
        lines.append(rng.choice(ERR))
        known = False  # a known error text: never "no problem found"; the run may still have gone on
        failed_known = True
    else:
        failed_known = False
    if not clean and rng.random() < 0.35:
        exc = traceback(rng.choice(EXCEPTIONS))
        if ranks and rng.random() < 0.5:
            exc = ["[rank%d]: %s" % (rng.randrange(ranks), l) for l in exc]
        exc_lines = exc
        failed = True
    lines += exc_lines
    lines += [rng.choice(NOISE) for _ in range(rng.randint(0, 2))]
    body = ("\n".join(lines) + "\n").encode()
    sections = [{"name": "tail", "bytes": len(body), "cut": False}]
    blob = body
    if ranks:
        for r in range(ranks):
            mine = "".join(l[len("[rank%d]: " % r):] + "\n" for l in lines if l.startswith("[rank%d]: " % r)).encode()
            sections.append({"name": "rank %d" % r, "prefix": "torchrun", "rank": r, "bytes": len(mine),
                             "lines": mine.count(b"\n"), "cut": False})
            blob += mine
    hdr = {"convguard_capture": 1, "host": host, "pid": conv_pid, "child": top, "start": wall - 1, "end": wall + 5,
           "mode": "pipe", "bytes": len(body), "status": status, "passing_stopped": False, "handed_over": False,
           "sections": sections}
    with open(os.path.join(d, "%s-%d.stderr" % (host, conv_pid)), "wb") as out:
        out.write(json.dumps(hdr, separators=(",", ":")).encode() + b"\n" + blob)
    succeeded = not failed and known and top_traced and len(procs) == 1 and not failed_known
    return {"run": os.path.basename(d), "failed": failed, "succeeded": succeeded, "status": status,
            "exception": bool(exc_lines), "processes": len(procs)}


def main():
    out, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    manifest = []
    for k in range(n):
        d = os.path.join(out, "run%03d" % k)
        os.makedirs(d)
        manifest.append(one_run(rng, d, k))
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
