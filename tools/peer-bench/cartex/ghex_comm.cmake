# Replaces cartex's src/runtime/ghex_comm/CMakeLists.txt in tools/check-peer-bench's scratch
# copy: cartex fetches boeschf/GHEX@benchmarking_to_master from GitHub; this builds its
# ghex_comm runtime against GHEX 0.9.0, the sources bench/ghex/build.sh fetched for make bench
# (HS_GHEX_SOURCE_DIR), with that script's options and cartex's own CARTEX_RMA=none choice.
set(GHEX_USE_BUNDLED_LIBS ON CACHE BOOL "" FORCE)
set(GHEX_USE_BUNDLED_GRIDTOOLS ON CACHE BOOL "" FORCE)
set(GHEX_USE_BUNDLED_OOMPH ON CACHE BOOL "" FORCE)
set(GHEX_TRANSPORT_BACKEND MPI CACHE STRING "" FORCE)
set(GHEX_WITH_TESTING OFF CACHE BOOL "" FORCE)
set(GHEX_NO_RMA ON CACHE INTERNAL "")
add_subdirectory(${HS_GHEX_SOURCE_DIR} ghex EXCLUDE_FROM_ALL)
# GHEX 0.9.0 defines a compile_as_cuda(... DIRECTORY) of its own, which replaces cartex's
# (functions are global) and breaks cartex/src/bin; cartex's, for a CPU build a no-op, back:
function(compile_as_cuda)
endfunction()
target_sources(runtime PRIVATE runtime.cpp)
target_link_libraries(runtime PUBLIC ghex oomph::oomph_mpi)
target_compile_definitions(runtime PUBLIC CARTEX_TRANSPORT=MPI CARTEX_RMA=none)
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/ghex_cmake_config.inc.in
    ${CMAKE_BINARY_DIR}/include/ghex_cmake_config.inc)
