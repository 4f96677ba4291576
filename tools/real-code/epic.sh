# EPIC (EPIC-model/epic, 3-D MPI version) against haloswap's drop-in for its field_mpi module
# (fortran/epic/field_mpi.f90, docs/epic.md). Sourced by tools/check-real-code; never run alone.
#
# Per MPI library: copies the user's checkout twice into the scratch directory, builds it with
# EPIC's own src/3d/fields/field_mpi.f90 and with the drop-in (autotools, --enable-unit-tests),
# then runs with both
#  - EPIC's MPI unit tests that reach field_mpi (EPIC_UNIT_TESTS below) at every requested rank
#    count they support: the drop-in's outcome (PASSED/FAILED lines, exit code) must be EPIC's;
#  - the case at each rank count: the Robert bubble (examples/robert3d.nml, 32^3, 150 s of model
#    time: 61 steps, output every 30 s), or the user's (--input NAME.config, EPIC's namelist, with
#    its initial field file --input FIELD.nc or the epic3d-models namelist --input MODEL.nml that
#    makes it; the config's field_file is pointed at it, the rest run as it is): every variable of
#    every NetCDF file it writes (fields, field and parcel statistics, parcels) bit for bit
#    (nc_bitdiff, compiled from tools/real-code/nc_bitdiff.c).
# NETCDF_C_DIR_<mpi> / NETCDF_FORTRAN_DIR_<mpi> (environment; <mpi>: openmpi or mpich): the
# netCDF to build with (default: Debian's, /usr/lib/x86_64-linux-gnu/netcdf/mpi for Open MPI
# and /usr for Fortran). Debian has no parallel netCDF for MPICH: without NETCDF_C_DIR_mpich
# (a netCDF-C built with MPICH) multi-rank runs cannot write files, and the case is compared
# at 1 rank only and reported as skipped above.
# --bench N: N launches of the case at 2 ranks per variant, interleaved (own, then each
# transport, repeated), both builds relinked with the exclusive exchange timer (xtimer.c) on
# field_mpi's public routines; EPIC's own timer 'p2g/v2g halo (non-excl.)' beside it.
# EPIC_UNIT_RANKS / EPIC_CASE_RANKS (environment) override --ranks for the unit tests / the
# case; set and empty, they run none (as --case-only / --tests-only).

EPIC_UNIT_TESTS=${EPIC_UNIT_TESTS-"test_mpi_field_halo_fill test_mpi_field_halo_fill_vector
  test_mpi_field_interior_accumulate test_mpi_field_interior_accumulate_vector
  test_mpi_grid2par test_mpi_parcel_init_3d test_mpi_trilinear test_mpi_laplace_correction_3d
  test_mpi_gradient_correction_3d test_mpi_parcel_correction_3d test_mpi_vor2vel
  test_mpi_vtend test_mpi_parcel_diagnostics"}   # (environment: a subset; "" for the case only)
EPIC_CASE_TIME=${HS_CHECK_TIME:-${EPIC_CASE_TIME:-}}  # model seconds (default: 150 for Robert)
epic_unit_ranks=${EPIC_UNIT_RANKS-${HS_CHECK_RANKS:-1 2 3 4}}
epic_case_ranks=${EPIC_CASE_RANKS-${HS_CHECK_RANKS:-1 2 4}}
case $HS_CHECK_MODE in
  tests) epic_case_ranks="" ;;
  case) EPIC_UNIT_TESTS="" ;;
esac
hs_options epic --input --time --tests-only --case-only
[ -z "$EPIC_CASE_TIME" ] || [[ $EPIC_CASE_TIME =~ ^[0-9]+([.][0-9]*)?$ ]] ||
  hs_die "--time '$EPIC_CASE_TIME': model seconds, a positive number"
# The case: Robert (ours) or the user's (--input).
epic_config=$(hs_input '*.config') epic_field=$(hs_input '*.nc') epic_nml=$(hs_input '*.nml')
if [ -n "$HS_CHECK_INPUTS" ]; then
  [ "$(grep -c . <<<"$epic_config")" = 1 ] || hs_die "--input: one EPIC namelist NAME.config" \
    "among the inputs (got: $(echo ${epic_config:-none}))"
  [ "$(grep -c . <<<"$epic_field$epic_nml")" = 1 ] || hs_die "--input: the initial field file" \
    "(FIELD.nc) or the epic3d-models namelist that makes it (MODEL.nml), one of them (got:" \
    "$(echo ${epic_field:-} ${epic_nml:-} | sed 's/^$/none/'))"
  epic_label="$(basename "$epic_config")$([ -z "$EPIC_CASE_TIME" ] || echo " ${EPIC_CASE_TIME}s")"
