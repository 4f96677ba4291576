#!/usr/bin/env python3
"""Simulated scaling study of haloswap (SimGrid SMPI): the MONC paper's weak and strong scaling
(seed 004, Figs. 6-7, 10-13) and node-aware placement, on the platforms in bench/sim/platforms.

Every number it writes is SIMULATED: produced by SMPI's network and CPU models on a modelled
machine, not measured on one. Output, next to --json (default build/bench/sim/simulated.json,
ignored by git): the JSON (all points, appended as they finish), simulated.md (the tables of
every simulated*.json in that directory) and sim_*.png (curves). The reference results the docs
cite are in docs/results/2026-11-smpi-simulated/: pass --json there to add to them.

Usage: study_sim.py [--build build/smpi] [--ranks 64,512,4096] [--platforms xc30,fdr]
                    [--studies weak,strong,placement,staged,staged3d] [--transports p2p,rma-fence,...]
                    [--swaps 2] [--warmup 1] [--timeout 900] [--placement-ranks 1152]
                    [--cfg NAME:VALUE]... [--json FILE] [--plot-only]
Studies: weak, strong (the MONC paper's Figs. 6-7, 12-13); placement (node-aware placement);
staged (the weak MONC case, p2p direct against p2p:staged=1); staged3d (a 3-D decomposition,
26 neighbours, local 32x32x32, 4 fields, depth 2, box: p2p direct against p2p:staged=1).
The MONC case: 30 float64 fields of 16x16x256 points per rank (weak) or 2048x2048x128 in all
(strong), depth 2, box stencil, decomposed over x and y. haloswap packs all fields for one
neighbour into one message, so the simulation swaps one field whose z extent is 30 x nz: the same
messages (count and bytes) and the same copy volume, with 30x fewer pack-hook calls for the
simulator to model (see docs/simulation.md).
"""
import argparse
import json
import math
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLATFORMS = {
    # name: (file, host prefix, cores per node, description)
    "xc30": ("xc30.xml", "xc-", 24, "Cray XC30-like (24 cores/node, Aries dragonfly)"),
    "fdr": ("fdr_fattree.xml", "ib-", 36, "InfiniBand FDR fat tree (36 cores/node, Cirrus-like)"),
}
FIELDS, NZ, DEPTH = 30, 256, 2
STRONG = (2048, 2048, 128)
# While one of these exists, no simulation starts and a running one is paused: another job's
# timing measurement, or this study's own local measurements (docs/simulation.md).
QUIET = ("/tmp/quiet.lock", "/tmp/hs_sim.pause")


def quiet():
    return any(os.path.exists(q) for q in QUIET)
CASE3D = (32, 32, 32, 4)  # staged3d: local extent per rank and fields
SMPI_CFG = [
    "--cfg=smpi/host-speed:1Gf",
    "--cfg=smpi/simulate-computation:no",  # packing is charged by hs_sim's --pack-rate model
    "--cfg=smpi/bw-factor:0:1",           # the platform's figures are effective MPI figures
    "--cfg=smpi/lat-factor:0:1",
    "--cfg=smpi/auto-shared-malloc-thresh:65536",  # message buffers shared between ranks
    "--cfg=smpi/shared-malloc-blocksize:16777216",  # fewer mappings (vm.max_map_count)
    # Logarithmic collective algorithms instead of SMPI's linear defaults. They run at set-up
    # (MPI_Win_create's allgather of window handles, communicator splits, the library's and
    # hs_sim's allreduces and reduce) and in the barrier before the timed swaps; the linear
    # ones made the simulator's CPU time grow as P^3 (the root's waitall tests P requests P
    # times, each completion walking a list of P): docs/simulation.md.
    "--cfg=smpi/allgather:bruck", "--cfg=smpi/allreduce:rdb", "--cfg=smpi/reduce:binomial",
    "--cfg=smpi/barrier:ompi_bruck", "--cfg=smpi/gather:ompi_binomial",
    "--cfg=smpi/bcast:binomial_tree",
    # Coarser numerical precision of the flow model (defaults are finer): flows of a halo swap
    # end at nearly the same simulated instant, and within the tolerance they are handled as
    # one event instead of one max-min solve each. 3x less simulator CPU at 1,024 ranks; the
    # simulated time per swap moved by 0.006 % there (docs/simulation.md).
    "--cfg=surf/precision:1e-6", "--cfg=maxmin/precision:1e-4",
    "--log=smpi_mpi.thresh:error", "--log=xbt_cfg.thresh:error",
    "--log=smpi_config.thresh:error", "--log=smpi_utils.thresh:error",
]


