# EPOCH (Warwick-Plasma/epoch with its SDF submodule; epoch3d): sourced by tools/check-real-code,
# never run alone. Per MPI library: two copies of the user's checkout, one built by EPOCH's
# Makefile as it is, one with haloswap's drop-in (the same Makefile and haloswap's make fragment
# share/haloswap/epoch/haloswap.mk, which leaves the checkout's files as they are); the case:
# haloswap's small deck (tools/real-code/epoch/input.deck.in, ours; --size, --steps and
# --layout fill its @N@, @STEPS@, @PX@ @PY@ @PZ@) run periodic and with conducting walls, or
# the user's deck (--input: a file named input.deck or *.deck, other --input files beside it
# in Data/) run as it is; at every rank count, the own routines once and the drop-in with
# every transport; every block of every SDF dump compared bit for bit but EPOCH's wall-clock
# block (elapsed_time).
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
ep_n=${HS_CHECK_SIZE:-${HS_EPOCH_N:-24}}
ep_steps=${HS_CHECK_STEPS:-${HS_EPOCH_STEPS:-40}}
ep_layout=${HS_CHECK_LAYOUT:-0 0 0}
ep_define=${HS_EPOCH_DEFINE:-}
ep_density=${HS_EPOCH_DENSITY:-dens}
[ "$HS_CHECK_LIST" = 1 ] || for f in epoch3d/src/boundary.F90 epoch3d/Makefile SDF/FORTRAN/Makefile; do
  if [ ! -f "$HS_CHECK_SRC/$f" ]; then
    echo "epoch: $HS_CHECK_SRC/$f missing (an EPOCH checkout with its SDF submodule:" \
         "git submodule update --init --recursive)" >&2
    exit 2
  fi
done
ep_cases="periodic conduct"
ep_user_deck=$(hs_input 'input.deck'; hs_input '*.deck')
if [ -n "$HS_CHECK_INPUTS" ]; then
  ep_user_deck=$(sort -u <<<"$ep_user_deck")
  [ "$(grep -c . <<<"$ep_user_deck")" = 1 ] || hs_die "--input: one deck (a file named" \
    "input.deck or NAME.deck) among the inputs; got: $(echo ${ep_user_deck:-none})"
  [ -z "$HS_CHECK_LAYOUT$HS_CHECK_SIZE$HS_CHECK_STEPS" ] || hs_die "--layout, --size, --steps" \
    "fill haloswap's deck; yours (--input) sets nprocx, nx, nsteps, ... itself"
  ep_cases=yours
fi
hs_options epoch --input --layout --size --steps
[[ $ep_n =~ ^[1-9][0-9]*$ ]] || hs_die "--size '$ep_n': cells per axis, a positive integer"
[[ $ep_steps =~ ^[1-9][0-9]*$ ]] || hs_die "--steps '$ep_steps': a positive number of steps"

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
  [ -n "${4:-}" ] || printf 'cd %q && make -j2%s\n' "$dir" "$(printf ' %q' "${args[@]}")" >"$1/hs-rebuild.sh"
  if ! (cd "$dir" && make -j2 "${args[@]}" >"$log" 2>&1); then
    echo "epoch: build failed in $dir (see $dir/$log)" >&2
    return 1
  fi
}

# ep_run DIR MPI RANKS CASE [VAR=value...]: one run of the case (periodic or conduct: our deck;
# yours: the user's) into a fresh DIR/epoch3d/Data, its output in DIR/run.log.
ep_run() {
  local dir=$1 mpi=$2 n=$3 bc=$4 f
  shift 4
  rm -rf "$dir/epoch3d/Data" && mkdir "$dir/epoch3d/Data" || return 1
  if [ "$bc" = yours ]; then
    while IFS= read -r f; do [ -z "$f" ] || cp "$f" "$dir/epoch3d/Data/"; done <<<"$HS_CHECK_INPUTS"
    [ "$(basename "$ep_user_deck")" = input.deck ] ||
      mv "$dir/epoch3d/Data/$(basename "$ep_user_deck")" "$dir/epoch3d/Data/input.deck"
  else
    read -r px py pz <<<"$ep_layout"
    sed -e "s/@N@/$ep_n/g; s/@STEPS@/$ep_steps/; s/@BC@/$bc/g" \
        -e "s/@PX@/$px/; s/@PY@/$py/; s/@PZ@/$pz/" \
        -e "s|^  number_density = dens\$|  number_density = $ep_density|" "$ep_deck" \
        >"$dir/epoch3d/Data/input.deck" ||
      return 1
  fi
  # shellcheck disable=SC2046
  (cd "$dir/epoch3d" && echo Data | env $(sdf_launch_env "$mpi") "$@" $(hs_mpiexec "$mpi") \
    -n "$n" bin/epoch3d >"$dir/run.log" 2>&1) && grep -q "Final runtime of core" "$dir/run.log"
}
ep_label() {
  case $1 in
    yours) echo "your deck $(basename "$ep_user_deck")" ;;
    *) echo "${ep_n}^3 ${ep_steps} steps $([ "$1" = periodic ] && echo periodic || echo walled)$(
         [ "$ep_layout" = "0 0 0" ] || echo " ${ep_layout// /x}")" ;;
  esac
}
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
if [ "$HS_CHECK_LIST" = 1 ]; then
  # estimates for a quiet 2-core machine (docs/epoch.md, "Check it on your own case", has
  # what was measured: a 24^3 run 0.3-0.6 s of core quiet; builds about 30 min at load 35)
  sdf_list ep_label "$ep_cases" 600 8
  hs_list_end "estimated for a quiet 2-core machine: ~600 s a build, ~8 s a 24^3 run; under load far more"
fi
[ "$HS_CHECK_LIST" = 1 ] || for f in epoch3d/src/boundary.F90 epoch3d/Makefile SDF/FORTRAN/Makefile; do
  [ -f "$HS_CHECK_SRC/$f" ] || hs_die "$HS_CHECK_SRC/$f missing (an EPOCH checkout with its" \
    "SDF/FORTRAN submodule: docs/epoch.md, \"Check it on your own case\")"
done

sdf_check ep_build ep_run epoch3d/Data ep_label "$ep_cases" "${ep_cases%% *}" ep_seconds \
  "$ep_spec" "$ep_steps" "EPOCH's runtime of core, s" --ignore elapsed_time
