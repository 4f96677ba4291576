# Shared by tools/real-code/<code>.sh (sourced by tools/check-real-code; never run alone).
# Each code's script defines what to build and run; these helpers build haloswap for an MPI
# library, list the transports to try, and print the one table format every code shares.

# hs_build_dir MPI: a haloswap build tree for that MPI library (this checkout's build/<mpi>,
# built with the repository's Makefile if missing). Prints its path.
hs_build_dir() {
  local mpi=$1 dir=$HS_CHECK_ROOT/build/$1
  if [ ! -x "$dir/tools/hs_info/hs_info" ]; then
    make -C "$HS_CHECK_ROOT" "build-$mpi" >&2
  fi
  echo "$dir"
}

# hs_install MPI DIR: installs haloswap built with MPI into DIR (CMake package, pkg-config
# files, Fortran modules, drop-in sources under DIR/share/haloswap/).
hs_install() {
  local bdir; bdir=$(hs_build_dir "$1")
  cmake --install "$bdir" --prefix "$2" >/dev/null
}

# hs_transports MPI: the transports to try (--transports, else every one hs_info reports usable).
hs_transports() {
  if [ -n "$HS_CHECK_TRANSPORTS" ]; then echo "$HS_CHECK_TRANSPORTS"; return; fi
  local bdir; bdir=$(hs_build_dir "$1")
  # shmem is opt-in (HALOSWAP_SHMEM=1, with Open MPI 4.1's osc ^rdma): the checks opt in.
  HALOSWAP_SHMEM=1 OMPI_MCA_osc=^rdma "$bdir/tools/hs_info/hs_info" --usable-names 2>/dev/null ||
    echo p2p
}

# hs_mpiexec MPI: the launcher command for that MPI library, oversubscription allowed (and,
# for Open MPI, running as root: the check runs where make test does).
hs_mpiexec() {
  case $1 in
    openmpi) echo "mpiexec.openmpi --oversubscribe$([ "$(id -u)" -eq 0 ] && echo " --allow-run-as-root")" ;;
    mpich) echo "mpiexec.mpich" ;;
  esac
}

# hs_nc_bitdiff: the path of nc_bitdiff (tools/real-code/nc_bitdiff.c: every variable of two
# netCDF files compared bit for bit), compiled into the scratch directory when missing or older.
hs_nc_bitdiff() {
  local src=$HS_CHECK_ROOT/tools/real-code/nc_bitdiff.c bin=$HS_CHECK_WORK/nc_bitdiff
  if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
    mkdir -p "$HS_CHECK_WORK"
    cc -O2 -o "$bin" "$src" -lnetcdf >&2 ||
      { echo "check-real-code: cannot build $src (netCDF's C headers: libnetcdf-dev)" >&2; exit 2; }
  fi
  echo "$bin"
}

# The table: one row per (case, ranks, transport, MPI). result is "identical", "DIFFERS",
# "FAILED" (nothing to compare) or "skipped"; detail says what was compared or why.
hs_table_header() {
  printf '| %-32s | %5s | %-16s | %-7s | %-9s | %s\n' case ranks transport MPI result detail
  printf '|%s|%s|%s|%s|%s|%s\n' "$(printf -- '-%.0s' {1..34})" "-------" \
    "$(printf -- '-%.0s' {1..18})" "---------" "-----------" "--------"
}
HS_CHECK_FAILS=0
hs_table_row() { # case ranks transport mpi result detail
  printf '| %-32s | %5s | %-16s | %-7s | %-9s | %s\n' "$1" "$2" "$3" "$4" "$5" "${6:-}"
  [ "$5" = identical ] || [ "$5" = skipped ] || HS_CHECK_FAILS=$((HS_CHECK_FAILS + 1))
}

# The --bench instrument (tools/real-code/xtimer.c, docs/real-codes.md "The --bench
# instrument"). xt_instrument MPI ROOT SPEC [PREFIX]: compiles the exclusive exchange timer for
# the build whose objects are under ROOT, into ROOT/xtimer/. SPEC has one line per routine,
# "label symbol [symbol...]": the first symbol the objects define is wrapped (a routine can be
# named differently in the code's own module and in the drop-in). With PREFIX (the drop-in's
# haloswap install) haloswap's completing calls are wrapped too, for the byte count. Prints
# the link options that apply it (-Wl,--wrap=... -Wl,ROOT/xtimer/xtimer.o) and lists the
# wrapped symbols in ROOT/xtimer/wrapped.
xt_instrument() {
  local mpi=$1 root=$2 spec=$3 hs=${4:-} out=$2/xtimer defs i=0 label syms s flags="" cflags=""
  rm -rf "$out" && mkdir -p "$out"
  defs=$(find "$root" -name '*.o' -exec nm --defined-only {} + 2>/dev/null |
         awk '$2 == "T" { print $3 }' | sort -u)
  : >"$out/syms.h"
  : >"$out/wrapped"
  while read -r label syms; do
    [ -n "$label" ] || continue
    for s in $syms; do
      if grep -qx -- "$s" <<<"$defs"; then
        echo "XT($i, $s, \"$label\")" >>"$out/syms.h"
        echo "$label $s" >>"$out/wrapped"
        flags="$flags -Wl,--wrap=$s"
        i=$((i + 1))
        break
      fi
    done
  done <<<"$spec"
  if [ -n "$hs" ]; then
    cflags="-DXT_HS -I$hs/include"
    for s in hs_swap hs_swap_complete hs_reverse hs_reverse_complete hs_accumulate_fill; do
      flags="$flags -Wl,--wrap=$s"
    done
  fi
  # shellcheck disable=SC2086
  mpicc."$mpi" -O2 -fPIC -c $cflags "-DXT_SYMS=\"$out/syms.h\"" \
    "$HS_CHECK_ROOT/tools/real-code/xtimer.c" -o "$out/xtimer.o" >&2 || return 1
  echo "$flags -Wl,$out/xtimer.o"
}

# xt_memcpy_bin: xtimer.c built as the memcpy timer (`BIN BYTES`: median seconds of one memcpy).
xt_memcpy_bin() {
  local bin=$HS_CHECK_WORK/xt_memcpy
  if [ ! -x "$bin" ] || [ "$HS_CHECK_ROOT/tools/real-code/xtimer.c" -nt "$bin" ]; then
    mkdir -p "$HS_CHECK_WORK"
    cc -O2 -DXT_MEMCPY_MAIN -o "$bin" "$HS_CHECK_ROOT/tools/real-code/xtimer.c" >&2 || return 1
  fi
  echo "$bin"
}

# xt_same_labels OWN_ROOT DROPIN_ROOT: fails (and says so) unless both builds wrap the same
# routines.
xt_same_labels() {
  if ! cmp -s <(cut -d' ' -f1 "$1/xtimer/wrapped") <(cut -d' ' -f1 "$2/xtimer/wrapped"); then
    echo "check-real-code: the instrument wraps different routines in the two builds:" >&2
    diff "$1/xtimer/wrapped" "$2/xtimer/wrapped" >&2
    return 1
  fi
}

# xt_table BENCH_DIR: the bench tables (tools/real-code/xtimer_table.py).
xt_table() {
  python3 "$HS_CHECK_ROOT/tools/real-code/xtimer_table.py" "$1" "$(xt_memcpy_bin)"
}
