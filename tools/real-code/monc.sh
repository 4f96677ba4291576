# Sourced by tools/check-real-code (never run alone): MONC (Leeds-MONC/monc, docs/monc.md).
# Copies the user's MONC checkout twice, builds it with fcm once with MONC's own halo module
# and once with haloswap's drop-in (the two files of fortran/monc/), runs a case with MONC's
# module and with the drop-in on every transport, and compares the checkpoint files variable
# by variable, bit for bit (tools/real-code/nc_bitdiff.c). The case: a small stratus case
# (testcases/stratus/mbl_sc.mcf on a 16x16 grid for 20 s of model time), or the user's own
# configuration (--input NAME.mcf, its grid and time kept; --time sets termination_time); both
# with the IO server and SOCRATES off, reproducible random noise and the checkpoint written to
# dump.nc. With --bench N, each row also gives MONC's own "timestepping" time, the median of N
# runs, and then monc_bench times the exchange itself (docs/monc.md, "Communication time per
# timestep"); --bench-only runs only that. Needs fcm (FCM=/path/to/fcm/bin/fcm, or Debian's
# fcm) and what docs/monc.md lists.

hs_options monc --input --time
monc_mcf=$(hs_input '*.mcf')
if [ -n "$HS_CHECK_INPUTS" ]; then
  [ "$(grep -c . <<<"$monc_mcf")" = 1 ] && [ "$(grep -c . <<<"$HS_CHECK_INPUTS")" = 1 ] ||
    hs_die "--input: one MONC configuration NAME.mcf (got: $(echo $HS_CHECK_INPUTS))"
  monc_label="$(basename "$monc_mcf")"
else
  monc_label=stratus-16x16
fi
[ -z "$HS_CHECK_TIME" ] || [[ $HS_CHECK_TIME =~ ^[0-9]+([.][0-9]*)?$ ]] ||
  hs_die "--time '$HS_CHECK_TIME': model seconds, a positive number"
monc_time=${HS_CHECK_TIME:-$([ -n "$monc_mcf" ] || echo 20)}
# Debian's parallel netCDF is Open MPI's; fcm is Debian's unless FCM names another.
monc_pkgs=(libfftw3-dev libnetcdff-dev libnetcdf-mpi-dev libhdf5-openmpi-dev)
[ -n "${FCM:-}" ] || monc_pkgs+=(fcm)
if [ "$HS_CHECK_LIST" = 1 ]; then
  # docs/monc.md: a build about 3 min; a stratus 16x16 20 s run: estimated
  echo "monc check of ${HS_CHECK_SRC:-CHECKOUT (not read by --list)}, scratch directory $HS_CHECK_WORK"
  hs_packages "${monc_pkgs[@]}"
  for mpi in $HS_CHECK_MPIS; do
    if [ "$mpi" != openmpi ]; then echo "$mpi: skipped (MONC's checkpoint needs Debian's parallel NetCDF, Open MPI's)"; continue; fi
    hs_list_mpi "$mpi" 180 "MONC's own module"
    [ "$HS_CHECK_MODE" = build ] || [ "$HS_CHECK_BENCH_ONLY" = 1 ] ||
      hs_list_runs "$monc_label" "${HS_CHECK_RANKS:-4}" $(((nt + 1) * (HS_CHECK_BENCH > 0 ? HS_CHECK_BENCH : 1))) 20
    # the bench: MONC's own module and the study's 6 transports, plus a bytes run
    [ "$HS_CHECK_MODE" = build ] || [ "$HS_CHECK_BENCH" -eq 0 ] ||
      hs_list_runs "bench ($HS_CHECK_BENCH rounds)" "${HS_BENCH_RANKS:-2 4}" $((7 * HS_CHECK_BENCH + 1)) 20
  done
  hs_list_end "MONC: ~180 s a build (docs/monc.md), ~20 s a stratus run (estimate)"
fi
[ -d "$HS_CHECK_SRC/model_core/src/communication" ] ||
  hs_die "$HS_CHECK_SRC is not a MONC checkout (no model_core/src/communication)"
hs_packages "${monc_pkgs[@]}"

monc_fcm() {
  if [ -n "${FCM:-}" ]; then echo "$FCM"; return; fi
  command -v fcm || { echo "check-real-code monc: fcm not found: set FCM=/path/to/fcm/bin/fcm (github.com/metomi/fcm, a checkout runs as is)" >&2; exit 2; }
}

