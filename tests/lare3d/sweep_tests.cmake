# Shared by tests/lare3d and tests/epoch (included by both; the first one defines it all).
include_guard(GLOBAL)

# The oracle and transport loop of the sweep drop-in tests (sweep_test_support.f90).
add_library(sweep_test_support STATIC ${CMAKE_CURRENT_LIST_DIR}/sweep_test_support.f90)
target_link_libraries(sweep_test_support PUBLIC test_transport_loop MPI::MPI_Fortran)
target_compile_options(sweep_test_support PRIVATE ${HS_FORTRAN_WARNINGS})
set_target_properties(sweep_test_support PROPERTIES
  Fortran_MODULE_DIRECTORY ${CMAKE_BINARY_DIR}/tests/sweep_support_modules)
target_include_directories(sweep_test_support PUBLIC ${CMAKE_BINARY_DIR}/tests/sweep_support_modules)

# hs_sweep_dropin_tests(<prefix> <executable> STATS <variable> <regex> [ERRORS
# "<case>|<regex>"...]): one launch per rank count and process layout (the default layout is
# MPI_Dims_create's over (z, y, x), as Lare3d and EPOCH), each running every registered
# transport (at 6 and 9 ranks half of them each: hs_transport_share; 2 x 2 x 2 all); shmem
# (opt-in; with Open MPI 4.1.4 osc ^rdma) in launches of its own; with the statistics
# variable set, what MPI_Finalize prints must match the regex; each error case (--error
# <case>) must print its regex.
function(hs_sweep_dropin_tests prefix exe)
  cmake_parse_arguments(T "" "" "STATS;ERRORS" ${ARGN})
  list(GET T_STATS 0 var)
  list(GET T_STATS 1 expect)
  hs_add_mpi_test(NAME ${prefix}_stats COMMAND ${exe} --transport p2p RANKS 2 TIMEOUT 120
    ENV ${var}=1)
  set_tests_properties(${prefix}_stats PROPERTIES PASS_REGULAR_EXPRESSION "${expect}")
  # shmem runs in launches of its own (its environment), below.
  set(may --except shmem --may-be-unusable cma)
  foreach(c "1" "2" "2:2,1,1" "3:1,3,1" "4" "4:1,1,4" "6" "8" "9")
    string(REPLACE ":" ";" c "${c}")
    list(GET c 0 n)
    hs_transport_share(share ${n})
    set(args ${may} ${share})
    set(name ${prefix}_np${n})
    list(LENGTH c len)
    if(len GREATER 1)
      list(GET c 1 layout)
      list(APPEND args --procs ${layout})
      string(REPLACE "," "x" tag "${layout}")
      set(name ${name}_${tag})
    endif()
    hs_add_mpi_test(NAME ${name} COMMAND ${exe} ${args} RANKS ${n} TIMEOUT 300)
  endforeach()
  if(HS_HAVE_SHMEM)
    foreach(n 2 4)
      hs_add_mpi_test(NAME ${prefix}_shmem_np${n} COMMAND ${exe} --transport shmem RANKS ${n}
        TIMEOUT 300 ENV HALOSWAP_SHMEM=1 OMPI_MCA_osc=^rdma)
    endforeach()
  endif()
  foreach(c ${T_ERRORS})
    string(REPLACE "|" ";" c "${c}")
    list(GET c 0 what)
    list(GET c 1 expect)
    hs_add_mpi_test(NAME ${prefix}_error_${what} COMMAND ${exe} --error ${what} RANKS 2
      TIMEOUT 60)
    set_tests_properties(${prefix}_error_${what} PROPERTIES PASS_REGULAR_EXPRESSION "${expect}")
  endforeach()
endfunction()
