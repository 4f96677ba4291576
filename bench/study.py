#!/usr/bin/env python3
"""Runs a haloswap benchmark study and writes BUILD/bench/{report.md, latest.json, *.png} (inside
the ignored build directory: a run never changes tracked files).

For every MPI library given (each built in BUILD/<mpi>), it runs hs_bench (communication time
per swap of every transport against the memcpy limit, interleaved in one launch) for the MONC
case at 2 ranks, weak and strong scaling over rank counts (oversubscribed points are marked),
a message-size sweep, the OSU-style one-sided micro-benchmarks (hs_osu, hs_osu_shmem) and the
mini-apps (monc-mini, brams-mini, lare-mini) when they are built.

  python3 bench/study.py --build build --mpis openmpi mpich --preset standard

Presets: quick (a minute or two), standard (make bench, a few minutes), full (longer runs,
more rank counts). Any run that fails or times out is recorded as such and the study goes on.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# The simulated study's reference results (bench/sim/study_sim.py, hours of SimGrid runs).
SIMULATED = os.path.join(ROOT, "docs", "results", "2026-11-smpi-simulated")

MONC = ["--local", "16,16,256", "--depth", "2", "--stencil", "box", "--fields", "30",
        "--periodic", "1,1,0", "--procs", "0,0,1"]

# Extra arguments per mini-app (lare-mini: transports interleaved over rounds, median taken).
APP_ARGS = {"lare-mini": ["--rounds", "3"]}

PRESETS = {
    # name: settings
    "quick": dict(monc=dict(swaps=10, reps=5, warmup=3), weak_ranks=[1, 2, 4],
                  strong_ranks=[1, 2, 4], strong_global="32,32,128",
                  scale=dict(swaps=5, reps=3, warmup=2), oversub=dict(swaps=3, reps=3, warmup=1),
                  sweep_z="1,16,256,1024", sweep=dict(swaps=10, reps=3, warmup=2),
                  osu_iters="quick", apps_steps=3, timeout=240, budget=300),
    "standard": dict(monc=dict(swaps=50, reps=11, warmup=5), weak_ranks=[1, 2, 4],
                     strong_ranks=[1, 2, 4], strong_global="32,32,128",
                     scale=dict(swaps=10, reps=5, warmup=3), oversub=dict(swaps=4, reps=3, warmup=1),
                     sweep_z="1,4,16,64,256,1024", sweep=dict(swaps=10, reps=5, warmup=2),
                     osu_iters="quick", apps_steps=4, timeout=300, budget=480),
    "full": dict(monc=dict(swaps=40, reps=15, warmup=10), weak_ranks=[1, 2, 3, 4, 6, 8],
                 strong_ranks=[1, 2, 3, 4, 6, 8], strong_global="64,64,128",
                 scale=dict(swaps=20, reps=7, warmup=5), oversub=dict(swaps=8, reps=5, warmup=2),
                 sweep_z="1,2,4,8,16,32,64,128,256,512,1024,2048",
                 sweep=dict(swaps=20, reps=7, warmup=5), osu_iters="default", apps_steps=10,
                 timeout=900, budget=0),
}


def log(msg):
    print(msg, flush=True)


def ncores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


class Mpi:
    """One MPI library's build directory and launcher."""

    def __init__(self, build, name):
        self.name = name
        self.dir = os.path.abspath(os.path.join(build, name))
        self.mpiexec = None
        cache = os.path.join(self.dir, "CMakeCache.txt")
        if os.path.exists(cache):
            with open(cache) as f:
                for line in f:
                    if line.startswith("MPIEXEC_EXECUTABLE:"):
                        self.mpiexec = line.split("=", 1)[1].strip()
        if not self.mpiexec:
            self.mpiexec = "/usr/bin/mpiexec." + name
        self.openmpi = False
        try:
            out = subprocess.run([self.mpiexec, "--version"], capture_output=True, text=True,
                                 timeout=30)
            self.openmpi = "Open MPI" in out.stdout + out.stderr or "OpenRTE" in out.stdout
        except (OSError, subprocess.TimeoutExpired):
            pass

    def exe(self, rel):
        p = os.path.join(self.dir, rel)
        return p if os.path.exists(p) else None

    def launch(self, n, argv, extra_env=None):
        cmd = [self.mpiexec]
        if self.openmpi:
            cmd += ["--oversubscribe"]
        cmd += ["-n", str(n)] + argv
        env = dict(os.environ)
        env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                    "OMPI_MCA_mpi_yield_when_idle": "1",
                    "OMPI_MCA_rmaps_base_oversubscribe": "1"})
        if extra_env:
            env.update(extra_env)
        return cmd, env


