! haloswap_graph_t (fortran/parcel-clustering) driven as parcel-clustering's find_nearest does
! (reset, create_comm, resolve on the ranks of the communicator) on graphs of small parcels
! whose resolved links are known: hand-made patterns (chains, stars, dual links across and
! within ranks, a 3-cycle) with their results written out below, a sparse case where most
! ranks take no part, and random graphs. Every case is checked against a serial reference of
! the algorithm over the whole graph (itself checked against the hand-made results), on
! every back end named on the command line, with and without the sub-communicator.
!
!   test_pc_graph BACKEND...     (shmem, if named, must come last: ending it ends MPI)
! Exit 0: all passed; 77: no named back end is built into this haloswap; else failures.
program test_pc_graph
    use mpi_f08
    use iso_c_binding, only : c_int, c_char, c_null_char
    use mpi_environment
    use mpi_layout
    use mpi_timer, only : timings
    use parcel_nearest_graph, only : graph_t
    use parcel_nearest_haloswap_graph, only : haloswap_graph_t
    use haloswap_ra, only : haloswap_ra_backend_available, HALOSWAP_OK
    implicit none

    interface
        integer(c_int) function setenv(name, value, overwrite) bind(c, name='setenv')
            import :: c_int, c_char
            character(kind=c_char), intent(in) :: name(*), value(*)
            integer(c_int), value :: overwrite
        end function setenv
    end interface

    integer, parameter :: MAXL = 1000, NUM = 400, NCASES = 6

    ! The global graph: link l goes from parcel is_(l) on rank own(l) to parcel ti(l) on
    ! rank tr(l); a rank's links in increasing l are its small parcels in loop order.
    integer :: nl, own(MAXL), is_(MAXL), tr(MAXL), ti(MAXL)
    integer, allocatable :: nparcels(:)
    logical :: keep(MAXL)

    ! What the hand-made patterns must give: the links that merge.
    integer :: nexpect
    integer :: expect(MAXL)

    class(graph_t), allocatable :: tree
    character(len=32) :: backend
    integer :: iarg, nargs, c, k, failures, total_fail, nresolved, navailable
    logical :: l_sub

    call mpi_env_initialise
    call mpi_layout_init
    allocate(nparcels(0:cart%size-1))

    nargs = command_argument_count()
    total_fail = 0
    navailable = 0
    do iarg = 1, nargs
        call get_command_argument(iarg, backend)
        if (haloswap_ra_backend_available(trim(backend)) /= HALOSWAP_OK) then
            if (world%rank == 0) print '(a)', "SKIP " // trim(backend) // ": not built"
            cycle
        endif
        navailable = navailable + 1
        k = setenv('HALOSWAP_RA_BACKEND' // c_null_char, trim(backend) // c_null_char, 1_c_int)

        failures = 0
        do k = 0, 1
            l_sub = (k == 1)
            allocate(haloswap_graph_t :: tree)
            call tree%initialise(NUM, l_sub)
            call tree%register_timer
            nresolved = 0
            do c = 1, NCASES
                call build_case(c)
                call reference
                failures = failures + check_case(c, l_sub)
            enddo
            ! every resolve of this rank went through the graph's own timer
            if (timings(tree%resolve_timer)%n_calls < nresolved) then
                print '(a,i0)', "resolve timer not started by every resolve on rank ", cart%rank
                failures = failures + 1
            endif
            call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, world%comm)
            if (world%rank == 0) then
                print '(a,a,l1,a,i0,a)', trim(backend), " subcomm=", l_sub, ": ", failures, &
                                         " failure(s)"
            endif
            total_fail = total_fail + failures
            failures = 0
            ! shmem's finalise ends MPI (as upstream's): only its last pass calls it; the
            ! first layer is then left to MPI_Finalize.
            if (trim(backend) /= 'shmem' .or. l_sub) then
                call tree%finalise
            endif
            deallocate(tree)
        enddo
    enddo

    call mpi_env_finalise
    ! Freed: gfortran keeps main program variables on MAIN__'s stack, which LeakSanitizer's
    ! exit check no longer sees (a held array would be reported as a leak).
    deallocate(nparcels)
    if (navailable == 0) then
        stop 77
    endif
    if (total_fail /= 0) then
        error stop 1
    endif

