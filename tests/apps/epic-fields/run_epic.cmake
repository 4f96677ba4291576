# Runs epic-fields under MPI (cmake -P) and checks its verdict. The app itself compares every
# method with the serial reference (last step) and every haloswap transport's bits with p2p's
# (every step), and prints "epic-fields: PASS" or "FAIL".
#   default:      exit 0, "epic-fields: PASS", a "serial <method>: pass" line for every method
#                 that ran and the bit-identity line; unusable/unavailable transports are
#                 printed as skips.
#   EXPECT_FAIL:  the run must fail, and its output must match this regex (a wrong method the
#                 checks must reject).
#   EXPECT_UNAVAILABLE: a transport that must be reported unavailable (with the library's
#                 reason), the others still run and pass.
#   JSON=1:       also write --json and check that it parses and agrees with the output.
# Variables: MPIEXEC, OVERSUB, NPFLAG, PREFLAGS, NP, EXE, ARGS (lists separated by "|").
cmake_minimum_required(VERSION 3.18)
include(${CMAKE_CURRENT_LIST_DIR}/../app_launch.cmake)
set(jfile "")
if(JSON)
  set(jfile ${CMAKE_CURRENT_BINARY_DIR}/epic_fields_np${NP}.json)
endif()
hs_app_launch("${jfile}")
if(EXPECT_FAIL)
  if(rc EQUAL 0 OR NOT out MATCHES "${EXPECT_FAIL}" OR NOT out MATCHES "epic-fields: FAIL")
    message(FATAL_ERROR "expected a failure matching '${EXPECT_FAIL}', got exit ${rc}:\n${out}\n${err}")
  endif()
  string(REGEX MATCH "serial [^\n]*FAIL[^\n]*" line "${out}")
  message(STATUS "rejected as expected (exit ${rc}): ${line}")
  return()
endif()
if(NOT rc EQUAL 0 OR NOT out MATCHES "\nepic-fields: PASS")
  message(FATAL_ERROR "epic-fields ${ARGS} on ${NP} ranks: exit ${rc}\n${out}\n${err}")
endif()
if(EXPECT_UNAVAILABLE AND NOT out MATCHES "\ntransport ${EXPECT_UNAVAILABLE} unavailable: [^\n]+")
  message(FATAL_ERROR "transport ${EXPECT_UNAVAILABLE} was not reported unavailable:\n${out}")
endif()
string(REPLACE ";" "," text "${out}")
string(REPLACE "\n" ";" lines "${text}")
set(ran 0)
set(passed 0)
foreach(l IN LISTS lines)
  if(l MATCHES "^run transport=")
    math(EXPR ran "${ran} + 1")
  elseif(l MATCHES "^serial [^ ]+: pass: ")
    math(EXPR passed "${passed} + 1")
    message(STATUS "${l}")
  elseif(l MATCHES "skipped: " OR l MATCHES "unavailable: " OR l MATCHES "^epic-fields: bit identity"
         OR l MATCHES "^serial " OR l MATCHES "^bits .*DIFFER" OR l MATCHES "^deposit" OR l MATCHES "^epic-fields: deposit")
    message(STATUS "${l}")
  endif()
endforeach()
string(REGEX MATCHALL "\nunavailable: " unav "${out}")
list(LENGTH unav nunav)
math(EXPR expect "${ran} - ${nunav}")
if(NOT passed EQUAL expect OR expect LESS 1)
  message(FATAL_ERROR "${passed} serial checks passed for ${expect} methods that ran:\n${out}")
endif()
if(JSON)
  hs_app_json_runs(${jfile} ${ran})
  string(JSON t0 GET "${js}" runs 0 transport)
  string(JSON v0 GET "${js}" runs 0 checksums volg)
  string(JSON c0 GET "${js}" runs 0 per_step_max comm)
  if(NOT out MATCHES "run transport=${t0}\nchecksum volg ${v0}\n")
    message(FATAL_ERROR "JSON checksum volg ${v0} of ${t0} differs from the printed one")
  endif()
  message(STATUS "JSON: ${nruns} runs, ${t0} exchange ${c0} s per step")
endif()
message(STATUS "epic-fields on ${NP} rank(s): ${passed} method(s) within the serial reference, haloswap transports bit-identical")
