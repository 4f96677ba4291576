#!/bin/bash
# Soak of the one-sided transports (issue 16, item 7; not in CI): the race harness
# (tests/harness/test_race: seeded random delays before/inside/after start and complete, and
# race-ahead phases in which odd ranks sleep inside pack/unpack while even ranks run into the
# next swap) for SWAPS swaps per geometry (2 geometries, so 2*SWAPS per variant and rank
# count), per one-sided variant, rank count and MPI library. Wrong cells are counted.
#
#   tools/soak.sh [-s SWAPS] [-r "2 4 9"] [-m "openmpi mpich"] [-t "rma-fence ..."] [-b SECONDS] [-p]
#
# Defaults: SWAPS 50000 (1e5 per variant), ranks 2 4 9, both MPI builds in build/<mpi>,
# variants rma-fence rma-pscw rma-passive shm shmem cma cma-malloc (shmem: Open MPI's OSHMEM
# only). cma's one-copy path is raced by test_shm_alloc --race (test_race's hook field would put
# cma on its two-sided path): 5 configurations, ceil(2*SWAPS/5) swaps each, so every variant
# gets 2*SWAPS swaps; cma on hs_alloc'd fields, cma-malloc on malloc'd ones (HALOSWAP_ALLOC=plain). -b: stop starting new runs after
# SECONDS (what was not run is listed as such). Output: one line per run and a markdown
# table (build/soak/results.md) for docs/rma.md. Runs niced (nice -n 15). -p runs the
# variants of one (MPI, rank count) concurrently: the harness mostly sleeps (its injected
# delays), so this multiplies the swaps per hour on a small machine; timings are then not
# comparable, wrong-cell counts are.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
swaps=50000 ranks="2 4 9" mpis="openmpi mpich" budget=0 par=0
variants="rma-fence rma-pscw rma-passive shm shmem cma cma-malloc"
while getopts "s:r:m:t:b:p" o; do
  case $o in
    s) swaps=$OPTARG ;; r) ranks=$OPTARG ;; m) mpis=$OPTARG ;; t) variants=$OPTARG ;;
    b) budget=$OPTARG ;; p) par=1 ;; *) sed -n 2,16p "$0"; exit 2 ;;
  esac
done
out=$root/build/soak/run-$$
mkdir -p "$out"
res=${SOAK_OUT:-$out/results.md}
seed=${SEED:-$(date +%s)}
start=$(date +%s)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
{
  echo "| MPI | variant | ranks | swaps | wrong cells | failed runs | wall s | seed |"
  echo "|---|---|---|---|---|---|---|---|"
} > "$res"
# One run; prints its table row (and a progress line).
run_one() {
  local mpi=$1 n=$2 v=$3 exe=$4 spec rc t log wrong geoms failed unusable per=$swaps
      env=() launch=()
      case $mpi in
        openmpi) launch=(mpiexec.openmpi --oversubscribe -n "$n") ;;
        mpich) launch=(mpiexec.mpich -n "$n") ;;
      esac
      # MPICH 4.0 busy-polls when oversubscribed: preload the idle-yield shim as make test does.
      local shim=$root/build/$mpi/libhs_idle_yield.so
      [ "$mpi" = mpich ] && [ -f "$shim" ] && launch=(mpiexec.mpich -genv LD_PRELOAD "$shim" -n "$n")
      spec=$v
      if [ "$v" = shmem ]; then
        [ "$mpi" = openmpi ] || { echo "| $mpi | $v | $n | - | - | - | - | not built (no OpenSHMEM) |"; return; }
        env=(HALOSWAP_SHMEM=1 OMPI_MCA_osc=^rdma)
      fi
      [ "$v" = shm ] && [ "$n" = 9 ] && spec=shm:node_size=3 # three "nodes" of 3 ranks
      if [ "$v" = cma ] || [ "$v" = cma-malloc ]; then
        exe=$root/build/$mpi/tests/harness/test_shm_alloc
        [ -x "$exe" ] || { echo "| $mpi | $v | $n | - | - | - | - | not built ($exe) |"; return; }
        spec=cma
        [ "$n" = 9 ] && spec=cma:node_size=3
        [ "$v" = cma-malloc ] && env=(HALOSWAP_ALLOC=plain)
        per=$(( (2 * swaps + 4) / 5 ))
      fi
      if [ "$budget" != 0 ] && [ $(( $(date +%s) - start )) -ge "$budget" ]; then
        echo "| $mpi | $spec | $n | - | - | - | - | not run (time budget) |"
        return
      fi
      log=$out/$mpi-$v-np$n.log
      t0=$(date +%s)
      if [ "$v" = cma ] || [ "$v" = cma-malloc ]; then
        env "${env[@]}" nice -n 15 "${launch[@]}" "$exe" --race --transport "$spec" --swaps "$per" \
          --seed "$seed" > "$log" 2>&1
      else
        env "${env[@]}" nice -n 15 "${launch[@]}" "$exe" --transport "$spec" --swaps "$swaps" \
          --seed "$seed" --verbose > "$log" 2>&1
      fi
      rc=$?
      t=$(( $(date +%s) - t0 ))
      # "ok|FAIL <geometry> on <spec> at N ranks (W wrong, T s)": sum W over the geometries.
      wrong=$(grep -oE '\(([0-9]+) wrong' "$log" | grep -oE '[0-9]+' | awk '{s+=$1} END {print s+0}')
      geoms=$(grep -cE '^(ok|FAIL) ' "$log")
      failed=$(grep -cE '^FAIL ' "$log")
      [ "$rc" = 0 ] || failed="$failed (exit $rc)"
      unusable=$(grep -m1 "not usable here" "$log")
      if [ -n "$unusable" ]; then
        echo "| $mpi | $spec | $n | - | - | - | $t | not usable: ${unusable#*(} |"
      else
        local verdict=$seed
        [ "$rc" = 0 ] && [ "${wrong:-1}" = 0 ] || verdict="FAIL, seed $seed"
        echo "| $mpi | $v | $n | $(( geoms * per )) | ${wrong:-?} | $failed | $t | $verdict |"
      fi
      echo "soak: $mpi $v ($spec) np$n: $(( geoms * per )) swaps, wrong ${wrong:-?}, failed $failed, ${t}s"
}

status=0
for mpi in $mpis; do
  exe=$root/build/$mpi/tests/harness/test_race
  if [ ! -x "$exe" ]; then
    echo "soak: $exe missing (make build-$mpi)"; status=1; continue
  fi
  for n in $ranks; do
    k=0
    for v in $variants; do
      k=$((k + 1))
      if [ "$par" = 1 ]; then
        run_one "$mpi" "$n" "$v" "$exe" > "$out/row-$k" &
      else
        run_one "$mpi" "$n" "$v" "$exe" > "$out/row-$k"
      fi
    done
    wait
    for i in $(seq 1 $k); do
      grep '^|' "$out/row-$i" >> "$res"
      grep -v '^|' "$out/row-$i"
      grep -q '^| .*| \(FAIL\|?\)' "$out/row-$i" && status=1
    done
    rm -f "$out"/row-*
  done
done
cat "$res"
exit $status
