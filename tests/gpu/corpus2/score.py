#!/usr/bin/env python3
"""score.py - the report's score on the corpus2 cases (tests/gpu/corpus2/README.md).

    score.py OUTDIR [CASE...]          the cases record.sh ran into OUTDIR
    score.py --corpus DIR [--cg CG]    dry run on a corpus of recorded traces with accuracy.sh's
                                       `expect` files (tests/report/corpus): the same checks

One line per case: PASS, FAIL (with every check that failed) or SKIP (with why: the case cannot
fail here, or did not fail as planned); then "corpus2: N of M right", the rows of
tools/model/patterns.def the programs printed for real, and the rows not reproduced and why.

A case is reproduced when its program printed one of `printed:` (an `error` case), or
exited 0 (`ok`, `warning`, `clean`).  A reproduced case is right when the report's headline
(its first finding) holds:
  error    a problem was found (report exit 1, problems > 0), the headline is an error, of the
           `layer:`, its cause / fix / "you see" contain the words of `cause:` / `fix:` /
           `symptom:` and none of `not_cause:` / `not_fix:`
  ok       no finding is an error (notes and warnings may be)
  warning  at least one finding, none an error; the first has the words asked
  clean    no finding at all, nothing incomplete ("no problem found")
and, for every outcome, no fix names a knob of a framework the case does not run (`frameworks:`;
"C" for a program of one's own: none).  Words: `&&` between groups that must all match, `||`
between alternatives of a group; case is ignored."""
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
PATTERNS = os.path.join(ROOT, "tools", "model", "patterns.def")
NOT_HERE = os.path.join(HERE, "not-here.txt")
SKIP_MARK = "CORPUS2-SKIP:"

# what names a framework's own settings in a fix (case kept); URLs are taken out first
KNOBS = {
    "PyTorch": ["PyTorch:", "torch.", "PYTORCH_", "TORCH_", "torchrun", "map_location", "--nproc_per_node"],
    "JAX": ["JAX:", "jax.", "jax[", "XLA_PYTHON_CLIENT", "JAX_PLATFORMS"],
    "JAX or TensorFlow": ["XLA_FLAGS", "xla_gpu_"],  # XLA's own flags: both run XLA
    "TensorFlow": ["TensorFlow:", "tf.config", "set_memory_growth", "TF_FORCE_GPU_ALLOW_GROWTH", "TF_GPU_ALLOCATOR",
                   "allow_growth", "TF_CUDNN_"],
    "CuPy": ["CuPy:", "cupy.", "free_all_blocks", "CUPY_", "cupy-cuda"],
    "Triton": ["Triton:", "triton.", "num_stages", "num_warps"],
    "numba": ["numba.", "NUMBA_"],
}
# which framework a traced process ran, from its libraries and argv (as tools/rules/fw.c reads it)
MARKERS = {"PyTorch": ["-packages/torch/", "libtorch_", "libc10_cuda", "torchrun"],
           "TensorFlow": ["libtensorflow", "-packages/tensorflow/", "_pywrap_tensorflow"],
           "JAX": ["jax_cuda", "-packages/jaxlib/", "xla_cuda_plugin", "xla_extension", "jax_plugins"],
           "CuPy": ["-packages/cupy"], "Triton": ["-packages/triton/"], "numba": ["-packages/numba"]}


def c_unescape(s):
    return re.sub(r"\\(.)", lambda m: m.group(1), s)


def load_patterns(path=PATTERNS):
    """[(id, kind, framework, compiled matcher)] in table order."""
    text = open(path).read()
    q = r'"((?:[^"\\]|\\.)*)"'
    rows = []
    for m in re.finditer(r"MESSAGE\(\s*(\w+)\s*,\s*%s\s*,\s*%s\s*,\s*%s" % (q, q, q), text):
        pat = c_unescape(m.group(4))
        rx = re.compile(".*".join(re.escape(p) for p in pat.split("*")), re.I)
        rows.append((m.group(1), c_unescape(m.group(2)), c_unescape(m.group(3)), rx))
    return rows


def row_of(line, rows):
    for rid, kind, _fw, rx in rows:
        if rx.search(line):
            return rid, kind
    return None, None


def read_expect(path):
    exp = {}
    for line in open(path):
        m = re.match(r"^([a-z_]+):\s*(.*?)\s*$", line)
        if m and m.group(1) not in exp:
            exp[m.group(1)] = m.group(2)
    return exp


