#!/usr/bin/env bash
# Pruning cost per back end of the parcel cluster algorithm: 2 ranks, 32x32x32 cells, 20
# parcels per cell, min_vratio 20, shuffled, 10 merge cycles, back ends interleaved per cycle.
# Usage: apps/parcel-cluster/bench.sh BUILD_DIR OUT_DIR [MPI...]   (e.g. build build/bench)
# Writes OUT_DIR/parcel-cluster-<mpi>.json (and -shmem.json for Open MPI with OSHMEM).
set -euo pipefail
build="${1:-build}"
out="${2:-$build/bench}"
shift 2 || true
mpis=("$@")
[ ${#mpis[@]} -gt 0 ] || mpis=(openmpi mpich)
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_rmaps_base_oversubscribe=1
args=(--bench --nx 32 --ny 32 --nz 32 --nppc 20 --min-vratio 20 --shuffle --cycles 10)
for mpi in "${mpis[@]}"; do
  exe="$build/$mpi/apps/parcel-cluster/parcel-cluster"
  [ -x "$exe" ] || { echo "bench.sh: $exe not built, skipping $mpi"; continue; }
  mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:FILEPATH=//p' "$build/$mpi/CMakeCache.txt")
  "$mpiexec" -n 2 "$exe" "${args[@]}" --backend p2p,rma,rma-epoch --json "$out/parcel-cluster-$mpi.json"
  # OSHMEM needs the osc rdma component off, which also changes Open MPI's RMA; separate run.
  if [ "$mpi" = openmpi ] && grep -q '^HS_OSHCC:FILEPATH=/' "$build/$mpi/CMakeCache.txt"; then
    OMPI_MCA_osc=^rdma "$mpiexec" -n 2 "$exe" "${args[@]}" --backend p2p,rma,rma-epoch,shmem \
      --json "$out/parcel-cluster-$mpi-shmem.json"
  fi
done
