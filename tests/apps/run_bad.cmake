# Runs a mini-app with bad arguments (cmake -P): it must exit non-zero (on every rank, so the
# launcher returns and nothing hangs: the test has a timeout) after printing exactly one line
# "PROG: message" on stderr that matches EXPECT. With EXPECT_HELP=1 the run must instead succeed and
# print the usage text.
# Variables: MPIEXEC, OVERSUB, NPFLAG, PREFLAGS, NP, EXE, PROG, EXPECT, ARGS (split on "|").
cmake_minimum_required(VERSION 3.18)
string(REPLACE "|" ";" ARGS "${ARGS}")
string(REPLACE "|" ";" PREFLAGS "${PREFLAGS}")
execute_process(
  COMMAND ${MPIEXEC} ${OVERSUB} ${NPFLAG} ${NP} ${PREFLAGS} ${EXE} ${ARGS}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(EXPECT_HELP)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "Usage: ")
    message(FATAL_ERROR "--help: exit ${rc}, output:\n${out}\n${err}")
  endif()
  message(STATUS "${PROG} --help on ${NP} rank(s): usage printed, exit 0")
  return()
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "${PROG} ${ARGS} on ${NP} ranks exited 0; it must fail\n${out}\n${err}")
endif()
string(REPLACE ";" "," all "${err}")
string(REPLACE "\n" ";" lines "${all}")
set(found "")
foreach(l IN LISTS lines)
  if(l MATCHES "^${PROG}: ")
    list(APPEND found "${l}")
  endif()
endforeach()
list(LENGTH found n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected exactly one '${PROG}: ' line, got ${n}:\n${out}\n${err}")
endif()
if(NOT found MATCHES "${EXPECT}")
  message(FATAL_ERROR "message '${found}' does not match '${EXPECT}'")
endif()
message(STATUS "${PROG} ${ARGS} on ${NP} rank(s): exit ${rc}, '${found}'")
