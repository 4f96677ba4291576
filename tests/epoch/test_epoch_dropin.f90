!> The EPOCH drop-in (fortran/epoch/haloswap_epoch.F90) on stand-ins for EPOCH's constants,
!! shared_data and utilities, driven as EPOCH drives it: a Cartesian communicator with dims
!! (z, y, x), EPOCH's split (extra cells to the high ranks), arrays (1-ng:n+ng, ...).
!! - field_bc (twice), do_field_mpi_with_lengths_r4 and _slice (three directions): every point
!!   against the analytic oracle of the sweep (tests/lare3d/sweep_test_support.f90), with the
!!   field periodicity (EPOCH unpacks across the domain boundary only where bc_field is
!!   periodic, whatever the communicator's periods);
!! - particle_periodic_bcs without and with a species (a mixed boundary: the species' own):
!!   every point against a serial run of EPOCH's algorithm over every rank's array (x, y, z; per
!!   axis the lower neighbour's ghosts into the first ng planes, then the upper's into the last
!!   ng, zero added where nothing is received; ghosts zeroed with a species), bit for bit, on
!!   values whose sums round differently in any other order;
!! - load balancing: do_field_mpi_with_lengths on arrays of a new split, then field_bc after
!!   EPOCH adopts it (the kept exchanges are made again) and after it goes back;
!! - the explicit-length exchanges' plan cache: repeats of a shape reuse its plan, another
!!   type, another split, a split that changes some ranks' extents only (the others pass the
!!   lengths of a kept plan: every rank must still make a new one), the slices, eviction of
!!   the least recently used beyond 8; every call's points against the oracle, the counts on
!!   every rank.
!! Three configurations: everything periodic, everything walled, and mixed (x periodic; y
!! particles periodic but fields not; z walled). The default transport on all three, every
!! registered transport on one, rotating with the rank count (slices and load balancing with
!! the default transport, or the one transport given).
!! Error cases (--error early|shape|oneside) must end in haloswap_epoch's message and abort.
program test_epoch_dropin
  use, intrinsic :: iso_c_binding
  use shared_data
  use haloswap_epoch
  use sweep_test_support
  implicit none

  type :: rank_array
     real(num), allocatable :: a(:,:,:)
  end type rank_array

  type(test_options) :: opt
  type(test_grid) :: gf, gp   ! the grid with the field and with the particle periodicity
  integer :: ierr, c, t, ng, failures, checked
  integer :: nheld   ! the plans the explicit-length cache must hold (check_lengths_cache)
  integer :: configs(3, 2, 3)  ! (axis, field/particle, configuration): periodic or not
  real(num), allocatable :: ex(:,:,:), jx(:,:,:)
  real(r4), allocatable :: a4(:,:,:)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nproc, ierr)
  call parse_options(opt, [12, 16, 20])
  ng = merge(opt%ng, 5, opt%ng > 0)   ! EPOCH's default (triangle shape: png + 2)

  if (len_trim(opt%error) > 0) then
    call error_case(trim(opt%error))
    call MPI_FINALIZE(ierr)
    stop
  end if

  configs(:, :, 1) = 1
  configs(:, :, 2) = 0
  configs(:, :, 3) = reshape([1, 0, 0, 1, 1, 0], [3, 2])
  failures = 0
  checked = 0
  do c = 1, 3
    call make_domain(configs(:, 1, c), configs(:, 2, c))
    do t = 1, opt%ntransport
      if (opt%transport(t) /= 'p2p' .and. modulo(t + nproc, 3) + 1 /= c) cycle
      if (.not. select_transport(opt, t)) cycle
      call check_fill(trim(opt%transport(t)))
      call check_sum(trim(opt%transport(t)))
      ! Slices always go over p2p; load balancing makes exchanges of every kind again.
      if (opt%transport(t) == 'p2p' .or. opt%ntransport == 1) then
        call check_slices(trim(opt%transport(t)))
        call check_balance(trim(opt%transport(t)))
        call check_lengths_cache(trim(opt%transport(t)))
      end if
      call haloswap_epoch_finalise
    end do
    call free_domain()
  end do
  call report(failures, checked, 'epoch drop-in')
  ! One more fill and sum, left for MPI_Finalize: it frees the exchanges and, with
  ! HALOSWAP_EPOCH_STATS=1, prints the statistics (CTest epoch_dropin_stats reads them).
  call set_transport('p2p')
  call make_domain(configs(:, 1, 1), configs(:, 2, 1))
  allocate(ex(1-ng:nx+ng, 1-ng:ny+ng, 1-ng:nz+ng))
  ex = 0
  call field_bc(ex, ng)
  call particle_periodic_bcs(ex, ng)
  call MPI_FINALIZE(ierr)
  ! Freed: gfortran keeps main program variables on MAIN__'s stack, which LeakSanitizer's
  ! exit check no longer sees (a held array would be reported as a leak).
  deallocate(ex)
  ! A transport not usable here was not checked: a skip, never a pass.
  if (support_skips > 0) stop 77

