! haloswap's drop-in for BRAMS's ModComm (fortran/brams/initComm.f90), the RK3 dynamics'
! exchanges, on a RAMS-style slab and block split (at 3 ranks one node has two neighbours on a
! side): commHalo as radvc_rk.f90 calls it (4 arrays extended by 3 points on every side, the
! vertical extension included, fresh arrays each call) and commHaloAcou as raco.f90 does (one
! (mzp,mxp,myp) array), twice each, on every transport. Every point of every array is checked
! against the oracle from global coordinates: the node's points and its domain boundary rows
! keep their values; the face halo (3 or 1 deep past the node's box widened to the boundary
! rows, over its own rows or columns) holds its owner's value; corners and every other point
! keep their sentinel. border and nMess are checked against the boxes too.
! With an argument naming an error case (extent, bounds, transport, noinit), makes that mistake
! once: the run must stop through fatal_error naming it (tests/epic/run_error.cmake).
program test_brams_modcomm
  use mpi_f08
  use transport_loop
  use ModComm
  use ModDomainDecomp, only: RamsSplit
  implicit none

  integer, parameter :: NNXP = 26, NNYP = 22, NZ = 5
  real, parameter :: SENTINEL = -1.0
  integer :: rank, nmachs, me, nt, t, round, bad, received
  character(len=64) :: names(TL_MAX), arg
  integer, allocatable :: xb(:), xe(:), yb(:), ye(:), i0(:), j0(:), mxp(:), myp(:), mzp(:)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nmachs)
  me = rank + 1
  call RamsSplit(NNXP, NNYP, nmachs, xb, xe, yb, ye)
  i0 = xb - 2
  j0 = yb - 2
  mxp = xe - xb + 3
  myp = ye - yb + 3
  allocate(mzp(nmachs))
  mzp = NZ
  call get_command_argument(1, arg)
  if (any(arg == [character(len=64) :: 'extent', 'bounds', 'transport', 'noinit'])) then
    call mistake(arg)
    call MPI_Finalize()
    stop 0 ! (the case did not stop: run_error.cmake fails it)
  end if
  call transport_list(names, nt)
  do t = 1, nt
    if (.not. transport_begin(names(t), rank)) cycle
    ! as BRAMS's initialisation calls it; again for each transport: its plans are made afresh
    call initExtraComm(nmachs, me, 1, [NNXP], [NNYP], [NZ], xb, xe, yb, ye, 1, i0, j0, mxp, &
         myp, mzp)
    bad = walls()
    received = 0
    do round = 1, 2
      bad = bad + halo3(round) + halo1(round)
    end do
    ! the oracle must also see points arrive (none at one rank)
    call transport_end_summed(names(t), rank, nmachs, bad, received, "commHalo (depth 3, " // &
         "4 arrays, vertical halo) and commHaloAcou (depth 1), twice, every point")
  end do
  call transport_finish("test_brams_modcomm", rank, .false.)

