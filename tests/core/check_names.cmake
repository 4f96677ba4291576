# registry_names: the transports `hs_info --names` lists (the ops tables' names, in registry
# order) are the ones CMake registered (HS_TRANSPORT_NAMES, which the tests loop over).
# Usage: cmake -DHS_INFO=exe -DNAMES=a,b,c -P check_names.cmake
execute_process(COMMAND ${HS_INFO} --names OUTPUT_VARIABLE out RESULT_VARIABLE rc)
string(STRIP "${out}" out)
string(REPLACE "\n" "," got "${out}")
if(NOT rc EQUAL 0 OR NOT got STREQUAL NAMES)
  message(FATAL_ERROR "hs_info --names gave '${got}' (exit ${rc}); CMake registered '${NAMES}'")
endif()
message(STATUS "registry: ${got}")
