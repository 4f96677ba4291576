# Runs test_epic_errors CASE (cmake -P): the run must exit non-zero (mpi_exit_on_error aborts;
# the test has a timeout, so a hang fails too) and print a line matching EXPECT: the drop-in's
# own line on stderr (written before the abort) or EPIC's "Error on rank R ..." on stdout.
# Variables: MPIEXEC, OVERSUB, NPFLAG, PREFLAGS, NP, EXE, CASE, EXPECT; WHERE, the line's start
# (default field_mpi::; the BRAMS ModComm tests use it too).
cmake_minimum_required(VERSION 3.18)
if(NOT DEFINED WHERE)
  set(WHERE "field_mpi::")
endif()
string(REPLACE "|" ";" PREFLAGS "${PREFLAGS}")
execute_process(
  COMMAND ${MPIEXEC} ${OVERSUB} ${NPFLAG} ${NP} ${PREFLAGS} ${EXE} ${CASE}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 0)
  message(FATAL_ERROR "case ${CASE} on ${NP} rank(s) exited 0; it must stop\n${out}\n${err}")
endif()
string(REGEX MATCH "${WHERE}[^\n]*" line "${err}\n${out}")
if(NOT line MATCHES "${EXPECT}")
  message(FATAL_ERROR "case ${CASE}: no line '${WHERE}...' matching '${EXPECT}'\n${out}\n${err}")
endif()
message(STATUS "case ${CASE} on ${NP} rank(s): exit ${rc}, '${line}'")
