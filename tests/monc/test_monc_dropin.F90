!> The haloswap drop-in for MONC's halo modules, driven like MONC's components drive it, on
!! the stand-in MONC core: every halo cell is checked against values computed from global
!! coordinates, and the callbacks' arguments against MONC's loops. Every registered transport
!! in one launch (tests/harness/transport_loop.f90: --only, --except), each with its own
!! verdict; an unusable one prints "SKIP:". --fault and --bench use HALOSWAP_TRANSPORT.
!! Layouts: 1 x N, N x 1 and MPI_Dims_create's 2-D grid of the ranks given.
program test_monc_dropin
  use, intrinsic :: iso_c_binding
  use mpi
  use datadefn_mod, only : DEFAULT_PRECISION
  use grids_mod, only : X_INDEX, Y_INDEX, Z_INDEX
  use state_mod, only : model_state_type
  use communication_types_mod, only : halo_communication_type, field_data_wrapper_type
  use halo_communication_mod, only : init_halo_communication, finalise_halo_communication, &
       initiate_nonblocking_halo_swap, complete_nonblocking_halo_swap, blocking_halo_swap, &
       get_single_field_per_halo_cell
  use monc_policies
  use transport_loop
  implicit none

  real(kind=DEFAULT_PRECISION), parameter :: SENTINEL = -999.0_DEFAULT_PRECISION
  integer, parameter :: NQ = 2
  integer :: NZ = 3, cells = 3, nbench = 0
  character(len=32) :: arg
  type(model_state_type), target :: st
  integer :: ierr, rank, nprocs, dims(2), layouts(2, 3), nl, l, failures, total, t, nt
  character(len=64) :: tname, tnames(TL_MAX)
  character(len=80) :: verdict
  integer :: tlen, tstat
  integer :: status
  integer :: expect(5, 4096), nexp

  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call get_environment_variable("HALOSWAP_TRANSPORT", tname, tlen, tstat)
  if (tstat /= 0) tname = "p2p"

  ! --bench N: time N prognostic swaps (MONC's start-of-timestep swap) on a larger grid.
  ! --fault KIND: the last rank makes a mistake in a prognostic swap while the others swap
  ! correctly (tests/faults): the drop-in stops the run on every rank, as MONC's LOG_ERROR
  ! does, with the reason; no rank is left waiting.
  call get_command_argument(1, arg)
  if (arg == "--fault" .or. arg == "--bench") then
    if (.not. transport_begin(tname, rank)) then
      call mpi_finalize(ierr)
      stop
    end if
    if (arg == "--fault") then
      call get_command_argument(2, arg)
      dims = 0
      call mpi_dims_create(nprocs, 2, dims, ierr)
      call decompose(dims(1), dims(2))
      call fault_prognostic(trim(arg))
      call free_decomposition()
      call mpi_finalize(ierr)
      stop
    end if
    if (arg == "--bench") then
      call get_command_argument(2, arg)
      read(arg, *) nbench
      NZ = 64
      cells = 32
      dims = 0
      call mpi_dims_create(nprocs, 2, dims, ierr)
      call decompose(dims(1), dims(2))
      call bench_prognostic(nbench)
      call free_decomposition()
      call mpi_finalize(ierr)
      stop
    end if
  end if

  ! (Y, X) = 1 x N (Y whole), N x 1, then the 2-D grid if it is a different one.
  dims = 0
  call mpi_dims_create(nprocs, 2, dims, ierr)
  call grids_2d(nprocs, dims, layouts, nl)

  ! Each swap state made below picks the transport HALOSWAP_TRANSPORT names at its
  ! init_halo_communication.
  call transport_list(tnames, nt)
  do t = 1, nt
    if (.not. transport_begin(tnames(t), rank)) cycle
    tname = tnames(t)
    failures = 0   ! report() counts alike on every rank
    total = 0
    do l = 1, nl
      call decompose(layouts(1, l), layouts(2, l))
      call test_prognostic(2, .true.)
      call test_prognostic(2, .false.)
      call test_prognostic(1, .false.)
      call test_prognostic(1, .true.)
      call test_smagorinsky_overlapped()
      call test_solver()
      call free_decomposition()
    end do
    write(verdict, '(i0, a, i0, a, i0, a)') total, " checks, ", failures, " failed, ", nprocs, &
         " ranks"
    call transport_end(tname, rank, failures, trim(verdict))
  end do
  status = transport_summary("monc_dropin", rank, nt == 1)
  call mpi_finalize(ierr)
  if (status == 77) stop 77
  if (status /= 0) error stop 1

contains

  !> What MONC's decomposition component sets up: a non-periodic Cartesian communicator
  !! with dims (Y, X), neighbours wrapped by hand (slots 1-2 lower, 3-4 upper), corner
  !! neighbours (-,-), (-,+), (+,-), (+,+) in (y, x), block bounds with the first ranks one
  !! point larger, halo 2 in x and y, none in z.
  subroutine decompose(py, px)
    integer, intent(in) :: py, px
    integer :: coords(2), gsize(3), d, lo, hi, k

    gsize = [NZ, cells * py + 2, cells * px + 1]   ! uneven on purpose
    st%global_grid%size = gsize
    st%parallel%processes = nprocs
    st%number_q_fields = NQ
    st%parallel%dim_sizes = [1, py, px]
    call mpi_cart_create(MPI_COMM_WORLD, 2, [py, px], [.false., .false.], .false., &
         st%parallel%neighbour_comm, ierr)
    st%parallel%monc_communicator = MPI_COMM_WORLD
    call mpi_comm_rank(st%parallel%neighbour_comm, st%parallel%my_rank, ierr)
    call mpi_cart_coords(st%parallel%neighbour_comm, st%parallel%my_rank, 2, coords, ierr)
    st%parallel%my_coords = [0, coords(1), coords(2)]
    associate (g => st%local_grid)
      g%halo_size = [0, 2, 2]
      g%size(Z_INDEX) = NZ
      g%start(Z_INDEX) = 1
      g%end(Z_INDEX) = NZ
      do d = Y_INDEX, X_INDEX
        call block(gsize(d), st%parallel%dim_sizes(d), st%parallel%my_coords(d), lo, hi)
        g%start(d) = lo
        g%end(d) = hi
        g%size(d) = hi - lo + 1
      end do
      g%local_domain_start_index = [1, 3, 3]
      g%local_domain_end_index = [NZ, g%size(Y_INDEX) + 2, g%size(X_INDEX) + 2]
      allocate(g%neighbours(3, 4), g%corner_neighbours(4, 2))
      g%neighbours = st%parallel%my_rank
      do k = 1, 4
        g%neighbours(Y_INDEX, k) = cart_rank(coords(1) + merge(-1, 1, k <= 2), coords(2))
        g%neighbours(X_INDEX, k) = cart_rank(coords(1), coords(2) + merge(-1, 1, k <= 2))
        g%corner_neighbours(k, 1) = cart_rank(coords(1) + merge(-1, 1, k <= 2), &
             coords(2) + merge(-1, 1, k == 1 .or. k == 3))
      end do
      g%corner_neighbours(:, 2) = g%corner_neighbours(:, 1)
    end associate
  end subroutine decompose

  integer function cart_rank(cy, cx) result(r)
    integer, intent(in) :: cy, cx
    integer :: py, px
    py = st%parallel%dim_sizes(Y_INDEX)
    px = st%parallel%dim_sizes(X_INDEX)
    call mpi_cart_rank(st%parallel%neighbour_comm, [modulo(cy, py), modulo(cx, px)], r, ierr)
  end function cart_rank

  subroutine block(n, p, c, lo, hi)
    integer, intent(in) :: n, p, c
    integer, intent(out) :: lo, hi
    integer :: base, extra
    base = n / p
    extra = n - base * p
    lo = c * base + min(c, extra) + 1
    hi = lo + base - 1 + merge(1, 0, c < extra)
  end subroutine block

  subroutine free_decomposition()
    deallocate(st%local_grid%neighbours, st%local_grid%corner_neighbours)
    call mpi_comm_free(st%parallel%neighbour_comm, ierr)
  end subroutine free_decomposition

  ! ---------------------------------------------------------------- fields and oracle

  real(kind=DEFAULT_PRECISION) function oracle(fid, k, y, x, generation)
    integer, intent(in) :: fid, k, y, x, generation
    integer :: gy, gx
    gy = modulo(st%local_grid%start(Y_INDEX) + (y - 3) - 1, st%global_grid%size(Y_INDEX)) + 1
    gx = modulo(st%local_grid%start(X_INDEX) + (x - 3) - 1, st%global_grid%size(X_INDEX)) + 1
    oracle = real(fid * 1000000 + k * 10000 + gy * 100 + gx, DEFAULT_PRECISION) + &
         0.25_DEFAULT_PRECISION * generation
  end function oracle

  subroutine fill(a, fid, generation)
    real(kind=DEFAULT_PRECISION), intent(inout) :: a(:,:,:)
    integer, intent(in) :: fid, generation
    integer :: k, y, x
    a = SENTINEL
    do x = 3, size(a, 3) - 2
      do y = 3, size(a, 2) - 2
        do k = 1, size(a, 1)
          a(k, y, x) = oracle(fid, k, y, x, generation)
        end do
      end do
    end do
  end subroutine fill

  subroutine alloc_fill(a, fid, generation)
    real(kind=DEFAULT_PRECISION), allocatable, intent(inout) :: a(:,:,:)
    integer, intent(in) :: fid, generation
    if (allocated(a)) deallocate(a)   ! the layout changes between decompositions
    allocate(a(NZ, st%local_grid%size(Y_INDEX) + 4, st%local_grid%size(X_INDEX) + 4))
    call fill(a, fid, generation)
  end subroutine alloc_fill

  !> Every cell: interior and the halo cells MONC's swap writes (faces to depth, the 2x2
  !! corner blocks if corners) hold the oracle value; every other halo cell is untouched.
  integer function wrong_cells(a, fid, generation, depth, corners)
    real(kind=DEFAULT_PRECISION), intent(in) :: a(:,:,:)
    integer, intent(in) :: fid, generation, depth
    logical, intent(in) :: corners
    integer :: k, y, x, ny, nx
    logical :: iny, inx, hy, hx, want
    real(kind=DEFAULT_PRECISION) :: expect
    ny = size(a, 2) - 4
    nx = size(a, 3) - 4
    wrong_cells = 0
    do x = 1, nx + 4
      do y = 1, ny + 4
        iny = y >= 3 .and. y <= ny + 2
        inx = x >= 3 .and. x <= nx + 2
        hy = merge(y == 2 .or. y == ny + 3, y <= 2 .or. y >= ny + 3, depth == 1)
        hx = merge(x == 2 .or. x == nx + 3, x <= 2 .or. x >= nx + 3, depth == 1)
        want = (iny .and. inx) .or. (inx .and. hy) .or. (iny .and. hx) .or. &
             (corners .and. .not. iny .and. .not. inx)
        do k = 1, NZ
          expect = merge(oracle(fid, k, y, x, generation), SENTINEL, want)
          if (a(k, y, x) /= expect) then
            if (wrong_cells < 3) write(*, '(a, i0, a, i0, a, 3i4, a, 2f16.2)') "rank ", rank, &
                 " field ", fid, " cell (z,y,x)", k, y, x, " got/expected ", a(k, y, x), expect
            wrong_cells = wrong_cells + 1
          end if
        end do
      end do
    end do
  end function wrong_cells

  subroutine report(what, bad)
    character(len=*), intent(in) :: what
    integer, intent(in) :: bad
    integer :: allbad
    call mpi_allreduce(bad, allbad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    total = total + 1
    if (allbad /= 0) failures = failures + 1
    if (rank == 0) write(*, '(a, 1x, a, 1x, a, i0, a, i0, a, i0, a)') &
         merge("ok  ", "FAIL", allbad == 0), what, "on ", st%parallel%dim_sizes(Y_INDEX), "x", &
         st%parallel%dim_sizes(X_INDEX), " (", allbad, " wrong)"
  end subroutine report

  ! ---------------------------------------------------------------- policies under test

  subroutine fill_prognostics(generation)
    integer, intent(in) :: generation
    integer :: k
    call alloc_fill(st%u%data, 1, generation)
    call alloc_fill(st%zu%data, 2, generation)
    call alloc_fill(st%v%data, 3, generation)
    call alloc_fill(st%zv%data, 4, generation)
    call alloc_fill(st%w%data, 5, generation)
    call alloc_fill(st%zw%data, 6, generation)
    call alloc_fill(st%th%data, 7, generation)
    call alloc_fill(st%zth%data, 8, generation)
    if (.not. allocated(st%q)) allocate(st%q(NQ), st%zq(NQ))
    st%number_q_fields = NQ
    do k = 1, NQ
      call alloc_fill(st%q(k)%data, 7 + 2 * k, generation)
      call alloc_fill(st%zq(k)%data, 8 + 2 * k, generation)
    end do
  end subroutine fill_prognostics

  integer function check_prognostics(generation, depth, corners) result(bad)
    integer, intent(in) :: generation, depth
    logical, intent(in) :: corners
    integer :: k
    bad = wrong_cells(st%u%data, 1, generation, depth, corners) + &
         wrong_cells(st%zu%data, 2, generation, depth, corners) + &
         wrong_cells(st%v%data, 3, generation, depth, corners) + &
         wrong_cells(st%zv%data, 4, generation, depth, corners) + &
         wrong_cells(st%w%data, 5, generation, depth, corners) + &
         wrong_cells(st%zw%data, 6, generation, depth, corners) + &
         wrong_cells(st%th%data, 7, generation, depth, corners) + &
         wrong_cells(st%zth%data, 8, generation, depth, corners)
    do k = 1, NQ
      bad = bad + wrong_cells(st%q(k)%data, 7 + 2 * k, generation, depth, corners) + &
           wrong_cells(st%zq(k)%data, 8 + 2 * k, generation, depth, corners)
    end do
  end function check_prognostics

  !> haloswapper's blocking swap of all prognostics (twice: the second swap must carry the
  !! new values), with the callbacks' arguments compared with MONC's loops.
  subroutine fault_prognostic(kind)
    character(len=*), intent(in) :: kind
    type(halo_communication_type) :: hs, never
    call init_halo_communication(st, prognostic_fields, hs, 2, .true.)
    call fill_prognostics(1)
    call blocking_halo_swap(st, hs, prog_pack, prog_local_copy, prog_unpack, &
         prog_corner_pack, prog_corner_unpack)
    if (rank == nprocs - 1 .and. kind == "twice") then
      call initiate_nonblocking_halo_swap(st, hs, prog_pack, prog_corner_pack)
      call initiate_nonblocking_halo_swap(st, hs, prog_pack, prog_corner_pack)
    else if (rank == nprocs - 1 .and. kind == "uninitialised") then
      call blocking_halo_swap(st, never, prog_pack, prog_local_copy, prog_unpack, &
           prog_corner_pack, prog_corner_unpack)
    else
      call blocking_halo_swap(st, hs, prog_pack, prog_local_copy, prog_unpack, &
           prog_corner_pack, prog_corner_unpack)
    end if
    call finalise_halo_communication(hs)
    if (rank == 0) write(*, '(a)') "monc_dropin: the faulty swap returned on rank 0"
  end subroutine fault_prognostic

  subroutine test_prognostic(depth, corners)
    integer, intent(in) :: depth
    logical, intent(in) :: corners
    type(halo_communication_type) :: hs
    integer :: bad, gen
    character(len=64) :: what

    write(what, '(a, i0, a, l1)') "prognostic swap depth ", depth, " corners ", corners
    call init_halo_communication(st, prognostic_fields, hs, depth, corners)
    bad = 0
    if (.not. hs%initialised .or. hs%swap_in_progress) bad = bad + 1
    if (hs%fields_per_cell /= 8 + 2 * NQ) bad = bad + 1
    do gen = 1, 2
      call fill_prognostics(gen)
      ncalls = 0
      record = .true.
      if (corners) then
        call blocking_halo_swap(st, hs, prog_pack, prog_local_copy, prog_unpack, &
             prog_corner_pack, prog_corner_unpack)
      else
        call blocking_halo_swap(st, hs, prog_pack, prog_local_copy, prog_unpack)
      end if
      record = .false.
      if (hs%swap_in_progress) bad = bad + 1
      bad = bad + check_prognostics(gen, depth, corners)
      bad = bad + check_calls(hs, depth, corners)
    end do
    call finalise_halo_communication(hs)
    if (hs%initialised) bad = bad + 1
    call report(trim(what), bad)
  end subroutine test_prognostic

  !> Mean seconds per swap (slowest rank) of the prognostic swap at depth 2 with corners.
  subroutine bench_prognostic(nswaps)
    integer, intent(in) :: nswaps
    type(halo_communication_type) :: hs
    integer :: it, bad
    double precision :: t0, t, tmax
    integer :: tns, tnsmax
    call init_halo_communication(st, prognostic_fields, hs, 2, .true.)
    call fill_prognostics(1)
    do it = 1, 5   ! warm-up
      call blocking_halo_swap(st, hs, prog_pack, prog_local_copy, prog_unpack, &
           prog_corner_pack, prog_corner_unpack)
    end do
    call mpi_barrier(MPI_COMM_WORLD, ierr)
    t0 = mpi_wtime()
    do it = 1, nswaps
      call blocking_halo_swap(st, hs, prog_pack, prog_local_copy, prog_unpack, &
           prog_corner_pack, prog_corner_unpack)
    end do
    t = (mpi_wtime() - t0) / nswaps
    ! In integer nanoseconds: with MPICH's `use mpi` every call of one routine in a file must
    ! pass the same buffer type (gfortran's argument-mismatch check).
    tns = int(min(t * 1d9, 2d9))
    call mpi_allreduce(tns, tnsmax, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
    tmax = tnsmax * 1d-9
    bad = check_prognostics(1, 2, .true.)
    call finalise_halo_communication(hs)
    call mpi_allreduce(MPI_IN_PLACE, bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) write(*, '(a, a, a, i0, a, i0, a, i0, a, f10.2, a, i0)') "bench transport=", &
         trim(tname), " ranks=", nprocs, " local ", st%local_grid%size(Y_INDEX), "x", &
         st%local_grid%size(X_INDEX), " us_per_swap=", tmax * 1d6, " wrong_cells=", bad
  end subroutine bench_prognostic

  !> MONC's send and receive loops, as the list of calls they make (kind, dim/corner,
  !! index, pid_location, current_page on entry); the recorded calls must be the same
  !! set (the transport decides the order).
  integer function check_calls(hs, depth, corners) result(bad)
    type(halo_communication_type), intent(in) :: hs
    integer, intent(in) :: depth
    logical, intent(in) :: corners
    integer :: n, i, j, loc, cur(16), src, tgt, f, me, xs, ys, cm(3,4)
    logical :: same
    bad = 0
    nexp = 0
    me = st%parallel%my_rank

    associate (g => st%local_grid)
      ! cell_match, as MONC computes it.
      cm = 0
      do i = 2, 3
        same = all(g%neighbours(i, 1:4) == g%neighbours(i, 1))
        if (depth == 1) then
          cm(i, :) = [1, merge(3, 2, same), merge(2, 3, same), 4]
        else
          cm(i, :) = merge([3, 4, 1, 2], [1, 2, 3, 4], same)
        end if
      end do
      if (any(cm(2:3, :) /= hs%cell_match(2:3, :))) bad = bad + 1
      do f = 1, 2   ! 1: send loop, 2: receive loop (the same cursor sequence)
        cur = 1
        do i = 2, 3
          do j = merge(2, 1, depth == 1), merge(3, 4, depth == 1)
            if (g%neighbours(i, j) == me) cycle
            loc = find_loc(hs, g%neighbours(i, j))
            if (f == 1) then
              select case (j)
              case (1); src = g%local_domain_start_index(i)
              case (2); src = g%local_domain_start_index(i) + merge(1, 0, depth /= 1)
              case (3); src = g%local_domain_end_index(i) - merge(1, 0, depth /= 1)
              case default; src = g%local_domain_end_index(i)
              end select
              call add(1, i, src, loc, cur(loc))
            else
              if (j == cm(i, 1)) then
                tgt = 1
              else if (j == cm(i, 2)) then
                tgt = 2
              else if (j == cm(i, 3)) then
                tgt = g%local_domain_end_index(i) + 1
              else
                tgt = g%local_domain_end_index(i) + 2
              end if
              call add(2, i, tgt, loc, cur(loc))
            end if
            cur(loc) = cur(loc) + hs%fields_per_cell
          end do
        end do
      end do
      if (corners) then
        cur = 1
        do j = 1, 4
          if (g%corner_neighbours(j, 1) == me) cycle
          loc = find_loc(hs, g%corner_neighbours(j, 1))
          xs = merge(g%local_domain_start_index(X_INDEX) + 1, &
               g%local_domain_end_index(X_INDEX) - 1, j == 1 .or. j == 3)
          ys = merge(g%local_domain_start_index(Y_INDEX) + 1, &
               g%local_domain_end_index(Y_INDEX) - 1, j == 1 .or. j == 2)
          call add(3, j, xs * 1000 + ys, loc, cur(loc))
          cur(loc) = cur(loc) + hs%fields_per_cell
        end do
        cur = 1
        do j = 4, 1, -1
          if (g%corner_neighbours(j, 1) == me) cycle
          loc = find_loc(hs, g%corner_neighbours(j, 1))
          xs = merge(2, g%local_domain_end_index(X_INDEX) + 1, j == 1 .or. j == 3)
          ys = merge(2, g%local_domain_end_index(Y_INDEX) + 1, j == 1 .or. j == 2)
          call add(4, j, xs * 1000 + ys, loc, cur(loc))
          cur(loc) = cur(loc) + hs%fields_per_cell
        end do
      end if
    end associate
    n = nexp
    if (n /= ncalls) then
      bad = bad + 1
      write(*, '(a, i0, a, i0, a, i0)') "rank ", rank, ": ", ncalls, &
           " callbacks, MONC's loops make ", n
      return
    end if
    do i = 1, n
      if (.not. any(all(calls(:, 1:ncalls) == spread(expect(:, i), 2, ncalls), dim=1))) then
        bad = bad + 1
        if (bad < 4) write(*, '(a, i0, a, 5i6)') "rank ", rank, &
             ": no callback with MONC's arguments (kind, dim, index, loc, page)", expect(:, i)
      end if
    end do
    if (callback_errors /= 0) bad = bad + callback_errors
  end function check_calls

  subroutine add(kind, d, idx, l, page)
    integer, intent(in) :: kind, d, idx, l, page
    nexp = nexp + 1
    expect(:, nexp) = [kind, d, idx, l, page]
  end subroutine add

  ! The neighbour location of pid (the last one holding it), -1 if none.
  integer function find_loc(hs, pid)
    type(halo_communication_type), intent(in) :: hs
    integer, intent(in) :: pid
    find_loc = findloc(hs%halo_swap_neighbours(1:hs%number_distinct_neighbours)%pid, pid, dim=1, &
         back=.true.)
    if (find_loc == 0) find_loc = -1
  end function find_loc

  !> smagorinsky: two one-field states (depth 2, corners) started together and completed
  !! later by diffusion and viscosity, with a prognostic swap of a third state in between.
  subroutine test_smagorinsky_overlapped()
    type(halo_communication_type) :: prog
    integer :: bad

    call init_halo_communication(st, prognostic_fields, prog, 2, .true.)
    call init_halo_communication(st, get_single_field_per_halo_cell, &
         st%viscosity_halo_swap_state, 2, .true.)
    call init_halo_communication(st, get_single_field_per_halo_cell, &
         st%diffusion_halo_swap_state, 2, .true.)
    bad = 0
    call alloc_fill(st%vis_coefficient%data, 31, 1)
    call alloc_fill(st%diff_coefficient%data, 32, 1)
    call fill_prognostics(3)
    call initiate_nonblocking_halo_swap(st, st%diffusion_halo_swap_state, diff_pack, &
         diff_corner_pack)
    call initiate_nonblocking_halo_swap(st, st%viscosity_halo_swap_state, vis_pack, &
         vis_corner_pack)
    if (.not. st%diffusion_halo_swap_state%swap_in_progress .or. &
         .not. st%viscosity_halo_swap_state%swap_in_progress) bad = bad + 1
    call blocking_halo_swap(st, prog, prog_pack, prog_local_copy, prog_unpack, &
         prog_corner_pack, prog_corner_unpack)
    bad = bad + check_prognostics(3, 2, .true.)
    call complete_nonblocking_halo_swap(st, st%diffusion_halo_swap_state, diff_local_copy, &
         diff_unpack, diff_corner_unpack)
    if (st%diffusion_halo_swap_state%swap_in_progress .or. &
         .not. st%viscosity_halo_swap_state%swap_in_progress) bad = bad + 1
    call complete_nonblocking_halo_swap(st, st%viscosity_halo_swap_state, vis_local_copy, &
         vis_unpack, vis_corner_unpack)
    if (st%viscosity_halo_swap_state%swap_in_progress) bad = bad + 1
    bad = bad + wrong_cells(st%vis_coefficient%data, 31, 1, 2, .true.) + &
         wrong_cells(st%diff_coefficient%data, 32, 1, 2, .true.)
    call finalise_halo_communication(st%diffusion_halo_swap_state)
    call finalise_halo_communication(st%viscosity_halo_swap_state)
    call finalise_halo_communication(prog)
    call report("smagorinsky vis+diff overlapped with a prognostic swap", bad)
  end subroutine test_smagorinsky_overlapped

  !> The solver: depth 1, no corners, one field: p itself, then (calc_Ax) an array passed as
  !! source_data, several times through the same state.
  subroutine test_solver()
    type(halo_communication_type) :: hs
    real(kind=DEFAULT_PRECISION), allocatable, target :: x(:,:,:)
    type(field_data_wrapper_type) :: source
    integer :: bad, it

    call init_halo_communication(st, get_single_field_per_halo_cell, hs, 1, .false.)
    bad = 0
    call alloc_fill(st%p%data, 41, 1)
    call initiate_nonblocking_halo_swap(st, hs, p_pack)
    call complete_nonblocking_halo_swap(st, hs, p_local_copy, p_unpack)
    bad = bad + wrong_cells(st%p%data, 41, 1, 1, .false.)
    allocate(x(NZ, st%local_grid%size(Y_INDEX) + 4, st%local_grid%size(X_INDEX) + 4))
    source%data => x
    do it = 1, 3
      call fill(x, 42, it)
      call initiate_nonblocking_halo_swap(st, hs, src_pack, source_data=(/source/))
      call complete_nonblocking_halo_swap(st, hs, src_local_copy, src_unpack, &
           source_data=(/source/))
      bad = bad + wrong_cells(x, 42, it, 1, .false.)
    end do
    bad = bad + wrong_cells(st%p%data, 41, 1, 1, .false.)   ! p untouched by the x swaps
    call finalise_halo_communication(hs)
    call report("solver depth 1 on p and on source_data", bad)
  end subroutine test_solver
end program test_monc_dropin
