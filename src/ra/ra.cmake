# Remote access layer (include/haloswap_ra.h): compiled into libhaloswap. Included by the top
# CMakeLists right after the transports are collected, so it appends to the same lists.
set(_hs_ra_sources ${CMAKE_SOURCE_DIR}/src/ra/ra.c ${CMAKE_SOURCE_DIR}/src/ra/ra_rma.c
    ${CMAKE_SOURCE_DIR}/src/ra/ra_shmem.c)
list(APPEND HS_TRANSPORT_SOURCES ${_hs_ra_sources})
if(HS_HAVE_SHMEM)
  # Raw flags rather than the hs_oshmem target: an in-tree interface target linked into the
  # library would have to join the install export set.
  set_source_files_properties(${CMAKE_SOURCE_DIR}/src/ra/ra_shmem.c PROPERTIES
    COMPILE_DEFINITIONS HS_HAVE_SHMEM=1 COMPILE_OPTIONS "${_hs_osh_inc}")
  list(APPEND HS_TRANSPORT_LIBS ${_hs_osh_link})
endif()
install(FILES ${CMAKE_SOURCE_DIR}/include/haloswap_ra.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
