#!/usr/bin/env python3
"""Keeps the docs true to the code: every public C function, type and constant, every Fortran
public entity, every environment variable the library reads and every option of every built
transport is documented, and every file and internal symbol docs/design.md names exists.
Beyond names, it compares what the docs state with the code:
  - every transport (each transport.cmake's hs_add_transport / hs_unbuilt_transport) appears in
    docs/design.md's layer diagram and in README.md's table of transports;
  - a number tied to a constant, written `N (`NAME`)` or `N unit, `NAME`` (unit KiB or MiB),
    equals the #define NAME in src/ or include/ (e.g. the reverse's piece size);
  - an option default stated in docs/*.md (a table with option and default columns, or
    `key=...` (default V)) equals the transport's, where the section or file names one.
Usage: test_doc_sync.py SOURCE_DIR HS_INFO_COMMAND...   (the command prints hs_info --markdown)"""
import glob, os, re, subprocess, sys

src, cmd = sys.argv[1], sys.argv[2:]
read = lambda p: open(os.path.join(src, p), encoding="utf-8").read()
api, design = read("docs/api.md"), read("docs/design.md")
ra_doc = read("docs/ra.md") if os.path.exists(os.path.join(src, "docs/ra.md")) else api
problems, checked = [], 0


def need(name, text, where):
    global checked
    checked += 1
    if not re.search(r"(?<![\w])" + re.escape(name) + r"(?![\w])", text):
        problems.append(f"{name} is not documented in {where}")


def public_c(header):
    text = re.sub(r"/\*.*?\*/", "", read(header), flags=re.S)
    names = set(re.findall(r"\b(hs_\w+)\s*\(", text))            # functions
    names |= set(re.findall(r"}\s*(hs_\w+)\s*;", text))          # typedef'd structs/enums
    names |= set(re.findall(r"typedef\s+[^;]*?\b(hs_\w+)\s*;", text))
    names |= set(re.findall(r"\b(HS_[A-Z0-9_]+)\b", text))        # constants
    names.discard("HALOSWAP_H")
    return {n for n in names if not n.endswith("_H") and n != "HS_RA_H"}


for n in sorted(public_c("include/haloswap.h")):
    need(n, api, "docs/api.md")
if os.path.exists(os.path.join(src, "include/haloswap_ra.h")):
    for n in sorted(public_c("include/haloswap_ra.h")):
        need(n, ra_doc, "docs/ra.md")

# Fortran: every public entity of the modules (the remote access layer's in docs/ra.md).
def fortran_public(path):
    f90 = read(path)
    names = []
    for block in re.findall(r"public\s*::\s*((?:[^\n]*&\s*\n)*[^\n]*)", f90):
        for item in re.split(r"[,&]", block):
            n = item.split("=")[0].strip()
            if re.fullmatch(r"[A-Za-z_]\w*", n):
                names.append(n)
    return names + re.findall(r"type,\s*public(?:,\s*bind\(c\))?\s*::\s*(\w+)", f90)


for path in ("fortran/haloswap.F90", "fortran/haloswap_dropin.F90"):
    for n in fortran_public(path):
        need(n, api, "docs/api.md (Fortran)")
if os.path.exists(os.path.join(src, "fortran/haloswap_ra.F90")):
    for n in fortran_public("fortran/haloswap_ra.F90"):
        need(n, ra_doc, "docs/ra.md (Fortran)")

# Environment variables the library reads.
for path in glob.glob(os.path.join(src, "src/**/*.c"), recursive=True) + \
        glob.glob(os.path.join(src, "fortran/**/*.[cF]*"), recursive=True):
    for var in re.findall(r'getenv\("(\w+)"\)', open(path, encoding="utf-8").read()):
        need(var, api, "docs/api.md (environment)")

# Options: hs_info's rows against the table between the markers.
table = api.split("<!-- options:begin -->")[1].split("<!-- options:end -->")[0]
rows = {}
for line in table.splitlines():
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
    if len(cells) == 5 and cells[1].startswith("`"):
        rows[(cells[0], cells[1])] = cells
out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
if out.returncode != 0:
    problems.append(f"{' '.join(cmd)} failed: {out.stderr.strip()}")
