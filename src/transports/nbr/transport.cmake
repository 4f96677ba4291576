hs_add_transport(hs__transport_nbr nbr.c)
