# Helpers shared by the checks of the SDF codes (lare3d.sh, epoch.sh); sourced by them.

# sdf_copy SRC DST: a copy of a checkout, git metadata included (the codes' builds read their
# commit), without build products and run outputs.
sdf_copy() {
  rm -rf "$2" && mkdir -p "$2"
  (cd "$1" && tar --exclude='./*/obj' --exclude=./obj --exclude='./*/bin' --exclude=./bin \
    --exclude='./*/Data' --exclude=./Data -cf - .) | tar -xf - -C "$2"
}

# sdf_transport_env T: the environment a haloswap transport needs (shmem is opt-in, and Open
# MPI 4.1.4 needs osc ^rdma with it).
sdf_transport_env() {
  echo "HALOSWAP_TRANSPORT=$1"
  if [ "$1" = shmem ]; then echo HALOSWAP_SHMEM=1 OMPI_MCA_osc=^rdma; fi
}

# sdf_launch_env MPI: Open MPI: ROMIO, because its default MPI-IO (OMPIO) writes variables whose
# per-rank file views overlap (node and face values) differently from run to run at 8 ranks,
# with the codes' own modules too. MPICH: the idle shim for oversubscribed runs.
sdf_launch_env() {
  case $1 in
    openmpi) echo OMPI_MCA_io=romio321 ;;
    mpich) echo "LD_PRELOAD=$(hs_build_dir mpich)/libhs_idle_yield.so" ;;
  esac
}

# sdf_compare_dirs REF OUT [--ignore ID]...: every SDF file of REF against OUT's of that name;
# prints "identical|DIFFERS detail" (one line).
sdf_compare_dirs() {
  local ref=$1 out=$2 f files=0 bad=0 blocks=0 res
  shift 2
  for f in "$ref"/*.sdf; do
    [ -e "$f" ] || continue
    files=$((files + 1))
    res=$(python3 "$HS_CHECK_ROOT/tools/real-code/sdf_compare.py" "$f" "$out/$(basename "$f")" \
          "$@" 2>&1) || bad=$((bad + 1))
    blocks=$((blocks + $(echo "$res" | sed -n 's/^sdf_compare: \([0-9]*\) blocks.*/\1/p')))
  done
  if [ "$files" -gt 0 ] && [ "$bad" -eq 0 ]; then
    echo "identical $files dumps, $blocks blocks"
  else
    echo "DIFFERS $bad of $files dumps differ"
  fi
}

# sdf_matrix MPI WORK RUN DATA LABEL "CASES" [compare args]: for every case and rank count
# (HS_CHECK_RANKS, else sdf_ranks), `RUN DIR MPI RANKS CASE [VAR=value...]` runs the code's own
# routines (DIR = WORK/own) once, then the drop-in (WORK/drop-in) with every transport, each
# with its output in DIR/DATA and its log in DIR/run.log; `LABEL CASE` names the case in the
# table. One row per run.
sdf_matrix() {
  local mpi=$1 work=$2 run=$3 data=$4 label=$5 cases=$6 c n t res name
  shift 6
  hs_table_header
  for c in $cases; do
    name=$($label "$c")
    for n in ${HS_CHECK_RANKS:-$sdf_ranks}; do
      if ! $run "$work/own" "$mpi" "$n" "$c"; then
        hs_table_row "$name" "$n" own "$mpi" FAILED "see $work/own/run.log"
        continue
      fi
      rm -rf "$work/ref" && mv "$work/own/$data" "$work/ref"
      for t in $(hs_transports "$mpi"); do
        # shellcheck disable=SC2046
        if ! $run "$work/drop-in" "$mpi" "$n" "$c" $(sdf_transport_env "$t"); then
          hs_table_row "$name" "$n" "$t" "$mpi" FAILED "$(grep -m1 -A1 ERROR \
            "$work/drop-in/run.log" | tail -1 | cut -c1-100)"
          continue
        fi
        res=$(sdf_compare_dirs "$work/ref" "$work/drop-in/$data" "$@")
        hs_table_row "$name" "$n" "$t" "$mpi" "${res%% *}" "${res#* }"
      done
    done
  done
}

