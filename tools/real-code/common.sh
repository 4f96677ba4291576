# Shared by tools/real-code/<code>.sh (sourced by tools/check-real-code; never run alone).
# Each code's script defines what to build and run; these helpers build haloswap for an MPI
# library, list the transports to try, and print the one table format every code shares.

# hs_build_dir MPI: a haloswap build tree for that MPI library (this checkout's build/<mpi>,
# configured as `make build-<mpi>` configures it). The check builds only what it uses or
# installs (the libraries, hs_info, MPICH's idle-yield shim, the parcel-cluster app; `make
# build-<mpi>` adds the tests), and brings it up to date on every run (a checkout updated
# since the last check is rebuilt, not used stale). Prints its path.
HS_BUILD_TARGETS="haloswap haloswap_ra haloswap_f haloswap_ra_f hs_info hs_idle_yield parcel-cluster"
hs_build_dir() {
  local mpi=$1 dir=$HS_CHECK_ROOT/build/$1 log=$HS_CHECK_ROOT/build/$1.log t0 targets
  # once per check run ($$ is the check's shell, also inside $(...))
  if [ "$(cat "$dir/.hs-check-built" 2>/dev/null)" = "$$ $HS_CHECK_T0" ]; then echo "$dir"; return; fi
  t0=$(date +%s.%N)
  hs_progress "haloswap ($mpi): bringing its libraries and hs_info up to date in $dir (log $log)"
  mkdir -p "$HS_CHECK_ROOT/build"
  # the targets this configuration has (the Fortran ones only with Fortran)
  { make -C "$HS_CHECK_ROOT" "build/$mpi/CMakeCache.txt" &&
    targets=$(cmake --build "$dir" --target help | sed -n 's/^\.\.\. \([a-z_-]*\).*/\1/p' |
              grep -xF "$(tr ' ' '\n' <<<"$HS_BUILD_TARGETS")") &&
    # shellcheck disable=SC2086
    cmake --build "$dir" -j 2 --target $targets; } >"$log" 2>&1 || {
    tail -20 "$log" >&2; hs_die "building haloswap for $mpi failed (log $log)"; }
  echo "$$ $HS_CHECK_T0" > "$dir/.hs-check-built"
  hs_progress "haloswap ($mpi): up to date in $(hs_since "$t0") s"
  echo "$dir"
}

# hs_install MPI DIR: installs haloswap built with MPI into DIR (CMake package, pkg-config
# files, Fortran modules, drop-in sources under DIR/share/haloswap/).
hs_install() {
  local bdir; bdir=$(hs_build_dir "$1")
  cmake --install "$bdir" --prefix "$2" >/dev/null
  # a kept work directory may hold files an older build installed (a static libhaloswap.a, its
  # CMake targets) that a consumer would still find and link: only this install's files stay
  # (unchanged files keep their times, so kept builds over them are not remade)
  local f prefix; prefix=$(cd "$2" && pwd -P)
  find "$prefix" -type f -o -type l | while read -r f; do
    grep -qxF "$f" "$bdir/install_manifest.txt" || rm -f "$f"
  done
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

# hs_nc_bitdiff: the path of nc_bitdiff (tools/real-code/nc_bitdiff.c: the root-group variables of two
# netCDF files compared bit for bit), compiled into the scratch directory when missing or older.
hs_nc_bitdiff() {
  local src=$HS_CHECK_ROOT/tools/real-code/nc_bitdiff.c bin=$HS_CHECK_WORK/nc_bitdiff
  if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
    mkdir -p "$HS_CHECK_WORK"
    cc -O2 -Wall -o "$bin" "$src" -lnetcdf -lm >&2 ||
      { echo "check-real-code: cannot build $src (netCDF's C headers: libnetcdf-dev)" >&2; exit 2; }
  fi
  echo "$bin"
}

# hs_options CODE OPTION...: stops with a message when an option the code's check does not
# take was given (OPTION: --input --layout --size --steps --time --dyncore --sensitivity
# --tests-only --case-only).
hs_options() {
  local c=$1 o var
  shift
  for o in input:HS_CHECK_INPUTS layout:HS_CHECK_LAYOUT size:HS_CHECK_SIZE steps:HS_CHECK_STEPS \
           time:HS_CHECK_TIME dyncore:HS_CHECK_DYNCORE sensitivity:HS_CHECK_SENSITIVITY; do
    var=${o#*:}
    [ -z "${!var}" ] || [[ " $* " == *" --${o%%:*} "* ]] ||
      hs_die "--${o%%:*} '${!var}': the $c check has no such setting (it takes: $*; docs/real-codes.md)"
  done
  case $HS_CHECK_MODE in
    tests) [[ " $* " == *" --tests-only "* ]] ||
      hs_die "--tests-only: the $c check runs no unit tests of $c, only its case" ;;
    case) [[ " $* " == *" --case-only "* ]] ||
      hs_die "--case-only: the $c check runs no unit tests of $c: its case is all it runs" ;;
  esac
}
hs_die() { echo "check-real-code $HS_CHECK_CODE: $*" >&2; exit 2; }

