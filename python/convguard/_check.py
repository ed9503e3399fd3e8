"""convguard.check(): `convguard inspect` of the calling process, and its
trace so far when the shim is preloaded (`convguard report` of that file).

Everything is computed by the native command in a child process: the rules
are the report's one table (tools/rules.def), and this process loads no CUDA
library and calls nothing that could initialise CUDA.  The child runs with
libconvguard.so taken out of LD_PRELOAD, so it writes no trace of its own.
"""
import html
import json
import os
import re
import subprocess

from . import binary_path

# `convguard inspect` exit statuses (docs/cli.md): these still describe the process
_INSPECT_DESCRIBED = (0, 1, 6)


def _child_env():
    env = dict(os.environ)
    pre = env.get("LD_PRELOAD")
    if pre is not None:
        keep = [p for p in re.split(r"[:\s]+", pre) if p and os.path.basename(p) != "libconvguard.so"]
        if keep:
            env["LD_PRELOAD"] = " ".join(keep)
        else:
            del env["LD_PRELOAD"]
    return env


def _run(args, ok=(0, 1)):
    p = subprocess.run([binary_path()] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=_child_env(), universal_newlines=True)
    if p.returncode not in ok:
        raise RuntimeError("convguard %s: exit status %d: %s" % (args[0], p.returncode, p.stderr.strip()))
    return p


# ---- the page, from the JSON models
def _shown(v):
    """v as text, as the terminal shows it (tools/util/term.c): C0 and C1
    controls and DEL as \\xNN / \\u00NN, so nothing of a trace acts on the page"""
    s = "" if v is None else str(v)
    return re.sub("[\x00-\x1f\x7f]", lambda m: "\\x%02x" % ord(m.group(0)),
                  re.sub("[\x80-\x9f]", lambda m: "\\u%04x" % ord(m.group(0)), s))


def _h(v):
    return html.escape(_shown(v), quote=True)


def _code(v):
    """a text of convguard's: its `commands` in backticks as <code> (as report --html)"""
    parts = _shown(v).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick stays as it is
        parts[-2:] = [parts[-2] + "`" + parts[-1]]
    return "".join(("<code>%s</code>" if i % 2 else "%s") % html.escape(p, quote=True) for i, p in enumerate(parts))


def _size(b):
    """bytes as the command writes them (tools/util/util.c fmt_size): 1020 MiB, 1.5 GiB"""
    if b is None or b < 0:
        return "size not known"
    if b >= 1 << 30:
        return "%.1f GiB" % (b / float(1 << 30))
    if b >= 1 << 20:
        return "%.0f MiB" % (b / float(1 << 20))
    return "%.0f KiB" % (b / 1024.0) if b >= 1024 else "%d bytes" % b


_STYLE = """body{font-family:sans-serif;margin:16px;color:#222;background:#fff;max-width:1000px}
h1{font-size:20px} h2{font-size:16px;margin-top:22px}
.problem{border-left:6px solid #c62828;padding:6px 12px;margin:10px 0;background:#fff5f5}
.problem.warning{border-color:#ef6c00;background:#fff8ee} .problem.note{border-color:#78909c;background:#f5f7f8}
.layer{font-size:12px;background:#444;color:#fff;padding:1px 6px;border-radius:3px}
dt{font-weight:bold;margin-top:4px} dd{margin-left:16px} code{background:#eee;padding:0 3px;border-radius:3px}
table{border-collapse:collapse;margin:6px 0} td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}
td.num{text-align:right;white-space:nowrap} .ok{color:#2e7d32;font-weight:bold} figcaption{font-weight:bold;margin:6px 0}
figure{margin:10px 0} svg{border:1px solid #ddd;background:#fcfcfc;display:block}
.m{font-family:'DejaVu Sans Mono',Menlo,Consolas,'Liberation Mono',monospace;font-size:11px;fill:#333} .in{fill:#fff}
.reqt{fill:#b71c1c} .lead{stroke:#888;fill:none} .frame{fill:none;stroke:#555} .seg{stroke:#fff;stroke-width:.5}
.mo0{fill:#6a1b9a;background:#6a1b9a} .mo1{fill:#8d6e63;background:#8d6e63} .mo2{fill:#ad1457;background:#ad1457}
.mo3{fill:#4527a0;background:#4527a0} .mo4{fill:#00838f;background:#00838f} .mo5{fill:#827717;background:#827717}
.mp0{fill:#1565c0;background:#1565c0} .mp1{fill:#1e88e5;background:#1e88e5} .mp2{fill:#0d47a1;background:#0d47a1}
.mself{fill:#64b5f6;background:#64b5f6} .munk{fill:#9e9e9e;background:#9e9e9e} .zused{fill:#bdbdbd}
.mfree{fill:#43a047;background:#43a047} .req{fill:#e53935;background:#e53935} .reqover{fill:#b71c1c}
span.sw{display:inline-block;width:12px;height:12px;vertical-align:middle} small{color:#555}"""

