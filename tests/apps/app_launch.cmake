# What the scripts that run one app under MPI (cmake -P) share; include() it.
# Variables: MPIEXEC, OVERSUB, NPFLAG, PREFLAGS, NP, EXE, ARGS (lists separated by "|").

# Runs EXE with ARGS on NP ranks, plus "--json JFILE" (removed first) when JFILE is not empty;
# sets out, err and rc in the caller (a macro, so ARGS and PREFLAGS stay split there too).
macro(hs_app_launch jfile)
  string(REPLACE "|" ";" ARGS "${ARGS}")
  string(REPLACE "|" ";" PREFLAGS "${PREFLAGS}")
  set(extra "")
  if(NOT "${jfile}" STREQUAL "")
    file(REMOVE ${jfile})
    set(extra --json ${jfile})
  endif()
  execute_process(
    COMMAND ${MPIEXEC} ${OVERSUB} ${NPFLAG} ${NP} ${PREFLAGS} ${EXE} ${ARGS} ${extra}
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
endmacro()

# Reads JFILE into js and nruns (in the caller); fails unless it parses with EXPECT runs.
macro(hs_app_json_runs jfile expect)
  file(READ ${jfile} js)
  string(JSON nruns ERROR_VARIABLE jerr LENGTH "${js}" runs)
  if(jerr OR NOT nruns EQUAL ${expect})
    message(FATAL_ERROR "JSON ${jfile}: ${jerr}; ${nruns} runs for ${expect} in the output\n${js}")
  endif()
endmacro()
