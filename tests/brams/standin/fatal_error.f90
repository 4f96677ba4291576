! Stand-in for BRAMS's fatal_error (utils/lib/parlibf.F90): the message, then MPI_Abort.
subroutine fatal_error(msg)
  use mpi_f08, only: MPI_Abort, MPI_COMM_WORLD
  implicit none
  character(len=*), intent(in) :: msg
  write(*, '(a)') 'FATAL ERROR: ' // msg
  flush(6)
  call MPI_Abort(MPI_COMM_WORLD, 1)
end subroutine fatal_error
