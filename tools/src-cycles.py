#!/usr/bin/env python3
"""Include and call cycles among the files of src/ (docs/design.md, "Layers").

  python3 tools/src-cycles.py BUILD_DIR      (e.g. build/openmpi, after a build)

Includes: the #include "..." graph of src/'s .c and .h files. Calls: a file calls another if
its object file needs a function the other defines (nm); a reference to a data symbol (a
transport's ops table in the registry) is not a call, nor is a call through an ops table.
Prints each cycle (a strongly connected component of more than one file) and exits 1 if any.
"""
import os
import re
import subprocess
import sys


def sccs(graph):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def include_graph(root):
    files = {}
    for d, _, names in os.walk(os.path.join(root, "src")):
        for f in names:
            if f.endswith((".c", ".h")):
                files.setdefault(f, []).append(os.path.relpath(os.path.join(d, f), root))
    graph = {}
    for paths in files.values():
        for p in paths:
            deps = set()
            for m in re.finditer(r'^#include "([^"]+)"', open(os.path.join(root, p)).read(), re.M):
                for q in files.get(os.path.basename(m.group(1)), []):
                    deps.add(q)
            graph[p] = deps
    return graph


def call_graph(build, root):
    defs, needs = {}, {}
    for d, _, names in os.walk(build):
        for f in names:
            top = os.path.relpath(d, build).split(os.sep)[0]
            if not f.endswith(".c.o") or "_objs.dir" not in d or top not in ("CMakeFiles", "src"):
                continue  # the library's objects, not those of a test's nested build
            obj = os.path.join(d, f)
            src = obj.split("_objs.dir/", 1)[1][:-2]
            src = os.path.normpath(src.replace("__/", "../"))
            if not src.startswith("src/") or not os.path.exists(os.path.join(root, src)):
                continue  # not src/'s, or the stale object of a moved file
            out = subprocess.run(["nm", obj], capture_output=True, text=True).stdout
            for line in out.splitlines():
                parts = line.split()
                if len(parts) == 3 and parts[1] == "T":
                    defs[parts[2]] = src
                elif len(parts) == 2 and parts[0] == "U":
                    needs.setdefault(src, set()).add(parts[1])
    return {s: {defs[n] for n in ns if n in defs and defs[n] != s} for s, ns in needs.items()}


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "openmpi")
    bad = 0
    for kind, graph in (("include", include_graph(root)), ("call", call_graph(build, root))):
        cyc = sccs(graph)
        print("%s cycles among src files: %d" % (kind, len(cyc)))
        for c in cyc:
            print("  " + " <-> ".join(c))
        bad += len(cyc)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