def groups(spec):
    """'a || b && c' -> [['a', 'b'], ['c']]"""
    return [[w.strip() for w in g.split("||") if w.strip()] for g in (spec or "").split("&&") if g.strip()]


def words_missing(spec, text, field):
    low = (text or "").lower()
    return ["%s lacks %s" % (field, " or ".join("'%s'" % w for w in g))
            for g in groups(spec) if not any(w.lower() in low for w in g)]


def words_present(spec, text, field):
    low = (text or "").lower()
    return ["%s says '%s'" % (field, w) for g in groups(spec) for w in g if w.lower() in low]


def foreign_knobs(fix, frameworks):
    """The knobs of frameworks not in `frameworks` that `fix` names.  Triton comes with PyTorch
    (torch.compile's kernels are Triton's): its knobs are PyTorch's process's own."""
    fix = re.sub(r"https?://\S+", "", fix or "")
    bad = []
    for fw, toks in KNOBS.items():
        owners = fw.split(" or ") + (["PyTorch"] if fw == "Triton" else [])
        if any(o in frameworks for o in owners):
            continue
        bad += ["%s's %s" % (fw, t.rstrip(":")) for t in toks if t in fix]
    return bad


def program_stderr(run_dir, err_file):
    """What the program itself printed on stderr: the capture `convguard run` kept, else the
    .err file without convguard's own lines and its report."""
    caps = sorted(glob.glob(os.path.join(run_dir, "*.stderr")) + glob.glob(os.path.join(run_dir, "*", "*.stderr")))
    if caps:
        out = []
        for c in caps:
            with open(c, errors="replace") as f:
                f.readline()  # the header
                out += [l for l in f.read().splitlines() if not l.startswith("convguard:")]  # the shim's own
        return "\n".join(out)
    try:
        lines = open(err_file, errors="replace").read().splitlines()
    except OSError:
        return ""
    kept = []
    for line in lines:
        if line.startswith("convguard report"):
            break
        if not line.startswith("convguard"):
            kept.append(line)
    return "\n".join(kept)


def last_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    pick = [l for l in lines if re.search(r"error|fail|exception|assert", l, re.I)]
    return ((pick or lines or ["(nothing)"])[-1]).strip()[:160]


def judge(exp, rep, frameworks, report_rc, corpus=False):
    """The checks that failed ([] = right) for a reproduced case."""
    why = []
    fs = rep.get("findings") or []
    f0 = fs[0] if fs else {}
    outcome = exp.get("outcome", "error")
    if corpus:
        if f0.get("rule") != exp.get("rule"):
            why.append("first finding is %s, not %s" % (f0.get("rule", "none"), exp.get("rule")))
    elif outcome == "error":
        if not fs or not rep.get("problems"):
            why.append("no problem found")
        elif f0.get("severity") != "error":
            why.append("the headline is a %s" % f0.get("severity"))
        if report_rc == 0:
            why.append("the report's exit status is 0")
    elif outcome in ("ok", "warning"):
        errs = [f.get("rule") for f in fs if f.get("severity") == "error"]
        if errs:
            why.append("a run that worked gets errors: %s" % " ".join(errs))
        if outcome == "warning" and not fs:
            why.append("nothing said (no note or warning)")
    elif outcome == "clean":
        if fs or rep.get("problems") or rep.get("incomplete"):
            why.append("not 'no problem found': %s%s" % (
                " ".join("%s(%s)" % (f.get("rule"), f.get("severity")) for f in fs),
                " incomplete" if rep.get("incomplete") else ""))
    if fs and outcome in ("error", "warning") or corpus:
        if exp.get("layer") and not any(f0.get("layer") == l for g in groups(exp["layer"]) for l in g):
            why.append("layer is %s, not %s" % (f0.get("layer"), exp["layer"]))
        why += words_missing(exp.get("cause"), f0.get("cause"), "cause")
        why += words_missing(exp.get("fix"), f0.get("fix"), "fix")
        why += words_missing(exp.get("symptom"), f0.get("symptom"), "you-see")
        why += words_present(exp.get("not_cause"), f0.get("cause"), "cause")
        why += words_present(exp.get("not_fix"), f0.get("fix"), "fix")
    if corpus and exp.get("symptom_prefix") and not (f0.get("symptom") or "").startswith(exp["symptom_prefix"]):
        why.append("you-see does not start with '%s'" % exp["symptom_prefix"])
    for n in (exp.get("not_rules") or []):
        if any(f.get("rule") == n for f in fs):
            why.append("also reports %s" % n)
    if fs:
        why += ["the fix names %s" % k for k in foreign_knobs(f0.get("fix"), frameworks)]
    return why


