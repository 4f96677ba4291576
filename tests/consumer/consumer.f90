! The Fortran consumer: the MONC-named module from an installed haloswap, field(z, y, x) with
! halo 1, one blocking depth-1 box swap, every x/y halo cell checked against its global value;
! and the remote access layer's module: each rank puts its rank into the next rank's element.
program consumer
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use haloswap
  use haloswap_ra, only: haloswap_ra_layer, haloswap_ra_create, haloswap_ra_put, haloswap_ra_sync, &
       haloswap_ra_local, haloswap_ra_free
  implicit none
  integer, parameter :: gx = 8, gy = 6, nz = 3, h = 1
  type(haloswap_decomposition) :: decomp
  type(halo_communication_type) :: hs
  real(c_double), allocatable, target :: u(:,:,:)
  integer :: ierr, rank, nx, ny, ox, oy, x, y, z, bad, total, np
  type(haloswap_ra_layer) :: ra
  integer(c_int32_t), pointer :: mine(:)

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
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  if (haloswap_ra_create(MPI_COMM_WORLD, 'rma', 1, 1, ra) /= HALOSWAP_OK) error stop "haloswap_ra_create failed"
  if (haloswap_ra_put(ra, 1, modulo(rank + 1, np), 1, int(rank, c_int32_t)) /= HALOSWAP_OK) error stop "put failed"
  if (haloswap_ra_sync(ra) /= HALOSWAP_OK) error stop "haloswap_ra_sync failed"
  mine => haloswap_ra_local(ra, 1)
  if (mine(1) /= modulo(rank - 1, np)) bad = bad + 1
  if (haloswap_ra_free(ra) /= HALOSWAP_OK) error stop "haloswap_ra_free failed"
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
