# MPI-3 RMA transports (seed 004, section IV). rma_common.c is shared by all three and listed
# once: hs_add_transport only collects sources into the one library.
hs_add_transport(hs__transport_rma_fence rma-fence rma_common.c fence.c)
hs_add_transport(hs__transport_rma_pscw rma-pscw pscw.c)
hs_add_transport(hs__transport_rma_passive rma-passive passive.c)
