#!/usr/bin/env python3
"""long_functions.py - the functions of a source tree longer than N lines (issue 16, item 4).

Usage: tests/arch/long_functions.py [--max N] [--count] [--check] TREE...
  Lists each function of TREE's .c files (recursively; TREE may be one file) whose definition, from
  the line of its name to its closing brace, is longer than --max lines
  (default 60), longest first, as `LINES FILE:LINE NAME`, then a summary line
  `summary: K functions over N lines in TREE...`.  --count prints only the
  number; --check exits 1 when any is listed.

A simple scan, not a parser: comments, strings, character constants and
preprocessor lines are blanked first, then each brace block at the top level
is a function when the text before it ends with a parameter list `(...)`.
A block after `=` is an initialiser (a table), and one after `struct`,
`union` or `enum` a type: neither is counted.
"""
import os
import re
import signal
import sys


def blank(src):
    """src with comments, strings, char constants and preprocessor lines made
    spaces (newlines kept, so line numbers hold)."""
    out, i, n = [], 0, len(src)
    line_start = True
    while i < n:
        c = src[i]
        if line_start and c in " \t":
            out.append(c); i += 1; continue
        if line_start and c == "#":  # a directive, with its continuation lines
            while i < n and src[i] != "\n":
                if src[i] == "\\" and i + 1 < n and src[i + 1] == "\n":
                    out.append(" \n"); i += 2; continue
                if src.startswith("/*", i):  # a comment inside a directive may span lines
                    j = src.find("*/", i + 2); j = n if j < 0 else j + 2
                    out.append(re.sub(r"[^\n]", " ", src[i:j])); i = j; continue
                out.append(" "); i += 1
            continue
        line_start = False
        if src.startswith("/*", i):
            j = src.find("*/", i + 2); j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j])); i = j
        elif src.startswith("//", i):
            j = src.find("\n", i); j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else " "); i = j
        else:
            if c == "\n":
                line_start = True
            out.append(c); i += 1
    return "".join(out)


HEADER = re.compile(r"([A-Za-z_]\w*)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)*$", re.S)


def functions(path):
    """(name, first line, lines) of each top-level function of the file."""
    text = blank(open(path, encoding="utf-8", errors="replace").read())
    depth, head_start, head, found = 0, 0, "", []
    head_from = 0  # where the text before the current top-level block starts
    for i, c in enumerate(text):
        if c == "{":
            if depth == 0:
                head_start, head = head_from, text[head_from:i]
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                head_from = i + 1
                m = HEADER.search(head.rstrip())
                typed = re.search(r"\b(struct|union|enum)\s*\w*\s*$", head)
                if m and "=" not in head[m.start():] and not typed:
                    first = text.count("\n", 0, head_start + m.start()) + 1
                    last = text.count("\n", 0, i) + 1
                    found.append((m.group(1), first, last - first + 1))
        elif c == ";" and depth == 0:
            head_from = i + 1
    return found


def main(argv):
    limit, count_only, check, trees = 60, False, False, []
    args = iter(argv)
    for a in args:
        if a == "--max":
            limit = int(next(args))
        elif a == "--count":
            count_only = True
        elif a == "--check":
            check = True
        else:
            trees.append(a)
    if not trees:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    long = []
    for tree in trees:
        paths = [tree] if os.path.isfile(tree) else \
            [os.path.join(root, f) for root, _, files in os.walk(tree) for f in sorted(files) if f.endswith(".c")]
        for p in paths:
            long += [(n, p, line, name) for name, line, n in functions(p) if n > limit]
    long.sort(key=lambda x: (-x[0], x[1], x[2]))
    if count_only:
        print(len(long))
    else:
        for n, p, line, name in long:
            print(f"{n:5d} {p}:{line} {name}")
        print(f"summary: {len(long)} functions over {limit} lines in {' '.join(trees)}")
    return 1 if check and long else 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends it quietly
    sys.exit(main(sys.argv[1:]))