defaults = {}  # (transport, key) -> default, from the code
for line in out.stdout.splitlines():
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
    if len(cells) != 5:
        continue
    defaults[(cells[0], cells[1].strip("`"))] = cells[2].strip("`")
    checked += 1
    doc = rows.get((cells[0], cells[1]))
    if not doc:
        problems.append(f"option {cells[0]}:{cells[1]} is not in the options table of docs/api.md")
    elif cells[2] not in doc[2] or doc[3:] != cells[3:]:
        problems.append(f"option {cells[0]}:{cells[1]}: docs/api.md says {doc[2:]}, the code {cells[2:]}")

# design.md: the files and internal symbols it names exist.
tree = ""
for path in glob.glob(os.path.join(src, "src/**/*.[ch]"), recursive=True) + \
        glob.glob(os.path.join(src, "src/**/*.cmake"), recursive=True) + \
        [os.path.join(src, "CMakeLists.txt")]:
    tree += open(path, encoding="utf-8").read()
for path in set(re.findall(r"\b((?:src|include|tests|tools|docs|fortran)/[\w./-]+\w)", design)):
    checked += 1
    if not glob.glob(os.path.join(src, path.replace("<folder>", "*"))) and "<" not in path:
        problems.append(f"docs/design.md names {path}, which does not exist")
for sym in set(re.findall(r"\b(hs__\w+|HS_[A-Z_]+)\b", design)):
    checked += 1
    if sym.endswith("_") or sym in ("HS_TAG_",):
        continue
    if not re.search(r"\b" + re.escape(sym) + r"\b", tree):
        problems.append(f"docs/design.md names {sym}, which the source does not define")

# The plan members a transport may write: design.md's list ("Plan members a transport may write:
# `a`, `b`.") against every assignment to a plan member in src/transports and src/contract.
m = re.search(r"Plan\s+members\s+a\s+transport\s+may\s+write:\s+((?:`\w+`(?:,\s+|\s+and\s+)?)+)\.", design)
checked += 1
if not m:
    problems.append("docs/design.md does not list the plan members a transport may write")
else:
    allowed = set(re.findall(r"`(\w+)`", m.group(1)))
    # The same list in the contract header: the members under "written by the transport" in
    # struct hs_plan_s, and no member of the core's own state within a transport's reach.
    header = open(os.path.join(src, "src/core/hs_transport.h"), encoding="utf-8").read()
    checked += 1
    if header.count("\n") > 200:  # design.md: "at most 200 lines", a contract a reader can hold
        problems.append(f"src/core/hs_transport.h has {header.count(chr(10))} lines; "
                        "docs/design.md promises at most 200")
    view = re.search(r"struct hs_plan_s \{(.*?)\n\};", header, re.S)
    written = re.search(r"/\* ---- written by the transport \*/(.*?)/\* ----", view.group(1), re.S) \
        if view else None
    checked += 1
    if not written:
        problems.append("src/core/hs_transport.h: struct hs_plan_s has no section "
                        "\"written by the transport\"")
    else:
        declared = set(re.findall(r"(\w+);", re.sub(r"/\*.*?\*/", "", written.group(1), flags=re.S)))
        if declared != allowed:
            problems.append(f"src/core/hs_transport.h lets a transport write {sorted(declared)}, "
                            f"docs/design.md lists {sorted(allowed)}")
    for path in glob.glob(os.path.join(src, "src/transports/**/*.c"), recursive=True) + \
            glob.glob(os.path.join(src, "src/contract/*.c")):
        text = re.sub(r"/\*.*?\*/", "", open(path, encoding="utf-8").read(), flags=re.S)
        if re.search(r"->core\b", text):
            problems.append(f"{os.path.relpath(path, src)} reaches the core's own state (p->core)")
        for member in re.findall(r"\bp->(\w+)(?:\[[^]]*\])?(?:\.\w+)*\s*(?:[-+|&]?=)(?!=)", text):
            checked += 1
            if member not in allowed:
                problems.append(f"{os.path.relpath(path, src)} writes p->{member}, which docs/design.md "
                                "does not list among the plan members a transport may write")

