# Built only where Open MPI's OSHMEM (oshcc) was found; see the top-level CMakeLists. The
# oshcc flags are taken from the hs_oshmem target as plain flags (linking the target itself
# would put it in haloswap's install export set).
if(HS_HAVE_SHMEM)
  hs_add_transport(hs__transport_shmem shmem shmem.c)
  get_target_property(_hs_shmem_cflags hs_oshmem INTERFACE_COMPILE_OPTIONS)
  get_target_property(_hs_shmem_lflags hs_oshmem INTERFACE_LINK_OPTIONS)
  if(_hs_shmem_cflags)
    set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/shmem.c PROPERTIES
                                COMPILE_OPTIONS "${_hs_shmem_cflags}")
  endif()
  if(_hs_shmem_lflags)
    hs_transport_link_libraries(${_hs_shmem_lflags})
  endif()
endif()
if(NOT HS_HAVE_SHMEM)
  hs_unbuilt_transport(HS_TRANSPORT_SHMEM shmem
    "needs Open MPI's OpenSHMEM (oshcc), not found for this MPI library")
endif()