def hostfile(platform, ranks):
    _, prefix, cores, _ = PLATFORMS[platform]
    nodes = math.ceil(ranks / cores)
    path = os.path.join("/tmp", f"hs_sim_{platform}_{ranks}.hosts")
    with open(path, "w") as f:
        for i in range(nodes):
            f.write(f"{prefix}{i}:{cores}\n")
    return path


def run_point(args, platform, ranks, study, transports, place="rank"):
    exe = os.path.join(args.build, "bench", "sim", "hs_sim")
    plat = os.path.join(ROOT, "bench", "sim", "platforms", PLATFORMS[platform][0])
    fields = "1"
    if study == "strong":
        shape = ["--strong", f"{STRONG[0]},{STRONG[1]},{STRONG[2] * FIELDS}"]
    elif study == "staged3d":
        shape = ["--dims3", "--weak", ",".join(str(x) for x in CASE3D[:3])]
        fields = str(CASE3D[3])
    else:
        shape = ["--weak", f"16,16,{NZ * FIELDS}"]
    cfg = SMPI_CFG + [f"--cfg={c}" for c in args.cfg]
    cmd = (["smpirun", "-np", str(ranks), "-platform", plat, "-hostfile", hostfile(platform, ranks)]
           + cfg + [exe] + shape
           + ["--fields", fields, "--depth", str(DEPTH), "--swaps", str(args.swaps), "--warmup",
              str(args.warmup), "--place", place, "--label", f"{platform}/{study}",
              "--pack-rate", str(args.pack_rate), "--quick-exit"])
    for t in transports:
        cmd += ["--transport", t]
    while quiet():  # another job is timing something: do not start
        time.sleep(5)
    t0 = time.time()
    paused = 0.0
    # Own process group: on timeout smpirun's simulator child must go too, not only smpirun.
    # The output is a few lines, so polling cannot fill the pipe.
    proc = subprocess.Popen(["nice", "-n", "10"] + cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    status = "ok"
    while proc.poll() is None:
        time.sleep(1)
        if quiet():
            # Stop the whole simulation while the lock exists (its simulated results do not
            # depend on wall time); the paused time counts neither as wall time nor timeout.
            p0 = time.time()
            os.killpg(proc.pid, signal.SIGSTOP)
            while quiet():
                time.sleep(5)
            os.killpg(proc.pid, signal.SIGCONT)
            paused += time.time() - p0
        if time.time() - t0 - paused > args.timeout:
            os.killpg(proc.pid, 9)
            status = f"timeout after {args.timeout} s"
            break
    out = proc.communicate()[0] or ""
    wall = time.time() - t0 - paused
    rows = []
    for line in out.splitlines():
        if line.startswith("HS_SIM "):
            r = json.loads(line[7:])
            r.update(platform=platform, study=study, wall_seconds=wall, simulated=True,
                     warmup=args.warmup,
                     fields_modelled=FIELDS if study != "staged3d" else CASE3D[3],
                     platform_name=PLATFORMS[platform][3], smpi_cfg=[c for c in cfg if c.startswith('--cfg=')],
                     date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            rows.append(r)
    if not rows:
        rows.append(dict(platform=platform, study=study, ranks=ranks, transport="+".join(transports),
                         status=status if status != "ok" else "no output", wall_seconds=wall,
                         asked_placement=place, simulated=True, smpi_cfg=[c for c in cfg if c.startswith('--cfg=')]))
    return rows


def load(path):
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return []


def save(path, rows):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(rows, f, indent=1)


def ok(r):
    return r.get("status") == "ok" and r.get("seconds_per_swap", -1) > 0


def tables(rows):
    out = ["# Simulated halo-swap scaling (SimGrid SMPI 3.32) -- SIMULATED, not measured",
           "",
           "Written by `bench/sim/study_sim.py` from the simulated*.json beside it. MONC case: 30 "
           "float64 fields, 16x16x256 per rank (weak) or 2048x2048x128 in all (strong), depth 2, "
           "box stencil, 2-D decomposition. Platforms and their sources: `bench/sim/platforms/`. "
           "Discussion: `docs/simulation.md`.", ""]
    for study in ("weak", "strong"):
        for plat in PLATFORMS:
            sel = [r for r in rows if r.get("study") == study and r.get("platform") == plat
                   and r.get("asked_placement", "rank") == "rank"]
            if not sel:
                continue
            ranks = sorted({r["ranks"] for r in sel})
            trs = []
            for r in sel:
                if r["transport"] not in trs and "+" not in r["transport"]:
                    trs.append(r["transport"])
            out += [f"## {study} scaling, {PLATFORMS[plat][3]} (simulated ms per swap)", "",
                    "| transport | " + " | ".join(str(n) for n in ranks) + " |",
                    "|---|" + "---|" * len(ranks)]
            for t in trs:
                cells = []
                for n in ranks:
                    m = [r for r in sel if r["transport"] == t and r["ranks"] == n]
                    m = [r for r in m if ok(r)] or m  # a finished run over an earlier failure
                    cells.append(f"{m[-1]['seconds_per_swap'] * 1e3:.3f}" if m and ok(m[-1])
                                 else (m[-1].get("status", "-")[:40] if m else "-"))
                out.append(f"| {t} | " + " | ".join(cells) + " |")
            # One launch runs several transports; its rows share one wall time.
            walls = {n: sum({r["wall_seconds"] for r in sel if r["ranks"] == n}) for n in ranks}
            out.append("| *wall s (all launches)* | " + " | ".join(f"{walls[n]:.0f}" for n in ranks)
                       + " |")
            out.append("")
    pl = [r for r in rows if r.get("study") == "placement" and ok(r)]
    if pl:
        out += ["## Node-aware placement (p2p, weak case; simulated)", "",
                "| platform | ranks | placement | node block | inter-node MB/swap | "
                "of all halo bytes | ms per swap | wall s |", "|---|---|---|---|---|---|---|---|"]
        for r in sorted(pl, key=lambda r: (r["platform"], r["ranks"], r["placement"])):
            out.append(f"| {r['platform']} | {r['ranks']} | {r['placement']} | "
                       f"{r['node_block'][0]}x{r['node_block'][1]} | "
                       f"{r['internode_bytes_per_swap'] / 1e6:.1f} | "
                       f"{r['internode_bytes_per_swap'] / r['halo_bytes_per_swap']:.1%} | "
                       f"{r['seconds_per_swap'] * 1e3:.3f} | {r['wall_seconds']:.0f} |")
        out.append("")
    for study, what in (("staged", "weak MONC case (8 neighbours), p2p"),
                        ("staged3d", "3-D decomposition, local 32x32x32, 4 fields, depth 2, box "
                                     "(26 neighbours), p2p")):
        st = [r for r in rows if r.get("study") == study]
        if not st:
            continue
        out += [f"## Staged exchange against direct: {what} (simulated ms per swap)", "",
                "| platform | ranks | direct | staged=1 | staged / direct | wall s |",
                "|---|---|---|---|---|---|"]
        for plat in PLATFORMS:
            for n in sorted({r["ranks"] for r in st if r["platform"] == plat}):
                m = [r for r in st if r["platform"] == plat and r["ranks"] == n]
                d = [r for r in m if r["transport"] == "p2p"]
                g = [r for r in m if r["transport"] == "p2p:staged=1"]
                cell = lambda x: (f"{x[-1]['seconds_per_swap'] * 1e3:.3f}" if x and ok(x[-1])
                                  else (x[-1].get("status", "-")[:40] if x else "-"))
                ratio = (f"{g[-1]['seconds_per_swap'] / d[-1]['seconds_per_swap']:.3f}"
                         if d and g and ok(d[-1]) and ok(g[-1]) else "-")
                out.append(f"| {plat} | {n} | {cell(d)} | {cell(g)} | {ratio} | "
                           f"{sum({r['wall_seconds'] for r in m}):.0f} |")
        out.append("")
    total = sum({r.get("wall_seconds", 0) for r in rows})
    out += [f"Total wall time of the simulations: {total / 60:.1f} min (sum over launches; the "
            "earlier runs had up to 5 at once, the later ones one at a time) on a 2-core machine "
            "shared with other jobs.", ""]
    return "\n".join(out)


def plots(rows, imgdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("study_sim: matplotlib missing, no plots", file=sys.stderr)
        return []
    made = []
    for study in ("weak", "strong"):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        anyp = False
        for ax, plat in zip(axes, PLATFORMS):
            sel = [r for r in rows if r.get("study") == study and r.get("platform") == plat
                   and r.get("asked_placement", "rank") == "rank" and ok(r)]
            for t in sorted({r["transport"] for r in sel}):
                pts = sorted((r["ranks"], r["seconds_per_swap"] * 1e3) for r in sel
                             if r["transport"] == t)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=t)
                anyp = True
            ax.set_xscale("log", base=2)
            if study == "strong":
                ax.set_yscale("log")
            ax.set_xlabel("simulated MPI ranks")
            ax.set_ylabel("simulated ms per swap")
            ax.set_title(f"SIMULATED: {PLATFORMS[plat][3]}", fontsize=9)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
        what = ("weak scaling, 16x16x256 per rank" if study == "weak"
                else "strong scaling, 2048x2048x128")
        fig.suptitle(f"haloswap, MONC case ({what}, 30 fields, depth 2) -- SimGrid SMPI 3.32 "
                     "simulation, not a measurement", fontsize=10)
        fig.tight_layout()
        if anyp:
            path = os.path.join(imgdir, f"sim_{study}.png")
            fig.savefig(path, dpi=110)
            made.append(path)
        plt.close(fig)
    return made



def replace_point(args, rows, new, old, label):
    """Rows with the point's old records (old(r) true) replaced by new; saved and printed."""
    rows = [r for r in rows if not old(r)] + new
    save(args.json, rows)
    print(f"{label}: " + ", ".join(
        f"{r['transport']} {r.get('seconds_per_swap', 0) * 1e3:.3f} ms [{r.get('status')}]"
        for r in new) + (f" ({new[0]['wall_seconds']:.0f} s)" if new else ""), flush=True)
    return rows

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "smpi"))
    ap.add_argument("--ranks", default="64,512,4096")
    ap.add_argument("--platforms", default="xc30,fdr")
    ap.add_argument("--studies", default="weak,strong,placement")
    ap.add_argument("--transports", default="p2p,rma-fence,rma-pscw,rma-passive")
    ap.add_argument("--placement-ranks", default="1152")
    ap.add_argument("--places", default="rank,node")
    ap.add_argument("--swaps", type=int, default=2)
    # Single-core pack/unpack copy rate of whole z-columns (2 KB runs at nz = 256), GB/s.
    ap.add_argument("--pack-rate", type=float, default=5.0)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--json", default=os.path.join(ROOT, "build", "bench", "sim", "simulated.json"))
    ap.add_argument("--cfg", action="append", default=[],
                    help="extra SimGrid setting NAME:VALUE (repeatable), recorded in each row")
    ap.add_argument("--plot-only", action="store_true")
    args = ap.parse_args()
    rows = load(args.json)
    if not args.plot_only:
        trs = args.transports.split(",")
        for study in args.studies.split(","):
            for plat in args.platforms.split(","):
                if study == "placement":
                    for n in (int(x) for x in args.placement_ranks.split(",")):
                        for place in args.places.split(","):
                            new = run_point(args, plat, n, "placement", ["p2p"], place)
                            rows = [r for r in rows if not (
                                r.get("study") == "placement" and r.get("platform") == plat
                                and r.get("ranks") == n and r.get("asked_placement") == place)]
                            rows += new
                            save(args.json, rows)
                            print(f"{plat} placement {n} {place}: " + ", ".join(
                                f"{r.get('seconds_per_swap', 0) * 1e3:.3f} ms "
                                f"{r.get('internode_bytes_per_swap', 0) / 1e6:.1f} MB inter-node "
                                f"[{r.get('status')}] {r['wall_seconds']:.0f} s" for r in new),
                                flush=True)
                    continue
                for n in (int(x) for x in args.ranks.split(",")):
                    same = lambda r: (r.get("study") == study and r.get("platform") == plat
                                      and r.get("ranks") == n)
                    if study in ("staged", "staged3d"):
                        new = run_point(args, plat, n, study, ["p2p", "p2p:staged=1"])
                        rows = replace_point(args, rows, new, same, f"{plat} {study} {n}")
                        continue
                    new = run_point(args, plat, n, study, trs)
                    rows = replace_point(args, rows, new, lambda r: same(r) and r.get(
                        "asked_placement", "rank") == "rank" and r.get("transport") in trs + [
                        "+".join(trs)], f"{plat} {study} {n}")
    # Tables and plots from every results file (parallel runs write separate --json files).
    resdir = os.path.dirname(os.path.abspath(args.json))
    os.makedirs(resdir, exist_ok=True)
    rows = []
    for fn in sorted(os.listdir(resdir)):
        if fn.startswith("simulated") and fn.endswith(".json"):
            rows += load(os.path.join(resdir, fn))
    md = tables(rows)
    with open(os.path.join(resdir, "simulated.md"), "w") as f:
        f.write(md)
    imgs = plots(rows, resdir)
    print(md)
    for p in imgs:
        print("wrote", p)


if __name__ == "__main__":
    main()
