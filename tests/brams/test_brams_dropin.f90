! haloswap's BRAMS drop-in (fortran/brams/ModMessageSet.f90) on stand-ins of BRAMS's modules
! (standin/): BRAMS's message sets as its ModMessagePassing.f90 builds them, written again
! here -- the selected ghost zone (14 fields: 12 of (z,x,y), 2 of (x,y), the whole ring with
! the domain's boundary rows), and the acoustic sets U (west column), V (south row), P (east
! column and north row), UV and WP (ring with boundary rows) -- on a RAMS-style slab and block
! split (slabs of rows, each cut into blocks of columns, the first slabs one block more: at 3
! ranks one rank has two neighbours on a side). Each exchange runs as BRAMS runs it (U and V
! posted together, P completed after the others), twice, on every transport; then every
! point of every field is checked: the points a receive section lists hold their owner's
! value (from global coordinates), every other ghost point keeps its sentinel.
program test_brams_dropin
  use mpi_f08
  use transport_loop
  use ModMessageSet
  use ModNeighbourNodes, only: NeighbourNodes
  use ModDomainDecomp, only: DomainDecomp, RamsSplit
  use ModFieldSectionList, only: FieldSection, NextFieldSection
  use var_tables, only: var_tables_r
  implicit none

  integer, parameter :: NNXP = 26, NNYP = 22, NZ = 3, NF = 14
  real, parameter :: SENTINEL = -1.0
  integer :: rank, nmachs, me, nt, t, round, bad, received
  character(len=64) :: names(TL_MAX)
  integer, allocatable :: xb(:), xe(:), yb(:), ye(:)   ! GlobalNoGhost boxes
  type(DomainDecomp), pointer :: gwg
  type(NeighbourNodes), pointer :: neigh
  type(var_tables_r), target :: vt(NF)
  type SetPtr
    type(MessageSet), pointer :: p => null()
  end type SetPtr
  type(SetPtr) :: sel(2), u(2), v(2), p(2), uv(2), wp(2)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nmachs)
  me = rank + 1
  call split(nmachs)
  call grid()
  call fields()
  call transport_list(names, nt)
  do t = 1, nt
    if (.not. transport_begin(names(t), rank)) cycle
    ! fresh sets: their plans are made with this transport at their first post
    call make_sets()
    bad = 0
    received = 0
    do round = 1, 2
      call fill(round, [(t, t = 1, NF)])
      call PostRecvSendMsgs(sel(1)%p, sel(2)%p)
      call WaitRecvMsgs(sel(1)%p, sel(2)%p)
      bad = bad + check(round, sel(2)%p, [(t, t = 1, NF)], .true.)
      call fill(round, [1, 2])
      call PostRecvSendMsgs(u(1)%p, u(2)%p)
      call PostRecvSendMsgs(v(1)%p, v(2)%p)
      call WaitRecvMsgs(u(1)%p, u(2)%p)
      call WaitRecvMsgs(v(1)%p, v(2)%p)
      bad = bad + check(round, u(2)%p, [1], .false.) + check(round, v(2)%p, [2], .false.)
      call fill(round, [4])
      call PostRecvSendMsgs(p(1)%p, p(2)%p)
      call WaitRecvMsgs(p(1)%p, p(2)%p)
      bad = bad + check(round, p(2)%p, [4], .false.)
      call fill(round, [1, 2, 3, 4])
      call PostRecvSendMsgs(uv(1)%p, uv(2)%p)
      call WaitRecvMsgs(uv(1)%p, uv(2)%p)
      call PostRecvSendMsgs(wp(1)%p, wp(2)%p)
      call WaitRecvMsgs(wp(1)%p, wp(2)%p)
      bad = bad + check(round, uv(2)%p, [1, 2], .true.) + check(round, wp(2)%p, [3, 4], .true.)
    end do
    ! the oracle must also see points arrive (none at one rank)
    call transport_end_summed(names(t), rank, nmachs, bad, received, "selected ghost zone " // &
         "(14 fields), U, V, P, UV, WP, twice, every point")
  end do
  call transport_finish("test_brams_dropin", rank, .false.)

