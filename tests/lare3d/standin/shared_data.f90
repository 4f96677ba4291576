! Stand-in for Lare3d's shared_data (src/core/shared_data.F90): the names the mpiboundary
! drop-in uses, declared as Lare3d declares them (old-style `USE mpi`, integer handles).
MODULE shared_data

  USE mpi

  IMPLICIT NONE

  INTEGER, PARAMETER :: num = KIND(1.D0)
  INTEGER, PARAMETER :: dbl = KIND(1.D0)
  INTEGER, PARAMETER :: c_ndims = 3
  INTEGER, PARAMETER :: mpireal = MPI_DOUBLE_PRECISION

  INTEGER :: nx_global, ny_global, nz_global
  INTEGER :: nx, ny, nz
  REAL(num), DIMENSION(:,:,:), ALLOCATABLE :: rho, energy
  REAL(num), DIMENSION(:,:,:), ALLOCATABLE :: bx, vx, vx1
  REAL(num), DIMENSION(:,:,:), ALLOCATABLE :: by, vy, vy1
  REAL(num), DIMENSION(:,:,:), ALLOCATABLE :: bz, vz, vz1

  INTEGER :: coordinates(c_ndims)
  INTEGER, DIMENSION(:), ALLOCATABLE :: cell_nx_mins, cell_nx_maxs
  INTEGER, DIMENSION(:), ALLOCATABLE :: cell_ny_mins, cell_ny_maxs
  INTEGER, DIMENSION(:), ALLOCATABLE :: cell_nz_mins, cell_nz_maxs
  INTEGER :: nprocx, proc_x_min, proc_x_max
  INTEGER :: nprocy, proc_y_min, proc_y_max
  INTEGER :: nprocz, proc_z_min, proc_z_max
  INTEGER :: rank, errcode, comm = MPI_COMM_NULL, tag = 0, nproc

END MODULE shared_data
