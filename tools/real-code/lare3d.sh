# Lare3d (Warwick-Plasma/Lare3d with its SDF submodule): sourced by tools/check-real-code, never
# run alone. Per MPI library: two copies of the user's checkout, one with Lare3d's own
# src/core/mpiboundary.f90, one with haloswap's drop-in; the case written into both (haloswap's
# small case, tools/real-code/lare3d/control.f90 and initial_conditions.f90, our files; then
# the user's own src/*.f90 given with --input over them); both built with Lare3d's Makefile;
# the case run at every rank count (haloswap's control.f90: walled and periodic), the own
# module once and the drop-in with every transport; every block of every SDF dump compared
# bit for bit (tools/real-code/sdf_compare.py). Haloswap's control.f90 reads the size, steps,
# boundaries and layout from HS_LARE3D_N, _STEPS, _BC, _PROCS (--size, --steps, --layout); a
# control.f90 of the user's sets its own, and is run once per rank count. --bench N: N
# interleaved rounds of each variant at 2 and 4 ranks, both builds relinked with the exclusive
# exchange timer (xtimer.c) on the five public routines of mpiboundary (called from
# boundary.f90), and Lare3d's wall time per run.
# shellcheck source=sdf.sh
. "$HS_CHECK_ROOT/tools/real-code/sdf.sh"
l3_case=$HS_CHECK_ROOT/tools/real-code/lare3d
sdf_ranks="1 2 4 8"
sdf_inputs_compiled=1   # the user's src/*.f90 are built in: a changed one rebuilds
l3_n=${HS_CHECK_SIZE:-${HS_LARE3D_N:-32}}
l3_steps=${HS_CHECK_STEPS:-${HS_LARE3D_STEPS:-40}}
l3_procs=${HS_CHECK_LAYOUT:-${HS_LARE3D_PROCS:-0 0 0}}
l3_cases="user periodic"
if [ -n "$(hs_input control.f90)" ]; then
  # the user's control.f90 sets the grid, steps, boundaries and layout itself
  l3_cases=yours
  [ -z "$HS_CHECK_LAYOUT$HS_CHECK_SIZE$HS_CHECK_STEPS" ] || hs_die "--layout, --size, --steps" \
    "set haloswap's control.f90; yours (--input) sets nprocx, nx_global, nsteps, ... itself"
  hs_options lare3d --input
else
  hs_options lare3d --input --layout --size --steps
fi
[[ $l3_n =~ ^[1-9][0-9]*$ ]] || hs_die "--size '$l3_n': cells per axis, a positive integer"
[[ $l3_steps =~ ^[1-9][0-9]*$ ]] || hs_die "--steps '$l3_steps': a positive number of steps"
# l3_build DIR MPI [PREFIX [LINK]]: Lare3d's Makefile; with PREFIX, the drop-in and haloswap
# from it; with LINK (link options: the bench instrument), bin/lare3d relinked with them
# (always relinked: a reused build drops the instrument).
l3_build() {
  local dir=$1 fc="mpif90.$2 ${4:-}" prefix=${3:-}
  local args=(COMPILER=gfortran "MPIF90=$fc") log=build.log f
  rm -f "$dir/bin/lare3d"
  if [ -n "${4:-}" ]; then
    log=relink.log
  else
    cp -p "$l3_case/control.f90" "$l3_case/initial_conditions.f90" "$dir/src/"
    while IFS= read -r f; do [ -z "$f" ] || cp -p "$f" "$dir/src/"; done <<<"$HS_CHECK_INPUTS"
    [ -z "$prefix" ] ||
      cp -p "$prefix/share/haloswap/lare3d/mpiboundary.f90" "$dir/src/core/mpiboundary.f90"
  fi
  if [ -n "$prefix" ]; then
    args=(COMPILER=gfortran "MPIF90=$fc -I$prefix/include"
          "LDFLAGS=-O3 -LSDF/FORTRAN/lib -lsdf $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig \
            pkg-config --libs --static haloswap-fortran)")
  fi
  [ -n "${4:-}" ] || printf 'cd %q && make -j2%s\n' "$dir" "$(printf ' %q' "${args[@]}")" >"$dir/hs-rebuild.sh"
  if ! (cd "$dir" && make -j2 "${args[@]}" >"$log" 2>&1); then
    echo "lare3d: build failed in $dir (see $dir/$log)" >&2
    return 1
  fi
}

# l3_run DIR MPI RANKS BC [VAR=value...]: one run into a fresh DIR/Data; its wall time in
# seconds goes to DIR/wall.
l3_run() {
  local dir=$1 mpi=$2 n=$3 bc=$4 t0 rc
  shift 4
  t0=$(date +%s.%N)
  # shellcheck disable=SC2046
  (cd "$dir" && rm -rf Data && mkdir Data &&
    env HS_LARE3D_N="$l3_n" HS_LARE3D_STEPS="$l3_steps" HS_LARE3D_BC="$bc" HS_LARE3D_PROCS="$l3_procs" \
      $(sdf_launch_env "$mpi") "$@" $(hs_mpiexec "$mpi") -n "$n" bin/lare3d >run.log 2>&1)
  rc=$?
  awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN {print a - b}' >"$dir/wall"
  return $rc
}
l3_label() {
  case $1 in
    yours) echo "your control.f90" ;;
    *) echo "${l3_n}^3 ${l3_steps} steps $([ "$1" = user ] && echo walled || echo periodic)$(
         [ "$l3_procs" = "0 0 0" ] || echo " ${l3_procs// /x}")" ;;
  esac
}
l3_seconds() { cat "$1/wall"; }

l3_spec="bfield_mpi __mpiboundary_MOD_bfield_mpi
energy_mpi __mpiboundary_MOD_energy_mpi
density_mpi __mpiboundary_MOD_density_mpi
velocity_mpi __mpiboundary_MOD_velocity_mpi
remap_v_mpi __mpiboundary_MOD_remap_v_mpi"
if [ "$HS_CHECK_LIST" = 1 ]; then
  # estimates for a quiet 2-core machine (docs/lare3d.md, "Check it on your own case", has
  # what was measured: a 32^3 run 1-2 s quiet; builds 470-1040 s at load 30-37)
  sdf_list l3_label "$l3_cases" 300 6
  hs_list_end "estimated for a quiet 2-core machine: ~300 s a build, ~6 s a 32^3 run; under load far more"
fi
for f in src/core/mpiboundary.f90 SDF/FORTRAN/Makefile Makefile; do
  [ -f "$HS_CHECK_SRC/$f" ] || hs_die "$HS_CHECK_SRC/$f missing (a Lare3d checkout with its" \
    "SDF/FORTRAN submodule: docs/lare3d.md, \"Check it on your own case\")"
done
while IFS= read -r f; do
  [ -n "$f" ] || continue
  case $f in *.f90) ;; *) hs_die "--input '$f': Lare3d's inputs are its src/*.f90 files" \
    "(control.f90, initial_conditions.f90, boundary.f90, ...)" ;; esac
  [ -f "$HS_CHECK_SRC/src/$(basename "$f")" ] || hs_die "--input '$f': Lare3d's src/ has no" \
    "$(basename "$f") to replace (it has: $(cd "$HS_CHECK_SRC/src" && echo ./*.f90 | sed 's|\./||g'))"
done <<<"$HS_CHECK_INPUTS"

sdf_check l3_build l3_run Data l3_label "$l3_cases" "${l3_cases%% *}" l3_seconds "$l3_spec" "$l3_steps" \
  "Lare3d's wall time per run, s"