# Every transport in design.md's layer diagram and README.md's table.
names = set()
for path in glob.glob(os.path.join(src, "src/transports/*/transport.cmake")):
    text = open(path, encoding="utf-8").read()
    names |= set(re.findall(r"hs_add_transport\(\s*\w+\s+([\w-]+)", text))
    names |= set(re.findall(r"hs_unbuilt_transport\(\s*\w+\s+([\w-]+)", text))
diagram = design.split("## Layers", 1)[1].split("```")[1]
readme_rows = {m for m in re.findall(r"^\| `([\w-]+)`", read("README.md"), flags=re.M)}
readme_rows |= {n for row in re.findall(r"^\| (`[\w-]+`(?:, `[\w-]+`)+) \|", read("README.md"), flags=re.M)
                for n in re.findall(r"`([\w-]+)`", row)}
for n in sorted(names):
    checked += 2
    if not re.search(r"(?<![\w-])" + re.escape(n) + r"(?![\w-])", diagram):
        problems.append(f"transport {n} is missing from the layer diagram of docs/design.md")
    if n not in readme_rows:
        problems.append(f"transport {n} has no row in README.md's table of transports")

# Numbers tied to constants: `N (`NAME`)` or `N KiB, `NAME``.
defines = {}
for path in glob.glob(os.path.join(src, "src/**/*.[ch]"), recursive=True) + \
        glob.glob(os.path.join(src, "include/*.h")):
    for name, expr in re.findall(r"^#define\s+([A-Z][A-Z0-9_]+)\s+(.+?)\s*(?:/\*.*)?$",
                                 open(path, encoding="utf-8").read(), flags=re.M):
        expr = re.sub(r"\((?:size_t|int|unsigned|uint64_t)\)", "", expr)
        if re.fullmatch(r"[\d\s()*+<-]+", expr):
            defines[name] = eval(expr)
unit = {"": 1, "KiB": 1024, "MiB": 1 << 20}
for path in [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs/*.md"))):
    text = open(path, encoding="utf-8").read()
    for num, u, name in re.findall(r"(\d+)\s*(KiB|MiB)?(?:\s*\(|,\s*)`([A-Z][A-Z0-9_]+)`", text):
        if name not in defines:
            continue
        checked += 1
        if int(num) * unit[u or ""] != defines[name]:
            problems.append(f"{os.path.relpath(path, src)} says {num}{' ' + u if u else ''} "
                            f"for {name}, the code {defines[name]}")

# Option defaults stated outside docs/api.md. The transports a statement can be about: those
# the file name names (docs/shmem-nbr.md: shmem, nbr; docs/rma.md: every rma-*), narrowed by a
# heading that names one in backticks.
transports = {t for t, _ in defaults}
for path in sorted(glob.glob(os.path.join(src, "docs/*.md"))):
    stem = os.path.basename(path)[:-3]
    if stem == "api":
        continue
    scope = {t for t in transports if t in stem.split("-") or t.split("-")[0] == stem}
    if not scope:
        continue
    cur, cols = set(scope), None
    for line in open(path, encoding="utf-8"):
        head = re.match(r"#+ .*`([\w-]+)`", line)
        if head and head.group(1) in scope:
            cur = {head.group(1)}
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else None
        if cells and "option" in cells and "default" in cells:
            cols = (cells.index("option"), cells.index("default"))
            continue
        if not cells:
            cols = None
        stated = []
        if cells and cols and len(cells) > max(cols):
            key = cells[cols[0]].strip("`")
            m = re.match(r"`?([\w.-]+)`?", cells[cols[1]])
            if m:
                stated.append((key, m.group(1)))
        stated += re.findall(r"`(\w+)=[^`]*`\s*\(default `?([\w.-]+)`?\)", line)
        for key, val in stated:
            known = [defaults[(t, key)] for t in cur if (t, key) in defaults]
            if not known:
                continue
            checked += 1
            if val not in known:
                problems.append(f"{os.path.relpath(path, src)}: option {key} has default {val} "
                                f"there, {' or '.join(sorted(set(known)))} in the code ({', '.join(sorted(cur))})")

for p in problems:
    print("FAIL:", p)
print(f"doc sync: {checked} items checked")
print(f"{checked - len(problems)} passed, {len(problems)} failed")
sys.exit(1 if problems else 0)