# monc_site MPI HSPREFIX|"" FILE: the fcm site configuration docs/monc.md gives.
monc_site() {
  local mpi=$1 hs=$2 f90=mpif90.$1 cc=mpicc.$1
  cat > "$3" <<CFG
include = comp-gnu-4.4.7.cfg
\$f90 = $f90
\$cc = $cc
\$fflags_opt = -O3 -J . -fallow-argument-mismatch -finit-integer=0 -finit-derived
\$fflags = \$fflags_opt
\$fflags_core = \$fflags -frecursive
\$fflags_io = \$fflags -frecursive
\$fflags_psrc = -O1 -J . -fallow-argument-mismatch -finit-integer=0 -finit-derived
\$netcdf_inc_path = /usr/include
\$netcdf_lib_path = /usr/lib/x86_64-linux-gnu
\$fftw_inc_path = /usr/include
\$fftw_lib_path = /usr/lib/x86_64-linux-gnu
\$hdf5_lib_path = /usr/lib/x86_64-linux-gnu/hdf5/$mpi
include = monc-build.cfg
build.prop{cc.flags}[monc/io] = -fcommon
CFG
  if [ -n "$hs" ]; then
    local extra=""
    [ -d /usr/lib/x86_64-linux-gnu/$mpi/lib ] && extra=/usr/lib/x86_64-linux-gnu/$mpi/lib
    local oshmem=""
    if grep -q -- -loshmem "$hs/lib/pkgconfig/haloswap.pc"; then oshmem=oshmem; fi
    # A shared build is one library; a static one keeps the Fortran modules in haloswap_f.
    local hslibs=haloswap
    [ -f "$hs/lib/libhaloswap_f.a" ] && hslibs="haloswap_f haloswap"
    cat >> "$3" <<CFG
build.prop{class,no-dep.f.module} = mpi netcdf mpi_f08 haloswap haloswap_dropin
build.prop{class,fc.include-paths} = \$netcdf_inc_path \$fftw_inc_path $hs/include
build.prop{class,fc.libs} = $hslibs $oshmem netcdff netcdf_mpi hdf5 hdf5_hl z fftw3 pthread m
build.prop{class,fc.lib-paths} = \$netcdf_lib_path \$fftw_lib_path \$hdf5_lib_path $hs/lib $extra
CFG
  else
    echo "build.prop{class,fc.libs} = netcdff netcdf_mpi hdf5 hdf5_hl z fftw3 pthread" >> "$3"
  fi
}

# monc_build DIR MPI HSPREFIX|"": copy the checkout to DIR, build it there.
monc_build() {
  local dir=$1
  rm -rf "$dir"
  mkdir -p "$dir"
  (cd "$HS_CHECK_SRC" && tar --exclude=.git -cf - .) | (cd "$dir" && tar -xf -)
  if [ -n "$3" ]; then
    cp "$3"/share/haloswap/monc/halocommunication.F90 "$3"/share/haloswap/monc/communicationtypes.F90 \
       "$dir/model_core/src/communication/"
  fi
  monc_site "$2" "$3" "$dir/fcm-make/hs-site.cfg"
  # LD_RUN_PATH: ld's RUNPATH when the link line names none (a shared libhaloswap in $3/lib).
  printf 'cd %q && LD_RUN_PATH=%q %q make -j 2 -f fcm-make/hs-site.cfg
' "$dir" "${3:+$3/lib}" \
    "$(monc_fcm)" >"$dir/hs-rebuild.sh"
  if ! (cd "$dir" && LD_RUN_PATH="${3:+$3/lib}" "$(monc_fcm)" make -j 2 -f fcm-make/hs-site.cfg \
          > build.log 2>&1); then
    echo "check-real-code monc: the build in $dir failed; the end of $dir/build.log:" >&2
    tail -20 "$dir/build.log" >&2
    exit 1
  fi
}