contains

  ! One error case: a call's extent other than the node's, a second call with other array
  ! bounds, an unknown transport, commHaloAcou before initExtraComm
  subroutine mistake(what)
    character(len=*), intent(in) :: what
    real, allocatable :: a(:,:,:,:), b(:,:,:)
    integer :: m
    if (what /= 'noinit') call initExtraComm(nmachs, me, 1, [NNXP], [NNYP], [NZ], xb, xe, &
         yb, ye, 1, i0, j0, mxp, myp, mzp)
    allocate(a(-2:NZ + 3, -2:mxp(me) + 3, -2:myp(me) + 3, 4), b(NZ, mxp(me), myp(me)))
    a = 0
    b = 0
    m = mxp(me)
    select case (what)
    case ('extent')
      m = m - 1
    case ('bounds')
      call commHalo(a(:, :, :, 1), a(:, :, :, 2), a(:, :, :, 3), a(:, :, :, 4), -2, NZ + 3, &
           -2, m + 3, -2, myp(me) + 3, m, myp(me), NZ, me, nmachs, i0, j0, 'tst')
      deallocate(a)
      allocate(a(-1:NZ + 3, -2:mxp(me) + 3, -2:myp(me) + 3, 4))
      a = 0
      call commHalo(a(:, :, :, 1), a(:, :, :, 2), a(:, :, :, 3), a(:, :, :, 4), -1, NZ + 3, &
           -2, m + 3, -2, myp(me) + 3, m, myp(me), NZ, me, nmachs, i0, j0, 'tst')
    case ('noinit')
      call commHaloAcou(b, mxp(me), myp(me), NZ, me, 'div')
    end select
    call commHalo(a(:, :, :, 1), a(:, :, :, 2), a(:, :, :, 3), a(:, :, :, 4), -2, NZ + 3, -2, &
         m + 3, -2, myp(me) + 3, m, myp(me), NZ, me, nmachs, i0, j0, 'tst')
  end subroutine mistake

  ! border (the walls each node touches) and nMess (its face neighbours) against the boxes
  integer function walls() result(nbad)
    integer :: p, q, n
    logical :: w(4)
    nbad = 0
    do p = 1, nmachs
      w = [xb(p) == 2, xe(p) == NNXP - 1, yb(p) == 2, ye(p) == NNYP - 1]
      if (nmachs == 1) w = .true.
      if (any(border(p, [west, east, north, south]) .neqv. w)) then
        nbad = nbad + 1
        write(*, '(a, i0, a, 4l2, a, 4l2)') 'rank ', rank, ' border: ', &
             border(p, [west, east, north, south]), ' want ', w
      end if
      n = 0
      do q = 1, nmachs
        if (q == p) cycle
        if ((xe(p) + 1 == xb(q) .or. xe(q) + 1 == xb(p)) .and. over(yb(p), ye(p), yb(q), &
             ye(q))) n = n + 1
        if ((ye(p) + 1 == yb(q) .or. ye(q) + 1 == yb(p)) .and. over(xb(p), xe(p), xb(q), &
             xe(q))) n = n + 1
      end do
      if (nmachs > 1 .and. nMess(p) /= n) then
        nbad = nbad + 1
        write(*, '(a, i0, a, i0, a, i0, a, i0)') 'rank ', rank, ' nMess(', p, ') ', nMess(p), &
             ' want ', n
      end if
    end do
  end function walls

  logical function over(a0, a1, b0, b1)
    integer, intent(in) :: a0, a1, b0, b1
    over = max(a0, b0) <= min(a1, b1)
  end function over

  ! commHalo's exchange, as advect_ws makes it: extended arrays allocated for the call
  integer function halo3(round) result(nbad)
    integer, intent(in) :: round
    real, allocatable :: a(:,:,:,:)
    integer :: f
    allocate(a(-2:NZ + 3, -2:mxp(me) + 3, -2:myp(me) + 3, 4))
    do f = 1, 4
      call fill(a(:, :, :, f), round, f, 1 - 3)
    end do
    call commHalo(a(:, :, :, 1), a(:, :, :, 2), a(:, :, :, 3), a(:, :, :, 4), -2, NZ + 3, -2, &
         mxp(me) + 3, -2, myp(me) + 3, mxp(me), myp(me), NZ, me, nmachs, i0, j0, 'tst')
    nbad = 0
    do f = 1, 4
      nbad = nbad + check(a(:, :, :, f), round, f, 1 - 3, 3, 'commHalo')
    end do
  end function halo3

  ! commHaloAcou's exchange on a node array (mzp, mxp, myp)
  integer function halo1(round) result(nbad)
    integer, intent(in) :: round
    real, allocatable :: a(:,:,:)
    allocate(a(NZ, mxp(me), myp(me)))
    call fill(a, round, 5, 1)
    call commHaloAcou(a, mxp(me), myp(me), NZ, me, 'div')
    nbad = check(a, round, 5, 1, 1, 'commHaloAcou')
  end function halo1

  ! The value of field f at global point (gx, gy), level k, in round `round` (exact in single
  ! precision)
  real function val(round, f, k, gx, gy)
    integer, intent(in) :: round, f, k, gx, gy
    val = real(((((round * 6 + f) * 16 + k + 3) * 32 + gx) * 32) + gy)
  end function val

  ! The node's points (its box widened to the boundary rows it touches) get their values over
  ! the whole column; every other point the sentinel. The array's first point is local
  ! (k0, k0, k0) in (z, x, y); local i is global i + nodei0.
  subroutine fill(a, round, f, k0)
    real, intent(out) :: a(:,:,:)
    integer, intent(in) :: round, f, k0
    integer :: i, j, k, gx, gy
    do j = 1, size(a, 3)
      do i = 1, size(a, 2)
        gx = i + k0 - 1 + i0(me)
        gy = j + k0 - 1 + j0(me)
        do k = 1, size(a, 1)
          a(k, i, j) = SENTINEL
          if (owner(gx, gy) == me) a(k, i, j) = val(round, f, k + k0 - 1, gx, gy)
        end do
      end do
    end do
  end subroutine fill

  ! Wrong points of array a after an exchange of depth d: a point of the face halo (outside the
  ! node's box on exactly one axis, at most d past it) holds its owner's value, the node's own
  ! its own, every other point the sentinel.
  integer function check(a, round, f, k0, d, what) result(nbad)
    real, intent(in) :: a(:,:,:)
    integer, intent(in) :: round, f, k0, d
    character(len=*), intent(in) :: what
    integer :: i, j, k, gx, gy, lo(2), hi(2), sx, sy
    real :: want
    logical :: face
    call box(me, lo, hi)
    nbad = 0
    do j = 1, size(a, 3)
      do i = 1, size(a, 2)
        gx = i + k0 - 1 + i0(me)
        gy = j + k0 - 1 + j0(me)
        sx = merge(1, 0, gx < lo(1) .or. gx > hi(1))
        sy = merge(1, 0, gy < lo(2) .or. gy > hi(2))
        face = sx + sy == 1 .and. gx >= lo(1) - d .and. gx <= hi(1) + d .and. &
             gy >= lo(2) - d .and. gy <= hi(2) + d .and. owner(gx, gy) > 0
        if (face) received = received + 1
        do k = 1, size(a, 1)
          want = SENTINEL
          if (owner(gx, gy) == me .or. face) want = val(round, f, k + k0 - 1, gx, gy)
          if (a(k, i, j) /= want) then
            nbad = nbad + 1
            if (nbad <= 3) write(*, '(a, i0, 3a, i0, a, 3(1x, i0), 2(a, f0.1))') 'rank ', rank, &
                 ' ', what, ' field ', f, ' point (k,x,y)', k + k0 - 1, gx, gy, ': ', &
                 a(k, i, j), ' want ', want
          end if
        end do
      end do
    end do
  end function check

  ! Node p's box widened to the domain's boundary rows it touches
  subroutine box(p, lo, hi)
    integer, intent(in) :: p
    integer, intent(out) :: lo(2), hi(2)
    lo = [xb(p), yb(p)]
    hi = [xe(p), ye(p)]
    if (lo(1) == 2) lo(1) = 1
    if (lo(2) == 2) lo(2) = 1
    if (hi(1) == NNXP - 1) hi(1) = NNXP
    if (hi(2) == NNYP - 1) hi(2) = NNYP
  end subroutine box

  ! The node whose widened box holds global point (gx, gy); 0 for none
  integer function owner(gx, gy)
    integer, intent(in) :: gx, gy
    integer :: lo(2, nmachs), hi(2, nmachs), p
    do p = 1, nmachs
      call box(p, lo(:, p), hi(:, p))
    end do
    ! (boxes do not overlap: at most one holds the point)
    owner = findloc(lo(1, :) <= gx .and. gx <= hi(1, :) .and. lo(2, :) <= gy .and. &
         gy <= hi(2, :), .true., dim=1)
  end function owner
end program test_brams_modcomm
