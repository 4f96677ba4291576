!==============================================================================
! haloswap's graph for EPIC's parcel clustering (EPIC-model/parcel-clustering): a graph_t
! whose resolve runs upstream's tree-resolving algorithm over haloswap's remote access layer
! (module haloswap_ra). The layer's back end is chosen at run time by HALOSWAP_RA_BACKEND:
! p2p (default), rma, rma-epoch or shmem. Add this file to the programs' sources and select
! haloswap_graph_t, or use parcel_nearest_p2p_graph.f90 next to it, which makes it the
! p2p_graph_t (docs/parcel-clustering.md).
!
! Results are upstream p2p's (isma, iclo, rclo and n_local_small) on every back end: an
! isolated dual link across ranks is won by the lower rank, on one rank by loop order, and
! the availability set in that pass reaches other ranks only at the next sync.
!==============================================================================
module parcel_nearest_haloswap_graph
    use mpi_f08
    use mpi_environment, only : l_ignore_mpi_finalize, mpi_env_finalise
    use mpi_layout, only : cart, neighbours, l_mpi_layout_initialised
    use mpi_utils, only : mpi_exit_on_error, mpi_print
    use mpi_timer, only : start_timer, stop_timer, register_timer, timings
    use parcel_nearest_graph, only : graph_t
    use haloswap_ra, only : haloswap_ra_layer, haloswap_ra_stats, haloswap_ra_create,       &
                            haloswap_ra_free, haloswap_ra_local, haloswap_ra_put,           &
                            haloswap_ra_get, haloswap_ra_sync, haloswap_ra_complete,        &
                            haloswap_ra_epoch_begin, haloswap_ra_epoch_end,                 &
                            haloswap_ra_set_targets, haloswap_ra_get_stats,                 &
                            haloswap_ra_finalize, haloswap_error_message, HALOSWAP_OK
    use haloswap_dropin, only : haloswap_dropin_check
    use iso_c_binding, only : c_int32_t, c_associated
    implicit none

    private

    integer, parameter :: A_LEAF = 1, A_AVAIL = 2, A_MERGED = 3

    character(len=*), parameter :: DEFAULT_BACKEND = 'p2p'

    type, extends(graph_t) :: haloswap_graph_t

        private

        type(haloswap_ra_layer) :: ra
        character(len=32) :: backend = DEFAULT_BACKEND
        integer :: num = 0
        logical :: l_initialised = .false.

        ! This rank's flags, in the layer's memory (0 or 1)
        integer(c_int32_t), pointer :: l_leaf(:) => null()
        integer(c_int32_t), pointer :: l_available(:) => null()
        integer(c_int32_t), pointer :: l_merged(:) => null()

        ! Availability set in stage 2 for an isolated dual link, published after that pass
        logical, pointer, contiguous :: l_avail_pending(:) => null()

        integer, allocatable :: layer_rank(:)    ! Cartesian rank -> layer rank

        integer :: layer_timer = -1

    contains

        procedure :: initialise => haloswap_graph_initialise
        procedure :: finalise   => haloswap_graph_finalise
        procedure :: reset      => haloswap_graph_reset
        procedure :: resolve    => haloswap_graph_resolve
        procedure :: register_timer => haloswap_graph_register_timer

        procedure, private :: open_layer
        procedure, private :: close_layer
        procedure, private :: sync
        procedure, private :: add_layer_timings

    end type

    public :: haloswap_graph_t

