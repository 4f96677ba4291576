hs_add_transport(hs__transport_auto auto auto.c trial.c selfcheck.c)
