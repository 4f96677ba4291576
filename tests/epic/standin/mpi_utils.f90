!> Stand-in for EPIC's mpi_utils: EPIC's way of stopping on an error.
module mpi_utils
    use mpi_f08
    use mpi_environment, only : world
    implicit none

contains

    subroutine mpi_exit_on_error(msg, rank)
        character(*), optional, intent(in) :: msg
        integer,      optional, intent(in) :: rank
        integer                            :: r

        r = world%rank
        if (present(rank)) r = rank
        if (present(msg)) write(*, '(a,i0,a)') "Error on rank ", r, " " // msg
        flush(6)
        call MPI_Abort(world%comm, -1)
    end subroutine mpi_exit_on_error

end module mpi_utils
