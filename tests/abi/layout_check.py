#!/usr/bin/env python3
"""Layout checks of every bind(c) copy of a public C struct (tests/abi/CMakeLists.txt).

The structs come from the headers themselves (include/haloswap.h, haloswap_ra.h), parsed at
build time; the copies from the Fortran sources given. A bind(c) type is a copy of a struct
if it has the struct's name (a trailing _c or _t aside) or shares two or more member names
with it. For every copy, generated programs print sizeof and offsetof of the struct (C) and
c_sizeof and the member offsets of the copy (Fortran, its type block pasted verbatim); the
compare step asserts they agree, one check per size and per member. Python sources are
scanned too: a struct layout written out by hand (ctypes.Structure, a Cython struct outside
a `cdef extern from` block of the headers) is an error.

  layout_check.py generate OUT_DIR HEADER... -- SOURCE...
  layout_check.py compare OUT_DIR C_PROGRAM FORTRAN_PROGRAM
"""
import json
import os
import re
import subprocess
import sys


def header_structs(path):
    """{struct name: [member names in order]} of every typedef struct {...} name;."""
    text = open(path).read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    structs = {}
    for m in re.finditer(r"typedef\s+struct\s*\w*\s*\{(.*?)\}\s*(\w+)\s*;", text, re.S):
        members = []
        for decl in m.group(1).split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            parts = decl.split(",")
            for i, p in enumerate(parts):
                p = re.sub(r"\[[^\]]*\]", "", p).replace("*", " ")
                ids = re.findall(r"[A-Za-z_]\w*", p)
                if ids:
                    members.append(ids[-1])
        structs[m.group(2)] = members
    return structs


def fortran_types(path):
    """[(type name, member names, type block text)] of every bind(c) derived type."""
    lines = open(path, errors="replace").read().splitlines()
    found = []
    i = 0
    while i < len(lines):
        m = re.match(r"\s*type\s*,\s*bind\s*\(\s*c\s*\)\s*(?:,[^:]*)?::\s*(\w+)", lines[i], re.I)
        if not m:
            i += 1
            continue
        name, block, members = m.group(1), [lines[i]], []
        i += 1
        stmt = ""
        while i < len(lines) and not re.match(r"\s*end\s*type", lines[i], re.I):
            block.append(lines[i])
            code = lines[i].split("!")[0].rstrip()
            stmt += code.rstrip("&") + " "
            if not code.endswith("&"):
                if "::" in stmt:
                    decl = stmt.split("::", 1)[1]
                    depth, cur, names = 0, "", []
                    for ch in decl:  # top-level commas separate the entities
                        depth += ch in "([" 
                        depth -= ch in ")]"
                        if ch == "," and depth == 0:
                            names.append(cur)
                            cur = ""
                        else:
                            cur += ch
                    names.append(cur)
                    for n in names:
                        ident = re.match(r"\s*([A-Za-z_]\w*)", n)
                        if ident:
                            members.append(ident.group(1))
                stmt = ""
            i += 1
        if i < len(lines):
            block.append(lines[i])
        found.append((name, members, "\n".join(block)))
        i += 1
    return found


def python_mirrors(path):
    """Hand-written struct layouts in a Python or Cython source: [(line, text)]."""
    bad, extern_indent = [], None
    for no, line in enumerate(open(path, errors="replace").read().splitlines(), 1):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if extern_indent is not None and stripped and indent <= extern_indent:
            extern_indent = None
        if re.match(r"cdef\s+extern\s+from\s+\"haloswap(_ra)?\.h\"", stripped):
            extern_indent = indent
            continue
        if re.search(r"ctypes\.Structure|_fields_\s*=", stripped):
            bad.append((no, stripped))
        elif extern_indent is None and re.match(r"(cdef|ctypedef)\s+(packed\s+)?struct\s+hs_", stripped):
            bad.append((no, stripped))
    return bad


def mirror_of(name, members, structs):
    base = re.sub(r"_(c|t)$", "", name.lower())
    for s in structs:
        if s.lower() == base:
            return s
    best, shared = None, 1
    for s, cm in structs.items():
        n = len({m.lower() for m in members} & {m.lower() for m in cm})
        if n > shared:
            best, shared = s, n
    return best


