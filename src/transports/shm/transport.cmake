if(HS_SMPI)
  # SMPI runs every rank as a cooperative actor in one process: shm's spin-wait on flags in the
  # shared window never yields to the simulator (the run hangs), and SMPI 3.32 has no MPI_Win_sync.
  hs_unbuilt_transport(HS_TRANSPORT_SHM shm
    "not built under SimGrid SMPI: its ranks cannot spin-wait on shared memory, and it has no MPI_Win_sync")
else()
  hs_add_transport(hs__transport_shm shm shm.c)
endif()
