"""What the graph (backend) API layer wrote, per trace file (tests/gpu/run.sh
graph section; no jq on the GPU machine):
   python3 tests/gpu/graph_summary.py TRACE_DIR"""
import json, sys, glob, collections
import os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracelib

def short_ops(ops):
    out = []
    for o in ops or []:
        ts = ",".join("%s%s:%s" % (t.get("role", t.get("attr", "?")), "x".join(map(str, t.get("dims", []))),
                                   (t.get("dtype") or "?").replace("CUDNN_DATA_", "").lower())
                      for t in o.get("tensors", []))
        out.append("%s(%s)" % (o.get("op"), ts))
    return " + ".join(out)

def mib(b):
    return "null" if b is None else "%.1fMiB" % (b / 2**20)

for fname, evs in tracelib.traces(sys.argv[1]):
    kinds = collections.Counter(e.get("ev") for e in evs)
    graphish = {k: v for k, v in kinds.items() if k.startswith("graph") or k == "call_failed"}
    print("== %s  argv=%s" % (fname, " ".join(evs[0].get("argv", []))[:90]))
    print("  events: %d lines; graph-layer events %s" % (len(evs), json.dumps(graphish, sort_keys=True)))
    for e in evs:
        k = e.get("ev")
        if k == "graph_plan":
            print("  graph_plan   plan %s graph %s engine %s knobs %s rank %s ws %s | tried %s finalized %s "
                  "not_supported %s other %s heur %s | finalized ws %s | %s" % (
                      e.get("plan"), e.get("graph"), e.get("engine"),
                      ",".join("%s=%s" % (k_["knob"], k_["value"]) for k_ in e.get("knobs", [])) or "-",
                      e.get("heuristics_rank", "-"), mib(e.get("workspace")), e.get("plans_tried"),
                      e.get("plans_finalized"), e.get("plans_not_supported"), e.get("plans_failed_other"),
                      e.get("heuristics_returned"), [mib(w) for w in e.get("finalized_workspaces", [])],
                      short_ops(e.get("ops"))))
        elif k in ("graph_finalize_failed", "graph_all_plans_failed", "graph_exec_failed", "call_failed",
                   "alloc_failed", "cudnn_handle"):
            s = json.dumps({x: y for x, y in e.items() if x not in ("seq", "t", "pid", "tid", "ops", "candidates")})
            print("  %s  %s" % (k, s[:600]))
            if e.get("ops"):
                print("      ops: %s" % short_ops(e.get("ops")))
        elif k == "exit":
            g = e.get("graph")
            calls = e.get("calls", {})
            print("  exit failures=%s fails=%s" % (e.get("failures"), json.dumps(e.get("fails"))))
            print("  exit calls (graph API): %s" % json.dumps({c: n for c, n in calls.items() if "Backend" in c or "LastError" in c}))
            mem = {c: n for c, n in calls.items() if c.startswith("cuMem") or c.startswith("cudaMalloc") or "EntryPoint" in c or "ProcAddress" in c}
            print("  exit calls (memory, entry points): %s" % json.dumps(mem))
            if g:
                plans = g.pop("plans", [])
                print("  exit graph: %s" % json.dumps(g))
                for p in plans[:20]:
                    print("    plan %s graph %s engine %s ws %s executions %s" % (
                        p.get("plan"), p.get("graph"), p.get("engine"), mib(p.get("workspace")), p.get("executions")))
            if "gpu_mem" in e:
                print("  exit gpu_mem: %s" % json.dumps(e["gpu_mem"]))
