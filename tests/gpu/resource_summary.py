"""Prints the resource-layer lines of a trace directory (no jq needed): failed
cudnnCreate with its facts (the failed allocation, the holders; an older shim's likely cause), each algorithm lookup with
every algorithm's workspace against the free bytes, failed allocations with
route, size, free bytes and holders, and the exit's gpu_mem.
Used by tests/gpu/run.sh (section resource)."""
import glob
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracelib
import json
import sys

MiB = 1 << 20


def mib(v):
    if v is None:
        return "?"
    return "%d B" % v if v < MiB else "%.0f MiB" % (v / MiB)


def holders(e):
    h = e.get("holders")
    if h is None:
        return "holders: unknown (nvml: %s)" % e.get("nvml")
    return "holders: " + (", ".join("pid %s %s %s%s" % (x.get("pid"), x.get("name") or "?", mib(x.get("bytes")),
                                                         " (self)" if x.get("self") else "") for x in h) or "none")


for fname, evs in tracelib.traces(sys.argv[1]):
    print("== %s  %s" % (fname, " ".join(evs[0].get("argv", []))[:90]))
    shown_alloc = 0
    for e in evs:
        k = e.get("ev")
        mem = e.get("mem") or {}
        if k == "cudnn_handle" and not e.get("ok"):
            c = e.get("likely_cause") or {}
            print("  [%d] %s -> %s (%s) reason=%r free=%s/%s (%s) driver=%s cc=%s" % (
                e["seq"], e["fn"], e.get("status_name"), e.get("status"), e.get("reason"), mib(mem.get("free")),
                mib(mem.get("total")), mem.get("source"), e.get("driver"), e.get("compute_capability")))
            # the shim records facts; the cause is the report's (tools/analysis/diagnose.c), or an older shim's likely_cause
            if c:
                print("       likely_cause (older shim): %s -> seq %s: %s" % (c.get("kind"), c.get("seq"), c.get("detail")))
            print("       alloc_failure: %s others_bytes: %s driver_load_seq: %s" % (
                json.dumps(e.get("alloc_failure")), mib(e.get("others_bytes")), e.get("driver_load_seq")))
            print("       " + holders(e))
        elif k == "cudnn_handle":
            print("  [%d] %s ok" % (e["seq"], e["fn"]))
        elif k == "conv_algos":
            x, w = e.get("x") or {}, e.get("w") or {}
            print("  [%d] %s %s/%s -> %s sig=%s x=%s w=%s free=%s (%s)%s" % (
                e["seq"], e["fn"], e["op"], e["api"], e.get("status_name"), e.get("signature"), x.get("dims"),
                w.get("dims"), mib(mem.get("free")), mem.get("source"),
                " limit=%s" % mib(e.get("workspace_limit")) if "workspace_limit" in e else ""))
            for a in e.get("algos", []):
                ws, fr = a.get("workspace"), mem.get("free")
                cmp = "" if fr is None else (" > free" if ws > fr else " <= free")
                print("       algo %-22s %-45s %8s ms  workspace %s%s" % (
                    a.get("algo_name"), a.get("status_name"), a.get("time_ms"), mib(ws), cmp))
            if e.get("signature") or e.get("status"):
                print("       " + holders(e))
        elif k == "conv_exec_failed":
            print("  [%d] %s algo %s workspace %s -> %s reason=%r free=%s" % (
                e["seq"], e["fn"], e.get("algo_name"), mib(e.get("workspace")), e.get("status_name"),
                e.get("reason"), mib(mem.get("free"))))
        elif k == "alloc_failed":
            shown_alloc += 1
            if shown_alloc > 12:
                continue
            print("  [%d] %s(%s) via %s from %s+%s -> %s%s; free %s of %s (%s); live %s, largest ok %s" % (
                e["seq"], e["fn"], mib(e.get("bytes")), e.get("route"), (e.get("caller") or "?").split("/")[-1],
                e.get("caller_offset"), e.get("status_name"),
                " (driver: %s)" % e["driver_status_name"] if "driver_status_name" in e else "",
                mib(mem.get("free")), mib(mem.get("total")), mem.get("source"), mib(e.get("live")),
                mib(e.get("largest_ok"))))
            if "holders" in e:
                print("       " + holders(e))
        elif k == "exit" and "gpu_mem" in e:
            g = e["gpu_mem"]
            print("  exit gpu_mem: live %s allocs %s frees %s largest %s alloc_failures %s" % (
                mib(g.get("live")), g.get("allocs"), g.get("frees"), mib(g.get("largest_ok")),
                g.get("alloc_failures")))
    if shown_alloc > 12:
        print("  (%d more alloc_failed)" % (shown_alloc - 12))
