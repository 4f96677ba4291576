! Stand-in for BRAMS's ModNeighbourNodes: the NeighbourNodes type.
module ModNeighbourNodes
  implicit none
  private
  public :: NeighbourNodes
  type NeighbourNodes
     integer :: nNeigh = 0
     integer, allocatable :: neigh(:)   ! BRAMS process numbers
  end type NeighbourNodes
end module ModNeighbourNodes
