#!/usr/bin/env python3
"""Writes a BRAMS namelist file: the user's own (RAMSIN_BASIC or RAMSIN_ADVANCED from their
checkout) with the variables of haloswap's case set (tools/real-code/brams/case.nml).

  ramsin.py IN OUT CASE [KEY=VALUE ...]

CASE has one setting a line, "GROUP KEY = VALUE" (VALUE may continue on following lines
that start with blanks); the KEY=VALUE arguments override CASE (steps, grid size, run type).
Only settings for the groups present in IN are applied; a group of CASE missing from every
file is the caller's concern. A setting whose key is absent from its group is added at the
group's end. Prints the settings applied."""
import re
import sys


def read_case(path, extra):
    settings = []  # (group, key, value)
    cur = None
    for line in open(path):
        if line.lstrip().startswith("#") or not line.strip():
            cur = None
            continue
        if line[0] in " \t" and cur is not None:
            settings[-1] = (cur[0], cur[1], settings[-1][2] + "\n" + line.rstrip())
            continue
        m = re.match(r"\s*(\w+)\s+(\w+)\s*=\s*(.*)$", line)
        if not m:
            sys.exit(f"ramsin.py: {path}: cannot read '{line.rstrip()}' (GROUP KEY = VALUE)")
        cur = (m.group(1).upper(), m.group(2).upper())
        settings.append((cur[0], cur[1], m.group(3).rstrip()))
    for kv in extra:
        key, value = kv.split("=", 1)
        hits = [i for i, s in enumerate(settings) if s[1] == key.upper()]
        if not hits:
            sys.exit(f"ramsin.py: override {key}: not a setting of {path}")
        for i in hits:
            settings[i] = (settings[i][0], settings[i][1], value)
    return settings


def apply(text, group, key, value):
    """The namelist text with KEY of $GROUP set to VALUE (None: the group is absent)."""
    g = re.search(r"^\s*\$" + group + r"\b.*?^\s*\$END", text, re.M | re.S | re.I)
    if not g:
        return None
    body = g.group(0)
    # an assignment: KEY = ... up to the next assignment or $END (comments go with it)
    a = re.search(r"^([ \t]*)" + key + r"\s*=.*?(?=^[ \t]*\w+\s*=|^\s*\$END)", body,
                  re.M | re.S | re.I)
    line = f"   {key} = {value},\n"
    if a:
        body = body[:a.start()] + line + body[a.end():]
    else:
        end = re.search(r"^\s*\$END", body, re.M | re.I)
        body = body[:end.start()] + line + body[end.start():]
    return text[:g.start()] + body + text[g.end():]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    src, out, case = sys.argv[1:4]
    text = open(src, errors="replace").read()
    applied = []
    for group, key, value in read_case(case, sys.argv[4:]):
        new = apply(text, group, key, value.rstrip(","))
        if new is not None:
            text = new
            applied.append(f"{group}:{key}")
    open(out, "w").write(text)
    print(" ".join(applied))


main()