contains

  ! EPOCH's setup_communicator and mpi_initialise: dims (z, y, x), reorder, the communicator
  ! periodic where the field or the particle boundary is, the boundary flags, the split.
  subroutine make_domain(fper, pper)
    integer, intent(in) :: fper(3), pper(3)
    integer :: dims(3), crd(3), a
    logical :: periods(3)
    dims = [opt%procs(3), opt%procs(2), opt%procs(1)]
    call MPI_DIMS_CREATE(nproc, 3, dims, ierr)
    do a = 1, 3
      periods(4 - a) = fper(a) /= 0 .or. pper(a) /= 0
      bc_field(2 * a - 1:2 * a) = merge(c_bc_periodic, c_bc_open, fper(a) /= 0)
      bc_allspecies(2 * a - 1:2 * a) = merge(c_bc_periodic, c_bc_reflect, pper(a) /= 0)
    end do
    call MPI_CART_CREATE(MPI_COMM_WORLD, 3, dims, periods, .true., comm, ierr)
    call MPI_COMM_RANK(comm, rank, ierr)
    call MPI_CART_COORDS(comm, rank, 3, crd, ierr)
    coordinates = crd
    nprocx = dims(3); nprocy = dims(2); nprocz = dims(1)
    x_coords = crd(3); y_coords = crd(2); z_coords = crd(1)
    call MPI_CART_SHIFT(comm, 2, 1, proc_x_min, proc_x_max, ierr)
    call MPI_CART_SHIFT(comm, 1, 1, proc_y_min, proc_y_max, ierr)
    call MPI_CART_SHIFT(comm, 0, 1, proc_z_min, proc_z_max, ierr)
    call grid_init(gf, comm, [nprocx, nprocy, nprocz], [x_coords, y_coords, z_coords], fper, &
         opt%global, [3, 2, 1])
    gp = gf
    gp%periodic = pper
    allocate(cell_x_min(nprocx), cell_x_max(nprocx), cell_y_min(nprocy), cell_y_max(nprocy), &
         cell_z_min(nprocz), cell_z_max(nprocz))
    call adopt(gf)
    ! Two species: the first like every species, the second reflecting in x (a mixed boundary).
    allocate(species_list(2))
    n_species = 2
    species_list(1)%bc_particle = bc_allspecies
    species_list(2)%bc_particle = bc_allspecies
    species_list(2)%bc_particle(1:2) = c_bc_reflect
  end subroutine make_domain

  ! The split of grid gr becomes EPOCH's domain (cell_x_min ... nx, the boundary flags).
  subroutine adopt(gr)
    type(test_grid), intent(in) :: gr
    integer :: i
    do i = 1, nprocx
      cell_x_min(i) = gr%off(i - 1, 1) + 1
      cell_x_max(i) = gr%off(i - 1, 1) + gr%cells(i - 1, 1)
    end do
    do i = 1, nprocy
      cell_y_min(i) = gr%off(i - 1, 2) + 1
      cell_y_max(i) = gr%off(i - 1, 2) + gr%cells(i - 1, 2)
    end do
    do i = 1, nprocz
      cell_z_min(i) = gr%off(i - 1, 3) + 1
      cell_z_max(i) = gr%off(i - 1, 3) + gr%cells(i - 1, 3)
    end do
    nx = gr%n(1); ny = gr%n(2); nz = gr%n(3)
    x_min_boundary = x_coords == 0; x_max_boundary = x_coords == nprocx - 1
    y_min_boundary = y_coords == 0; y_max_boundary = y_coords == nprocy - 1
    z_min_boundary = z_coords == 0; z_max_boundary = z_coords == nprocz - 1
  end subroutine adopt

  subroutine free_domain()
    deallocate(cell_x_min, cell_x_max, cell_y_min, cell_y_max, cell_z_min, cell_z_max)
    deallocate(species_list)
    call MPI_COMM_FREE(comm, ierr)
  end subroutine free_domain

  ! ---------------------------------------------------------------- fills
  subroutine fill3(gr, a, f)
    type(test_grid), intent(in) :: gr
    real(num), intent(out) :: a(1-ng:, 1-ng:, 1-ng:)
    integer, intent(in) :: f
    integer :: i, j, k
    do k = lbound(a, 3), ubound(a, 3)
      do j = lbound(a, 2), ubound(a, 2)
        do i = lbound(a, 1), ubound(a, 1)
          a(i, j, k) = initial(gr, f, [0, 0, 0], gr%coord, [i, j, k])
        end do
      end do
    end do
  end subroutine fill3

  subroutine expect3(gr, a, f, what)
    type(test_grid), intent(in) :: gr
    real(num), intent(in) :: a(1-ng:, 1-ng:, 1-ng:)
    integer, intent(in) :: f
    character(len=*), intent(in) :: what
    integer :: i, j, k
    do k = lbound(a, 3), ubound(a, 3)
      do j = lbound(a, 2), ubound(a, 2)
        do i = lbound(a, 1), ubound(a, 1)
          call compare(a(i, j, k), swept(gr, f, [0, 0, 0], [i, j, k], [1, 2, 3]), [i, j, k], what)
        end do
      end do
    end do
  end subroutine expect3

  subroutine compare(got, want, idx, what)
    real(num), intent(in) :: got, want
    integer, intent(in) :: idx(3)
    character(len=*), intent(in) :: what
    checked = checked + 1
    ! Bit for bit (a -0.0 where +0.0 is expected is wrong too).
    if (transfer(got, 0_c_int64_t) /= transfer(want, 0_c_int64_t)) then
      failures = failures + 1
      if (failures <= 10) write(*, '(a,i0,a,3i4,a,es24.16,a,es24.16)') 'rank ', rank, &
           ': point', idx, ' after ' // what // ': got', got, ' want', want
    end if
  end subroutine compare

  subroutine check_fill(tname)
    character(len=*), intent(in) :: tname
    integer :: rep, i, j, k
    allocate(ex(1-ng:nx+ng, 1-ng:ny+ng, 1-ng:nz+ng))
    call fill3(gf, ex, 1)
    do rep = 1, 2
      call field_bc(ex, ng)
      call expect3(gf, ex, 1, 'field_bc (' // tname // ')')
    end do
    deallocate(ex)
    ! real(4) through the explicit-length routine: the same copies of rounded values.
    allocate(a4(1-ng:nx+ng, 1-ng:ny+ng, 1-ng:nz+ng))
    do k = 1 - ng, nz + ng
      do j = 1 - ng, ny + ng
        do i = 1 - ng, nx + ng
          a4(i, j, k) = real(initial(gf, 2, [0, 0, 0], gf%coord, [i, j, k]), r4)
        end do
      end do
    end do
    call do_field_mpi_with_lengths_r4(a4, ng, nx, ny, nz)
    do k = 1 - ng, nz + ng
      do j = 1 - ng, ny + ng
        do i = 1 - ng, nx + ng
          call compare(real(a4(i, j, k), num), real(real(swept(gf, 2, [0, 0, 0], [i, j, k], &
               [1, 2, 3]), r4), num), [i, j, k], 'do_field_mpi_with_lengths_r4 (' // tname // ')')
        end do
      end do
    end do
    deallocate(a4)
  end subroutine check_fill

  ! ---------------------------------------------------------------- sums
  ! A value whose sums with others round differently in another order: a full 52-bit mantissa
  ! at one of nine binary scales; a few are -0.0.
  pure real(num) function sval(r, idx, f)
    integer, intent(in) :: r, idx(3), f
    integer(c_int64_t) :: h, h2, m
    h = int(r + 1, c_int64_t) * 1000003_c_int64_t + (idx(1) + 20) * 7919_c_int64_t + &
         (idx(2) + 20) * 104729_c_int64_t + (idx(3) + 20) * 1299709_c_int64_t + f * 15485863_c_int64_t
    h = modulo(h * 2654435761_c_int64_t, 2147483647_c_int64_t)
    h2 = modulo(h * 48271_c_int64_t + 11_c_int64_t, 2147483647_c_int64_t)
    m = h * 2097152_c_int64_t + modulo(h2, 2097152_c_int64_t)
    if (modulo(h, 53_c_int64_t) == 0) then
      sval = -0.0_num
    else
      sval = (1.0_num + real(m, num) * 2.0_num**(-52)) * 2.0_num**(int(modulo(h2, 9_c_int64_t)) - 4)
    end if
  end function sval

  function coords_of(gr, r) result(c)
    type(test_grid), intent(in) :: gr
    integer, intent(in) :: r
    integer :: c(3), k, rest
    rest = r
    do k = 3, 1, -1
      c(gr%order(k)) = modulo(rest, gr%procs(gr%order(k)))
      rest = rest / gr%procs(gr%order(k))
    end do
  end function coords_of

  ! EPOCH's particle_periodic_bcs run serially over every rank's array; returns this rank's.
  subroutine serial_sum(gr, per, f, clear, out)
    type(test_grid), intent(in) :: gr
    integer, intent(in) :: per(3), f
    logical, intent(in) :: clear
    real(num), intent(out) :: out(1-ng:, 1-ng:, 1-ng:)
    type(rank_array), allocatable :: all(:)
    integer :: r, a, i, j, k, n(3), c(3), cl(3), cu(3), nl, nu
    allocate(all(0:nproc - 1))
    do r = 0, nproc - 1
      c = coords_of(gr, r)
      n = [(ncell(gr, a, c(a)), a = 1, 3)]
      allocate(all(r)%a(1-ng:n(1)+ng, 1-ng:n(2)+ng, 1-ng:n(3)+ng))
      do k = 1 - ng, n(3) + ng
        do j = 1 - ng, n(2) + ng
          do i = 1 - ng, n(1) + ng
            all(r)%a(i, j, k) = sval(r, [i, j, k], f)
          end do
        end do
      end do
    end do
    do a = 1, 3
      do r = 0, nproc - 1
        c = coords_of(gr, r)
        n = shape(all(r)%a) - 2 * ng
        cl = c
        cu = c
        cl(a) = modulo(c(a) - 1, gr%procs(a))
        cu(a) = modulo(c(a) + 1, gr%procs(a))
        nl = ncell(gr, a, cl(a))
        nu = ncell(gr, a, cu(a))
        ! first the lower neighbour's upper ghosts into planes 1..ng (or zero)
        call add_slab(all(r)%a, a, 1, all(rank_of(gr, cl))%a, nl + 1, &
             c(a) > 0 .or. per(a) /= 0)
        ! then the upper neighbour's lower ghosts into planes n-ng+1..n (or zero)
        call add_slab(all(r)%a, a, n(a) + 1 - ng, all(rank_of(gr, cu))%a, 1 - ng, &
             c(a) < gr%procs(a) - 1 .or. per(a) /= 0)
      end do
    end do
    out = all(rank_of(gr, gr%coord))%a
    if (clear) then
      n = shape(out) - 2 * ng
      out(:0, :, :) = 0; out(n(1)+1:, :, :) = 0
      out(:, :0, :) = 0; out(:, n(2)+1:, :) = 0
      out(:, :, :0) = 0; out(:, :, n(3)+1:) = 0
    end if
  end subroutine serial_sum

  ! dst(planes first.. along a) += src(planes from.. along a), whole other axes; or += 0.
  subroutine add_slab(dst, a, first, src, from, have)
    real(num), intent(inout) :: dst(1-ng:, 1-ng:, 1-ng:)
    real(num), intent(in) :: src(1-ng:, 1-ng:, 1-ng:)
    integer, intent(in) :: a, first, from
    logical, intent(in) :: have
    integer :: p, q
    do p = 0, ng - 1
      q = from + p
      select case (a)
      case (1)
        if (have) then
          dst(first + p, :, :) = dst(first + p, :, :) + src(q, :, :)
        else
          dst(first + p, :, :) = dst(first + p, :, :) + 0.0_num
        end if
      case (2)
        if (have) then
          dst(:, first + p, :) = dst(:, first + p, :) + src(:, q, :)
        else
          dst(:, first + p, :) = dst(:, first + p, :) + 0.0_num
        end if
      case default
        if (have) then
          dst(:, :, first + p) = dst(:, :, first + p) + src(:, :, q)
        else
          dst(:, :, first + p) = dst(:, :, first + p) + 0.0_num
        end if
      end select
    end do
  end subroutine add_slab

  subroutine check_sum(tname)
    character(len=*), intent(in) :: tname
    real(num), allocatable :: want(:,:,:)
    integer :: s, i, j, k, per(3)
    allocate(jx(1-ng:nx+ng, 1-ng:ny+ng, 1-ng:nz+ng), want(1-ng:nx+ng, 1-ng:ny+ng, 1-ng:nz+ng))
    do s = 0, 2   ! no species, then each species (the second has its own x boundary)
      do k = 1 - ng, nz + ng
        do j = 1 - ng, ny + ng
          do i = 1 - ng, nx + ng
            jx(i, j, k) = sval(rank, [i, j, k], s)
          end do
        end do
      end do
      per = gp%periodic
      if (s == 2) per(1) = 0
      if (s == 0) then
        call particle_periodic_bcs(jx, ng)
      else
        if (s == 2) bc_allspecies(1:2) = c_bc_mixed
        call particle_periodic_bcs(jx, ng, s)
        bc_allspecies(1:2) = species_list(1)%bc_particle(1:2)
      end if
      call serial_sum(gp, per, s, s > 0, want)
      do k = 1 - ng, nz + ng
        do j = 1 - ng, ny + ng
          do i = 1 - ng, nx + ng
            call compare(jx(i, j, k), want(i, j, k), [i, j, k], 'particle_periodic_bcs (' // &
                 tname // ', species ' // achar(48 + s) // ')')
          end do
        end do
      end do
    end do
    deallocate(jx, want)
  end subroutine check_sum

  ! ---------------------------------------------------------------- slices and balancing
  subroutine check_slices(tname)
    character(len=*), intent(in) :: tname
    integer :: d
    do d = 1, 3
      call check_slice(gf, 3, d, 'direction ' // achar(48 + d) // ' (' // tname // ')')
    end do
  end subroutine check_slices

  ! do_field_mpi_with_lengths_slice of field f's plane normal to axis dir of grid gr.
  subroutine check_slice(gr, f, dir, what)
    type(test_grid), intent(in) :: gr
    integer, intent(in) :: f, dir
    character(len=*), intent(in) :: what
    real(num), allocatable :: s2(:,:)
    integer :: i, j, ax(2), idx(3)
    ax = pack([1, 2, 3], [1, 2, 3] /= dir)
    allocate(s2(1-ng:gr%n(ax(1))+ng, 1-ng:gr%n(ax(2))+ng))
    idx = 1
    do j = lbound(s2, 2), ubound(s2, 2)
      do i = lbound(s2, 1), ubound(s2, 1)
        idx(ax) = [i, j]
        s2(i, j) = initial(gr, f, [0, 0, 0], gr%coord, idx)
      end do
    end do
    call do_field_mpi_with_lengths_slice(s2, dir, ng, gr%n(ax(1)), gr%n(ax(2)))
    do j = lbound(s2, 2), ubound(s2, 2)
      do i = lbound(s2, 1), ubound(s2, 1)
        idx(ax) = [i, j]
        call compare(s2(i, j), swept(gr, f, [0, 0, 0], idx, ax), idx, &
             'do_field_mpi_with_lengths_slice, ' // what)
      end do
    end do
    deallocate(s2)
  end subroutine check_slice

  ! A new split (one cell moved from the first to the last rank along each split axis):
  ! do_field_mpi_with_lengths on arrays of the new split while EPOCH still holds the old one,
  ! then field_bc once it adopted the new split, and once more back on the old one.
  subroutine check_balance(tname)
    character(len=*), intent(in) :: tname
    type(test_grid) :: gn
    integer :: a, cells(0:63)
    gn = gf
    do a = 1, 3
      if (gn%procs(a) < 2) cycle
      cells(0:gn%procs(a) - 1) = gn%cells(0:gn%procs(a) - 1, a)
      if (cells(0) <= ng) cycle
      cells(0) = cells(0) - 1
      cells(gn%procs(a) - 1) = cells(gn%procs(a) - 1) + 1
      call grid_set_cells(gn, a, cells)
    end do
    allocate(ex(1-ng:gn%n(1)+ng, 1-ng:gn%n(2)+ng, 1-ng:gn%n(3)+ng))
    call fill3(gn, ex, 4)
    call do_field_mpi_with_lengths(ex, ng, gn%n(1), gn%n(2), gn%n(3))
    call expect3(gn, ex, 4, 'do_field_mpi_with_lengths on a new split (' // tname // ')')
    call adopt(gn)
    call fill3(gn, ex, 5)
    call field_bc(ex, ng)
    call expect3(gn, ex, 5, 'field_bc on the new split (' // tname // ')')
    deallocate(ex)
    call adopt(gf)
    allocate(ex(1-ng:nx+ng, 1-ng:ny+ng, 1-ng:nz+ng))
    call fill3(gf, ex, 6)
    call field_bc(ex, ng)
    call expect3(gf, ex, 6, 'field_bc back on the old split (' // tname // ')')
    deallocate(ex)
  end subroutine check_balance

  ! The explicit-length plans' cache (at most 8, least recently used out), from empty: the
  ! shapes of the current split s0, s1 (along the first split axis, a cell from the rank with
  ! the most cells to another) and s2 (along an axis split in three or more, a cell from the
  ! rank with the most to a third rank: the remaining ranks keep s0's extents; without such an
  ! axis, s1's move reversed), in real(num) and real(r4).
  subroutine check_lengths_cache(tname)
    character(len=*), intent(in) :: tname
    type(test_grid) :: s1, s2
    integer :: a, a1, a3, c1, c2, c3, d
    logical :: h1, h2
    a1 = 0
    a3 = 0
    do a = 3, 1, -1
      if (gf%procs(a) >= 2 .and. maxval(gf%cells(0:gf%procs(a) - 1, a)) > ng) a1 = a
      if (gf%procs(a) >= 3 .and. maxval(gf%cells(0:gf%procs(a) - 1, a)) > ng) a3 = a
    end do
    h1 = a1 > 0
    h2 = a3 > 0
    if (h1) then
      c1 = most(a1)
      c2 = merge(1, 0, c1 == 0)
      s1 = moved(gf, a1, c1, c2)
      if (a3 > 0) then
        c1 = most(a3)
        do c3 = 0, 2   ! neither the donor nor, on s1's axis, s1's receiver
          if (c3 /= c1 .and. (a3 /= a1 .or. c3 /= c2)) exit
        end do
        s2 = moved(gf, a3, c1, c3)
      else if (gf%cells(c2, a1) > ng) then
        h2 = .true.
        s2 = moved(gf, a1, c2, c1)
      end if
    end if
    call haloswap_epoch_finalise   ! the cache empty
    nheld = 0
    call lengths_case(gf, 7, .false., 0, .true., 's0 ' // tname)
    call lengths_case(gf, 8, .false., 0, .false., 's0 again ' // tname)
    call lengths_case(gf, 9, .false., 0, .false., 's0 a third time ' // tname)
    call lengths_case(gf, 10, .true., 0, .true., 's0 real(r4) ' // tname)
    if (h2) call lengths_case(s2, 11, .false., 0, .true., 's2 ' // tname)
    if (h1) call lengths_case(s1, 12, .false., 0, .true., 's1 ' // tname)
    call lengths_case(gf, 13, .false., 0, .false., 's0 after s1 ' // tname)
    do d = 1, 3   ! the slices of s0: made, then reused
      call lengths_case(gf, 13 + d, .false., d, .true., 's0 slice ' // tname)
    end do
    do d = 1, 3
      call lengths_case(gf, 16 + d, .false., d, .false., 's0 slice again ' // tname)
    end do
    if (h1 .and. h2) then
      ! Normal to another axis than a1 (a slice normal to a1 keeps s0's extents: a reuse).
      call lengths_case(s1, 20, .false., modulo(a1, 3) + 1, .true., 's1 slice, the eighth ' // &
           tname)
      ! A ninth shape: s0 real(r4), the least recently used, goes; made again, s2 goes.
      call lengths_case(s1, 21, .true., 0, .true., 's1 real(r4), the ninth ' // tname)
      call lengths_case(gf, 22, .true., 0, .true., 's0 real(r4) after eviction ' // tname)
      call lengths_case(s1, 23, .false., 0, .false., 's1 kept ' // tname)
      call lengths_case(gf, 24, .false., 0, .false., 's0 kept ' // tname)
      ! s2 again: made, the s0 slice in x (used longest ago) goes.
      call lengths_case(s2, 25, .false., 0, .true., 's2 after eviction ' // tname)
      call lengths_case(gf, 26, .false., 1, .true., 's0 slice after eviction ' // tname)
    else
      call lengths_case(gf, 22, .true., 0, .false., 's0 real(r4) kept ' // tname)
    end if
    call lengths_case(gf, 27, .false., 0, .false., 's0 last ' // tname)
  end subroutine check_lengths_cache

  ! The last coordinate along axis a whose rank has the most cells.
  integer function most(a)
    integer, intent(in) :: a
    integer :: c
    most = 0
    do c = 1, gf%procs(a) - 1
      if (gf%cells(c, a) >= gf%cells(most, a)) most = c
    end do
  end function most

  ! gr with one cell moved from coordinate from to coordinate to along axis a.
  function moved(gr, a, from, to) result(gm)
    type(test_grid), intent(in) :: gr
    integer, intent(in) :: a, from, to
    type(test_grid) :: gm
    integer :: cells(0:63)
    gm = gr
    cells(0:gr%procs(a) - 1) = gr%cells(0:gr%procs(a) - 1, a)
    cells(from) = cells(from) - 1
    cells(to) = cells(to) + 1
    call grid_set_cells(gm, a, cells)
  end function moved

  ! do_field_mpi_with_lengths (single: its _r4 variant; dir > 0: _slice normal to dir) on a
  ! fresh array of split gr, field f: every point against the oracle; new: the call must make
  ! a plan (else reuse one). The plans held after it (nheld, at most 8) are checked too, on
  ! every rank.
  subroutine lengths_case(gr, f, single, dir, new, what)
    type(test_grid), intent(in) :: gr
    integer, intent(in) :: f, dir
    logical, intent(in) :: single, new
    character(len=*), intent(in) :: what
    integer :: i, j, k, m0, u0, h0, m1, u1, h1
    call haloswap_epoch_lengths_cache(m0, u0, h0)
    if (new) nheld = min(nheld + 1, 8)
    if (dir > 0) then
      call check_slice(gr, f, dir, what)
    else if (single) then
      allocate(a4(1-ng:gr%n(1)+ng, 1-ng:gr%n(2)+ng, 1-ng:gr%n(3)+ng))
      do k = 1 - ng, gr%n(3) + ng
        do j = 1 - ng, gr%n(2) + ng
          do i = 1 - ng, gr%n(1) + ng
            a4(i, j, k) = real(initial(gr, f, [0, 0, 0], gr%coord, [i, j, k]), r4)
          end do
        end do
      end do
      call do_field_mpi_with_lengths_r4(a4, ng, gr%n(1), gr%n(2), gr%n(3))
      do k = 1 - ng, gr%n(3) + ng
        do j = 1 - ng, gr%n(2) + ng
          do i = 1 - ng, gr%n(1) + ng
            call compare(real(a4(i, j, k), num), real(real(swept(gr, f, [0, 0, 0], [i, j, k], &
                 [1, 2, 3]), r4), num), [i, j, k], 'do_field_mpi_with_lengths_r4, ' // what)
          end do
        end do
      end do
      deallocate(a4)
    else
      allocate(ex(1-ng:gr%n(1)+ng, 1-ng:gr%n(2)+ng, 1-ng:gr%n(3)+ng))
      call fill3(gr, ex, f)
      call do_field_mpi_with_lengths(ex, ng, gr%n(1), gr%n(2), gr%n(3))
      call expect3(gr, ex, f, 'do_field_mpi_with_lengths, ' // what)
      deallocate(ex)
    end if
    call haloswap_epoch_lengths_cache(m1, u1, h1)
    checked = checked + 1
    if (m1 - m0 /= merge(1, 0, new) .or. u1 - u0 /= merge(0, 1, new) .or. h1 /= nheld) then
      failures = failures + 1
      write(*, '(a,i0,a,3(a,i0),a,l1,a,i0,a)') 'rank ', rank, ': plan cache after ' // what // &
           ':', ' made ', m1 - m0, ' reused ', u1 - u0, ' held ', h1, ' (want new ', new, &
           ', held ', nheld, ')'
    end if
  end subroutine lengths_case

  ! Each must stop the run with haloswap_epoch's message (CTest matches it).
  subroutine error_case(which)
    character(len=*), intent(in) :: which
    select case (which)
    case ('early')   ! before the domain exists
      allocate(ex(1-ng:4+ng, 1-ng:4+ng, 1-ng:4+ng))
      call field_bc(ex, ng)
    case ('shape')   ! an array of another size than the domain's
      call make_domain([1, 1, 1], [1, 1, 1])
      allocate(ex(1-ng:nx+ng+1, 1-ng:ny+ng, 1-ng:nz+ng))
      call field_bc(ex, ng)
    case ('oneside') ! a field boundary periodic on one side only
      call make_domain([1, 1, 1], [1, 1, 1])
      bc_field(c_bd_y_max) = c_bc_open
      allocate(ex(1-ng:nx+ng, 1-ng:ny+ng, 1-ng:nz+ng))
      call field_bc(ex, ng)
    end select
    if (rank == 0) write(*, '(a)') 'error case ' // which // ' was not detected'
  end subroutine error_case

end program test_epoch_dropin
