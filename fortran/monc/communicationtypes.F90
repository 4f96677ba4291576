!> haloswap drop-in for MONC's communication_types_mod (model_core/src/communication/
!! communicationtypes.F90): the same public types and components, so MONC's components
!! compile unchanged. Written for haloswap; only the interface follows MONC.
!!
!! Differences a component could notice (none of MONC's own components does):
!!  * the four halo buffers are pointers, not allocatables: during a policy callback they
!!    point straight into the transport's send or receive memory (no extra copy); outside a
!!    callback they are disassociated;
!!  * haloswap_context holds the haloswap plan behind the state.
module communication_types_mod
  use, intrinsic :: iso_c_binding, only : c_ptr, c_null_ptr
  use datadefn_mod, only : DEFAULT_PRECISION
  implicit none

#ifndef TEST_MODE
  private
#endif

  !> Wrapper to pass arbitrary 3-D arrays (source_data) instead of the prognostic fields.
  type field_data_wrapper_type
     real(kind=DEFAULT_PRECISION), dimension(:,:,:), pointer :: data
  end type field_data_wrapper_type

  !> One distinct neighbour rank of a halo state: what is swapped with it and, during a
  !! callback, where the pages for the current call live.
  type neighbour_description_type
     integer :: pid, halo_pages=0, halo_corners=0, dimension, recv_size, send_size, &
          recv_corner_size, send_corner_size
     real(kind=DEFAULT_PRECISION), dimension(:,:,:), pointer :: send_halo_buffer => null(), &
          recv_halo_buffer => null(), send_corner_buffer => null(), &
          recv_corner_buffer => null()
  end type neighbour_description_type

  !> State of one kind of halo swap (one per component that swaps).
  type halo_communication_type
     integer :: number_distinct_neighbours, fields_per_cell, halo_depth, cell_match(3,4)
     type(neighbour_description_type), dimension(:), allocatable :: halo_swap_neighbours
     integer, dimension(:), allocatable :: send_requests, recv_requests
     logical :: initialised = .false., swap_in_progress=.false., involve_corners=.false.
     type(c_ptr) :: haloswap_context = c_null_ptr
  end type halo_communication_type

  public halo_communication_type, neighbour_description_type, field_data_wrapper_type
end module communication_types_mod