def generate(out, headers, sources):
    structs = {}
    for h in headers:
        structs.update(header_structs(h))
    if not structs:
        sys.exit(f"layout_check: no struct found in {headers}")
    mirrors, python_bad = [], []
    for src in sources:
        if src.endswith((".py", ".pyx", ".pxd")):
            python_bad += [(src, no, t) for no, t in python_mirrors(src)]
            continue
        for name, members, block in fortran_types(src):
            s = mirror_of(name, members, structs)
            if s:
                mirrors.append({"source": src, "type": name, "struct": s, "members": members,
                                "block": block})
    os.makedirs(out, exist_ok=True)
    c = ["/* Generated by tests/abi/layout_check.py: do not edit. */", "#include <stddef.h>",
         "#include <stdio.h>", '#include "haloswap.h"', '#include "haloswap_ra.h"',
         "int main(void) {"]
    f = ["! Generated by tests/abi/layout_check.py: do not edit.", "program abi_layout_f",
         "  use, intrinsic :: iso_c_binding", "  implicit none"]
    body = []
    for k, mi in enumerate(mirrors):
        s = mi["struct"]
        c.append(f'  printf("{k} size %zu\\n", sizeof({s}));')
        cmembers = {m.lower(): m for m in structs[s]}
        # Renamed: two sources may declare types of the same name.
        f.append(re.sub(rf"\b{mi['type']}\b", f"abi_t{k}", mi["block"], flags=re.I))
        f.append(f"  type(abi_t{k}), target :: v{k}")
        body.append(f"  print '(a,i0)', '{k} size ', c_sizeof(v{k})")
        for m in mi["members"]:
            if m.lower() in cmembers:
                c.append(f'  printf("{k} {m.lower()} %zu\\n", offsetof({s}, {cmembers[m.lower()]}));')
            body.append(f"  print '(a,i0)', '{k} {m.lower()} ', "
                        f"transfer(c_loc(v{k}%{m}), 0_c_intptr_t) - transfer(c_loc(v{k}), 0_c_intptr_t)")
    c += ["  return 0;", "}"]
    f += body + ["end program abi_layout_f"]
    open(os.path.join(out, "abi_layout_c.c"), "w").write("\n".join(c) + "\n")
    open(os.path.join(out, "abi_layout_f.F90"), "w").write("\n".join(f) + "\n")
    manifest = {"structs": structs, "mirrors": [{k: v for k, v in m.items() if k != "block"}
                                                for m in mirrors],
                "python": python_bad, "sources": len(sources)}
    json.dump(manifest, open(os.path.join(out, "manifest.json"), "w"), indent=1)


def run(prog):
    out = subprocess.run([prog], capture_output=True, text=True, check=True).stdout
    vals = {}
    for line in out.splitlines():
        k, key, v = line.split()
        vals[(int(k), key)] = int(v)
    return vals


def compare(out, cprog, fprog):
    man = json.load(open(os.path.join(out, "manifest.json")))
    cv, fv = run(cprog), run(fprog)
    checks = failed = 0
    for k, mi in enumerate(man["mirrors"]):
        where = f"{mi['source']}: type {mi['type']} (copy of {mi['struct']})"
        checks += 1
        if cv[(k, "size")] != fv[(k, "size")]:
            failed += 1
            print(f"FAIL: {where}: c_sizeof {fv[(k, 'size')]} /= sizeof({mi['struct']}) "
                  f"{cv[(k, 'size')]}")
        for m in mi["members"]:
            checks += 1
            m = m.lower()
            if (k, m) not in cv:
                failed += 1
                print(f"FAIL: {where}: member {m} is not a member of {mi['struct']}")
            elif cv[(k, m)] != fv[(k, m)]:
                failed += 1
                print(f"FAIL: {where}: member {m} at offset {fv[(k, m)]}, in C at {cv[(k, m)]}")
        missing = [m for m in man["structs"][mi["struct"]]
                   if m.lower() not in {x.lower() for x in mi["members"]}]
        if missing:
            print(f"note: {where} leaves out {', '.join(missing)}")
    for src, no, text in man["python"]:
        failed += 1
        print(f"FAIL: {src}:{no}: a struct layout written by hand ({text}); declare it in a "
              "cdef extern from \"haloswap.h\" block")
    print(f"layout checks: {checks} ({len(man['mirrors'])} bind(c) copies of "
          f"{len(man['structs'])} public structs, in {man['sources']} sources), {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "generate" and "--" in sys.argv:
        sep = sys.argv.index("--")
        generate(sys.argv[2], sys.argv[3:sep], sys.argv[sep + 1:])
    elif len(sys.argv) == 5 and sys.argv[1] == "compare":
        sys.exit(compare(*sys.argv[2:]))
    else:
        sys.exit(__doc__)
