!> Stand-in for EPIC's mpi_tags: the names of the eight neighbour directions.
module mpi_tags
    implicit none

    integer, parameter :: MPI_NONE = 0, MPI_NORTH = 1, MPI_SOUTH = 2, MPI_WEST = 3, &
                          MPI_EAST = 4, MPI_NORTHWEST = 5, MPI_NORTHEAST = 6,      &
                          MPI_SOUTHWEST = 7, MPI_SOUTHEAST = 8

end module mpi_tags
