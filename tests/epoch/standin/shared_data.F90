! Stand-in for EPOCH's shared_data (epoch3d/src/shared_data.F90): the names the haloswap_epoch
! drop-in uses, declared as EPOCH declares them (old-style `USE mpi`, integer handles).
MODULE shared_data

  USE mpi
  USE constants

  IMPLICIT NONE

  TYPE particle_species
    INTEGER, DIMENSION(2*c_ndims) :: bc_particle
  END TYPE particle_species

  INTEGER :: mpireal = MPI_DOUBLE_PRECISION
  INTEGER :: nx, ny, nz
  INTEGER :: nx_global, ny_global, nz_global
  INTEGER, DIMENSION(2*c_ndims) :: bc_field, bc_particle, bc_allspecies
  TYPE(particle_species), DIMENSION(:), POINTER :: species_list => NULL()
  INTEGER :: n_species = 0
  INTEGER :: coordinates(c_ndims), neighbour(-1:1, -1:1, -1:1)
  INTEGER :: nprocx, nprocy, nprocz, nproc, rank, errcode, comm = MPI_COMM_NULL, tag = 0
  INTEGER :: x_coords, y_coords, z_coords
  INTEGER :: proc_x_min, proc_x_max, proc_y_min, proc_y_max, proc_z_min, proc_z_max
  LOGICAL :: x_min_boundary, x_max_boundary
  LOGICAL :: y_min_boundary, y_max_boundary
  LOGICAL :: z_min_boundary, z_max_boundary
  INTEGER, DIMENSION(:), ALLOCATABLE :: cell_x_min, cell_x_max
  INTEGER, DIMENSION(:), ALLOCATABLE :: cell_y_min, cell_y_max
  INTEGER, DIMENSION(:), ALLOCATABLE :: cell_z_min, cell_z_max

END MODULE shared_data
