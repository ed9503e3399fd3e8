#!/usr/bin/env python3
"""gen_ranks.py - a job's worth of rank traces made from one real trace.

Each rank gets the real trace with its pid, host, rank and start time
rewritten; the trace is padded to --size bytes by repeating its benign
events (graph_plan lines of the real JAX trace: what a longer run writes),
so the set looks like one that many ranks wrote, at any size.

  gen_ranks.py OUT --ranks 1000 --hosts 126 --size 200000 [--scenario S]

Scenarios (for tests/report/t_report_scale.sh and bench/report_scale.sh):
  same     every rank the same trace (the default)
  odd      as same, but rank --odd maps cuDNN 9.14.0 from /usr/lib/x86_64-linux-gnu
  two      ranks 0..N/2-1 as same, the others the trace --second (another cause)
  cascade  rank --odd fails (the real failure); every other rank has no failure of
           its own and ends 600 s later: killed by SIGABRT (a watchdog's abort after
           a collective timed out) or, every third one, without an exit line (SIGKILL)
Hosts are node0..node{H-1}, ranks spread over them in order; start times differ by
a few milliseconds per rank.  Written with one write per file; Python's json only
builds the template once.
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT = os.path.join(ROOT, "tests/report/traces/own_pool_took_memory.jax_h200.jsonl")
PID, WALL, WALL_NS, RANK = 987654321, 1111111111, 222222222, 55555
BASE_WALL = None  # the real trace's start time: the ranks start around it


def dumps(e):
    return json.dumps(e, separators=(",", ":"))


def load(path):
    return [json.loads(l) for l in open(path, encoding="utf-8", errors="surrogateescape") if l.strip()]


def placeholders(evs):
    """Marks the per-rank fields with numbers found nowhere else."""
    global BASE_WALL
    old = evs[0].get("pid")
    BASE_WALL = BASE_WALL or evs[0].get("wall_time") or 1790000000
    for e in evs:
        if e.get("pid") == old:
            e["pid"] = PID
        if e.get("tid") == old:
            e["tid"] = PID
        for h in e.get("holders", []) or []:
            if h.get("pid") == old:
                h["pid"] = PID
        if e["ev"] == "start":
            e.update(host="__HOST__", rank=RANK, wall_time=WALL, wall_time_ns=WALL_NS)
            e.setdefault("env", {})["RANK"] = str(RANK)
    return evs


def pad(evs, size, crash_at=None):
    """Repeats the benign middle events until the file is about `size` bytes."""
    fail = [i for i, e in enumerate(evs) if e["ev"] in ("code_load_failed", "alloc_failed", "call_failed",
                                                        "cudnn_handle") and e.get("ok") is not True
            and e["ev"] != "start"]
    body = [i for i, e in enumerate(evs) if e["ev"] == "graph_plan"] or \
           [i for i, e in enumerate(evs) if e["ev"] not in ("start", "exit") and i not in fail]
    at = body[-1] + 1 if body else len(evs)
    text = "".join(dumps(e) + "\n" for e in evs)
    unit = sum(len(dumps(evs[i])) + 1 for i in body) or 1
    reps = max(0, (size - len(text) + unit // 2) // unit)
    extra = [dict(evs[i]) for _ in range(reps) for i in body]
    out = evs[:at] + extra + evs[at:]
    shift = len(extra)
    for k, e in enumerate(out):
        if k >= at + shift and "seq" in e:
            e = out[k] = dict(e, seq=e["seq"] + shift)
            if isinstance(e.get("last_failure"), int):
                e["last_failure"] += shift
    for k in range(at, at + shift):
        out[k]["seq"] = evs[body[-1]]["seq"] + 1 + (k - at) if body else k
    return out


def victim(evs, mode):
    """The trace of a rank that did not fail itself: no failure, then killed 600 s on."""
    keep = [e for e in evs if e["ev"] not in ("code_load_failed", "alloc_failed", "call_failed", "exit",
                                              "context_failed", "conv_exec_failed", "graph_exec_failed")
            and not (e["ev"] == "cudnn_handle" and e.get("ok") is False)
            and not (e["ev"] == "dlopen" and e.get("ok") is False)]
    keep = [dict(e, seq=k) for k, e in enumerate(keep)]  # no gaps: nothing was lost, it never happened
    last = max(e.get("t", 0) for e in keep)
    seq = len(keep)
    if mode == "abort":
        keep.append({"ev": "crash", "seq": seq, "t": round(last + 600.0, 6), "pid": PID, "tid": PID,
                     "signal": 6, "signal_name": "SIGABRT", "code": -6, "code_name": "SI_TKILL",
                     "addr": None, "thread": "pt_nccl_watchdg", "unwinder": "glibc",
                     "backtrace": [{"module": "/usr/lib/x86_64-linux-gnu/libc.so.6", "offset": "0x9eb2c"},
                                   {"module": "/opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so",
                                    "offset": "0x12ab34"}],
                     "last_failure": None, "next": "default"})
    else:  # killed by SIGKILL: the trace just stops, 600 s later
        keep.append({"ev": "graph_plan", "seq": seq, "t": round(last + 600.0, 6), "pid": PID, "tid": PID,
                     "fn": "cudnnBackendExecute", "plan": 1, "graph": 1, "engine": 0, "workspace": 0})
    return keep


def odd_cudnn(evs):
    out = []
    for e in evs:
        e = json.loads(dumps(e))
        if e["ev"] == "lib" and e.get("family") == "cudnn":
            e["path"] = "/usr/lib/x86_64-linux-gnu/" + os.path.basename(e["path"])
            if "version" in e:
                e["version"] = 91400
        out.append(e)
    return out


def render(evs):
    return "".join(dumps(e) + "\n" for e in evs).encode("utf-8", "surrogateescape")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=1000)
    ap.add_argument("--hosts", type=int, default=126)
    ap.add_argument("--size", type=int, default=200000, help="bytes per file (about)")
    ap.add_argument("--trace", default=DEFAULT)
    ap.add_argument("--second", default=os.path.join(ROOT, "tests/report/traces/handle_no_driver.jsonl"))
    ap.add_argument("--scenario", default="same", choices=["same", "odd", "two", "cascade"])
    ap.add_argument("--odd", type=int, default=37)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    base = placeholders(load(a.trace))
    tmpl = {"same": render(pad(base, a.size))}
    if a.scenario == "odd":
        tmpl["odd"] = render(pad(odd_cudnn(base), a.size))
    if a.scenario == "two":
        tmpl["second"] = render(pad(placeholders(load(a.second)), a.size))
    if a.scenario == "cascade":
        tmpl["abort"] = render(pad(victim(base, "abort"), a.size))
        tmpl["kill"] = render(pad(victim(base, "kill"), a.size))
    total = 0
    for r in range(a.ranks):
        kind = "same"
        if a.scenario == "odd" and r == a.odd:
            kind = "odd"
        elif a.scenario == "two" and r >= a.ranks // 2:
            kind = "second"
        elif a.scenario == "cascade" and r != a.odd:
            kind = "kill" if r % 3 == 2 else "abort"
        host = "node%d" % (r * a.hosts // a.ranks)
        pid = 10000 + r % 7919
        wall_ns = 222222222 + ((r + 500) * 7919 % 1000) * 3000000  # up to 3 s apart, not in rank order
        wall, wall_ns = BASE_WALL + wall_ns // 10**9, wall_ns % 10**9
        body = (tmpl[kind].replace(b"987654321", b"%d" % pid)
                .replace(b'"__HOST__"', b'"%s"' % host.encode())
                .replace(b'"rank":55555', b'"rank":%d' % r).replace(b'"RANK":"55555"', b'"RANK":"%d"' % r)
                .replace(b'"wall_time":1111111111,"wall_time_ns":222222222',
                         b'"wall_time":%d,"wall_time_ns":%d' % (wall, wall_ns)))
        with open(os.path.join(a.out, "%s-r%d-%d.jsonl" % (host, r, pid)), "wb") as f:
            f.write(body)
        total += len(body)
    print("%d files, %.1f MB in %s" % (a.ranks, total / 1e6, a.out))


if __name__ == "__main__":
    sys.exit(main())
