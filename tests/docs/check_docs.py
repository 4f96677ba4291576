#!/usr/bin/env python3
"""Compile every C and Fortran example in README.md and docs/*.md against the installed
haloswap (pkg-config), and run the complete programs on 2 ranks.

What a block is depends on its content and on an HTML comment on the line(s) before the fence:
  <!-- fragment -->      not compiled (pieces of a larger context, pseudo-code)
  <!-- compile-only -->  a complete program that is compiled but not run
  <!-- run: N -->        a complete program run on N ranks (default for complete programs: 2)
Otherwise:
  - a complete program (C: defines main; Fortran: has a `program` unit) is compiled and run;
  - a C block that declares the API (prototypes, typedef struct ... hs_x;) is compiled at file
    scope after haloswap.h: prototypes must match the header's, and every documented struct
    member must exist in the real struct with the same type;
  - any other C block is compiled as the body of a function in which the names the docs use
    without declaring them (d, pd, p, plan, f, buf, ...) exist;
  - any other Fortran block is compiled inside a program that uses mpi_f08 and haloswap.
Usage: check_docs.py --root SRC --work DIR --cc CC --fc FC --mpiexec MPIEXEC [--oversubscribe F]
(PKG_CONFIG_PATH must find haloswap.pc and haloswap-fortran.pc; haloswap-ra-fortran.pc if present.)
"""
import argparse
import glob
import os
import re
import shlex
import subprocess
import sys

FENCE = re.compile(r"^(\s*)```\s*([A-Za-z0-9+]*)\s*$")
MARK = re.compile(r"<!--\s*(fragment|compile-only|run:\s*(\d+))\s*-->")
C_LANGS = {"c"}
F_LANGS = {"fortran", "f90", "f08"}


def blocks(path):
    """Yield (line of first code line, language, code, marker) for every fenced block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang = m.group(2).lower()
        start = i + 1
        j = start
        while j < len(lines) and not FENCE.match(lines[j]):
            j += 1
        marker = None
        k = i - 1
        while k >= 0 and lines[k].strip() == "":
            k -= 1
        if k >= 0:
            mm = MARK.search(lines[k])
            if mm:
                marker = mm.group(1)
        yield start + 1, lang, "\n".join(lines[start:j]) + "\n", marker
        i = j + 1


def pkg(args):
    out = subprocess.run(["pkg-config"] + args, check=True, capture_output=True, text=True).stdout
    return shlex.split(out)


def strip_comments(code):
    code = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
    return re.sub(r"//[^\n]*", " ", code)


def member_names(body):
    """Names declared in a struct body: the last identifier of each declarator."""
    names = []
    for decl in strip_comments(body).split(";"):
        decl = decl.strip()
        if not decl:
            continue
        declarators = decl.split(",")
        for n, dcl in enumerate(declarators):
            dcl = re.sub(r"\[[^\]]*\]", "", dcl)
            ids = re.findall(r"[A-Za-z_]\w*", dcl)
            if ids and (n > 0 or len(ids) > 1):
                names.append(ids[-1])
    return names


def c_declarations(code, tag):
    """File-scope form of an API synopsis block; None if the block is not one."""
    text = strip_comments(code)
    if re.search(r"^\s*(if|for|while|return)\b|=\s*[^=]", text, flags=re.M):
        return None
    out = []
    pos = 0
    checks = []
    for m in re.finditer(r"typedef\s+struct\s*\{(.*?)\}\s*(\w+)\s*;", code, flags=re.S):
        out.append(code[pos:m.start()])
        doc_name = "%s_%s" % (m.group(2), tag)
        out.append("typedef struct {%s} %s;" % (m.group(1), doc_name))
        for name in member_names(m.group(1)):
            checks.append(
                '_Static_assert(__builtin_types_compatible_p(__typeof__(((%s *)0)->%s), '
                '__typeof__(((%s *)0)->%s)), "documented member %s.%s differs from haloswap.h");'
                % (m.group(2), name, doc_name, name, m.group(2), name))
        pos = m.end()
    out.append(code[pos:])
    rest = strip_comments(code[pos:]) if not checks else strip_comments("".join(out))
    # Only declarations left: every statement ends in ')' (a prototype) or is a typedef.
    for stmt in re.sub(r"typedef\s+struct\s*\{.*?\}\s*\w+\s*;", "", rest, flags=re.S).split(";"):
        s = stmt.strip()
        if s and not re.search(r"\)\s*$", s) and not s.startswith("typedef"):
            return None
    return "".join(out) + "\n" + "\n".join(checks) + "\n"


C_PRELUDE = """#include <haloswap.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
"""

# Names the docs' snippets use without declaring them.
C_CONTEXT = """  hs_decomp d = NULL; hs_plan p = NULL, plan = NULL; hs_plan_desc pd; hs_plan_desc_init(&pd);
  hs_decomp_desc dd; hs_decomp_desc_init(&dd); double *u = NULL; char buf[1024] = "";
  hs_field f = hs_field_array(HS_FLOAT64, u, HS_LAYOUT_ZFAST, 1); hs_plan_stats st;
  int nx = 4, ny = 4, nz = 4, rc = 0; MPI_Comm comm = MPI_COMM_WORLD;
  (void)d; (void)p; (void)plan; (void)dd; (void)buf; (void)f; (void)st; (void)nx; (void)ny;
  (void)nz; (void)rc; (void)comm;
