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
# with the codes' own modules too. MPICH: the idle shim for oversubscribed runs (hs_run_env).
sdf_launch_env() {
  case $1 in
    openmpi) echo OMPI_MCA_io=romio321 ;;
    *) hs_run_env "$1" ;;
  esac
}

# sdf_compare_dirs REF OUT [--ignore ID]...: every SDF file of REF against OUT's of that name;
# prints "identical|DIFFERS detail" (one line; a difference: its first block, how many values
# differ and the largest difference).
sdf_compare_dirs() {
  local ref=$1 out=$2 f files=0 bad=0 blocks=0 res first=""
  shift 2
  for f in "$ref"/*.sdf; do
    [ -e "$f" ] || continue
    files=$((files + 1))
    if ! res=$(python3 "$HS_CHECK_ROOT/tools/real-code/sdf_compare.py" "$f" \
                 "$out/$(basename "$f")" "$@" 2>&1); then
      bad=$((bad + 1))
      # the first difference named: block, how many values, the largest difference
      [ -n "$first" ] || first="; $(basename "$f"): $(head -1 <<<"$res")"
    fi
    blocks=$((blocks + $(echo "$res" | sed -n 's/^sdf_compare: \([0-9]*\) blocks.*/\1/p')))
  done
  if [ "$files" -gt 0 ] && [ "$bad" -eq 0 ]; then
    echo "identical $files dumps, $blocks blocks"
  else
    echo "DIFFERS $bad of $files dumps differ$first"
  fi
}

# sdf_matrix MPI WORK RUN DATA LABEL "CASES" [compare args]: for every case and rank count
# (HS_CHECK_RANKS, else sdf_ranks), `RUN DIR MPI RANKS CASE [VAR=value...]` runs the code's own
# routines (DIR = WORK/own) once, then the drop-in (WORK/drop-in) with every transport, each
# with its output in DIR/DATA and its log in DIR/run.log; `LABEL CASE` names the case in the
# table. One row per run.
sdf_matrix() {
  local mpi=$1 work=$2 run=$3 data=$4 label=$5 cases=$6 c n t res name t0
  shift 6
  for c in $cases; do
    name=$($label "$c")
    for n in ${HS_CHECK_RANKS:-$sdf_ranks}; do
      t0=$(date +%s.%N)
      if ! $run "$work/own" "$mpi" "$n" "$c"; then
        HS_RUN_SECS=$(hs_since "$t0")
        hs_table_row "$name" "$n" own "$mpi" FAILED "see $work/own/run.log"
        continue
      fi
      hs_progress "$name, $n ranks, the code's own module, $mpi: ran (run $(hs_since "$t0") s)"
      rm -rf "$work/ref" && mv "$work/own/$data" "$work/ref"
      for t in $(hs_transports "$mpi"); do
        t0=$(date +%s.%N)
        # shellcheck disable=SC2046
        if ! $run "$work/drop-in" "$mpi" "$n" "$c" $(sdf_transport_env "$t"); then
          HS_RUN_SECS=$(hs_since "$t0")
          hs_table_row "$name" "$n" "$t" "$mpi" FAILED "$(grep -m1 -A1 ERROR \
            "$work/drop-in/run.log" | tail -1 | cut -c1-100)"
          continue
        fi
        HS_RUN_SECS=$(hs_since "$t0")
        res=$(sdf_compare_dirs "$work/ref" "$work/drop-in/$data" "$@")
        hs_table_row "$name" "$n" "$t" "$mpi" "${res%% *}" "${res#* }"
      done
    done
  done
}