# monc_run EXE DIR RANKS MPI [ENV...]: the small stratus case in DIR; prints the timestepping ms.
monc_run() {
  local exe=$1 dir=$2 n=$3 mpi=$4
  shift 4
  rm -rf "$dir"
  mkdir -p "$dir"
  local mcf=${monc_mcf:-$HS_CHECK_SRC/testcases/stratus/mbl_sc.mcf} size=""
  [ -n "$monc_mcf" ] || size='s/^x_size=.*/x_size=16/; s/^y_size=.*/y_size=16/'
  sed -e "$size" -e "${monc_time:+s/^termination_time=.*/termination_time=$monc_time/}" \
      -e 's/^iobridge_enabled=.*/iobridge_enabled=.false./' \
      -e 's/^socrates_couple_enabled=.*/socrates_couple_enabled=.false./' \
      -e 's/^walltime_limit=.*/walltime_limit=00:20:00/' \
      -e 's|^checkpoint_file=.*|checkpoint_file="dump.nc"|' \
      -e "s|^global_configuration=.*|global_configuration=$HS_CHECK_WORK/own/global_config|" \
      "$mcf" > "$dir/case.mcf"
  # MONC's random noise with l_rand_bit_reproducible=.true. (its global default) gets the
  # seed instead of putting it (randomnoise.F90), so gfortran's random start state makes
  # every run differ; .false. puts a seed per rank: the same bits run after run.
  printf 'enable_io_server=.false.\nl_rand_bit_reproducible=.false.\n' >> "$dir/case.mcf"
  (cd "$dir" && env "$@" timeout 900 $(hs_mpiexec "$mpi") -n "$n" "$exe" --config=case.mcf \
     > run.log 2>&1) || return 1
  sed -n 's/.*timestepping=\([0-9]*\)ms.*/\1/p' "$dir/run.log" | tail -1
}

monc_median() { sort -n | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}'; }

# --bench N: communication time per timestep, the MONC study's measure (Brown et al., CPE 2019,
# Figs. 6-7), taken with the exclusive exchange timer (tools/real-code/xtimer.c, docs/real-codes.md
# "The --bench instrument") on the three routines of halo_communication_mod that MONC's
# components call; the callbacks, copies and local copies they run are inside them.
monc_xt_spec="initiate_nonblocking_halo_swap __halo_communication_mod_MOD_initiate_nonblocking_halo_swap
complete_nonblocking_halo_swap __halo_communication_mod_MOD_complete_nonblocking_halo_swap
blocking_halo_swap __halo_communication_mod_MOD_blocking_halo_swap"
monc_bench_steps=${HS_MONC_BENCH_STEPS:-10}

# monc_relink DIR MPI HSPREFIX|"" [LINK]: fcm make again in DIR with the link options LINK
# (the bench instrument) or without; fcm's incremental make reruns only the link.
monc_relink() {
  local dir=$1
  monc_site "$2" "$3" "$dir/fcm-make/hs-site.cfg"
  [ -z "${4:-}" ] || echo "build.prop{fc.flags-ld} = $4" >>"$dir/fcm-make/hs-site.cfg"
  (cd "$dir" && LD_RUN_PATH="${3:+$3/lib}" "$(monc_fcm)" make -j 2 -f fcm-make/hs-site.cfg \
     >relink.log 2>&1) || { echo "monc: relinking in $dir failed ($dir/relink.log)" >&2; return 1; }
}

# monc_bench_run EXE DIR RANKS MPI [ENV...]: the bench case in DIR: the stratus case with 16 x 16
# columns per rank (the study's weak-scaling local size; MPI_Dims_create's layout, as MONC's
# two-dimensional decomposition), monc_bench_steps timesteps, no checkpoint. Prints the
# timestepping ms.
monc_bench_run() {
  local exe=$1 dir=$2 n=$3 mpi=$4 px=1 py
  shift 4
  while [ $(((px + 1) * (px + 1))) -le "$n" ]; do px=$((px + 1)); done
  while [ $((n % px)) -ne 0 ]; do px=$((px - 1)); done
  py=$((n / px)) # MPI_Dims_create: y (its first dimension) gets the larger count
  rm -rf "$dir"
  mkdir -p "$dir"
  sed -e "s/^x_size=.*/x_size=$((16 * px))/; s/^y_size=.*/y_size=$((16 * py))/" \
      -e 's/^termination_time=.*/termination_time=1.0e9/' \
      -e 's/^iobridge_enabled=.*/iobridge_enabled=.false./' \
      -e 's/^socrates_couple_enabled=.*/socrates_couple_enabled=.false./' \
      -e 's/^walltime_limit=.*/walltime_limit=00:20:00/' \
      -e "s|^global_configuration=.*|global_configuration=$HS_CHECK_WORK/own/global_config|" \
      "$HS_CHECK_SRC/testcases/stratus/mbl_sc.mcf" >"$dir/case.mcf"
  printf 'enable_io_server=.false.\nl_rand_bit_reproducible=.false.\nnn_timesteps=%s\ncheckpointer_enabled=.false.\n' \
    "$monc_bench_steps" >>"$dir/case.mcf"
  (cd "$dir" && env "$@" timeout 900 $(hs_mpiexec "$mpi") -n "$n" "$exe" --config=case.mcf \
     >run.log 2>&1) || return 1
  sed -n 's/.*timestepping=\([0-9]*\)ms.*/\1/p' "$dir/run.log" | tail -1
}

