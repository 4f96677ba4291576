# SimGrid SMPI 3.32 aborts in MPI_Dist_graph_create_adjacent ("Not yet implemented").
hs_add_transport(hs__transport_nbr nbr nbr.c ID HS_TRANSPORT_NBR SMPI_UNBUILT
  "not built under SimGrid SMPI, which has no MPI_Dist_graph_create_adjacent")