def headline(rep):
    fs = rep.get("findings") or []
    if not fs:
        return "[no finding]"
    f = fs[0]
    return "[%s %s %s] %s" % (f.get("rule"), f.get("layer"), f.get("severity"), (f.get("title") or "")[:90])


def captured_patterns(rep):
    return {l.get("pattern") for p in rep.get("processes") or [] for l in ((p.get("captured") or {}).get("lines") or [])}


def printed_rows(text, rows):
    got = []
    for line in text.splitlines():
        rid, kind = row_of(line, rows)
        if rid and kind != "benign" and rid not in got:
            got.append(rid)
    return got


def read_text(path):
    try:
        return open(path, errors="replace").read()
    except OSError:
        return ""


def score_case(c, out, rows):
    """(verdict, text, rows printed) for one case recorded under out."""
    exp_path = os.path.join(os.environ.get("CORPUS2_DIR", HERE), c, "expect")
    if not os.path.exists(exp_path):
        return "SKIP", "no such case", []
    exp = read_expect(exp_path)
    if exp.get("skip"):
        return "SKIP", "cannot be reproduced there: " + exp["skip"], []
    stdout = read_text(os.path.join(out, c + ".out"))
    err = program_stderr(os.path.join(out, c), os.path.join(out, c + ".err"))
    for line in (stdout + "\n" + err).splitlines():
        if line.startswith(SKIP_MARK):
            return "SKIP", line[len(SKIP_MARK):].strip(), []
    try:
        rc = int(read_text(os.path.join(out, c + ".rc")).strip())
    except ValueError:
        return "SKIP", "not run (no exit status in %s: the time budget, or not recorded)" % out, []
    outcome = exp.get("outcome", "error")
    # a kernel's assert message is the device's printf: it goes to stdout, which convguard never reads
    both = err + "\n" + stdout
    printed = printed_rows(both, rows)
    if outcome == "error":
        alts = [w for g in groups(exp.get("printed")) for w in g]
        hit = any(a.lower() in both.lower() for a in alts) if alts else rc != 0
        if not hit:
            return "SKIP", "did not fail as planned: exit %d; it printed: %s" % (rc, last_line(both)), []
    elif rc != 0:
        return "SKIP", "meant to work but failed here: exit %d: %s" % (rc, last_line(err)), []
    try:
        rep = json.load(open(os.path.join(out, c + ".json")))
    except (OSError, ValueError):
        return "FAIL", "exit %d; no report (convguard report --json gave nothing readable)" % rc, printed
    try:
        report_rc = int(read_text(os.path.join(out, c + ".report_rc")).strip())
    except ValueError:
        report_rc = None
    fws = exp.get("frameworks", "").replace(",", " ").split()
    why = judge(exp, rep, fws, report_rc)
    want = [r for r in exp.get("rows", "").split() if r != "-"]
    unclassified = [r for r in printed_rows(err, rows) if r in want and r not in captured_patterns(rep)]
    note = "; the report's capture does not classify %s" % " ".join(unclassified) if unclassified else ""
    others = ["%s: %s" % (f.get("rule"), ", ".join(foreign_knobs(f.get("fix"), fws)))
              for f in (rep.get("findings") or [])[1:] if foreign_knobs(f.get("fix"), fws)]
    if others:
        note += "; other findings' fixes name other frameworks' knobs (%s)" % "; ".join(others)
    t = read_text(os.path.join(out, c + ".secs")).strip()
    text = "exit %d%s, %s%s" % (rc, (", %ss" % t) if t else "", headline(rep), note)
    if rc in (124, 137):
        text += " (the run timed out)"
    return ("FAIL" if why else "PASS"), text + (": " + "; ".join(why) if why else ""), printed


def not_here():
    """[(row ids, why)] of not-here.txt, in its order."""
    out = []
    for line in read_text(NOT_HERE).splitlines():
        m = re.match(r"^(\S+)\s+(.*)$", line)
        if m and not line.startswith("#"):
            out.append((m.group(1).split(","), m.group(2)))
    return out


