"""Prints what a trace directory says: libraries (path, version), calls per
hook, failures and verdicts. Used by tests/gpu/run.sh (no jq needed)."""
import json, sys, glob, collections
import os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracelib
for fname, evs in tracelib.traces(sys.argv[1]):
    start = evs[0]
    print("== %s  argv=%s" % (fname, " ".join(start.get("argv", []))[:100]))
    for e in evs:
        k = e.get("ev")
        if k == "lib":
            print("  lib %-28s v=%-6s built_for=%-6s %s" % (e.get("soname"), e.get("version", "-"),
                  e.get("cuda_built_for", "-"), e.get("path")))
        elif k in ("verdict", "lib_changed", "step_aside") or (k == "dlopen" and not e.get("ok")) or "failed" in k \
                or k in ("cudnn_handle", "conv_algos", "graph_plan", "fallback", "crash"):
            s = json.dumps({x: y for x, y in e.items() if x not in ("seq", "t", "pid", "tid", "candidates")})
            print("  " + s[:400])
        elif k == "exit":
            print("  exit calls=%s fails=%s failures=%s" % (json.dumps(e.get("calls")), json.dumps(e.get("fails")),
                                                          e.get("failures")))
            if "gpu_mem" in e:
                print("  gpu_mem=%s" % json.dumps(e["gpu_mem"]))