# sdf_bench MPI WORK BUILD RUN CASE SECONDS SPEC STEPS WHAT: both builds relinked with the
# exclusive exchange timer (xt_instrument, SPEC: the routines), then HS_CHECK_BENCH rounds at
# 2 and 4 ranks (HS_BENCH_RANKS), each running the own routines and the drop-in with every
# transport once (interleaved); `SECONDS DIR` prints a run's time by the code's own measure
# (WHAT); STEPS normalises to per step. Runs go to WORK/xt/RANKS/VARIANT/rROUND; one more
# drop-in run per rank count counts the bytes (WORK/xt/RANKS/bytes). Prints the tables.
sdf_bench() {
  local mpi=$1 work=$2 build=$3 run=$4 c=$5 secs=$6 spec=$7 steps=$8 what=$9 n i v dir out
  local ownflags dropflags
  ownflags=$(xt_instrument "$mpi" "$work/own" "$spec") &&
    dropflags=$(xt_instrument "$mpi" "$work/drop-in" "$spec" "$work/haloswap") &&
    xt_same_labels "$work/own" "$work/drop-in" || return 1
  $build "$work/own" "$mpi" "" "$ownflags" && $build "$work/drop-in" "$mpi" "$work/haloswap"     "$dropflags" || return 1
  rm -rf "$work/xt"
  for n in ${HS_BENCH_RANKS:-2 4}; do
    for i in $(seq "$HS_CHECK_BENCH"); do
      for v in own $(hs_transports "$mpi"); do
        out=$work/xt/$n/$v/r$i
        mkdir -p "$out"
        printf 'load %s
' "$(cut -d' ' -f1 /proc/loadavg)" >"$out/meta"
        if [ "$v" = own ]; then dir=$work/own; set --; else
          dir=$work/drop-in
          # shellcheck disable=SC2046
          set -- $(sdf_transport_env "$v")
        fi
        if $run "$dir" "$mpi" "$n" "$c" "HS_XTIMER_DIR=$out" "$@"; then
          printf 'steps %s
code %s
codewhat %s
' "$steps" "$($secs "$dir")" "$what" >>"$out/meta"
        else
          echo "check-real-code: bench run failed ($v, $n ranks; $dir/run.log)" >&2
          rm -rf "$out"
        fi
      done
    done
    out=$work/xt/$n/bytes
    mkdir -p "$out"
    $run "$work/drop-in" "$mpi" "$n" "$c" "HS_XTIMER_DIR=$out" HS_XTIMER_BYTES=1 \
      HALOSWAP_TRANSPORT=p2p && printf 'steps %s\n' "$steps" >"$out/meta"
  done
  xt_table "$work/xt"
}

# sdf_stamp MPI [PREFIX]: what a build depends on (the checkout's commit and changes, our case
# files and the user's compiled in (--input, sdf_inputs_compiled=1), the MPI library, EPOCH's
# DEFINE, and with PREFIX haloswap's libraries, modules and drop-ins).
sdf_stamp() {
  local f
  { (cd "$HS_CHECK_SRC" && git rev-parse HEAD && git diff && git submodule status --recursive) \
      2>/dev/null || true
    echo "$1 ${HS_EPOCH_DEFINE:-}"
    cat "$HS_CHECK_ROOT/tools/real-code/$HS_CHECK_CODE"/*
    # the user's inputs when they are compiled in (Lare3d's src/*.f90; not EPOCH's decks)
    [ "${sdf_inputs_compiled:-0}" = 0 ] ||
      while IFS= read -r f; do [ -z "$f" ] || cat "$f"; done <<<"$HS_CHECK_INPUTS"
    # (the libraries static or shared, the default: a drop-in compiled against other
    # modules or linked to another library is rebuilt)
    [ -z "${2:-}" ] || cat "$2"/lib/lib* "$2"/include/* "$2"/share/haloswap/*/*
  } 2>/dev/null | sha1sum | cut -c1-16
}

# sdf_prepare DIR MPI [PREFIX]: a fresh copy of the checkout in DIR, unless DIR holds a build
# of the same inputs (sdf_stamp), which is kept (the build then only relinks).
sdf_prepare() {
  if [ -f "$1/.hs-stamp" ] && [ "$(cat "$1/.hs-stamp")" = "$(sdf_stamp "$2" "${3:-}")" ]; then
    return 0
  fi
  sdf_copy "$HS_CHECK_SRC" "$1"
}

# sdf_build LABEL BUILD DIR MPI [PREFIX]: one build with its progress lines; DIR/hs-rebuild.sh
# (written by BUILD) repeats it.
sdf_build() {
  local t0
  t0=$(date +%s.%N)
  hs_progress "$1 ($4): building in $3"
  $2 "$3" "$4" ${5:+"$5"} || return 1
  hs_progress "$1 ($4): built in $(hs_since "$t0") s"
  hs_kept "$1 ($4)" "$3 (rebuild: sh $3/hs-rebuild.sh)"
}