class Study:
    def __init__(self, args):
        self.args = args
        self.p = PRESETS[args.preset]
        if args.timeout:
            self.p["timeout"] = args.timeout
        self.out = os.path.abspath(args.out)
        self.raw = os.path.join(self.out, "raw")
        os.makedirs(self.raw, exist_ok=True)
        self.mpis = [Mpi(args.build, m) for m in args.mpis]
        self.records = []      # hs_bench records (latest.json)
        self.osu = []          # hs_osu records
        self.apps = []         # mini-app records
        self.fields = []       # hs_fields_bench tables: (mpi, alloc, rows)
        self.notes = []        # things the report must mention
        self.failures = []
        self.t0 = time.time()
        self.step = 0
        self.nsteps = 0
        self.commands = []

    # ---------------------------------------------------------------- running
    def read_json(self, mpi, path):
        """What a launch wrote to path, or None (recorded as a failure) if unreadable."""
        try:
            with open(path) as f:
                return json.load(f)
        except (OSError, ValueError) as e:
            self.failures.append("%s: cannot read %s: %s" % (mpi.name, path, e))
            return None

    def run(self, mpi, n, argv, tag, extra_env=None):
        self.step += 1
        budget = self.args.budget if self.args.budget is not None else self.p["budget"]
        if budget and time.time() - self.t0 > budget:
            msg = "%s %s np=%d: skipped, the study's time budget (%d s) is spent" % (
                mpi.name, tag, n, budget)
            log("[%2d/%d] %s" % (self.step, self.nsteps, msg))
            self.failures.append(msg)
            return None
        cmd, env = mpi.launch(n, argv, extra_env)
        over = n > ncores()
        log("[%2d/%d %5.0fs] %-8s %-34s np=%d%s" % (self.step, self.nsteps, time.time() - self.t0,
                                                 mpi.name, tag, n, " (oversubscribed)" if over else ""))
        self.commands.append(" ".join(shlex.quote(c) for c in cmd))
        t = time.time()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, env=env,
                               timeout=self.p["timeout"])
        except subprocess.TimeoutExpired:
            msg = "%s %s np=%d: timed out after %d s" % (mpi.name, tag, n, self.p["timeout"])
            log("    " + msg)
            self.failures.append(msg)
            return None
        if r.returncode != 0:
            msg = "%s %s np=%d: exit %d: %s" % (mpi.name, tag, n, r.returncode,
                                                (r.stderr or r.stdout).strip()[-400:])
            log("    " + msg.replace("\n", "\n    "))
            self.failures.append(msg)
            return None
        log("    done in %.1f s" % (time.time() - t))
        return r

    def bench(self, mpi, n, study, extra, settings, tag, show=False, extra_env=None):
        exe = mpi.exe("bench/hs_bench")
        if not exe:
            self.notes.append("%s: hs_bench not built in %s" % (mpi.name, mpi.dir))
            self.step += 1
            return []
        base = "%s-%s-np%d" % (mpi.name, study, n)
        js = os.path.join(self.raw, base + ".json")
        csv = os.path.join(self.raw, base + ".csv")
        over = n > ncores()
        s = self.p["oversub"] if over and study != "monc" else settings
        argv = [exe] + extra + ["--swaps", str(s["swaps"]), "--reps", str(s["reps"]),
                                "--warmup", str(s["warmup"]), "--label", study,
                                "--json", js, "--csv", csv]
        for t in self.args.add:
            argv += ["--add", t]
        for t in self.args.skip:
            argv += ["--skip", t]
        r = self.run(mpi, n, argv, tag, extra_env)
        if r is None:
            return []
        if show:
            sys.stdout.write(r.stdout)
            sys.stdout.flush()
        recs = self.read_json(mpi, js)
        if recs is None:
            return []
        for rec in recs:
            rec["study"] = study
            rec["mpi_name"] = mpi.name
        self.records.extend(recs)
        return recs

    def osu_run(self, mpi):
        exe = mpi.exe("bench/hs_osu")
        if not exe:
            self.notes.append("%s: hs_osu not built" % mpi.name)
            self.step += 1
        else:
            js = os.path.join(self.raw, "%s-osu.json" % mpi.name)
            r = self.run(mpi, 2, [exe, "--iters", self.p["osu_iters"], "--json", js], "osu one-sided")
            if r is not None:
                self._load_osu(js, mpi, r.stdout)
        shm = mpi.exe("bench/hs_osu_shmem")
        if shm:
            js = os.path.join(self.raw, "%s-osu-shmem.json" % mpi.name)
            r = self.run(mpi, 2, [shm, "--iters", self.p["osu_iters"], "--json", js],
                         "osu openshmem", extra_env={"OMPI_MCA_osc": "^rdma"})
            if r is not None:
                self._load_osu(js, mpi, r.stdout)
        elif mpi.openmpi:
            self.notes.append("%s: hs_osu_shmem not built (no OpenSHMEM)" % mpi.name)

    def _load_osu(self, js, mpi, stdout):
        recs = self.read_json(mpi, js)
        if recs is None:
            return
        for rec in recs:
            rec["mpi_name"] = mpi.name
        self.osu.extend(recs)

    def app_run(self, mpi, app):
        exe = mpi.exe(os.path.join("apps", app, app))
        if not exe:
            self.notes.append("%s: %s is not built in %s; its timings are left out"
                              % (mpi.name, app, mpi.dir))
            self.step += 1
            return
        js = os.path.join(self.raw, "%s-%s.json" % (mpi.name, app))
        argv = [exe, "--transport", "all", "--steps", str(self.p["apps_steps"]), "--json", js]
        argv += APP_ARGS.get(app, [])
        r = self.run(mpi, 2, argv, app)
        if r is None:
            return
        doc = self.read_json(mpi, js)
        if doc is None:
            return
        for u in doc.get("unavailable", []) if isinstance(doc, dict) else []:
            self.notes.append("%s: %s: transport `%s` cannot serve its fields: %s"
                              % (mpi.name, app, u.get("transport"), u.get("reason")))
        for run in find_runs(doc):
            run["app"] = app
            run["mpi_name"] = mpi.name
            self.apps.append(run)

    def fields_run(self, mpi):
        exe = mpi.exe("bench/hs_fields_bench")
        if not exe:
            self.notes.append("%s: hs_fields_bench not built; reverse table left out" % mpi.name)
            self.step += 1
            return
        for alloc in ("malloc", "hs"):
            argv = [exe, "--alloc", alloc, "--reps", str(self.p["monc"]["reps"])]
            for t in FIELDS_TRANSPORTS:
                argv += ["--transport", t]
            r = self.run(mpi, 2, argv, "reverse and mixed depths, %s" % alloc)
            if r is None:
                continue
            rows = []
            for line in r.stdout.splitlines():
                w = line.split()
                if len(w) == 7 and w[0] in FIELDS_TRANSPORTS:
                    try:
                        rows.append([w[0]] + [float(x) for x in w[1:]])
                    except ValueError:
                        pass
            self.fields.append((mpi.name, alloc, rows))

    def go(self):
        p = self.p
        nm = len(self.mpis)
        self.nsteps = nm * (1 + len(p["weak_ranks"]) + len(p["strong_ranks"]) + 1 + 3 + 1) + \
            sum(1 for m in self.mpis if m.exe("bench/hs_osu_shmem"))
        for mpi in self.mpis:
            if not mpi.exe("bench/hs_bench"):
                log("study: %s has no bench/hs_bench in %s (build it first)" % (mpi.name, mpi.dir))
        # 1. the MONC case at 2 ranks, printed as it comes
        monc = {}
        for mpi in self.mpis:
            # shm:stream=1: halo writes with streaming stores, which auto leaves off here
            # (the fields fit this core's share of the L3; docs/api.md "Streaming halo stores").
            recs = self.bench(mpi, 2, "monc", ["--mode", "weak"] + MONC + ["--add", "shm:stream=1"],
                              p["monc"], "MONC case", show=True)
            monc[mpi.name] = recs
            # The same with ordinary malloc'd fields (what Fortran allocatables get), and shm
            # with the core option remap=1, which makes them node-shared in place.
            self.nsteps += 4
            self.bench(mpi, 2, "monc-malloc", ["--mode", "weak", "--alloc", "malloc"] + MONC +
                       ["--add", "shm:remap=1", "--add", "shm:remap=1,stream=1"],
                       p["monc"], "MONC case, malloc'd fields", show=True)
            # What a model pays when it reads its halos after the swap (--touch): where
            # streaming stores only move the cost from the swap to the next step.
            self.bench(mpi, 2, "monc-touch", ["--mode", "weak"] + MONC +
                       ["--transport", "p2p", "--transport", "shm", "--transport", "shm:stream=1",
                        "--skip", "petsc", "--skip", "ghex", "--touch"],
                       p["monc"], "MONC case, halos read after each swap")
            # The reverse exchange and mixed depths (hs_fields_bench), both memory kinds.
            self.fields_run(mpi)
            # shmem needs an opt-in and (Open MPI 4.1.4) osc/rdma off, which the RMA
            # transports need on: it gets a launch of its own, with p2p again as reference.
            if any(r["transport"] == "shmem" and "HALOSWAP_SHMEM" in r["status"] for r in recs):
                self.nsteps += 1
                self.bench(mpi, 2, "monc-shmem", ["--mode", "weak"] + MONC +
                           ["--transport", "p2p", "--transport", "shmem"], p["monc"],
                           "MONC case, shmem launch", show=True,
                           extra_env={"HALOSWAP_SHMEM": "1", "OMPI_MCA_osc": "^rdma"})
        # 2. OSU-style micro-benchmarks (short)
        for mpi in self.mpis:
            self.osu_run(mpi)
        # 3. weak and strong scaling
        for mpi in self.mpis:
            for n in p["weak_ranks"]:
                if n == 2 and monc.get(mpi.name):
                    # the weak-scaling point at 2 ranks is the MONC case itself
                    self.step += 1
                    self.records.extend(dict(r, study="weak") for r in monc[mpi.name])
                    continue
                self.bench(mpi, n, "weak", ["--mode", "weak"] + MONC, p["scale"], "weak scaling")
            for n in p["strong_ranks"]:
                g = ["--mode", "strong", "--global", p["strong_global"]] + MONC[2:]
                self.bench(mpi, n, "strong", g, p["scale"], "strong scaling")
        # 4. message-size sweep (one field, z extent varied)
        for mpi in self.mpis:
            sw = ["--mode", "sweep", "--local", "16,16,1", "--sweep-z", p["sweep_z"], "--depth", "2",
                  "--fields", "1"]
            self.bench(mpi, 2, "sweep", sw, p["sweep"], "message-size sweep")
        # 5. mini-apps
        for mpi in self.mpis:
            for app in ("monc-mini", "brams-mini", "lare-mini"):
                self.app_run(mpi, app)
            self.nsteps += 1  # epic-fields: its methods include epic-ref (EPIC's own exchange)
            self.app_run(mpi, "epic-fields")
        self.write()

    # ---------------------------------------------------------------- output
    def write(self):
        latest = os.path.join(self.out, "latest.json")
        with open(latest, "w") as f:
            json.dump(self.records, f, indent=1)
        with open(os.path.join(self.out, "osu.json"), "w") as f:
            json.dump(self.osu, f, indent=1)
        with open(os.path.join(self.out, "miniapps.json"), "w") as f:
            json.dump(self.apps, f, indent=1)
        with open(os.path.join(self.out, "fields.json"), "w") as f:
            json.dump(self.fields, f, indent=1)
        plots = make_plots(self)
        report = os.path.join(self.out, "report.md")
        with open(report, "w") as f:
            f.write(render_report(self, plots))
        log("")
        log("study finished in %.0f s: %d halo records, %d OSU records, %d mini-app runs"
            % (time.time() - self.t0, len(self.records), len(self.osu), len(self.apps)))
        if self.failures:
            log("%d runs failed or timed out (listed in the report)" % len(self.failures))
        log("report: %s" % report)
        log("records: %s" % latest)


