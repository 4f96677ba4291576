# Lare3d (Warwick-Plasma/Lare3d with its SDF submodule): sourced by tools/check-real-code, never
# run alone. Per MPI library: two copies of the user's checkout, one with Lare3d's own
# src/core/mpiboundary.f90, one with haloswap's drop-in; haloswap's small case
# (tools/real-code/lare3d/control.f90 and initial_conditions.f90, our files) written into both;
# both built with Lare3d's Makefile; the case run walled and periodic at every rank count, the
# own module once and the drop-in with every transport; every block of every SDF dump compared
# bit for bit (tools/real-code/sdf_compare.py). --bench N: N interleaved rounds of each variant
# at 2 and 4 ranks, both builds relinked with the exclusive exchange timer (xtimer.c) on the five
# public routines of mpiboundary (called from boundary.f90), and Lare3d's wall time per run.
# shellcheck source=sdf.sh
. "$HS_CHECK_ROOT/tools/real-code/sdf.sh"
l3_case=$HS_CHECK_ROOT/tools/real-code/lare3d
sdf_ranks="1 2 4 8"
l3_n=${HS_LARE3D_N:-32}
l3_steps=${HS_LARE3D_STEPS:-40}
for f in src/core/mpiboundary.f90 SDF/FORTRAN/Makefile Makefile; do
  if [ ! -f "$HS_CHECK_SRC/$f" ]; then
    echo "lare3d: $HS_CHECK_SRC/$f missing (a Lare3d checkout with its SDF submodule:" \
         "git submodule update --init --recursive)" >&2
    exit 2
  fi
done

# l3_build DIR MPI [PREFIX [LINK]]: Lare3d's Makefile; with PREFIX, the drop-in and haloswap
# from it; with LINK (link options: the bench instrument), bin/lare3d relinked with them
# (always relinked: a reused build drops the instrument).
l3_build() {
  local dir=$1 fc="mpif90.$2 ${4:-}" prefix=${3:-}
  local args=(COMPILER=gfortran "MPIF90=$fc") log=build.log
  rm -f "$dir/bin/lare3d"
  if [ -n "${4:-}" ]; then
    log=relink.log
  else
    cp -p "$l3_case/control.f90" "$l3_case/initial_conditions.f90" "$dir/src/"
    [ -z "$prefix" ] ||
      cp -p "$prefix/share/haloswap/lare3d/mpiboundary.f90" "$dir/src/core/mpiboundary.f90"
  fi
  if [ -n "$prefix" ]; then
    args=(COMPILER=gfortran "MPIF90=$fc -I$prefix/include"
          "LDFLAGS=-O3 -LSDF/FORTRAN/lib -lsdf $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig \
            pkg-config --libs --static haloswap-fortran)")
  fi
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
    env HS_LARE3D_N="$l3_n" HS_LARE3D_STEPS="$l3_steps" HS_LARE3D_BC="$bc" \
      $(sdf_launch_env "$mpi") "$@" $(hs_mpiexec "$mpi") -n "$n" bin/lare3d >run.log 2>&1)
  rc=$?
  awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN {print a - b}' >"$dir/wall"
  return $rc
}
l3_label() { echo "${l3_n}^3 ${l3_steps} steps $([ "$1" = user ] && echo walled || echo periodic)"; }
l3_seconds() { cat "$1/wall"; }

l3_spec="bfield_mpi __mpiboundary_MOD_bfield_mpi
energy_mpi __mpiboundary_MOD_energy_mpi
density_mpi __mpiboundary_MOD_density_mpi
velocity_mpi __mpiboundary_MOD_velocity_mpi
remap_v_mpi __mpiboundary_MOD_remap_v_mpi"
sdf_check l3_build l3_run Data l3_label "user periodic" user l3_seconds "$l3_spec" "$l3_steps" \
  "Lare3d's wall time per run, s"
