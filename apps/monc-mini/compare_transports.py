#!/usr/bin/env python3
"""Communication time per monc-mini timestep for each transport, as a ratio to p2p.

Runs monc-mini ROUNDS times; each launch runs every transport in turn (one after the other
inside the same launch, the order rotated from round to round so that no transport always
comes first), reads the JSON and reports, per transport, the median and min-max over rounds of
the communication time per timestep (max over ranks) and of its ratio to p2p in the same round.

Usage: compare_transports.py MPIEXEC EXE [--ranks N] [--rounds R] [--transports a,b,..]
                             [--app-args "more monc-mini options"]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("mpiexec")
ap.add_argument("exe")
ap.add_argument("--ranks", type=int, default=2)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--transports", default="p2p,nbr,rma-fence,rma-pscw,rma-passive,shm,auto")
ap.add_argument("--app-args", default="")
a = ap.parse_args()
tr = a.transports.split(",")
if "p2p" not in tr:
    sys.exit("p2p must be among the transports (it is the reference)")
oversub = ["--oversubscribe"] if "openmpi" in a.mpiexec else []
comm = {t: [] for t in tr}
ratio = {t: [] for t in tr}
with tempfile.TemporaryDirectory() as d:
    for r in range(a.rounds):
        order = tr[r % len(tr):] + tr[:r % len(tr)]
        js = os.path.join(d, f"r{r}.json")
        cmd = [a.mpiexec] + oversub + ["-n", str(a.ranks), a.exe, "--json", js] + a.app_args.split()
        for t in order:
            cmd += ["--transport", t]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        runs = {x["transport"]: x for x in json.load(open(js))["runs"]}
        base = runs["p2p"]["per_step_max"]["comm"]
        for t in tr:
            c = runs[t]["per_step_max"]["comm"]
            comm[t].append(c)
            ratio[t].append(c / base)
print(f"{'transport':<14} {'comm/step (us) median [min-max]':<36} {'ratio to p2p median [min-max]'}")
for t in tr:
    c = [x * 1e6 for x in comm[t]]
    print(f"{t:<14} {statistics.median(c):9.1f} [{min(c):8.1f} - {max(c):8.1f}]      "
          f"{statistics.median(ratio[t]):5.2f} [{min(ratio[t]):.2f} - {max(ratio[t]):.2f}]")
