#!/usr/bin/env bash
# Builds hs_bench's ghex reference for one MPI library: GHEX from its PyPI sdist (bundling
# gridtools and oomph; Boost from Debian) and libhs_ghex_ref over it, in BUILD_DIR/ghex.
# Cached: the sdist is fetched once (BUILD_ROOT/ghex-src), and a built library is only
# brought up to date. Exit status 0 when BUILD_DIR/ghex/libhs_ghex_ref.so is ready.
# Usage: bench/ghex/build.sh openmpi|mpich BUILD_DIR      (make bench runs it)
set -euo pipefail
mpi="${1:?usage: bench/ghex/build.sh openmpi|mpich BUILD_DIR}"
build="${2:?usage: bench/ghex/build.sh openmpi|mpich BUILD_DIR}"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$build"
build="$(cd "$build" && pwd)"
tarball="$(bash "$here/fetch.sh" "$(dirname "$build")/ghex-src")"
src="${tarball%.tar.gz}"
out="$build/ghex"
if [ ! -f /usr/include/boost/version.hpp ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "ghex: installing libboost-dev"
    (apt-get install -y -qq libboost-dev || { apt-get update -qq && apt-get install -y -qq libboost-dev; }) >/dev/null
  else
    echo "ghex: Boost headers missing (apt-get install libboost-dev)" >&2
    exit 1
  fi
fi
if [ ! -f "$out/CMakeCache.txt" ]; then
  echo "ghex: configuring $(basename "$src") for $mpi"
  cmake -S "$here" -B "$out" -DGHEX_SOURCE_DIR="$src" -DCMAKE_BUILD_TYPE=Release \
    -DMPI_C_COMPILER="mpicc.$mpi" -DMPI_CXX_COMPILER="mpicxx.$mpi" \
    -DMPIEXEC_EXECUTABLE="/usr/bin/mpiexec.$mpi" >"$out.configure.log" 2>&1 ||
    { tail -20 "$out.configure.log" >&2; rm -f "$out/CMakeCache.txt"; exit 1; }
fi
[ -f "$out/libhs_ghex_ref.so" ] || echo "ghex: building GHEX for $mpi (a few minutes, once)"
cmake --build "$out" -j 2 --target hs_ghex_ref >"$out.build.log" 2>&1 ||
  { tail -30 "$out.build.log" >&2; exit 1; }
echo "ghex: $out/libhs_ghex_ref.so ready"
