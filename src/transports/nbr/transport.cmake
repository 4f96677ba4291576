if(HS_SMPI)
  # SimGrid SMPI 3.32 aborts in MPI_Dist_graph_create_adjacent ("Not yet implemented").
  message(STATUS "haloswap: nbr not built under SMPI (no MPI_Dist_graph_create_adjacent)")
  return()
endif()
hs_add_transport(hs__transport_nbr nbr.c)
