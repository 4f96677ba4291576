hs_add_transport(hs__transport_p2p p2p p2p.c)
