! Stand-in for BRAMS's ModDomainDecomp: the DomainDecomp type (per BRAMS process, the global
! bounds xb..xe, yb..ye of its box), and a RAMS-style split for the tests.
module ModDomainDecomp
  implicit none
  private
  public :: DomainDecomp, RamsSplit
  type DomainDecomp
     integer :: GhostZoneLength
     integer, allocatable :: xb(:), xe(:), nx(:)
     integer, allocatable :: yb(:), ye(:), ny(:)
  end type DomainDecomp
contains
  ! RAMS-style split of the interior points 2..nnxp-1 x 2..nnyp-1 among n nodes: about
  ! sqrt(n ny / nx) slabs of rows (south to north), n / slabs blocks each (west to east; the
  ! first slabs one more: at 3 ranks one node has two neighbours on a side).
  subroutine RamsSplit(nnxp, nnyp, n, xb, xe, yb, ye)
    integer, intent(in) :: nnxp, nnyp, n
    integer, allocatable, intent(out) :: xb(:), xe(:), yb(:), ye(:)
    integer :: nslabs, s, b, nb, k, before, nx, ny
    nx = nnxp - 2
    ny = nnyp - 2
    allocate(xb(n), xe(n), yb(n), ye(n))
    nslabs = min(n, max(1, nint(sqrt(real(n) * ny / nx))))
    k = 0
    before = 0
    do s = 1, nslabs
      nb = n / nslabs + merge(1, 0, s <= n - (n / nslabs) * nslabs)
      do b = 1, nb
        k = k + 1
        yb(k) = 2 + (ny * before) / n
        ye(k) = 1 + (ny * (before + nb)) / n
        xb(k) = 2 + (nx * (b - 1)) / nb
        xe(k) = 1 + (nx * b) / nb
      end do
      before = before + nb
    end do
  end subroutine RamsSplit
end module ModDomainDecomp