# sdf_bench MPI WORK RUN CASE SECONDS STATS PREFIX: HS_CHECK_BENCH interleaved runs at 2 and 4
# ranks of the own routines and the drop-in with every transport; `SECONDS DIR` prints a run's
# time by the code's own measure; STATS is the drop-in's statistics switch, PREFIX the start of
# its lines; rows go to WORK/bench.txt.
sdf_bench() {
  local mpi=$1 work=$2 run=$3 c=$4 secs=$5 stats=$6 prefix=$7 n i t
  : >"$work/bench.txt"
  for n in 2 4; do
    for i in $(seq "$HS_CHECK_BENCH"); do
      $run "$work/own" "$mpi" "$n" "$c" && echo "own $n $($secs "$work/own")" >>"$work/bench.txt"
      for t in $(hs_transports "$mpi"); do
        # shellcheck disable=SC2046
        $run "$work/drop-in" "$mpi" "$n" "$c" "$stats=1" $(sdf_transport_env "$t") &&
          echo "$t $n $($secs "$work/drop-in") $(sdf_max_rank_seconds \
            "$work/drop-in/run.log" "$prefix")" >>"$work/bench.txt"
      done
    done
  done
}

# sdf_bench_table FILE STEPS: rows "variant ranks wall_s [exchange_s]" -> the timing table
# (median with min-max of the wall time; the exchange seconds per step, median).
sdf_bench_table() {
  python3 - "$1" "$2" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    rows.setdefault((int(f[1]), f[0]), []).append([float(x) for x in f[2:]])
steps = int(sys.argv[2])
print("| ranks | variant | run s, median (min-max) | exchange ms/step, median |")
print("|---|---|---|---|")
for (n, v), r in sorted(rows.items()):
    wall = [x[0] for x in r]
    ex = [x[1] * 1e3 / steps for x in r if len(x) > 1]
    exs = f"{statistics.median(ex):.3f}" if ex else "-"
    print(f"| {n} | {v} | {statistics.median(wall):.2f} ({min(wall):.2f}-{max(wall):.2f}) | {exs} |")
PY
}

# sdf_max_rank_seconds LOG PREFIX: the largest per-rank sum of the "seconds S" lines that start
# with PREFIX (the drop-ins' statistics at MPI_Finalize).
sdf_max_rank_seconds() {
  awk -v p="$2" 'index($0, p) == 1 {s[$3] += $NF} END {m = 0; for (r in s) if (s[r] > m) m = s[r]; print m}' "$1"
}

# sdf_check BUILD RUN DATA LABEL "CASES" BENCH_CASE SECONDS STATS PREFIX STEPS WHAT [compare
# args]: the whole check of an SDF code for every MPI library (--mpi): haloswap installed, two
# copies of the checkout built by `BUILD DIR MPI [PREFIX]` (the own routines, then the drop-in
# from PREFIX), sdf_matrix over CASES, and with --bench the timing of BENCH_CASE (WHAT says
# what is timed); then the scratch directory goes (unless --keep) and the script exits.
sdf_check() {
  local build=$1 run=$2 data=$3 label=$4 cases=$5 bcase=$6 secs=$7 stats=$8 prefix=$9
  local steps=${10} what=${11} mpi work
  shift 11
  for mpi in $HS_CHECK_MPIS; do
    work=$HS_CHECK_WORK/$mpi
    mkdir -p "$work"
    hs_install "$mpi" "$work/haloswap"
    sdf_copy "$HS_CHECK_SRC" "$work/own"
    sdf_copy "$HS_CHECK_SRC" "$work/drop-in"
    $build "$work/own" "$mpi" || exit 1
    $build "$work/drop-in" "$mpi" "$work/haloswap" || exit 1
    sdf_matrix "$mpi" "$work" "$run" "$data" "$label" "$cases" "$@"
    if [ "$HS_CHECK_BENCH" -gt 0 ]; then
      echo
      echo "Timing ($mpi, $bcase case, $HS_CHECK_BENCH interleaved runs): $what"
      sdf_bench "$mpi" "$work" "$run" "$bcase" "$secs" "$stats" "$prefix"
      sdf_bench_table "$work/bench.txt" "$steps"
    fi
  done
  [ "$HS_CHECK_KEEP" = 1 ] || rm -rf "$HS_CHECK_WORK"
  exit $((HS_CHECK_FAILS > 0))
}
