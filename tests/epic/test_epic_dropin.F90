!> The haloswap drop-in for EPIC's field_mpi, called the way EPIC calls it, on the stand-in
!! mpi_layout: par2grid's 9-field batch (2 integer fields), vol2grid's swap, the boundary
!! layer's 2-D 2-component fill, the inversion's vector fills, accumulate then fill, fill
!! alone. Every halo point is checked against a value computed from global coordinates and
!! every accumulated point against the serial sum in EPIC's order (the owner's value, then
!! W, E, S, N, NE, SE, SW, NW), bit for bit. Each pattern runs twice: the second round must
!! create no plan. Layouts: 1 x N, N x 1 and MPI_Dims_create's grid. Every registered
!! transport in one launch (tests/harness/transport_loop.f90: --only, --except), each with its
!! own verdict; an unusable one prints "SKIP:".
program test_epic_dropin
    use, intrinsic :: iso_c_binding
    use mpi_f08
    use mpi_environment, only : world, mpi_env_initialise, mpi_env_finalise
    use mpi_layout, only : box, mpi_layout_init
    use field_mpi
    use transport_loop
    implicit none

    interface
        integer(c_int) function plans_created() bind(c, name="haloswap_epic_plans_created")
            import :: c_int
        end function plans_created
    end interface

    double precision, parameter :: SENTINEL = -999.0d0
    ! EPIC's order of the reverse's contributions: the neighbour at (dx, dy).
    integer, parameter :: ORDER(2, 8) = reshape([-1, 0, 1, 0, 0, -1, 0, 1, 1, 1, 1, -1, &
                                                 -1, -1, -1, 1], [2, 8])
    ! Lexicographic offsets (another order the sums must not match).
    integer, parameter :: LEXI(2, 8) = reshape([-1, -1, -1, 0, -1, 1, 0, -1, 0, 1, 1, -1, &
                                                1, 0, 1, 1], [2, 8])

    integer :: nx, ny, nz, dims(2), coords(2), layouts(2, 3), nl, l, round, t, nt
    integer :: failures, checks, sensitive, created
    integer, allocatable :: ranges(:, :, :)
    character(len=64) :: tnames(TL_MAX)
    character(len=160) :: verdict
    integer :: status

    call mpi_env_initialise
    dims = 0
    call MPI_Dims_create(world%size, 2, dims)
    call grids_2d(world%size, dims, layouts, nl)

    call transport_list(tnames, nt)
    do t = 1, nt
        if (.not. transport_begin(tnames(t), world%rank)) cycle
        failures = 0
        checks = 0
        sensitive = 0
        ! field_mpi keeps its plans while the grid stays: nz alternates from one transport to
        ! the next, so each transport's plans are new ones, made with it.
        nz = 2 + mod(t, 2)
        do l = 1, nl
            dims = layouts(:, l)
            ! Uneven splits, at least 2 points per rank (EPIC's upper halo is 2 deep).
            nx = 2 * dims(1) + 1
            ny = 2 * dims(2) + 2
            call mpi_layout_init([0.0d0, 0.0d0, 0.0d0], [1.0d0, 1.0d0, 1.0d0], nx, ny, nz, dims)
            call layout_ranges
            do round = 1, 2
                created = plans_created()
                call test_fill_alone(round)
                call test_accumulate_alone(round)
                call test_vol2grid(round)
                call test_par2grid(round)
                call test_boundary_fluxes(round)
                call test_accumulate_then_fill(round)
                call test_reset
                if (round == 1) call expect(plans_created() > created, &
                    "round 1 made new plans (with this transport)")
                if (round == 2) call expect(plans_created() == created, &
                    "round 2 created no plan (plans are cached)")
            enddo
        enddo
        call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, world%comm)
        call MPI_Allreduce(MPI_IN_PLACE, checks, 1, MPI_INTEGER, MPI_SUM, world%comm)
        call MPI_Allreduce(MPI_IN_PLACE, sensitive, 1, MPI_INTEGER, MPI_SUM, world%comm)
        ! The sums must be able to tell EPIC's order from another one, or the test proves nothing.
        if (sensitive == 0) failures = failures + 1
        write(verdict, '(i0,a,i0,a,i0,a,i0,a)') checks, " checks, ", failures, " failed, ", &
            sensitive, " points whose sum depends on the order, ", world%size, " ranks"
        call transport_end(tnames(t), world%rank, failures, trim(verdict))
    enddo
    status = transport_summary("epic_dropin", world%rank, nt == 1)
    call mpi_env_finalise
    ! Freed: gfortran keeps main program variables on MAIN__'s stack, which LeakSanitizer's
    ! exit check no longer sees (a held array would be reported as a leak).
    if (allocated(ranges)) deallocate(ranges)
    if (status == 77) stop 77
    if (status /= 0) error stop 1