def find_runs(doc):
    """Mini-app JSON: a list of per-transport runs wherever it sits in the document."""
    out = []

    def walk(x):
        if isinstance(x, dict):
            if "transport" in x and ("per_step_max" in x or "timing" in x):
                out.append(dict(x))
                return
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(doc)
    return out


# -------------------------------------------------------------------- report helpers
FIELDS_TRANSPORTS = ("p2p", "nbr", "shm", "cma", "rma-fence", "rma-pscw", "rma-passive")


def ok(r):
    return r.get("status") == "ok" and r.get("us_per_swap_median") is not None


def label(r):
    name = r["transport"] if r["variant"] == "default" else r["spec"]
    if r["transport"] == "auto" and r.get("selected"):
        name += " (chose %s)" % r["selected"]
    return name


def fmt_us(x):
    if x is None:
        return "-"
    if x >= 1e5:
        return "%.0f" % x
    if x >= 100:
        return "%.0f" % x
    return "%.1f" % x


def fmt_bytes(b):
    if b is None:
        return "-"
    for unit, k in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= k:
            return "%.2f %s" % (b / k, unit)
    return "%d B" % b


def short_mpi(recs, mpi_name):
    """'Open MPI 4.1.4' / 'MPICH 4.0.2' from the library version string of the records."""
    for r in recs:
        if r.get("mpi_name") == mpi_name and r.get("mpi"):
            v = r["mpi"].replace("\t", " ")
            m = re.search(r"Open MPI v?([0-9][0-9.]*)", v)
            if m:
                return "Open MPI " + m.group(1)
            m = re.search(r"MPICH Version:?\s*([0-9][0-9.a-z]*)", v)
            if m:
                return "MPICH " + m.group(1)
            return v.split(",")[0][:40]
    return mpi_name


PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#17becf", "#bcbd22", "#7f7f7f"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]


def style_for(name, names):
    """The same colour and marker for a transport in every plot; memcpy limits dashed grey."""
    if name == "memcpy-bound":
        return dict(color="black", marker="", linestyle="--")
    if name == "memcpy-1core":
        return dict(color="0.55", marker="", linestyle=":")
    order = [n for n in names if not n.startswith("memcpy")]
    i = order.index(name) if name in order else 0
    return dict(color=PALETTE[i % len(PALETTE)], marker=MARKERS[i % len(MARKERS)], linestyle="-")


