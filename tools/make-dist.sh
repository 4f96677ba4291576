#!/usr/bin/env bash
# make dist: the release tarball OUT_DIR/haloswap-VERSION.tar.gz, a Python sdist that also
# carries the C library's sources (csrc/: the CMake project, include/, src/, cmake/ and
# fortran/'s modules), so `pip install` of it needs no checkout and Spack builds csrc/ (spack/).
# VERSION is include/haloswap.h's. Only tracked files go in (git ls-files), as they are in the
# work tree. Usage: tools/make-dist.sh OUT_DIR
set -euo pipefail
out="${1:?usage: tools/make-dist.sh OUT_DIR}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
SKBUILD_VERSION=$(sed -n 's/^SKBUILD_VERSION=//p' tools/python-env.sh)
mkdir -p "$out"
out="$(cd "$out" && pwd)"
stage="$out/stage"
rm -rf "$stage"
mkdir -p "$stage/csrc"
# copy DEST STRIP PATHSPEC...: the tracked files PATHSPEC names, to DEST/<path less STRIP>.
copy() {
  local dest="$1" strip="$2" f
  shift 2
  git ls-files -z -- "$@" | while IFS= read -r -d '' f; do
    mkdir -p "$dest/$(dirname "${f#"$strip"}")"; cp -p "$f" "$dest/${f#"$strip"}"
  done
}
# The Python project at the top (python/ less its benchmarks), the C project under csrc/
# (of fortran/ only the top level: the modules and their C halves, which src/ra also builds).
copy "$stage" python/ python ':!python/bench'
copy "$stage/csrc" "" CMakeLists.txt cmake include src ':(glob)fortran/*'
# The version is read from the sdist's copy of the header.
sed -i 's|^input = "../include/|input = "csrc/include/|' "$stage/pyproject.toml"
grep -q '^input = "csrc/include/haloswap.h"$' "$stage/pyproject.toml" || {
  echo "make-dist: python/pyproject.toml has no version input line to point at csrc/" >&2
  exit 1
}
# scikit-build-core writes the sdist (PKG-INFO, reproducible); a small venv of its own.
venv="$out/venv"
if ! "$venv/bin/python" -c "import scikit_build_core" 2>/dev/null; then
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "scikit-build-core==$SKBUILD_VERSION"
fi
name=$(cd "$stage" && "$venv/bin/python" -c \
  "from scikit_build_core.build import build_sdist; print(build_sdist('$out'))" | tail -n 1)
rm -rf "$stage"
echo "$out/$name"