_W, _BX, _BW, _BH, _PX = 960, 10, 940, 30, 11


def _tw(text):
    """a monospace text's width (as html.c: 0.61 em a column, two for a character that is not ASCII)"""
    return sum(1 if ord(c) < 128 else 2 for c in text) * 0.61 * _PX


def _fit(text, cols):
    """text cut to `cols` columns, "..." when cut (as html.c shown_fit)"""
    if sum(1 if ord(c) < 128 else 2 for c in text) <= cols:
        return text
    out, n = "", 0
    for c in text:
        n += 1 if ord(c) < 128 else 2
        if n > cols - 3:
            break
        out += c
    return out + "..."


def _svg_text(x, y, text, cls="m", anchor=None):
    return '<text x="%.1f" y="%d" class="%s"%s>%s</text>\n' % (
        x, y, cls, ' text-anchor="%s"' % anchor if anchor else "", _h(text))


def _place(rows, x0, x1, lead, gap=6):
    """the first of 6 rows where a text [x0, x1] with a leader at `lead` down to
    it clears the texts of its row, covers no leader running past it, and its
    leader crosses no text above (html.c row_for_lead); None: not drawn"""
    for row in range(6):
        if all(not (r == row and x0 < e + gap and b < x1 + gap) and not (r > row and x0 - 2 <= ld <= x1 + 2)
               and not (r < row and b - 2 <= lead <= e + 2) for b, e, ld, r in rows):
            rows.append((x0, x1, lead, row))
            return row
    return None


