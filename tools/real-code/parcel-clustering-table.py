#!/usr/bin/env python3
"""The paper's table from tools/real-code/parcel-clustering.sh --bench runs.

Input lines: MPI GRID RANKS upstream|haloswap GRAPH RESOLVE_S MERGE_S (one per launch).
Per MPI, grid and rank count: median [min-max] of the graph resolution and whole merge
times of each graph; the ratio of haloswap's median to upstream's for the same mechanism
(rma-epoch is RMA too); the best of each and the order p2p / RMA / SHMEM.
"""
import statistics
import sys

SAME = {"p2p": "p2p", "rma": "rma", "rma-epoch": "rma", "shmem": "shmem"}


def fmt(v):
    return "%.3f [%.3f-%.3f]" % (statistics.median(v), min(v), max(v))


def ratio_text(r):
    return ("%.2fx" if r >= 0.1 else "%.4fx") % r


def main(path):
    runs = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) != 7:
                continue
            key = (p[0], int(p[1]), int(p[2]))
            runs.setdefault(key, {}).setdefault((p[3], p[4]), ([], []))
            runs[key][(p[3], p[4])][0].append(float(p[5]))
            runs[key][(p[3], p[4])][1].append(float(p[6]))
    print("| MPI | grid | ranks | graph | runs | resolve s | vs upstream | merge s | vs upstream |")
    print("|---|---|---|---|---|---|---|---|---|")
    summary = []
    for key in sorted(runs):
        mpi, grid, ranks = key
        graphs = runs[key]
        med = {g: (statistics.median(v[0]), statistics.median(v[1])) for g, v in graphs.items()}
        order = sorted(graphs, key=lambda g: (g[0] != "upstream", g[1]))
        for g in order:
            ratio = ["", ""]
            ref = ("upstream", SAME.get(g[1], ""))
            if g[0] == "haloswap" and ref in med:
                ratio = [ratio_text(med[g][i] / med[ref][i]) for i in range(2)]
            r, t = graphs[g]
            print("| %s | %d^3 | %d | %s %s | %d | %s | %s | %s | %s |" % (
                mpi, grid, ranks, g[0], g[1], len(r), fmt(r), ratio[0], fmt(t), ratio[1]))
        for i, what in enumerate(("resolve", "merge")):
            best = {}
            for kind in ("upstream", "haloswap"):
                cand = [g for g in med if g[0] == kind]
                if cand:
                    best[kind] = min(cand, key=lambda g: med[g][i])
            if len(best) == 2:
                u, h = best["upstream"], best["haloswap"]
                summary.append("%s %d^3 %d ranks, %s: best haloswap %s %.3f s / best upstream %s "
                               "%.3f s = %s" % (mpi, grid, ranks, what, h[1], med[h][i], u[1],
                                                med[u][i], ratio_text(med[h][i] / med[u][i])))
            for kind in ("upstream", "haloswap"):
                cand = sorted((g for g in med if g[0] == kind), key=lambda g: med[g][i])
                if len(cand) > 1:
                    summary.append("%s %d^3 %d ranks, %s, %s fastest first: %s" % (
                        mpi, grid, ranks, what, kind, " < ".join(g[1] for g in cand)))
    print()
    for s in summary:
        print(s)


if __name__ == "__main__":
    main(sys.argv[1])
