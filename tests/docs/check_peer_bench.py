#!/usr/bin/env python3
"""Keeps tools/check-peer-bench and docs/benchmarks.md true to each other, without any peer's
checkout (--list reads none):
  - every option of `tools/check-peer-bench --help` is named in docs/benchmarks.md's section
    "Measured by others' harnesses", and --help names every peer script tools/peer-bench/*.sh;
  - `--list` runs for every peer, and every `tools/check-peer-bench ...` command in that
    section's sh blocks runs with --list added (its options are valid);
  - bad input stops it with exit status 2 and a message naming the value;
  - the table printer gives the medians and ratios worked out by hand for a small input.
Usage: check_peer_bench.py SOURCE_DIR"""
import glob
import os
import re
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import ToolCheck  # noqa: E402
import tempfile

tally = ToolCheck("check-peer-bench", sys.argv[1])
src, tool, run, expect, problems = tally.src, tally.tool, tally.run, tally.expect, tally.problems


doc = open(os.path.join(src, "docs", "benchmarks.md"), encoding="utf-8").read()
start = doc.find("## Measured by others' harnesses")
expect(start >= 0, "docs/benchmarks.md has no section \"Measured by others' harnesses\"")
section = doc[start:]
end = section.find("\n## ", 4)
section = section if end < 0 else section[:end]

rc, out, err = run([tool, "--help"])
expect(rc == 0, f"--help exits {rc}: {err}")
for opt in sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", out))):
    expect(f"`{opt}" in section, f"--help's {opt} is not in the docs section")
for script in glob.glob(os.path.join(src, "tools", "peer-bench", "*.sh")):
    peer = os.path.basename(script)[:-3]
    expect(peer in out, f"--help does not name the peer {peer}")
    rc, o, e = run([tool, peer, "--list"])
    expect(rc == 0 and o.strip(), f"{peer} --list: exit {rc}, {e.strip()}")

for block in re.findall(r"```sh\n(.*?)```", section, re.S):
    for line in block.replace("\\\n", " ").split("\n"):
        line = line.strip()
        if not line.startswith("tools/check-peer-bench "):
            continue
        args = shlex.split(line.split("#")[0])
        # checkouts and directories: --list reads none
        paths = ("--hwcart", "--blt", "--work", "--build")
        args = [a for i, a in enumerate(args) if a not in paths and not (i and args[i - 1] in paths)]
        args = [a for a in args if not a.startswith(("/", "~", "$"))]
        rc, o, e = run([os.path.join(src, args[0])] + args[1:] + ["--list"])
        expect(rc == 0, f"documented command `{line}` with --list: exit {rc}, {e.strip()}")

for args, value in ((["nosuch"], "nosuch"), (["cartex", "--mpi", "lam"], "lam"),
                    (["comb", "--launches", "0"], "0"), (["cartex", "--configs", "huge"], "huge"),
                    (["cartex", "--reps", "-3"], "-3"), (["cartex", "--bogus"], "--bogus"),
                    (["cartex", "/nonexistent-checkout"], "/nonexistent-checkout")):
    rc, o, e = run([tool] + args)
    expect(rc == 2 and value in e, f"{args}: exit {rc} (want 2), stderr {e.strip()!r}")

# The table: medians of 3 launches 1,2,9 us -> 2; 4,4,4 -> 4; ratios 2/4 and p2p (3) / 4.
with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
    for launch, (a, b, c) in enumerate(((1e-6, 4e-6, 3e-6), (2e-6, 4e-6, 3e-6), (9e-6, 4e-6, 3e-6))):
        f.write(f"m\tcfg\ths:shm\t{launch}\t{a}\nm\tcfg\tref\t{launch}\t{b}\nm\tcfg\ths:p2p\t{launch}\t{c}\n")
    name = f.name
rc, out, err = run([sys.executable, os.path.join(src, "tools", "peer-bench", "table.py"), name,
                    "--ratio", "best/ref=best:hs:/ref", "--ratio", "p2p/ref=hs:p2p/ref"])
os.unlink(name)
row = [c.strip() for c in out.strip().split("\n")[-1].strip("|").split("|")]
expect(rc == 0 and row[:2] == ["cfg", "2 (1-9)"] and row[2] == "4 (4-4)" and
       row[4] == "0.50 (hs:shm)" and row[5] == "0.75", f"table.py printed {row}: {err}")

print(f"check_peer_bench: {tally.checked} checks, {len(problems)} problems")
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