else
  EPIC_CASE_TIME=${EPIC_CASE_TIME:-150}
  epic_label="robert3d 32^3 ${EPIC_CASE_TIME}s"
fi

# What the builds need beyond haloswap's own dependencies (Debian's parallel netCDF is Open
# MPI's).
epic_pkgs=(autoconf automake libtool pkg-config libnetcdff-dev libnetcdf-dev)
case " $HS_CHECK_MPIS " in *" openmpi "*) epic_pkgs+=(libnetcdf-mpi-dev libhdf5-openmpi-dev) ;; esac
if [ "$HS_CHECK_LIST" = 1 ]; then
  # estimated, not measured here (docs/epic.md, "Check it on your own case"): the default
  # MPICH matrix took a tester 30 minutes; a build is EPIC's serial make with its unit tests
  echo "epic check of ${HS_CHECK_SRC:-CHECKOUT (not read by --list)}, scratch directory $HS_CHECK_WORK"
  hs_packages "${epic_pkgs[@]}"
  for mpi in $HS_CHECK_MPIS; do
    hs_list_mpi "$mpi" 420 "EPIC's own module"
    [ "$HS_CHECK_MODE" = build ] && continue
    if [ "$HS_CHECK_BENCH_ONLY" = 0 ]; then
      # shellcheck disable=SC2086
      hs_list_runs "$(hs_count $EPIC_UNIT_TESTS) unit tests" "$epic_unit_ranks" \
        $(($(hs_count $EPIC_UNIT_TESTS) * (nt + 1))) 4
      ranks=$epic_case_ranks
      # Debian's netCDF writes in parallel with Open MPI only
      [ "$mpi" = openmpi ] || [ -n "${NETCDF_C_DIR_mpich:-}" ] || ranks=$(echo "$ranks" | grep -ow 1 || true)
      hs_list_runs "$epic_label" "$ranks" $((nt + 1)) 40
    fi
    [ "$HS_CHECK_BENCH" -eq 0 ] || hs_list_runs "bench ($HS_CHECK_BENCH rounds)" 2 $(((nt + 1) * HS_CHECK_BENCH + 1)) 30
  done
  hs_list_end "EPIC, estimated: ~420 s a build, ~4 s a unit-test launch, ~40 s a Robert run"
fi
[ -f "$HS_CHECK_SRC/src/3d/fields/field_mpi.f90" ] && [ -x "$HS_CHECK_SRC/bootstrap" ] ||
  hs_die "$HS_CHECK_SRC is not an EPIC checkout (no src/3d/fields/field_mpi.f90, bootstrap)"

EPIC_NC_MPI=/usr/lib/x86_64-linux-gnu/netcdf/mpi   # Debian's netCDF on Open MPI's HDF5