def score_outdir(out, cases):
    rows = load_patterns()
    cases_dir = os.environ.get("CORPUS2_DIR", HERE)
    if not cases:
        cases = sorted(d for d in os.listdir(cases_dir) if os.path.isfile(os.path.join(cases_dir, d, "expect")))
    right = total = 0
    skipped = []
    seen = []
    for c in cases:
        verdict, text, printed = score_case(c, out, rows)
        print("%-4s %-30s %s" % (verdict, c, text))
        if verdict == "SKIP":
            skipped.append(c)
            continue
        total += 1
        right += verdict == "PASS"
        seen += [r for r in printed if r not in seen]
    print("corpus2: %d of %d right; %d skipped (the SKIP lines say why)" % (right, total, len(skipped)))
    print("rows of tools/model/patterns.def the programs printed, failing for real: %d (issue 27 asks for 20 or more): %s"
          % (len(seen), " ".join(seen)))
    nh = not_here()
    listed = {r for ids, _w in nh for r in ids}
    print("rows that cannot be reproduced on the H200 (tests/gpu/corpus2/not-here.txt): %d" % len(listed - set(seen)))
    for ids, why in nh:
        ids = [r for r in ids if r not in seen]
        if ids:
            print("   %s: %s" % (why, " ".join(ids)))
    rest = [rid for rid, kind, _f, _r in rows if kind not in ("benign", "memory") and rid not in seen
            and rid not in listed]
    print("rows neither printed here nor listed as impossible: %d: %s" % (len(rest), " ".join(rest)))
    return right, total


def detect_frameworks(case_dir):
    """The frameworks the traced processes ran, read from the trace files as tools/rules/fw.c reads
    them: the paths of libraries, dlopen callers and names; exit.frameworks; argv."""
    names = {"torch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX", "cupy": "CuPy"}
    fws = set()
    for f in glob.glob(os.path.join(case_dir, "*.jsonl")) + glob.glob(os.path.join(case_dir, "*", "*.jsonl")):
        for line in open(f, errors="replace"):
            try:
                e = json.loads(line)
            except ValueError:
                continue
            text = " ".join(str(e.get(k) or "") for k in ("path", "needed_by", "caller", "name"))
            if e.get("ev") == "start":
                text += " " + " ".join(a for a in e.get("argv") or [] if isinstance(a, str))
            for fw, marks in MARKERS.items():
                if any(m in text for m in marks):
                    fws.add(fw)
            for n in (e.get("frameworks") or []) if e.get("ev") == "exit" else []:
                fws.add(names.get(n, n))
    return fws


def score_corpus(corpus, cg):
    """Dry run on recorded traces with accuracy.sh's expect files: rule, cause words, fix words, you-see
    prefix and not: rules as accuracy.sh reads them, and the fix's knobs."""
    rows = load_patterns()
    byid = {rid: rx for rid, _k, _f, rx in rows}
    right = total = 0
    for d in sorted(glob.glob(os.path.join(corpus, "*", "expect"))):
        case = os.path.dirname(d)
        name = os.path.basename(case)
        e = read_expect(d)
        exp = {"rule": e.get("rule"), "symptom_prefix": e.get("symptom"),
               "cause": " && ".join(w.strip() for w in (e.get("cause") or "").split("|") if w.strip()),
               "fix": " && ".join(w.strip() for w in (e.get("fix") or "").split("|") if w.strip()),
               "not_rules": [w.strip() for w in (e.get("not") or "").split("|") if w.strip()]}
        r = subprocess.run([cg, "report", "--json", case], capture_output=True, text=True)
        try:
            rep = json.loads(r.stdout)
        except ValueError:
            rep = {}
        total += 1
        err = program_stderr(case, "/nonexistent")
        if e.get("message") and e["message"] in byid and not any(byid[e["message"]].search(l) for l in err.splitlines()):
            print("FAIL %-34s the capture does not hold row %s's text" % (name, e["message"]))
            continue
        fws = detect_frameworks(case)
        why = judge(exp, rep, fws, r.returncode, corpus=True)
        right += not why
        print("%-4s %-34s %s (frameworks: %s)%s" % ("FAIL" if why else "PASS", name, headline(rep),
                                                   " ".join(sorted(fws)) or "C", (": " + "; ".join(why)) if why else ""))
    print("corpus (dry run): %d of %d right" % (right, total))
    return right, total


def main(argv):
    if argv[:1] == ["--corpus"]:
        cg = os.path.join(ROOT, "build", "convguard")
        if "--cg" in argv:
            cg = argv[argv.index("--cg") + 1]
        score_corpus(argv[1], cg)
        return 0
    if not argv or argv[0].startswith("-"):
        print(__doc__.split("\n\n")[1])
        return 2
    score_outdir(argv[0], argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
