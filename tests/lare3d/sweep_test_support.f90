!> Shared by the Lare3d and EPOCH drop-in tests: options, the transport loop (HALOSWAP_TRANSPORT
!! set before each transport), and the analytic oracle of the sweep codes' forward exchange.
!! Values: an owned point holds F(field, global index); any other point a stale marker
!! S(field, rank, local index). After a sweep (x, y, z over the whole allocated extent, nothing
!! received on a side without a neighbour) a point holds the initial value of the point it
!! traces back to, axis by axis: F when that point is owned on every axis, else its marker.
module sweep_test_support
  use, intrinsic :: iso_c_binding
  use mpi
  use transport_loop, only: set_transport => transport_set, transport_usable, transport_list
  implicit none
  private

  !> Staggering along an axis: cell-centred, node (upper rank owns the shared plane), face
  !> (lower rank owns it).
  integer, parameter, public :: ST_CELL = 0, ST_NODE = 1, ST_FACE = 2

  type, public :: test_options
     integer :: global(3) = 0, procs(3) = 0, ntransport = 0, nmay = 0, bench = 0, ng = 0
     character(len=64) :: transport(32), may(8)
     character(len=64) :: error = ''
  end type test_options

  !> The process grid of one configuration.
  type, public :: test_grid
     integer :: cart = MPI_COMM_NULL
     integer :: procs(3) = 1, coord(3) = 0, periodic(3) = 0, global(3) = 0, n(3) = 0
     integer :: order(3) = [1, 2, 3]   ! order(k): grid axis of Cartesian dimension k
     integer :: cells(0:63, 3) = 0, off(0:63, 3) = 0  ! per coordinate along each axis
  end type test_grid

  type(test_grid), public :: g
  integer, public :: support_failures = 0
  !> Transports skipped as not usable here: the launch then exits with 77 (CTest: skipped).
  integer, public :: support_skips = 0

  public :: parse_options, select_transport, set_transport, grid_init, grid_set_cells, ncell, offset, rank_of, &
       initial, swept, trace, owned, fval, report