# epic_build MPI VARIANT DIR: DIR/src is a copy of the checkout built with EPIC's field_mpi
# (VARIANT own) or the drop-in (VARIANT haloswap, from the haloswap install in DIR/../haloswap).
# A build whose inputs have not changed is kept (DIR/stamp).
epic_build() {
  local mpi=$1 variant=$2 dir=$3 hs stamp ncdir ncfdir fcflags="" libs="" ldflags="" t0
  hs=$(dirname "$dir")/haloswap
  ncdir=/usr
  [ "$mpi" = openmpi ] && ncdir=$EPIC_NC_MPI
  ncdir=$(eval echo "\${NETCDF_C_DIR_$mpi:-$ncdir}")
  ncfdir=$(eval echo "\${NETCDF_FORTRAN_DIR_$mpi:-/usr}")
  # A netCDF-C of one's own comes before Debian's (same soname) for netCDF-Fortran's use too.
  [ "$ncdir" = /usr ] || [ "$ncdir" = "$EPIC_NC_MPI" ] ||
    ldflags="-Wl,--disable-new-dtags -Wl,-rpath,$ncdir/lib"
  stamp=$( (echo "$ncdir $ncfdir"; cd "$HS_CHECK_SRC" && { git rev-parse HEAD && git diff; } 2>/dev/null || true
           if [ "$variant" = haloswap ]; then
             cat "$hs/share/haloswap/epic/field_mpi.f90" "$hs"/lib/libhaloswap*
           fi) | sha1sum | cut -c1-16)
  hs_kept "$variant ($mpi)" "$dir/src (rebuild: make -C $dir/src)"
  if [ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$stamp" ] && [ -x "$dir/src/src/3d/epic3d" ]; then
    hs_progress "epic $variant ($mpi): unchanged, kept ($dir)"
    return 0
  fi
  t0=$(date +%s.%N)
  rm -rf "$dir" && mkdir -p "$dir"
  cp -a "$HS_CHECK_SRC" "$dir/src"
  if [ "$variant" = haloswap ]; then
    cp "$hs/share/haloswap/epic/field_mpi.f90" "$dir/src/src/3d/fields/field_mpi.f90"
    fcflags="-I$hs/include"
    libs=$(PKG_CONFIG_PATH=$hs/lib/pkgconfig pkg-config --libs --static haloswap-fortran)
  fi
  hs_progress "epic $variant ($mpi): building in $dir"
  # EPIC's Makefiles do not order Fortran modules across directories: plain make, not -j.
  (cd "$dir/src" && ./bootstrap >"$dir/bootstrap.log" 2>&1 &&
   FC=mpif90.$mpi FCFLAGS="$fcflags" LIBS="$libs" NETCDF_C_DIR=$ncdir NETCDF_FORTRAN_DIR=$ncfdir \
     LDFLAGS="$ldflags" ./configure --enable-unit-tests --prefix="$dir/install" >"$dir/configure.log" 2>&1 &&
   nice -n 10 make >"$dir/make.log" 2>&1) || {
    echo "epic: building $variant ($mpi) failed; see $dir/{bootstrap,configure,make}.log" >&2
    tail -20 "$dir/make.log" >&2 2>/dev/null
    exit 1
  }
  echo "$stamp" >"$dir/stamp"
  hs_progress "epic $variant ($mpi): built in $(hs_since "$t0") s"
}

# epic_env TRANSPORT: the environment of a drop-in run ("own": none).
epic_env() {
  case $1 in
    own) echo "" ;;
    shmem) echo "HALOSWAP_TRANSPORT=shmem HALOSWAP_SHMEM=1 OMPI_MCA_osc=^rdma" ;;
    *) echo "HALOSWAP_TRANSPORT=$1" ;;
  esac
}

# epic_unit MPI DIR TEST RANKS: runs one unit test; prints its outcome ("PASSED", "FAILED",
# "exit N", or "unsupported: ..." when it says it does not run at that count).
epic_unit() {
  local mpi=$1 exe=$2/src/unit-tests/3d/$3 n=$4 out rc=0
  # shellcheck disable=SC2046
  out=$(cd "$2" && env $EPIC_RUN_ENV timeout --foreground 120 $(hs_mpiexec "$mpi") -n "$n" "$exe" 2>&1) || rc=$?
  if grep -q "does not work with" <<<"$out"; then
    echo "unsupported: $(grep -m1 "does not work with" <<<"$out" | sed 's/^ *//')"
  elif [ $rc -ne 0 ]; then
    echo "exit $rc"
  elif grep -q FAILED <<<"$out"; then
    echo "FAILED"
  elif grep -q PASSED <<<"$out"; then
    echo "PASSED"
  else
    echo "no result"
  fi
}