def _memory_bar(pic):
    """One bar of the whole GPU (its parts in proportion to their bytes), the
    request from where free memory starts, the end enlarged when it is too
    thin to see, and a table of every part: report --html's picture, from
    the JSON's gpu_memory (analysis/memory.c)."""
    span, parts, req = pic["span"], pic["parts"], pic["request"]["bytes"]
    out, segs, at, no, npl = [], [], 0, 0, 0
    for p in parts:
        b = max(p["bytes"] or 0, 0)
        if p["kind"] == "other_process":
            cls, no = "mo%d" % (no % 6), no + 1
        elif p["kind"] == "pool":
            cls, npl = "mp%d" % (npl % 3), npl + 1
        else:
            cls = {"self": "mself", "unknown": "munk", "free": "mfree"}[p["kind"]]
        x0, x1 = _BX + at / span * _BW, _BX + (at + b) / span * _BW
        at += b
        label = _fit("%s %s" % (_shown(p["label"]), _size(p["bytes"])), int(_BW / (0.61 * _PX)))
        segs.append((x0, x1, cls, label, p))
        out.append('<rect x="%.2f" y="4" width="%.2f" height="%d" class="seg %s" data-bytes="%d"><title>%s</title></rect>\n'
                   % (x0, x1 - x0, _BH, cls, b, _h(label)))
    out.append('<rect x="%d" y="4" width="%d" height="%d" class="frame"/>\n' % (_BX, _BW, _BH))
    rows, y = [], 4 + _BH  # callouts: beside their leader, in rows that clear each other and the leaders
    for x0, x1, cls, label, p in segs:
        w, mid = _tw(label), (x0 + x1) / 2
        if (p["bytes"] or 0) <= 0 and p["kind"] != "free":
            continue
        if w + 8 <= x1 - x0:
            out.append(_svg_text(mid, 4 + _BH // 2 + 4, label, "m in", "middle"))
            continue
        lx = mid - 4 - w if mid > _W / 2 else mid + 4
        lx = min(max(lx, _BX), _BX + _BW - w)
        row = _place(rows, lx, lx + w, mid)
        if row is None:
            continue
        ty = y + 14 + row * 14
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="lead"/>\n' % (mid, y, mid, ty - 4))
        out.append(_svg_text(lx, ty, label))
    y += 6 + (max(r for *_, r in rows) + 1 if rows else 0) * 14
    free_x = segs[-1][0]
    free = pic["free"]
    if req and req > 0:
        y += 4
        end = free_x + req / span * _BW
        clip = min(end, _BX + _BW)
        out.append('<rect x="%.2f" y="%d" width="%.2f" height="12" class="req" data-bytes="%d"><title>asked: %s</title></rect>\n'
                   % (free_x, y, clip - free_x, req, _h(pic["request"]["text"])))
        if end > _BX + _BW:
            out.append('<path d="M%d %d l8 6 l-8 6 z" class="reqover"/>\n' % (_BX + _BW, y))
        line = ("asked for %s: %.1fx the %s free" % (_size(req), req / free, _size(free)) if free > 0
                else "asked for %s, with nothing free" % _size(req))
        tw = _tw(line)
        if clip + 14 + tw <= _W - 4:
            out.append(_svg_text(clip + 14, y + 10, line, "m reqt"))
        else:
            out.append(_svg_text(max(free_x - 6, tw + 4), y + 10, line, "m reqt", "end"))
        y += 18
    big = max(free, req or 0)
    if big / span * _BW < 40 and big > 0:
        rng = min(big * 3 // 2, span)
        used = max(rng - free, 0)
        y += 8
        out.append(_svg_text(_BX, y + 10, "the bar's last %s, %.0f times larger:" % (_size(rng), span / rng)))
        out.append('<path d="M%.1f %d L%d %d M%d %d L%d %d" class="lead"/>\n' % (
            _BX + (span - rng) / span * _BW, y - 2, _BX, y + 16, _BX + _BW, y - 2, _BX + _BW, y + 16))
        zy, zx = y + 16, _BW / rng
        fx = _BX + used * zx
        out.append('<rect x="%d" y="%d" width="%.2f" height="%d" class="seg zused" data-bytes="%d"><title>in use</title></rect>\n'
                   % (_BX, zy, fx - _BX, _BH, used))
        if _tw("in use") + 8 <= fx - _BX:
            out.append(_svg_text((_BX + fx) / 2, zy + _BH // 2 + 4, "in use", "m", "middle"))
        out.append('<rect x="%.2f" y="%d" width="%.2f" height="%d" class="seg mfree" data-bytes="%d"><title>free</title></rect>\n'
                   % (fx, zy, free * zx, _BH, free))
        fl = "free %s" % _size(free)
        if _tw(fl) + 8 <= free * zx:
            out.append(_svg_text(fx + free * zx / 2, zy + _BH // 2 + 4, fl, "m in", "middle"))
        else:
            out.append(_svg_text(fx - 6, zy + _BH // 2 + 4, fl, "m", "end"))
        y = zy + _BH
        if req and req > 0:
            clip = min(fx + req * zx, _BX + _BW)
            out.append('<rect x="%.2f" y="%d" width="%.2f" height="12" class="req" data-bytes="%d"><title>asked</title></rect>\n'
                       % (fx, y + 4, clip - fx, req))
            if fx + req * zx > _BX + _BW:
                out.append('<path d="M%d %d l8 6 l-8 6 z" class="reqover"/>\n' % (_BX + _BW, y + 4))
            out.append(_svg_text(fx - 6, y + 14, "asked %s" % _size(req), "m reqt", "end"))
            y += 16
    y += 8
    doc = ['<figure class="gpumem"><figcaption>%s</figcaption>\n' % _h(pic["title"]),
           '<svg xmlns="http://www.w3.org/2000/svg" class="membar" width="%d" height="%d" viewBox="0 0 %d %d">\n'
           % (_W, y, _W, y)] + out + ['</svg>\n<table><tr><th></th><th>who</th><th>bytes</th><th>share</th></tr>\n']
    for x0, x1, cls, label, p in segs:
        doc.append('<tr><td><span class="sw %s"></span></td><td>%s</td><td class="num">%s</td><td class="num">%s</td></tr>\n'
                   % (cls, _h(p["label"]), _size(p["bytes"]),
                      "%.1f%%" % (100.0 * p["bytes"] / span) if p["bytes"] is not None and p["bytes"] >= 0 else ""))
    if pic["request"]["text"] is not None:
        doc.append('<tr><td><span class="sw req"></span></td><td>asked: %s</td><td class="num">%s</td><td></td></tr>\n'
                   % (_h(pic["request"]["text"]), _size(req) if req is not None else ""))
    doc.append("</table>\n")
    if pic.get("note"):
        doc.append("<p><small>%s</small></p>\n" % _h(pic["note"]))
    return "".join(doc) + "</figure>\n"


def _now_picture(gpu, pid):
    """inspect's GPU memory (NVML now) as a picture of the same form: the other
    holders, this process, memory nobody listed holds, free"""
    m = gpu.get("mem") or {}
    total, free = m.get("total"), m.get("free")
    if not total or free is None:
        return None
    parts = [{"kind": "other_process", "label": "pid %s (%s)" % (h.get("pid"), h.get("name") or "not visible here"),
              "bytes": h.get("bytes")} for h in gpu.get("other_holders") or []]
    here = gpu.get("this_process_bytes") or 0
    parts.append({"kind": "self", "label": "this process (pid %d)" % pid, "bytes": here})
    rest = total - free - here - sum(max(p["bytes"] or 0, 0) for p in parts[:-1])
    if rest > 0:
        parts.append({"kind": "unknown", "label": "in use, not attributed (the driver, processes NVML does not list)",
                      "bytes": rest})
    parts.append({"kind": "free", "label": "free", "bytes": free})
    span = max(total, sum(max(p["bytes"] or 0, 0) for p in parts))
    return {"title": "GPU %s now: %s of %s free" % (gpu.get("index"), _size(free), _size(total)), "span": span,
            "total": total, "free": free, "parts": parts, "note": None,
            "request": {"bytes": None, "text": None}}


def _problem(f, label=None):
    sev = f.get("severity") or "error"
    out = ['<div class="problem %s"><span class="layer">%s</span> <b>%s</b> <small>(%s%s)</small><dl>'
           % (_h(sev), _h(f.get("layer")), _code(f.get("title")), _h(f.get("rule")),
              ", " + _h(f.get("who")) if f.get("who") else "")]
    for dt, key in (("you see", "symptom"), ("in the trace", "seen"), ("the driver said", "driver_said"),
                    ("cause", "cause"), ("fix", "fix"), ("after it", "went_on")):
        if f.get(key):
            out.append("<dt>%s</dt><dd>%s</dd>" % (dt, _code(f[key]) if key != "seen" else _h(f[key])))
    return "".join(out) + "</dl></div>\n"


def _findings(model):
    """a model's findings, one per group (its first), as the report tells them"""
    fs = model.get("findings") or []
    groups = model.get("groups")
    if groups is None:
        return fs
    return [fs[g["findings"][0]] for g in groups if g.get("findings")]


def _render(c):
    """the page of a Check: what is wrong first, then the process now, then its trace"""
    ins, rep = c.inspect, c.trace
    head = c.headline().split(": ", 2)[-1]
    out = ["<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" "
           "content=\"default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'\">\n"
           "<title>convguard check</title>\n<style>%s</style></head><body>\n" % _STYLE,
           "<h1>convguard check: pid %d, running now</h1>\n" % c.pid,
           "<p>%s</p>\n" % ('<span class="ok">no problem found</span>; ' + _h(head.split("; ", 1)[-1])
                            if not c.problems else "<b>%s</b>" % _h(head))]
    # (the trace's outcome is left out: the process is running, its trace has no end yet)
    if rep and rep.get("gpu_memory"):
        out.append("<h2>GPU memory at the failure</h2>\n")
        out += [_memory_bar(p) for p in rep["gpu_memory"]]
    problems = _findings(ins) + (_findings(rep) if rep else [])
    if problems:
        out.append("<h2>Problems</h2>\n")
        out += [_problem(f) for f in problems]
    # the process now: inspect's model
    out.append("<h2>This process now</h2>\n<p>%s</p>\n" % _h(ins.get("program")))
    libs = ins.get("libraries") or []
    if libs:
        out.append("<table><tr><th>library</th><th>file</th><th>version</th><th>folder</th></tr>\n")
        for l in libs:
            note = " (deleted on disk)" if l.get("deleted") else " (replaced on disk)" if l.get("replaced") else ""
            out.append("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s%s</td></tr>\n" % (
                _h(l.get("label")), _h(l.get("file")), _h(l.get("version_text") or "unknown"), _h(l.get("dir")), note))
        out.append("</table>\n")
    else:
        out.append("<p>no CUDA library mapped</p>\n")
    fws = ins.get("frameworks") or []
    out.append("<p><b>framework:</b> %s</p>\n" % ("; ".join(
        "%s (%s), %s" % (_h(f.get("label")), _h(f.get("build") or "build unknown"), _h(f.get("path"))) for f in fws)
        or "none seen (no PyTorch, TensorFlow, JAX, CuPy or onnxruntime object mapped)"))
    env = ins.get("env") or {}
    out.append("<p><b>CUDA_VISIBLE_DEVICES</b> %s</p>\n" % (
        "= <code>%s</code>" % _h(env["CUDA_VISIBLE_DEVICES"]) if "CUDA_VISIBLE_DEVICES" in env else "unset"))
    if env:
        out.append("<details><summary>environment: %d variables that matter</summary><table>\n" % len(env))
        out += ["<tr><td>%s</td><td><code>%s</code></td></tr>\n" % (_h(k), _h(v)) for k, v in sorted(env.items())]
        out.append("</table></details>\n")
    gpu = ins.get("gpu_memory") or {}
    if gpu.get("known"):
        for g in gpu.get("gpus") or []:
            pic = _now_picture(g, c.pid)
            if pic:
                out.append(_memory_bar(pic))
    else:
        out.append("<p><b>GPU memory:</b> unknown (%s)</p>\n" % _h(gpu.get("why") or "not read"))
    shim = ins.get("convguard") or {}
    if c.trace_path:
        out.append("<h2>Its trace so far</h2>\n<p><code>%s</code></p>\n" % _h(c.trace_path))
        for p in (rep or {}).get("processes") or []:
            fails = p.get("failures") or []
            out.append("<p>%s: %s</p>\n" % (_h(p.get("label")), "%d failure%s" % (len(fails), "" if len(fails) == 1 else "s")
                                            if fails else "no failure"))
            if fails:
                out.append("<ul>\n" + "".join("<li>%s</li>\n" % _h(f.get("text")) for f in fails[:20]) + "</ul>\n")
                if len(fails) > 20:
                    out.append("<p>and %d more</p>\n" % (len(fails) - 20))
    elif shim.get("preloaded"):
        out.append("<p>convguard is preloaded: nothing traced yet.</p>\n")
    else:
        out.append("<p>convguard is not preloaded in this process: no trace. <code>convguard kernel install --user"
                   "</code> adds a Jupyter kernel that preloads it.</p>\n")
    out.append("</body></html>\n")
    return "".join(out)


class Check:
    """The state of one process: `.to_dict()` the model, `str()` the text,
    `_repr_html_()` what Jupyter shows.  Attributes: pid, inspect (the
    `convguard inspect --json` model), trace_path, trace (the `convguard
    report --json` model of that file, or None), problems (a count)."""

    def __init__(self, pid):
        self.pid = pid
        p = _run(["inspect", "--json", str(pid)], _INSPECT_DESCRIBED)
        self.inspect = json.loads(p.stdout)
        self.no_cuda_note = p.stderr.strip() if p.returncode == 6 else ""
        shim = self.inspect.get("convguard") or {}
        self.preloaded = bool(shim.get("preloaded"))
        self.trace_path = shim.get("trace") or None
        self.trace = None
        if self.trace_path:
            self.trace = json.loads(_run(["report", "--json", self.trace_path]).stdout)
        self.problems = int(self.inspect.get("problems") or 0)
        if self.trace:
            self.problems += int(self.trace.get("problems") or 0)
        self._text = self._html = None

    def to_dict(self):
        return {"pid": self.pid, "inspect": self.inspect, "trace_path": self.trace_path, "trace": self.trace}

    def headline(self):
        n = self.problems
        where = ("its trace %s" % self.trace_path if self.trace_path else
                 "no trace: convguard is preloaded, but nothing traced yet" if self.preloaded else
                 "no trace: convguard is not preloaded here")
        return "convguard check: pid %d: %s; %s" % (
            self.pid, "%d problem%s" % (n, "" if n == 1 else "s") if n else "no problem found", where)

    def text(self):
        if self._text is None:
            parts = [self.headline(),
                     _run(["inspect", str(self.pid)], _INSPECT_DESCRIBED).stdout.rstrip("\n")]
            if self.no_cuda_note:
                parts.append(self.no_cuda_note)
            if self.trace_path:
                parts.append("its trace so far:\n" + _run(["report", self.trace_path]).stdout.rstrip("\n"))
            self._text = "\n".join(parts)
        return self._text

    def __str__(self):
        return self.text()

    def __repr__(self):
        return self.text()

    def _repr_pretty_(self, p, cycle):
        p.text(self.text())

    def html(self):
        """A self-contained page (no script, no external resources), drawn
        from the JSON models: what is wrong, the GPU's memory at the failure,
        the process now, its trace so far."""
        if self._html is None:
            self._html = _render(self)
        return self._html

    def _repr_html_(self):
        # in an iframe: the page's own style stays out of the notebook's
        return ('<iframe class="convguard-check" srcdoc="%s" style="width:100%%;height:%dpx;border:0" '
                'onload="this.style.height=(this.contentWindow.document.body.scrollHeight+40)+\'px\'">'
                '</iframe>' % (html.escape(self.html(), quote=True), 600))


def check(pid=None):
    return Check(os.getpid() if pid is None else int(pid))
