#!/usr/bin/env bash
# The Python environment of one MPI build: a venv in BUILD_DIR/python/venv with numpy, pytest,
# an mpi4py built for that MPI library (from a requirements venv kept across checkouts, see
# below), and the haloswap package (python/) built against it.
# Idempotent: a step runs only when its result is missing or older than its sources.
# Usage: tools/python-env.sh openmpi|mpich BUILD_DIR [bench]   (make python-openmpi does this)
#   bench: also what python/bench compares against: GHEX's Python bindings (built from the
#   sdist bench/ghex/fetch.sh keeps, a few minutes once) and, with Open MPI, Debian's petsc4py.
#   Open MPI: Debian's python3-mpi4py (built with Open MPI), seen through the venv's
#   system site packages. MPICH: mpi4py from PyPI, compiled here with mpicc.mpich.
set -euo pipefail
mpi="${1:?usage: tools/python-env.sh openmpi|mpich BUILD_DIR}"
build="${2:?usage: tools/python-env.sh openmpi|mpich BUILD_DIR}"
extra="${3:-}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
case "$mpi" in
  openmpi|mpich) ;;
  *) echo "python-env: unknown MPI '$mpi' (openmpi or mpich)" >&2; exit 2 ;;
esac
# Pinned build and test requirements (PyPI).
MPI4PY_VERSION=4.1.2
SKBUILD_VERSION=0.11.6
CYTHON_VERSION=3.1.8
NANOBIND_VERSION=2.9.2

mkdir -p "$build"
build="$(cd "$build" && pwd)"
dir="$build/python"
venv="$dir/venv"
py=/usr/bin/python3
[ -x "$py" ] || { echo "python-env: $py missing (tools/install-deps.sh installs it)" >&2; exit 1; }
export PIP_DISABLE_PIP_VERSION_CHECK=1 MPICC="mpicc.$mpi"

# The requirements (mpi4py built for this MPI, the build and test tools) live in a venv kept
# across checkouts and build trees, one per MPI, Python and pinned versions: a fresh clone then
# builds only the package (mpi4py for MPICH alone takes a minute). HS_PYTHON_CACHE moves it.
pyver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
cache="${HS_PYTHON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/haloswap}"
reqs="$cache/python$pyver-$mpi-mpi4py$MPI4PY_VERSION-skbuild$SKBUILD_VERSION-cython$CYTHON_VERSION"
want_vendor=$([ "$mpi" = openmpi ] && echo "Open MPI" || echo "MPICH")
mkdir -p "$cache"
(
  flock 9   # two builds filling the same cache take turns
  rpy="$reqs/bin/python"
  [ -x "$rpy" ] || "$py" -m venv --system-site-packages "$reqs"
  vendor=$("$rpy" -c "from mpi4py import MPI; print(MPI.get_vendor()[0])" 2>/dev/null || true)
  if [ "$vendor" != "$want_vendor" ]; then
    if [ "$mpi" = openmpi ]; then
      echo "python-env: Debian's python3-mpi4py is missing or not Open MPI's ($vendor)" >&2
      exit 1
    fi
    echo "python-env: building mpi4py $MPI4PY_VERSION with $MPICC into $reqs (about a minute, once)"
    "$rpy" -m pip install -q --no-binary mpi4py --no-cache-dir "mpi4py==$MPI4PY_VERSION"
    vendor=$("$rpy" -c "from mpi4py import MPI; print(MPI.get_vendor()[0])")
    [ "$vendor" = "$want_vendor" ] || { echo "python-env: mpi4py uses $vendor, not $want_vendor" >&2; exit 1; }
  fi
  # Build requirements of python/pyproject.toml (no build isolation: the extension must see
  # this mpi4py).
  if ! "$rpy" -c "import scikit_build_core, Cython" 2>/dev/null; then
    echo "python-env: installing scikit-build-core $SKBUILD_VERSION, Cython $CYTHON_VERSION into $reqs"
    "$rpy" -m pip install -q "scikit-build-core==$SKBUILD_VERSION" "cython==$CYTHON_VERSION"
  fi
  "$rpy" -c "import numpy, pytest" 2>/dev/null || "$rpy" -m pip install -q numpy pytest
) 9>"$reqs.lock"

# This build's venv: its own site-packages (the package), then the requirements' (a .pth
# file), then the system's.
if [ ! -x "$venv/bin/python" ]; then
  echo "python-env: creating $venv"
  "$py" -m venv --system-site-packages --without-pip "$venv"
fi
vpy="$venv/bin/python"
"$reqs/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' \
  > "$("$vpy" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/haloswap-requirements.pth"
vendor=$("$vpy" -c "from mpi4py import MPI; print(MPI.get_vendor()[0])")
[ "$vendor" = "$want_vendor" ] || { echo "python-env: $venv sees mpi4py for $vendor" >&2; exit 1; }

# The C library: BUILD_DIR's own when it holds a finished build (installed into python/root;
# make python-<mpi> builds it first), so it is not compiled twice; else the package's build
# makes one.
if [ -f "$build/CMakeCache.txt" ] && { [ -e "$build/libhaloswap.so" ] || [ -f "$build/libhaloswap.a" ]; }; then
  cmake --install "$build" --prefix "$dir/root" >/dev/null
  export HALOSWAP_ROOT="$dir/root"
fi

# The package: rebuilt when any source it is made of is newer than the last install.
stamp="$dir/installed.stamp"
newer=""
if [ -f "$stamp" ]; then
  newer=$(find "$repo/python/haloswap" "$repo/python/CMakeLists.txt" "$repo/python/pyproject.toml" \
               "$repo/src" "$repo/include" "$repo/cmake" "$repo/CMakeLists.txt" \
               -newer "$stamp" -type f -print -quit)
fi
if [ ! -f "$stamp" ] || [ -n "$newer" ] || ! "$vpy" -c "import haloswap" 2>/dev/null; then
  echo "python-env: building the haloswap package for $mpi"
  touch "$stamp.new"
  (cd "$repo" && "$vpy" -m pip install -q --no-build-isolation --no-deps \
      --config-settings=build-dir="$dir/skbuild" ./python)
  mv "$stamp.new" "$stamp"
fi
if [ "$extra" = bench ]; then
  if ! "$vpy" -c "import ghex" 2>/dev/null; then
    tarball="$(bash "$repo/bench/ghex/fetch.sh" "$(dirname "$build")/ghex-src")"
    "$vpy" -c "import nanobind" 2>/dev/null || "$vpy" -m pip install -q "nanobind==$NANOBIND_VERSION"
    echo "python-env: building GHEX's Python bindings for $mpi (a few minutes, once)"
    CMAKE_ARGS="-DMPI_C_COMPILER=mpicc.$mpi -DMPI_CXX_COMPILER=mpicxx.$mpi" \
      "$vpy" -m pip install -q --no-build-isolation --no-deps \
      --config-settings=build-dir="$dir/ghex-skbuild" "$tarball" ||
      echo "python-env: GHEX's Python bindings could not be built; ghex-py not measured" >&2
  fi
  if [ "$mpi" = openmpi ] && ! "$vpy" -c "import petsc4py" 2>/dev/null && [ "$(id -u)" = 0 ]; then
    echo "python-env: installing Debian's python3-petsc4py-real (Open MPI)"
    (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-petsc4py-real libpetsc-real-dev ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-petsc4py-real libpetsc-real-dev; }) \
      >/dev/null 2>&1 || echo "python-env: petsc4py could not be installed; not measured" >&2
  fi
fi
echo "python-env: $mpi ready ($venv)"
