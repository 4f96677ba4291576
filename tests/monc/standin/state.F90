!> Stand-in for MONC's state_mod (test only): the parts of the model state that the halo API
!! and the test policies use, with MONC's component names.
module state_mod
  use grids_mod, only : global_grid_type, local_grid_type
  use prognostics_mod, only : prognostic_field_type
  use communication_types_mod, only : halo_communication_type
  implicit none
  private

  type, public :: parallel_state_type
     integer :: processes, my_rank, neighbour_comm, monc_communicator = -1
     integer, dimension(3) :: my_coords, dim_sizes
     logical, dimension(3,2) :: wrapped_around
  end type parallel_state_type

  type, public :: model_state_type
     logical :: initialised = .false.
     type(global_grid_type) :: global_grid
     type(local_grid_type) :: local_grid
     type(parallel_state_type) :: parallel
     type(prognostic_field_type) :: u, w, v, th, p, zu, zw, zv, zth, vis_coefficient, &
          diff_coefficient
     type(prognostic_field_type), dimension(:), allocatable :: q, zq
     integer :: number_q_fields = 0
     type(halo_communication_type) :: viscosity_halo_swap_state, diffusion_halo_swap_state
  end type model_state_type
end module state_mod
