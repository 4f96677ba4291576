# EPIC-model/parcel-clustering with haloswap's graph (fortran/parcel-clustering,
# docs/parcel-clustering.md). Sourced by tools/check-real-code; never run alone.
#
# Per MPI library the user's checkout is copied twice and built with upstream's autotools:
# "upstream" as it is, and "haloswap" with two files dropped into src/parcels/
# (parcel_nearest_haloswap_graph.f90 added, parcel_nearest_p2p_graph.f90 replaced, so the
# programs' default --comm-type p2p is haloswap's graph; HALOSWAP_RA_BACKEND picks its back
# end). From the same 1-rank initial parcels (benchmark_verify --setup-parcels, one file per
# seed) both run benchmark_verify at every rank count: upstream with --comm-type p2p,
# haloswap with every back end; every variable of the merged parcels must be equal bit for
# bit. At 1 rank benchmark_verify merges serially (no graph), so there the merge statistics
# benchmark_random prints are compared instead, against upstream's rma graph. --bench N: the
# paper's table from benchmark_random (upstream p2p, rma, shmem and every haloswap back end,
# interleaved).
#
# Environment (all optional):
#   NETCDF_C_DIR_<mpi>, NETCDF_FORTRAN_DIR_<mpi>  (<mpi>: openmpi or mpich) or the plain
#       NETCDF_C_DIR / NETCDF_FORTRAN_DIR upstream's configure reads. Several ranks write
#       their file with parallel netCDF-4, which must be built with that MPI library;
#       default for Open MPI: Debian's /usr/lib/x86_64-linux-gnu/netcdf/mpi. Without one,
#       the multi-rank rows are skipped (the runs would write no file).
#   PC_VERIFY (1): 0 builds and times only (--bench), without the bit-for-bit rows.
#   PC_GRID ("16 16 16", or --size), PC_SEEDS ("1 2 3"): benchmark_verify's case (--nppc 40
#       --min-vratio 40, upstream's defaults). Upstream's p2p graph slows down steeply with
#       the grid (docs/parcel-clustering.md), hence 16^3. --input FILE...: the user's parcel
#       files (each read as benchmark_verify's initial_0000000001_parcels.nc) in place of the
#       seeds, on the grid --size gives; PC_VERIFY_ARGS: more benchmark_verify arguments for
#       them (e.g. "--lx 2 --ly 2 --lz 1 --min-vratio 20"), the same for both variants.
#   PC_BENCH_GRIDS ("16 32"): cubic grids of the --bench table; PC_BENCH_P2P_MAX (16): the
#       largest of them on which upstream's p2p is timed too (it takes minutes at 32^3);
#   PC_BENCH_RANKS ("2 4"): rank counts of the --bench table (--ranks sets the verify ones).

pc_fail() { echo "check-real-code parcel-clustering: $*" >&2; exit 2; }

