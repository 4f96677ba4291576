#!/usr/bin/env bash
# One pytest launch of the Python package's tests under mpiexec (tests/python/CMakeLists.txt).
# Usage: run_pytest.sh VENV_PYTHON MPIEXEC N [mpiexec flags...] -- [pytest args...]
# Exit 77 (a reported skip) when the venv is missing: make python-<mpi> creates it.
set -euo pipefail
py="$1" mpiexec="$2" n="$3"
shift 3
flags=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do flags+=("$1"); shift; done
[ $# -gt 0 ] && shift
if [ ! -x "$py" ] || ! "$py" -c "import haloswap" >/dev/null 2>&1; then
  echo "SKIP: no Python environment with haloswap at $py (run: make python-<mpi>)"
  exit 77
fi
exec "$mpiexec" "${flags[@]}" -n "$n" "$py" "$@"
