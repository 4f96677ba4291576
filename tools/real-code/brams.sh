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
hs_options brams --steps --size --input --dyncore --sensitivity
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
    # (a shared build installs no lib*.a: cat's failure must not fail the stamp under pipefail)
    [ -z "${2:-}" ] || cat "$2"/lib/lib*.a "$2"/share/haloswap/brams/* || true
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
  # their module files too: a source make rebuilds before a module it uses (the missing
  # dependencies) would otherwise read the old file and write its own module unchanged, with
  # ModMessageSet's old types, which no later pass replaces ("Reading module 'chem_sources.mod'
  # ...: Expected left parenthesis"); without the file the source fails and the next pass
  # builds it (br_make)
  for f in ${mods//|/ }; do rm -f "$dir/build/$f.mod"; done
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
  # (the surface files are made for one grid: another --size makes them again)
  if [ "$(cat "$dir/sfc.done" 2>/dev/null)" != "${br_n[*]}" ]; then
    rm -rf "$dir/dataout" && mkdir -p "$dir/dataout/SFC" "$dir/dataout/ANL" "$dir/dataout/HIS"
    br_namelists "$dir" MAKESFC && mv "$dir/RAMSIN" "$dir/RAMSIN_MAKESFC" || return 1
    # shellcheck disable=SC2046
    (cd "$dir" && ulimit -s unlimited && env $(br_launch_env "$mpi") \
       $(hs_mpiexec "$mpi") -n 1 "$exe" -f RAMSIN_MAKESFC >sfc.log 2>&1) ||
      { echo "brams: MAKESFC failed (see $dir/sfc.log)" >&2; return 1; }
    echo "${br_n[*]}" >"$dir/sfc.done"
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

# --- the sensitivity run (--sensitivity SET[:FIELD]; the drop-in's HALOSWAP_BRAMS_ULP) ---
# (the RK3 dynamics runs the acoustic sets on UC, the leapfrog on UP)
br_ulp_field=UP
[ "$br_dyn" = leapfrog ] || br_ulp_field=UC
br_ulp=${HS_CHECK_SENSITIVITY:-AcouRecvU:$br_ulp_field}
[[ $br_ulp =~ ^(none|[A-Za-z][A-Za-z0-9_]*(:[A-Za-z][A-Za-z0-9_]*)?)$ ]] ||
  hs_die "--sensitivity '$br_ulp': a receive set, optionally with a field (e.g. AcouRecvU:UP), or none"

# br_diffcount REF OUT: "V B T": float32 values and bytes of REF's IOUTPUT=3 files that
# differ in OUT's, and the values compared.
br_diffcount() {
  local f v=0 b=0 t=0 d
  for f in "$1"/*.bin; do
    [ -e "$f" ] || continue
    t=$((t + $(stat -c %s "$f") / 4))
    d=$(cmp -l "$f" "$2/$(basename "$f")" 2>/dev/null |
        awk 'BEGIN { last = -1 } { b++; w = int(($1 - 1) / 4); if (w != last) { v++; last = w } } END { print v + 0, b + 0 }')
    v=$((v + ${d% *})) b=$((b + ${d#* }))
  done
  echo "$v $b $t"
}

# br_sensitivity WORK DROPIN MPI RANKS CASE: the comparison must be sensitive. The drop-in
# run with HALOSWAP_BRAMS_ULP=$br_ulp moves one received value the model reads up by one ulp
# after that set's first exchange; the output must differ from BRAMS's own (a table row:
# "sensitive" with the values that differ, else INSENSITIVE, a failure).
br_sensitivity() {
  local work=$1 dropin=$2 mpi=$3 n=$4 name=$5 res what d
  if br_run "$work/runs/ulp-$n" "$dropin" "$mpi" "$n" HALOSWAP_TRANSPORT=p2p \
       "HALOSWAP_BRAMS_ULP=$br_ulp"; then
    what=$(grep -m1 'HALOSWAP_BRAMS_ULP' "$work/runs/ulp-$n/run.log" | sed 's/.*HALOSWAP_BRAMS_ULP: //')
    read -r -a d <<<"$(br_diffcount "$work/runs/own-$n/dataout/ANL" "$work/runs/ulp-$n/dataout/ANL")"
    if [ "${d[0]}" -gt 0 ]; then
      res="sensitive ${d[0]} of ${d[2]} values differ (${d[1]} bytes); ${what:-?}"
    else
      res="INSENSITIVE ${what:-?}: the output did not change"
      HS_CHECK_FAILS=$((HS_CHECK_FAILS + 1))
    fi
  else
    res="FAILED see $work/runs/ulp-$n/run.log"
    HS_CHECK_FAILS=$((HS_CHECK_FAILS + 1))
  fi
  printf '| %-32s | %5s | %-16s | %-7s | %-9s | %s\n' "$name, one ulp off" "$n" p2p "$mpi" \
    "${res%% *}" "${res#* }" >>"$HS_CHECK_TABLE"
  hs_progress "$name, $n ranks, one received value one ulp off ($br_ulp), $mpi: ${res%% *}: ${res#* }"
}

# --- --bench N: BRAMS's exchange timed in both builds (docs/brams.md, "Timing") ---
# The routines BRAMS's other files (rtimh*.F90, raco*.f90) call to exchange ghost zones; both
# builds define them in ModMessageSet.o, so xtimer.c's --wrap sees every call.
br_spec="PostRecvSendMsgs __modmessageset_MOD_postrecvsendmsgs
WaitRecvMsgs __modmessageset_MOD_waitrecvmsgs"
br_bench_ranks=${HS_BENCH_RANKS:-2 4}
[ "$HS_CHECK_BENCH" = 0 ] || [ "$br_steps" -ge 2 ] ||
  hs_die "--steps '$br_steps' with --bench: 2 or more (the first step is not timed)"

# br_matrix_ranks: the rank counts of the bit-for-bit matrix (none with --bench-only).
br_matrix_ranks() { [ "$HS_CHECK_BENCH_ONLY" = 1 ] || echo "${HS_CHECK_RANKS:-$br_ranks}"; }

# br_bench_variants MPI RANKS: the drop-in's transports timed; with shm at an even rank count
# above 2 also shm:node_size=2 (virtual nodes of 2 ranks: the hybrid's inter-node half).
br_bench_variants() {
  local ts; ts=$(hs_transports "$1")
  echo "$ts"
  if [[ " $ts " == *" shm "* ]] && [[ " $ts " != *" shm:node_size=2 "* ]] &&
     [ "$2" -gt 2 ] && [ $(($2 % 2)) = 0 ]; then echo "shm:node_size=2"; fi
}

# br_xt_link DIR FLAGS [LIBS]: DIR's model relinked as build/brams-6.0-xt (objects and
# build/brams-6.0 unchanged) with the instrument's link options FLAGS, through BRAMS's own
# make variables: EXE (the program's name) and MPI_LIB (the link line's last word; the
# drop-in's haloswap libraries LIBS first).
br_xt_link() {
  local dir=$1 flags=$2 libs=${3:-}
  rm -f "$dir/build/brams-6.0-xt"
  if ! (cd "$dir/build" && PATH=$dir/hs-bin:$PATH make "EXE=$dir/build/brams-6.0-xt" \
          "MPI_LIB=${libs:+$libs }$flags" >"$dir/relink-xt.log" 2>&1) ||
     [ ! -x "$dir/build/brams-6.0-xt" ]; then
    tail -20 "$dir/relink-xt.log" >&2
    echo "check-real-code brams: relinking $dir with the bench instrument failed ($dir/relink-xt.log)" >&2
    return 1
  fi
}

# br_bench WORK MPI: both builds relinked with the exclusive exchange timer (xtimer.c on
# br_spec), then per rank count (br_bench_ranks) a 1-step run of BRAMS's own module counts
# the calls of set-up and the first step (the drop-in makes its plans there), which the timed
# runs skip (HS_XTIMER_SKIP); then HS_CHECK_BENCH rounds, each running BRAMS's own module and
# the drop-in with every transport once (interleaved), into WORK/xt/RANKS/VARIANT/rROUND.
# Prints the tables (xtimer_table.py). No bytes run: the drop-in links libhaloswap shared, so
# the completing calls xtimer.c would count are made inside it, out of --wrap's reach.
br_bench() {
  local work=$1 mpi=$2 n i v out rd k exe ownflags dropflags libs
  ownflags=$(xt_instrument "$mpi" "$work/own/build" "$br_spec") &&
    dropflags=$(xt_instrument "$mpi" "$work/drop-in/build" "$br_spec" "$work/haloswap") &&
    xt_same_labels "$work/own/build" "$work/drop-in/build" || return 1
  libs=$(PKG_CONFIG_PATH=$work/haloswap/lib/pkgconfig pkg-config --libs --static haloswap-fortran)
  br_log "bench: both builds relinked in the scratch copy as build/brams-6.0-xt through BRAMS's make variables EXE (the program) and MPI_LIB (the link line's last word): own: make EXE=$work/own/build/brams-6.0-xt MPI_LIB='$ownflags'; drop-in: make EXE=$work/drop-in/build/brams-6.0-xt MPI_LIB='<haloswap's libraries> $dropflags' (xtimer.c wraps $(cut -d' ' -f2 "$work/own/build/xtimer/wrapped" | paste -sd' '))"
  br_xt_link "$work/own" "$ownflags" && br_xt_link "$work/drop-in" "$dropflags" "$libs" || return 1
  rm -rf "$work/xt"
  for n in $br_bench_ranks; do
    rd=$work/runs/bench-$n
    rm -rf "$rd/cal" && mkdir -p "$rd/cal"
    if ! br_steps=1 br_run "$rd" "$work/own/build/brams-6.0-xt" "$mpi" "$n" \
         "HS_XTIMER_DIR=$rd/cal"; then
      echo "check-real-code brams: the bench's 1-step run failed ($rd/run.log)" >&2
      return 1
    fi
    k=$(cat "$rd"/cal/rank.* | awk '$1 != "skipped" && $1 != "bytes" { print $2 }' | sort -n | head -1)
    br_log "bench, $n ranks: set-up and the first step make ${k:-0} calls of each routine; the timed runs skip them (HS_XTIMER_SKIP) and time $((br_steps - 1)) steps"
    for i in $(seq "$HS_CHECK_BENCH"); do
      for v in own $(br_bench_variants "$mpi" "$n"); do
        out=$work/xt/$n/$v/r$i
        mkdir -p "$out"
        printf 'load %s\n' "$(cut -d' ' -f1 /proc/loadavg)" >"$out/meta"
        if [ "$v" = own ]; then exe=$work/own/build/brams-6.0-xt; set --
        else
          exe=$work/drop-in/build/brams-6.0-xt
          set -- "HALOSWAP_TRANSPORT=$v"
          [ "$v" != shmem ] || set -- "$@" HALOSWAP_SHMEM=1 OMPI_MCA_osc=^rdma
        fi
        if br_run "$rd" "$exe" "$mpi" "$n" "HS_XTIMER_DIR=$out" "HS_XTIMER_SKIP=${k:-0}" "$@"; then
          printf 'steps %s\ncode %s\ncodewhat %s\n' $((br_steps - 1)) "$(cat "$rd/wall")" \
            "BRAMS's wall time per run (all steps, set-up included), s" >>"$out/meta"
          hs_progress "bench round $i, $n ranks, $v, $mpi: ran ($(cat "$rd/wall") s)"
        else
          echo "check-real-code brams: bench run failed ($v, $n ranks; $rd/run.log)" >&2
          rm -rf "$out"
        fi
      done
    done
  done
  xt_table "$work/xt"
}

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
    hs_list_runs "$(br_label "$br_dyn")" "$(br_matrix_ranks)" $((nt + 1)) 20
    [ "$HS_CHECK_BENCH" -eq 0 ] ||
      hs_list_runs "bench ($HS_CHECK_BENCH rounds)" "$br_bench_ranks" \
        $(((nt + 2) * HS_CHECK_BENCH + 1)) 20
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
  for n in $(br_matrix_ranks); do
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
    # the sensitivity run, once, at the first rank count above 1 (br_sensitivity)
    if [ "$n" -gt 1 ] && [ -z "${br_ulp_done:-}" ] && [ "$br_ulp" != none ]; then
      br_ulp_done=1
      br_sensitivity "$work" "$dropin" "$mpi" "$n" "$name"
    fi
  done
  if [ "$HS_CHECK_BENCH" -gt 0 ] && [ -n "$dropin" ]; then
    echo
    echo "Timing ($mpi, $(br_label "$br_dyn"), $HS_CHECK_BENCH interleaved rounds, the exclusive"
    echo "exchange timer in both builds; BRAMS's own measure: its wall time per run)"
    br_bench "$work" "$mpi" || HS_CHECK_FAILS=$((HS_CHECK_FAILS + 1))
  fi
done
[ "$HS_CHECK_KEEP" = 1 ] || { rm -rf "$HS_CHECK_WORK"; HS_CHECK_BUILDS=""; }
exit $((HS_CHECK_FAILS > 0))
