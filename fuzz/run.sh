#!/bin/bash
# Runs each libFuzzer harness for a fixed time: fuzz/run.sh SECONDS [options desc ncread]
# Corpora grow in build/fuzz/corpus/<harness> (seeded from fuzz/seeds and fuzz/regressions);
# crashes land in build/fuzz/artifacts/<harness>/. Keep a fixed crash's input in
# fuzz/regressions/<harness>/: `make test` replays those (fuzz_replay_* tests).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:?usage: fuzz/run.sh SECONDS [options desc ncread]}
shift
harnesses=${*:-options desc ncread}
out=${BUILD:-$root/build}/fuzz
[ -x "$out/fuzz_ncread" ] && [ "${REBUILD:-0}" = 0 ] || bash "$root/fuzz/build.sh" || exit 1
# MPI singletons; leaks inside the MPI library are not ours. libnetcdf allocates what a
# classic header claims (4-10 GiB for a 1 KiB file): such allocations fail (NULL, then
# NC_ENOMEM) instead of ending the run.
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:max_allocation_size_mb=2048
export TMPDIR=${TMPDIR:-/tmp}
status=0
for h in $harnesses; do
  corpus=$out/corpus/$h art=$out/artifacts/$h
  mkdir -p "$corpus" "$art"
  cp -n "$root/fuzz/seeds/$h/"* "$root/fuzz/regressions/$h/"* "$corpus/" 2>/dev/null
  # NetCDF-4 seeds from the test suite's generator, if a normal build has it.
  gen=$(ls "${BUILD:-$root/build}"/*/tests/cluster/make_bad_files 2>/dev/null | head -1)
  if [ "$h" = ncread ] && [ -n "$gen" ] && [ -n "${FUZZ_STRICT:-}" ]; then
    d=$(mktemp -d) && "$gen" "$d" >/dev/null &&
      for f in "$d"/*.nc; do (printf '\000'; cat "$f") > "$corpus/nc4_$(basename "$f" .nc)"; done
    rm -rf "$d"
  fi
  echo "== fuzz_$h for $secs s (corpus $(ls "$corpus" | wc -l) inputs)"
  start=$(date +%s)
  # Fork mode: a crash is kept in $art and the run goes on (several findings per run).
  "$out/fuzz_$h" -max_total_time="$secs" -timeout=30 -malloc_limit_mb=4096 -rss_limit_mb=3000 \
    -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
    -artifact_prefix="$art/" -print_final_stats=1 "$corpus" 2>"$out/fuzz_$h.log"
  rc=$?
  grep -E "stat::number_of_executed_units|stat::peak_rss|INFO: fuzzed for" "$out/fuzz_$h.log" | tail -3
  echo "fuzz_$h: exit $rc after $(( $(date +%s) - start )) s; artifacts: $(ls "$art" | wc -l)"
  [ $rc = 0 ] || status=1
done
exit $status