hs_options parcel-clustering --input --size
pc_grid=(${HS_CHECK_SIZE:-${PC_GRID:-16 16 16}})
[ ${#pc_grid[@]} -eq 3 ] && [[ "${pc_grid[*]}" =~ ^[1-9][0-9]*\ [1-9][0-9]*\ [1-9][0-9]*$ ]] ||
  pc_fail "--size '${pc_grid[*]}': the grid, three cell counts \"NX NY NZ\" (benchmark_verify's --nx --ny --nz)"
pc_seeds=${PC_SEEDS:-1 2 3}
# The user's parcel files (--input) replace the seeds: each is one case.
pc_files=()
while IFS= read -r f; do [ -z "$f" ] || pc_files+=("$f"); done <<<"$HS_CHECK_INPUTS"
[ ${#pc_files[@]} -eq 0 ] || pc_seeds=$(seq -s ' ' ${#pc_files[@]})
pc_ranks=${HS_CHECK_RANKS:-1 2 3 4}
pc_timeout=900
pc_label() {
  local what="verify ${pc_grid[0]}x${pc_grid[1]}x${pc_grid[2]}"
  [ "$1" != 1 ] || what="random ${pc_grid[0]}x${pc_grid[1]}x${pc_grid[2]}"
  [ ${#pc_files[@]} -eq 0 ] || what="verify your ${#pc_files[@]} file(s)"
  echo "$what"
}

pc_pkgs=(autoconf automake libtool pkg-config libnetcdff-dev libnetcdf-dev)
case " $HS_CHECK_MPIS " in *" openmpi "*) pc_pkgs+=(libnetcdf-mpi-dev libhdf5-openmpi-dev) ;; esac
# --transports names haloswap's remote-access back ends here, not the halo transports: an
# unknown one stops the check before it builds anything
for b in $HS_CHECK_TRANSPORTS; do
  case $b in p2p|rma|rma-epoch|shmem) ;;
    *) hs_die "--transports: '$b' is not a back end of haloswap's remote-access layer, which parcel-clustering's drop-in uses (back ends: p2p rma rma-epoch shmem; shm and cma are halo transports)" ;;
  esac
done

if [ "$HS_CHECK_LIST" = 1 ]; then
  # estimated from docs/parcel-clustering.md's results, not measured by the check: a build,
  # a launch at 16^3
  echo "parcel-clustering check of ${HS_CHECK_SRC:-CHECKOUT (not read by --list)}, scratch directory $HS_CHECK_WORK"
  hs_packages "${pc_pkgs[@]}"
  for m in $HS_CHECK_MPIS; do
    bes=${HS_CHECK_TRANSPORTS:-p2p rma rma-epoch}
    echo "$m: upstream's p2p graph and haloswap's back ends: $bes$([ -n "$HS_CHECK_TRANSPORTS" ] ||
      echo " (and shmem with an OpenSHMEM)")"
    # shellcheck disable=SC2086
    nb=$(hs_count $bes)
    hs_list_haloswap "$m"
    hs_list_build "upstream ($m)" 150
    hs_list_build "haloswap's graph ($m)" 150
    [ "$HS_CHECK_MODE" = build ] && continue
    # per seed (or file) and rank count: upstream once, each back end once (1 rank: benchmark_random)
    # shellcheck disable=SC2086
    ranks=$pc_ranks
    # Debian's netCDF writes in parallel with Open MPI only (NETCDF_C_DIR_mpich: one for MPICH)
    [ "$m" = openmpi ] || [ -n "${NETCDF_C_DIR_mpich:-}" ] || ranks=$(echo "$ranks" | grep -ow 1 || true)
    [ "${PC_VERIFY:-1}" = 0 ] || hs_list_runs "$(pc_label 2)" "$ranks" $(($(hs_count $pc_seeds) * (nb + 1))) 10
    [ "$HS_CHECK_BENCH" -eq 0 ] || hs_list_runs "bench ($HS_CHECK_BENCH rounds)" "${PC_BENCH_RANKS:-2 4}" \
      $((HS_CHECK_BENCH * (nb + 3) * $(hs_count ${PC_BENCH_GRIDS:-16 32}))) 20
  done
  hs_list_end "parcel-clustering, estimated: ~150 s a build, ~10 s a launch at 16^3"
fi

[ -f "$HS_CHECK_SRC/src/parcels/parcel_nearest_graph.f90" ] && [ -f "$HS_CHECK_SRC/configure.ac" ] ||
  pc_fail "$HS_CHECK_SRC is not a parcel-clustering checkout (no src/parcels/parcel_nearest_graph.f90)"
hs_packages "${pc_pkgs[@]}"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI 4.1's OSHMEM crashes at exit with the rdma one-sided component; every variant of a
# run gets the same setting, so upstream's rma is timed under it too.
export OMPI_MCA_osc=^rdma
pc_dropin=$HS_CHECK_ROOT/fortran/parcel-clustering
# A kept scratch directory (--keep) is reused: its copies of the checkout while the checkout's
# files are the same (pc_src_stamp), each build while its inputs are (pc_build_stamp); the
# runs are always redone.
pc_src_stamp=$(cd "$HS_CHECK_SRC" && tar --exclude=.git --sort=name --mtime=@0 --owner=0 \
  --group=0 --numeric-owner -cf - . | sha1sum | cut -c1-16)
mkdir -p "$HS_CHECK_WORK"
rm -rf "$HS_CHECK_WORK"/run-* "$HS_CHECK_WORK/bench"
if [ "$(cat "$HS_CHECK_WORK/src.stamp" 2>/dev/null)" != "$pc_src_stamp" ]; then
  rm -rf "$HS_CHECK_WORK"/src-* "$HS_CHECK_WORK"/build-* "$HS_CHECK_WORK/src.stamp"
  cp -a "$HS_CHECK_SRC" "$HS_CHECK_WORK/src-upstream"
fi
(cd "$HS_CHECK_WORK/src-upstream" && git rev-parse HEAD 2>/dev/null) > "$HS_CHECK_WORK/commit" || true
hs_progress "parcel-clustering at $(cat "$HS_CHECK_WORK/commit" 2>/dev/null || echo '(not a git checkout)')"
if [ ! -x "$HS_CHECK_WORK/src-upstream/configure" ]; then
  t0=$(date +%s.%N)
  hs_progress "upstream's configure: autoreconf --install in $HS_CHECK_WORK/src-upstream"
  (cd "$HS_CHECK_WORK/src-upstream" && autoreconf --install --force) > "$HS_CHECK_WORK/bootstrap.log" 2>&1 ||
    pc_fail "autoreconf failed: $HS_CHECK_WORK/bootstrap.log"
  hs_progress "upstream's configure: made in $(hs_since "$t0") s"
fi
if [ ! -f "$HS_CHECK_WORK/src.stamp" ]; then
  cp -a "$HS_CHECK_WORK/src-upstream" "$HS_CHECK_WORK/src-haloswap"
  echo "$pc_src_stamp" > "$HS_CHECK_WORK/src.stamp"
fi
cp "$pc_dropin/parcel_nearest_haloswap_graph.f90" "$pc_dropin/parcel_nearest_p2p_graph.f90" \
   "$HS_CHECK_WORK/src-haloswap/src/parcels/"

# pc_build_stamp MPI VARIANT: what a build depends on (the checkout, the netCDF, and for
# haloswap's the drop-ins and haloswap's installed libraries and modules).
pc_build_stamp() {
  { echo "$pc_src_stamp $1 $2 $pc_nc_c $pc_nc_f"
    [ "$2" = upstream ] || cat "$pc_dropin"/* "$HS_CHECK_WORK/haloswap-$1"/lib/lib* \
      "$HS_CHECK_WORK/haloswap-$1"/include/*
  } 2>/dev/null | sha1sum | cut -c1-16
}

# pc_netcdf MPI: sets pc_nc_c, pc_nc_f and pc_parallel (1 if that netCDF writes in parallel
# with this MPI library).
pc_netcdf() {
  local m=$1 c f lib
  c=$(eval echo "\${NETCDF_C_DIR_$m:-\${NETCDF_C_DIR:-}}")
  f=$(eval echo "\${NETCDF_FORTRAN_DIR_$m:-\${NETCDF_FORTRAN_DIR:-/usr}}")
  if [ -z "$c" ] && [ "$m" = openmpi ] && [ -d /usr/lib/x86_64-linux-gnu/netcdf/mpi ]; then
    c=/usr/lib/x86_64-linux-gnu/netcdf/mpi
  fi
  [ -n "$c" ] || c=/usr
  pc_nc_c=$c pc_nc_f=$f pc_parallel=0
  lib=$(ls "$c"/lib/libnetcdf.so "$c"/libnetcdf.so 2>/dev/null | head -1 || true)
  [ -n "$lib" ] || lib=/usr/lib/x86_64-linux-gnu/libnetcdf.so
  if grep -qs "NC-4 Parallel Support:.*yes" "$c/libnetcdf.settings" "$c/lib/libnetcdf.settings"; then
    case $m in
      openmpi) ldd "$lib" 2>/dev/null | grep -q 'libmpi\.so' && pc_parallel=1 ;;
      mpich) ldd "$lib" 2>/dev/null | grep -q 'libmpich' && pc_parallel=1 ;;
    esac
  fi
}

# pc_build MPI VARIANT: configure and make one copy; prints nothing, returns make's status.
pc_build() {
  local m=$1 v=$2 b=$HS_CHECK_WORK/build-$2-$1 extra=()
  local fc=mpif90.$m cc=mpicc.$m cxx=mpicxx.$m
  if [ $v = haloswap ]; then
    local pc=$HS_CHECK_WORK/haloswap-$m/lib/pkgconfig
    extra=(FCFLAGS="$(PKG_CONFIG_PATH=$pc pkg-config --cflags haloswap-ra-fortran)"
           LIBS="$(PKG_CONFIG_PATH=$pc pkg-config --libs haloswap-ra-fortran)")
  fi
  mkdir -p "$b"
  (cd "$b" && FC=$fc CC=$cc CXX=$cxx "$HS_CHECK_WORK/src-$v/configure" \
      --with-netcdf-c="$pc_nc_c" --with-netcdf-fortran="$pc_nc_f" \
      LDFLAGS="-Wl,--disable-new-dtags -Wl,-rpath,$pc_nc_c/lib" "${extra[@]}" \
      > configure.log 2>&1 && make > make.log 2>&1) # upstream's Makefiles need a serial make
}

# pc_run MPI N DIR ENV... -- PROGRAM ARGS...: one launch in DIR, output in DIR/log. MPICH
# 4.0 ranks spin while they wait: with more ranks than cores the launch gets the test
# suite's idle-yield shim (docs/install.md), for every variant alike.
pc_run() {
  local m=$1 n=$2 dir=$3 envs=()
  shift 3
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  if [ "$m" = mpich ] && [ "$n" -gt "$(nproc)" ] && [ -f "$pc_shim" ]; then
    envs+=("LD_PRELOAD=$pc_shim")
  fi
  (cd "$dir" && env "${envs[@]}" timeout $pc_timeout $(hs_mpiexec "$m") -n "$n" "$@" > log 2>&1)
}

# Merge statistics benchmark_random prints (rank 0), for the 1-rank comparison.
pc_stats() { grep -E 'Number of parcels after|Total number of merges|-way mergers' "$1" | tr -s ' '; }

pc_backends() {
  if [ -n "$HS_CHECK_TRANSPORTS" ]; then echo "$HS_CHECK_TRANSPORTS"; return; fi
  local b="p2p rma rma-epoch"
  grep -qE 'haloswap_HAVE_SHMEM (ON|TRUE|1)\)' \
    "$HS_CHECK_WORK/haloswap-$1"/lib*/cmake/haloswap/haloswapConfig.cmake && b="$b shmem"
  echo "$b"
}

pc_bitdiff=$(hs_nc_bitdiff)

for m in $HS_CHECK_MPIS; do
  hs_install "$m" "$HS_CHECK_WORK/haloswap-$m"
  pc_shim=""
  [ "$m" = mpich ] && pc_shim=$(hs_build_dir mpich)/libhs_idle_yield.so
  pc_netcdf "$m"
  backends=$(pc_backends "$m")
  built=1
  for v in upstream haloswap; do
    t0=$(date +%s.%N) b=$HS_CHECK_WORK/build-$v-$m
    if [ "$(cat "$b/.hs-stamp" 2>/dev/null)" = "$(pc_build_stamp "$m" "$v")" ] &&
       [ -x "$b/src/benchmark_verify" ]; then
      hs_progress "$v ($m): unchanged, kept ($b)"
    else
      hs_progress "$v ($m): building in $b"
      rm -rf "$b"
      if ! pc_build "$m" "$v"; then
        echo "build of $v with $m failed: see $b/{configure,make}.log" >&2
        built=0
        continue
      fi
      pc_build_stamp "$m" "$v" > "$b/.hs-stamp"
      hs_progress "$v ($m): built in $(hs_since "$t0") s"
    fi
    hs_kept "$v ($m)" "$b (rebuild: make -C $b)"
  done
  up=$HS_CHECK_WORK/build-upstream-$m/src hs=$HS_CHECK_WORK/build-haloswap-$m/src
  grid=(--nx "${pc_grid[0]}" --ny "${pc_grid[1]}" --nz "${pc_grid[2]}")
  # shellcheck disable=SC2206
  [ ${#pc_files[@]} -eq 0 ] || grid+=(${PC_VERIFY_ARGS:-})
  [ "${PC_VERIFY:-1}" = 0 ] || [ "$HS_CHECK_MODE" = build ] && continue
  [ "$m" != openmpi ] || hs_say_env "$m" OMPI_MCA_osc=^rdma
  [ -z "$pc_shim" ] || hs_say_env "$m" "LD_PRELOAD=$pc_shim (with more ranks than the $(nproc) cores)"
  for n in $pc_ranks; do
    for b in $backends; do
      result=identical detail="" t0=$(date +%s.%N)
      if [ $built = 0 ]; then
        result=FAILED detail="build failed (logs in $HS_CHECK_WORK)"
      elif [ "$n" -gt 1 ] && [ $pc_parallel = 0 ]; then
        result=skipped detail="no parallel netCDF for $m (NETCDF_C_DIR_$m): several ranks write no file"
      elif [ "$n" = 1 ] && [ ${#pc_files[@]} -gt 0 ]; then
        result=skipped detail="1 rank: benchmark_verify merges serially, without a graph"
      fi
      for s in $pc_seeds; do
        [ "$result" = identical ] || break
        d=$HS_CHECK_WORK/run-$m/seed$s
        [ ${#pc_files[@]} -eq 0 ] || d=$HS_CHECK_WORK/run-$m/file$s
        if [ "$n" = 1 ]; then
          # benchmark_verify's 1-rank merge is serial: compare benchmark_random's statistics,
          # with upstream's rma graph (at 1 rank upstream's p2p graph is its own neighbour
          # eight times over and needs many minutes at 16^3; every flag is local, so rma
          # gives p2p's result)
          mkdir -p "$d/random-up" "$d/random-$b"
          [ -f "$d/random-up/log" ] || pc_run "$m" 1 "$d/random-up" -- "$up/benchmark_random" \
              --comm-type rma "${grid[@]}" --seed "$s" --niter 1 --csvfname t || true
          pc_run "$m" 1 "$d/random-$b" HALOSWAP_RA_BACKEND=$b -- "$hs/benchmark_random" \
              "${grid[@]}" --seed "$s" --niter 1 --csvfname t || true
          if [ -z "$(pc_stats "$d/random-up/log")" ] ||
             ! diff <(pc_stats "$d/random-up/log") <(pc_stats "$d/random-$b/log") >/dev/null; then
            result=DIFFERS detail="seed $s: benchmark_random statistics differ ($d)"
          else
            detail="merge statistics, against upstream rma (serial verify: no graph)"
          fi
          continue
        fi
        if [ ${#pc_files[@]} -gt 0 ]; then
          mkdir -p "$d"
          ln -sf "${pc_files[$((s - 1))]}" "$d/initial_0000000001_parcels.nc"
        elif [ ! -f "$d/initial_0000000001_parcels.nc" ]; then
          mkdir -p "$d"
          pc_run "$m" 1 "$d" -- "$up/benchmark_verify" --setup-parcels "${grid[@]}" --seed "$s" ||
            true
        fi
        for dir in "$d/np$n-upstream-p2p" "$d/np$n-$b"; do
          mkdir -p "$dir"
          ln -sf ../initial_0000000001_parcels.nc "$dir/"
        done
        ref=$d/np$n-upstream-p2p/parallel_final_0000000001_parcels.nc
        if [ ! -f "$ref" ]; then
          t1=$(date +%s.%N)
          pc_run "$m" "$n" "$d/np$n-upstream-p2p" -- "$up/benchmark_verify" "${grid[@]}" \
            --comm-type p2p || true
          hs_progress "$(basename "$d"), $n ranks, upstream p2p, $m: ran (run $(hs_since "$t1") s)"
        fi
        rm -f "$d/np$n-$b"/parallel_final_*
        pc_run "$m" "$n" "$d/np$n-$b" HALOSWAP_RA_BACKEND=$b -- "$hs/benchmark_verify" \
            "${grid[@]}" || true
        out=$d/np$n-$b/parallel_final_0000000001_parcels.nc
        what="seed $s"
        [ ${#pc_files[@]} -eq 0 ] || what=$(basename "${pc_files[$((s - 1))]}")
        if [ ! -f "$ref" ] || [ ! -f "$out" ]; then
          result=FAILED detail="$what: no merged parcels written (logs in $d)"
        elif ! "$pc_bitdiff" "$ref" "$out" > "$d/np$n-$b/diff" 2>&1; then
          result=DIFFERS detail="$what: $(grep -v '^DIFFERENT' "$d/np$n-$b/diff" | head -1)"
        elif [ ${#pc_files[@]} -gt 0 ]; then
          detail="every variable of the merged parcels of each file"
        else
          detail="seeds ${pc_seeds// /,}: every variable of the merged parcels"
        fi
      done
      HS_RUN_SECS=$(hs_since "$t0")
      hs_table_row "$(pc_label "$n")" "$n" "$b" "$m" "$result" "$detail"
    done
  done
done

# ---------------------------------------------------------------- --bench N: the paper's table
# benchmark_random timers (maximum over ranks, written to CSV): 'resolve graphs' and
# 'parcel merge (total)'. Launches of all variants are interleaved, in a rotating order.
pc_csv_column() { # FILE COLUMN-NAME: the value of that column in the data row
  awk -F, -v name="$2" 'NR==1{for(i=1;i<=NF;i++) if($i==name) c=i} NR==2&&c{print $c+0}' "$1"
}
if [ "$HS_CHECK_BENCH" -gt 0 ] && [ "$HS_CHECK_MODE" != build ]; then
  bench=$HS_CHECK_WORK/bench
  mkdir -p "$bench"
  : > "$bench/times"
  for m in $HS_CHECK_MPIS; do
    up=$HS_CHECK_WORK/build-upstream-$m/src hs=$HS_CHECK_WORK/build-haloswap-$m/src
    pc_shim=""
    [ "$m" = mpich ] && pc_shim=$(hs_build_dir mpich)/libhs_idle_yield.so
    [ -x "$up/benchmark_random" ] && [ -x "$hs/benchmark_random" ] || continue
    ups="rma"
    [ "$m" = openmpi ] && grep -q "enabling SHMEM... yes" "$HS_CHECK_WORK/build-upstream-$m/configure.log" &&
      ups="$ups shmem"
    for g in ${PC_BENCH_GRIDS:-16 32}; do
      variants=""
      [ "$g" -le "${PC_BENCH_P2P_MAX:-16}" ] && variants="upstream:p2p"
      for u in $ups; do variants="$variants upstream:$u"; done
      for b in $(pc_backends "$m"); do variants="$variants haloswap:$b"; done
      read -r -a vs <<< "$variants"
      for n in ${PC_BENCH_RANKS:-2 4}; do
        for ((i = 0; i < HS_CHECK_BENCH; i++)); do
          for ((k = 0; k < ${#vs[@]}; k++)); do
            v=${vs[$(((k + i) % ${#vs[@]}))]}
            kind=${v%%:*} name=${v#*:}
            d=$bench/$m-$g-np$n-$kind-$name-$i
            mkdir -p "$d"
            if [ $kind = upstream ]; then
              pc_run "$m" "$n" "$d" -- "$up/benchmark_random" --comm-type "$name" \
                --nx "$g" --ny "$g" --nz "$g" --niter 1 --csvfname t || true
            else
              pc_run "$m" "$n" "$d" HALOSWAP_RA_BACKEND="$name" -- "$hs/benchmark_random" \
                --nx "$g" --ny "$g" --nz "$g" --niter 1 --csvfname t || true
            fi
            r=$(pc_csv_column "$d/t-timings.csv" "resolve graphs" 2>/dev/null || true)
            t=$(pc_csv_column "$d/t-timings.csv" "parcel merge (total)" 2>/dev/null || true)
            [ -n "$r" ] && [ -n "$t" ] && echo "$m $g $n $kind $name $r $t" >> "$bench/times"
          done
        done
      done
    done
  done
  echo
  echo "benchmark_random, one merge per launch, $HS_CHECK_BENCH interleaved launches per variant;"
  echo "seconds: median [min-max] over launches of upstream's timers (maximum over ranks);"
  echo "ratio: median haloswap / median upstream of the same mechanism (rma-epoch: rma)."
  echo "MPICH launches with more ranks than the $(nproc) cores preload libhs_idle_yield.so."
  python3 "$HS_CHECK_ROOT/tools/real-code/parcel-clustering-table.py" "$bench/times" |
    tee "$HS_CHECK_WORK/bench-table"
fi

hs_progress "$HS_CHECK_FAILS row(s) not identical; work directory $HS_CHECK_WORK"
[ "$HS_CHECK_KEEP" = 1 ] || [ "$HS_CHECK_FAILS" -gt 0 ] || { rm -rf "$HS_CHECK_WORK"; HS_CHECK_BUILDS=""; }
[ "$HS_CHECK_FAILS" = 0 ]
