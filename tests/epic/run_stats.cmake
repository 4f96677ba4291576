# Runs test_epic_dropin --only auto with HALOSWAP_EPIC_STATS=1 (cmake -P): the run must pass
# and every statistics line must name the transport auto chose, marked "(auto's choice)",
# never "auto" itself. Variables: MPIEXEC, OVERSUB, NPFLAG, PREFLAGS, NP, EXE.
cmake_minimum_required(VERSION 3.18)
string(REPLACE "|" ";" PREFLAGS "${PREFLAGS}")
execute_process(
  COMMAND ${MPIEXEC} ${OVERSUB} ${NPFLAG} ${NP} ${PREFLAGS} ${EXE} --only auto
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "test_epic_dropin --only auto exited ${rc}\n${out}\n${err}")
endif()
string(REGEX MATCHALL "field_mpi \\(haloswap\\) rank [0-9]+: plan [^\n]*" lines "${out}")
list(LENGTH lines n)
if(n EQUAL 0)
  message(FATAL_ERROR "no statistics line 'field_mpi (haloswap) rank ...'\n${out}\n${err}")
endif()
foreach(l IN LISTS lines)
  if(NOT l MATCHES "\\] (p2p|cma|nbr|shm|shmem|rma-fence|rma-pscw|rma-passive)[^ ]* \\(auto's choice\\) (fill|accumulate): ")
    message(FATAL_ERROR "statistics line without the transport auto chose: '${l}'")
  endif()
endforeach()
message(STATUS "${n} statistics lines, each naming auto's choice")
