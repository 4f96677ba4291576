#!/bin/bash
# bench/auto-loaded.sh BUILD MPI N OUTDIR [busy|quiet] [LIBDIR]: N launches of hs_bench (MONC
# case, 2 ranks) with every fixed transport and auto, beside one busy loop per core (busy) or
# not; one line per launch: auto's choice and time against the fastest fixed transport
# (docs/benchmarks.md, "auto on a busy node"). LIBDIR: an older libhaloswap to compare.
# TRS, SWAPS, REPS override the transports and the repetitions.
set -eu
build=$1 mpi=$2 n=$3 out=$4 mode=${5:-busy} lib=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
busy=$build/busy
[ "$mode" = quiet ] || [ -x "$busy" ] || cc -std=c11 -O2 -o "$busy" "$here/../tools/busy.c"
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
pre=(); [ "$mode" = busy ] && pre=("$busy" --)
over=(); [ "$mpi" = openmpi ] && over=(--oversubscribe)
for i in $(seq "$n"); do
  f=$out/$mpi-$mode-$i.txt
  uptime >"$f"
  # shellcheck disable=SC2086  # TRS is a list of options
  env ${lib:+LD_LIBRARY_PATH=$lib} HALOSWAP_VERBOSE=1 "${pre[@]}" "mpiexec.$mpi" "${over[@]}" -n 2 \
    "$build/$mpi/bench/hs_bench" --local 16,16,256 --depth 2 --stencil box --fields 30 \
    ${TRS:---transport p2p --transport nbr --transport shm --transport cma --transport auto} \
    --warmup 2 --swaps "${SWAPS:-5}" --reps "${REPS:-3}" --no-verify >>"$f" 2>&1 || true
  python3 - "$f" <<'PY'
import re, sys
path = sys.argv[1]
lines = open(path).read().splitlines()
load = lines[0].split('average:')[1].strip() if lines else '?'
t = {}
for l in lines:
    m = re.match(r'^(auto -> \S+|p2p|nbr|rma-fence|rma-pscw|rma-passive|shm|cma)\s+([0-9.]+)', l)
    if m:
        t[m.group(1)] = float(m.group(2))
auto = [k for k in t if k.startswith('auto')]
fixed = {k: v for k, v in t.items() if not k.startswith('auto')}
if auto and fixed:
    best = min(fixed, key=fixed.get)
    print(f"{path.split('/')[-1]} load {load}: auto {auto[0][8:]} {t[auto[0]]:.0f} us; fastest "
          f"{best} {fixed[best]:.0f}; ratio {t[auto[0]] / fixed[best]:.2f}; "
          + " ".join(f"{k}={v:.0f}" for k, v in fixed.items()))
else:
    print(path, "no result (see the file)")
PY
done