contains

  !> --global X,Y,Z  --procs X,Y,Z (0: MPI_Dims_create)  --transport T (repeatable; default
  !> every registered one less --except T: transport_list)  --may-be-unusable T  --error NAME
  !> --bench N  --ng N
  subroutine parse_options(opt, global)
    type(test_options), intent(out) :: opt
    integer, intent(in) :: global(3)
    character(len=64) :: arg, val
    integer :: i, n
    opt%global = global
    i = 1
    n = command_argument_count()
    do while (i <= n)
      call get_command_argument(i, arg)
      val = ''
      if (i < n) call get_command_argument(i + 1, val)
      select case (trim(arg))
      case ('--global'); read(val, *) opt%global
      case ('--procs'); read(val, *) opt%procs
      case ('--bench'); read(val, *) opt%bench
      case ('--ng'); read(val, *) opt%ng
      case ('--error'); opt%error = val
      case ('--except', '--share')   ! read by transport_list
      case ('--transport')
        opt%ntransport = opt%ntransport + 1
        opt%transport(opt%ntransport) = val
      case ('--may-be-unusable')
        opt%nmay = opt%nmay + 1
        opt%may(opt%nmay) = val
      case default
        write(*, '(a)') 'unknown option ' // trim(arg)
        error stop 2
      end select
      i = i + 2
    end do
    if (opt%ntransport == 0) then
      call transport_list(opt%transport, opt%ntransport)
      ! auto times its candidates for every plan: two of them keep it fast.
      do i = 1, opt%ntransport
        if (opt%transport(i)(1:5) == 'auto:') &
             opt%transport(i) = trim(opt%transport(i)) // ',candidates=p2p+shm'
      end do
    end if
  end subroutine parse_options

  !> Makes transport t the one HALOSWAP_TRANSPORT names; .false. if it cannot run here (a
  !> failure unless --may-be-unusable names it; then "SKIP" is printed).
  logical function select_transport(opt, t)
    type(test_options), intent(in) :: opt
    integer, intent(in) :: t
    character(len=256) :: reason
    integer :: rank, ierr
    call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
    select_transport = transport_usable(trim(opt%transport(t)), reason)
    if (select_transport) return
    if (any(opt%may(1:opt%nmay) == opt%transport(t))) then
      support_skips = support_skips + 1
      if (rank == 0) write(*, '(a)') 'SKIP: transport ' // trim(opt%transport(t)) // &
           ' not usable here: ' // trim(reason)
    else
      if (rank == 0) write(*, '(a)') 'FAIL: transport ' // trim(opt%transport(t)) // &
           ' not usable: ' // trim(reason)
      support_failures = support_failures + 1
    end if
  end function select_transport

  !> The grid of cart: procs, this rank's coordinates and periodic flags per axis (x, y, z),
  !> the global cells, order(k) = grid axis of Cartesian dimension k. The split puts the
  !> extra cells on the high ranks (Lare3d and EPOCH).
  subroutine grid_init(gr, cart, procs, coord, periodic, global, order)
    type(test_grid), intent(out) :: gr
    integer, intent(in) :: cart, procs(3), coord(3), periodic(3), global(3), order(3)
    integer :: a, c, q, rem
    gr%cart = cart
    gr%procs = procs
    gr%coord = coord
    gr%periodic = periodic
    gr%global = global
    gr%order = order
    do a = 1, 3
      q = global(a) / procs(a)
      rem = global(a) - q * procs(a)
      do c = 0, procs(a) - 1
        gr%cells(c, a) = merge(q + 1, q, c >= procs(a) - rem)
        if (c > 0) gr%off(c, a) = gr%off(c - 1, a) + gr%cells(c - 1, a)
      end do
      gr%n(a) = gr%cells(coord(a), a)
    end do
  end subroutine grid_init

  !> Other cells per coordinate along axis a (EPOCH's load balancing moves cells between ranks).
  subroutine grid_set_cells(gr, a, cells)
    type(test_grid), intent(inout) :: gr
    integer, intent(in) :: a, cells(0:)
    integer :: c
    gr%cells(0:gr%procs(a) - 1, a) = cells(0:gr%procs(a) - 1)
    do c = 1, gr%procs(a) - 1
      gr%off(c, a) = gr%off(c - 1, a) + gr%cells(c - 1, a)
    end do
    gr%n(a) = gr%cells(gr%coord(a), a)
  end subroutine grid_set_cells

  pure integer function ncell(gr, a, c)
    type(test_grid), intent(in) :: gr
    integer, intent(in) :: a, c
    ncell = gr%cells(c, a)
  end function ncell

  pure integer function offset(gr, a, c)
    type(test_grid), intent(in) :: gr
    integer, intent(in) :: a, c
    offset = gr%off(c, a)
  end function offset

  ! Cartesian rank: row-major over the dimensions (the last varies fastest).
  pure integer function rank_of(gr, coord)
    type(test_grid), intent(in) :: gr
    integer, intent(in) :: coord(3)
    integer :: k
    rank_of = 0
    do k = 1, 3
      rank_of = rank_of * gr%procs(gr%order(k)) + coord(gr%order(k))
    end do
  end function rank_of

  !> Whether point i along axis a of the rank at coordinate c is its own (not a copy).
  pure logical function owned(gr, st, a, c, i)
    type(test_grid), intent(in) :: gr
    integer, intent(in) :: st, a, c, i
    integer :: n
    n = ncell(gr, a, c)
    select case (st)
    case (ST_NODE)
      owned = (i >= 0 .and. i <= n - 1) .or. (i == n .and. c == gr%procs(a) - 1 .and. &
           gr%periodic(a) == 0)
    case (ST_FACE)
      owned = (i >= 1 .and. i <= n) .or. (i == 0 .and. c == 0 .and. gr%periodic(a) == 0)
    case default
      owned = i >= 1 .and. i <= n
    end select
  end function owned

  !> One axis of the sweep: where the value of point i at coordinate c comes from (a point
  !> received from a neighbour moves there; otherwise it stays).
  pure subroutine trace(gr, st, a, c, i)
    type(test_grid), intent(in) :: gr
    integer, intent(in) :: st, a
    integer, intent(inout) :: c, i
    integer :: n, cl, cu, lo_edge, hi_edge
    logical :: has_lo, has_hi
    n = ncell(gr, a, c)
    has_lo = c > 0 .or. gr%periodic(a) /= 0
    has_hi = c < gr%procs(a) - 1 .or. gr%periodic(a) /= 0
    cl = modulo(c - 1, gr%procs(a))
    cu = modulo(c + 1, gr%procs(a))
    select case (st)
    case (ST_NODE)   ! receives below 0, and the shared plane n and above
      lo_edge = -1; hi_edge = n
    case (ST_FACE)   ! receives the shared face 0 and below, and above n
      lo_edge = 0; hi_edge = n + 1
    case default
      lo_edge = 0; hi_edge = n + 1
    end select
    if (i <= lo_edge .and. has_lo) then
      i = i + ncell(gr, a, cl)
      c = cl
    else if (i >= hi_edge .and. has_hi) then
      i = i - n
      c = cu
    end if
  end subroutine trace

  !> F: distinct for every field and global point, exact in double precision.
  pure real(c_double) function fval(f, gidx)
    integer, intent(in) :: f, gidx(3)
    fval = 1.0d0 + f * 1.0d9 + gidx(1) * 1.0d6 + gidx(2) * 1.0d3 + gidx(3)
  end function fval

  !> Initial value of point idx of field f on the rank at coordinate coord.
  pure real(c_double) function initial(gr, f, st, coord, idx)
    type(test_grid), intent(in) :: gr
    integer, intent(in) :: f, st(3), coord(3), idx(3)
    integer :: a, gidx(3)
    logical :: own
    own = .true.
    do a = 1, 3
      own = own .and. owned(gr, st(a), a, coord(a), idx(a))
      gidx(a) = offset(gr, a, coord(a)) + idx(a)
    end do
    if (own) then
      initial = fval(f, gidx)
    else
      initial = -(1.0d0 + f + 20.0d0 * (rank_of(gr, coord) + 10.0d0 * ((idx(1) + 10) + &
           100.0d0 * ((idx(2) + 10) + 100.0d0 * (idx(3) + 10)))))
    end if
  end function initial

  !> Value of point idx of field f on this rank after a sweep over the axes in order.
  pure real(c_double) function swept(gr, f, st, idx, order)
    type(test_grid), intent(in) :: gr
    integer, intent(in) :: f, st(3), idx(3), order(:)
    integer :: c(3), i(3), s
    c = gr%coord
    i = idx
    do s = 1, size(order)
      call trace(gr, st(order(s)), order(s), c(order(s)), i(order(s)))
    end do
    swept = initial(gr, f, st, c, i)
  end function swept

  !> Sums failures over the ranks; rank 0 prints the verdict; a failure stops with code 1.
  subroutine report(failures, checked, what)
    integer, intent(in) :: failures, checked
    character(len=*), intent(in) :: what
    integer :: tot(2), mine(2), rank, ierr
    mine = [failures + support_failures, checked]
    call MPI_ALLREDUCE(mine, tot, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
    if (rank == 0) write(*, '(a,i0,a,i0,a,i0,a)') what // ': ', tot(2), ' points checked, ', &
         tot(1), ' wrong, ', support_skips, ' transport runs skipped'
    if (tot(1) > 0 .or. tot(2) == 0) then
      call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine report

end module sweep_test_support
