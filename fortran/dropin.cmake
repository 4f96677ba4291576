# haloswap_dropin(<code> <sources>... [OPTIONS <compile options>...] [INSTALL <more files>...])
# for a drop-in of fortran/<code>/: records its sources (HS_<CODE>_DROPIN_SOURCES), installs
# them (and the INSTALL files) under share/haloswap/<code> for the code's users, and defines
# haloswap_<code>_dropin(<target> <the code's own sources>...): a static library of the
# drop-in compiled together with the code's modules it uses (in this tree the stand-ins of
# tests/<code>), with OPTIONS added to haloswap's Fortran warnings. What the drop-ins share at
# run time is the module haloswap_dropin (fortran/haloswap_dropin.F90), built into haloswap_f.
function(haloswap_dropin code)
  cmake_parse_arguments(D "" "" "OPTIONS;INSTALL" ${ARGN})
  string(TOUPPER ${code} CODE)
  list(TRANSFORM D_UNPARSED_ARGUMENTS PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
  set(HS_${CODE}_DROPIN_SOURCES ${D_UNPARSED_ARGUMENTS} CACHE INTERNAL "haloswap's ${code} drop-in")
  set_property(GLOBAL PROPERTY HS_${CODE}_DROPIN_OPTIONS ${D_OPTIONS})
  cmake_language(EVAL CODE "
    function(haloswap_${code}_dropin target)
      _haloswap_dropin_library(\${target} ${CODE} \${ARGN})
    endfunction()")
  if(HS_ENABLE_FORTRAN)
    list(TRANSFORM D_INSTALL PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
    install(FILES ${D_UNPARSED_ARGUMENTS} ${D_INSTALL}
      DESTINATION ${CMAKE_INSTALL_DATADIR}/haloswap/${code})
  endif()
endfunction()

function(_haloswap_dropin_library target CODE)
  get_property(options GLOBAL PROPERTY HS_${CODE}_DROPIN_OPTIONS)
  add_library(${target} STATIC ${HS_${CODE}_DROPIN_SOURCES} ${ARGN})
  target_link_libraries(${target} PUBLIC haloswap_f MPI::MPI_Fortran)
  target_compile_options(${target} PRIVATE ${HS_FORTRAN_WARNINGS} ${options})
  set_target_properties(${target} PROPERTIES
    Fortran_MODULE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/${target}_modules)
  target_include_directories(${target} PUBLIC ${CMAKE_CURRENT_BINARY_DIR}/${target}_modules)
endfunction()