# hs_packages PACKAGE...: the Debian packages a code's build needs beyond haloswap's: named by
# --list (the docs' apt-get line must match, tests/docs/check_real_code.py), else hs_apt.
hs_packages() {
  if [ "$HS_CHECK_LIST" = 1 ]; then
    echo "Debian packages (besides haloswap's; installed when missing, as root): $*"
  else
    hs_apt "$HS_CHECK_CODE" "$@"
  fi
}

# hs_input PATTERN: the --input files whose name matches the shell PATTERN (one a line).
hs_input() {
  local f
  while IFS= read -r f; do
    [ -n "$f" ] || continue
    # shellcheck disable=SC2254
    case $(basename "$f") in $1) echo "$f" ;; esac
  done <<<"$HS_CHECK_INPUTS"
}

# hs_apt CODE PACKAGE...: the Debian packages a code's build needs; those not installed are
# installed (as root: apt-get update, then apt-get install), else named. Without dpkg (not
# Debian) nothing is checked: the docs name the packages.
hs_apt() {
  local c=$1 p missing=()
  shift
  command -v dpkg-query >/dev/null || return 0
  for p in "$@"; do
    dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    hs_progress "$c: installing ${missing[*]} (apt-get update; apt-get install -y)"
    apt-get update >&2 && apt-get install -y "${missing[@]}" >&2 && return 0
  fi
  hs_die "missing packages: ${missing[*]} (as root: apt-get update && apt-get install ${missing[*]})"
}

# Progress: one line per build and run on stderr, with the time since the check started.
HS_CHECK_T0=$(date +%s)
hs_progress() {
  local s=$(($(date +%s) - HS_CHECK_T0))
  printf '[%3d:%02d] %s\n' $((s / 60)) $((s % 60)) "$*" >&2
}
# hs_since T0: seconds since T0 (date +%s.%N), one decimal.
hs_since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }

# hs_run_env MPI: what every run of the check gets, whatever the code: MPICH's idle-yield shim
# (more ranks than cores spin otherwise, docs/install.md); printed once per MPI library.
hs_run_env() {
  case $1 in
    mpich) echo "LD_PRELOAD=$(hs_build_dir mpich)/libhs_idle_yield.so" ;;
  esac
}
# hs_say_env MPI VAR=value...: prints the environment the runs get, with why.
hs_say_env() {
  local mpi=$1 v
  shift
  for v in "$@"; do
    case $v in
      OMPI_MCA_io=*) hs_progress "$mpi runs: $v (ROMIO: Open MPI's default MPI-IO writes overlapping file views differently run to run)" ;;
      OMPI_MCA_osc=^rdma) hs_progress "$mpi runs: $v (Open MPI 4.1's OpenSHMEM crashes at exit with the rdma one-sided component; every variant alike)" ;;
      LD_PRELOAD=*libhs_idle_yield*) hs_progress "$mpi runs: $v (MPICH's waiting ranks yield the CPU: needed when ranks outnumber cores)" ;;
      *) hs_progress "$mpi runs: $v" ;;
    esac
  done
}

# The table: one row per (case, ranks, transport, MPI). result is "identical", "DIFFERS",
# "FAILED" (nothing to compare) or "skipped"; detail says what was compared or why. Rows are
# printed as progress lines as they come and as a table at the end (hs_finish).
HS_CHECK_TABLE=$(mktemp "${TMPDIR:-/tmp}/hs-check-table.XXXXXX")
hs_table_header() { :; }
HS_CHECK_FAILS=0
HS_RUN_SECS=""   # set before hs_table_row: the run's time, shown in its progress line
hs_table_row() { # case ranks transport mpi result detail
  printf '| %-32s | %5s | %-16s | %-7s | %-9s | %s\n' "$1" "$2" "$3" "$4" "$5" "${6:-}" >>"$HS_CHECK_TABLE"
  hs_progress "$1, $2 ranks, $3, $4: $5${HS_RUN_SECS:+ (run $HS_RUN_SECS s)}"
  HS_RUN_SECS=""
  [ "$5" = identical ] || [ "$5" = skipped ] || HS_CHECK_FAILS=$((HS_CHECK_FAILS + 1))
}

