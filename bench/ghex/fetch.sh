#!/usr/bin/env bash
# Fetches the GHEX sdist from PyPI once into DIR (default build/ghex-src) and unpacks it;
# prints the path of the tarball. Used by bench/ghex/build.sh (the C++ library for hs_bench)
# and tools/python-env.sh (GHEX's Python bindings for python/bench).
# Usage: bench/ghex/fetch.sh DIR
set -euo pipefail
GHEX_VERSION=0.9.0
dir="${1:?usage: bench/ghex/fetch.sh DIR}"
mkdir -p "$dir"
tarball="$dir/ghex-$GHEX_VERSION.tar.gz"
if [ ! -f "$dir/ghex-$GHEX_VERSION/CMakeLists.txt" ]; then
  if [ ! -f "$tarball" ]; then
    echo "ghex: fetching the ghex $GHEX_VERSION sdist (PyPI)" >&2
    py=python3
    [ -x /usr/bin/python3 ] && py=/usr/bin/python3
    "$py" -m pip download -q --no-deps --no-binary ghex "ghex==$GHEX_VERSION" -d "$dir" >&2
  fi
  tar -xzf "$tarball" -C "$dir"
fi
echo "$tarball"
