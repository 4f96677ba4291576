# BRAMS (BRAMS-MODEL/brams, BRAMS 6.0): sourced by tools/check-real-code, never run alone.
# Per MPI library: a scratch copy of the user's checkout built with BRAMS's own
# src/brams/mpi/ModMessageSet.f90 and src/brams/comm/initComm.f90 ("own"), and a copy of that
# build with haloswap's drop-ins (fortran/brams/ModMessageSet.f90, initComm.f90) rebuilt over
# it ("drop-in"). Only the build fixes BRAMS
# needs here are applied to the scratch copies, each named as it is applied (docs/brams.md,
# "Build fixes"). The case needs no input data: MAKESFC writes flat surface files, then the
# model starts from a horizontally homogeneous state made from a sounding of ours
# (tools/real-code/brams/RAMSIN.in, INITIAL=1, which needs two fixes, named below). Each run
# writes IOUTPUT=3 binary output (raw float32 global fields, no header), compared bit for bit
# with the own build's at the same rank count.
br_case=$HS_CHECK_ROOT/tools/real-code/brams
br_ranks="1 2 3 4"
br_steps=${HS_CHECK_STEPS:-20}
br_size=${HS_CHECK_SIZE:-40 40 32}
hs_options brams --steps --size --input --dyncore
# --dyncore: the dynamics, leapfrog (DYNCORE_FLAG=0, the default) or rk3 (DYNCORE_FLAG=2, which
# also exchanges through ModComm: commHalo, commHaloAcou)
br_dyn=${HS_CHECK_DYNCORE:-leapfrog}
case $br_dyn in
  leapfrog) br_dyncore=0 ;;
  rk3) br_dyncore=2 ;;
  *) hs_die "--dyncore '$br_dyn': leapfrog (DYNCORE_FLAG=0) or rk3 (DYNCORE_FLAG=2)" ;;
