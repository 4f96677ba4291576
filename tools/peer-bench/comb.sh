# tools/check-peer-bench comb (sourced by it; never run alone). LLNL's Comb with its own MPI
# policies (mpi, mpi_persistent) and memcpy baselines, and haloswap as a method of ours
# (tools/peer-bench/comb/test_cycles_haloswap.cpp) run by the same launch after Comb's own;
# every haloswap transport is a run-time choice (HALOSWAP_TRANSPORTS).

# Comb's own configurations (scripts/focused_tests.bash, scale_tests.bash): 100 cells per
# process per side, periodic, ghost width 1, 3 variables, Comb's cycles; here 2 processes
# (-divide 2_1_1) on one 2-core node, ghost widths 1 and 2 (Comb's -ghost), 1 and 3 variables.
cb_side=100
cb_ghosts=$(pb_config 1 "1 2")
cb_vars=$(pb_config 3 "1 3")
cb_cycles=${PB_REPS:-100}

if [ "$PB_LIST" = 1 ]; then
  echo "comb: Comb's mpi and mpi_persistent policies (seq execution, host memory), its memcpy"
  echo "baselines, and haloswap (one plan per transport) in the same launch"
  echo "MPI libraries: $PB_MPIS; 2 processes, -divide 2_1_1, $((2 * cb_side))_${cb_side}_${cb_side}, -periodic 1_1_1, -cycles $cb_cycles"
  echo "ghost widths: $cb_ghosts; variables: $cb_vars; $PB_LAUNCHES launch rounds"
  echo "haloswap transports: ${HS_CHECK_TRANSPORTS:-every usable one (hs_info --usable-names) but rma-*, shmem; p2p, shm, cma also with staged=1, p2p and shm with staged=1,stage_fields=1}"
  echo "floor: haloswap in 1 process with one process's box (one copy of every ghost zone)"
  echo "launches: a process per core, bound (MPICH: -bind-to core), MPI's own waits; else the test launches' shim"
  exit 0
fi
[ -f "$PB_SRC/src/comb.cpp" ] || die "CHECKOUT '$PB_SRC' holds no src/comb.cpp (a checkout of LLNL/Comb?)"
[ -n "$PB_BLT" ] || [ -f "$PB_SRC/blt/SetupBLT.cmake" ] || die "comb needs BLT (its git" \
  "submodule blt/, empty in this checkout): --blt DIR, a checkout of LLNL/blt"
echo "comb: $PB_SRC at $(pb_commit "$PB_SRC")${PB_BLT:+; blt $(pb_commit "$PB_BLT")}"
mkdir -p "$PB_WORK"
src=$PB_WORK/src
pb_scratch "$src"
if [ -n "$PB_BLT" ]; then
  rm -rf "$src/blt"; (cd "$PB_BLT" && tar --exclude=.git -cf - .) | (mkdir -p "$src/blt" && cd "$src/blt" && tar -xf -)
  pb_edit blt/ "filled with $PB_BLT (Comb's git submodule, not checked out)"
fi
cp -p "$here/peer-bench/comb/test_cycles_haloswap.cpp" "$here/peer-bench/hs_grid_decomp.hpp" "$src/src/"
pb_edit src/test_cycles_haloswap.cpp "added: our haloswap method (tools/peer-bench/comb/)"
pb_edit src/hs_grid_decomp.hpp "added: ours (tools/peer-bench/), the method's decomposition"
cat >>"$src/src/CMakeLists.txt" <<'EOF'
# tools/check-peer-bench: haloswap's method, from the install CMAKE_PREFIX_PATH names
find_package(haloswap REQUIRED CONFIG)
target_sources(comb PRIVATE test_cycles_haloswap.cpp)
target_link_libraries(comb PUBLIC haloswap::haloswap)
EOF
pb_keep_time src/CMakeLists.txt
pb_edit src/CMakeLists.txt "4 lines appended: compile test_cycles_haloswap.cpp, link haloswap"
sed -i -e 's|^int main(|namespace COMB { void test_cycles_haloswap(CommInfo\&, MeshInfo\&, IdxT, IdxT, Timer\&, Timer\&); }\nint main(|' \
  -e 's|^ *COMB::test_cycles_mpi_persistent(comminfo.*|&\n    COMB::test_cycles_haloswap(comminfo, info, num_vars, ncycles, tm, tm_total);|' \
  "$src/src/comb.cpp"
pb_keep_time src/comb.cpp
grep -q 'COMB::test_cycles_haloswap(comminfo' "$src/src/comb.cpp" || die "could not place the haloswap call in src/comb.cpp"
pb_edit src/comb.cpp "a declaration before main and one call after Comb's mpi_persistent tests:" \
  "COMB::test_cycles_haloswap(comminfo, info, num_vars, ncycles, tm, tm_total)"

