! Stand-in for BRAMS's ModDomainDecomp: the DomainDecomp type (per BRAMS process, the global
! bounds xb..xe, yb..ye of its box).
module ModDomainDecomp
  implicit none
  private
  public :: DomainDecomp
  type DomainDecomp
     integer :: GhostZoneLength
     integer, allocatable :: xb(:), xe(:), nx(:)
     integer, allocatable :: yb(:), ye(:), ny(:)
  end type DomainDecomp
end module ModDomainDecomp