esac
# --input: the user's own settings, in case.nml's form, in place of haloswap's case
br_nml=$(hs_input '*' | head -1)
br_nml=${br_nml:-$br_case/case.nml}
[[ $br_steps =~ ^[1-9][0-9]*$ ]] || hs_die "--steps '$br_steps': a positive number of time steps"
read -r -a br_n <<<"$br_size"
[ ${#br_n[@]} -eq 3 ] && [[ "${br_n[*]}" =~ ^[0-9]+\ [0-9]+\ [0-9]+$ ]] &&
  [ "${br_n[0]}" -ge 10 ] && [ "${br_n[1]}" -ge 10 ] && [ "${br_n[2]}" -ge 10 ] ||
  hs_die "--size '$br_size': \"NX NY NZ\", grid points per axis (10 or more each)"

br_log() { hs_progress "brams: $*"; }

# br_copy SRC DST: the checkout without git metadata and build products.
br_copy() {
  rm -rf "$2" && mkdir -p "$2"
  (cd "$1" && tar --exclude=./.git --exclude='./build/*.o' --exclude='./build/*.mod' \
    --exclude='./build/*.a' -cf - .) | tar -xf - -C "$2"
}

# br_fix DIR MPI: the build fixes (docs/brams.md, "Build fixes"), each named.
br_fix() {
  local dir=$1 mpi=$2 b=$1/build
  # Fix 1: the committed makefiles have no rules for ConvPar_GF_GEOS5.F90 and
  # Henrys_Law_cts.F90, which cup_grell3.F90 and leaf3_ocean_only.f90 use.
  if ! grep -q '^ConvPar_GF_GEOS5.o' "$b/depend_model.mk"; then
    br_log "build fix 1: rules for ConvPar_GF_GEOS5.F90 and Henrys_Law_cts.F90 added to build/depend_model.mk and build/objects_model.mk (cup_grell3.F90 uses them; the makefiles do not build them)"
    cat >>"$b/depend_model.mk" <<'EOF'

# added by haloswap's check (build fix 1)
Henrys_Law_cts.o : $(CUPARM)/Henrys_Law_cts.F90
	@cp -f $< $(<F:.f90=.f90)
	$(F_COMMAND) $(<F:.f90=.f90) $(EXTRAFLAGSF)

ConvPar_GF_GEOS5.o : $(CUPARM)/ConvPar_GF_GEOS5.F90 Henrys_Law_cts.o MAPL_Constants.o
	@cp -f $< $(<F:.f90=.f90)
	$(F_COMMAND) $(<F:.f90=.f90) $(EXTRAFLAGSF)

leaf3_ocean_only.o : ConvPar_GF_GEOS5.o
EOF
    sed -i 's/^\(\tcup_grell3.o \\\)$/\tHenrys_Law_cts.o \\\n\tConvPar_GF_GEOS5.o \\\n\1/' "$b/objects_model.mk"
    grep -q '^	ConvPar_GF_GEOS5.o' "$b/objects_model.mk" || hs_die "build fix 1: no cup_grell3.o line in $b/objects_model.mk"
  fi
  # Fix 6: with JULES off the archive leaves out mem_jules.o, which the model's other objects
  # use (the link stops on __mem_jules_MOD_jules_g)
  if grep -q '^	JULES_OBJ_MEM    =$' "$b/objects_model.mk"; then
    br_log "build fix 6: build/objects_model.mk: mem_jules.o kept in the archive with JULES off (the model's objects use module mem_jules; the link fails without it)"
    sed -i 's/^\(\tJULES_OBJ_MEM    =\)$/\1 mem_jules.o/' "$b/objects_model.mk"
  fi
  # The RRTMG longwave tables (4 MiB and over) are missing from some snapshots: a stub of ours.
  local kg=$dir/src/rrtmg/RRTMG_LW/src/rrtmg_lw_k_g.f90
  if [ ! -s "$kg" ]; then
    br_log "build fix 3: src/rrtmg/RRTMG_LW/src/rrtmg_lw_k_g.f90 missing from the checkout (RRTMG's longwave tables): haloswap's stub (tools/real-code/brams/rrtmg_lw_k_g.f90) put in its place; it stops if called, and the case runs with radiation off"
    cp "$br_case/rrtmg_lw_k_g.f90" "$kg"
  fi
  br_log "build fix 5: mpif90.$mpi and mpicc.$mpi linked as hs-bin/mpif90 and hs-bin/mpicc in the scratch copy (BRAMS's Makefile sets its loader only for a compiler named mpif90)"
  mkdir -p "$dir/hs-bin"
  ln -sf "$(command -v "mpif90.$mpi")" "$dir/hs-bin/mpif90"
  ln -sf "$(command -v "mpicc.$mpi")" "$dir/hs-bin/mpicc"
}

# br_configure DIR: BRAMS's configure (no JULES, netCDF-Fortran from the system).
br_configure() {
  local dir=$1
  br_log "build fix 2: configure --with-netcdff=/usr --with-netcdfc=/usr (the JULES sources compile even without --enable-jules and need netCDF-Fortran)"
  (cd "$dir/build" && ./configure --prefix="$dir/install" --with-fpcomp="$dir/hs-bin/mpif90" \
     --with-cpcomp="$dir/hs-bin/mpicc" --with-fcomp=gfortran --with-ccomp=gcc \
     --with-chem=RELACS_TUV --with-aer=SIMPLE --with-netcdff=/usr --with-netcdfc=/usr \
     >"$dir/configure.log" 2>&1) || { tail -20 "$dir/configure.log" >&2; return 1; }
}

# br_make DIR [MAKE ARGS...]: BRAMS's Makefile with 2 jobs. Its module dependencies are
# incomplete (build fix 4: even a serial make stops, e.g. parallel_mod.F90 uses
# jules_fields_mod without depending on it, and two jobs can read a module file while it is
# written), so make runs with -k (keeps going past a file whose modules are not ready) and is
# repeated while fewer files fail than in the pass before.
br_make() {
  local dir=$1 i=0 before=1000000 after pass
  shift
  pass=$dir/build-pass.log
  while :; do
    if (cd "$dir/build" && PATH=$dir/hs-bin:$PATH make -k -j2 "$@" >"$pass" 2>&1); then
      cat "$pass" >>"$dir/build.log"
      return 0
    fi
    cat "$pass" >>"$dir/build.log"
    after=$(grep -c '^make: \*\*\* .* Error' "$pass")
    [ "$after" -lt "$before" ] || return 1
    before=$after i=$((i + 1))
    [ "$i" -gt 1 ] || br_log "build fix 4: make stops on module files not built yet (BRAMS's makefiles miss module dependencies): make -k repeated while fewer files fail"
  done
}

# br_stamp MPI [PREFIX]: what a build depends on (the checkout's commit and changes, our
# files, the MPI library; with PREFIX haloswap's libraries and the drop-in).
br_stamp() {
  { (cd "$HS_CHECK_SRC" && git rev-parse HEAD && git status --short) 2>/dev/null || true
    echo "$1"
    declare -f br_fix br_configure br_init_fixes
    cat "$br_case/rrtmg_lw_k_g.f90" "$br_case/initial1.py"
    [ -z "${2:-}" ] || cat "$2"/lib/lib*.a "$2"/share/haloswap/brams/*
  } 2>/dev/null | sha1sum | cut -c1-16
}

# br_build_own DIR MPI: the user's checkout with the build and init fixes, BRAMS's own module.
br_build_own() {
  local dir=$1 mpi=$2 t0
  if [ -f "$dir/.hs-stamp" ] && [ "$(cat "$dir/.hs-stamp")" = "$(br_stamp "$mpi")" ] &&
     [ -x "$dir/build/brams-6.0" ]; then
    br_log "BRAMS's own module ($mpi): build reused ($dir)"
    return 0
  fi
  t0=$(date +%s.%N)
  br_log "BRAMS's own module ($mpi): copying $HS_CHECK_SRC to $dir"
  br_copy "$HS_CHECK_SRC" "$dir"
  br_fix "$dir" "$mpi"
  br_init_fixes "$dir"
  br_log "BRAMS's own module ($mpi): configure; make (log $dir/build.log; about 40 min on a loaded 2-core machine)"
  br_configure "$dir" && br_make "$dir" && [ -x "$dir/build/brams-6.0" ] ||
    { tail -30 "$dir/build.log" >&2; hs_die "BRAMS's build failed ($dir/build.log)"; }
  br_stamp "$mpi" >"$dir/.hs-stamp"
  br_log "BRAMS's own module ($mpi): built in $(hs_since "$t0") s"
  hs_kept "BRAMS's own module ($mpi)" "$dir/build/brams-6.0"
}

# br_init_fixes DIR: the two edits INITIAL=1 needs at more than one rank (initial1.py).
br_init_fixes() {
  br_log "init fix 1: model/ModOneProc.F90: the fatal stop \"initial==1 or initial==3 was not worked yet\" removed (the horizontally homogeneous start is in the source but disabled; the case starts from a sounding)"
  br_log "init fix 2: init/rhhi.f90: inithh/flds3d use the node-local extents (mzp, mxp, myp) and offsets (xm(i+i0), yt(j+j0), xt(i+i0), ym(j+j0)) instead of the global nxp, nyp and unoffset indices (at more than one rank the initial state is corrupt otherwise; at one rank nothing changes)"
  python3 "$br_case/initial1.py" "$1/src/brams" || hs_die "init fixes: $1/src/brams differs from what they expect"
}

# br_stale DIR: removes the objects of every source that defines or uses a module whose
# module file names ModMessageSet or ModComm (their types are in them), so that make rebuilds
# them over the drop-ins: BRAMS's makefiles miss some of these dependencies (build fix 4), and
# gfortran cannot read the stale module files beside the new ones.
br_stale() {
  local dir=$1 mods f n=0
  # (grep -c reads the whole file: grep -q would stop zcat early, and pipefail would then
  # drop the module)
  mods=$(cd "$dir/build" && for f in *.mod; do
           [ "$(zcat "$f" 2>/dev/null | grep -ciE "'(modmessageset|modcomm)'")" -gt 0 ] &&
             echo "${f%.mod}"
         done | paste -sd'|') || true # (the loop's status is its last file's)
  mods=${mods:-modmessageset}
  while IFS= read -r f; do
    f=$(basename "$f")
    [ -f "$dir/build/${f%.*}.o" ] || continue
    rm -f "$dir/build/${f%.*}.o"
    n=$((n + 1))
  done < <(grep -rliE "^[[:space:]]*(use[[:space:]]*(,[[:space:]]*[a-z_]+[[:space:]]*)?(::)?[[:space:]]*|module[[:space:]]+)($mods|modmessageset|modcomm)\b" \
             "$dir/src" --include='*.f90' --include='*.F90')
  br_log "drop-in: the objects of $n sources that define or use a module naming ModMessageSet or ModComm removed, for make to rebuild them (BRAMS's makefiles miss some of these dependencies)"
}

# br_build_dropin OWN DIR MPI PREFIX: the own build copied, src/brams/mpi/ModMessageSet.f90
# and src/brams/comm/initComm.f90 replaced by haloswap's, and BRAMS's make rebuilding what
# depends on them, with haloswap's Fortran modules and libraries from PREFIX.
br_build_dropin() {
  local own=$1 dir=$2 mpi=$3 prefix=$4 t0 libs
  if [ -f "$dir/.hs-stamp" ] && [ "$(cat "$dir/.hs-stamp")" = "$(br_stamp "$mpi" "$prefix")" ] &&
     [ -x "$dir/build/brams-6.0" ]; then
    br_log "haloswap's drop-in ($mpi): build reused ($dir)"
    return 0
  fi
  t0=$(date +%s.%N)
  rm -rf "$dir" && cp -a "$own" "$dir"
  sed -i "s|$own/|$dir/|g" "$dir/build/Makefile" "$dir/build/Make_utils"
  rm -f "$dir/build/brams-6.0" "$dir/.hs-stamp"
  cp "$prefix/share/haloswap/brams/ModMessageSet.f90" "$dir/src/brams/mpi/ModMessageSet.f90"
  cp "$prefix/share/haloswap/brams/initComm.f90" "$dir/src/brams/comm/initComm.f90"
  touch "$dir/src/brams/mpi/ModMessageSet.f90" "$dir/src/brams/comm/initComm.f90"
  br_stale "$dir"
  # haloswap's Fortran modules on every compile line (BRAMS compiles ModMessageSet.f90 with
  # its bare compiler command), its libraries on the link line (MPI_LIB, empty in BRAMS)
  rm -f "$dir/hs-bin/mpif90"
  printf '#!/bin/sh\n# haloswap'"'"'s Fortran modules (tools/real-code/brams.sh)\nexec %s -I%s "$@"\n' \
    "$(command -v "mpif90.$mpi")" "$prefix/include" >"$dir/hs-bin/mpif90"
  chmod +x "$dir/hs-bin/mpif90"
  libs=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --libs --static haloswap-fortran)
  printf 'cd %q && PATH=%q:$PATH make MPI_LIB=%q\n' "$dir/build" "$dir/hs-bin" "$libs" \
    >"$dir/hs-rebuild.sh"
  br_log "haloswap's drop-in ($mpi): src/brams/mpi/ModMessageSet.f90 and src/brams/comm/initComm.f90 replaced; make rebuilds what uses them (log $dir/build.log)"
  : >"$dir/build.log"
  br_make "$dir" "MPI_LIB=$libs" && [ -x "$dir/build/brams-6.0" ] ||
    { tail -30 "$dir/build.log" >&2; hs_die "the drop-in build failed ($dir/build.log)"; }
  br_stamp "$mpi" "$prefix" >"$dir/.hs-stamp"
  br_log "haloswap's drop-in ($mpi): built in $(hs_since "$t0") s"
  hs_kept "haloswap's drop-in ($mpi)" "$dir/build/brams-6.0"
}

# br_namelists DIR RUNTYPE: RAMSIN (basic) and RAMSIN_ADVANCED of the case in DIR, from the
# user's own namelists with haloswap's settings (case.nml; ramsin.py).
br_namelists() {
  local dir=$1 rt=$2 dyn=$br_dyncore dt
  dt=$(sed -n "s/^MODEL_GRIDS DTLONG = \([0-9.]*\).*/\1/p" "$br_nml")
  python3 "$br_case/ramsin.py" "$HS_CHECK_SRC/namelists/RAMSIN_ADVANCED" "$dir/RAMSIN_ADVANCED" \
    "$br_nml" "DYNCORE_FLAG=$dyn" >/dev/null &&
  python3 "$br_case/ramsin.py" "$HS_CHECK_SRC/namelists/RAMSIN_BASIC" "$dir/RAMSIN" \
    "$br_nml" "RUNTYPE='$rt'" "TIMMAX=$(awk -v s="$br_steps" -v d="$dt" 'BEGIN { print s * d }')" \
    "FRQANL=$(awk -v s="$br_steps" -v d="$dt" 'BEGIN { print s * d }')" \
    "NNXP=${br_n[0]}" "NNYP=${br_n[1]}" "NNZP=${br_n[2]}" >/dev/null
}

# br_launch_env MPI: Open MPI: ROMIO (the IOUTPUT=3 files are written with MPI-IO, as the SDF
# codes' files: docs/real-codes.md); MPICH: the idle shim.
br_launch_env() {
  case $1 in
    openmpi) echo OMPI_MCA_io=romio321 ;;
    *) hs_run_env "$1" ;;
  esac
}

# br_run DIR EXE MPI RANKS [VAR=value...]: MAKESFC (once per DIR), then the case, in DIR;
# its IOUTPUT=3 files in DIR/dataout/ANL; log DIR/run.log; wall seconds in DIR/wall.
br_run() {
  local dir=$1 exe=$2 mpi=$3 n=$4 t0 rc
  shift 4
  mkdir -p "$dir"
  if [ ! -f "$dir/sfc.done" ]; then
    rm -rf "$dir/dataout" && mkdir -p "$dir/dataout/SFC" "$dir/dataout/ANL" "$dir/dataout/HIS"
    br_namelists "$dir" MAKESFC && mv "$dir/RAMSIN" "$dir/RAMSIN_MAKESFC" || return 1
    # shellcheck disable=SC2046
    (cd "$dir" && ulimit -s unlimited && env $(br_launch_env "$mpi") \
       $(hs_mpiexec "$mpi") -n 1 "$exe" -f RAMSIN_MAKESFC >sfc.log 2>&1) ||
      { echo "brams: MAKESFC failed (see $dir/sfc.log)" >&2; return 1; }
    touch "$dir/sfc.done"
  fi
  rm -rf "$dir/dataout/ANL" "$dir/dataout/HIS" && mkdir -p "$dir/dataout/ANL" "$dir/dataout/HIS"
  br_namelists "$dir" INITIAL || return 1
  t0=$(date +%s.%N)
  # shellcheck disable=SC2046
  (cd "$dir" && ulimit -s unlimited && env $(br_launch_env "$mpi") "$@" \
     $(hs_mpiexec "$mpi") -n "$n" "$exe" -f RAMSIN >run.log 2>&1)
  rc=$?
  hs_since "$t0" >"$dir/wall"
  [ $rc -eq 0 ] && ls "$dir"/dataout/ANL/*.bin >/dev/null 2>&1
}

# br_compare REF OUT: every IOUTPUT=3 file of REF against OUT's, byte for byte; prints
# "identical N files, B bytes" or "DIFFERS ..." (the first file and byte that differ).
br_compare() {
  local ref=$1 out=$2 f n=0 bytes=0 d
  for f in "$ref"/*.bin; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    if ! d=$(cmp "$f" "$out/$(basename "$f")" 2>&1); then
      echo "DIFFERS $(basename "$f"): ${d##*: }"
      return
    fi
    bytes=$((bytes + $(stat -c %s "$f")))
  done
  [ "$n" -gt 0 ] && echo "identical $n files, $bytes bytes" || echo "DIFFERS no output in $ref"
}

br_label() { echo "${br_n[0]}x${br_n[1]}x${br_n[2]} $br_steps steps $1"; }

if [ "$HS_CHECK_LIST" = 1 ]; then
  echo "brams check of ${HS_CHECK_SRC:-CHECKOUT (not read by --list)}, scratch directory $HS_CHECK_WORK"
  for mpi in $HS_CHECK_MPIS; do
    ts=$(echo $(hs_list_transports "$mpi"))
    # shellcheck disable=SC2086
    nt=$(hs_count $ts)
    echo "$mpi: BRAMS's own module and $nt transports: $ts"
    hs_list_build "BRAMS's own module ($mpi)" 2400
    hs_list_build "haloswap's drop-in ($mpi, rebuilds what uses ModMessageSet and ModComm)" 1200
    [ "$HS_CHECK_MODE" = build ] && continue
    hs_list_runs "$(br_label "$br_dyn")" "${HS_CHECK_RANKS:-$br_ranks}" $((nt + 1)) 20
  done
  hs_list_end "measured on a loaded 2-core machine: the own build ~40 min, a run 5-20 s"
fi

for f in src/brams/mpi/ModMessageSet.f90 src/brams/comm/initComm.f90 build/configure namelists/RAMSIN_BASIC \
         namelists/RAMSIN_ADVANCED src/brams/init/rhhi.f90; do
  [ -f "$HS_CHECK_SRC/$f" ] || hs_die "$HS_CHECK_SRC/$f missing (a BRAMS checkout, BRAMS-MODEL/brams: docs/brams.md)"
done
hs_apt brams gfortran libnetcdff-dev
for mpi in $HS_CHECK_MPIS; do
  work=$HS_CHECK_WORK/$mpi
  mkdir -p "$work"
  br_build_own "$work/own" "$mpi"
  dropin=""
  if [ -f "$HS_CHECK_ROOT/fortran/brams/ModMessageSet.f90" ]; then
    hs_install "$mpi" "$work/haloswap"
    br_build_dropin "$work/own" "$work/drop-in" "$mpi" "$work/haloswap"
    dropin=$work/drop-in/build/brams-6.0
  fi
  [ "$HS_CHECK_MODE" = build ] && continue
  # shellcheck disable=SC2046
  hs_say_env "$mpi" $(br_launch_env "$mpi")
  name=$(br_label "$br_dyn")
  for n in ${HS_CHECK_RANKS:-$br_ranks}; do
    if ! br_run "$work/runs/own-$n" "$work/own/build/brams-6.0" "$mpi" "$n"; then
      hs_table_row "$name" "$n" own "$mpi" FAILED "see $work/runs/own-$n/run.log"
      continue
    fi
    hs_progress "$name, $n ranks, BRAMS's own module, $mpi: ran (run $(cat "$work/runs/own-$n/wall") s)"
    if [ "$n" != 1 ] && [ -d "$work/runs/own-1/dataout/ANL" ]; then
      # for information, not a verdict: BRAMS's own run against its 1-rank run (the drop-in
      # is judged against BRAMS's own module at the same rank count; docs/brams.md)
      res=$(br_compare "$work/runs/own-1/dataout/ANL" "$work/runs/own-$n/dataout/ANL")
      printf '| %-32s | %5s | %-16s | %-7s | %-9s | %s\n' "$name" "$n" "own vs own 1 rank" \
        "$mpi" "(${res%% *})" "${res#* } (information only)" >>"$HS_CHECK_TABLE"
      hs_progress "$name, $n ranks, BRAMS's own module against its 1-rank run, $mpi: ${res%% *} (information only)"
    fi
    [ -n "$dropin" ] || continue
    for t in $(hs_transports "$mpi"); do
      env=(HALOSWAP_TRANSPORT="$t")
      [ "$t" != shmem ] || env+=(HALOSWAP_SHMEM=1 OMPI_MCA_osc=^rdma)
      if ! br_run "$work/runs/dropin-$n" "$dropin" "$mpi" "$n" "${env[@]}"; then
        HS_RUN_SECS=$(cat "$work/runs/dropin-$n/wall" 2>/dev/null)
        hs_table_row "$name" "$n" "$t" "$mpi" FAILED "$(grep -m1 -i 'haloswap\|error' \
          "$work/runs/dropin-$n/run.log" | cut -c1-100)"
        continue
      fi
      HS_RUN_SECS=$(cat "$work/runs/dropin-$n/wall")
      res=$(br_compare "$work/runs/own-$n/dataout/ANL" "$work/runs/dropin-$n/dataout/ANL")
      hs_table_row "$name" "$n" "$t" "$mpi" "${res%% *}" "${res#* }"
    done
    # The comparison is sensitive: one received value one ulp off (the drop-in's
    # HALOSWAP_BRAMS_ULP) must change the output. Once, at the first rank count above 1.
    if [ "$n" -gt 1 ] && [ -z "${br_ulp_done:-}" ]; then
      br_ulp_done=1
      if br_run "$work/runs/ulp-$n" "$dropin" "$mpi" "$n" HALOSWAP_TRANSPORT=p2p \
           HALOSWAP_BRAMS_ULP=AcouRecvU; then
        res=$(br_compare "$work/runs/own-$n/dataout/ANL" "$work/runs/ulp-$n/dataout/ANL")
        what=$(grep -m1 'HALOSWAP_BRAMS_ULP' "$work/runs/ulp-$n/run.log" | sed 's/.*HALOSWAP_BRAMS_ULP: //')
        if [ "${res%% *}" = DIFFERS ]; then res="sensitive ${what:-?}; output: ${res#* }"
        else res="INSENSITIVE ${what:-?}: the output did not change"
          HS_CHECK_FAILS=$((HS_CHECK_FAILS + 1))
        fi
      else
        res="FAILED see $work/runs/ulp-$n/run.log"
        HS_CHECK_FAILS=$((HS_CHECK_FAILS + 1))
      fi
      printf '| %-32s | %5s | %-16s | %-7s | %-9s | %s\n' "$name, one ulp off" "$n" p2p "$mpi" \
        "${res%% *}" "${res#* }" >>"$HS_CHECK_TABLE"
      hs_progress "$name, $n ranks, one received value one ulp off, $mpi: ${res%% *}"
    fi
  done
done
[ "$HS_CHECK_KEEP" = 1 ] || { rm -rf "$HS_CHECK_WORK"; HS_CHECK_BUILDS=""; }
exit $((HS_CHECK_FAILS > 0))