contains

  ! RAMS-style split (the stand-in ModDomainDecomp's)
  subroutine split(n)
    integer, intent(in) :: n
    call RamsSplit(NNXP, NNYP, n, xb, xe, yb, ye)
  end subroutine split

  ! GlobalWithGhost (the boxes with one ghost point, within the domain) and the neighbours:
  ! the nodes whose ghost box meets this one's box or the other way round (BRAMS's rule).
  subroutine grid()
    integer :: k, cnt
    logical :: isn(nmachs)
    allocate(gwg)
    gwg%GhostZoneLength = 1
    gwg%xb = max(xb - 1, 1)
    gwg%xe = min(xe + 1, NNXP)
    gwg%yb = max(yb - 1, 1)
    gwg%ye = min(ye + 1, NNYP)
    gwg%nx = gwg%xe - gwg%xb + 1
    gwg%ny = gwg%ye - gwg%yb + 1
    do k = 1, nmachs
      isn(k) = k /= me .and. (meets(xb(me), xe(me), yb(me), ye(me), gwg%xb(k), gwg%xe(k), &
           gwg%yb(k), gwg%ye(k)) .or. meets(xb(k), xe(k), yb(k), ye(k), gwg%xb(me), &
           gwg%xe(me), gwg%yb(me), gwg%ye(me)))
    end do
    neigh => null()
    if (count(isn) == 0) return
    allocate(neigh)
    neigh%nNeigh = count(isn)
    allocate(neigh%neigh(neigh%nNeigh))
    cnt = 0
    do k = 1, nmachs
      if (.not. isn(k)) cycle
      cnt = cnt + 1
      neigh%neigh(cnt) = k
    end do
  end subroutine grid

  logical function meets(a0, a1, b0, b1, c0, c1, d0, d1)
    integer, intent(in) :: a0, a1, b0, b1, c0, c1, d0, d1
    meets = max(a0, c0) <= min(a1, c1) .and. max(b0, d0) <= min(b1, d1)
  end function meets

  ! UP, VP, WP, PP and 8 more of (z,x,y), 2 of (x,y); local arrays over the ghost box
  subroutine fields()
    integer :: f, mx, my
    character(len=4), parameter :: first(4) = ['UP  ', 'VP  ', 'WP  ', 'PP  ']
    mx = gwg%nx(me)
    my = gwg%ny(me)
    do f = 1, NF
      if (f <= 4) then
        vt(f)%name = first(f)
      else
        write(vt(f)%name, '(a, i0)') 'F', f
      end if
      if (f <= 12) then
        vt(f)%idim_type = 3
        allocate(vt(f)%var_p_3D(NZ, mx, my))
      else
        vt(f)%idim_type = 2
        allocate(vt(f)%var_p_2D(mx, my))
      end if
    end do
  end subroutine fields

  ! One (send, receive) pair as BRAMS builds it: each node updates its regions of `want`
  ! (global bounds per node, up to two regions: BRAMS's union for P); the messages carry the
  ! intersection with the sender's box, widened to the domain's boundary rows if `widen`.
  subroutine make_pair(name, tag, want, nwant, widen, flist, pair)
    character(len=*), intent(in) :: name
    integer, intent(in) :: tag, want(:,:,:), nwant, flist(:)
    logical, intent(in) :: widen
    type(SetPtr), intent(inout) :: pair(2)
    type(var_tables_r), pointer :: vp
    integer :: s(4, nmachs), r(4, nmachs), i, w, f, o
    logical :: ws(nmachs), wr(nmachs)
    ws = .false.
    wr = .false.
    do i = 1, nneigh()
      o = neigh%neigh(i)
      do w = 1, nwant ! (BRAMS stops if two regions meet the same neighbour's box)
        if (.not. ws(i)) call inter(want(:, w, o), [xb(me), xe(me), yb(me), ye(me)], &
             s(:, i), ws(i))
        if (.not. wr(i)) call inter(want(:, w, me), [xb(o), xe(o), yb(o), ye(o)], r(:, i), &
             wr(i))
      end do
      if (widen) then
        call widened(s(:, i))
        call widened(r(:, i))
      end if
    end do
    pair(1)%p => null()
    pair(2)%p => null()
    if (.not. associated(neigh)) return ! one rank: BRAMS makes no sets
    pair(1)%p => CreateMessageSet('Send' // name, tag, ws(1:nneigh()), neigh)
    pair(2)%p => CreateMessageSet('Recv' // name, tag, wr(1:nneigh()), neigh)
    do f = 1, size(flist)
      vp => vt(flist(f))
      call InsertFieldSectionAtMessageSet(me, vp, neigh, gwg, s(1, :), s(2, :), s(3, :), &
           s(4, :), ws(1:nneigh()), pair(1)%p)
      call InsertFieldSectionAtMessageSet(me, vp, neigh, gwg, r(1, :), r(2, :), r(3, :), &
           r(4, :), wr(1:nneigh()), pair(2)%p)
    end do
  end subroutine make_pair

  integer function nneigh()
    nneigh = 0
    if (associated(neigh)) nneigh = neigh%nNeigh
  end function nneigh

  ! a's box (xb, xe, yb, ye) meets b's: their common box
  subroutine inter(a, b, c, has)
    integer, intent(in) :: a(4), b(4)
    integer, intent(out) :: c(4)
    logical, intent(out) :: has
    c = [max(a(1), b(1)), min(a(2), b(2)), max(a(3), b(3)), min(a(4), b(4))]
    has = c(1) <= c(2) .and. c(3) <= c(4)
  end subroutine inter

  ! BRAMS's IncludeDomainBoundaries: a region starting or ending next to the domain's
  ! boundary rows takes them in
  subroutine widened(c)
    integer, intent(inout) :: c(4)
    if (c(1) == 2) c(1) = 1
    if (c(2) == NNXP - 1) c(2) = NNXP
    if (c(3) == 2) c(3) = 1
    if (c(4) == NNYP - 1) c(4) = NNYP
  end subroutine widened

  ! The sets of ModMessagePassing.f90: regions each node updates, global bounds per node
  subroutine make_sets()
    integer :: want(4, 2, nmachs), k
    want = 0
    do k = 1, nmachs ! the whole ghost ring
      want(:, 1, k) = [gwg%xb(k), gwg%xe(k), gwg%yb(k), gwg%ye(k)]
    end do
    call make_pair('SelectedGhostZone', 1, want, 1, .true., [(k, k = 1, NF)], sel)
    call make_pair('UV', 25, want, 1, .true., [1, 2], uv)
    call make_pair('WP', 26, want, 1, .true., [3, 4], wp)
    do k = 1, nmachs ! U: the west ghost column of the node's rows
      want(:, 1, k) = [xb(k) - 1, xb(k) - 1, yb(k), ye(k)]
    end do
    call make_pair('U', 22, want, 1, .false., [1], u)
    do k = 1, nmachs ! V: the south ghost row of the node's columns
      want(:, 1, k) = [xb(k), xe(k), yb(k) - 1, yb(k) - 1]
    end do
    call make_pair('V', 23, want, 1, .false., [2], v)
    do k = 1, nmachs ! P: the east ghost column and the north ghost row
      want(:, 1, k) = [xe(k) + 1, xe(k) + 1, yb(k), ye(k)]
      want(:, 2, k) = [xb(k), xe(k), ye(k) + 1, ye(k) + 1]
    end do
    call make_pair('P', 24, want, 2, .false., [4], p)
  end subroutine make_sets

  ! The value of field f at global point (gx, gy), level k, in round `round` (exact in
  ! single precision)
  real function val(round, f, k, gx, gy)
    integer, intent(in) :: round, f, k, gx, gy
    val = real((((round * 16 + f) * 4 + k) * 32 + gx) * 32 + gy)
  end function val

  ! Fields fl: the points this node computes (its box and the domain's boundary rows next to
  ! it) get their values, every other (ghost) point the sentinel
  subroutine fill(round, fl)
    integer, intent(in) :: round, fl(:)
    integer :: i, f, x, y, gx, gy, k
    do i = 1, size(fl)
      f = fl(i)
      do y = 1, gwg%ny(me)
        do x = 1, gwg%nx(me)
          gx = x + gwg%xb(me) - 1
          gy = y + gwg%yb(me) - 1
          do k = 1, NZ
            if (owns(gx, gy)) then
              call put(f, k, x, y, val(round, f, k, gx, gy))
            else
              call put(f, k, x, y, SENTINEL)
            end if
          end do
        end do
      end do
    end do
  end subroutine fill

  logical function owns(gx, gy)
    integer, intent(in) :: gx, gy
    owns = (gx >= xb(me) .or. gx == 1) .and. (gx <= xe(me) .or. gx == NNXP) .and. &
         (gy >= yb(me) .or. gy == 1) .and. (gy <= ye(me) .or. gy == NNYP)
  end function owns

  subroutine put(f, k, x, y, a)
    integer, intent(in) :: f, k, x, y
    real, intent(in) :: a
    if (associated(vt(f)%var_p_3D)) then
      vt(f)%var_p_3D(k, x, y) = a
    else if (k == 1) then
      vt(f)%var_p_2D(x, y) = a
    end if
  end subroutine put

  real function get(f, k, x, y)
    integer, intent(in) :: f, k, x, y
    if (associated(vt(f)%var_p_3D)) then
      get = vt(f)%var_p_3D(k, x, y)
    else
      get = vt(f)%var_p_2D(x, y)
    end if
  end function get

  ! Wrong points of fields fl after the exchange of receive set rs (null: nothing received):
  ! the points its sections list (of each field) hold the owner's value, the node's own
  ! points theirs, every other point the sentinel
  integer function check(round, rs, fl, ring) result(nbad)
    integer, intent(in) :: round, fl(:)
    type(MessageSet), pointer :: rs
    logical, intent(in) :: ring
    type(FieldSection), pointer :: node
    logical :: got(NF, gwg%nx(me), gwg%ny(me))
    integer :: i, f, x, y, k, m, gx, gy, kz
    real :: want
    got = .false.
    if (associated(rs)) then
      do m = 1, rs%nMsgs
        node => null()
        do
          node => NextFieldSection(node, rs%oneMsg(m)%fieldList)
          if (.not. associated(node)) exit
          do f = 1, NF
            if (associated(node%vTabPtr, vt(f))) &
                 got(f, node%xStart:node%xEnd, node%yStart:node%yEnd) = .true.
          end do
        end do
      end do
    end if
    nbad = 0
    do i = 1, size(fl)
      f = fl(i)
      kz = merge(NZ, 1, associated(vt(f)%var_p_3D))
      do y = 1, gwg%ny(me)
        do x = 1, gwg%nx(me)
          gx = x + gwg%xb(me) - 1
          gy = y + gwg%yb(me) - 1
          do k = 1, kz
            want = SENTINEL
            if (owns(gx, gy) .or. got(f, x, y)) want = val(round, f, k, gx, gy)
            if (got(f, x, y)) received = received + 1
            if (get(f, k, x, y) /= want) then
              nbad = nbad + 1
              if (nbad <= 3) write(*, '(a, i0, 3a, 3(1x, i0), a, l1, 2(a, f0.1))') 'rank ', &
                   rank, ' field ', trim(vt(f)%name), ' point (k,x,y)', k, gx, gy, &
                   ' ring ', ring, ': ', get(f, k, x, y), ' want ', want
            end if
          end do
        end do
      end do
    end do
  end function check
end program test_brams_dropin