def fmt_size(b):
    """Message sizes in binary units, as OSU prints them."""
    for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k and b % k == 0:
            return "%d %s" % (b // k, unit)
    return "%d B" % b


REFS = ("monc-ref", "petsc", "ghex")


def fmt_ratio(x):
    return "-" if x is None else "%.2f" % x


def is_method(r):
    """A transport (not a memcpy bound or a reference method)."""
    return not r["transport"].startswith("memcpy") and r["transport"] not in REFS


def launch_summary(recs):
    """One launch's MONC-case facts: best fixed transport, auto's regret, references."""
    tr = [r for r in recs if ok(r) and is_method(r)]
    fixed = [r for r in tr if r["transport"] != "auto"]
    if not fixed:
        return None
    best = min(fixed, key=lambda r: r["us_per_swap_median"])
    # auto races the transports with their default options (docs/benchmarks.md); the variants
    # make bench adds (stream=1, remap=1) are the user's choice, reported, not raced.
    plain = [r for r in fixed if ":" not in r["spec"]] or fixed
    best_plain = min(plain, key=lambda r: r["us_per_swap_median"])
    get = lambda name: next((r for r in recs if r["spec"] == name and ok(r)), None)
    au, mref, pet, p2p = get("auto"), get("monc-ref"), get("petsc"), get("p2p")
    return dict(best=best, best_plain=best_plain, auto=au, mref=mref, petsc=pet, p2p=p2p,
                ghex=get("ghex"),
                auto_ratio=au["us_per_swap_median"] / best_plain["us_per_swap_median"]
                if au else None)


def summary_lines(recs, title):
    """The issue-14 targets for one launch, as markdown bullet text."""
    s = launch_summary(recs)
    if not s:
        return ["- %s: no measurement." % title]
    b, L = s["best"], []
    line = "- %s: fastest fixed `%s` %s us/swap = %.2fx the memcpy bound" % (
        title, b["spec"], fmt_us(b["us_per_swap_median"]), b["ratio_to_memcpy_bound"])
    if s["mref"] and b.get("ratio_to_monc_ref"):
        line += ", %.1fx faster than monc-ref (what a MONC user has now)" % (
            1 / b["ratio_to_monc_ref"])
    if s["petsc"] and b.get("ratio_to_petsc"):
        line += ", %.1fx faster than PETSc" % (1 / b["ratio_to_petsc"])
    if s["ghex"] and b.get("ratio_to_ghex"):
        line += ", %.1fx faster than GHEX" % (1 / b["ratio_to_ghex"])
    L.append(line + ".")
    if s["auto"]:
        sel = s["auto"].get("selected", "?")
        bp = s["best_plain"]
        same = next((r for r in recs if ok(r) and r["spec"] == sel), None)
        L.append("  `auto` chose `%s`%s: %.2fx the fastest fixed transport with default options, "
                 "`%s` (target <= 1.05: %s)%s." % (
            sel, " (the fastest)" if sel == bp["spec"] else "", s["auto_ratio"], bp["spec"],
            "met" if s["auto_ratio"] <= 1.05 else "NOT met",
            "; the chosen transport's own plan ran at %.2fx the fastest" % (
                same["us_per_swap_median"] / bp["us_per_swap_median"]) if same else ""))
    if s["mref"]:
        faster = ["`%s` %.2fx" % (r["spec"], 1 / r["ratio_to_monc_ref"]) for r in recs
                  if ok(r) and is_method(r) and r.get("ratio_to_monc_ref")]
        L.append("  Speed-up over monc-ref: " + ", ".join(faster) + ".")
    return L


def monc_table(recs):
    """Markdown table of one MONC-case run."""
    rows = ["| method | us/swap median | min - max | vs p2p | vs memcpy bound | vs memcpy 1 core "
            "| vs monc-ref | vs petsc | vs ghex | allocated/rank | allocated / halo bytes |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    skipped = []
    for r in recs:
        if not ok(r):
            skipped.append("`%s`: %s" % (r["spec"], r["status"]))
            continue
        rp = r.get("ratio_to_p2p")
        kind = r["transport"].startswith("memcpy") or r["transport"] in REFS
        rows.append("| %s | %s | %s - %s | %s | %.2f | %.2f | %s | %s | %s | %s | %s |" % (
            ("*%s*" % r["transport"]) if kind else "`%s`" % label(r),
            fmt_us(r["us_per_swap_median"]), fmt_us(r["us_per_swap_min"]),
            fmt_us(r["us_per_swap_max"]), "-" if kind or rp is None else "%.2f" % rp,
            r["ratio_to_memcpy_bound"], r["ratio_to_memcpy_1core"],
            fmt_ratio(r.get("ratio_to_monc_ref")), fmt_ratio(r.get("ratio_to_petsc")),
            fmt_ratio(r.get("ratio_to_ghex")), "-" if kind else fmt_bytes(r["bytes_allocated"]),
            "-" if kind else "%.2f" % r["bytes_allocated_ratio"]))
    return "\n".join(rows), skipped


def scaling_table(recs):
    ranks = sorted({r["ranks"] for r in recs})
    over = {r["ranks"]: r["oversubscribed"] for r in recs}
    names = []
    for r in recs:
        n = r["spec"]
        if n not in names:
            names.append(n)
    head = "| transport | " + " | ".join("%d%s" % (n, "*" if over[n] else "") for n in ranks) + " |"
    rows = [head, "|---|" + "---:|" * len(ranks)]
    for name in names:
        cells = []
        for n in ranks:
            m = [r for r in recs if r["spec"] == name and r["ranks"] == n]
            if m and ok(m[0]):
                c = fmt_us(m[0]["us_per_swap_median"])
                if m[0]["transport"] == "auto" and m[0].get("selected"):
                    c += " (%s)" % m[0]["selected"]
                cells.append(c)
            else:
                cells.append("-")
        if any(c != "-" for c in cells):
            rows.append("| `%s` | %s |" % (name, " | ".join(cells)))
    return "\n".join(rows)


def first_seen(values):
    """The distinct values in the order they first appear."""
    return list(dict.fromkeys(values))


def make_plots(st):
    plots = {}
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        st.notes.append("matplotlib is not installed: no plots (tools/install-deps.sh installs it)")
        return plots

    def panels(recs, keep=lambda r: True):
        """One panel per MPI with records: the figure, and (ax, MPI, its records) per panel."""
        mpis = [m.name for m in st.mpis if any(r["mpi_name"] == m.name for r in recs)]
        fig, axes = plt.subplots(1, len(mpis), figsize=(6.2 * len(mpis), 4.6), squeeze=False)
        return fig, [(ax, mname, [r for r in recs if r["mpi_name"] == mname and keep(r)])
                     for ax, mname in zip(axes[0], mpis)]

    def save(fig, key, name):
        fig.tight_layout()
        path = os.path.join(st.out, name)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        plots[key] = os.path.basename(path)

    for study, xlabel in (("weak", "processes (weak scaling, local 16x16x256, 30 fields)"),
                          ("strong", "processes (strong scaling)")):
        recs = [r for r in st.records if r.get("study") == study]
        if not recs:
            continue
        all_names = first_seen(r["spec"] for r in recs)
        fig, panel = panels(recs, ok)
        for ax, mname, mr in panel:
            names = first_seen(r["spec"] for r in mr)
            for name in names:
                pts = sorted((r["ranks"], r["us_per_swap_median"], r["us_per_swap_min"],
                              r["us_per_swap_max"], r["oversubscribed"])
                             for r in mr if r["spec"] == name)
                xs = [p[0] for p in pts]
                ys = [p[1] for p in pts]
                err = [[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]]
                sty = style_for(name, all_names)
                ax.errorbar(xs, ys, yerr=err, capsize=3, label=name, color=sty["color"],
                            marker=sty["marker"] or None, linestyle=sty["linestyle"],
                            linewidth=1.0 if name.startswith("memcpy") else 1.5)
                ox = [p[0] for p in pts if p[4]]
                oy = [p[1] for p in pts if p[4]]
                if ox:
                    ax.plot(ox, oy, "o", markersize=12, markerfacecolor="none",
                            markeredgecolor=sty["color"])
            ax.set_yscale("log")
            ax.set_xticks(sorted({r["ranks"] for r in mr}) or [1])
            ax.set_xlabel(xlabel)
            ax.set_ylabel("communication time per swap (us)")
            ax.set_title("%s scaling: %s" % (study, short_mpi(recs, mname)), fontsize=10)
            over = sorted({r["ranks"] for r in mr if r["oversubscribed"]})
            if over:
                ax.axvspan(min(over) - 0.5, max(over) + 0.5, color="0.9", zorder=0)
                ax.text(0.99, 0.02, "shaded / ringed: oversubscribed", transform=ax.transAxes,
                        ha="right", fontsize=7)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        save(fig, study, "%s-scaling.png" % study)
    recs = [r for r in st.records if r.get("study") == "sweep" and ok(r)]
    if recs:
        fig, panel = panels(recs)
        for ax, mname, mr in panel:
            names = first_seen(r["spec"] for r in mr)
            for name in names:
                pts = sorted((r["halo_bytes_per_swap"], r["us_per_swap_median"])
                             for r in mr if r["spec"] == name)
                sty = style_for(name, names)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color=sty["color"],
                        marker=sty["marker"] or None, linestyle=sty["linestyle"], label=name)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("halo bytes per swap per rank")
            ax.set_ylabel("time per swap (us)")
            ax.set_title("message-size sweep, 2 ranks: %s" % short_mpi(mr, mname), fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        save(fig, "sweep", "sweep.png")
    if st.osu:
        for what in ("latency", "bandwidth"):
            recs = [r for r in st.osu if r.get("metric") == what]
            if not recs:
                continue
            fig, panel = panels(recs)
            for ax, mname, mr in panel:
                keys = first_seen("%s %s" % (r["method"], r["op"]) for r in mr)
                methods = first_seen(k.split()[0] for k in keys)
                for k in keys:
                    pts = sorted((r["bytes"], r["median"]) for r in mr
                                 if "%s %s" % (r["method"], r["op"]) == k)
                    i = methods.index(k.split()[0])
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], label=k,
                            color=PALETTE[i % len(PALETTE)], marker=MARKERS[i % len(MARKERS)],
                            markersize=4, linestyle="--" if k.endswith("get") else "-")
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                ax.set_xlabel("message size (bytes)")
                ax.set_ylabel("latency (us)" if what == "latency" else "bandwidth (MB/s)")
                ax.set_title("OSU-style %s, 2 ranks: %s" % (what, mname), fontsize=10)
                ax.grid(True, which="both", alpha=0.3)
                ax.legend(fontsize=6, ncol=2)
            save(fig, "osu-" + what, "osu-%s.png" % what)
    return plots