"""


def c_source(path, line, code, tag):
    """(source text, kind): kind is program, declarations or snippet."""
    includes = [l for l in code.split("\n") if l.strip().startswith("#include")]
    body = "\n".join(l if not l.strip().startswith("#include") else "" for l in code.split("\n"))
    loc = '#line %d "%s"\n' % (line, path)
    if re.search(r"\bint\s+main\s*\(", code):
        return loc + code, "program"
    decl = c_declarations(body, tag)
    head = C_PRELUDE + "\n".join(includes) + "\n"
    if decl is not None:
        return head + loc + decl + "int main(void) { return 0; }\n", "declarations"
    return (head + "static void doc_example(int argc, char **argv) {\n" + C_CONTEXT + "  {\n"
            + loc + body + "\n  }\n}\nint main(int argc, char **argv) {\n"
            "  (void)doc_example; (void)argc; (void)argv; return 0;\n}\n"), "snippet"


def f_source(code):
    if re.search(r"^\s*program\s+\w+", code, flags=re.M | re.I):
        return code, "program"
    uses = [l for l in code.split("\n") if re.match(r"\s*use\b", l, flags=re.I)]
    rest = [l for l in code.split("\n") if not re.match(r"\s*use\b", l, flags=re.I)]
    src = ("program doc_example\n  use, intrinsic :: iso_c_binding\n  use mpi_f08\n  use haloswap\n"
           + "\n".join(uses) + "\n" + "\n".join(rest) + "\nend program doc_example\n")
    return src, "snippet"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--fc", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--oversubscribe", default="")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    c_flags = pkg(["--cflags", "haloswap"])
    c_libs = pkg(["--libs", "haloswap"])
    have_f = subprocess.run(["pkg-config", "--exists", "haloswap-fortran"]).returncode == 0
    # haloswap-ra-fortran (use haloswap_ra) brings haloswap-fortran with it.
    f_pc = "haloswap-ra-fortran" if subprocess.run(
        ["pkg-config", "--exists", "haloswap-ra-fortran"]).returncode == 0 else "haloswap-fortran"
    f_flags = pkg(["--cflags", f_pc]) if have_f else []
    f_libs = pkg(["--libs", f_pc]) if have_f else []
    files = [os.path.join(a.root, "README.md")] + sorted(glob.glob(os.path.join(a.root, "docs", "*.md")))
    counts = {"compiled": 0, "ran": 0, "fragment": 0, "failed": 0}
    for path in files:
        rel = os.path.relpath(path, a.root)
        for line, lang, code, marker in blocks(path):
            if lang not in C_LANGS and lang not in F_LANGS:
                continue
            where = "%s:%d (%s)" % (rel, line, lang)
            if marker == "fragment":
                counts["fragment"] += 1
                print("%-40s fragment, not compiled" % where)
                continue
            tag = re.sub(r"\W", "_", "%s_%d" % (rel, line))
            exe = os.path.join(a.work, tag)
            if lang in C_LANGS:
                src, kind = c_source(path, line, code, "doc%d" % line)
                srcfile = exe + ".c"
                cmd = [a.cc, "-std=c11", "-Wall", "-Wno-unused", "-Wno-unused-but-set-variable"] + c_flags + [
                    srcfile, "-o", exe] + c_libs
            else:
                if not have_f:
                    print("%-40s skipped: no Fortran interface in this build" % where)
                    continue
                src, kind = f_source(code)
                srcfile = exe + ".f90"
                cmd = [a.fc, "-ffree-line-length-none"] + f_flags + ["-J", a.work, srcfile, "-o", exe] + f_libs
            with open(srcfile, "w") as fh:
                fh.write(src)
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                counts["failed"] += 1
                print("%-40s FAILED to compile (%s):\n%s%s" % (where, srcfile, r.stdout, r.stderr))
                continue
            counts["compiled"] += 1
            ranks = None
            if kind == "program" and marker != "compile-only":
                ranks = int(re.search(r"\d+", marker).group(0)) if marker and marker.startswith("run") else 2
            if ranks is None:
                print("%-40s compiled (%s)" % (where, kind))
                continue
            run = [a.mpiexec] + ([a.oversubscribe] if a.oversubscribe else []) + ["-n", str(ranks), exe]
            try:
                r = subprocess.run(run, capture_output=True, text=True, timeout=120)
                ok = r.returncode == 0
                out = r.stdout + r.stderr
            except subprocess.TimeoutExpired:
                ok, out = False, "timed out after 120 s\n"
            if ok:
                counts["ran"] += 1
                print("%-40s compiled, ran on %d ranks" % (where, ranks))
            else:
                counts["failed"] += 1
                print("%-40s FAILED on %d ranks:\n%s" % (where, ranks, out))
    print("docs examples: %(compiled)d compiled, %(ran)d of them run, %(fragment)d fragments, "
          "%(failed)d failed" % counts)
    return 1 if counts["failed"] or counts["compiled"] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
