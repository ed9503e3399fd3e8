"""What the driverlog section checks in a trace directory: the driver_log events, the failure
events tied to them, the code images, and exit's counts.  Usage: drvlog_summary.py DIR [expect]
expect: 'none' (a run that worked: no driver_log event), 'status=N' (a driver_log or failure
event with that status).  Prints PASS/FAIL lines."""
import sys, glob, json
d, expect = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
evs = []
for f in sorted(glob.glob(d + "/*.jsonl")):
    for line in open(f, errors="replace"):
        try:
            evs.append(json.loads(line))
        except ValueError:
            print("   bad line in", f)
for e in evs:
    if e.get("ev") == "lib" and e.get("family") == "driver":
        print("   lib %s version=%s driver_log=%s" % (e["path"], e.get("version"), e.get("driver_log")))
logs = [e for e in evs if e.get("ev") == "driver_log"]
for e in logs[:12]:
    extra = ""
    if "status" in e:
        extra = " [fn=%s status=%s %s hooked=%s]" % (e.get("fn"), e["status"], e.get("status_name"), e.get("hooked"))
    if "code_no_fit" in e:
        extra += " code_no_fit=" + json.dumps([x["image"] for x in e["code_no_fit"]])
    print("   driver_log #%d tid=%d %s: %r%s" % (e["seq"], e["tid"], e.get("level"), e["message"], extra))
if len(logs) > 12:
    print("   ... %d driver_log events in all" % len(logs))
for e in evs:
    if e.get("ev", "").endswith("_failed") or e.get("ev") == "call_failed":
        print("   %s #%d fn=%s status=%s %s driver_log=%s image=%s" % (e["ev"], e["seq"], e.get("fn"), e.get("status"),
              e.get("status_name"), e.get("driver_log"), json.dumps(e.get("image"))))
for e in evs:
    if e.get("ev") == "exit":
        print("   exit pid %d: failures=%s driver_log=%s code_images=%s" % (e["pid"], e.get("failures"),
              json.dumps(e.get("driver_log")), json.dumps(e.get("code_images"))))
if expect == "none":
    print("   %s no driver_log event (%d)" % ("PASS" if not logs else "FAIL", len(logs)))
elif expect.startswith("status="):
    st = int(expect[7:])
    hit = [e for e in evs if e.get("status") == st]
    print("   %s an event with status %d (%d)" % ("PASS" if hit else "FAIL", st, len(hit)))
    print("   %s the driver's words are in the trace" % ("PASS" if any("status" not in e for e in logs) or logs else "FAIL"))