contains

    ! Every rank's first and last point along x and y (ranges(1:2, c, axis)), and our coords.
    subroutine layout_ranges
        integer :: a, c, q, r
        if (allocated(ranges)) deallocate(ranges)
        allocate(ranges(2, 0:maxval(dims) - 1, 2))
        do a = 1, 2
            q = merge(nx, ny, a == 1) / dims(a)
            r = mod(merge(nx, ny, a == 1), dims(a))
            do c = 0, dims(a) - 1
                ranges(1, c, a) = c * q + min(c, r)
                ranges(2, c, a) = ranges(1, c, a) + q - 1 + merge(1, 0, c < r)
            enddo
            do c = 0, dims(a) - 1
                if (ranges(1, c, a) == box%lo(a)) coords(a) = c
            enddo
        enddo
    end subroutine layout_ranges

    subroutine expect(ok, what)
        logical,          intent(in) :: ok
        character(len=*), intent(in) :: what
        checks = checks + 1
        if (.not. ok) then
            failures = failures + 1
            write(*, '(a,i0,a,i0,a,i0,a)') "FAIL rank ", world%rank, " layout ", dims(1), &
                "x", dims(2), ": " // what
        endif
    end subroutine expect

    ! ---------------------------------------------------------------- values
    ! An owner's value at global point (gx, gy, z) of field f: a fraction (all mantissa
    ! bits used) whose size varies from point to point.
    double precision function owned(f, gx, gy, z)
        integer, intent(in) :: f, gx, gy, z
        owned = dble(1 + mod(gx * 131 + gy * 17 + (z + 1) * 7 + f * 3, 997)) / 7.0d0 * &
                magnitude(gx * 5 + gy * 3 + z + f)
    end function owned

    ! What the rank at coords (cx, cy) holds before an accumulate at its point (ux, uy, z)
    ! of field f: (ux, uy) unwrapped, so each halo point of each rank has its own value.
    double precision function held(f, cx, cy, ux, uy, z)
        integer, intent(in) :: f, cx, cy, ux, uy, z
        held = dble(1 + mod((ux + 3) * 37 + (uy + 3) * 11 + (z + 1) * 5 + f * 13 + cx * 29 + &
                            cy * 31, 1009)) / 3.0d0 * magnitude(ux * 7 + uy * 5 + cx + 3 * cy + z)
    end function held

    integer function held_int(f, cx, cy, ux, uy, z)
        integer, intent(in) :: f, cx, cy, ux, uy, z
        held_int = mod((ux + 3) * 37 + (uy + 3) * 11 + (z + 1) * 5 + f * 13 + cx * 29 + cy * 31, 50)
    end function held_int

    double precision function magnitude(k)
        integer, intent(in) :: k
        double precision, parameter :: s(4) = [1.0d0, 1024.5d0, 1.0d0 / 1536.0d0, 3.0d5]
        magnitude = s(1 + mod(abs(k), 4))
    end function magnitude

    ! The rank holding global x (or y) point g in its interior, along axis a.
    integer function owner(g, a)
        integer, intent(in) :: g, a
        do owner = 0, dims(a) - 1
            if (g >= ranges(1, owner, a) .and. g <= ranges(2, owner, a)) return
        enddo
    end function owner

    ! For the owner (cx, cy) of interior point g along axis a, the holder at offset d: where
    ! its halo holds g, unwrapped (ok = .false. if its halo does not reach g). The holder
    ! below (d = -1) has 2 points above its interior; the holder above, 1 below.
    subroutine holder_point(g, c, d, a, u, ok)
        integer, intent(in)  :: g, c, d, a
        integer, intent(out) :: u
        logical, intent(out) :: ok
        integer :: h
        h = modulo(c + d, dims(a))
        select case (d)
        case (-1)
            ok = g - ranges(1, c, a) <= 1
            u = ranges(2, h, a) + 1 + (g - ranges(1, c, a))
        case (1)
            ok = g == ranges(2, c, a)
            u = ranges(1, h, a) - 1
        case default
            ok = .true.
            u = g
        end select
    end subroutine holder_point

    ! The accumulated value of global point (gx, gy, z) of field f in the given order: its
    ! owner's own value, then each neighbour's halo contribution.
    double precision function total(f, gx, gy, z, order_of) result(v)
        integer, intent(in) :: f, gx, gy, z, order_of(2, 8)
        integer :: cx, cy, k, ux, uy
        logical :: okx, oky
        cx = owner(gx, 1)
        cy = owner(gy, 2)
        v = held(f, cx, cy, gx, gy, z)
        do k = 1, 8
            call holder_point(gx, cx, order_of(1, k), 1, ux, okx)
            call holder_point(gy, cy, order_of(2, k), 2, uy, oky)
            if (okx .and. oky) v = v + held(f, modulo(cx + order_of(1, k), dims(1)), &
                                            modulo(cy + order_of(2, k), dims(2)), ux, uy, z)
        enddo
    end function total

    integer function total_int(f, gx, gy, z) result(v)
        integer, intent(in) :: f, gx, gy, z
        integer :: cx, cy, k, ux, uy
        logical :: okx, oky
        cx = owner(gx, 1)
        cy = owner(gy, 2)
        v = held_int(f, cx, cy, gx, gy, z)
        do k = 1, 8
            call holder_point(gx, cx, ORDER(1, k), 1, ux, okx)
            call holder_point(gy, cy, ORDER(2, k), 2, uy, oky)
            if (okx .and. oky) v = v + held_int(f, modulo(cx + ORDER(1, k), dims(1)), &
                                                modulo(cy + ORDER(2, k), dims(2)), ux, uy, z)
        enddo
    end function total_int

    ! ---------------------------------------------------------------- set and check
    logical function interior(ix, iy)
        integer, intent(in) :: ix, iy
        interior = ix >= box%lo(1) .and. ix <= box%hi(1) .and. iy >= box%lo(2) .and. iy <= box%hi(2)
    end function interior

    ! mode "fill": interior = owned, halo = SENTINEL. mode "deposit": everything = held.
    ! 3-D fields: z over box%hlo(3):box%hhi(3); 2-D fields: z = 0 only (zlo = zhi = 0).
    subroutine set3(q, f, mode, zlo, zhi)
        integer,          intent(in)  :: f, zlo, zhi
        double precision, intent(out) :: q(zlo:zhi, box%hlo(2):box%hhi(2), box%hlo(1):box%hhi(1))
        character(len=*), intent(in)  :: mode
        integer :: ix, iy, z
        do ix = box%hlo(1), box%hhi(1)
            do iy = box%hlo(2), box%hhi(2)
                do z = zlo, zhi
                    if (mode == "deposit") then
                        q(z, iy, ix) = held(f, coords(1), coords(2), ix, iy, z)
                    else if (interior(ix, iy)) then
                        q(z, iy, ix) = owned(f, ix, iy, z)
                    else
                        q(z, iy, ix) = SENTINEL
                    endif
                enddo
            enddo
        enddo
    end subroutine set3

    subroutine set_int(q, f)
        integer, intent(out) :: q(box%hlo(3):, box%hlo(2):, box%hlo(1):)
        integer, intent(in)  :: f
        integer :: ix, iy, z
        do ix = box%hlo(1), box%hhi(1)
            do iy = box%hlo(2), box%hhi(2)
                do z = box%hlo(3), box%hhi(3)
                    q(z, iy, ix) = held_int(f, coords(1), coords(2), ix, iy, z)
                enddo
            enddo
        enddo
    end subroutine set_int

    ! mode "fill": interior unchanged, every halo point = its owner's value.
    ! mode "accumulate": interior = EPIC-order totals, halo unchanged.
    ! mode "swap": interior and halo = totals.
    subroutine check3(q, f, mode, what, zlo, zhi)
        integer,          intent(in) :: f, zlo, zhi
        double precision, intent(in) :: q(zlo:zhi, box%hlo(2):box%hhi(2), box%hlo(1):box%hhi(1))
        character(len=*), intent(in) :: mode, what
        integer :: ix, iy, z, bad, gx, gy
        double precision :: want
        bad = 0
        do ix = box%hlo(1), box%hhi(1)
            do iy = box%hlo(2), box%hhi(2)
                gx = modulo(ix, nx)
                gy = modulo(iy, ny)
                do z = zlo, zhi
                    if (mode == "fill") then
                        want = owned(f, gx, gy, z)
                    else if (mode == "accumulate" .and. .not. interior(ix, iy)) then
                        want = held(f, coords(1), coords(2), ix, iy, z)
                    else
                        want = total(f, gx, gy, z, ORDER)
                        if (interior(ix, iy) .and. total(f, gx, gy, z, LEXI) /= want) &
                            sensitive = sensitive + 1
                    endif
                    if (q(z, iy, ix) /= want) then
                        bad = bad + 1
                        if (bad <= 3) write(*, '(a,i0,a,3(i0,1x),a,es24.16,a,es24.16)') "rank ", &
                            world%rank, " " // what // " point (x y z) ", ix, iy, z, ": ", &
                            q(z, iy, ix), " expected ", want
                    endif
                enddo
            enddo
        enddo
        call expect(bad == 0, what)
    end subroutine check3

    subroutine check_int(q, f, what)
        integer,          intent(in) :: q(box%hlo(3):, box%hlo(2):, box%hlo(1):)
        integer,          intent(in) :: f
        character(len=*), intent(in) :: what
        integer :: ix, iy, z, bad
        bad = 0
        do ix = box%hlo(1), box%hhi(1)
            do iy = box%hlo(2), box%hhi(2)
                do z = box%hlo(3), box%hhi(3)
                    if (q(z, iy, ix) /= total_int(f, modulo(ix, nx), modulo(iy, ny), z)) bad = bad + 1
                enddo
            enddo
        enddo
        call expect(bad == 0, what)
    end subroutine check_int

    subroutine new3(q)
        double precision, allocatable, intent(out) :: q(:, :, :)
        allocate(q(box%hlo(3):box%hhi(3), box%hlo(2):box%hhi(2), box%hlo(1):box%hhi(1)))
    end subroutine new3

    subroutine new2(q)
        double precision, allocatable, intent(out) :: q(:, :)
        allocate(q(box%hlo(2):box%hhi(2), box%hlo(1):box%hhi(1)))
    end subroutine new2

    ! ---------------------------------------------------------------- call patterns
    ! rk_utils (tbuoyg, strain_mag: two arrays of one plan), inversion (velog: 3 components),
    ! and 2-D fields.
    subroutine test_fill_alone(round)
        integer, intent(in) :: round
        double precision, allocatable :: a(:, :, :), b(:, :, :), v(:, :, :, :), s(:, :), w(:, :, :)
        integer :: c
        call new3(a)
        call new3(b)
        call set3(a, 10 * round + 1, "fill", box%hlo(3), box%hhi(3))
        call set3(b, 10 * round + 2, "fill", box%hlo(3), box%hhi(3))
        call field_halo_fill_scalar(a, l_alloc=.true.)
        call field_halo_fill_scalar(b, l_alloc=.true.)
        call check3(a, 10 * round + 1, "fill", "fill_scalar 3-D", box%hlo(3), box%hhi(3))
        call check3(b, 10 * round + 2, "fill", "fill_scalar 3-D, a second array", box%hlo(3), box%hhi(3))
        allocate(v(box%hlo(3):box%hhi(3), box%hlo(2):box%hhi(2), box%hlo(1):box%hhi(1), 3))
        do c = 1, 3
            call set3(v(:, :, :, c), 10 * round + 2 + c, "fill", box%hlo(3), box%hhi(3))
        enddo
        call field_halo_fill_vector(v, l_alloc=.true.)
        do c = 1, 3
            call check3(v(:, :, :, c), 10 * round + 2 + c, "fill", "fill_vector 3-D", box%hlo(3), box%hhi(3))
        enddo
        call new2(s)
        call set3(s, 10 * round + 6, "fill", 0, 0)
        call field_halo_fill_scalar(s, l_alloc=.true.)
        call check3(s, 10 * round + 6, "fill", "fill_scalar 2-D", 0, 0)
        allocate(w(box%hlo(2):box%hhi(2), box%hlo(1):box%hhi(1), 2))
        do c = 1, 2
            call set3(w(:, :, c), 10 * round + 6 + c, "fill", 0, 0)
        enddo
        call field_halo_fill_vector(w, l_alloc=.true.)
        do c = 1, 2
            call check3(w(:, :, c), 10 * round + 6 + c, "fill", "fill_vector 2-D", 0, 0)
        enddo
    end subroutine test_fill_alone

    subroutine test_accumulate_alone(round)
        integer, intent(in) :: round
        double precision, allocatable :: a(:, :, :), v(:, :, :, :), s(:, :)
        integer :: c
        call new3(a)
        call set3(a, 100 + round, "deposit", box%hlo(3), box%hhi(3))
        call field_interior_accumulate_scalar(a, l_alloc=.true.)
        call check3(a, 100 + round, "accumulate", "interior_accumulate_scalar 3-D", box%hlo(3), box%hhi(3))
        allocate(v(box%hlo(3):box%hhi(3), box%hlo(2):box%hhi(2), box%hlo(1):box%hhi(1), 2))
        do c = 1, 2
            call set3(v(:, :, :, c), 110 + round + c, "deposit", box%hlo(3), box%hhi(3))
        enddo
        call field_interior_accumulate_vector(v, l_alloc=.true.)
        do c = 1, 2
            call check3(v(:, :, :, c), 110 + round + c, "accumulate", "interior_accumulate_vector 3-D", box%hlo(3), box%hhi(3))
        enddo
        call new2(s)
        call set3(s, 120 + round, "deposit", 0, 0)
        call field_interior_accumulate_scalar(s, l_alloc=.true.)
        call check3(s, 120 + round, "accumulate", "interior_accumulate_scalar 2-D", 0, 0)
    end subroutine test_accumulate_alone

    ! vol2grid: field_halo_swap_scalar(volg).
    subroutine test_vol2grid(round)
        integer, intent(in) :: round
        double precision, allocatable :: volg(:, :, :)
        call new3(volg)
        call set3(volg, 200 + round, "deposit", box%hlo(3), box%hhi(3))
        call field_halo_swap_scalar(volg)
        call check3(volg, 200 + round, "swap", "vol2grid halo_swap_scalar", box%hlo(3), box%hhi(3))
    end subroutine test_vol2grid

    ! par2grid_halo_swap: 9 fields in one reverse-then-forward exchange, vortg's components
    ! as sections of one array, nparg and nsparg integer.
    subroutine test_par2grid(round)
        integer, intent(in) :: round
        double precision, allocatable :: volg(:, :, :), vortg(:, :, :, :), tbuoyg(:, :, :), &
                                         dbuoyg(:, :, :), humg(:, :, :)
        integer, allocatable :: nparg(:, :, :), nsparg(:, :, :)
        integer :: c, f0
        f0 = 300 + 10 * round
        call new3(volg)
        call new3(tbuoyg)
        call new3(dbuoyg)
        call new3(humg)
        allocate(vortg(box%hlo(3):box%hhi(3), box%hlo(2):box%hhi(2), box%hlo(1):box%hhi(1), 3))
        allocate(nparg(box%hlo(3):box%hhi(3), box%hlo(2):box%hhi(2), box%hlo(1):box%hhi(1)))
        allocate(nsparg, mold=nparg)
        call set3(volg, f0, "deposit", box%hlo(3), box%hhi(3))
        do c = 1, 3
            call set3(vortg(:, :, :, c), f0 + c, "deposit", box%hlo(3), box%hhi(3))
        enddo
        call set3(tbuoyg, f0 + 4, "deposit", box%hlo(3), box%hhi(3))
        call set_int(nparg, f0 + 5)
        call set_int(nsparg, f0 + 6)
        call set3(dbuoyg, f0 + 7, "deposit", box%hlo(3), box%hhi(3))
        call set3(humg, f0 + 8, "deposit", box%hlo(3), box%hhi(3))

        call field_mpi_alloc(9, ndim=3)
        call field_halo_to_buffer(volg, 1)
        call field_halo_to_buffer(vortg(:, :, :, 1), 2)
        call field_halo_to_buffer(vortg(:, :, :, 2), 3)
        call field_halo_to_buffer(vortg(:, :, :, 3), 4)
        call field_halo_to_buffer(tbuoyg, 5)
        call field_halo_to_buffer_integer(nparg, 6)
        call field_halo_to_buffer_integer(nsparg, 7)
        call field_halo_to_buffer(dbuoyg, 8)
        call field_halo_to_buffer(humg, 9)
        call halo_to_interior_communication
        call field_buffer_to_interior(volg, 1, .true.)
        call field_buffer_to_interior(vortg(:, :, :, 1), 2, .true.)
        call field_buffer_to_interior(vortg(:, :, :, 2), 3, .true.)
        call field_buffer_to_interior(vortg(:, :, :, 3), 4, .true.)
        call field_buffer_to_interior(tbuoyg, 5, .true.)
        call field_buffer_to_interior_integer(nparg, 6, .true.)
        call field_buffer_to_interior_integer(nsparg, 7, .true.)
        call field_buffer_to_interior(dbuoyg, 8, .true.)
        call field_buffer_to_interior(humg, 9, .true.)

        call field_interior_to_buffer(volg, 1)
        call field_interior_to_buffer(vortg(:, :, :, 1), 2)
        call field_interior_to_buffer(vortg(:, :, :, 2), 3)
        call field_interior_to_buffer(vortg(:, :, :, 3), 4)
        call field_interior_to_buffer(tbuoyg, 5)
        call field_interior_to_buffer_integer(nparg, 6)
        call field_interior_to_buffer_integer(nsparg, 7)
        call field_interior_to_buffer(dbuoyg, 8)
        call field_interior_to_buffer(humg, 9)
        call interior_to_halo_communication
        call field_buffer_to_halo(volg, 1, .false.)
        call field_buffer_to_halo(vortg(:, :, :, 1), 2, .false.)
        call field_buffer_to_halo(vortg(:, :, :, 2), 3, .false.)
        call field_buffer_to_halo(vortg(:, :, :, 3), 4, .false.)
        call field_buffer_to_halo(tbuoyg, 5, .false.)
        call field_buffer_to_halo_integer(nparg, 6, .false.)
        call field_buffer_to_halo_integer(nsparg, 7, .false.)
        call field_buffer_to_halo(dbuoyg, 8, .false.)
        call field_buffer_to_halo(humg, 9, .false.)
        call field_mpi_dealloc

        call check3(volg, f0, "swap", "par2grid volg", box%hlo(3), box%hhi(3))
        do c = 1, 3
            call check3(vortg(:, :, :, c), f0 + c, "swap", "par2grid vortg", box%hlo(3), box%hhi(3))
        enddo
        call check3(tbuoyg, f0 + 4, "swap", "par2grid tbuoyg", box%hlo(3), box%hhi(3))
        call check_int(nparg, f0 + 5, "par2grid nparg (integer)")
        call check_int(nsparg, f0 + 6, "par2grid nsparg (integer)")
        call check3(dbuoyg, f0 + 7, "swap", "par2grid dbuoyg", box%hlo(3), box%hhi(3))
        call check3(humg, f0 + 8, "swap", "par2grid humg", box%hlo(3), box%hhi(3))
    end subroutine test_par2grid

    ! bndry_fluxes_fill_halo: two 2-D fields in one batch.
    subroutine test_boundary_fluxes(round)
        integer, intent(in) :: round
        double precision, allocatable :: binc(:, :), hinc(:, :)
        call new2(binc)
        call new2(hinc)
        call set3(binc, 400 + round, "fill", 0, 0)
        call set3(hinc, 410 + round, "fill", 0, 0)
        call field_mpi_alloc(2, ndim=2)
        call field_interior_to_buffer(binc, 1)
        call field_interior_to_buffer(hinc, 2)
        call interior_to_halo_communication
        call field_buffer_to_halo(binc, 1, .false.)
        call field_buffer_to_halo(hinc, 2, .false.)
        call field_mpi_dealloc
        call check3(binc, 400 + round, "fill", "bndry_fluxes binc", 0, 0)
        call check3(hinc, 410 + round, "fill", "bndry_fluxes hinc", 0, 0)
    end subroutine test_boundary_fluxes

    ! Accumulate then fill as separate calls, and the vector swap (3-D and 2-D).
    subroutine test_accumulate_then_fill(round)
        integer, intent(in) :: round
        double precision, allocatable :: a(:, :, :), v(:, :, :, :), w(:, :, :)
        integer :: c
        call new3(a)
        call set3(a, 500 + round, "deposit", box%hlo(3), box%hhi(3))
        call field_interior_accumulate_scalar(a, l_alloc=.true.)
        call field_halo_fill_scalar(a, l_alloc=.true.)
        call check3(a, 500 + round, "swap", "accumulate_scalar then fill_scalar", box%hlo(3), box%hhi(3))
        allocate(v(box%hlo(3):box%hhi(3), box%hlo(2):box%hhi(2), box%hlo(1):box%hhi(1), 3))
        do c = 1, 3
            call set3(v(:, :, :, c), 510 + round + c, "deposit", box%hlo(3), box%hhi(3))
        enddo
        call field_halo_swap_vector(v)
        do c = 1, 3
            call check3(v(:, :, :, c), 510 + round + c, "swap", "halo_swap_vector 3-D", box%hlo(3), box%hhi(3))
        enddo
        allocate(w(box%hlo(2):box%hhi(2), box%hlo(1):box%hhi(1), 2))
        do c = 1, 2
            call set3(w(:, :, c), 520 + round + c, "deposit", 0, 0)
        enddo
        call field_halo_swap_vector(w)
        do c = 1, 2
            call check3(w(:, :, c), 520 + round + c, "swap", "halo_swap_vector 2-D", 0, 0)
        enddo
    end subroutine test_accumulate_then_fill

    ! field_halo_reset zeroes exactly the halo.
    subroutine test_reset
        double precision, allocatable :: a(:, :, :), v(:, :, :, :)
        integer :: ix, iy, bad
        call new3(a)
        a = 1.0d0
        allocate(v(box%hlo(3):box%hhi(3), box%hlo(2):box%hhi(2), box%hlo(1):box%hhi(1), 3))
        v = 1.0d0
        call field_halo_reset(a)
        call field_halo_reset(v)
        bad = 0
        do ix = box%hlo(1), box%hhi(1)
            do iy = box%hlo(2), box%hhi(2)
                if (any(a(:, iy, ix) /= merge(1.0d0, 0.0d0, interior(ix, iy)))) bad = bad + 1
                if (any(v(:, iy, ix, :) /= merge(1.0d0, 0.0d0, interior(ix, iy)))) bad = bad + 1
            enddo
        enddo
        call expect(bad == 0, "field_halo_reset")
    end subroutine test_reset

end program test_epic_dropin
