"""kernel_session.py - starts a kernel from its kernelspec with jupyter_client
(as Jupyter does), runs cells in it, and writes what each printed as JSON.

Usage: python kernel_session.py KERNEL_NAME CWD OUT.json CELL...
(JUPYTER_PATH says where the kernelspec is.)  Each cell's result: its text
(stdout, stderr, text/plain) and its text/html, and whether it raised."""
import json
import sys

from jupyter_client.manager import start_new_kernel


def run_cell(kc, code):
    msg_id = kc.execute(code)
    out = {"code": code, "text": "", "html": "", "error": None}
    while True:
        msg = kc.get_iopub_msg(timeout=120)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        t, c = msg["msg_type"], msg["content"]
        if t == "stream":
            out["text"] += c["text"]
        elif t in ("execute_result", "display_data"):
            out["text"] += c["data"].get("text/plain", "") + "\n"
            out["html"] += c["data"].get("text/html", "")
        elif t == "error":
            out["error"] = "%s: %s" % (c["ename"], c["evalue"])
        elif t == "status" and c["execution_state"] == "idle":
            return out


def main(name, cwd, dest, *cells):
    km, kc = start_new_kernel(kernel_name=name, cwd=cwd, startup_timeout=120)
    try:
        results = [run_cell(kc, code) for code in cells]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    with open(dest, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:])
