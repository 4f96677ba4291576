#!/usr/bin/env bash
# The standard study behind `make bench`: the MONC-case swap (local 16x16x256 z-fast, depth 2,
# box stencil, 30 float64 fields, z whole, periodic x,y) on 2 ranks with every transport on
# every MPI library given, then the full study and report (bench/study.py) when python3 is
# there. Usage: bench/run-standard.sh BUILD_DIR MPI...   (e.g. build openmpi mpich)
# Output goes to BUILD_DIR/bench (ignored by git): a run changes no tracked file.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build}"
shift || true
mpis=("$@")
[ ${#mpis[@]} -gt 0 ] || mpis=(openmpi mpich)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_rmaps_base_oversubscribe=1

# The petsc reference method needs PETSc (Debian: libpetsc-real-dev, built with Open MPI).
# Installed here when missing and we may; then hs_bench is rebuilt to pick it up.
if ! pkg-config --exists PETSc 2>/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "make bench: installing libpetsc-real-dev for the petsc reference"
    (apt-get install -y libpetsc-real-dev || { apt-get update && apt-get install -y libpetsc-real-dev; }) \
      >/dev/null 2>&1 || echo "make bench: could not install libpetsc-real-dev; petsc not measured"
    for mpi in "${mpis[@]}"; do
      [ -f "$build/$mpi/CMakeCache.txt" ] || continue
      cmake "$build/$mpi" >/dev/null && cmake --build "$build/$mpi" -j 2 --target hs_bench >/dev/null
    done
  else
    echo "make bench: PETSc not found (apt-get install libpetsc-real-dev); petsc not measured"
  fi
fi

# The ghex reference method: GHEX from its PyPI sdist, built once per MPI library under
# BUILD/<mpi>/ghex (bench/ghex/build.sh); hs_bench is then rebuilt to link it. Where GHEX
# cannot be built, the tables say ghex was not measured.
for mpi in "${mpis[@]}"; do
  [ -f "$build/$mpi/CMakeCache.txt" ] || continue
  if bash "$here/ghex/build.sh" "$mpi" "$build/$mpi"; then
    if ! ldd "$build/$mpi/bench/hs_bench" 2>/dev/null | grep -q hs_ghex_ref; then
      cmake "$build/$mpi" >/dev/null && cmake --build "$build/$mpi" -j 2 --target hs_bench >/dev/null
    fi
  else
    echo "make bench: GHEX could not be built for $mpi (logs: $build/$mpi/ghex.*.log); ghex not measured"
  fi
done

# The system python3 first: install-deps.sh gives it matplotlib for the plots (a python3
# earlier in PATH, e.g. pyenv's, would lack it).
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
if command -v "$py" >/dev/null 2>&1 && [ -f "$here/study.py" ]; then
  exec "$py" "$here/study.py" --build "$build" --mpis "${mpis[@]}" --preset standard
fi

# Without python3: the MONC table only.
out="$build/bench"
mkdir -p "$out"
for mpi in "${mpis[@]}"; do
  exe="$build/$mpi/bench/hs_bench"
  mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:FILEPATH=//p' "$build/$mpi/CMakeCache.txt")
  flags=()
  [ "$mpi" = openmpi ] && flags=(--oversubscribe)
  "$mpiexec" "${flags[@]}" -n 2 "$exe" --local 16,16,256 --depth 2 --stencil box --fields 30 \
    --json "$out/monc-np2-$mpi.json" --csv "$out/monc-np2-$mpi.csv"
  # malloc'd fields, with shm's one-copy path through the core option remap=1 (docs/remap.md)
  "$mpiexec" "${flags[@]}" -n 2 "$exe" --local 16,16,256 --depth 2 --stencil box --fields 30 \
    --alloc malloc --add shm:remap=1 \
    --json "$out/monc-malloc-np2-$mpi.json" --csv "$out/monc-malloc-np2-$mpi.csv"
done
echo "make bench: results in $out (install python3 for the full report)"
