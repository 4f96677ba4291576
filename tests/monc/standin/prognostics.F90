!> Stand-in for MONC's prognostics_mod (test only).
module prognostics_mod
  use datadefn_mod, only : DEFAULT_PRECISION
  implicit none
  private
  type, public :: prognostic_field_type
     logical :: active = .false.
     real(kind=DEFAULT_PRECISION), dimension(:,:,:), allocatable :: data
  end type prognostic_field_type
end module prognostics_mod