OSU_COLS = [("two-sided", "put"), ("rma-lock", "put"), ("rma-lock", "get"), ("shmem", "put"),
            ("shmem", "get")]


def osu_tables(st):
    """Seed 002's Tables 3-4 layout: 4-byte bandwidth and latency; MPI-3 RMA = lock/unlock."""
    out = []
    for metric, title, unit in (("bandwidth", "Table 3 layout: bandwidth of 4-byte transfers",
                                 "MB/s"),
                                ("latency", "Table 4 layout: latency of 4-byte transfers", "us")):
        out.append("**%s (%s); MPI-3 RMA column = lock/unlock, as in the paper.**\n" % (title, unit))
        out.append("| system | data transfer | MPI P2P | MPI-3 RMA put | MPI-3 RMA get | SHMEM put "
                   "| SHMEM get |")
        out.append("|---|---|---:|---:|---:|---:|---:|")
        for m in st.mpis:
            cells = []
            for meth, op in OSU_COLS:
                rr = [r for r in st.osu if r["mpi_name"] == m.name and r["metric"] == metric and
                      r["method"] == meth and (r["op"] == op or meth == "two-sided") and
                      r["bytes"] == 4]
                cells.append("%.2f" % rr[0]["median"] if rr else "-")
            cpu = next((r.get("cpu", "") for r in st.records), platform.processor())
            out.append("| %s, %s | on-node | %s |" % (cpu or "this machine", m.name,
                                                      " | ".join(cells)))
        out.append("")
    # every synchronisation mode at a few sizes
    sizes = [4, 64, 1024, 16384, 262144, 4194304]
    for metric, unit in (("latency", "us"), ("bandwidth", "MB/s")):
        out.append("**All modes, %s (%s), median of repetitions.**\n" % (metric, unit))
        out.append("| MPI | method | op | " + " | ".join(fmt_size(s) for s in sizes) + " |")
        out.append("|---|---|---|" + "---:|" * len(sizes))
        keys = first_seen((r["mpi_name"], r["method"], r["op"])
                          for r in st.osu if r["metric"] == metric)
        for k in keys:
            cells = []
            for s in sizes:
                rr = [r for r in st.osu if (r["mpi_name"], r["method"], r["op"]) == k and
                      r["metric"] == metric and r["bytes"] == s]
                cells.append(("%.2f" % rr[0]["median"]) if rr else "-")
            out.append("| %s | %s | %s | %s |" % (k[0], k[1], k[2], " | ".join(cells)))
        out.append("")
    return "\n".join(out)


