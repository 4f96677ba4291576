#!/usr/bin/env python3
"""Prints tools/check-peer-bench's tables from its results file.

Input: a TSV with the columns mpi, config, variant, launch, seconds (the peer benchmark's own
time per exchange for that launch). Per MPI library a markdown table: one row per config, the
median over launches of each variant in microseconds (min-max), then the ratios asked for with
--ratio NAME=A/B, where A and B are a variant or best:PREFIX (the fastest variant whose name
starts with PREFIX, by median) and best:PREFIX also names the variant it picked.
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--ratio", action="append", default=[], metavar="NAME=A/B")
    ap.add_argument("--unit", default="us", choices=["us", "ms"])
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
