#!/usr/bin/env python3
"""Keeps the docs true to the code: every public C function, type and constant, every Fortran
public entity, every environment variable the library reads and every option of every built
transport is documented, and every file and internal symbol docs/design.md names exists.
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


for n in fortran_public("fortran/haloswap.F90"):
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
for line in out.stdout.splitlines():
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
    if len(cells) != 5:
        continue
    checked += 1
    doc = rows.get((cells[0], cells[1]))
    if not doc:
        problems.append(f"option {cells[0]}:{cells[1]} is not in the options table of docs/api.md")
    elif cells[2] not in doc[2] or doc[3:] != cells[3:]:
        problems.append(f"option {cells[0]}:{cells[1]}: docs/api.md says {doc[2:]}, the code {cells[2:]}")

# design.md: the files and internal symbols it names exist.
tree = ""
for path in glob.glob(os.path.join(src, "src/**/*.[ch]"), recursive=True):
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

for p in problems:
    print("FAIL:", p)
print(f"doc sync: {checked} items checked")
print(f"{checked - len(problems)} passed, {len(problems)} failed")
sys.exit(1 if problems else 0)