# epic_case MPI DIR RUNDIR RANKS: the case in RUNDIR (Robert's field file, or the user's
# epic3d-models namelist's, is made once per build); prints the wall time.
epic_case() {
  local mpi=$1 dir=$2 run=$3 n=$4 t0 t1 nml=${epic_nml:-$2/src/examples/robert3d.nml} field
  local config=${epic_config:-$2/src/examples/robert3d.config} nc
  if [ -n "$epic_field" ]; then
    field=$epic_field
  else
    # the file the namelist's ncfname names, made in DIR by the build's own epic3d-models
    nc=$(sed -n "s/^ *ncfname *= *['\"]\([^'\"]*\)['\"].*/\1/p" "$nml" | head -1)
    [ -n "$nc" ] || { echo "epic: $nml has no ncfname = '...'" >&2; return 1; }
    field=$dir/$nc
    if [ ! -f "$field" ] || [ "$nml" -nt "$field" ]; then
      (cd "$dir" && cp "$nml" . && "$dir/src/models/3d/epic3d-models" --config "$(basename "$nml")" \
         >models.log 2>&1) || { echo "epic: epic3d-models failed in $dir (models.log)" >&2; exit 1; }
    fi
  fi
  rm -rf "$run" && mkdir -p "$run"
  if [ -n "$epic_config" ]; then
    sed -e "s|field_file *=.*|field_file = '$field'|" \
        -e "${EPIC_CASE_TIME:+s|time%limit *=.*|time%limit = $EPIC_CASE_TIME|}" \
        -e "${EPIC_CASE_OUTPUT:+s|\\(output%write_[a-z_]*\\) *=.*|\\1 = $EPIC_CASE_OUTPUT|}" \
        "$config" >"$run/case.config"
  else
    sed -e "s|field_file *=.*|field_file = '$field'|" \
        -e "s|time%limit *=.*|time%limit = $EPIC_CASE_TIME|" \
        -e "s|\(output%write_[a-z_]*\) *=.*|\1 = ${EPIC_CASE_OUTPUT:-.true.}|" \
        "$config" >"$run/case.config"
  fi
  t0=$(date +%s.%N)
  # shellcheck disable=SC2046
  (cd "$run" && env $EPIC_RUN_ENV timeout --foreground 900 $(hs_mpiexec "$mpi") -n "$n" \
     "$dir/src/src/3d/epic3d" --config case.config >epic.log 2>&1) || {
    echo "epic: the case failed in $run (epic.log)" >&2; tail -5 "$run/epic.log" >&2; return 1; }
  t1=$(date +%s.%N)
  echo "$t0 $t1" | awk '{printf "%.1f", $2 - $1}'
}