results=$PB_WORK/results.tsv
: >"$results"
# cb_summary DIR: a launch's lines of the results (Comb's summary in DIR): a test's comm time =
# its post-recv + post-send + wait-recv + wait-send averages; memcpy = copy_sync's average
cb_summary() {
  awk -v mpi="$mpi" -v config="$config" -v round="$round" '
    /^Starting test memcpy/ { test = "memcpy " $4; next }
    /^Starting test Comm/ { test = ($4 ~ /^haloswap-/) ? "hs:" substr($4, 10) : ($4 == "sync") ? "sync" : $4 " " $9; next }
    test ~ /^memcpy/ && /^copy_sync/ { printf "%s\t%s\t%s\t%s\t%s\n", mpi, config, test, round, $5; test = ""; next }
    test != "" && /^(post-recv|post-send|wait-recv|wait-send):/ { t[test] += $5 }
    END { for (k in t) printf "%s\t%s\t%s\t%s\t%.9g\n", mpi, config, k, round, t[k] }
  ' "$(ls "$1"/Comb_*_summary | head -1)" | sort -t "$(printf '\t')" -k3,3
}
for mpi in $PB_MPIS; do
  [ -f "$(hs_build_dir "$mpi")/CMakeCache.txt" ] || die "no haloswap build in $(hs_build_dir "$mpi") (make build-$mpi)"
  hs_install "$mpi" "$PB_WORK/$mpi/haloswap"
  out=$PB_WORK/$mpi/comb
  hs_progress "comb ($mpi): building (niced; log $out.build.log)"
  # RAJA (Comb's other submodule) is optional: Comb's own COMB_ENABLE_RAJA=Off
  pb_build "$out" -S "$src" -DCMAKE_BUILD_TYPE=Release -DENABLE_MPI=On -DCOMB_ENABLE_RAJA=Off \
    -DMPI_CXX_COMPILER=mpicxx.$mpi -DMPI_C_COMPILER=mpicc.$mpi \
    -DCMAKE_PREFIX_PATH="$PB_WORK/$mpi/haloswap" || die "Comb did not build for $mpi (log $out.build.log)"
done
[ "$PB_BUILD_ONLY" = 0 ] || exit 0
for mpi in $PB_MPIS; do
  out=$PB_WORK/$mpi/comb
  bin=$(find "$out" -name comb -type f -perm -u+x | head -1)
  run_env=$(pb_run_env "$mpi" 2)
  [ -z "$run_env" ] || echo "comb ($mpi): every launch with $run_env"
  echo "comb ($mpi): $(uptime)"
  ts=$(pb_transports "$mpi")
  for ((round = 1; round <= PB_LAUNCHES; round++)); do
    for g in $cb_ghosts; do
      for nv in $cb_vars; do
        config="$((2 * cb_side))x${cb_side}x${cb_side} ghost=$g vars=$nv"
        hs_progress "comb ($mpi): round $round/$PB_LAUNCHES, $config"
        dir=$PB_WORK/$mpi/run && rm -rf "$dir" && mkdir -p "$dir"
        # shellcheck disable=SC2086
        if ! (cd "$dir" && env $run_env HALOSWAP_TRANSPORTS="$ts" HALOSWAP_COMB_ALLOC="malloc hs" HALOSWAP_COMB_SYNC=1 \
            timeout 600 $(pb_mpiexec "$mpi" 2) -n 2 "$bin" $((2 * cb_side))_${cb_side}_${cb_side} \
            -divide 2_1_1 -periodic 1_1_1 -ghost ${g}_${g}_${g} -vars "$nv" -cycles "$cb_cycles" \
            -comm cutoff 250 -exec disable all -exec enable seq -exec enable mpi_type \
            -memory disable all -memory enable host \
            -comm disable all -comm enable mpi -comm enable mpi_persistent >run.log 2>&1); then
          { echo "comb ($mpi): $config failed:"; tail -5 "$dir/run.log"; } >&2
          continue
        fi
        cb_summary "$dir" >>"$results"
        # floor: one process with the same box (Comb's -divide 1_1_1 of one rank's share),
        # haloswap alone: every ghost zone one copy from local memory, in Comb's phases
        dir=$PB_WORK/$mpi/run1 && rm -rf "$dir" && mkdir -p "$dir"
        # shellcheck disable=SC2086
        if ! (cd "$dir" && env $run_env HALOSWAP_TRANSPORTS=p2p HALOSWAP_COMB_ALLOC=malloc \
            timeout 600 $(pb_mpiexec "$mpi" 1) -n 1 "$bin" ${cb_side}_${cb_side}_${cb_side} \
            -divide 1_1_1 -periodic 1_1_1 -ghost ${g}_${g}_${g} -vars "$nv" -cycles "$cb_cycles" \
            -comm cutoff 250 -exec disable all -exec enable seq -memory disable all \
            -memory enable host -comm disable all >run.log 2>&1); then
          { echo "comb ($mpi): $config, one process, failed:"; tail -5 "$dir/run.log"; } >&2
          continue
        fi
        cb_summary "$dir" | awk -F '\t' -v OFS='\t' '$3 == "hs:p2p" { $3 = "floor"; print }' >>"$results"
      done
    done
  done
  echo "comb ($mpi): $(uptime)"
done
echo
echo "Comb's own timing: per cycle, the sum of its post-recv, post-send, wait-recv and wait-send"
echo "averages (Comb's summary file); memcpy = Comb's copy_sync of every variable's whole mesh."
echo "floor = haloswap in one process with the same box: every ghost zone one copy from local"
echo "memory; no exchange between 2 processes costs less, so where floor/MPI > 0.5 a time of"
echo "0.5x MPI is out of reach."
pb_table best:mpi --ratio "best/memcpy=best:hs:/best:memcpy" --ratio "best/MPI=best:hs:/best:mpi" \
  --ratio "floor/MPI=floor/best:mpi"
