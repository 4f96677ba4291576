!> Stand-in for MONC's grids_mod (test only): the local grid description the halo API reads.
module grids_mod
  implicit none
  private
  integer, parameter, public :: Z_INDEX = 1, Y_INDEX = 2, X_INDEX = 3

  type, public :: local_grid_type
     integer, dimension(3) :: start, end, size, halo_size, local_domain_start_index, &
          local_domain_end_index
     logical, dimension(3) :: active = (/ .false., .false., .false. /)
     integer, dimension(:,:), allocatable :: neighbours, corner_neighbours
     integer :: dimensions = 0
  end type local_grid_type

  type, public :: global_grid_type
     integer, dimension(3) :: size
  end type global_grid_type
end module grids_mod