contains

    subroutine haloswap_graph_initialise(this, num, l_subcomm)
        class(haloswap_graph_t), intent(inout) :: this
        integer,                 intent(in)    :: num
        logical,                 intent(in)    :: l_subcomm
        integer                                :: length, stat

        if (this%l_initialised) then
            return
        endif

        if (.not. l_mpi_layout_initialised) then
            call fail("the Cartesian communicator is not initialised yet")
        endif

        call get_environment_variable('HALOSWAP_RA_BACKEND', this%backend, length, stat)
        if (stat == 1 .or. length == 0) then
            this%backend = DEFAULT_BACKEND
        else if (stat /= 0) then
            call fail("HALOSWAP_RA_BACKEND is longer than 32 characters")
        endif

        this%comm%comm = MPI_COMM_NULL
        this%num = num
        this%l_enabled_subcomm = l_subcomm

        ! shmem_barrier_all synchronises every PE: no sub-communicator (as upstream's shmem).
        if (l_subcomm .and. this%backend == 'shmem') then
            call mpi_print("Ignoring the request to use a subcommunicator.")
            call mpi_print("The haloswap back end shmem needs every MPI rank.")
            this%l_enabled_subcomm = .false.
        endif

        allocate(this%l_avail_pending(num))
        this%l_avail_pending = .false.

        ! Without a sub-communicator every rank resolves: one layer for the whole run.
        if (.not. this%l_enabled_subcomm) then
            call this%open_layer(cart%comm)
        endif

        this%l_initialised = .true.

        call mpi_print("haloswap graph: remote access back end " // trim(this%backend))

    end subroutine haloswap_graph_initialise

    !::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::

    subroutine haloswap_graph_finalise(this)
        class(haloswap_graph_t), intent(inout) :: this
        integer                                :: status

        if (.not. this%l_initialised) then
            return
        endif

        call this%close_layer

        deallocate(this%l_avail_pending)

        this%l_initialised = .false.

        ! As upstream's shmem graph: ending OpenSHMEM ends MPI, so the program must not.
        if (this%backend == 'shmem') then
            status = haloswap_ra_finalize()
            l_ignore_mpi_finalize = .true.
        endif

    end subroutine haloswap_graph_finalise

    !::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::

    subroutine haloswap_graph_reset(this)
        class(haloswap_graph_t), intent(inout) :: this

        if (associated(this%l_merged)) then
            this%l_merged = 0
            this%l_leaf = 0
            this%l_available = 0
        endif

    end subroutine haloswap_graph_reset

    !::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::

    subroutine haloswap_graph_register_timer(this)
        class(haloswap_graph_t), intent(inout) :: this

        call this%register_common_timers(label='haloswap RA')

        call register_timer('haloswap RA layer', this%layer_timer)

    end subroutine haloswap_graph_register_timer

    !::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::

    subroutine haloswap_graph_resolve(this, isma, iclo, rclo, n_local_small)
        class(haloswap_graph_t), intent(inout) :: this
        integer,                 intent(inout) :: isma(0:)
        integer,                 intent(inout) :: iclo(:)
        integer,                 intent(inout) :: rclo(:)
        integer,                 intent(inout) :: n_local_small
        integer                                :: ic, rc, is, m, j, k, n, me, nremote, ierr
        integer                                :: nactive
        integer, allocatable                   :: remote_ranks(:), remote_indices(:)
        integer, allocatable                   :: active(:)
        logical                                :: l_continue_iteration
        logical                                :: l_do_merge(n_local_small)
        logical                                :: l_isolated_dual_link(n_local_small)
        type(haloswap_ra_stats)                :: before
        ! This rank's flags (contiguous: the loops below run over every small parcel)
        integer(c_int32_t), pointer, contiguous :: leaf(:), avail(:), merged(:)
        logical, pointer, contiguous           :: pending(:)

        call start_timer(this%resolve_timer)

        n = n_local_small
        me = cart%rank

        call start_timer(this%layer_timer)
        if (this%l_enabled_subcomm) then
            call this%open_layer(this%comm%comm)
        endif
        leaf => this%l_leaf
        avail => this%l_available
        merged => this%l_merged
        pending => this%l_avail_pending

        call check(haloswap_ra_get_stats(this%ra, before))

        ! p2p mirrors exactly the flags of other ranks this rank will touch (the one-sided
        ! back ends need no declaration: every put and get checks its element itself)
        if (this%backend == 'p2p') then
            nremote = count(rclo(1:n) /= me)
            allocate(remote_ranks(nremote), remote_indices(nremote))
            j = 0
            do m = 1, n
                if (rclo(m) /= me) then
                    j = j + 1
                    remote_ranks(j) = this%layer_rank(rclo(m))
                    remote_indices(j) = iclo(m)
                endif
            enddo
            call check(haloswap_ra_set_targets(this%ra, remote_ranks, remote_indices))
            deallocate(remote_ranks, remote_indices)
        endif
        call stop_timer(this%layer_timer)

        ! Below, a flag of this rank is read and written in place, another rank's through
        ! the layer (set_flag, flag).

        !------------------------------------------------------------------
        ! First, iterative, stage: one epoch (rma-epoch) for all its rounds. A link whose
        ! parcel has merged (either way) takes no further part in it: each round runs over
        ! the links still active at its start, in their order.
        call check(haloswap_ra_epoch_begin(this%ra))

        allocate(active(n))
        nactive = n
        do m = 1, n
            active(m) = m
        enddo

        l_continue_iteration = .true.

        do while (l_continue_iteration)
            l_continue_iteration = .false.

            ! reset relevant properties for candidate mergers
            do k = 1, nactive
                m = active(k)
                is = isma(m)
                if (merged(is) == 0) then
                    leaf(is) = 1
                    call set_flag(A_AVAIL, m, 1)
                endif
            enddo

            call this%sync(A_AVAIL)

            ! determine leaf parcels
            do k = 1, nactive
                m = active(k)
                if (merged(isma(m)) == 0) then
                    call set_flag(A_LEAF, m, 0)
                endif
            enddo

            call this%sync(A_LEAF)

            ! filter out parcels that are "unavailable" for merging
            do k = 1, nactive
                m = active(k)
                is = isma(m)
                if ((merged(is) == 0) .and. (leaf(is) == 0)) then
                    call set_flag(A_AVAIL, m, 0)
                endif
            enddo

            call this%sync(A_AVAIL)

            ! identify mergers in this iteration (only leaves can merge: the others need
            ! no read of their target)
            do k = 1, nactive
                m = active(k)
                is = isma(m)
                if ((merged(is) == 0) .and. (leaf(is) /= 0)) then
                    if (flag(A_AVAIL, m) /= 0) then
                        l_continue_iteration = .true.
                        merged(is) = 1
                        call set_flag(A_MERGED, m, 1)
                    endif
                endif
            enddo

            ! The merged flags reach their owners before the allreduce ends the round.
            call start_timer(this%sync_timer)
            call check(haloswap_ra_complete(this%ra, [A_MERGED]))
            call stop_timer(this%sync_timer)

            call start_timer(this%allreduce_timer)
            call MPI_Allreduce(MPI_IN_PLACE, l_continue_iteration, 1, MPI_LOGICAL, MPI_LOR, &
                               this%comm%comm, ierr)
            call stop_timer(this%allreduce_timer)
            if (ierr /= MPI_SUCCESS) then
                call mpi_exit_on_error("in MPI_Allreduce of haloswap_graph_t::resolve.")
            endif

            ! every merged flag of this round has arrived: drop the merged links
            j = 0
            do k = 1, nactive
                m = active(k)
                if (merged(isma(m)) == 0) then
                    j = j + 1
                    active(j) = m
                endif
            enddo
            nactive = j
        enddo

        deallocate(active)

        call check(haloswap_ra_epoch_end(this%ra))

        !------------------------------------------------------------------
        ! Second stage, related to dual links
        call check(haloswap_ra_epoch_begin(this%ra))

        ! leaves of the last round of stage 1 make their targets available
        do m = 1, n
            is = isma(m)
            if ((merged(is) == 0) .and. (leaf(is) /= 0)) then
                call set_flag(A_AVAIL, m, 1)
            endif
        enddo

        call this%sync(A_AVAIL)

        do m = 1, n
            is = isma(m)
            ic = iclo(m)
            rc = rclo(m)
            l_do_merge(m) = .false.
            l_isolated_dual_link(m) = .false.

            if ((merged(is) /= 0) .and. (leaf(is) /= 0)) then
                ! previously identified mergers: keep
                l_do_merge(m) = .true.
                ! a stage-1 merger's target cannot be a leaf
                if (flag(A_LEAF, m) /= 0) then
                    call mpi_exit_on_error('in haloswap_graph_t::resolve: First stage error')
                endif
            else if (merged(is) == 0) then
                if (leaf(is) /= 0) then
                    ! links from leaves
                    l_do_merge(m) = .true.
                else if (avail(is) == 0) then
                    ! parcels made available keep no outgoing link; this rank's own
                    ! availabilities of this pass count at once, other ranks' at the sync
                    if (rc == me) then
                        l_do_merge(m) = (avail(ic) /= 0) .or. pending(ic)
                    else
                        l_do_merge(m) = (flag(A_AVAIL, m) /= 0)
                    endif
                    if (.not. l_do_merge(m)) then
                        ! isolated dual link: the lower rank's parcel becomes available
                        l_isolated_dual_link(m) = .true.
                        if (me <= rc) then
                            pending(is) = .true.
                        endif
                    endif
                endif
            endif
        enddo

        ! publish this pass's availabilities together
        do m = 1, n
            is = isma(m)
            if (pending(is)) then
                avail(is) = 1
                pending(is) = .false.
            endif
        enddo

        call this%sync(A_AVAIL)

        do m = 1, n
            if ((.not. l_do_merge(m)) .and. l_isolated_dual_link(m)) then
                ! merge if the other side was made available; else it merges into us
                l_do_merge(m) = (flag(A_AVAIL, m) /= 0)
            endif
        enddo

        call check(haloswap_ra_epoch_end(this%ra))

        ! One-sided gets above read other ranks' flags in place: no rank may reset them
        ! (the next find_nearest) before every rank is done (p2p's gets read local mirrors).
        if (this%backend /= 'p2p') then
            call start_timer(this%sync_timer)
            call MPI_Barrier(this%comm%comm, ierr)
            call stop_timer(this%sync_timer)
        endif

        j = 0
        do m = 1, n
            if (l_do_merge(m)) then
                j = j + 1
                isma(j) = isma(m)
                iclo(j) = iclo(m)
                rclo(j) = rclo(m)
            endif
        enddo
        n_local_small = j

        call this%add_layer_timings(before)

        if (this%l_enabled_subcomm) then
            call start_timer(this%layer_timer)
            call this%close_layer
            call stop_timer(this%layer_timer)
        endif

        call stop_timer(this%resolve_timer)

    contains

        ! Flag a of link m's target, wherever it is.
        integer function flag(a, m)
            integer, intent(in) :: a, m
            integer(c_int32_t)  :: v
            if (rclo(m) == me) then
                select case (a)
                    case (A_LEAF)
                        v = leaf(iclo(m))
                    case (A_AVAIL)
                        v = avail(iclo(m))
                    case default
                        v = merged(iclo(m))
                end select
            else
                call check(haloswap_ra_get(this%ra, a, this%layer_rank(rclo(m)), iclo(m), v))
            endif
            flag = int(v)
        end function flag

        ! Set flag a of link m's target, wherever it is, to val.
        subroutine set_flag(a, m, val)
            integer, intent(in) :: a, m, val
            if (rclo(m) == me) then
                select case (a)
                    case (A_LEAF)
                        leaf(iclo(m)) = val
                    case (A_AVAIL)
                        avail(iclo(m)) = val
                    case default
                        merged(iclo(m)) = val
                end select
            else
                call check(haloswap_ra_put(this%ra, a, this%layer_rank(rclo(m)), iclo(m), &
                                           int(val, c_int32_t)))
            endif
        end subroutine set_flag

    end subroutine haloswap_graph_resolve

    !::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::

    ! Collective over comm: a layer of three flag arrays of num elements, the peers being the
    ! Cartesian neighbours inside comm.
    subroutine open_layer(this, comm)
        class(haloswap_graph_t), intent(inout) :: this
        type(MPI_Comm),          intent(in)    :: comm
        type(MPI_Group)                        :: cart_group, group
        integer                                :: cart_ranks(0:cart%size-1)
        integer                                :: peers(8), npeers, n, r, ierr, status

        call MPI_Comm_group(cart%comm, cart_group, ierr)
        call MPI_Comm_group(comm, group, ierr)
        do r = 0, cart%size - 1
            cart_ranks(r) = r
        enddo
        if (.not. allocated(this%layer_rank)) then
            allocate(this%layer_rank(0:cart%size-1))
        endif
        call MPI_Group_translate_ranks(cart_group, cart%size, cart_ranks, group, &
                                       this%layer_rank, ierr)
        call MPI_Group_free(cart_group, ierr)
        call MPI_Group_free(group, ierr)

        npeers = 0
        do n = 1, 8
            r = neighbours(n)%rank
            if (r == cart%rank .or. any(peers(1:npeers) == this%layer_rank(r))) then
                cycle
            endif
            if (this%layer_rank(r) /= MPI_UNDEFINED) then
                npeers = npeers + 1
                peers(npeers) = this%layer_rank(r)
            endif
        enddo

        status = haloswap_ra_create(comm, trim(this%backend), 3, this%num, this%ra, &
                                    peers(1:npeers))
        if (status /= HALOSWAP_OK) then
            call fail(haloswap_error_message())
        endif

        this%l_leaf => haloswap_ra_local(this%ra, A_LEAF)
        this%l_available => haloswap_ra_local(this%ra, A_AVAIL)
        this%l_merged => haloswap_ra_local(this%ra, A_MERGED)

    end subroutine open_layer

    !::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::

    subroutine close_layer(this)
        class(haloswap_graph_t), intent(inout) :: this

        if (.not. c_associated(this%ra%ptr)) then
            return
        endif
        nullify(this%l_leaf, this%l_available, this%l_merged)
        call check(haloswap_ra_free(this%ra))

    end subroutine close_layer

    !::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::


    subroutine sync(this, a)
        class(haloswap_graph_t), intent(inout) :: this
        integer,                 intent(in)    :: a

        call start_timer(this%sync_timer)
        call check(haloswap_ra_sync(this%ra, [a]))
        call stop_timer(this%sync_timer)

    end subroutine sync

    !::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::

    ! The layer's own put and get times and counts go to upstream's put and get timers (the
    ! graph does not time each operation itself).
    subroutine add_layer_timings(this, before)
        class(haloswap_graph_t), intent(inout) :: this
        type(haloswap_ra_stats), intent(in)    :: before
        type(haloswap_ra_stats)                :: now

        call check(haloswap_ra_get_stats(this%ra, now))
        timings(this%put_timer)%wall_time = timings(this%put_timer)%wall_time &
                                          + (now%seconds_put - before%seconds_put)
        timings(this%put_timer)%n_calls = timings(this%put_timer)%n_calls &
                                        + int(now%puts - before%puts)
        timings(this%get_timer)%wall_time = timings(this%get_timer)%wall_time &
                                          + (now%seconds_get - before%seconds_get)
        timings(this%get_timer)%n_calls = timings(this%get_timer)%n_calls &
                                        + int(now%gets - before%gets)

    end subroutine add_layer_timings

    !::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::

    ! A failed haloswap call stops through haloswap_dropin_check and EPIC's mpi_exit_on_error.
    subroutine check(status)
        integer, intent(in) :: status

        call haloswap_dropin_check(status, "haloswap_graph_t", pc_abort)

    end subroutine check

    subroutine pc_abort(msg)
        character(*), intent(in) :: msg

        call mpi_exit_on_error(msg)

    end subroutine pc_abort

    ! A collective failure (every rank has the same message): stop cleanly.
    subroutine fail(msg)
        character(*), intent(in) :: msg

        call mpi_print("haloswap graph: " // msg)
        call mpi_env_finalise
        error stop 1

    end subroutine fail

end module parcel_nearest_haloswap_graph
