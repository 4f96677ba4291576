!> Stand-in for MONC's datadefn_mod (test only): the kinds the halo modules use.
module datadefn_mod
  use mpi, only : MPI_DOUBLE_PRECISION
  implicit none
  private
  integer, public, parameter :: SINGLE_PRECISION = selected_real_kind(6, 30)
  integer, public, parameter :: DOUBLE_PRECISION = selected_real_kind(15, 307)
  integer, public, parameter :: DEFAULT_PRECISION = DOUBLE_PRECISION
  integer, public, parameter :: PRECISION_TYPE = MPI_DOUBLE_PRECISION
end module datadefn_mod
