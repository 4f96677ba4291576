if(HS_SMPI)
  # SMPI runs every rank as a cooperative actor in one process: shm's spin-wait on flags in the
  # shared window never yields to the simulator (the run hangs), and SMPI 3.32 has no MPI_Win_sync.
  message(STATUS "haloswap: shm not built under SMPI (spin-waits cannot yield; no MPI_Win_sync)")
  return()
endif()
hs_add_transport(hs__transport_shm shm.c)
