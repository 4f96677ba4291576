hs_add_transport(hs__transport_shm shm shm.c ID HS_TRANSPORT_SHM SMPI_UNBUILT "${HS_NODE_ENGINE_SMPI}")
