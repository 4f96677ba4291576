!> The Lare3d drop-in (fortran/lare3d/mpiboundary.f90) on a stand-in shared_data, driven as
!! Lare3d drives it: a Cartesian communicator with dims (z, y, x) and reorder, Lare3d's uneven
!! split (extra cells to the high ranks), the module arrays with Lare3d's bounds, the five
!! routines called in turn (each twice). After every call every cell of every array is compared
!! with its oracle value: an owned cell keeps F(field, global coordinates); a ghost cell gets
!! what Lare3d's x, y, z sweep over the whole allocated extent gives it, which is F of the cell
!! it mirrors when that is owned, and otherwise the stale value (a marker of field, rank and
!! index) of the ghost it was copied from (corners at walls, sides without a neighbour).
!! Periodic, walled and mixed sides: the default transport (p2p) on all three, every transport of
!! the registry (HALOSWAP_TRANSPORT set before each one; --transport limits the list) on one of
!! them, rotating with the rank count; an unusable transport fails the test unless
!! --may-be-unusable names it.
!! Error cases (--error early|bounds|realloc) must end in mpiboundary's message and MPI_ABORT.
program test_lare3d_dropin
  use, intrinsic :: iso_c_binding
  use shared_data
  use mpiboundary
  use sweep_test_support
  implicit none

  integer, parameter :: nfield = 11
  character(len=6), parameter :: fname(nfield) = [character(len=6) :: 'bx', 'by', 'bz', &
       'energy', 'rho', 'vx', 'vy', 'vz', 'vx1', 'vy1', 'vz1']
  ! Staggering per field and axis: 0 cell, 1 node (upper rank owns), 2 face (lower rank owns).
  integer, parameter :: stag(3, nfield) = reshape([2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, &
       1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [3, nfield])
  ! The fields each routine exchanges (0: none).
  integer, parameter :: routine_fields(3, 5) = reshape([1, 2, 3, 4, 0, 0, 5, 0, 0, 6, 7, 8, &
       9, 10, 11], [3, 5])
  character(len=12), parameter :: routine(5) = [character(len=12) :: 'bfield_mpi', &
       'energy_mpi', 'density_mpi', 'velocity_mpi', 'remap_v_mpi']

  type(test_options) :: opt
  integer :: ierr, c, t, r, rep, failures, checked
  integer :: configs(3, 3)
  logical :: state(nfield)   ! .true.: the field has been exchanged since it was filled

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nproc, ierr)
  call parse_options(opt, [11, 10, 12])

  if (len_trim(opt%error) > 0) then
    call error_case(trim(opt%error))
    call MPI_FINALIZE(ierr)
    stop
  end if

  ! periodic in x, y, z: all periodic (Lare3d's BC_PERIODIC), all walled (BC_USER), mixed
  configs = reshape([1, 1, 1, 0, 0, 0, 1, 0, 1], [3, 3])
  failures = 0
  checked = 0
  do c = 1, 3
    call make_grid(configs(:, c))
    do t = 1, opt%ntransport
      if (opt%transport(t) /= 'p2p' .and. modulo(t + nproc, 3) + 1 /= c) cycle
      if (.not. select_transport(opt, t)) cycle
      call fill_all()
      state = .false.
      do r = 1, 5
        do rep = 1, 2
          select case (r)
          case (1); call bfield_mpi
          case (2); call energy_mpi
          case (3); call density_mpi
          case (4); call velocity_mpi
          case (5); call remap_v_mpi
          end select
          where (routine_fields(:, r) > 0) state(max(routine_fields(:, r), 1)) = .true.
          call check_all(trim(routine(r)), configs(:, c), opt%transport(t))
        end do
      end do
      call mpiboundary_finalise
    end do
    call free_grid()
  end do
  call report(failures, checked, 'lare3d drop-in')
  ! One more call of each routine, left for MPI_Finalize: it frees the exchanges and, with
  ! HALOSWAP_LARE3D_STATS=1, prints the statistics (CTest lare3d_dropin_stats reads them).
  call set_transport('p2p')
  call make_grid(configs(:, 1))
  call bfield_mpi; call energy_mpi; call density_mpi; call velocity_mpi; call remap_v_mpi
  call MPI_FINALIZE(ierr)
  ! A transport not usable here was not checked: a skip, never a pass.
  if (support_skips > 0) stop 77

contains

  ! Lare3d's mpi_initialise: dims (z, y, x), reorder, periods, the high-remainder split.
  subroutine make_grid(per)
    integer, intent(in) :: per(3)
    integer :: dims(3), crd(3)
    logical :: periods(3)
    dims = [opt%procs(3), opt%procs(2), opt%procs(1)]
    call MPI_DIMS_CREATE(nproc, 3, dims, ierr)
    periods = [per(3) /= 0, per(2) /= 0, per(1) /= 0]
    call MPI_CART_CREATE(MPI_COMM_WORLD, 3, dims, periods, .true., comm, ierr)
    call MPI_COMM_RANK(comm, rank, ierr)
    call MPI_CART_COORDS(comm, rank, 3, crd, ierr)
    coordinates = crd
    call MPI_CART_SHIFT(comm, 2, 1, proc_x_min, proc_x_max, ierr)
    call MPI_CART_SHIFT(comm, 1, 1, proc_y_min, proc_y_max, ierr)
    call MPI_CART_SHIFT(comm, 0, 1, proc_z_min, proc_z_max, ierr)
    nprocx = dims(3); nprocy = dims(2); nprocz = dims(1)
    call grid_init(g, comm, [nprocx, nprocy, nprocz], [crd(3), crd(2), crd(1)], per, &
         opt%global, [3, 2, 1])
    nx_global = opt%global(1); ny_global = opt%global(2); nz_global = opt%global(3)
    nx = g%n(1); ny = g%n(2); nz = g%n(3)
    allocate(cell_nx_mins(0:nprocx-1), cell_nx_maxs(0:nprocx-1), cell_ny_mins(0:nprocy-1), &
         cell_ny_maxs(0:nprocy-1), cell_nz_mins(0:nprocz-1), cell_nz_maxs(0:nprocz-1))
    cell_nx_mins = g%off(0:nprocx-1, 1) + 1
    cell_nx_maxs = g%off(0:nprocx-1, 1) + g%cells(0:nprocx-1, 1)
    cell_ny_mins = g%off(0:nprocy-1, 2) + 1
    cell_ny_maxs = g%off(0:nprocy-1, 2) + g%cells(0:nprocy-1, 2)
    cell_nz_mins = g%off(0:nprocz-1, 3) + 1
    cell_nz_maxs = g%off(0:nprocz-1, 3) + g%cells(0:nprocz-1, 3)
    allocate(bx(-2:nx+2, -1:ny+2, -1:nz+2), by(-1:nx+2, -2:ny+2, -1:nz+2), &
         bz(-1:nx+2, -1:ny+2, -2:nz+2), energy(-1:nx+2, -1:ny+2, -1:nz+2), &
         rho(-1:nx+2, -1:ny+2, -1:nz+2))
    allocate(vx(-2:nx+2, -2:ny+2, -2:nz+2), vy(-2:nx+2, -2:ny+2, -2:nz+2), &
         vz(-2:nx+2, -2:ny+2, -2:nz+2), vx1(-2:nx+2, -2:ny+2, -2:nz+2), &
         vy1(-2:nx+2, -2:ny+2, -2:nz+2), vz1(-2:nx+2, -2:ny+2, -2:nz+2))
  end subroutine make_grid

  subroutine free_grid()
    deallocate(bx, by, bz, energy, rho, vx, vy, vz, vx1, vy1, vz1)
    deallocate(cell_nx_mins, cell_nx_maxs, cell_ny_mins, cell_ny_maxs, cell_nz_mins, cell_nz_maxs)
    call MPI_COMM_FREE(comm, ierr)
  end subroutine free_grid

  subroutine fill_all()
    call fill(bx, 1); call fill(by, 2); call fill(bz, 3); call fill(energy, 4); call fill(rho, 5)
    call fill(vx, 6); call fill(vy, 7); call fill(vz, 8)
    call fill(vx1, 9); call fill(vy1, 10); call fill(vz1, 11)
  end subroutine fill_all

  ! Owned points: F(field, global index); everything else: the stale marker of this rank.
  subroutine fill(a, f)
    real(num), intent(inout) :: a(:,:,:)
    integer, intent(in) :: f
    integer :: i, j, k, lo(3), idx(3)
    lo = lower(f)
    do k = 1, size(a, 3)
      do j = 1, size(a, 2)
        do i = 1, size(a, 1)
          idx = [i, j, k] - 1 + lo
          a(i, j, k) = initial(g, f, stag(:, f), g%coord, idx)
        end do
      end do
    end do
  end subroutine fill

  function lower(f) result(lo)
    integer, intent(in) :: f
    integer :: lo(3)
    lo = merge(-2, -1, stag(:, f) /= 0)
  end function lower

  subroutine check_all(what, per, tname)
    character(len=*), intent(in) :: what, tname
    integer, intent(in) :: per(3)
    character(len=160) :: ctx
    write(ctx, '(a,3i2,a)') what // ' (' // tname // ', periodic', per, ')'
    call check(bx, 1, ctx); call check(by, 2, ctx); call check(bz, 3, ctx)
    call check(energy, 4, ctx); call check(rho, 5, ctx); call check(vx, 6, ctx)
    call check(vy, 7, ctx); call check(vz, 8, ctx); call check(vx1, 9, ctx)
    call check(vy1, 10, ctx); call check(vz1, 11, ctx)
  end subroutine check_all

  subroutine check(a, f, ctx)
    real(num), intent(in) :: a(:,:,:)
    integer, intent(in) :: f
    character(len=*), intent(in) :: ctx
    integer :: i, j, k, lo(3), idx(3), bad
    real(num) :: want
    lo = lower(f)
    bad = 0
    do k = 1, size(a, 3)
      do j = 1, size(a, 2)
        do i = 1, size(a, 1)
          idx = [i, j, k] - 1 + lo
          if (state(f)) then
            want = swept(g, f, stag(:, f), idx, [1, 2, 3])
          else
            want = initial(g, f, stag(:, f), g%coord, idx)
          end if
          checked = checked + 1
          if (a(i, j, k) /= want) then
            bad = bad + 1
            if (bad <= 3) write(*, '(a,i0,a,3i3,a,es24.16,a,es24.16)') 'rank ', rank, &
                 ': ' // trim(fname(f)) // ' point', idx, ' after ' // trim(ctx) // ': got', &
                 a(i, j, k), ' want', want
          end if
        end do
      end do
    end do
    failures = failures + bad
  end subroutine check

  ! Each must stop the run with mpiboundary's message (CTest matches it).
  subroutine error_case(which)
    character(len=*), intent(in) :: which
    real(num), allocatable :: old(:,:,:)
    select case (which)
    case ('early')   ! before mpi_initialise: no grid, no arrays
      call bfield_mpi
    case ('bounds')  ! an array with other bounds than Lare3d's
      call make_grid([1, 1, 1])
      call velocity_mpi
      deallocate(vy)
      allocate(vy(-1:nx+2, -2:ny+2, -2:nz+2))
      call velocity_mpi
    case ('realloc') ! the same bounds, another array (the old one kept, so the address differs)
      call make_grid([1, 1, 1])
      call energy_mpi
      call move_alloc(energy, old)
      allocate(energy(-1:nx+2, -1:ny+2, -1:nz+2))
      call energy_mpi
    end select
    if (rank == 0) write(*, '(a)') 'error case ' // which // ' was not detected'
  end subroutine error_case

end program test_lare3d_dropin
