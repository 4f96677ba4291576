# tools/check-peer-bench cartex (sourced by it; never run alone). GHEX's cartex benchmark
# (ghex-org/ghexbench, cartex/) with its own mpi_comm and ghex_comm runtimes and our
# haloswap_comm runtime (tools/peer-bench/cartex/haloswap_comm), one binary per runtime; every
# haloswap transport is a run-time choice (HALOSWAP_TRANSPORT) of the one haloswap binary.

# cartex's single-node configurations (cartex/run/*/bench.xml: L=64, halo 1-5, fields 1-8, one
# thread per rank), on the 2 cores of one node: 2 ranks, cartex's own --core grid 2 1 1.
cx_L=64
cx_halos=$(pb_config "1 5" "1 3 5")
cx_fields=$(pb_config "1 8" "1 4 8")
cx_reps=${PB_REPS:-200}
cx_ranks=2
cx_grid="--node 1 1 1 --core 2 1 1"

if [ "$PB_LIST" = 1 ]; then
  echo "cartex: runtimes mpi_comm (and its --MPI-datatypes), ghex_comm (GHEX 0.9.0), haloswap_comm"
  echo "MPI libraries: $PB_MPIS; $cx_ranks ranks, $cx_grid (MPICH: --MPICart $cx_ranks 1 1), --domain $cx_L^3, --nrep $cx_reps, --check"
  echo "halo widths: $cx_halos; fields: $cx_fields; $PB_LAUNCHES launch rounds, order rotated"
  echo "haloswap transports: ${HS_CHECK_TRANSPORTS:-every usable one (hs_info --usable-names) but rma-*, shmem; p2p, shm, cma also with staged=1, p2p and shm with staged=1,stage_fields=1}"
  echo "floor: haloswap on 1 rank, the same domain (one copy of every halo cell)"
  echo "launches: a rank per core, bound (MPICH: -bind-to core), MPI's own waits; else the test launches' shim"
  exit 0
fi
[ -f "$PB_SRC/cartex/CMakeLists.txt" ] ||
  die "CHECKOUT '$PB_SRC' holds no cartex/CMakeLists.txt (a checkout of ghex-org/ghexbench?)"
[ -n "$PB_HWCART" ] || die "cartex needs --hwcart DIR (a checkout of NordicHPC/hwcart): its" \
  "CMake fetches it from GitHub otherwise, and this check downloads nothing"
ghex_src=$(ls -d "$PB_BUILD"/ghex-src/ghex-*/ 2>/dev/null | head -1 || true)
echo "cartex: $PB_SRC at $(pb_commit "$PB_SRC"); hwcart $(pb_commit "$PB_HWCART")"
mkdir -p "$PB_WORK"
src=$PB_WORK/src
pb_scratch "$src"
cp -rp "$here/peer-bench/cartex/haloswap_comm" "$src/cartex/src/runtime/"
cp -p "$here/peer-bench/hs_grid_decomp.hpp" "$src/cartex/src/runtime/haloswap_comm/"
pb_edit cartex/src/runtime/haloswap_comm/ "added: our runtime (tools/peer-bench/cartex/haloswap_comm," \
  "with tools/peer-bench/hs_grid_decomp.hpp)"
if [ -n "$ghex_src" ]; then
  cp -p "$here/peer-bench/cartex/ghex_comm.cmake" "$src/cartex/src/runtime/ghex_comm/CMakeLists.txt"
  pb_edit cartex/src/runtime/ghex_comm/CMakeLists.txt "replaced by tools/peer-bench/cartex/ghex_comm.cmake:" \
    "GHEX 0.9.0 from ${ghex_src%/} (make bench's) instead of fetching boeschf/GHEX from GitHub"
  sed -i 's/(m_context, m_node_local)/(m_context)/' "$src/cartex/src/runtime/ghex_comm/runtime.cpp"
  pb_keep_time cartex/src/runtime/ghex_comm/runtime.cpp
  pb_edit cartex/src/runtime/ghex_comm/runtime.cpp "bulk_communication_object(m_context, m_node_local)" \
    "-> (m_context): GHEX 0.9.0's constructor takes the context only (--node-local unused)"
else
  echo "cartex: ghex_comm skipped: no GHEX sources in $PB_BUILD/ghex-src (run bench/ghex/build.sh MPI $PB_BUILD/MPI)" >&2
fi

# hwcart.h includes mpi.h inside extern "C" (ghexbench's hw_topo.hpp): MPI's C++ bindings
# there do not compile, so they are left out (a flag, not an edit)
cx_flags="-DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX"
echo "scratch build flag: CMAKE_CXX_FLAGS=$cx_flags -- hwcart.h includes mpi.h inside extern \"C\"" >&2