# sdf_check BUILD RUN DATA LABEL "CASES" BENCH_CASE SECONDS SPEC STEPS WHAT [compare args]:
# the whole check of an SDF code for every MPI library (--mpi): haloswap installed, two copies
# of the checkout built by `BUILD DIR MPI [PREFIX [LINK]]` (the own routines, then the drop-in
# from PREFIX; LINK: link options, given when relinking with the bench instrument), sdf_matrix
# over CASES (not with --build-only or --bench-only), and with --bench sdf_bench of BENCH_CASE
# (SPEC: the routines timed, STEPS per run, WHAT the code's own measure); then the scratch
# directory goes (unless --keep) and the script exits.
sdf_check() {
  local build=$1 run=$2 data=$3 label=$4 cases=$5 bcase=$6 secs=$7 spec=$8 steps=$9
  local what=${10} mpi work
  shift 10
  for mpi in $HS_CHECK_MPIS; do
    work=$HS_CHECK_WORK/$mpi
    mkdir -p "$work"
    hs_install "$mpi" "$work/haloswap"
    # shellcheck disable=SC2046
    hs_say_env "$mpi" $(sdf_launch_env "$mpi")
    sdf_prepare "$work/own" "$mpi" && sdf_build "the code's own module" "$build" "$work/own" "$mpi" &&
      sdf_stamp "$mpi" >"$work/own/.hs-stamp" || exit 1
    sdf_prepare "$work/drop-in" "$mpi" "$work/haloswap" &&
      sdf_build "haloswap's drop-in" "$build" "$work/drop-in" "$mpi" "$work/haloswap" &&
      sdf_stamp "$mpi" "$work/haloswap" >"$work/drop-in/.hs-stamp" || exit 1
    [ "$HS_CHECK_MODE" = build ] && continue
    [ "$HS_CHECK_BENCH_ONLY" = 1 ] || sdf_matrix "$mpi" "$work" "$run" "$data" "$label" "$cases" "$@"
    if [ "$HS_CHECK_BENCH" -gt 0 ]; then
      echo
      echo "Timing ($mpi, $($label "$bcase"), $HS_CHECK_BENCH interleaved rounds, the exclusive"
      echo "exchange timer in both builds; the code's own measure: $what)"
      sdf_bench "$mpi" "$work" "$build" "$run" "$bcase" "$secs" "$spec" "$steps" "$what" ||
        HS_CHECK_FAILS=$((HS_CHECK_FAILS + 1))
    fi
  done
  [ "$HS_CHECK_KEEP" = 1 ] || { rm -rf "$HS_CHECK_WORK"; HS_CHECK_BUILDS=""; }
  exit $((HS_CHECK_FAILS > 0))
}

# sdf_list LABEL "CASES" BUILD_S RUN_S: --list for an SDF code (two builds per MPI library; per
# case and rank count the own module and each transport); BUILD_S and RUN_S: measured seconds.
sdf_list() {
  local mpi c nt
  echo "$HS_CHECK_CODE check of ${HS_CHECK_SRC:-CHECKOUT (not read by --list)}, scratch directory $HS_CHECK_WORK"
  for mpi in $HS_CHECK_MPIS; do
    hs_list_mpi "$mpi" "$3" "the own module" "the code's own module"
    [ "$HS_CHECK_MODE" = build ] && continue
    [ "$HS_CHECK_BENCH_ONLY" = 1 ] ||
      for c in $2; do hs_list_runs "$($1 "$c")" "${HS_CHECK_RANKS:-$sdf_ranks}" $((nt + 1)) "$4"; done
    [ "$HS_CHECK_BENCH" -eq 0 ] ||
      hs_list_runs "bench ($HS_CHECK_BENCH rounds)" "${HS_BENCH_RANKS:-2 4}" \
        $(((nt + 1) * HS_CHECK_BENCH + 1)) "$4"
  done
}
