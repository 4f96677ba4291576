!==============================================================================
! Drop-in replacement for parcel-clustering's src/parcels/parcel_nearest_p2p_graph.f90:
! copy it there together with parcel_nearest_haloswap_graph.f90, and p2p_graph_t (the
! programs' default --comm-type p2p) is haloswap's graph, whose remote access back end
! HALOSWAP_RA_BACKEND chooses at run time. No other upstream file changes
! (docs/parcel-clustering.md).
!==============================================================================
include 'parcel_nearest_haloswap_graph.f90'

module parcel_nearest_p2p_graph
    use parcel_nearest_haloswap_graph, only : p2p_graph_t => haloswap_graph_t
    implicit none

    private

    public :: p2p_graph_t

end module parcel_nearest_p2p_graph
