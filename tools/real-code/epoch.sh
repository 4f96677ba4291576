# EPOCH (Warwick-Plasma/epoch with its SDF submodule; epoch3d): sourced by tools/check-real-code,
# never run alone. Per MPI library: two copies of the user's checkout, one built by EPOCH's
# Makefile as it is, one with haloswap's drop-in (the same Makefile and haloswap's make fragment
# share/haloswap/epoch/haloswap.mk, which leaves the checkout's files as they are); haloswap's
# small deck (tools/real-code/epoch/input.deck.in, ours) run periodic and with conducting
# walls at every rank count, the own routines once and the drop-in with every transport; every
# block of every SDF dump compared bit for bit but EPOCH's wall-clock block (elapsed_time).
# --bench N: N interleaved rounds of each variant at 2 and 4 ranks, both builds relinked with
# the exclusive exchange timer (xtimer.c) on the routines of EPOCH's boundary module that other
# files call for field halos and current sums (ep_spec), and EPOCH's own "runtime of core".
# HS_EPOCH_DEFINE (default empty: the triangle shape, ng = 5) is passed as EPOCH's DEFINE.
# HS_EPOCH_DENSITY (default dens: uniform) replaces the species' number_density, e.g.
# 'if(z lt 4.6875e4, 0, dens)' (no particles in the lowest quarter in z): EPOCH's pre-load
# balance then moves the split, and load balancing's exchanges (do_field_mpi_with_lengths) run.
# shellcheck source=sdf.sh
. "$HS_CHECK_ROOT/tools/real-code/sdf.sh"
ep_deck=$HS_CHECK_ROOT/tools/real-code/epoch/input.deck.in
sdf_ranks="1 2 4 8"
ep_n=${HS_EPOCH_N:-24}
ep_steps=${HS_EPOCH_STEPS:-40}
ep_define=${HS_EPOCH_DEFINE:-}
ep_density=${HS_EPOCH_DENSITY:-dens}
for f in epoch3d/src/boundary.F90 epoch3d/Makefile SDF/FORTRAN/Makefile; do
  if [ ! -f "$HS_CHECK_SRC/$f" ]; then
    echo "epoch: $HS_CHECK_SRC/$f missing (an EPOCH checkout with its SDF submodule:" \
         "git submodule update --init --recursive)" >&2
    exit 2
  fi
done

# ep_build DIR MPI [PREFIX [LINK]]: EPOCH's Makefile in DIR/epoch3d; with PREFIX, and
# haloswap.mk; with LINK (link options: the bench instrument), bin/epoch3d relinked with them
# (always relinked: a reused build drops the instrument).
ep_build() {
  local dir=$1/epoch3d fc="mpif90.$2 ${4:-}" prefix=${3:-} log=build.log
  local args=(COMPILER=gfortran "MPIF90=$fc" "DEFINE=$ep_define")
  rm -f "$dir/bin/epoch3d"
  [ -z "${4:-}" ] || log=relink.log
  if [ -n "$prefix" ]; then
    # EPOCH's Makefile rebuilds itself through a sub-make after writing src/COMMIT, which
    # would read EPOCH's Makefile alone: write it first and build in this make.
    (cd "$dir" && sh src/gen_commit_string.sh)
    args+=(DONE_COMMIT=1 -f Makefile -f "$prefix/share/haloswap/epoch/haloswap.mk"
           "HALOSWAP=$prefix")
  fi
  if ! (cd "$dir" && make -j2 "${args[@]}" >"$log" 2>&1); then
    echo "epoch: build failed in $dir (see $dir/$log)" >&2
    return 1
  fi
}

# ep_run DIR MPI RANKS BC [VAR=value...]: one run of our deck into a fresh DIR/epoch3d/Data,
# its output in DIR/run.log.
ep_run() {
  local dir=$1 mpi=$2 n=$3 bc=$4
  shift 4
  rm -rf "$dir/epoch3d/Data" && mkdir "$dir/epoch3d/Data" &&
    sed -e "s/@N@/$ep_n/g; s/@STEPS@/$ep_steps/; s/@BC@/$bc/g; s/@P[XYZ]@/0/g" \
      -e "s|^  number_density = dens\$|  number_density = $ep_density|" "$ep_deck" \
      >"$dir/epoch3d/Data/input.deck" || return 1
  # shellcheck disable=SC2046
  (cd "$dir/epoch3d" && echo Data | env $(sdf_launch_env "$mpi") "$@" $(hs_mpiexec "$mpi") \
    -n "$n" bin/epoch3d >"$dir/run.log" 2>&1) && grep -q "Final runtime of core" "$dir/run.log"
}
ep_label() { echo "${ep_n}^3 ${ep_steps} steps $([ "$1" = periodic ] && echo periodic || echo walled)"; }
ep_seconds() { sed -n 's/.*Final runtime of core = *\([0-9.eE+-]*\).*/\1/p' "$1/run.log"; }

# The routines timed: those of EPOCH's boundary module that other files call for the field
# halos (efield_bcs, bfield_bcs, bfield_final_bcs: field_bc on each component, then the wall
# conditions; field_bc itself from current smoothing and the dumps' derived fields) and the
# current and density sums (current_bcs, processor_summation_bcs). field_bc's calls inside
# boundary.F90 cannot be wrapped in EPOCH's own build (same object): their callers are timed.
ep_spec="efield_bcs __boundary_MOD_efield_bcs
bfield_bcs __boundary_MOD_bfield_bcs
bfield_final_bcs __boundary_MOD_bfield_final_bcs
current_bcs __boundary_MOD_current_bcs
processor_summation_bcs __boundary_MOD_processor_summation_bcs
field_bc __boundary_MOD_field_bc __haloswap_epoch_MOD_field_bc
do_field_mpi_with_lengths __boundary_MOD_do_field_mpi_with_lengths __haloswap_epoch_MOD_do_field_mpi_with_lengths"
sdf_check ep_build ep_run epoch3d/Data ep_label "periodic conduct" periodic ep_seconds \
  "$ep_spec" "$ep_steps" "EPOCH's runtime of core, s" --ignore elapsed_time
