#!/usr/bin/env bash
# Creation time of an auto plan at 1-9 ranks with each MPI library (docs/benchmarks.md,
# "Creation time of an auto plan"): bench/hs_create_bench on the MONC case (16x16x256 per rank,
# 30 fields, depth 2) and a small grid, 3 creations each. Timing runs: start it on a quiet
# machine, not niced. MPICH runs with the suite's idle shim, as docs/install.md recommends
# for oversubscribed MPICH.
#   bash bench/auto-create.sh [BUILD (default build)] [MPIS (default "openmpi mpich")]
set -euo pipefail
build=${1:-build}
mpis=${2:-openmpi mpich}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
for mpi in $mpis; do
  exe=$build/$mpi/bench/hs_create_bench
  [ -x "$exe" ] || { echo "auto-create: $exe not built (make build-$mpi)" >&2; exit 2; }
  for n in 1 2 3 4 6 9; do
    case $mpi in
      openmpi) run=(mpiexec.openmpi --oversubscribe -n "$n") ;;
      mpich) run=(env "LD_PRELOAD=$(cd "$build/mpich" && pwd)/libhs_idle_yield.so" mpiexec.mpich -n "$n") ;;
    esac
    echo "== $mpi"
    "${run[@]}" "$exe" --reps 3
    "${run[@]}" "$exe" --reps 3 --local 8,8,8 --fields 2
  done
done