# MONC's own module and the drop-in on each transport of the study (p2p, the three RMA modes)
# and the on-node ones, HS_BENCH_RANKS (default 2 and 4), --bench N rounds interleaved; then
# the instrument's tables (exclusive exchange time per timestep; / own = against MONC's own
# P2P module, as the study reports its RMA modes) and the bytes the drop-in moves.
monc_bench() {
  local mpi=$1 w=$HS_CHECK_WORK v n r out t ms flags
  local ts=${HS_CHECK_TRANSPORTS:-p2p rma-fence rma-pscw rma-passive shm cma}
  local usable own_stops=""
  usable=" $(echo $(hs_transports "$mpi")) "
  echo
  echo "Timing ($mpi, stratus with 16x16 columns per rank, $monc_bench_steps timesteps," \
       "$HS_CHECK_BENCH interleaved rounds, the exclusive exchange timer in both builds)"
  flags=$(xt_instrument "$mpi" "$w/own/build/o" "$monc_xt_spec") &&
    monc_relink "$w/own" "$mpi" "" "$flags" || return 1
  flags=$(xt_instrument "$mpi" "$w/dropin/build/o" "$monc_xt_spec" "$w/hs-$mpi") &&
    monc_relink "$w/dropin" "$mpi" "$w/hs-$mpi" "$flags" || return 1
  xt_same_labels "$w/own/build/o" "$w/dropin/build/o" || return 1
  rm -rf "$w/xt" "$w/bench"
  for n in ${HS_BENCH_RANKS:-2 4}; do
    for r in $(seq "$HS_CHECK_BENCH") bytes; do
      for v in own $ts; do
        [ "$v" = own ] || [[ $usable == *" $v "* ]] || continue
        [[ " $own_stops " != *" $n-$v "* ]] || continue
        local exe=$w/dropin/build/bin/monc_driver.exe env=(HALOSWAP_TRANSPORT="$v")
        [ "$v" = own ] && exe=$w/own/build/bin/monc_driver.exe env=()
        out=$w/xt/$n/$v/r$r
        t=(HS_XTIMER_DIR="$out")
        if [ "$r" = bytes ]; then
          [ "$v" = p2p ] || continue
          out=$w/xt/$n/bytes
          t=(HS_XTIMER_DIR="$out" HS_XTIMER_BYTES=1)
        fi
        mkdir -p "$out"
        printf 'load %s\n' "$(cut -d' ' -f1 /proc/loadavg)" >"$out/meta"
        if ms=$(monc_bench_run "$exe" "$w/bench/$n-$v" "$n" "$mpi" "${env[@]}" "${t[@]}"); then
          printf 'steps %s\ncode %s\ncodewhat %s\n' "$monc_bench_steps" \
            "$(awk -v m="$ms" -v s="$monc_bench_steps" 'BEGIN { print m / s }')" \
            "MONC's own 'timestepping' ms per step (whole steps)" >>"$out/meta"
        else
          rm -rf "$out"
          if [ "$v" = own ]; then
            own_stops="$own_stops $n-own" # it stops in every round: once is enough
            hs_progress "monc bench: MONC's own module stops at $n ranks ($(grep -m1 -i 'error' \
              "$w/bench/$n-$v/run.log" || true)): no own row at $n ranks"
          else
            echo "check-real-code: bench run failed ($v, $n ranks; $w/bench/$n-$v/run.log)" >&2
          fi
        fi
      done
    done
  done
  xt_table "$w/xt"
  monc_relink "$w/own" "$mpi" "" && monc_relink "$w/dropin" "$mpi" "$w/hs-$mpi"
}

