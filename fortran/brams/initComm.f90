! haloswap's drop-in for BRAMS's src/brams/comm/initComm.f90 (module ModComm; docs/brams.md):
! the same module and public routines, with the halos of the RK3 dynamics exchanged by haloswap.
!
! What the module does (BRAMS's and this one): initExtraComm records the node boxes (RAMS's slab
! and block split) and which domain walls each node touches (border); commHalo fills four arrays
! extended by 3 points on every side (-2:mzp+3, -2:mxp+3, -2:myp+3; the RK3 advection) with the
! 3 columns or rows past the node's interior on each side that has a neighbour, over the whole
! extended column (the vertical halo travels with its point) and over the node's own rows or
! columns only, no corners, the domain's boundary rows included where the node touches them;
! commHaloAcou does the same at depth 1 on one (mzp,mxp,myp) array. Here each is one haloswap
! plan, made at its first call (collective: every node calls in the same order) and kept:
!  - a box decomposition of the node boxes widened to the domain's boundary rows (the node
!    next to a wall owns its row there), as the drop-in ModMessageSet.f90 makes it;
!  - the star stencil (faces only: no corners), depth 3 (commHalo) or 1 (commHaloAcou) in x, y;
!  - each point's whole column as components (z is never split);
!  - the arrays of each call passed per swap (BRAMS allocates them per call);
!  - the transport from HALOSWAP_TRANSPORT, as for the other drop-ins.
! Before a plan is made, the points BRAMS's own message rules fill on this node, and from whom,
! are compared with the plan's face halo: a split where they differ stops the run (not served).
! BRAMS's message tables (send, receive) are not kept: haloswap's plans replace them.
! Errors stop through BRAMS's fatal_error naming the routine, the argument and the bounds.
module ModComm
  use, intrinsic :: iso_c_binding
  use mpi_f08, only: MPI_Comm, MPI_COMM_WORLD, MPI_Allreduce, MPI_IN_PLACE, MPI_INTEGER, MPI_MAX
  use haloswap, only: halo_communication_type, haloswap_decomposition, HALOSWAP_OK, &
       haloswap_error_message, finalise_halo_communication, haloswap_decomposition_free
  use haloswap_dropin, only: haloswap_dropin_at_finalize, haloswap_dropin_fail, &
       haloswap_dropin_check, haloswap_dropin_bounds, haloswap_dropin_swap, &
       itoa => haloswap_dropin_itoa
  use haloswap_geometry, only: haloswap_gfield, haloswap_geometry_init, &
       haloswap_decomposition_create_boxes, haloswap_get_bytes, HALOSWAP_LAYOUT_XYZ

  implicit none
  private
  public :: initExtraComm, nMess, copyMyPart, commHalo, border, north, south, west, east, &
       commHaloAcou, expandBorder

  ! sides, as BRAMS numbers them (north is the low-y side: RAMS's rows count from the north)
  integer, parameter :: west = 1, east = 2, north = 3, south = 4

  integer, allocatable :: nMess(:)       ! BRAMS's messages per node (each way)
  logical, allocatable :: border(:,:)    ! (node, side): the node touches the domain's wall

  ! the split: node interiors (global points) and local offsets, as initExtraComm got them
  integer :: nmachs_ = 0, myNum_ = 0, nx = 0, ny = 0
  integer, allocatable :: ib(:), ie(:), jb(:), je(:), i0(:), j0(:), mx(:), my(:), mz(:)

  ! one plan per routine: the array bounds it serves and arrays registered at its creation
  ! (each swap passes the call's own)
  type Halo
     integer :: state = 0                  ! 0: not made; 1: made
     integer :: lb(3) = 0, ub(3) = 0
     type(halo_communication_type) :: hs
  end type Halo
  type(Halo), save :: plan3, plan1
  real(c_float), allocatable, target, save :: reg3(:,:,:,:), reg1(:,:,:)
  type(haloswap_decomposition), save :: boxes
  logical, save :: haveBoxes = .false.

contains

  ! initExtraComm: the split of grid 1 (node boxes ixb..ixe x iyb..iye, offsets nodei0/j0,
  ! extents nodemxp..) and the walls each node touches. Every node gets the same arrays.
  subroutine initExtraComm(nmachs, mynum, GhostZoneLength, nnxp, nnyp, nnzp, ixb, ixe, iyb, &
       iye, master_num, nodei0, nodej0, nodemxp, nodemyp, nodemzp)
    integer, parameter :: ngrid = 1
    integer, intent(in) :: nmachs, mynum, GhostZoneLength, master_num
    integer, intent(in) :: nnxp(ngrid), nnyp(ngrid), nnzp(ngrid)
    integer, intent(in) :: ixb(nmachs, ngrid), ixe(nmachs, ngrid), iyb(nmachs, ngrid), &
         iye(nmachs, ngrid), nodei0(nmachs, ngrid), nodej0(nmachs, ngrid), &
         nodemxp(nmachs, ngrid), nodemyp(nmachs, ngrid), nodemzp(nmachs, ngrid)
    character(len=*), parameter :: h = "ModComm::initExtraComm"
    integer :: p, unused
    unused = GhostZoneLength + master_num + nnzp(1) ! BRAMS's interface; not needed here
    call at_finalize() ! called again (the stand-in tests: another transport): plans afresh
    if (nmachs < 1 .or. mynum < 1 .or. mynum > nmachs) call fail(h, "mynum", mynum, 1, nmachs)
    nmachs_ = nmachs
    myNum_ = mynum
    nx = nnxp(1)
    ny = nnyp(1)
    if (allocated(ib)) deallocate(ib, ie, jb, je, i0, j0, mx, my, mz, nMess, border)
    ib = ixb(:, 1)
    ie = ixe(:, 1)
    jb = iyb(:, 1)
    je = iye(:, 1)
    i0 = nodei0(:, 1)
    j0 = nodej0(:, 1)
    mx = nodemxp(:, 1)
    my = nodemyp(:, 1)
    mz = nodemzp(:, 1)
    allocate(nMess(nmachs), border(nmachs, 4))
    nMess = 0
    border = .true. ! one node: every wall
    if (nmachs == 1) return
    do p = 1, nmachs
      ! the layout the exchanges assume: local point i is global i + nodei0, the interior is
      ! local 2..mxp-1, one ghost or boundary point on each side
      if (i0(p) /= ib(p) - 2) call fail(h, "nodei0(" // itoa(p) // ",1)", i0(p), ib(p) - 2, 0)
      if (j0(p) /= jb(p) - 2) call fail(h, "nodej0(" // itoa(p) // ",1)", j0(p), jb(p) - 2, 0)
      if (mx(p) /= ie(p) - ib(p) + 3) call fail(h, "nodemxp(" // itoa(p) // ",1)", mx(p), &
           ie(p) - ib(p) + 3, 0)
      if (my(p) /= je(p) - jb(p) + 3) call fail(h, "nodemyp(" // itoa(p) // ",1)", my(p), &
           je(p) - jb(p) + 3, 0)
      border(p, west) = i0(p) == 0
      border(p, east) = ie(p) + 1 == nx
      border(p, north) = j0(p) == 0
      border(p, south) = je(p) + 1 == ny
    end do
    do p = 1, nmachs
      nMess(p) = brams_messages(p)
    end do
  end subroutine initExtraComm

  ! copyMyPart: the node's (mzp,mxp,myp) arrays into the extended ones; level mzp+1 of the
  ! three mass fluxes is zero. Every other point of the extended arrays is left as it was.
  subroutine copyMyPart(scp, scr, ufx_local, vfx_local, wfx_local, ufx, vfx, wfx, mxp, myp, &
       mzp, isi, js, ks, mzi, mzpp3, mxi, mxpp3, myi, mypp3, vname)
    integer, intent(in) :: mxp, myp, mzp, isi, js, ks, mzi, mzpp3, mxi, mxpp3, myi, mypp3
    real, intent(in) :: scp(mzp, mxp, myp), ufx(mzp, mxp, myp), vfx(mzp, mxp, myp), &
         wfx(mzp, mxp, myp)
    real, intent(inout) :: scr(mzi:mzpp3, mxi:mxpp3, myi:mypp3), &
         ufx_local(mzi:mzpp3, mxi:mxpp3, myi:mypp3), vfx_local(mzi:mzpp3, mxi:mxpp3, myi:mypp3), &
         wfx_local(mzi:mzpp3, mxi:mxpp3, myi:mypp3)
    character(len=*), intent(in) :: vname
    character(len=*), parameter :: h = "ModComm::copyMyPart"
    if (mzi > 1 .or. mzpp3 < mzp + 1 .or. mxi > 1 .or. mxpp3 < mxp .or. myi > 1 .or. &
         mypp3 < myp) call fail(h, "scr (" // trim(vname) // ")", mzi, 1, mzp + 1, &
         haloswap_dropin_bounds([mzi, mxi, myi], [mzpp3, mxpp3, mypp3]) // &
         " does not hold " // haloswap_dropin_bounds([1, 1, 1], [mzp + 1, mxp, myp]))
    if (isi + js + ks < 0) return ! (advection directions: not needed for the copy)
    scr(1:mzp, 1:mxp, 1:myp) = scp
    ufx_local(1:mzp, 1:mxp, 1:myp) = ufx
    vfx_local(1:mzp, 1:mxp, 1:myp) = vfx
    wfx_local(1:mzp, 1:mxp, 1:myp) = wfx
    ufx_local(mzp + 1, 1:mxp, 1:myp) = 0.
    vfx_local(mzp + 1, 1:mxp, 1:myp) = 0.
    wfx_local(mzp + 1, 1:mxp, 1:myp) = 0.
  end subroutine copyMyPart

  ! expandBorder: the extended arrays past the node's edge points take those points' values
  ! (the scalar 3 deep, in x, y and z, its last point shifted by is/js/ks for a staggered one;
  ! the fluxes one deep on the sides BRAMS's scheme reads). BRAMS's RK3 advection
  ! (radvc_rk.f90) calls it only when its `variable` switch is off.
  subroutine expandBorder(mxp, myp, mzp, is, js, ks, mzi, mzpp3, mxi, mxpp3, myi, mypp3, &
       scr, ufx_local, vfx_local, wfx_local)
    integer, intent(in) :: mxp, myp, mzp, is, js, ks, mzi, mzpp3, mxi, mxpp3, myi, mypp3
    real, intent(inout) :: scr(mzi:mzpp3, mxi:mxpp3, myi:mypp3), &
         ufx_local(mzi:mzpp3, mxi:mxpp3, myi:mypp3), vfx_local(mzi:mzpp3, mxi:mxpp3, myi:mypp3), &
         wfx_local(mzi:mzpp3, mxi:mxpp3, myi:mypp3)
    integer :: d
    do d = 1, 3
      scr(:, 1 - d, :) = scr(:, 1, :)
      scr(:, mxp - 1 + is + d, :) = scr(:, mxp - 1 + is, :)
    end do
    ufx_local(:, 0, :) = ufx_local(:, 1, :)
    ufx_local(:, mxp + 1, :) = ufx_local(:, mxp, :)
    vfx_local(:, 0, :) = vfx_local(:, 1, :)
    wfx_local(:, 0, :) = wfx_local(:, 1, :)
    do d = 1, 3
      scr(:, :, 1 - d) = scr(:, :, 1)
      scr(:, :, myp - 1 + js + d) = scr(:, :, myp - 1 + js)
    end do
    ufx_local(:, :, 0) = ufx_local(:, :, 1)
    vfx_local(:, :, 0) = vfx_local(:, :, 1)
    vfx_local(:, :, myp + 1) = vfx_local(:, :, myp)
    wfx_local(:, :, 0) = wfx_local(:, :, 1)
    do d = 1, 3
      scr(1 - d, :, :) = scr(1, :, :)
      scr(mzp - 1 + ks + d, :, :) = scr(mzp - 1 + ks, :, :)
    end do
    ufx_local(0, :, :) = ufx_local(1, :, :)
    vfx_local(0, :, :) = vfx_local(1, :, :)
    wfx_local(0, :, :) = wfx_local(1, :, :)
    wfx_local(mzp + 1, :, :) = wfx_local(mzp, :, :)
  end subroutine expandBorder

  ! commHalo: the 3-deep halo of the four extended arrays (RK3 advection, radvc_rk.f90).
  subroutine commHalo(scr, ufx_local, vfx_local, wfx_local, mzi, mzpp3, mxi, mxpp3, myi, &
       mypp3, mxp, myp, mzp, myNum, nmachs, nodei0, nodej0, vname)
    integer, intent(in) :: mzi, mzpp3, mxi, mxpp3, myi, mypp3, mxp, myp, mzp, myNum, nmachs
    integer, intent(in) :: nodei0(nmachs, 1), nodej0(nmachs, 1)
    character(len=*), intent(in) :: vname
    real(c_float), intent(inout), target :: scr(mzi:mzpp3, mxi:mxpp3, myi:mypp3), &
         ufx_local(mzi:mzpp3, mxi:mxpp3, myi:mypp3), vfx_local(mzi:mzpp3, mxi:mxpp3, myi:mypp3), &
         wfx_local(mzi:mzpp3, mxi:mxpp3, myi:mypp3)
    character(len=*), parameter :: h = "ModComm::commHalo"
    type(c_ptr) :: a(4)
    if (nmachs == 1) return
    call check_call(h, vname, myNum, nmachs, mxp, myp, mzp, nodei0(myNum, 1), nodej0(myNum, 1))
    if (plan3%state == 0) then
      allocate(reg3(mzi:mzpp3, mxi:mxpp3, myi:mypp3, 4))
      reg3 = 0
      call make_plan(plan3, h, 3, [mzi, mxi, myi], [mzpp3, mxpp3, mypp3], 4)
    end if
    call check_bounds(plan3, h, vname, [mzi, mxi, myi], [mzpp3, mxpp3, mypp3])
    a = [c_loc(scr), c_loc(ufx_local), c_loc(vfx_local), c_loc(wfx_local)]
    call haloswap_dropin_check(haloswap_dropin_swap(plan3%hs, a), h // " (" // trim(vname) // &
         ")", brams_abort)
  end subroutine commHalo

  ! commHaloAcou: the 1-deep halo of one (mzp,mxp,myp) array (RK3 acoustic terms, raco.f90,
  ! rtimh_rk.F90).
  subroutine commHaloAcou(scr, mxp, myp, mzp, mynum, vname)
    integer, intent(in) :: mxp, myp, mzp, mynum
    character(len=*), intent(in) :: vname
    real(c_float), intent(inout), target :: scr(mzp, mxp, myp)
    character(len=*), parameter :: h = "ModComm::commHaloAcou"
    type(c_ptr) :: a(1)
    if (nmachs_ <= 1) then
      if (nmachs_ == 0) call fail(h, "ModComm", 0, 1, 1, "initExtraComm was never called")
      return
    end if
    call check_call(h, vname, mynum, nmachs_, mxp, myp, mzp, i0(mynum), j0(mynum))
    if (plan1%state == 0) then
      allocate(reg1(mzp, mxp, myp))
      reg1 = 0
      call make_plan(plan1, h, 1, [1, 1, 1], [mzp, mxp, myp], 1)
    end if
    call check_bounds(plan1, h, vname, [1, 1, 1], [mzp, mxp, myp])
    a(1) = c_loc(scr)
    call haloswap_dropin_check(haloswap_dropin_swap(plan1%hs, a), h // " (" // trim(vname) // &
         ")", brams_abort)
  end subroutine commHaloAcou

  ! The call's node and extents are initExtraComm's.
  subroutine check_call(h, vname, num, nmachs, mxp, myp, mzp, oi, oj)
    character(len=*), intent(in) :: h, vname
    integer, intent(in) :: num, nmachs, mxp, myp, mzp, oi, oj
    character(len=:), allocatable :: v
    v = " (" // trim(vname) // ")"
    if (nmachs_ == 0) call fail(h, "ModComm", 0, 1, 1, "initExtraComm was never called")
    if (nmachs /= nmachs_) call fail(h, "nmachs" // v, nmachs, nmachs_, nmachs_)
    if (num /= myNum_) call fail(h, "myNum" // v, num, myNum_, myNum_)
    if (mxp /= mx(num)) call fail(h, "mxp" // v, mxp, mx(num), mx(num))
    if (myp /= my(num)) call fail(h, "myp" // v, myp, my(num), my(num))
    if (mzp /= mz(num)) call fail(h, "mzp" // v, mzp, mz(num), mz(num))
    if (oi /= i0(num)) call fail(h, "nodei0" // v, oi, i0(num), i0(num))
    if (oj /= j0(num)) call fail(h, "nodej0" // v, oj, j0(num), j0(num))
  end subroutine check_call

  ! Later calls pass arrays of the bounds the plan was made for.
  subroutine check_bounds(pl, h, vname, lb, ub)
    type(Halo), intent(in) :: pl
    character(len=*), intent(in) :: h, vname
    integer, intent(in) :: lb(3), ub(3)
    if (any(lb /= pl%lb) .or. any(ub /= pl%ub)) call fail(h, "scr (" // trim(vname) // ")", &
         0, 0, 0, "bounds " // haloswap_dropin_bounds(lb, ub) // " differ from the first " // &
         "call's " // haloswap_dropin_bounds(pl%lb, pl%ub) // " (its plan's)")
  end subroutine check_bounds

  ! The plan of depth d over nf arrays with bounds lb..ub (z, x, y; local indices, the node's
  ! interior at 2..mxp-1, 2..myp-1), collectively.
  subroutine make_plan(pl, h, d, lb, ub, nf)
    type(Halo), intent(inout) :: pl
    character(len=*), intent(in) :: h
    integer, intent(in) :: d, lb(3), ub(3), nf
    type(haloswap_gfield) :: gf(nf)
    integer :: lo(2), hi(2), hx, hy, f, ierr, nrecv, want, w(1)
    real(c_double) :: bytes(3)
    character(len=200) :: why
    call split_check(d, nrecv, why)
    w = merge(1, 0, why /= "")
    call MPI_Allreduce(MPI_IN_PLACE, w, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
    if (w(1) /= 0) then
      if (why == "") why = "another node's points differ (its message says which)"
      call haloswap_dropin_fail(h, "the split is not served: " // trim(why), brams_abort)
    end if
    call node_box(myNum_, lo, hi)
    if (.not. haveBoxes) call make_boxes(h)
    ! the halo below the interior per dimension (z: the whole column as components)
    hx = lo(1) - (i0(myNum_) + lb(2))
    hy = lo(2) - (j0(myNum_) + lb(3))
    ! (nothing is received past a wall, where the node arrays end at the boundary row)
    if (min(hx, ub(2) + i0(myNum_) - hi(1), hy, ub(3) + j0(myNum_) - hi(2)) < 0 .or. &
         (hx < d .and. .not. border(myNum_, west)) .or. &
         (ub(2) + i0(myNum_) - hi(1) < d .and. .not. border(myNum_, east)) .or. &
         (hy < d .and. .not. border(myNum_, north)) .or. &
         (ub(3) + j0(myNum_) - hi(2) < d .and. .not. border(myNum_, south))) call fail(h, "scr", d, d, d, "bounds " // &
         haloswap_dropin_bounds(lb, ub) // " hold less than the depth of " // itoa(d) // &
         " past the node's points " // haloswap_dropin_bounds([lo(1) - i0(myNum_), &
         lo(2) - j0(myNum_)], [hi(1) - i0(myNum_), hi(2) - j0(myNum_)]) // " (x, y)")
    do f = 1, nf
      if (nf == 1) then
        gf(f) = haloswap_gfield(reg1, [0, hx, hy], HALOSWAP_LAYOUT_XYZ, .true.)
      else
        gf(f) = haloswap_gfield(reg3(:, :, :, f), [0, hx, hy], HALOSWAP_LAYOUT_XYZ, .true.)
      end if
    end do
    call haloswap_geometry_init(pl%hs, boxes, gf, [d, d, 0], .false., ierr)
    call haloswap_dropin_check(ierr, h // " (plan of depth " // itoa(d) // ")", brams_abort)
    pl%state = 1
    pl%lb = lb
    pl%ub = ub
    ! the plan moves what BRAMS's messages move: the same points into this node
    call haloswap_get_bytes(pl%hs, bytes(1), bytes(2), bytes(3), ierr)
    want = nrecv * nf * (ub(1) - lb(1) + 1) * 4
    if (nint(bytes(2)) /= want .or. bytes(3) /= 0) call fail(h, "plan", 0, 0, 0, "receives " &
         // itoa(nint(bytes(2))) // " bytes per swap, BRAMS's messages " // itoa(want) // &
         "; copies " // itoa(nint(bytes(3))) // " within the node, BRAMS's none")
  end subroutine make_plan

  ! The points BRAMS's message rules fill on this node at depth d, each with the node sending
  ! it, against the plan's face halo (the widened boxes' owners): why is empty when they are
  ! the same; nrecv counts the points.
  subroutine split_check(d, nrecv, why)
    integer, intent(in) :: d
    integer, intent(out) :: nrecv
    character(len=*), intent(out) :: why
    integer :: lo(2), hi(2), x, y, sx, sy, want, got, n
    integer :: map(-d:nx + d + 1, -d:ny + d + 1)
    why = ""
    call brams_map(myNum_, d, map, n)
    nrecv = count(map > 0)
    call node_box(myNum_, lo, hi)
    do y = lbound(map, 2), ubound(map, 2)
      do x = lbound(map, 1), ubound(map, 1)
        sx = merge(1, 0, x < lo(1) .or. x > hi(1))
        sy = merge(1, 0, y < lo(2) .or. y > hi(2))
        want = 0
        if (sx + sy == 1 .and. x >= lo(1) - d .and. x <= hi(1) + d .and. y >= lo(2) - d .and. &
             y <= hi(2) + d) want = owner(x, y)
        got = map(x, y)
        if (got /= want) then
          write(why, "(a,i0,a,i0,a,i0,a,i0,a)") "at global point (", x, ",", y, &
               ") BRAMS's messages fill from node ", got, ", the face halo of the node boxes " // &
               "from node ", want, " (0: none, -1: two nodes)"
          return
        end if
      end do
    end do
  end subroutine split_check

  ! The node owning global point (x, y) in the widened boxes; 0 for none.
  integer function owner(x, y)
    integer, intent(in) :: x, y
    integer :: p, lo(2), hi(2)
    owner = 0
    do p = 1, nmachs_
      call node_box(p, lo, hi)
      if (x >= lo(1) .and. x <= hi(1) .and. y >= lo(2) .and. y <= hi(2)) owner = p
    end do
  end function owner

  ! Node p's box of global points, widened to the domain's boundary rows it touches.
  subroutine node_box(p, lo, hi)
    integer, intent(in) :: p
    integer, intent(out) :: lo(2), hi(2)
    lo = [ib(p), jb(p)]
    hi = [ie(p), je(p)]
    if (border(p, west)) lo(1) = 1
    if (border(p, north)) lo(2) = 1
    if (border(p, east)) hi(1) = nx
    if (border(p, south)) hi(2) = ny
  end subroutine node_box

  ! BRAMS's message rules (initComm.f90's fillSendReceive, read, not copied), as points of
  ! node q's plane filled at depth d: for nodes a < b,
  !  - a west of b (ixe(a)+1 = ixb(b), iye(a) >= iye(b), iyb(a) >= iyb(b)): a gets columns
  !    ixe(a)+1..ixe(a)+d from b over a's rows, b gets ixb(b)-d..ixb(b)-1 from a over b's rows,
  !    both widened to the boundary rows by a's walls;
  !  - a south of b (iye(a)+1 = iyb(b), columns overlapping in ib..ie): a gets rows
  !    iye(a)+1..iye(a)+d from b, b gets iyb(b)-d..iyb(b)-1 from a, over ib..ie widened by one
  !    column at a wall that a touches.
  ! map holds the sender (-1: two senders); n counts q's messages.
  subroutine brams_map(q, d, map, n)
    integer, intent(in) :: q, d
    integer, intent(inout) :: map(-d:, -d:)
    integer, intent(out) :: n
    integer :: a, b, r0, r1, c0, c1
    map = 0
    n = 0
    do a = 1, nmachs_
      do b = a + 1, nmachs_
        if (a /= q .and. b /= q) cycle
        if (ie(a) + 1 == ib(b) .and. je(a) >= je(b) .and. jb(a) >= jb(b)) then
          n = n + 1
          r0 = merge(1, 0, border(a, north))
          r1 = merge(1, 0, border(a, south))
          if (q == a) call fill(ie(a) + 1, ie(a) + d, jb(a) - r0, je(a) + r1, b)
          if (q == b) call fill(ib(b) - d, ib(b) - 1, jb(b) - r0, je(b) + r1, a)
        end if
      end do
    end do
    do a = 1, nmachs_
      do b = a + 1, nmachs_
        if (a /= q .and. b /= q) cycle
        if (je(a) + 1 == jb(b) .and. ie(a) >= ib(b) .and. ib(a) <= ie(b)) then
          n = n + 1
          c0 = max(ib(a), ib(b)) - merge(1, 0, border(a, west))
          c1 = min(ie(a), ie(b)) + merge(1, 0, border(a, east))
          if (q == a) call fill(c0, c1, je(a) + 1, je(a) + d, b)
          if (q == b) call fill(c0, c1, jb(b) - d, jb(b) - 1, a)
        end if
      end do
    end do
  contains
    subroutine fill(x0, x1, y0, y1, s)
      integer, intent(in) :: x0, x1, y0, y1, s
      integer :: x, y
      do y = max(y0, lbound(map, 2)), min(y1, ubound(map, 2))
        do x = max(x0, lbound(map, 1)), min(x1, ubound(map, 1))
          if (map(x, y) == 0 .or. map(x, y) == s) then
            map(x, y) = s
          else
            map(x, y) = -1
          end if
        end do
      end do
    end subroutine fill
  end subroutine brams_map

  ! Node p's messages each way under BRAMS's rules (nMess).
  integer function brams_messages(p) result(n)
    integer, intent(in) :: p
    integer :: map(-1:nx + 2, -1:ny + 2)
    call brams_map(p, 1, map, n)
  end function brams_messages

  ! The box decomposition of the widened node boxes (collective), freed at MPI_Finalize.
  subroutine make_boxes(h)
    character(len=*), intent(in) :: h
    integer :: lo(2), hi(2), ierr
    type(MPI_Comm) :: world
    world = MPI_COMM_WORLD
    call node_box(myNum_, lo, hi)
    call haloswap_decomposition_create_boxes(boxes, world, [nx, ny], lo, hi, ierr)
    call haloswap_dropin_check(ierr, h // " (box decomposition of the node boxes)", brams_abort)
    haveBoxes = .true.
    call haloswap_dropin_at_finalize("BRAMS_MODCOMM", ierr, teardown=at_finalize)
    call haloswap_dropin_check(ierr, h // " (at MPI_Finalize)", brams_abort)
  end subroutine make_boxes

  ! At MPI_Finalize (BRAMS has no call for it): the plans, then the decomposition, in the
  ! order every node made them (freeing is collective).
  subroutine at_finalize()
    integer :: ierr
    if (plan3%state == 1) call finalise_halo_communication(plan3%hs, ierr)
    if (plan1%state == 1) call finalise_halo_communication(plan1%hs, ierr)
    plan3%state = 0
    plan1%state = 0
    if (allocated(reg3)) deallocate(reg3)
    if (allocated(reg1)) deallocate(reg1)
    if (haveBoxes) call haloswap_decomposition_free(boxes, ierr)
    haveBoxes = .false.
  end subroutine at_finalize

  ! BRAMS's abort (utils/lib/parlibf.F90)
  subroutine brams_abort(msg)
    character(len=*), intent(in) :: msg
    call fatal_error(msg)
  end subroutine brams_abort

  ! Stops the run: "routine: argument is v, must be lo..hi" (hi < lo: "must be lo"), or with
  ! text, "routine: argument: text".
  subroutine fail(h, arg, v, lo, hi, text)
    character(len=*), intent(in) :: h, arg
    integer, intent(in) :: v, lo, hi
    character(len=*), intent(in), optional :: text
    if (present(text)) then
      call haloswap_dropin_fail(h, arg // ": " // text, brams_abort)
    else if (hi < lo .or. hi == lo) then
      call haloswap_dropin_fail(h, arg // " is " // itoa(v) // ", must be " // itoa(lo), &
           brams_abort)
    else
      call haloswap_dropin_fail(h, arg // " is " // itoa(v) // ", must be " // itoa(lo) // &
           ".." // itoa(hi), brams_abort)
    end if
  end subroutine fail

end module ModComm
