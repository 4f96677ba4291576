!> Stand-in for EPIC's mpi_environment (src/mpi/mpi_environment.f90): the communicator type,
!! `world` and l_ignore_mpi_finalize, as EPIC names them (the parcel-clustering test uses it
!! too).
module mpi_environment
    use mpi_f08
    implicit none

    type :: communicator
        type(MPI_Comm) :: comm = MPI_COMM_NULL
        integer        :: err = 0
        integer        :: rank = 0
        integer        :: size = 1
        integer        :: root = 0
    end type communicator

    type(communicator) :: world

    logical :: l_ignore_mpi_finalize = .false.

contains

    subroutine mpi_env_initialise
        call MPI_Init(world%err)
        world%comm = MPI_COMM_WORLD
        call MPI_Comm_size(world%comm, world%size, world%err)
        call MPI_Comm_rank(world%comm, world%rank, world%err)
    end subroutine mpi_env_initialise

    subroutine mpi_env_finalise
        if (.not. l_ignore_mpi_finalize) call MPI_Finalize(world%err)
    end subroutine mpi_env_finalise

end module mpi_environment
