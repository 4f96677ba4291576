#!/usr/bin/env python3
"""Prints tools/check-peer-bench's tables from its results file.

Input: a TSV with the columns mpi, config, variant, launch, seconds (the peer benchmark's own
time per exchange for that launch). Per MPI library a markdown table: one row per config, the
median over launches of each variant in microseconds (min-max), then the ratios asked for with
--ratio NAME=A/B, where A and B are a variant or best:PREFIX (the fastest variant whose name
starts with PREFIX, by median) and best:PREFIX also names the variant it picked.
With --plot FILE.png (matplotlib), one panel per MPI library: each variant's median per config
over the baseline's (--plot-base, a variant or best:PREFIX), min-max as error bars, the
targets (--plot-target) dotted.
"""
import argparse
import collections
import statistics
import sys


def fmt(x):
    return f"{x:.0f}" if x >= 100 else f"{x:.3g}"


def pick(term, med):
    if term.startswith("best:"):
        cands = [(t, v) for v, t in med.items() if v.startswith(term[5:])]
        if not cands:
            return None, None
        t, v = min(cands)
        return t, v
    return med.get(term), term


def plot(args, times, mpis, configs, variants):
    """Each variant's time over the baseline's, per config; < 1 is faster than the baseline."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no plot: matplotlib is not installed (tools/install-deps.sh installs it)")
        return
    markers = "osD^vPX*<>"
    fig, axes = plt.subplots(1, len(mpis), figsize=(8.5 * len(mpis), 4.8), squeeze=False)
    for ax, mpi in zip(axes[0], mpis):
        bases = [pick(args.plot_base, {w: statistics.median(t) for (m, cc, w), t in times.items()
                                       if m == mpi and cc == c})[0] for c in configs]
        for k, v in enumerate(variants):
            xs, ys, lo, hi = [], [], [], []
            for x, (c, base) in enumerate(zip(configs, bases)):
                t = times.get((mpi, c, v))
                if not t or not base:
                    continue
                y = statistics.median(t) / base
                xs.append(x + (k - len(variants) / 2) * 0.04)
                ys.append(y)
                lo.append(y - min(t) / base)
                hi.append(max(t) / base - y)
            if xs:
                # haloswap's variants in colour, the peer's own in greys, dashed
                ours = v.startswith("hs:")
                n = [w for w in variants if w.startswith("hs:") == ours].index(v)
                colour = plt.get_cmap("tab10")(n % 10) if ours else str(0.1 + 0.15 * (n % 5))
                ax.errorbar(xs, ys, yerr=[lo, hi], fmt=markers[n % len(markers)] +
                            ("-" if ours else "--"), color=colour, label=v, capsize=2,
                            linewidth=0.8, markersize=5)
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        for y in args.plot_target:
            ax.axhline(y, color="0.4", linewidth=0.8, linestyle=":")
        ax.set_yscale("log")
        lo_y, hi_y = ax.get_ylim()
        ticks = [y for y in (0.0625, 0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32) if lo_y <= y <= hi_y]
        ax.set_yticks(ticks)
        ax.set_ylim(lo_y, hi_y)
        ax.set_yticklabels([f"{y:g}" for y in ticks])
        ax.minorticks_off()
        ax.set_xticks(range(len(configs)))
        ax.set_xticklabels(configs, rotation=35, ha="right", fontsize=8)
        ax.set_ylabel(f"time / {args.plot_base} (median; bars: min-max)")
        ax.set_title(f"{args.title} {mpi}".strip())
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(args.plot, dpi=110)
    plt.close(fig)
    print(f"plot: {args.plot}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--ratio", action="append", default=[], metavar="NAME=A/B")
    ap.add_argument("--unit", default="us", choices=["us", "ms"])
    ap.add_argument("--plot", metavar="FILE.png")
    ap.add_argument("--plot-base", default="best:mpi", metavar="VARIANT")
    ap.add_argument("--plot-target", type=float, action="append", default=[],
                    metavar="RATIO", help="a dotted line at this ratio (repeatable)")
    ap.add_argument("--title", default="")
    args = ap.parse_args()
    scale = 1e6 if args.unit == "us" else 1e3
    times = collections.defaultdict(list)
    variants, configs, mpis = [], [], []
    with open(args.results) as f:
        for line in f:
            mpi, config, variant, _launch, sec = line.rstrip("\n").split("\t")[:5]
            for seen, x in ((mpis, mpi), (configs, config), (variants, variant)):
                if x not in seen:
                    seen.append(x)
            if sec != "failed":
                times[mpi, config, variant].append(float(sec) * scale)
    ratios = [r.split("=", 1) for r in args.ratio]
    if args.plot:
        plot(args, times, mpis, configs, variants)
    for mpi in mpis:
        cols = [v for v in variants if any((mpi, c, v) in times for c in configs)]
        print(f"\n{mpi} ({args.unit} per exchange, median of launches (min-max))\n")
        print("| config | " + " | ".join(cols + [n for n, _ in ratios]) + " |")
        print("|---" * (1 + len(cols) + len(ratios)) + "|")
        for c in configs:
            med, cells = {}, []
            for v in cols:
                t = times.get((mpi, c, v))
                if t:
                    med[v] = statistics.median(t)
                    cells.append(f"{fmt(med[v])} ({fmt(min(t))}-{fmt(max(t))})")
                else:
                    cells.append("failed")
            for _, expr in ratios:
                a, b = expr.split("/")
                (ta, va), (tb, vb) = pick(a, med), pick(b, med)
                if ta is None or tb is None:
                    cells.append("n/a")
                    continue
                who = " ".join(f"{x}" for x, t in ((va, a), (vb, b)) if t.startswith("best:"))
                cells.append(f"{ta / tb:.2f}" + (f" ({who})" if who else ""))
            print(f"| {c} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
