#!/bin/bash
# Builds the libFuzzer harnesses (clang, ASan + UBSan, MPICH: no OpenSHMEM to initialise at
# 1 rank) into ${BUILD:-build}/fuzz/. Needs clang and libclang-rt-14-dev (install-fuzz-deps.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${BUILD:-$root/build}/fuzz
mkdir -p "$out"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1 -Wno-unknown-warning-option"
# The library with coverage instrumentation, static (linked into the harnesses by path);
# Fortran and tests are not needed.
cmake -S "$root" -B "$out/lib" -DCMAKE_C_COMPILER=clang \
  -DCMAKE_C_FLAGS="$san -fsanitize=fuzzer-no-link" -DCMAKE_BUILD_TYPE=Debug \
  -DMPI_C_COMPILER=mpicc.mpich -DMPI_Fortran_COMPILER=mpif90.mpich \
  -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich -DHS_ENABLE_FORTRAN=OFF -DHS_BUILD_TESTS=OFF \
  -DBUILD_SHARED_LIBS=OFF -DHS_WITH_NETCDF=OFF >/dev/null
cmake --build "$out/lib" --target haloswap -j "${JOBS:-2}" >/dev/null
lib=$(find "$out/lib" -name 'libhaloswap.a' | head -1)
cc() { MPICH_CC=clang mpicc.mpich "$@"; }
inc="-I$root/include -I$root/apps/parcel-cluster"
pc="$root/apps/parcel-cluster"
cc $san -fsanitize=fuzzer $inc "$root/fuzz/fuzz_options.c" "$lib" -lm -o "$out/fuzz_options"
cc $san -fsanitize=fuzzer $inc "$root/fuzz/fuzz_desc.c" "$lib" -lm -o "$out/fuzz_desc"
cc $san -fsanitize=fuzzer,fuzzer-no-link $inc -DPC_HAVE_NETCDF=1 "$root/fuzz/fuzz_ncread.c" \
  "$pc/pc_netcdf.c" "$pc/pc_common.c" "$lib" $(pkg-config --cflags --libs netcdf) -lm \
  -o "$out/fuzz_ncread"
echo "fuzz harnesses in $out: fuzz_options fuzz_desc fuzz_ncread"
