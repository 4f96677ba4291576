#!/usr/bin/env python3
"""Run a test program under valgrind and fail if any error or leak record has a stack frame in
haloswap's own sources. Records from inside the MPI libraries alone (their known one-off
allocations) are reported as a count but do not fail the test.
Usage: valgrind_check.py SRCDIR program args..."""
import re
import subprocess
import sys
import tempfile

srcdir, cmd = sys.argv[1], sys.argv[2:]
with tempfile.NamedTemporaryFile(suffix=".vg") as log:
    run = subprocess.run(["valgrind", "--leak-check=full", "--num-callers=40",
                          "--log-file=" + log.name] + cmd)
    text = open(log.name).read()
records, cur = [], []
for line in text.splitlines():
    body = re.sub(r"^==\d+==\s?", "", line)
    if body.strip() == "":
        if cur:
            records.append(cur)
        cur = []
    else:
        cur.append(body)
if cur:
    records.append(cur)
kinds = re.compile(r"definitely lost|indirectly lost|Invalid (read|write|free)|uninitialised|"
                   r"Mismatched free|overlap")
ours = [r for r in records if kinds.search(r[0]) and any(srcdir in l or re.search(r"\bhs_\w+", l) for l in r)]
others = [r for r in records if kinds.search(r[0]) and r not in ours]
for r in ours:
    print("\n".join(r) + "\n")
print(f"valgrind: {len(ours)} records in haloswap code, {len(others)} inside the MPI library only")
if run.returncode != 0:
    print(f"program exited with {run.returncode}")
ok = not ours and run.returncode == 0
print(f"valgrind_check: {1 if ok else 0} passed, {0 if ok else 1} failed")
sys.exit(0 if ok else 1)