results=$PB_WORK/results.tsv
: >"$results"
for mpi in $PB_MPIS; do
  bdir=$(hs_build_dir "$mpi")
  [ -f "$bdir/CMakeCache.txt" ] || die "no haloswap build in $bdir (make build-$mpi)"
  hs_install "$mpi" "$PB_WORK/$mpi/haloswap"
  runtimes="mpi_comm haloswap_comm"
  [ -z "$ghex_src" ] || runtimes="mpi_comm ghex_comm haloswap_comm"
  built=""
  for rt in $runtimes; do
    out=$PB_WORK/$mpi/$rt
    hs_progress "cartex ($mpi): building $rt (niced; log $out.build.log)"
    if pb_build "$out" -S "$src" -DCMAKE_BUILD_TYPE=Release -DGHEXBENCH_BUILD_CARTEX=ON \
        -DCARTEX_RUNTIME=$rt -DCMAKE_CXX_FLAGS="$cx_flags" -DMPI_CXX_COMPILER=mpicxx.$mpi -DMPI_C_COMPILER=mpicc.$mpi \
        -DFETCHCONTENT_SOURCE_DIR_HWCART="$PB_HWCART" -DFETCHCONTENT_FULLY_DISCONNECTED=ON \
        -DHS_GHEX_SOURCE_DIR="${ghex_src%/}" -DCMAKE_PREFIX_PATH="$PB_WORK/$mpi/haloswap"; then
      built="$built $rt"
    else
      echo "cartex ($mpi): $rt did not build (log $out.build.log)" >&2
    fi
  done
  [ "$PB_BUILD_ONLY" = 0 ] || continue
  # the variants: cartex's runtimes with their own options, then one per haloswap transport
  variants=""
  for rt in $built; do
    case $rt in
      mpi_comm) variants="$variants mpi_comm mpi_comm:MPI-datatypes" ;;
      ghex_comm) variants="$variants ghex_comm" ;;
      haloswap_comm) for t in $(pb_transports "$mpi"); do variants="$variants hs:$t"; done
                     variants="$variants floor" ;;
    esac
  done
  read -r -a vs <<<"$variants"
  # hwcart's node level fails under MPICH here ("wrong topology on level 0: expected 2 nodes on
  # this level, instead found 1"): cartex's other decomposition, its MPI Cartesian grid
  grid=$cx_grid grid1="--node 1 1 1 --core 1 1 1"
  [ "$mpi" = openmpi ] || grid="--MPICart $cx_ranks 1 1" grid1="--MPICart 1 1 1"
  run_env=$(pb_run_env "$mpi" $cx_ranks)
  [ -z "$run_env" ] || echo "cartex ($mpi): every launch (every runtime) with $run_env"
  echo "cartex ($mpi): launcher $(pb_mpiexec "$mpi" $cx_ranks)"
  echo "cartex ($mpi): $(uptime)"
  for ((round = 1; round <= PB_LAUNCHES; round++)); do
    for h in $cx_halos; do
      for nf in $cx_fields; do
        config="L=$cx_L halo=$h fields=$nf"
        hs_progress "cartex ($mpi): round $round/$PB_LAUNCHES, $config"
        n=${#vs[@]}
        for ((k = 0; k < n; k++)); do
          v=${vs[$(((k + round) % n))]}
          rt=${v%%:*} extra="" tenv="" ranks=$cx_ranks g=$grid
          case $v in
            mpi_comm:*) extra="--${v#*:}" ;;
            hs:*) rt=haloswap_comm tenv="HALOSWAP_TRANSPORT=${v#hs:}"
                  case ${v#hs:} in shm*|auto*) extra=--hs-alloc ;; esac ;;
            # one rank, the same domain: every halo cell one copy from its own interior, the
            # least any exchange of these fields costs (each halo cell written once from its
            # source, all of it local, the memory to itself)
            floor) rt=haloswap_comm tenv=HALOSWAP_TRANSPORT=p2p ranks=1 g=$grid1 ;;
          esac
          log=$PB_WORK/$mpi/run.log
          # shellcheck disable=SC2086
          if env $run_env $tenv timeout 300 $(pb_mpiexec "$mpi" $ranks) -n $ranks \
              "$PB_WORK/$mpi/$rt/cartex/src/bin/benchmark" --domain $cx_L $cx_L $cx_L \
              --nrep "$cx_reps" --nfields "$nf" --halo "$h" --check $g $extra \
              >"$log" 2>&1 && ! grep -q 'check failed' "$log"; then
            sec=$(awk '/^median \(s\)/ { print $3 }' "$log")
          else
            sec=failed
            { echo "cartex ($mpi): $v, $config failed:"; tail -5 "$log"; } >&2
          fi
          printf '%s\t%s\t%s\t%s\t%s\n' "$mpi" "$config" "$v" "$round" "${sec:-failed}" >>"$results"
        done
      done
    done
  done
  echo "cartex ($mpi): $(uptime)"
done
[ "$PB_BUILD_ONLY" = 0 ] || exit 0
echo
echo "cartex's own timing: its 'median (s)' of one exchange of all fields (rank 0), per launch;"
echo "below the median over $PB_LAUNCHES launches. MPI = the faster of cartex's two mpi_comm variants."
echo "floor = haloswap on 1 rank with the same domain: every halo cell one copy from local memory;"
echo "no exchange of these fields between 2 ranks costs less, so where floor/MPI > 0.5 a time of"
echo "0.5x MPI is out of reach."
pb_table best:mpi_comm --ratio "best/MPI=best:hs:/best:mpi_comm" \
  --ratio "best/GHEX=best:hs:/ghex_comm" --ratio "p2p/MPI=hs:p2p/best:mpi_comm" \
  --ratio "p2p best/MPI=best:hs:p2p/best:mpi_comm" \
  --ratio "floor/MPI=floor/best:mpi_comm"
