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
GHEX_VERSION=0.9.0
mkdir -p "$build"
build="$(cd "$build" && pwd)"
srcroot="$(dirname "$build")/ghex-src"
src="$srcroot/ghex-$GHEX_VERSION"
out="$build/ghex"

if [ ! -f "$src/CMakeLists.txt" ]; then
  mkdir -p "$srcroot"
  echo "ghex: fetching the ghex $GHEX_VERSION sdist (PyPI)"
  py=python3
  [ -x /usr/bin/python3 ] && py=/usr/bin/python3
  "$py" -m pip download -q --no-deps --no-binary ghex "ghex==$GHEX_VERSION" -d "$srcroot"
  tar -xzf "$srcroot/ghex-$GHEX_VERSION.tar.gz" -C "$srcroot"
fi
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
  echo "ghex: configuring GHEX $GHEX_VERSION for $mpi"
  cmake -S "$here" -B "$out" -DGHEX_SOURCE_DIR="$src" -DCMAKE_BUILD_TYPE=Release \
    -DMPI_C_COMPILER="mpicc.$mpi" -DMPI_CXX_COMPILER="mpicxx.$mpi" \
    -DMPIEXEC_EXECUTABLE="/usr/bin/mpiexec.$mpi" >"$out.configure.log" 2>&1 ||
    { tail -20 "$out.configure.log" >&2; rm -f "$out/CMakeCache.txt"; exit 1; }
fi
[ -f "$out/libhs_ghex_ref.so" ] || echo "ghex: building GHEX for $mpi (a few minutes, once)"
cmake --build "$out" -j 2 --target hs_ghex_ref >"$out.build.log" 2>&1 ||
  { tail -30 "$out.build.log" >&2; exit 1; }
echo "ghex: $out/libhs_ghex_ref.so ready"
