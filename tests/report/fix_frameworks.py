#!/usr/bin/env python3
"""fix_frameworks.py CG PATH... - for every trace (a .jsonl file or a folder of them) given, the
headline's fix names no knob of a framework the traced processes did not run (issue 27 item 5).
The frameworks are read from the traces' own facts: library paths, callers, exit.frameworks, argv,
and the frameworks of the lines the program printed (the capture's rows); the knobs are
tests/gpu/corpus2/score.py's.  A set whose processes are Python with no framework seen is left out
(the report cannot tell whose knobs apply and names them all).  One line per trace: ok, BAD, or
skip; exit 1 when any is BAD."""
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gpu", "corpus2"))
import score  # noqa: E402

PRINTED = {"PyTorch": "PyTorch", "JAX": "JAX", "XLA": "JAX", "TensorFlow": "TensorFlow", "CuPy": "CuPy",
           "Triton": "Triton"}


def files_of(path):
    if os.path.isdir(path):
        return glob.glob(os.path.join(path, "*.jsonl")) + glob.glob(os.path.join(path, "*", "*.jsonl"))
    return [path]


def frameworks(path, rep):
    fws = set()
    tmp = path if os.path.isdir(path) else None
    if tmp:
        fws |= score.detect_frameworks(tmp)
    else:
        d = os.path.join(os.environ["WORK"], "one")
        os.makedirs(d, exist_ok=True)
        for f in glob.glob(os.path.join(d, "*")):
            os.unlink(f)
        os.symlink(os.path.abspath(path), os.path.join(d, "t.jsonl"))
        fws |= score.detect_frameworks(d)
    if any("-packages/triton/" in l for f in files_of(path) for l in open(f, errors="replace")):
        fws.add("Triton")
    # the rows of patterns.def the program printed name their framework; XLA's words are
    # TensorFlow's too, so they count for JAX only where neither is seen otherwise
    row_fw = {rid: fw for rid, _k, fw, _rx in score.load_patterns()}
    for p in rep.get("processes") or []:
        for line in ((p.get("captured") or {}).get("lines") or []):
            fw = row_fw.get(line.get("pattern"), "")
            if "XLA" in fw:
                if not fws & {"JAX", "TensorFlow"}:
                    fws.add("JAX")
                continue
            fws |= {v for k, v in PRINTED.items() if k in fw}
    return fws


def pythons_only(path):
    for f in files_of(path):
        for line in open(f, errors="replace"):
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("ev") == "start":
                exe = e.get("exe") or ""
                if exe.startswith("/") and not os.path.basename(exe).startswith("python"):
                    return False
    return True


def main(cg, paths):
    bad = 0
    for path in paths:
        r = subprocess.run([cg, "report", "--json", path], capture_output=True, text=True)
        try:
            rep = json.loads(r.stdout)
        except ValueError:
            continue
        fs = rep.get("findings") or []
        if not fs:
            continue
        fws = frameworks(path, rep)
        if not fws and pythons_only(path):
            print("skip %s (Python, no framework seen)" % path)
            continue
        knobs = score.foreign_knobs(fs[0].get("fix"), fws)
        if knobs:
            bad += 1
            print("BAD  %s: %s (frameworks: %s): %s" % (path, fs[0].get("rule"), " ".join(sorted(fws)) or "none",
                                                       ", ".join(knobs)))
        else:
            print("ok   %s" % path)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