# hs_kept LABEL DIR: a build the check made (printed at the end when kept).
HS_CHECK_BUILDS=""
hs_kept() { HS_CHECK_BUILDS="$HS_CHECK_BUILDS  $1: $2
"; }

# hs_finish (at exit): the table, the kept builds and how to rebuild them, the time taken.
hs_finish() {
  local rc=$?
  if [ -s "$HS_CHECK_TABLE" ]; then
    echo
    printf '| %-32s | %5s | %-16s | %-7s | %-9s | %s\n' case ranks transport MPI result detail
    printf '|%s|%s|%s|%s|%s|%s\n' "$(printf -- '-%.0s' {1..34})" "-------" \
      "$(printf -- '-%.0s' {1..18})" "---------" "-----------" "--------"
    cat "$HS_CHECK_TABLE"
  fi
  rm -f "$HS_CHECK_TABLE"
  if [ -n "$HS_CHECK_BUILDS" ] && [ -d "$HS_CHECK_WORK" ]; then
    echo
    echo "Builds kept in $HS_CHECK_WORK:"
    printf '%s' "$HS_CHECK_BUILDS"
    echo "Rebuilt (an unchanged build is reused) by the same command with --build-only --keep --work $HS_CHECK_WORK"
  fi
  hs_progress "done: exit status $rc"
}

# --list: hs_list_build LABEL SECONDS, hs_list_runs CASE "RANKS" RUNS_PER_RANK_COUNT SECONDS
# (per run), hs_list_end NOTE: the matrix and its estimated time; HS_LIST_* are the totals.
HS_LIST_BUILDS=0 HS_LIST_RUNS=0 HS_LIST_SECS=0
hs_list_build() {
  printf '  build  %-44s ~%4d s\n' "$1" "$2"
  HS_LIST_BUILDS=$((HS_LIST_BUILDS + 1)) HS_LIST_SECS=$((HS_LIST_SECS + $2))
}
# hs_list_haloswap MPI: haloswap's own build for MPI (hs_build_dir; the check skips it when an
# earlier check built build/MPI: --list counts it either way).
hs_list_haloswap() {
  hs_list_build "haloswap's libraries ($1, unless built)" 60
}
hs_list_runs() {
  local k=0 n
  for n in $2; do k=$((k + 1)); done
  [ "$k" -gt 0 ] && [ "$3" -gt 0 ] || return 0   # nothing of this kind runs
  printf '  run    %-28s ranks %-9s %4d runs x ~%3d s\n' "$1" "$2" $((k * $3)) "$4"
  HS_LIST_RUNS=$((HS_LIST_RUNS + k * $3)) HS_LIST_SECS=$((HS_LIST_SECS + k * $3 * $4))
}
hs_list_end() {
  printf 'total: %d builds, %d runs, about %d min (%s)\n' "$HS_LIST_BUILDS" "$HS_LIST_RUNS" \
    $(((HS_LIST_SECS + 59) / 60)) "$1"
  exit 0
}
# hs_list_transports MPI: the transports --list counts (those of an existing haloswap build,
# without building one).
hs_list_transports() {
  if [ -n "$HS_CHECK_TRANSPORTS" ]; then echo "$HS_CHECK_TRANSPORTS"; return; fi
  local b=$HS_CHECK_ROOT/build/$1/tools/hs_info/hs_info
  if [ -x "$b" ]; then
    HALOSWAP_SHMEM=1 OMPI_MCA_osc=^rdma "$b" --usable-names 2>/dev/null && return
  fi
  echo "p2p rma-fence rma-pscw rma-passive shm nbr cma auto"
}
hs_count() { echo $#; }
# hs_list_mpi MPI SECONDS OWN [OWN_BUILD]: --list's lines for one MPI library of a code with its
# own module and a drop-in: the transports counted (their number in nt, for the caller) and the
# builds, haloswap's and the code's with OWN (OWN_BUILD in the build's label) and with the
# drop-in, SECONDS each.
hs_list_mpi() {
  local ts
  ts=$(echo $(hs_list_transports "$1"))
  # shellcheck disable=SC2086
  nt=$(hs_count $ts)
  echo "$1: $3 and $nt transports: $ts"
  hs_list_haloswap "$1"
  hs_list_build "${4:-$3} ($1)" "$2"
  hs_list_build "haloswap's drop-in ($1)" "$2"
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