def render_report(st, plots):
    L = []
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    anyrec = st.records[0] if st.records else {}
    mach = anyrec.get("machine", {})
    L.append("# haloswap benchmark report\n")
    L.append("Generated %s by `%s` (preset `%s`, %.0f s).\n" % (
        now, " ".join(["python3", "bench/study.py"] + sys.argv[1:]), st.args.preset,
        time.time() - st.t0))
    L.append("Machine: %s, %s, %s cores. MPI libraries: %s.\n" % (
        mach.get("host", platform.node()), mach.get("cpu", platform.processor()),
        mach.get("cores", ncores()),
        "; ".join(short_mpi(st.records, m.name) for m in st.mpis)))
    L.append("Metric: communication time per swap = the maximum over ranks of each rank's mean "
             "time per swap, median of the repetitions with min - max; every method of one table "
             "ran interleaved in one launch. *memcpy bound* = the same halo bytes copied as "
             "z-columns from the interior strips by every rank at once; *memcpy 1 core* = the "
             "same copy on one rank alone. Oversubscribed points (more ranks than cores) are "
             "marked `*`; their timings measure the scheduler as much as the transport.\n")

    # ---- recommendation
    L.append("## Which transport to use here\n")
    for m in st.mpis:
        recs = [r for r in st.records if r.get("study") == "monc" and r["mpi_name"] == m.name]
        s = launch_summary(recs)
        if not s:
            L.append("- **%s**: no measurement.\n" % m.name)
            continue
        best, bp, a = s["best"], s["best_plain"], s["auto"]
        line = "- **%s**, MONC case at 2 ranks: fastest fixed transport `%s` (%s us/swap, %.2fx " \
               "the memcpy bound)" % (m.name, bp["spec"], fmt_us(bp["us_per_swap_median"]),
                                      bp["ratio_to_memcpy_bound"])
        if best is not bp:
            line += "; fastest variant `%s` (%s us/swap, %.2fx the bound: see the `--touch` " \
                    "table for what it costs the model)" % (
                        best["spec"], fmt_us(best["us_per_swap_median"]),
                        best["ratio_to_memcpy_bound"])
        if a:
            ratio = s["auto_ratio"]
            line += "; `auto` chose `%s` and ran at %.2fx the fastest fixed one (target <= 1.05: %s)" % (
                a.get("selected", "?"), ratio, "met" if ratio <= 1.05 else "NOT met")
            if a.get("selected") == bp["transport"] and ratio > 1.05:
                line += " - it chose the fastest transport, and runs that transport's own plan, " \
                        "so the gap is this run's noise between two identical plans"
        L.append(line + ".")
        # scaling winners
        for study in ("weak", "strong"):
            sr = [r for r in st.records if r.get("study") == study and r["mpi_name"] == m.name
                  and ok(r) and not r["transport"].startswith("memcpy") and r["transport"] != "auto"]
            wins = []
            for n in sorted({r["ranks"] for r in sr}):
                rn = [r for r in sr if r["ranks"] == n]
                b = min(rn, key=lambda r: r["us_per_swap_median"])
                wins.append("%d%s: `%s`" % (n, "*" if b["oversubscribed"] else "", b["spec"]))
            if wins:
                L.append("  - %s scaling, fastest per process count: %s." % (study, ", ".join(wins)))
    L.append("\n### Against what you have now\n")
    L.append("*monc-ref* is MONC's own halo swap (halocommunication.F90) written in C on the same "
             "fields: what a MONC user runs today. *petsc* is PETSc's DMDA + DMGlobalToLocal on "
             "the same grid and fields (where PETSc is installed for that MPI library). *ghex* is "
             "GHEX's structured regular exchange of the same fields (C++, built by make bench "
             "where it can be: bench/ghex/build.sh). All are measured in the same launch as the "
             "transports.\n")
    for m in st.mpis:
        for study, kind in (("monc", "hs_alloc'd fields"), ("monc-malloc", "malloc'd fields")):
            recs = [r for r in st.records if r.get("study") == study and r["mpi_name"] == m.name]
            if recs:
                L.extend(summary_lines(recs, "**%s**, %s" % (m.name, kind)))
    L.append("\nUse `transport = \"auto\"` (or `HALOSWAP_TRANSPORT=auto`) to have the library "
             "measure the candidates on your own plan at creation and keep the fastest; "
             "`HALOSWAP_VERBOSE=1` prints its timings.\n")

    # ---- MONC tables
    L.append("## MONC case: local 16x16x256 z-fast, depth 2, box, 30 float64 fields, 2 ranks\n")
    for m, study in [(m, s_) for m in st.mpis for s_ in ("monc", "monc-malloc")]:
        recs = [r for r in st.records if r.get("study") == study and r["mpi_name"] == m.name]
        if not recs:
            L.append("%s: no results.\n" % m.name)
            continue
        extra = [r for r in st.records if r.get("study") == "monc-shmem" and
                 r["mpi_name"] == m.name and r["transport"] == "shmem"]
        if extra:
            recs = [r for r in recs if r["transport"] != "shmem"] + extra
        r0 = recs[0]
        L.append("### %s (`%s`)\n" % (short_mpi(recs, m.name), recs[0]["mpi"].replace("\t", " ")))
        L.append("Halo bytes per swap per rank: %s; %d swaps x %d repetitions; fields in %s "
                 "memory.\n" % (fmt_bytes(r0["halo_bytes_per_swap"]), r0["swaps"], r0["reps"],
                                r0.get("field_alloc", "?")))
        t, skipped = monc_table(recs)
        L.append(t + "\n")
        if extra:
            L.append("`shmem` ran in a launch of its own (HALOSWAP_SHMEM=1, OMPI_MCA_osc=^rdma, "
                     "which the RMA transports cannot run with); its ratios are to that launch's "
                     "own p2p and memcpy measurements.\n")
        if skipped:
            L.append("Not measured: " + "; ".join(skipped) + "\n")

    # ---- halos read after the swap
    tr = [r for r in st.records if r.get("study") == "monc-touch" and ok(r)]
    if tr:
        L.append("## MONC case with the halos read after each swap (`--touch`)\n")
        L.append("Each swap is followed, inside the timing, by a read of every halo cell (the "
                 "model's next step). Streaming stores (`stream=1`) skip reading a halo line "
                 "before overwriting it, but leave it in memory rather than in the cache; where "
                 "the fields fit the cache the model then pays that back. `auto` (the default) "
                 "streams only when the plan's fields exceed the core's share of the last-level "
                 "cache.\n")
        L.append("| MPI | " + " | ".join("`%s`" % r["spec"] for r in tr
                 if r["mpi_name"] == tr[0]["mpi_name"]) + " |")
        L.append("|---|" + "---:|" * len([r for r in tr if r["mpi_name"] == tr[0]["mpi_name"]]))
        for m in st.mpis:
            rr = [r for r in tr if r["mpi_name"] == m.name]
            if rr:
                L.append("| %s | " % m.name + " | ".join(
                    "%s us (%.2fx bound)" % (fmt_us(r["us_per_swap_median"]),
                                             r.get("ratio_to_memcpy_bound") or 0) for r in rr) + " |")
        L.append("")

    # ---- reverse exchange and mixed depths
    if st.fields:
        L.append("## Reverse exchange and mixed depths (hs_fields_bench, MONC case, 2 ranks)\n")
        L.append("Microseconds per operation, median over repetitions, forward and reverse "
                 "(sum) interleaved in one launch; *mixed* = one plan with half the fields at "
                 "depth 2 and half at depth 1, *separate* = the two halves as two plans swapped "
                 "one after the other. Targets: reverse / forward <= 1.3, mixed / separate "
                 "<= 1.0.\n")
        L.append("| MPI | fields | transport | forward | reverse | rev/fwd | mixed | separate "
                 "| mix/sep |")
        L.append("|---|---|---|---:|---:|---:|---:|---:|---:|")
        nrev = nmix = tot = 0
        for mname, alloc, rows in st.fields:
            for w in rows:
                tot += 1
                nrev += w[3] <= 1.3
                nmix += w[6] <= 1.0
                L.append("| %s | %s | `%s` | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f |" % (
                    mname, alloc, w[0], w[1], w[2], w[3], w[4], w[5], w[6]))
        L.append("\nReverse / forward <= 1.3 in %d of %d rows; mixed / separate <= 1.0 in %d of "
                 "%d.\n" % (nrev, tot, nmix, tot))

    # ---- memory
    L.append("## Memory per plan per rank (MONC case, 2 ranks)\n")
    L.append("Bytes the library allocates for one plan on one rank (core geometry + transport "
             "buffers, windows and sub-plans; `hs_plan_get_stats().bytes_allocated`, max over "
             "ranks), and as a ratio to the halo bytes the plan moves per swap.\n")
    rows = ["| transport | " + " | ".join(m.name for m in st.mpis) + " |",
            "|---|" + "---:|" * len(st.mpis)]
    names = []
    for r in st.records:
        if r.get("study") == "monc" and not r["transport"].startswith("memcpy") and r["spec"] not in names:
            names.append(r["spec"])
    for name in names:
        cells = []
        for m in st.mpis:
            rr = [r for r in st.records if r.get("study") == "monc" and r["mpi_name"] == m.name
                  and r["spec"] == name and ok(r)]
            rr += [r for r in st.records if r.get("study") == "monc-shmem" and
                   r["mpi_name"] == m.name and r["spec"] == name and r["spec"] != "p2p" and ok(r)]
            cells.append("%s (%.2fx)" % (fmt_bytes(rr[0]["bytes_allocated"]),
                                         rr[0]["bytes_allocated_ratio"]) if rr else "-")
        rows.append("| `%s` | %s |" % (name, " | ".join(cells)))
    L.append("\n".join(rows) + "\n")

    # ---- scaling
    for study, title in (("weak", "Weak scaling (local 16x16x256, 30 fields, depth 2, box)"),
                         ("strong", "Strong scaling (global %s, 30 fields, depth 2, box)"
                          % st.p["strong_global"].replace(",", "x"))):
        L.append("## %s\n" % title)
        L.append("Communication time per swap (us, median); `*` = oversubscribed.\n")
        if study in plots:
            L.append("![%s scaling](%s)\n" % (study, plots[study]))
        for m in st.mpis:
            recs = [r for r in st.records if r.get("study") == study and r["mpi_name"] == m.name]
            if recs:
                L.append("**%s**\n" % m.name)
                L.append(scaling_table(recs) + "\n")

    # ---- sweep
    L.append("## Message-size sweep (2 ranks, 1 field, local 16x16xZ, depth 2, box)\n")
    if "sweep" in plots:
        L.append("![sweep](%s)\n" % plots["sweep"])
    for m in st.mpis:
        recs = [r for r in st.records if r.get("study") == "sweep" and r["mpi_name"] == m.name]
        if not recs:
            continue
        sizes = sorted({r["halo_bytes_per_swap"] for r in recs})
        names = first_seen(r["spec"] for r in recs)
        L.append("**%s** (us per swap by halo bytes per rank)\n" % m.name)
        L.append("| transport | " + " | ".join(fmt_bytes(s) for s in sizes) + " |")
        L.append("|---|" + "---:|" * len(sizes))
        for name in names:
            cells = []
            for s in sizes:
                rr = [r for r in recs if r["spec"] == name and r["halo_bytes_per_swap"] == s and ok(r)]
                cells.append(fmt_us(rr[0]["us_per_swap_median"]) if rr else "-")
            if any(c != "-" for c in cells):
                L.append("| `%s` | %s |" % (name, " | ".join(cells)))
        L.append("")

    # ---- mini-apps
    L.append("## Mini-apps (2 ranks)\n")
    if st.apps:
        L.append("Time per timestep, max over ranks (seconds): whole step and its communication "
                 "part.\n")
        L.append("| app | MPI | transport | step | communication | checksums |")
        L.append("|---|---|---|---:|---:|---|")
        for a in st.apps:
            ps = a.get("per_step_max", {})
            ref = [b for b in st.apps if b["app"] == a["app"] and b.get("transport") == "p2p"]
            cs = a.get("checksums")
            if not isinstance(cs, dict):
                same = "-"
            elif ref and isinstance(ref[0].get("checksums"), dict):
                same = "same bits as p2p/%s" % ref[0]["mpi_name"] if cs == ref[0]["checksums"] \
                    else "DIFFER from p2p/%s" % ref[0]["mpi_name"]
            else:
                same = "%d fields" % len(cs)
            L.append("| %s | %s | `%s` | %s | %s | %s |" % (
                a["app"], a["mpi_name"], a.get("transport", "?"),
                "%.3e" % ps["step"] if "step" in ps else "-",
                "%.3e" % ps["comm"] if "comm" in ps else "-", same))
        L.append("")
    L.extend(epic_fields_table(st.apps))
    app_notes = [n for n in st.notes if "mini" in n]
    for n in app_notes:
        L.append("- " + n)
    if not st.apps and not app_notes:
        L.append("No mini-app results.")
    L.append("")

    # ---- OSU
    L.append("## One-sided micro-benchmarks (OSU style, 2 ranks, one node)\n")
    if st.osu:
        for k in ("osu-latency", "osu-bandwidth"):
            if k in plots:
                L.append("![%s](%s)\n" % (k, plots[k]))
        L.append(osu_tables(st))
    else:
        L.append("No OSU results.\n")

    # ---- the simulated study (bench/sim/study_sim.py writes it; SimGrid runs take hours)
    sim = os.path.join(SIMULATED, "simulated.md")
    if os.path.exists(sim):
        with open(sim) as f:
            body = f.read().split("\n")
        L.append("## SIMULATED scaling at thousands of ranks (SimGrid SMPI, not measured)\n")
        L.append("Copied from `%s/simulated.md` (`python3 bench/sim/study_sim.py`, "
                 "docs/simulation.md); plots `docs/img/sim_weak.png` and "
                 "`docs/img/sim_strong.png`. Every number in this section is a simulation of a "
                 "modelled platform, not a measurement on this machine.\n"
                 % os.path.relpath(SIMULATED, ROOT))
        for line in body[1:]:  # its own title replaced by the one above
            L.append("#" + line if line.startswith("## ") else line)
    # ---- notes, failures, commands
    other = [n for n in st.notes if "mini" not in n]
    if other or st.failures:
        L.append("## Notes and failed runs\n")
        for n in other:
            L.append("- " + n)
        for f in st.failures:
            L.append("- failed: `" + f.replace("`", "'").replace("\n", " ")[:600] + "`")
        L.append("")
    L.append("## Commands\n")
    L.append("Every launch of this study, in order (raw JSON/CSV per launch in `raw/`):\n")
    L.append("```")
    L.extend(st.commands)
    L.append("```\n")
    return "\n".join(L)


