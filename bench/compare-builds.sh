#!/usr/bin/env bash
# Good-path cost of a change: the same hs_bench methods from two builds (before, after), in
# alternating launches, the MONC case at 2 ranks, with each MPI library; prints per method
# the median over launches of each launch's median time per swap, and after/before.
# Timing runs: run it on a quiet machine, not niced.
#   bash bench/compare-builds.sh BEFORE_BUILD AFTER_BUILD [LAUNCHES (5)] [METHODS...]
# (a build is a tree with openmpi/ and mpich/, such as build/ of two checkouts)
set -euo pipefail
before=$1 after=$2 launches=${3:-5}
shift $(($# < 3 ? $# : 3))
methods=("$@")
[ ${#methods[@]} -gt 0 ] || methods=(p2p p2p:dtype=1 p2p:dtype=0 rma-fence rma-pscw rma-passive rma-passive:dtype=1)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
args=(--skip monc-ref --skip petsc --reps 7 --swaps 20)
for m in "${methods[@]}"; do args+=(--transport "$m"); done
out=$(mktemp)
for i in $(seq "$launches"); do
  for mpi in openmpi mpich; do
    case $mpi in openmpi) run=(mpiexec.openmpi --oversubscribe -n 2) ;; mpich) run=(mpiexec.mpich -n 2) ;; esac
    for side in before after; do
      b=$before; [ $side = after ] && b=$after
      "${run[@]}" "$b/$mpi/bench/hs_bench" "${args[@]}" 2>/dev/null |
        awk -v s="$side" -v m="$mpi" 'NF > 2 && $2 ~ /^[0-9.]+$/ {print m, s, $1, $2}' >> "$out"
    done
  done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    mpi, side, method, us = line.split()
    t[(mpi, method, side)].append(float(us))
print("%-8s %-22s %12s %12s %8s" % ("MPI", "method", "before us", "after us", "ratio"))
for mpi, method in sorted({(k[0], k[1]) for k in t}):
    b, a = t.get((mpi, method, "before")), t.get((mpi, method, "after"))
    if b and a:
        mb, ma = statistics.median(b), statistics.median(a)
        print("%-8s %-22s %12.1f %12.1f %8.3f" % (mpi, method, mb, ma, ma / mb))
PY
rm -f "$out"
