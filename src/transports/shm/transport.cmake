hs_add_transport(hs__transport_shm shm.c)