def epic_fields_table(apps):
    """epic-fields: every method's exchange time against epic-ref (docs/mini-apps.md)."""
    runs = [a for a in apps if a.get("app") == "epic-fields"]
    if not runs:
        return []
    L = ["### epic-fields: exchange per step against EPIC's own exchange (`epic-ref`)\n",
         "Seconds per step, max over ranks of the per-rank mean over the timed steps (after "
         "warm-up; every exchange timed from a barrier; methods interleaved step by step), and "
         "median [min-max] over the steps of the per-step max over ranks. `epic-ref`: Irecv/Send "
         "with buffers allocated per call, as EPIC's field_mpi.f90; it sums the reverse in EPIC's "
         "order, and with the reproducible deposit (the default) its bits equal haloswap's "
         "(exact sums).\n",
         "| MPI | method | par2grid | grid2par | surface | exchange | median [min-max] | vs epic-ref: "
         "exchange (median) | serial check |",
         "|---|---|---:|---:|---:|---:|---|---:|---|"]
    for a in runs:
        if a.get("status") != "ok":
            L.append("| %s | `%s` | unavailable: %s | | | | | | |" % (
                a["mpi_name"], a.get("transport"), a.get("reason", "?")))
            continue
        ps, ex, se = a.get("per_step_max", {}), a.get("exchange_per_step", {}), a.get("serial", {})
        f = lambda v: "%.3e" % v if isinstance(v, (int, float)) else "-"
        L.append("| %s | `%s` | %s | %s | %s | %s | %s [%s-%s] | %s | %s |" % (
            a["mpi_name"], a.get("transport"), f(ps.get("comm_par2grid")),
            f(ps.get("comm_grid2par")), f(ps.get("comm_surface")), f(ps.get("comm")),
            f(ex.get("median")), f(ex.get("min")), f(ex.get("max")),
            "%.2f (%.2f)" % (a["vs_epic_ref"], a.get("vs_epic_ref_median", float("nan")))
            if "vs_epic_ref" in a else "-",
            ("pass" if se.get("pass") else "FAIL") if se else "-"))
    L.append("")
    return L


