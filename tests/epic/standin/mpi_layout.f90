!> Stand-in for EPIC's mpi_layout: x and y split over a periodic 2-D Cartesian communicator
!! `cart` (no reordering), z whole; `box` with halos 1 below and 2 above in x and y and one
!! boundary point either side in z; the eight `neighbours`. mpi_layout_init takes an
!! optional `dims` to force the process grid (the tests run 1 x N, N x 1 and 2-D), and may
!! be called again for another layout.
module mpi_layout
    use mpi_f08
    use mpi_environment, only : communicator, world
    use mpi_tags
    implicit none

    type box_type
        integer          :: lo(3), hi(3), hlo(3), hhi(3)
        integer          :: size(3), halo_size(3), global_size(3)
        double precision :: lower(3), extent(3)
    end type box_type

    type neighbour_type
        integer :: rank
    end type neighbour_type

    type parallel_layout
        integer :: size(3), coords(3)
    end type parallel_layout

    type(communicator)    :: cart
    type(box_type)        :: box
    type(neighbour_type)  :: neighbours(8)
    type(parallel_layout) :: layout

contains

    subroutine mpi_layout_init(lower, extent, nx, ny, nz, dims)
        double precision, intent(in)           :: lower(3), extent(3)
        integer,          intent(in)           :: nx, ny, nz
        integer,          intent(in), optional :: dims(2)
        integer                                :: d(2), c(2), n(2), k
        integer, parameter                     :: dirs(2, 8) = reshape(     &
            [0, 1,  0, -1,  -1, 0,  1, 0,  -1, 1,  1, 1,  -1, -1,  1, -1], [2, 8])

        if (cart%comm /= MPI_COMM_NULL) call MPI_Comm_free(cart%comm)
        d = 0
        if (present(dims)) d = dims
        call MPI_Dims_create(world%size, 2, d)
        call MPI_Cart_create(world%comm, 2, d, [.true., .true.], .false., cart%comm)
        call MPI_Comm_rank(cart%comm, cart%rank)
        call MPI_Comm_size(cart%comm, cart%size)
        call MPI_Cart_coords(cart%comm, cart%rank, 2, c)
        layout%size = [d(1), d(2), 1]
        layout%coords = [c(1), c(2), 0]
        n = [nx, ny]
        do k = 1, 2
            call split(n(k), d(k), c(k), box%lo(k), box%hi(k))
        enddo
        box%lo(3) = 0
        box%hi(3) = nz
        box%hlo = [box%lo(1) - 1, box%lo(2) - 1, -1]
        box%hhi = [box%hi(1) + 2, box%hi(2) + 2, nz + 1]
        box%size = box%hi - box%lo + 1
        box%halo_size = box%hhi - box%hlo + 1
        box%global_size = [nx, ny, nz]
        box%extent = extent * dble(box%size) / dble(box%global_size)
        box%lower = lower + extent * dble(box%lo) / dble(box%global_size)
        ! neighbours(k): the rank at offset dirs(:, k); periodic, so MPI_Cart_rank wraps.
        do k = 1, 8
            call MPI_Cart_rank(cart%comm, c + dirs(:, k), neighbours(k)%rank)
        enddo
    end subroutine mpi_layout_init

    ! The first mod(n, p) ranks along an axis get one point more.
    subroutine split(n, p, c, first, last)
        integer, intent(in)  :: n, p, c
        integer, intent(out) :: first, last
        integer              :: q, r

        q = n / p
        r = mod(n, p)
        first = c * q + min(c, r)
        last = first + q - 1
        if (c < r) last = last + 1
    end subroutine split

end module mpi_layout
