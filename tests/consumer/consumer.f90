! The Fortran consumer: the MONC-named module from an installed haloswap, field(z, y, x) with
! halo 1, one blocking depth-1 box swap, every x/y halo cell checked against its global value.
program consumer
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use haloswap
  implicit none
  integer, parameter :: gx = 8, gy = 6, nz = 3, h = 1
  type(haloswap_decomposition) :: decomp
  type(halo_communication_type) :: hs
  real(c_double), allocatable, target :: u(:,:,:)
  integer :: ierr, rank, nx, ny, ox, oy, x, y, z, bad, total

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call haloswap_decomposition_create(decomp, MPI_COMM_WORLD, [gx, gy, nz], ierr)
  if (ierr /= 0) error stop "haloswap_decomposition_create failed"
  nx = haloswap_local_extent(decomp, HALOSWAP_X)
  ny = haloswap_local_extent(decomp, HALOSWAP_Y)
  ox = haloswap_global_offset(decomp, HALOSWAP_X)
  oy = haloswap_global_offset(decomp, HALOSWAP_Y)
  allocate(u(nz, 1-h:ny+h, 1-h:nx+h))
  u = -1
  do x = 1, nx
    do y = 1, ny
      do z = 1, nz
        u(z, y, x) = val(ox + x - 1, oy + y - 1, z)
      end do
    end do
  end do
  call init_halo_communication(hs, decomp, [haloswap_field(u)], 1, .true., ierr)
  if (ierr /= 0) error stop "init_halo_communication failed"
  call blocking_halo_swap(hs, ierr)
  if (ierr /= 0) error stop "blocking_halo_swap failed"
  bad = 0
  do x = 1 - h, nx + h
    do y = 1 - h, ny + h
      do z = 1, nz
        if (u(z, y, x) /= val(modulo(ox + x - 1, gx), modulo(oy + y - 1, gy), z)) bad = bad + 1
      end do
    end do
  end do
  call MPI_Allreduce(bad, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (total == 0) then
      print '(a)', "consumer OK (Fortran)"
    else
      print '(a, i0, a)', "consumer FAILED: ", total, " wrong cells"
    end if
  end if
  call finalise_halo_communication(hs, ierr)
  call haloswap_decomposition_free(decomp, ierr)
  call MPI_Finalize()
  if (total /= 0) error stop 1
contains
  real(c_double) function val(ix, iy, iz)
    integer, intent(in) :: ix, iy, iz
    val = 10000d0 * ix + 100d0 * iy + iz
  end function val
end program consumer
