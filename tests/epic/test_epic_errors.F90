!> Mistakes EPIC code could make with field_mpi, one per run (the case is the argument):
!! each must stop the run through mpi_exit_on_error with a message naming the routine, the
!! argument and what was expected (run_error.cmake checks the message and the exit code).
program test_epic_errors
    use mpi_f08
    use mpi_environment, only : world, mpi_env_initialise, mpi_env_finalise
    use mpi_layout, only : box, mpi_layout_init
    use field_mpi
    implicit none

    character(len=32) :: what
    integer :: n, dims(2)
    double precision, allocatable :: q(:, :, :), bad(:, :, :), v(:, :, :, :)

    call mpi_env_initialise
    call get_command_argument(1, what)
    ! A 2-D grid of 2 points per rank; "small": one point per rank along x.
    dims = 0
    call MPI_Dims_create(world%size, 2, dims)
    n = 2
    if (what == "small") n = 1
    call mpi_layout_init([0.0d0, 0.0d0, 0.0d0], [1.0d0, 1.0d0, 1.0d0], n * dims(1), 2 * dims(2), 2, dims)
    allocate(q(box%hlo(3):box%hhi(3), box%hlo(2):box%hhi(2), box%hlo(1):box%hhi(1)))
    allocate(v(box%hlo(3):box%hhi(3), box%hlo(2):box%hhi(2), box%hlo(1):box%hhi(1), 3))
    q = 1.0d0
    v = 1.0d0

    select case (what)
    case ("bounds")        ! one point short in x
        allocate(bad(box%hlo(3):box%hhi(3), box%hlo(2):box%hhi(2), box%hlo(1):box%hhi(1) - 1))
        call field_halo_fill_scalar(bad, l_alloc=.true.)
    case ("bounds_staged") ! the staged calls check too
        allocate(bad(box%hlo(3):box%hhi(3) + 1, box%hlo(2):box%hhi(2), box%hlo(1):box%hhi(1)))
        call field_mpi_alloc(1, ndim=3)
        call field_halo_to_buffer(bad, 1)
    case ("no_alloc")      ! a staged call without field_mpi_alloc
        call field_interior_to_buffer(q, 1)
    case ("no_alloc_fill") ! l_alloc = .false. outside a batch
        call field_halo_fill_scalar(q, l_alloc=.false.)
    case ("components")    ! more components than allocated
        call field_mpi_alloc(2, ndim=3)
        call field_interior_to_buffer(q, 3)
    case ("components_vector")
        call field_mpi_alloc(2, ndim=3)
        call field_halo_fill_vector(v, l_alloc=.false.)
    case ("ndim")          ! a 3-D field in a 2-D batch
        call field_mpi_alloc(1, ndim=2)
        call field_interior_to_buffer(q, 1)
    case ("not_exchanged") ! buffer_to_halo before the communication
        call field_mpi_alloc(1, ndim=3)
        call field_interior_to_buffer(q, 1)
        call field_buffer_to_halo(q, 1, .false.)
    case ("other_array")   ! buffer_to_halo with another array than was recorded
        allocate(bad, mold=q)
        call field_mpi_alloc(1, ndim=3)
        call field_interior_to_buffer(q, 1)
        call interior_to_halo_communication
        call field_buffer_to_halo(bad, 1, .false.)
    case ("small", "transport") ! haloswap refuses the plan
        call field_halo_fill_scalar(q, l_alloc=.true.)
    case default
        write(*, '(a)') "unknown case " // trim(what)
    end select
    write(*, '(a)') "no error was raised"
    call mpi_env_finalise
end program test_epic_errors