def ensure_matplotlib():
    """python3 may be a private interpreter without matplotlib while the system one has it
    (tools/install-deps.sh installs python3-matplotlib): run under the system one then."""
    try:
        import matplotlib  # noqa: F401
        return
    except ImportError:
        pass
    if os.environ.get("HS_STUDY_REEXEC"):
        return
    py = "/usr/bin/python3"
    if os.path.exists(py) and os.path.realpath(py) != os.path.realpath(sys.executable):
        r = subprocess.run([py, "-c", "import matplotlib"], capture_output=True)
        if r.returncode == 0:
            os.environ["HS_STUDY_REEXEC"] = "1"
            os.execv(py, [py] + sys.argv)


def targets_table(groups):
    """Issue-14 targets: per MPI library and memory kind, the range over launches."""
    def rng(v):
        v = [x for x in v if x is not None]
        return "-" if not v else ("%.2f" % v[0] if len(v) == 1 else "%.2f-%.2f (median %.2f)" % (
            min(v), max(v), sorted(v)[len(v) // 2]))
    print("\n### Targets over all launches\n")
    print("| MPI, fields | launches | best fixed, any options (times) | best / memcpy bound "
          "| p2p / monc-ref | best / petsc | best / ghex | auto / best fixed with default options "
          "| auto chose the fastest of those |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for (mpi, alloc), launches in sorted(groups.items()):
        bests, rb, pm, bp, bg, ab, right = {}, [], [], [], [], [], 0
        for _, recs in launches:
            s = launch_summary(recs)
            if not s:
                continue
            b = s["best"]
            bests[b["spec"]] = bests.get(b["spec"], 0) + 1
            rb.append(b["ratio_to_memcpy_bound"])
            if s["p2p"] and s["p2p"].get("ratio_to_monc_ref"):
                pm.append(s["p2p"]["ratio_to_monc_ref"])
            bp.append(b.get("ratio_to_petsc"))
            bg.append(b.get("ratio_to_ghex"))
            ab.append(s["auto_ratio"])
            right += bool(s["auto"] and s["auto"].get("selected") == s["best_plain"]["spec"])
        print("| %s, %s | %d | %s | %s | %s | %s | %s | %s | %d of %d |" % (
            mpi, alloc, len(launches), ", ".join("%s (%d)" % kv for kv in bests.items()),
            rng(rb), rng(pm), rng(bp), rng(bg), rng(ab), right, len(launches)))


def summarize(paths):
    """Tables of several launches: per launch the table, then per MPI library and memory kind
    the target checks over all launches."""
    groups = {}
    for path in sorted(paths):
        try:
            with open(path) as f:
                recs = json.load(f)
        except (OSError, ValueError):
            print("(%s: unreadable or still being written; left out)" % path)
            continue
        if not recs:
            continue
        key = (recs[0]["mpi_flavour"], recs[0].get("field_alloc", "?"))
        groups.setdefault(key, []).append((path, recs))
    for (mpi, alloc), launches in sorted(groups.items()):
        print("\n### %s, %s fields: %d launches\n" % (mpi, alloc, len(launches)))
        specs = []
        for _, recs in launches:
            for r in recs:
                if r["spec"] not in specs:
                    specs.append(r["spec"])
        print("us/swap median per launch (ratio to memcpy-bound / to monc-ref / to petsc / to "
              "ghex):\n")
        print("| method | " + " | ".join("launch %d" % (i + 1) for i in range(len(launches))) + " |")
        print("|---|" + "---:|" * len(launches))
        for spec in specs:
            cells = []
            for _, recs in launches:
                r = next((x for x in recs if x["spec"] == spec), None)
                if not r or not ok(r):
                    cells.append("-")
                    continue
                sel = r.get("selected") if r["transport"] == "auto" else ""
                cells.append("%s%s (%.2f/%s/%s/%s)" % (
                    fmt_us(r["us_per_swap_median"]), " -> " + sel if sel else "",
                    r["ratio_to_memcpy_bound"], fmt_ratio(r.get("ratio_to_monc_ref")),
                    fmt_ratio(r.get("ratio_to_petsc")), fmt_ratio(r.get("ratio_to_ghex"))))
            print("| `%s` | %s |" % (spec, " | ".join(cells)))
        print()
        met = right = 0
        for i, (path, recs) in enumerate(launches):
            s = launch_summary(recs)
            if s and s["auto_ratio"] is not None and s["auto_ratio"] <= 1.05:
                met += 1
            if s and s["auto"] and s["auto"].get("selected") == s["best_plain"]["spec"]:
                right += 1
            for line in summary_lines(recs, "launch %d (`%s`)" % (i + 1, os.path.basename(path))):
                print(line)
            a = s and s["auto"]
            if a and a.get("describe"):
                print("  auto's trial: " + a["describe"].split("; auto chose", 1)[-1][:600])
        print("\nauto within 1.05x of the fastest fixed transport in %d of %d launches; it chose "
              "the fastest fixed transport in %d of %d." % (met, len(launches), right,
                                                            len(launches)))
    targets_table(groups)


def main():
    ensure_matplotlib()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="directory holding one build per MPI library (BUILD/<mpi>)")
    ap.add_argument("--mpis", nargs="+", default=["openmpi", "mpich"])
    ap.add_argument("--preset", choices=sorted(PRESETS), default="standard")
    ap.add_argument("--out", default=None,
                    help="output directory (default BUILD/bench, ignored by git)")
    ap.add_argument("--add", action="append", default=[],
                    help="extra transport variant to measure, e.g. p2p:persistent=0 (repeatable)")
    ap.add_argument("--skip", action="append", default=[], help="transport to leave out")
    ap.add_argument("--timeout", type=int, default=0, help="seconds per launch")
    ap.add_argument("--budget", type=int, default=None,
                    help="seconds after which no further launch starts (0 = none; default from "
                         "the preset)")
    ap.add_argument("--summarize", nargs="+", metavar="JSON",
                    help="print the MONC-case tables and target checks of these hs_bench "
                         "launches (e.g. docs/results/2026-11-22-intel-xeon-2core-monc-launches/"
                         "*.json) and exit")
    ap.add_argument("--report-only", action="store_true",
                    help="rebuild report.md and the plots from latest.json, osu.json, miniapps.json")
    args = ap.parse_args()
    if args.out is None:
        args.out = os.path.join(args.build, "bench")
    if args.summarize:
        summarize(args.summarize)
        return 0
    st = Study(args)
    if args.report_only:
        for name, attr in (("latest.json", "records"), ("osu.json", "osu"),
                           ("miniapps.json", "apps"), ("fields.json", "fields")):
            path = os.path.join(st.out, name)
            if os.path.exists(path):
                with open(path) as f:
                    setattr(st, attr, json.load(f))
        st.write()
        return 0
    st.go()
    return 0


if __name__ == "__main__":
    sys.exit(main())
