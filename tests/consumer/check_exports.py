#!/usr/bin/env python3
"""What the shared libhaloswap exports (nm -D --defined-only) against what it may export, both
ways: the functions and variables the installed headers declare (include/*.h, read through the
C preprocessor), the global symbols of the Fortran modules' objects, and the C functions the
installed drop-in sources import themselves (bind(c) interfaces in fortran/<code>/). Anything
else exported (an internal hs__ or C-half hs_f_ function) fails, and so does anything declared
or imported but not exported.

usage: check_exports.py --lib libhaloswap.so --cc 'cc -I...' --headers h... [--fortran-objects
       o...] [--dropins f90...]"""
import argparse
import re
import shlex
import subprocess
import sys

# Defined by the linker in every shared object, not by haloswap.
LINKER = {"_end", "_edata", "__bss_start", "_init", "_fini"}
PREFIX = re.compile(r"^(hs_|haloswap_|HS_)")


def defined_globals(args):
    out = subprocess.run(["nm", "--defined-only", "--extern-only"] + args, check=True,
                         capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3 and f[1] not in "UwvN":
            names.add(f[2].split("@")[0])
    return names


def header_names(cc, headers):
    """Functions and variables the headers declare (prefix hs_/haloswap_/HS_), from the
    preprocessed text's top-level declarations."""
    src = "".join('#include "%s"\n' % h for h in headers)
    text = subprocess.run(shlex.split(cc) + ["-E", "-P", "-x", "c", "-"], input=src,
                          check=True, capture_output=True, text=True).stdout
    names, depth, stmt = set(), 0, ""
    for ch in text:
        if ch in "{}":
            depth += 1 if ch == "{" else -1  # struct and enum bodies are skipped
        elif depth:
            pass
        elif ch != ";":
            stmt += ch
        else:
            decl, stmt = " ".join(stmt.split()), ""
            if re.match(r"(typedef|static)\b", decl):
                continue
            m = re.search(r"\b((?:hs_|haloswap_|HS_)\w*)\s*\(", decl)
            if m and decl.index("(") == m.end() - 1:
                names.add(m.group(1))  # a function: the name before the first parenthesis
            elif m is None and decl.startswith("extern"):
                v = re.findall(r"\w+", decl)[-1]
                if PREFIX.match(v):
                    names.add(v)
    return names


def dropin_imports(files):
    """bind(c) names of interface blocks (C functions a drop-in calls itself)."""
    names = set()
    for f in files:
        inside = 0
        for line in open(f, encoding="utf-8", errors="replace"):
            code = line.split("!")[0].strip().lower()
            if re.match(r"(abstract\s+)?interface\b", code):
                inside += 1
            elif re.match(r"end\s*interface\b", code):
                inside -= 1
            elif inside:
                for n in re.findall(r'bind\s*\(\s*c\s*,\s*name\s*=\s*["\'](\w+)["\']', line, re.I):
                    names.add(n)
    return {n for n in names if PREFIX.match(n)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--headers", nargs="+", required=True)
    ap.add_argument("--fortran-objects", nargs="*", default=[])
    ap.add_argument("--dropins", nargs="*", default=[])
    a = ap.parse_args()

    exported = defined_globals(["-D", a.lib]) - LINKER
    header = header_names(a.cc, a.headers)
    fortran = defined_globals(a.fortran_objects) if a.fortran_objects else set()
    dropin = dropin_imports(a.dropins) - header
    allowed = header | fortran | dropin

    extra = sorted(exported - allowed)
    missing = sorted(allowed - exported)
    print("%s exports %d symbols: %d C functions of the headers (%d declared), %d of the "
          "Fortran modules, %d C functions the drop-ins import (%s)"
          % (a.lib, len(exported), len(exported & header), len(header), len(exported & fortran),
             len(exported & dropin), ", ".join(sorted(dropin)) or "none"))
    for n in extra:
        print("exported but not public: %s" % n)
    for n in missing:
        print("public but not exported: %s (%s)" % (n, "header" if n in header else
                                                     "Fortran module" if n in fortran else
                                                     "drop-in import"))
    if not header:
        print("no declarations found in %s" % " ".join(a.headers))
        return 1
    return 1 if extra or missing else 0


if __name__ == "__main__":
    sys.exit(main())
