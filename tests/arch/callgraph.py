#!/usr/bin/env python3
"""callgraph.py - the file-to-file call graph of a built tree (issue 16's measure).

Usage: tests/arch/callgraph.py [--check] [--max-circle N] [--max-up N] TREE...
  TREE is a source folder (shim, tools); its objects are read from build/TREE/
  (same relative paths, .c -> .o).  An edge A -> B means an object of A uses a
  symbol that B defines (from `gcc-nm`, which reads LTO objects too).

Layers: where TREE holds a file LAYERS (one folder name per line, lowest
first; '#' starts a comment), a call from a file in a lower folder to one in a
higher folder is an "up-call".  Files at TREE's top level are the highest layer.
Without LAYERS every edge inside a circle counts as an up-call (some edge of a
circle must run up, whatever the order).

Includes: every `#include "X"` of the tree's .c and .h files, resolved as the
compiler does (the includer's folder, then TREE/), is an edge too; one that
resolves outside TREE (tools/ naming shim/'s tables) is not counted.  A header
has its folder's layer; one at TREE's top level is of the top layer, unless a
line `shared: NAME...` of LAYERS names it: a table every layer reads, below
them all (so it may include only other shared ones).  An include of a header
of a higher layer is an "up-include": the compiler would let that file call
the higher layer, whatever the objects show today.

Prints: files, edges, each circle (strongly connected set of files) with its
edges, each up-call with its symbols, each up-include, and a summary line.
--check exits 1 when a circle holds more than --max-circle files (default 2),
there are more than --max-up up-calls (default 5), or any up-include.
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

DEF_TYPES = set("TDBRVWGSuiv")  # defined here (text, data, bss, rodata, weak, unique, ifunc)


def symbols(obj):
    out = subprocess.run(["gcc-nm", "--defined-only", obj], capture_output=True, text=True).stdout
    defined = {l.split()[-1] for l in out.splitlines() if len(l.split()) >= 3 and l.split()[-2] in DEF_TYPES}
    out = subprocess.run(["gcc-nm", "--undefined-only", obj], capture_output=True, text=True).stdout
    used = {l.split()[-1] for l in out.splitlines() if l.split()}
    return defined, used


def sources(tree):
    for root, _, files in os.walk(tree):
        for f in sorted(files):
            if f.endswith((".c", ".S")):
                yield os.path.relpath(os.path.join(root, f), tree)


def read_layers(tree):
    path = os.path.join(tree, "LAYERS")
    if not os.path.exists(path):
        return None
    names = [l.split("#")[0].strip() for l in open(path)]
    return [n for n in names if n and not n.startswith("shared:")]


def read_shared(tree):
    """The top-level headers LAYERS names on `shared:` lines."""
    path = os.path.join(tree, "LAYERS")
    if not os.path.exists(path):
        return set()
    out = set()
    for l in open(path):
        l = l.split("#")[0].strip()
        if l.startswith("shared:"):
            out.update(l[len("shared:"):].split())
    return out


INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def includes(tree):
    """(includer, included) for every quoted #include that names a file of the tree."""
    out = []
    for root, _, files in os.walk(tree):
        for f in sorted(files):
            if not f.endswith((".c", ".h", ".def", ".S")):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, tree)
            for line in open(path, errors="replace"):
                m = INCLUDE.match(line)
                if not m:
                    continue
                for cand in (os.path.join(root, m.group(1)), os.path.join(tree, m.group(1))):
                    if os.path.isfile(cand):
                        target = os.path.relpath(os.path.normpath(cand), tree)
                        if not target.startswith(".."):
                            out.append((rel, target))
                        break
    return out


def include_layer(rel, layers, shared):
    """A file's layer for the include check: a shared top-level table is below every layer."""
    if os.sep not in rel and rel in shared:
        return -1
    return layer_of(rel, layers)


def layer_of(rel, layers):
    top = rel.split(os.sep)[0] if os.sep in rel else ""
    return layers.index(top) if top in layers else len(layers)


def circles(nodes, edges):
    """Tarjan's strongly connected components, iterative."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = n[0]; n[0] += 1; stack.append(start); on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        x = stack.pop(); on.discard(x); comp.append(x)
                        if x == v:
                            break
                    out.append(sorted(comp))
            elif w not in index:
                index[w] = low[w] = n[0]; n[0] += 1; stack.append(w); on.add(w)
                work.append((w, iter(sorted(edges[w]))))
            elif w in on:
                low[v] = min(low[v], index[w])
    return out


def analyse(tree, build):
    files = list(sources(tree))
    defs, uses = {}, {}
    for rel in files:
        obj = os.path.join(build, tree, os.path.splitext(rel)[0] + ".o")
        if not os.path.exists(obj):
            sys.exit("callgraph: %s is missing: run make first" % obj)
        defs[rel], uses[rel] = symbols(obj)
    owner = {}
    for rel in files:
        for s in defs[rel]:
            owner.setdefault(s, rel)
    edges, via = defaultdict(set), defaultdict(set)
    for rel in files:
        edges[rel]
        for s in uses[rel]:
            o = owner.get(s)
            if o and o != rel:
                edges[rel].add(o)
                via[(rel, o)].add(s)
    comps = [c for c in circles(files, edges) if len(c) > 1]
    layers = read_layers(tree)
    up = []
    if layers is not None:
        for a in files:
            for b in edges[a]:
                if layer_of(a, layers) < layer_of(b, layers):
                    up.append((a, b))
    else:
        member = {f: i for i, c in enumerate(comps) for f in c}
        for a in files:
            for b in edges[a]:
                if a in member and member.get(b) == member[a]:
                    up.append((a, b))
    up_inc, inc = [], sorted(set(includes(tree)))
    if layers is not None:
        shared = read_shared(tree)
        for a, b in inc:
            if include_layer(a, layers, shared) < include_layer(b, layers, shared):
                up_inc.append((a, b))
    return files, edges, via, comps, up, layers, up_inc, inc


def main(argv):
    check, max_circle, max_up, trees = False, 2, 5, []
    args = iter(argv)
    for a in args:
        if a == "--check":
            check = True
        elif a == "--max-circle":
            max_circle = int(next(args))
        elif a == "--max-up":
            max_up = int(next(args))
        else:
            trees.append(a.rstrip("/"))
    build = os.environ.get("BUILD", "build")
    bad = False
    for tree in trees or ["shim", "tools"]:
        files, edges, via, comps, up, layers, up_inc, inc = analyse(tree, build)
        nedges = sum(len(v) for v in edges.values())
        print("== %s: %d files, %d file-to-file edges, %d include edges, layers: %s" %
              (tree, len(files), nedges, len(inc), " < ".join(layers + ["(top)"]) if layers is not None else "none (flat)"))
        for c in comps:
            print("circle of %d files: %s" % (len(c), " ".join(c)))
        for a, b in sorted(up):
            print("up-call %s -> %s: %s" % (a, b, " ".join(sorted(via[(a, b)]))))
        for a, b in up_inc:
            print("up-include %s -> %s" % (a, b))
        biggest = max([len(c) for c in comps] + [1])
        print("summary %s: largest circle %d files, %d circles, %d up-calls, %d up-includes" %
              (tree, biggest, len(comps), len(up), len(up_inc)))
        if biggest > max_circle or len(up) > max_up or up_inc:
            bad = True
    return 1 if (check and bad) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
