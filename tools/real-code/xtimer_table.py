#!/usr/bin/env python3
"""The --bench tables of tools/check-real-code from the exclusive timer's files (xtimer.c).

  xtimer_table.py BENCH_DIR MEMCPY_BIN

BENCH_DIR/<ranks>/<variant>/r<round>/ holds one run: rank.N (xtimer: "label calls seconds
barrier_seconds" lines) and meta ("key value" lines: steps, code (the code's own measure),
wall, load). BENCH_DIR/<ranks>/bytes/ (a drop-in run with HS_XTIMER_BYTES=1) gives the bytes
each rank exchanges per step; MEMCPY_BIN BYTES times one memcpy of that many bytes here.
Per ranks and variant: the exclusive exchange time per step (per run the maximum over ranks
of the rank's summed routines; median over runs, min-max), its ratio to the code's own
module ('own'), the code's own measure, and per routine the median of the max over ranks.
"""
import os
import statistics
import subprocess
import sys


def read_run(d):
    ranks, meta = {}, {}
    for f in os.listdir(d):
        p = os.path.join(d, f)
        if f.startswith("rank."):
            rows = {}
            for line in open(p):
                w = line.split()
                if w and w[0] == "skipped":  # HS_XTIMER_SKIP's uncounted calls
                    continue
                if w and w[0] != "bytes":
                    rows[w[0]] = (int(w[1]), float(w[2]), float(w[3]))
                elif w:
                    rows["bytes"] = (int(w[1]), int(w[2]))
            ranks[int(f[5:])] = rows
        elif f == "meta":
            for line in open(p):
                w = line.split(None, 1)
                if len(w) == 2:
                    meta[w[0]] = w[1].strip()
    return ranks, meta


def med(v):
    return statistics.median(v) if v else float("nan")


def fmt(v, scale=1e6, nd=1):
    if not v:
        return "-"
    v = [x * scale for x in v]
    return f"{med(v):.{nd}f} ({min(v):.{nd}f}-{max(v):.{nd}f})"


def main():
    root, memcpy = sys.argv[1], sys.argv[2]
    order = ["own", "p2p", "shm", "cma", "shmem", "rma-pscw", "rma-fence", "auto"]
    for n in sorted(os.listdir(root), key=lambda s: int(s) if s.isdigit() else 0):
        nd = os.path.join(root, n)
        if not n.isdigit() or not os.path.isdir(nd):
            continue
        variants = [v for v in os.listdir(nd) if v != "bytes" and os.path.isdir(os.path.join(nd, v))]
        variants.sort(key=lambda v: (order.index(v) if v in order else 99, v))
        res, labels = {}, []
        for v in variants:
            tot, code, loads, per, calls, bars = [], [], [], {}, {}, []
            for r in sorted(os.listdir(os.path.join(nd, v))):
                ranks, meta = read_run(os.path.join(nd, v, r))
                if not ranks or "steps" not in meta:
                    continue
                steps = float(meta["steps"])
                tot.append(max(sum(x[1] for k, x in rr.items() if k != "bytes")
                               for rr in ranks.values()) / steps)
                bars.append(max(sum(x[2] for k, x in rr.items() if k != "bytes")
                                for rr in ranks.values()) / steps)
                for lab in {k for rr in ranks.values() for k in rr if k != "bytes"}:
                    if lab not in labels:
                        labels.append(lab)
                    per.setdefault(lab, []).append(
                        max(rr[lab][1] for rr in ranks.values() if lab in rr) / steps)
                    calls[lab] = max(rr[lab][0] for rr in ranks.values() if lab in rr) / steps
                if meta.get("code", "") not in ("", "-"):
                    code.append(float(meta["code"]))
                if "load" in meta:
                    loads.append(float(meta["load"]))
            res[v] = (tot, code, loads, per, calls, bars)
        if not res:
            continue
        own = med(res["own"][0]) if "own" in res and res["own"][0] else None
        owncode = med(res["own"][1]) if "own" in res and res["own"][1] else None
        codewhat = ""
        for v in variants:
            m = os.path.join(nd, v)
            for r in os.listdir(m):
                p = os.path.join(m, r, "meta")
                if os.path.exists(p):
                    for line in open(p):
                        if line.startswith("codewhat "):
                            codewhat = line.split(None, 1)[1].strip()
                    break
            if codewhat:
                break
        print(f"\n{n} ranks: exclusive exchange time per step, us (max over ranks; median over "
              f"runs (min-max)); the code's own measure: {codewhat or '-'}")
        print("| variant | runs | exchange us/step | / own | code's own measure | / own | "
              "barrier wait us/step | load avg (1 min) |")
        print("|---|---|---|---|---|---|---|---|")
        for v in variants:
            tot, code, loads, per, calls, bars = res[v]
            ratio = f"{med(tot) * 1e6 / (own * 1e6):.2f}" if own else "-"
            cr = f"{med(code) / owncode:.2f}" if owncode and code else "-"
            ld = f"{min(loads):.1f}-{max(loads):.1f}" if loads else "-"
            print(f"| {v} | {len(tot)} | {fmt(tot)} | {ratio} | {fmt(code, 1, 3)} | {cr} | "
                  f"{fmt(bars)} | {ld} |")
        print(f"\n{n} ranks, per routine: us per step, median of the max over ranks (calls per step)")
        print("| routine | calls/step | " + " | ".join(variants) + " |")
        print("|---|---|" + "---|" * len(variants))
        for lab in labels:
            c = next((res[v][4][lab] for v in variants if lab in res[v][4]), 0)
            cells = [f"{med(res[v][3][lab]) * 1e6:.1f}" if lab in res[v][3] else "-" for v in variants]
            print(f"| {lab} | {c:g} | " + " | ".join(cells) + " |")
        bd = os.path.join(nd, "bytes")
        if os.path.isdir(bd):
            ranks, meta = read_run(bd)
            steps = float(meta.get("steps", "1"))
            b = [rr["bytes"] for rr in ranks.values() if "bytes" in rr]
            if b:
                sent = max(x[0] for x in b) / steps
                self_ = max(x[1] for x in b) / steps
                total = max(x[0] + x[1] for x in b) / steps
                out = subprocess.run([memcpy, str(int(total))], capture_output=True, text=True)
                t = float(out.stdout.strip() or "nan")
                print(f"\n{n} ranks: bytes per step per rank (max over ranks, haloswap's plans): "
                      f"{sent / 1e3:.1f} kB to other ranks, {self_ / 1e3:.1f} kB periodic self "
                      f"copies; one memcpy of {total / 1e3:.1f} kB here: {t * 1e6:.1f} us "
                      f"(the copy floor of an exchange of them)")
                if own:
                    print(f"   floor / own = {t / own:.4f}; 0.6 x own = {0.6 * own * 1e6:.1f} us")


if __name__ == "__main__":
    main()
