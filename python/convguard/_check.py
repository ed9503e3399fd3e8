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
import tempfile

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


def _body(doc):
    """What is between <body> and </body> of a page the command wrote."""
    m = re.search(r"<body>(.*)</body>", doc, re.S)
    return m.group(1) if m else doc


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
        """A self-contained page (no external resources): inspect's, with the
        trace's report below it."""
        if self._html is None:
            with tempfile.TemporaryDirectory(prefix="convguard-check-") as d:
                page = os.path.join(d, "inspect.html")
                _run(["inspect", "--html", page, str(self.pid)], _INSPECT_DESCRIBED)
                with open(page, encoding="utf-8") as f:
                    doc = f.read()
                doc = doc.replace("<title>convguard report</title>", "<title>convguard check</title>", 1)
                doc = doc.replace("<h1>convguard report</h1>",
                                  "<h1>convguard check: pid %d, running now</h1>" % self.pid, 1)
                # a snapshot has no time: its timeline lane is empty; the headline counts the trace too
                doc = re.sub(r"<h2>Timeline</h2>.*?</svg>\n", "", doc, count=1, flags=re.S)
                doc = re.sub(r"<p>[0-9]+ process(es)? on [0-9]+ hosts?: .*?</p>",
                             lambda m: "<p>%s</p>" % html.escape(self.headline().split(": ", 1)[1]), doc, count=1)
                if self.trace_path:
                    tpage = os.path.join(d, "trace.html")
                    _run(["report", "--html", tpage, self.trace_path])
                    with open(tpage, encoding="utf-8") as f:
                        body = _body(f.read()).replace(
                            "<h1>convguard report</h1>",
                            "<h1>Its trace so far</h1>\n<p><code>%s</code></p>" % html.escape(self.trace_path), 1)
                    doc = doc.replace("</body>", body + "</body>", 1)
                elif not self.preloaded:
                    doc = doc.replace("</body>", "<p>convguard is not preloaded in this process: no trace. "
                                      "<code>convguard kernel install --user</code> adds a Jupyter kernel that "
                                      "preloads it.</p>\n</body>", 1)
                self._html = doc
        return self._html

    def _repr_html_(self):
        # in an iframe: the page's own style stays out of the notebook's
        return ('<iframe class="convguard-check" srcdoc="%s" style="width:100%%;height:%dpx;border:0" '
                'onload="this.style.height=(this.contentWindow.document.body.scrollHeight+40)+\'px\'">'
                '</iframe>' % (html.escape(self.html(), quote=True), 600))


def check(pid=None):
    return Check(os.getpid() if pid is None else int(pid))