monc_check() {
  local w=$HS_CHECK_WORK
  mkdir -p "$w"
  local bitdiff; bitdiff=$(hs_nc_bitdiff)
  for mpi in $HS_CHECK_MPIS; do
    if [ "$mpi" != openmpi ]; then
      hs_table_row "$monc_label" - - "$mpi" skipped \
        "MONC's checkpoint needs a parallel NetCDF; Debian's (libnetcdf-mpi) is Open MPI's"
      continue
    fi
    hs_install "$mpi" "$w/hs-$mpi"
    local v t0
    for v in own dropin; do
      t0=$(date +%s.%N)
      hs_progress "monc $v ($mpi): building in $w/$v"
      monc_build "$w/$v" "$mpi" "$([ $v = own ] || echo "$w/hs-$mpi")"
      hs_progress "monc $v ($mpi): built in $(hs_since "$t0") s"
      hs_kept "$v ($mpi)" "$w/$v (rebuild: sh $w/$v/hs-rebuild.sh)"
    done
    [ "$HS_CHECK_MODE" = build ] && continue
    if [ "$HS_CHECK_BENCH_ONLY" = 1 ]; then
      monc_bench "$mpi" || HS_CHECK_FAILS=$((HS_CHECK_FAILS + 1))
      continue
    fi
    for n in ${HS_CHECK_RANKS:-4}; do
      local reps=$((HS_CHECK_BENCH > 0 ? HS_CHECK_BENCH : 1)) t_own=()
      for r in $(seq "$reps"); do
        t_own+=("$(monc_run "$w/own/build/bin/monc_driver.exe" "$w/run-own-$n" "$n" "$mpi")") ||
          { t_own=(); break; }
      done
      if [ ${#t_own[@]} -eq 0 ]; then
        local ran=no
        monc_run "$w/dropin/build/bin/monc_driver.exe" "$w/run-p2p-$n" "$n" "$mpi" >/dev/null && ran=yes
        hs_table_row "$monc_label" "$n" "(MONC's own)" "$mpi" skipped \
          "nothing to compare with: MONC's own module stops ($(grep -m1 -i 'error' "$w/run-own-$n/run.log" || true)); the drop-in (p2p) runs to the end: $ran"
        continue
      fi
      local own_ms; own_ms=$(printf '%s\n' "${t_own[@]}" | monc_median)
      for t in $(hs_transports "$mpi"); do
        local env=(HALOSWAP_TRANSPORT="$t") ms=()
        [ "$t" = shmem ] && env+=(HALOSWAP_SHMEM=1 OMPI_MCA_osc=^rdma)
        t0=$(date +%s.%N)
        for r in $(seq "$reps"); do
          ms+=("$(monc_run "$w/dropin/build/bin/monc_driver.exe" "$w/run-$t-$n" "$n" "$mpi" "${env[@]}")") ||
            { ms=(); break; }
        done
        if [ ${#ms[@]} -eq 0 ]; then
          hs_table_row "$monc_label" "$n" "$t" "$mpi" FAILED "$(tail -3 "$w/run-$t-$n/run.log" | tr '\n' ' ')"
          continue
        fi
        HS_RUN_SECS=$(hs_since "$t0")
        local cmp; cmp=$({ "$bitdiff" "$w/run-own-$n/dump.nc" "$w/run-$t-$n/dump.nc" || true; } | head -3 | tr '\n' ' ')
        local detail="checkpoint: $cmp"
        [ "$HS_CHECK_BENCH" -gt 0 ] && detail="$detail; timestepping ms median of $reps: own $own_ms, drop-in $(printf '%s\n' "${ms[@]}" | monc_median)"
        case $cmp in
          identical*) hs_table_row "$monc_label" "$n" "$t" "$mpi" identical "$detail" ;;
          *) hs_table_row "$monc_label" "$n" "$t" "$mpi" DIFFERS "$detail" ;;
        esac
      done
    done
    if [ "$HS_CHECK_BENCH" -gt 0 ]; then monc_bench "$mpi" || HS_CHECK_FAILS=$((HS_CHECK_FAILS + 1)); fi
  done
  [ "$HS_CHECK_KEEP" = 1 ] || { rm -rf "$w/own" "$w/dropin"; HS_CHECK_BUILDS=""; }
  [ "$HS_CHECK_FAILS" -eq 0 ]
}

monc_check
