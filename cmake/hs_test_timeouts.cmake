# Test timeouts: every test's TIMEOUT is hs_test_timeout()'s, the seconds its CMakeLists gives
# times HS_TEST_TIMEOUT_SCALE. The seconds given bound a run on a 2-core machine of its own,
# with margin; on a shared login node whose cores are busy with other work (make test-loaded,
# docs/install.md "A loaded machine") message hops wait for the scheduler and the same tests
# run several times slower. A hang still fails, later.
set(HS_TEST_TIMEOUT_SCALE 2 CACHE STRING "Factor on every test's TIMEOUT (a loaded machine)")
if(NOT HS_TEST_TIMEOUT_SCALE MATCHES "^[1-9][0-9]*$")
  message(FATAL_ERROR "HS_TEST_TIMEOUT_SCALE = '${HS_TEST_TIMEOUT_SCALE}': must be a whole "
                      "number from 1 (the timeouts as written) up")
endif()
# hs_test_timeout(<var> <seconds>): <var> = the TIMEOUT to set for a test given <seconds>.
function(hs_test_timeout var seconds)
  math(EXPR s "${seconds} * ${HS_TEST_TIMEOUT_SCALE}")
  set(${var} ${s} PARENT_SCOPE)
endfunction()
