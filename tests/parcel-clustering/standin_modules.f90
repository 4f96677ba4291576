! A minimal stand-in for the parts of EPIC-model/parcel-clustering that
! fortran/parcel-clustering/parcel_nearest_haloswap_graph.f90 uses: the same module and
! entity names and interfaces (graph_t, cart, neighbours, timers, error exits), written here
! so the graph can be built and tested without upstream's sources. mpi_environment: EPIC's
! (tests/epic/standin).
module mpi_utils
    use mpi_environment
    implicit none

contains

    subroutine mpi_print(msg)
        character(*), intent(in) :: msg
        if (world%rank == world%root) then
            print '(a)', msg
        endif
    end subroutine mpi_print

    subroutine mpi_exit_on_error(msg)
        character(*), intent(in) :: msg
        print '(a,i0,a)', "Error on rank ", world%rank, ": " // msg
        call MPI_Abort(world%comm, 1, world%err)
    end subroutine mpi_exit_on_error

end module mpi_utils

! x and y split over the ranks, both periodic; neighbours(1:8) are the eight surrounding
! ranks (themselves or repeated when an axis has one or two ranks).
module mpi_layout
    use mpi_environment
    implicit none

    type neighbour_type
        integer :: rank
    end type neighbour_type

    type(communicator)   :: cart
    type(neighbour_type) :: neighbours(8)
    integer              :: layout_size(2), layout_coords(2)

    logical, protected :: l_mpi_layout_initialised = .false.

contains

    subroutine mpi_layout_init
        integer :: dims(2), c(2), n, dx, dy
        logical :: periods(2) = [.true., .true.]

        dims = 0
        call MPI_Dims_create(world%size, 2, dims)
        call MPI_Cart_create(world%comm, 2, dims, periods, .false., cart%comm)
        call MPI_Comm_rank(cart%comm, cart%rank)
        call MPI_Comm_size(cart%comm, cart%size)
        call MPI_Cart_coords(cart%comm, cart%rank, 2, layout_coords)
        layout_size = dims
        n = 0
        do dy = -1, 1
            do dx = -1, 1
                if (dx == 0 .and. dy == 0) then
                    cycle
                endif
                n = n + 1
                c = [modulo(layout_coords(1) + dx, dims(1)), modulo(layout_coords(2) + dy, dims(2))]
                call MPI_Cart_rank(cart%comm, c, neighbours(n)%rank)
            enddo
        enddo
        l_mpi_layout_initialised = .true.
    end subroutine mpi_layout_init

end module mpi_layout

module mpi_timer
    use mpi_f08, only : MPI_Wtime
    implicit none

    type timer_type
        character(len=32) :: name = ''
        double precision  :: wall_time = 0.0d0, start_time = 0.0d0
        integer           :: n_calls = 0
        logical           :: running = .false.
    end type timer_type

    type(timer_type) :: timings(256)
    integer          :: n_timers = 0

contains

    subroutine register_timer(name, handle)
        character(*), intent(in)    :: name
        integer,      intent(inout) :: handle
        if (handle /= -1) then
            return
        endif
        n_timers = n_timers + 1
        handle = n_timers
        timings(handle) = timer_type(name=name)
    end subroutine register_timer

    subroutine start_timer(handle)
        integer, intent(in) :: handle
        if (timings(handle)%running) then
            return
        endif
        timings(handle)%running = .true.
        timings(handle)%n_calls = timings(handle)%n_calls + 1
        timings(handle)%start_time = MPI_Wtime()
    end subroutine start_timer

    subroutine stop_timer(handle)
        integer, intent(in) :: handle
        if (.not. timings(handle)%running) then
            return
        endif
        timings(handle)%running = .false.
        timings(handle)%wall_time = timings(handle)%wall_time &
                                  + (MPI_Wtime() - timings(handle)%start_time)
    end subroutine stop_timer

end module mpi_timer

! The abstract graph: what the graph of small parcels must provide, and the communicator of
! the ranks that resolve (every rank, or with the sub-communicator option only those with
! small parcels or targets of other ranks' small parcels).
module parcel_nearest_graph
    use mpi_environment
    use mpi_layout, only : cart
    use mpi_timer, only : register_timer
    implicit none

    private

    type, abstract :: graph_t
        logical            :: l_enabled_subcomm = .false.
        type(communicator) :: comm
        integer            :: resolve_timer = -1, allreduce_timer = -1, put_timer = -1
        integer            :: get_timer = -1, sync_timer = -1, comm_timer = -1
        logical            :: l_valid_comm_neighbour(8)
    contains
        procedure(graph_initialise),     deferred :: initialise
        procedure(graph_finalise),       deferred :: finalise
        procedure(graph_reset),          deferred :: reset
        procedure(graph_resolve),        deferred :: resolve
        procedure(graph_register_timer), deferred :: register_timer
        procedure :: create_comm
        procedure :: register_common_timers
    end type

    abstract interface
        subroutine graph_initialise(this, num, l_subcomm)
            import :: graph_t
            class(graph_t), intent(inout) :: this
            integer,        intent(in)    :: num
            logical,        intent(in)    :: l_subcomm
        end subroutine graph_initialise

        subroutine graph_finalise(this)
            import :: graph_t
            class(graph_t), intent(inout) :: this
        end subroutine graph_finalise

        subroutine graph_reset(this)
            import :: graph_t
            class(graph_t), intent(inout) :: this
        end subroutine graph_reset

        subroutine graph_resolve(this, isma, iclo, rclo, n_local_small)
            import :: graph_t
            class(graph_t), intent(inout) :: this
            integer,        intent(inout) :: isma(0:)
            integer,        intent(inout) :: iclo(:)
            integer,        intent(inout) :: rclo(:)
            integer,        intent(inout) :: n_local_small
        end subroutine graph_resolve

        subroutine graph_register_timer(this)
            import :: graph_t
            class(graph_t), intent(inout) :: this
        end subroutine graph_register_timer
    end interface

    public :: graph_t

contains

    subroutine create_comm(this, l_exclude)
        class(graph_t), intent(inout) :: this
        logical,        intent(in)    :: l_exclude
        integer                       :: color

        if (this%comm%comm /= MPI_COMM_NULL) then
            call MPI_Comm_free(this%comm%comm)
        endif
        color = 0
        if (this%l_enabled_subcomm .and. l_exclude) then
            color = MPI_UNDEFINED
        endif
        call MPI_Comm_split(cart%comm, color, cart%rank, this%comm%comm)
        if (this%comm%comm /= MPI_COMM_NULL) then
            call MPI_Comm_rank(this%comm%comm, this%comm%rank)
            call MPI_Comm_size(this%comm%comm, this%comm%size)
        endif
        this%l_valid_comm_neighbour = .true.
    end subroutine create_comm

    subroutine register_common_timers(this, label)
        class(graph_t), intent(inout) :: this
        character(*),   intent(in)    :: label
        call register_timer('create comm', this%comm_timer)
        call register_timer('resolve graphs', this%resolve_timer)
        call register_timer('MPI allreduce', this%allreduce_timer)
        call register_timer(label // ' put', this%put_timer)
        call register_timer(label // ' get', this%get_timer)
        call register_timer(label // ' sync', this%sync_timer)
    end subroutine register_common_timers

end module parcel_nearest_graph