contains

    ! Rank of the neighbour of rank r in direction (dx, dy) of the periodic Cartesian layout.
    integer function nbr(r, dx, dy)
        integer, intent(in) :: r, dx, dy
        integer :: cc(2)
        call MPI_Cart_coords(cart%comm, r, 2, cc)
        cc = [modulo(cc(1) + dx, layout_size(1)), modulo(cc(2) + dy, layout_size(2))]
        call MPI_Cart_rank(cart%comm, cc, nbr)
    end function nbr

    integer function new_parcel(r)
        integer, intent(in) :: r
        nparcels(r) = nparcels(r) + 1
        new_parcel = nparcels(r)
    end function new_parcel

    integer function link(r, i, rt, it)
        integer, intent(in) :: r, i, rt, it
        nl = nl + 1
        own(nl) = r
        is_(nl) = i
        tr(nl) = rt
        ti(nl) = it
        link = nl
    end function link

    ! Park-Miller minimal standard generator: the same stream on every rank.
    integer function rnd(state, n)
        integer(kind=8), intent(inout) :: state
        integer,         intent(in)    :: n
        state = mod(state * 48271_8, 2147483647_8)
        rnd = int(mod(state, int(n, 8)))
    end function rnd

    subroutine build_case(c)
        integer, intent(in) :: c
        integer :: r

        nl = 0
        nparcels = 0
        nexpect = 0
        select case (c)
            case (1)
                ! hand-made patterns on ranks 0, 1, 3, 4, 6, 7 (2, 5, 8 only as targets)
                do r = 0, cart%size - 1
                    if (mod(r, 3) /= 2) call patterns(r)
                enddo
            case (2)
                ! only rank 0 and its east neighbour hold parcels
                call patterns(0)
            case default
                call random_graph(int(c, 8) * 7919_8 + 17_8)
        end select
        if (maxval(nparcels) > NUM) then
            error stop "test_pc_graph: a case has more parcels than the graph's capacity"
        endif
    end subroutine build_case

    ! Each pattern on rank r and its east (E) and north (N) neighbours, with its result.
    subroutine patterns(r)
        integer, intent(in) :: r
        integer :: e, n, a, b, cc, d, x, la, lb, lc, lx

        e = nbr(r, 1, 0)
        n = nbr(r, 0, 1)

        ! chain a(r) -> b(E) -> c(r) -> d(E, large): a merges into b, then c into d
        a = new_parcel(r)
        b = new_parcel(e)
        cc = new_parcel(r)
        d = new_parcel(e)
        la = link(r, a, e, b)
        lb = link(e, b, r, cc)
        lc = link(r, cc, e, d)
        call expect_links([la, lc])

        ! dual link a(r) <-> b(E): the parcel on the lower rank receives; on one rank the
        ! first in loop order (a, created first)
        a = new_parcel(r)
        b = new_parcel(e)
        la = link(r, a, e, b)
        lb = link(e, b, r, a)
        if (e < r) then
            call expect_links([la])
        else
            call expect_links([lb])
        endif

        ! dual link a(r) <-> b(N) with a leaf c(r) -> a: c and b both merge into a
        a = new_parcel(r)
        b = new_parcel(n)
        cc = new_parcel(r)
        la = link(r, a, n, b)
        lb = link(n, b, r, a)
        lc = link(r, cc, r, a)
        call expect_links([lb, lc])

        ! star: a(r), b(N), c(E) -> x(E, large): all merge
        x = new_parcel(e)
        a = new_parcel(r)
        b = new_parcel(n)
        cc = new_parcel(e)
        la = link(r, a, e, x)
        lb = link(n, b, e, x)
        lc = link(e, cc, e, x)
        call expect_links([la, lb, lc])

        ! 3-cycle on rank r in loop order a, b, c: c merges into a, a into b
        a = new_parcel(r)
        b = new_parcel(r)
        cc = new_parcel(r)
        la = link(r, a, r, b)
        lb = link(r, b, r, cc)
        lc = link(r, cc, r, a)
        call expect_links([lc, la])

        ! a leaf a(E) -> b(r) whose target points at a large parcel x(N): a merges into b,
        ! and b (not a leaf) keeps no link
        a = new_parcel(e)
        b = new_parcel(r)
        x = new_parcel(n)
        la = link(e, a, r, b)
        lx = link(r, b, n, x)
        call expect_links([la])
    end subroutine patterns

    subroutine expect_links(ls)
        integer, intent(in) :: ls(:)
        expect(nexpect+1:nexpect+size(ls)) = ls
        nexpect = nexpect + size(ls)
    end subroutine expect_links

    ! Random graph: per rank 0..60 parcels, about half of them small, each linked to another
    ! parcel on its own rank or a neighbour's; a third of the links are made dual links.
    subroutine random_graph(seed)
        integer(kind=8), intent(in) :: seed
        integer(kind=8) :: st
        integer :: r, i, rt, it, l, nsmall(0:cart%size-1), dirs, first(0:cart%size-1)
        integer :: linked(0:cart%size-1, NUM)

        st = seed
        do r = 0, cart%size - 1
            nparcels(r) = rnd(st, 61)
            if (rnd(st, 4) == 0) nparcels(r) = 0       ! some ranks hold nothing
            nsmall(r) = nparcels(r) / 2 + rnd(st, 3)
            nsmall(r) = min(nsmall(r), nparcels(r))
        enddo
        linked = 0
        do r = 0, cart%size - 1
            first(r) = nl + 1
            do i = 1, nsmall(r)
                if (linked(r, i) /= 0) cycle
                do
                    dirs = rnd(st, 9)
                    rt = nbr(r, mod(dirs, 3) - 1, dirs / 3 - 1)
                    if (nparcels(rt) > 0) exit
                enddo
                it = 1 + rnd(st, nparcels(rt))
                if (rt == r .and. it == i) it = 1 + mod(it, nparcels(rt))
                if (rt == r .and. it == i) cycle          ! a rank with a single parcel
                l = link(r, i, rt, it)
                linked(r, i) = l
                if (it <= nsmall(rt) .and. linked(rt, it) == 0 .and. rnd(st, 3) == 0) then
                    linked(rt, it) = link(rt, it, r, i)
                endif
            enddo
        enddo
        ! loop order on a rank: its links sorted by parcel (dual links were added out of turn)
        call sort_by_rank_and_parcel
    end subroutine random_graph

    subroutine sort_by_rank_and_parcel
        integer :: a, b, key(MAXL), t(4)
        do a = 1, nl
            key(a) = own(a) * (NUM + 1) + is_(a)
        enddo
        do a = 2, nl
            b = a
            do while (b > 1)
                if (key(b - 1) <= key(b)) exit
                call swap(key(b - 1), key(b))
                t = [own(b), is_(b), tr(b), ti(b)]
                own(b) = own(b - 1); is_(b) = is_(b - 1); tr(b) = tr(b - 1); ti(b) = ti(b - 1)
                own(b - 1) = t(1); is_(b - 1) = t(2); tr(b - 1) = t(3); ti(b - 1) = t(4)
                b = b - 1
            enddo
        enddo
    end subroutine sort_by_rank_and_parcel

    subroutine swap(x, y)
        integer, intent(inout) :: x, y
        integer :: t
        t = x; x = y; y = t
    end subroutine swap

    ! The algorithm over the whole graph, one rank's pass after the other where the passes
    ! read what they write (stage 2's first pass; other ranks see its results after it).
    subroutine reference
        integer :: off(0:cart%size), l, s, t, r
        logical, allocatable :: merged(:), leaf(:), avail(:), pending(:)
        logical :: cont, iso(MAXL), a

        off(0) = 0
        do r = 0, cart%size - 1
            off(r + 1) = off(r) + nparcels(r)
        enddo
        allocate(merged(off(cart%size)), leaf(off(cart%size)), avail(off(cart%size)))
        allocate(pending(off(cart%size)))
        merged = .false.; leaf = .false.; avail = .false.; pending = .false.
        keep(1:nl) = .false.
        iso(1:nl) = .false.

        cont = .true.
        do while (cont)
            cont = .false.
            do l = 1, nl
                s = off(own(l)) + is_(l); t = off(tr(l)) + ti(l)
                if (.not. merged(s)) then
                    leaf(s) = .true.; avail(t) = .true.
                endif
            enddo
            do l = 1, nl
                s = off(own(l)) + is_(l); t = off(tr(l)) + ti(l)
                if (.not. merged(s)) leaf(t) = .false.
            enddo
            do l = 1, nl
                s = off(own(l)) + is_(l); t = off(tr(l)) + ti(l)
                if (.not. merged(s) .and. .not. leaf(s)) avail(t) = .false.
            enddo
            do l = 1, nl
                s = off(own(l)) + is_(l); t = off(tr(l)) + ti(l)
                if (.not. merged(s) .and. leaf(s) .and. avail(t)) then
                    merged(s) = .true.; merged(t) = .true.; cont = .true.
                endif
            enddo
        enddo

        do l = 1, nl
            s = off(own(l)) + is_(l); t = off(tr(l)) + ti(l)
            if (.not. merged(s) .and. leaf(s)) avail(t) = .true.
        enddo
        do l = 1, nl
            s = off(own(l)) + is_(l); t = off(tr(l)) + ti(l)
            if (merged(s) .and. leaf(s)) then
                keep(l) = .true.
                if (leaf(t)) error stop "reference: a stage-1 merger points at a leaf"
            else if (.not. merged(s)) then
                if (leaf(s)) then
                    keep(l) = .true.
                else if (.not. avail(s)) then
                    a = avail(t)
                    if (tr(l) == own(l)) a = a .or. pending(t)
                    if (a) then
                        keep(l) = .true.
                    else
                        iso(l) = .true.
                        if (own(l) <= tr(l)) pending(s) = .true.
                    endif
                endif
            endif
        enddo
        avail = avail .or. pending
        do l = 1, nl
            t = off(tr(l)) + ti(l)
            if (iso(l) .and. .not. keep(l) .and. avail(t)) keep(l) = .true.
        enddo
    end subroutine reference

    ! Resolves case c on this rank and compares with the reference (and, for the hand-made
    ! cases, the reference with the results written out). Returns the number of failures.
    integer function check_case(c, l_sub) result(nfail)
        integer, intent(in) :: c
        logical, intent(in) :: l_sub
        integer, allocatable :: isma(:), iclo(:), rclo(:)
        integer :: n, m, l, nkeep
        logical :: targeted, want(MAXL)

        nfail = 0
        if (c <= 2) then
            want(1:nl) = .false.
            want(expect(1:nexpect)) = .true.
            if (any(want(1:nl) .neqv. keep(1:nl))) then
                if (cart%rank == 0) print '(a,i0)', "reference disagrees with the hand-made results, case ", c
                nfail = nfail + 1
            endif
        endif

        n = count(own(1:nl) == cart%rank)
        allocate(isma(0:n), iclo(max(n, 1)), rclo(max(n, 1)))
        isma = -1; iclo = -1; rclo = -1
        m = 0
        do l = 1, nl
            if (own(l) == cart%rank) then
                m = m + 1
                isma(m) = is_(l); iclo(m) = ti(l); rclo(m) = tr(l)
            endif
        enddo
        ! as find_nearest: a rank with no small parcel that nobody else targets stays out
        targeted = any(tr(1:nl) == cart%rank .and. own(1:nl) /= cart%rank)

        call tree%reset
        call tree%create_comm(l_exclude=(n == 0 .and. .not. targeted))
        if (tree%comm%comm /= MPI_COMM_NULL) then
            call tree%resolve(isma, iclo, rclo, n)
            nresolved = nresolved + 1
        else if (.not. l_sub) then
            print '(a,i0)', "rank left out without the sub-communicator: ", cart%rank
            nfail = nfail + 1
        endif

        nkeep = count(keep(1:nl) .and. own(1:nl) == cart%rank)
        if (n /= nkeep) then
            print '(a,i0,a,i0,a,i0,a,i0)', "case ", c, " rank ", cart%rank, ": ", n, &
                                           " links kept, expected ", nkeep
            nfail = nfail + 1
            return
        endif
        m = 0
        do l = 1, nl
            if (own(l) == cart%rank .and. keep(l)) then
                m = m + 1
                if (isma(m) /= is_(l) .or. iclo(m) /= ti(l) .or. rclo(m) /= tr(l)) then
                    print '(a,i0,a,i0,a,i0,a,3i5,a,3i5)', "case ", c, " rank ", cart%rank, &
                        " link ", m, ": ", isma(m), iclo(m), rclo(m), " expected ", &
                        is_(l), ti(l), tr(l)
                    nfail = nfail + 1
                endif
            endif
        enddo
    end function check_case

end program test_pc_graph
