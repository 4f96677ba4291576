# Runs test_epic_errors CASE (cmake -P): the run must exit non-zero (mpi_exit_on_error aborts;
# the test has a timeout, so a hang fails too) and print a line matching EXPECT.
# Variables: MPIEXEC, OVERSUB, NPFLAG, PREFLAGS, NP, EXE, CASE, EXPECT.
cmake_minimum_required(VERSION 3.18)
string(REPLACE "|" ";" PREFLAGS "${PREFLAGS}")
execute_process(
  COMMAND ${MPIEXEC} ${OVERSUB} ${NPFLAG} ${NP} ${PREFLAGS} ${EXE} ${CASE}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 0)
  message(FATAL_ERROR "case ${CASE} on ${NP} rank(s) exited 0; it must stop\n${out}\n${err}")
endif()
string(REGEX MATCH "Error on rank [0-9]+ [^\n]*" line "${out}")
if(NOT line MATCHES "${EXPECT}")
  message(FATAL_ERROR "case ${CASE}: no line 'Error on rank R ...' matching '${EXPECT}'\n${out}\n${err}")
endif()
message(STATUS "case ${CASE} on ${NP} rank(s): exit ${rc}, '${line}'")