# epic_compare A B: every NetCDF file of run A against B's; prints "identical" or what differs.
epic_compare() {
  local a=$1 b=$2 f n=0 bad=""
  for f in "$a"/*.nc; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    if [ ! -f "$b/$(basename "$f")" ]; then
      bad="$bad $(basename "$f") (missing)"
    elif ! "$EPIC_BITDIFF" "$f" "$b/$(basename "$f")" >"$b/$(basename "$f").diff" 2>&1; then
      # the file, and its first difference (how many values, the largest difference)
      bad="$bad $(basename "$f") ($(grep -v '^DIFFERENT\|^note' "$b/$(basename "$f").diff" | head -1))"
    fi
  done
  if [ "$n" = 0 ]; then echo "no output files"; elif [ -n "$bad" ]; then echo "differ:$bad";
  else echo "identical ($n files)"; fi
}

# epic_halo_us RUNDIR: EPIC's timer 'p2g/v2g halo (non-excl.)' from the run's timings file
# (BASENAME.csv: calls, then min/mean/max over ranks of the seconds in it): microseconds per
# call on the slowest rank and on the fastest (the swap waits for the slower rank's par2grid,
# so the fastest rank's time is closer to the exchange itself).
epic_halo_us() {
  awk -F, '/^p2g\/v2g halo/ { if ($2 > 0) printf "%.1f %.1f\n", $6 * 1e6 / $2, $4 * 1e6 / $2 }' \
    "$1"/*.csv
}

# The routines the bench instrument times: every public entry of field_mpi that other files
# call, by the generic's name, with the symbol of EPIC's own specific and of the drop-in's.
EPIC_XT_SPEC=""
for r in halo_fill_scalar:fill_scalar halo_fill_vector:fill_vector \
         interior_accumulate_scalar:accumulate_scalar interior_accumulate_vector:accumulate_vector \
         halo_swap_scalar:swap_scalar halo_swap_vector:swap_vector \
         interior_to_buffer:interior_to_buffer halo_to_buffer:halo_to_buffer \
         buffer_to_halo:buffer_to_halo buffer_to_interior:buffer_to_interior; do
  for d in 3d 2d; do
    EPIC_XT_SPEC="$EPIC_XT_SPEC
field_${r%%:*}_$d __field_mpi_MOD_field_${r%%:*}_$d __field_mpi_MOD_${r#*:}_$d"
  done
done
for r in halo_reset_scalar:reset_scalar halo_reset_vector:reset_vector; do
  EPIC_XT_SPEC="$EPIC_XT_SPEC
field_${r%%:*} __field_mpi_MOD_field_${r%%:*} __field_mpi_MOD_${r#*:}"
done
for r in field_interior_to_buffer_integer field_halo_to_buffer_integer \
         field_buffer_to_halo_integer field_buffer_to_interior_integer \
         interior_to_halo_communication halo_to_interior_communication field_mpi_alloc \
         field_mpi_dealloc; do
  EPIC_XT_SPEC="$EPIC_XT_SPEC
$r __field_mpi_MOD_$r"
done

# epic_relink MPI DIR [LINK]: relinks DIR's epic3d (EPIC's Makefile), with the link options
# LINK (the bench instrument) or without (as built).
epic_relink() {
  rm -f "$2/src/src/3d/epic3d"
  (cd "$2/src/src/3d" && make epic3d FC="mpif90.$1 ${3:-}" >"$2/relink.log" 2>&1) || {
    echo "epic: relinking epic3d in $2 failed (relink.log)" >&2; return 1; }
}

# --bench N: both builds relinked with the exclusive exchange timer (tools/real-code/xtimer.c,
# EPIC_XT_SPEC), then N rounds at 2 ranks; each round runs EPIC's own module, then the drop-in
# on each transport, the case without file output. Prints the instrument's tables (exchange
# time per par2grid call, i.e. per RK stage) with EPIC's own timer 'p2g/v2g halo (non-excl.)'
# beside it (us per call, slowest rank), and the bytes the drop-in moves. Both binaries are
# relinked without the timer afterwards.
epic_bench() {
  local mpi w r v dir out steps t flags
  for mpi in $HS_CHECK_MPIS; do
    w=$HS_CHECK_WORK/$mpi
    echo
    echo "Timing ($mpi, $epic_label without output, 2 ranks, $HS_CHECK_BENCH" \
         "interleaved rounds, the exclusive exchange timer in both builds)"
    flags=$(xt_instrument "$mpi" "$w/own/src/src/3d" "$EPIC_XT_SPEC") &&
      epic_relink "$mpi" "$w/own" "$flags" || continue
    flags=$(xt_instrument "$mpi" "$w/haloswap-build/src/src/3d" "$EPIC_XT_SPEC" "$w/haloswap") &&
      epic_relink "$mpi" "$w/haloswap-build" "$flags" || continue
    xt_same_labels "$w/own/src/src/3d" "$w/haloswap-build/src/src/3d" || continue
    rm -rf "$w/xt" "$w/bench"
    for r in $(seq "$HS_CHECK_BENCH") bytes; do
      for v in own $(hs_transports "$mpi"); do
        dir=$w/haloswap-build
        [ "$v" = own ] && dir=$w/own
        out=$w/xt/2/$v/r$r
        t="HS_XTIMER_DIR=$out"
        if [ "$r" = bytes ]; then
          [ "$v" = p2p ] || continue
          out=$w/xt/2/bytes
          t="HS_XTIMER_DIR=$out HS_XTIMER_BYTES=1"
        fi
        mkdir -p "$out"
        printf 'load %s\n' "$(cut -d' ' -f1 /proc/loadavg)" >"$out/meta"
        # shellcheck disable=SC2046
        if EPIC_RUN_ENV="$EPIC_RUN_ENV $(epic_env "$v") $t" EPIC_CASE_OUTPUT=.false. \
             epic_case "$mpi" "$dir" "$w/bench/$v" 2 >/dev/null; then
          steps=$(awk -F, '/^par2grid,/ { print $2 }' "$w/bench/$v"/*.csv)
          printf 'steps %s\ncode %s\ncodewhat %s\n' "$steps" \
            "$(epic_halo_us "$w/bench/$v" | cut -d' ' -f1)" \
            "EPIC's 'p2g/v2g halo (non-excl.)', us per call, slowest rank (barriers inside)" \
            >>"$out/meta"
        else
          rm -rf "$out"
        fi
      done
    done
    xt_table "$w/xt"
    epic_relink "$mpi" "$w/own" && epic_relink "$mpi" "$w/haloswap-build"
  done
}

epic_main() {
  local mpi w t n res own got t0 secs
  hs_packages "${epic_pkgs[@]}"
  EPIC_BITDIFF=$(hs_nc_bitdiff)
  EPIC_RUN_ENV="OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1"
  for mpi in $HS_CHECK_MPIS; do
    w=$HS_CHECK_WORK/$mpi
    mkdir -p "$w"
    hs_install "$mpi" "$w/haloswap"
    epic_build "$mpi" own "$w/own"
    epic_build "$mpi" haloswap "$w/haloswap-build"
    [ "$HS_CHECK_BENCH_ONLY" = 1 ] || [ "$HS_CHECK_MODE" = build ] && continue
    # shellcheck disable=SC2046
    hs_say_env "$mpi" $(hs_run_env "$mpi")
    # Unit tests: EPIC's own outcome once per rank count, the drop-in's per transport.
    for t in $EPIC_UNIT_TESTS; do
      for n in $epic_unit_ranks; do
        t0=$(date +%s.%N)
        own=$(EPIC_RUN_ENV="$EPIC_RUN_ENV $(hs_run_env "$mpi")" epic_unit "$mpi" "$w/own" "$t" "$n")
        case $own in unsupported*)
          hs_table_row "$t" "$n" "(all)" "$mpi" skipped "$own"; continue ;;
        esac
        hs_progress "$t, $n ranks, EPIC's own module, $mpi: $own (run $(hs_since "$t0") s)"
        for tr in $(hs_transports "$mpi"); do
          t0=$(date +%s.%N)
          # shellcheck disable=SC2046
          got=$(EPIC_RUN_ENV="$EPIC_RUN_ENV $(hs_run_env "$mpi") $(epic_env "$tr")" epic_unit "$mpi" "$w/haloswap-build" "$t" "$n")
          if [ "$got" = "$own" ]; then res=identical; else res=DIFFERS; fi
          HS_RUN_SECS=$(hs_since "$t0")
          hs_table_row "$t" "$n" "$tr" "$mpi" "$res" "drop-in $got, EPIC's own $own"
        done
      done
    done
    # The case: EPIC's own run per rank count, then the drop-in's per transport.
    for n in $epic_case_ranks; do
      if [ "$mpi" = mpich ] && [ "$n" -gt 1 ] && [ -z "${NETCDF_C_DIR_mpich:-}" ]; then
        hs_table_row "$epic_label" "$n" "(all)" "$mpi" skipped \
          "Debian has no netCDF for MPICH (NETCDF_C_DIR_mpich): multi-rank runs write no files"
        continue
      fi
      if ! secs=$(EPIC_RUN_ENV="$EPIC_RUN_ENV $(hs_run_env "$mpi")" epic_case "$mpi" "$w/own" "$w/runs/own-np$n" "$n"); then
        hs_table_row "$epic_label" "$n" "(EPIC's own)" "$mpi" FAILED "see $w/runs/own-np$n/epic.log"
        continue
      fi
      hs_progress "$epic_label, $n ranks, EPIC's own module, $mpi: ran (run $secs s)"
      for tr in $(hs_transports "$mpi"); do
        # shellcheck disable=SC2046
        if secs=$(EPIC_RUN_ENV="$EPIC_RUN_ENV $(hs_run_env "$mpi") $(epic_env "$tr")" epic_case \
             "$mpi" "$w/haloswap-build" "$w/runs/$tr-np$n" "$n"); then
          got=$(epic_compare "$w/runs/own-np$n" "$w/runs/$tr-np$n")
          HS_RUN_SECS=$secs
        else
          got="run failed (see $w/runs/$tr-np$n/epic.log)"
        fi
        case $got in identical*) res=identical ;; *) res=DIFFERS ;; esac
        hs_table_row "$epic_label" "$n" "$tr" "$mpi" "$res" "$got"
      done
    done
  done
  if [ "$HS_CHECK_BENCH" -gt 0 ] && [ "$HS_CHECK_MODE" != build ]; then epic_bench; fi
  if [ "$HS_CHECK_KEEP" != 1 ]; then rm -rf "$HS_CHECK_WORK"; HS_CHECK_BUILDS=""; fi
  [ "$HS_CHECK_FAILS" = 0 ]
}

epic_main
