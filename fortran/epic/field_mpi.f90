!> haloswap drop-in for EPIC's field_mpi (src/3d/fields/field_mpi.f90 of EPIC-model/epic).
!! The same public names, generics and argument lists, so EPIC's sources compile and run
!! unchanged; the halos move through haloswap plans whose transport is chosen at run time
!! (HALOSWAP_TRANSPORT, HALOSWAP_OPTIONS; default p2p). docs/epic.md has the details.
!!
!! How EPIC's buffers map onto haloswap:
!!  * Fields are data(box%hlo(3):box%hhi(3), box%hlo(2):box%hhi(2), box%hlo(1):box%hhi(1)[, nc])
!!    with halos 1 below and 2 above in x and y. z is not swapped: EPIC's whole z range,
!!    boundary rows included, is the interior of a z axis that one rank keeps whole, so it
!!    travels inside the horizontal messages as in EPIC. Eight neighbours (box stencil),
!!    corners straight from the diagonal ranks.
!!  * The staged calls do not copy: field_interior_to_buffer / field_halo_to_buffer record
!!    the array of component nc; interior_to_halo_communication (forward) and
!!    halo_to_interior_communication (reverse, summed) exchange every array recorded since,
!!    in place, as one haloswap exchange; field_buffer_to_halo / field_buffer_to_interior
!!    check that they get the arrays that were exchanged. The reverse adds contributions in
!!    EPIC's order (W, E, S, N, NE, SE, SW, NW), so sums are EPIC's bits.
!!  * Integer fields are exchanged as integer(4) (EPIC goes through a double temporary:
!!    the same values for counts below 2**31).
!!  * Plans are cached across calls, keyed by the exchanged fields' kinds and ranks (their
!!    shapes follow from box); every exchange passes its arrays as per-swap arrays.
!!    Cached plans are freed at MPI_Finalize.
!!  * The haloswap decomposition is built at first use from EPIC's cart and box, and checked
!!    against them (ranks, neighbours, bounds) on every rank together.
!!  * Errors (bounds not matching box, a staged call without field_mpi_alloc, nc outside the
!!    allocated components, any haloswap failure) stop through EPIC's mpi_exit_on_error with
!!    a message naming the routine, the argument and what was expected.
!!
!! HALOSWAP_EPIC_STATS=1: every rank prints, per plan, its fields, the transport that moved
!! them (auto's choice, marked so), exchanges and seconds at MPI_Finalize.
module field_mpi
    use, intrinsic :: iso_c_binding
    use, intrinsic :: iso_fortran_env, only : output_unit
    use mpi_f08
    use mpi_layout, only : box, cart, neighbours
    use mpi_tags, only : MPI_NORTH, MPI_SOUTH, MPI_WEST, MPI_EAST, MPI_NORTHWEST, &
                         MPI_NORTHEAST, MPI_SOUTHWEST, MPI_SOUTHEAST
    use mpi_utils, only : mpi_exit_on_error
    use haloswap, only : haloswap_decomposition, halo_communication_type,               &
                         haloswap_decomposition_free, finalise_halo_communication,      &
                         haloswap_global_offset, haloswap_local_extent
    use haloswap_geometry, only : haloswap_gfield, haloswap_field_set_depth,              &
                                  haloswap_geometry_init, haloswap_decomposition_create_ex, &
                                  HALOSWAP_OP_SUM
    use haloswap_dropin, only : haloswap_dropin_at_finalize, haloswap_dropin_fail,        &
                                haloswap_dropin_check, haloswap_dropin_bounds,            &
                                haloswap_dropin_transport,                                &
                                haloswap_dropin_swap, haloswap_dropin_reverse
    implicit none

    private

    interface field_halo_fill_scalar
        module procedure :: fill_scalar_2d, fill_scalar_3d
    end interface field_halo_fill_scalar

    interface field_halo_fill_vector
        module procedure :: fill_vector_2d, fill_vector_3d
    end interface field_halo_fill_vector

    interface field_halo_swap_scalar
        module procedure :: swap_scalar_2d, swap_scalar_3d
    end interface field_halo_swap_scalar

    interface field_halo_swap_vector
        module procedure :: swap_vector_2d, swap_vector_3d
    end interface field_halo_swap_vector

    interface field_halo_reset
        module procedure :: reset_scalar, reset_vector
    end interface field_halo_reset

    interface field_interior_accumulate_scalar
        module procedure :: accumulate_scalar_2d, accumulate_scalar_3d
    end interface field_interior_accumulate_scalar

    interface field_interior_accumulate_vector
        module procedure :: accumulate_vector_2d, accumulate_vector_3d
    end interface field_interior_accumulate_vector

    interface field_interior_to_buffer
        module procedure :: interior_to_buffer_2d, interior_to_buffer_3d
    end interface field_interior_to_buffer

    interface field_buffer_to_halo
        module procedure :: buffer_to_halo_2d, buffer_to_halo_3d
    end interface field_buffer_to_halo

    interface field_halo_to_buffer
        module procedure :: halo_to_buffer_2d, halo_to_buffer_3d
    end interface field_halo_to_buffer

    interface field_buffer_to_interior
        module procedure :: buffer_to_interior_2d, buffer_to_interior_3d
    end interface field_buffer_to_interior

    public :: field_halo_reset                  &
            , field_halo_fill_scalar            &
            , field_halo_fill_vector            &
            , field_interior_accumulate_scalar  &
            , field_interior_accumulate_vector  &
            , field_halo_swap_scalar            &
            , field_halo_swap_vector            &
            , field_mpi_alloc                   &
            , field_mpi_dealloc                 &
            , field_halo_to_buffer              &
            , field_buffer_to_halo              &
            , field_interior_to_buffer          &
            , field_buffer_to_interior          &
            , interior_to_halo_communication    &
            , halo_to_interior_communication    &
            , field_halo_to_buffer_integer      &
            , field_buffer_to_interior_integer  &
            , field_interior_to_buffer_integer  &
            , field_buffer_to_halo_integer

    ! A staged call's array as a haloswap field, after checking it against box.
    interface field_in
        module procedure :: field_f64_in, field_int_in
    end interface field_in

    ! The two directions of the staged calls (and SWAP: both, for field_halo_swap_*).
    integer, parameter :: FILL = 1, GATHER = 2, SWAP = 3
    character(len=*), parameter :: DIRNAME(2) = ["fill      ", "accumulate"]
    ! Slot states: nothing recorded, recorded for the next exchange, exchanged.
    integer, parameter :: EMPTY = 0, STAGED = 1, DONE = 2
    integer, parameter :: MAX_PLANS = 64

    ! EPIC's order of the reverse's contributions, by the neighbour they come from (x, y, z).
    integer, parameter :: EPIC_ORDER(3, 8) = reshape([-1,  0, 0,  1,  0, 0,  0, -1, 0, &
                                                       0,  1, 0,  1,  1, 0,  1, -1, 0, &
                                                      -1, -1, 0, -1,  1, 0], [3, 8])
    ! The same neighbours as mpi_tags' directions.
    integer, parameter :: EPIC_DIRECTION(8) = [MPI_WEST, MPI_EAST, MPI_SOUTH, MPI_NORTH, &
                                               MPI_NORTHEAST, MPI_SOUTHEAST, MPI_SOUTHWEST, MPI_NORTHWEST]

    type :: slot_type
        type(haloswap_gfield) :: f
        integer               :: state = EMPTY
    end type slot_type

    type :: plan_entry
        logical                            :: used = .false.
        integer,               allocatable :: kinds(:), ranks(:)
        type(halo_communication_type)      :: hs
        integer                            :: last_use = 0
        integer                            :: count(2) = 0
        double precision                   :: seconds(2) = 0.0d0
    end type plan_entry

    logical :: l_allocated = .false.
    integer :: n_comp = 0, n_dim = 0
    type(slot_type), allocatable :: slots(:, :)   ! (n_comp, FILL:GATHER)

    ! The decomposition and what it was built from (all the same on every rank).
    logical                      :: l_decomp = .false.
    type(haloswap_decomposition) :: decomp
    integer                      :: decomp_key(8) = 0, decomp_box(4) = 0
    type(plan_entry)             :: plans(MAX_PLANS)
    integer                      :: use_clock = 0, plans_created = 0
    logical                      :: l_final_hook = .false.

contains

    !::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::
    ! Convenience routines: one field (or one vector field) filled, accumulated or both.
    ! Each specific only fixes the rank EPIC's generic resolves on; convenience does the rest.

    subroutine fill_scalar_3d(data, l_alloc)
        double precision, intent(inout), target :: data(box%hlo(3):, box%hlo(2):, box%hlo(1):)
        logical,          intent(in)            :: l_alloc
        call convenience(FILL, data, .false., l_alloc, "field_halo_fill_scalar")
    end subroutine fill_scalar_3d

    subroutine fill_scalar_2d(data, l_alloc)
        double precision, intent(inout), target :: data(box%hlo(2):, box%hlo(1):)
        logical,          intent(in)            :: l_alloc
        call convenience(FILL, data, .false., l_alloc, "field_halo_fill_scalar")
    end subroutine fill_scalar_2d

    subroutine fill_vector_3d(data, l_alloc)
        double precision, intent(inout), target :: data(box%hlo(3):, box%hlo(2):, box%hlo(1):, :)
        logical,          intent(in)            :: l_alloc
        call convenience(FILL, data, .true., l_alloc, "field_halo_fill_vector")
    end subroutine fill_vector_3d

    subroutine fill_vector_2d(data, l_alloc)
        double precision, intent(inout), target :: data(box%hlo(2):, box%hlo(1):, :)
        logical,          intent(in)            :: l_alloc
        call convenience(FILL, data, .true., l_alloc, "field_halo_fill_vector")
    end subroutine fill_vector_2d

    subroutine accumulate_scalar_3d(data, l_alloc)
        double precision, intent(inout), target :: data(box%hlo(3):, box%hlo(2):, box%hlo(1):)
        logical,          intent(in)            :: l_alloc
        call convenience(GATHER, data, .false., l_alloc, "field_interior_accumulate_scalar")
    end subroutine accumulate_scalar_3d

    subroutine accumulate_scalar_2d(data, l_alloc)
        double precision, intent(inout), target :: data(box%hlo(2):, box%hlo(1):)
        logical,          intent(in)            :: l_alloc
        call convenience(GATHER, data, .false., l_alloc, "field_interior_accumulate_scalar")
    end subroutine accumulate_scalar_2d

    subroutine accumulate_vector_3d(data, l_alloc)
        double precision, intent(inout), target :: data(box%hlo(3):, box%hlo(2):, box%hlo(1):, :)
        logical,          intent(in)            :: l_alloc
        call convenience(GATHER, data, .true., l_alloc, "field_interior_accumulate_vector")
    end subroutine accumulate_vector_3d

    subroutine accumulate_vector_2d(data, l_alloc)
        double precision, intent(inout), target :: data(box%hlo(2):, box%hlo(1):, :)
        logical,          intent(in)            :: l_alloc
        call convenience(GATHER, data, .true., l_alloc, "field_interior_accumulate_vector")
    end subroutine accumulate_vector_2d

    subroutine swap_scalar_3d(data)
        double precision, intent(inout), target :: data(box%hlo(3):, box%hlo(2):, box%hlo(1):)
        call convenience(SWAP, data, .false., .false., "field_halo_swap_scalar")
    end subroutine swap_scalar_3d

    subroutine swap_scalar_2d(data)
        double precision, intent(inout), target :: data(box%hlo(2):, box%hlo(1):)
        call convenience(SWAP, data, .false., .false., "field_halo_swap_scalar")
    end subroutine swap_scalar_2d

    subroutine swap_vector_3d(data)
        double precision, intent(inout), target :: data(box%hlo(3):, box%hlo(2):, box%hlo(1):, :)
        call convenience(SWAP, data, .true., .false., "field_halo_swap_vector")
    end subroutine swap_vector_3d

    subroutine swap_vector_2d(data)
        double precision, intent(inout), target :: data(box%hlo(2):, box%hlo(1):, :)
        call convenience(SWAP, data, .true., .false., "field_halo_swap_vector")
    end subroutine swap_vector_2d

    ! Any of the above: the field (l_vector: each component data(..., nc)) checked against
    ! box and exchanged as EPIC's routine would: fill, accumulate, or both for SWAP (owners
    ! first, then the halos: shared corner points end with the owners' totals).
    subroutine convenience(op, data, l_vector, l_alloc, who)
        integer,          intent(in)            :: op
        double precision, intent(inout), target :: data(..)
        logical,          intent(in)            :: l_vector, l_alloc
        character(len=*), intent(in)            :: who
        type(haloswap_gfield), allocatable      :: fields(:)
        integer                                 :: ndim, nc

        ndim = rank(data) - merge(1, 0, l_vector)
        if (l_vector) then
            call check_vector(who, shape(data), ndim, is_contiguous(data))
        else
            call check_shape(who, shape(data), ndim)
        endif
        select rank (data)
        rank (2)
            fields = [field_2d(data)]
        rank (3)
            if (l_vector) then
                fields = [(field_2d(data(:, :, nc)), nc = 1, size(data, 3))]
            else
                fields = [field_3d(data)]
            endif
        rank (4)
            fields = [(field_3d(data(:, :, :, nc)), nc = 1, size(data, 4))]
        end select
        if (op /= SWAP) then
            call one_exchange(op, fields, ndim, l_alloc, who)
            return
        endif
        call field_mpi_alloc(size(fields), ndim)
        call one_exchange(GATHER, fields, ndim, .false., who)
        call one_exchange(FILL, fields, ndim, .false., who)
        call field_mpi_dealloc
    end subroutine convenience

    ! What EPIC's convenience routines do with their buffers: components 1..n recorded, one
    ! exchange, checked; a batch of n components opened and closed around it if l_alloc.
    subroutine one_exchange(dir, fields, ndim, l_alloc, who)
        integer,               intent(in) :: dir, ndim
        type(haloswap_gfield), intent(in) :: fields(:)
        logical,               intent(in) :: l_alloc
        character(len=*),      intent(in) :: who
        integer                           :: nc

        if (l_alloc) call field_mpi_alloc(size(fields), ndim)
        do nc = 1, size(fields)
            call stage(dir, nc, fields(nc), who)
        enddo
        call exchange(dir, who)
        do nc = 1, size(fields)
            call unstage(dir, nc, fields(nc), dir == GATHER, who)
        enddo
        if (l_alloc) call field_mpi_dealloc
    end subroutine one_exchange

    ! Local: zero the halo points an exchange writes (x and y sides, every z).
    subroutine reset_scalar(data)
        double precision, intent(inout) :: data(box%hlo(3):, box%hlo(2):, box%hlo(1):)

        call check_shape("field_halo_reset", shape(data), 3)
        call zero_halo(data)
    end subroutine reset_scalar

    subroutine reset_vector(data)
        double precision, intent(inout) :: data(box%hlo(3):, box%hlo(2):, box%hlo(1):, :)
        integer                         :: nc
        character(len=200)              :: msg

        call check_shape("field_halo_reset", shape(data(:, :, :, 1)), 3)
        if (size(data, 4) /= 3) then
            write(msg, '(a,i0,a)') "data has ", size(data, 4), &
                " components; expected 3 (EPIC's declaration data(..., 3))"
            call fail("field_halo_reset", msg)
        endif
        do nc = 1, 3
            call zero_halo(data(:, :, :, nc))
        enddo
    end subroutine reset_vector

    subroutine zero_halo(d)
        double precision, intent(inout) :: d(box%hlo(3):, box%hlo(2):, box%hlo(1):)

        d(:, :, box%hlo(1))             = 0.0d0
        d(:, :, box%hi(1)+1:box%hhi(1)) = 0.0d0
        d(:, box%hlo(2), box%lo(1):box%hi(1))             = 0.0d0
        d(:, box%hi(2)+1:box%hhi(2), box%lo(1):box%hi(1)) = 0.0d0
    end subroutine zero_halo

    !::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::
    ! Staged calls: record (…_to_buffer), exchange (…_communication), check (buffer_to_…).

    subroutine interior_to_buffer_3d(data, nc)
        double precision, intent(in), target :: data(box%hlo(3):, box%hlo(2):, box%hlo(1):)
        integer,          intent(in)         :: nc
        call stage(FILL, nc, field_in(data, "field_interior_to_buffer"), "field_interior_to_buffer")
    end subroutine interior_to_buffer_3d

    subroutine interior_to_buffer_2d(data, nc)
        double precision, intent(in), target :: data(box%hlo(2):, box%hlo(1):)
        integer,          intent(in)         :: nc
        call stage(FILL, nc, field_in(data, "field_interior_to_buffer"), "field_interior_to_buffer")
    end subroutine interior_to_buffer_2d

    subroutine field_interior_to_buffer_integer(data, nc)
        integer, intent(in), target :: data(box%hlo(3):, box%hlo(2):, box%hlo(1):)
        integer, intent(in)         :: nc
        call stage(FILL, nc, field_in(data, "field_interior_to_buffer_integer"), &
                   "field_interior_to_buffer_integer")
    end subroutine field_interior_to_buffer_integer

    subroutine halo_to_buffer_3d(data, nc)
        double precision, intent(in), target :: data(box%hlo(3):, box%hlo(2):, box%hlo(1):)
        integer,          intent(in)         :: nc
        call stage(GATHER, nc, field_in(data, "field_halo_to_buffer"), "field_halo_to_buffer")
    end subroutine halo_to_buffer_3d

    subroutine halo_to_buffer_2d(data, nc)
        double precision, intent(in), target :: data(box%hlo(2):, box%hlo(1):)
        integer,          intent(in)         :: nc
        call stage(GATHER, nc, field_in(data, "field_halo_to_buffer"), "field_halo_to_buffer")
    end subroutine halo_to_buffer_2d

    subroutine field_halo_to_buffer_integer(data, nc)
        integer, intent(in), target :: data(box%hlo(3):, box%hlo(2):, box%hlo(1):)
        integer, intent(in)         :: nc
        call stage(GATHER, nc, field_in(data, "field_halo_to_buffer_integer"), &
                   "field_halo_to_buffer_integer")
    end subroutine field_halo_to_buffer_integer

    subroutine buffer_to_halo_3d(data, nc, l_add)
        double precision, intent(inout), target :: data(box%hlo(3):, box%hlo(2):, box%hlo(1):)
        integer,          intent(in)            :: nc
        logical,          intent(in)            :: l_add
        call unstage(FILL, nc, field_in(data, "field_buffer_to_halo"), l_add, "field_buffer_to_halo")
    end subroutine buffer_to_halo_3d

    subroutine buffer_to_halo_2d(data, nc, l_add)
        double precision, intent(inout), target :: data(box%hlo(2):, box%hlo(1):)
        integer,          intent(in)            :: nc
        logical,          intent(in)            :: l_add
        call unstage(FILL, nc, field_in(data, "field_buffer_to_halo"), l_add, "field_buffer_to_halo")
    end subroutine buffer_to_halo_2d

    subroutine field_buffer_to_halo_integer(data, nc, l_add)
        integer, intent(inout), target :: data(box%hlo(3):, box%hlo(2):, box%hlo(1):)
        integer, intent(in)            :: nc
        logical, intent(in)            :: l_add
        call unstage(FILL, nc, field_in(data, "field_buffer_to_halo_integer"), l_add, &
                     "field_buffer_to_halo_integer")
    end subroutine field_buffer_to_halo_integer

    subroutine buffer_to_interior_3d(data, nc, l_add)
        double precision, intent(inout), target :: data(box%hlo(3):, box%hlo(2):, box%hlo(1):)
        integer,          intent(in)            :: nc
        logical,          intent(in)            :: l_add
        call unstage(GATHER, nc, field_in(data, "field_buffer_to_interior"), l_add, &
                     "field_buffer_to_interior")
    end subroutine buffer_to_interior_3d

    subroutine buffer_to_interior_2d(data, nc, l_add)
        double precision, intent(inout), target :: data(box%hlo(2):, box%hlo(1):)
        integer,          intent(in)            :: nc
        logical,          intent(in)            :: l_add
        call unstage(GATHER, nc, field_in(data, "field_buffer_to_interior"), l_add, &
                     "field_buffer_to_interior")
    end subroutine buffer_to_interior_2d

    subroutine field_buffer_to_interior_integer(data, nc, l_add)
        integer, intent(inout), target :: data(box%hlo(3):, box%hlo(2):, box%hlo(1):)
        integer, intent(in)            :: nc
        logical, intent(in)            :: l_add
        call unstage(GATHER, nc, field_in(data, "field_buffer_to_interior_integer"), l_add, &
                     "field_buffer_to_interior_integer")
    end subroutine field_buffer_to_interior_integer

    !> Every array recorded by field_interior_to_buffer since the last call: halos filled
    !! from the neighbours' interiors.
    subroutine interior_to_halo_communication
        call exchange(FILL, "interior_to_halo_communication")
    end subroutine interior_to_halo_communication

    !> Every array recorded by field_halo_to_buffer since the last call: halo points added
    !! to their owners' interior points in EPIC's order.
    subroutine halo_to_interior_communication
        call exchange(GATHER, "halo_to_interior_communication")
    end subroutine halo_to_interior_communication

    !> Opens a batch of ncomp components (EPIC: buffers for ncomp fields of ndim = 2 or 3
    !! dimensions). Nothing is allocated here; a batch already open is kept as it is.
    subroutine field_mpi_alloc(ncomp, ndim)
        integer, intent(in) :: ncomp
        integer, intent(in) :: ndim
        character(len=200)  :: msg

        if (l_allocated) return
        if (ncomp < 1) then
            write(msg, '(a,i0,a)') "ncomp = ", ncomp, " must be at least 1"
            call fail("field_mpi_alloc", msg)
        endif
        if (ndim /= 2 .and. ndim /= 3) then
            write(msg, '(a,i0,a)') "ndim = ", ndim, " must be 2 or 3"
            call fail("field_mpi_alloc", msg)
        endif
        l_allocated = .true.
        n_comp = ncomp
        n_dim = ndim
        allocate(slots(ncomp, FILL:GATHER))
    end subroutine field_mpi_alloc

    subroutine field_mpi_dealloc
        if (.not. l_allocated) return
        l_allocated = .false.
        n_comp = 0
        n_dim = 0
        deallocate(slots)
    end subroutine field_mpi_dealloc

    !::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::
    ! Internals.

    ! A field with EPIC's geometry: interior x, y from box with halos 1 below and 2 above,
    ! swapped at those depths; z (3-D fields) whole.
    function field_3d(a) result(f)
        double precision, intent(inout), target :: a(:, :, :)
        type(haloswap_gfield)                   :: f

        f = haloswap_gfield(a, [0, 1, 1])
        call set_depths(f)
    end function field_3d

    function field_2d(a) result(f)
        double precision, intent(inout), target :: a(:, :)
        type(haloswap_gfield)                   :: f

        f = haloswap_gfield(a, [1, 1])
        call set_depths(f)
    end function field_2d

    subroutine set_depths(f)
        type(haloswap_gfield), intent(inout) :: f

        call haloswap_field_set_depth(f, 1, 1, 2)
        call haloswap_field_set_depth(f, 2, 1, 2)
    end subroutine set_depths

    ! The same for the staged calls' arguments, after checking shape and contiguity (an
    ! intent(in) array is only read here; the exchange writes it through the plan).
    function field_f64_in(a, who) result(f)
        double precision, intent(in), target :: a(..)
        character(len=*), intent(in)         :: who
        type(haloswap_gfield)                :: f
        double precision, pointer            :: p3(:, :, :), p2(:, :)

        call check_shape(who, shape(a), rank(a))
        call check_contiguous(who, is_contiguous(a))
        select rank (a)
        rank (3)
            call c_f_pointer(c_loc(a), p3, shape(a))
            f = field_3d(p3)
        rank (2)
            call c_f_pointer(c_loc(a), p2, shape(a))
            f = field_2d(p2)
        end select
    end function field_f64_in

    function field_int_in(a, who) result(f)
        integer,          intent(in), target :: a(:, :, :)
        character(len=*), intent(in)         :: who
        type(haloswap_gfield)                :: f
        integer(c_int32_t), pointer          :: p(:, :, :)

        call check_shape(who, shape(a), 3)
        call check_contiguous(who, is_contiguous(a))
        call c_f_pointer(c_loc(a), p, shape(a))
        f = haloswap_gfield(p, [0, 1, 1])
        call set_depths(f)
    end function field_int_in

    ! Record component nc for the next exchange in direction dir.
    subroutine stage(dir, nc, f, who)
        integer,               intent(in) :: dir, nc
        type(haloswap_gfield), intent(in) :: f
        character(len=*),      intent(in) :: who

        call check_component(who, nc)
        if (f%rank == 3 .and. n_dim == 2) call fail(who, &
            "data is a 3-D field, but the batch was opened with field_mpi_alloc(ncomp, ndim = 2)")
        slots(nc, dir)%f = f
        slots(nc, dir)%state = STAGED
    end subroutine stage

    ! After the exchange: component nc must be the array that was exchanged. EPIC's
    ! callers fill halos by copy and accumulate interiors by adding; the other l_add
    ! would need the contributions kept apart, which the in-place exchange does not do.
    subroutine unstage(dir, nc, f, l_add, who)
        integer,               intent(in) :: dir, nc
        type(haloswap_gfield), intent(in) :: f
        logical,               intent(in) :: l_add
        character(len=*),      intent(in) :: who
        character(len=300)                :: msg

        call check_component(who, nc)
        if (slots(nc, dir)%state /= DONE) then
            if (dir == FILL) then
                write(msg, '(a,i0,a)') "component nc = ", nc, " was not exchanged: call " // &
                    "field_interior_to_buffer(data, nc) and interior_to_halo_communication first"
            else
                write(msg, '(a,i0,a)') "component nc = ", nc, " was not exchanged: call " // &
                    "field_halo_to_buffer(data, nc) and halo_to_interior_communication first"
            endif
            call fail(who, msg)
        endif
        if (.not. c_associated(f%data, slots(nc, dir)%f%data) .or. f%kind /= slots(nc, dir)%f%kind) then
            write(msg, '(a,i0,a)') "data is not the array recorded for component nc = ", nc, &
                " before the exchange (the exchange works in place on that array)"
            call fail(who, msg)
        endif
        if (dir == FILL .and. l_add) call fail(who, "l_add = .true. (add to the halo) is not " // &
            "supported by the haloswap drop-in: the exchange fills halos by copy")
        if (dir == GATHER .and. .not. l_add) call fail(who, "l_add = .false. (replace the " // &
            "interior) is not supported by the haloswap drop-in: the exchange adds")
    end subroutine unstage

    ! One haloswap exchange of every component recorded for direction dir.
    subroutine exchange(dir, who)
        integer,          intent(in)         :: dir
        character(len=*), intent(in)         :: who
        integer                              :: idx(max(n_comp, 1)), m, i, e
        type(c_ptr), allocatable, target     :: arrays(:)
        integer                              :: rc
        double precision                     :: t0

        if (.not. l_allocated) call fail(who, "no batch open: call field_mpi_alloc(ncomp, ndim) " // &
            "and record the fields first")
        m = 0
        do i = 1, n_comp
            if (slots(i, dir)%state == STAGED) then
                m = m + 1
                idx(m) = i
            endif
        enddo
        if (m == 0) return
        call ensure_decomposition(who)
        e = find_plan(dir, idx(1:m), who)
        ! Always as per-swap arrays: whether they are the plan's registered ones differs from
        ! rank to rank, and nbr's persistent collective must be chosen alike on every rank.
        allocate(arrays(m))
        do i = 1, m
            arrays(i) = slots(idx(i), dir)%f%data
        enddo
        t0 = MPI_Wtime()
        if (dir == FILL) then
            rc = haloswap_dropin_swap(plans(e)%hs, arrays)
        else
            rc = haloswap_dropin_reverse(plans(e)%hs, HALOSWAP_OP_SUM, arrays)
        endif
        call haloswap_dropin_check(rc, "field_mpi::" // who, epic_abort)
        plans(e)%seconds(dir) = plans(e)%seconds(dir) + (MPI_Wtime() - t0)
        plans(e)%count(dir) = plans(e)%count(dir) + 1
        do i = 1, m
            slots(idx(i), dir)%state = DONE
        enddo
    end subroutine exchange

    ! The cached plan for these components' kinds and ranks, created on first use (every
    ! rank makes the same calls, so every rank finds or creates the same plan).
    integer function find_plan(dir, idx, who) result(e)
        integer,          intent(in) :: dir, idx(:)
        character(len=*), intent(in) :: who
        type(haloswap_gfield)        :: fields(size(idx))
        integer                      :: i, ierr

        use_clock = use_clock + 1
        do i = 1, size(idx)
            fields(i) = slots(idx(i), dir)%f
        enddo
        do e = 1, MAX_PLANS
            if (.not. plans(e)%used) cycle
            if (size(plans(e)%kinds) /= size(idx)) cycle
            if (all(plans(e)%kinds == fields%kind) .and. all(plans(e)%ranks == fields%rank)) then
                plans(e)%last_use = use_clock
                return
            endif
        enddo
        ! A free entry, else the least recently used one (the same on every rank).
        e = 0
        do i = 1, MAX_PLANS
            if (.not. plans(i)%used) then
                e = i
                exit
            endif
        enddo
        if (e == 0) then
            e = minloc(plans%last_use, dim=1)
            call free_plan(plans(e), who)
        endif
        call haloswap_geometry_init(plans(e)%hs, decomp, fields, [2, 2, 0], .true., ierr, &
                                    order_offsets=EPIC_ORDER)
        call haloswap_dropin_check(ierr, "field_mpi::" // who, epic_abort)
        plans(e)%used = .true.
        plans(e)%kinds = fields%kind
        plans(e)%ranks = fields%rank
        plans(e)%last_use = use_clock
        plans(e)%count = 0
        plans(e)%seconds = 0.0d0
        plans_created = plans_created + 1
        if (.not. l_final_hook) then
            call haloswap_dropin_at_finalize("EPIC", ierr, report_stats, free_plans)
            call haloswap_dropin_check(ierr, "field_mpi::" // who, epic_abort)
            l_final_hook = .true.
        endif
    end function find_plan

    subroutine free_plan(p, who)
        type(plan_entry), intent(inout) :: p
        character(len=*), intent(in)    :: who
        integer                         :: ierr

        call finalise_halo_communication(p%hs, ierr)
        call haloswap_dropin_check(ierr, "field_mpi::" // who, epic_abort)
        p%used = .false.
        deallocate(p%kinds, p%ranks)
    end subroutine free_plan

    ! The haloswap decomposition of EPIC's layout, built at first use and again whenever
    ! the process grid or the global grid changes (tests run several layouts); what decides
    ! that is the same on every rank.
    subroutine ensure_decomposition(who)
        character(len=*), intent(in) :: who
        integer                      :: dims(2), coords(2), key(8), e, ierr, topo, nd
        logical                      :: periods(2)

        if (cart%comm == MPI_COMM_NULL) call fail(who, "mpi_layout's cart%comm is " // &
            "MPI_COMM_NULL: call mpi_layout_init first")
        call MPI_Topo_test(cart%comm, topo)
        nd = 0
        if (topo == MPI_CART) call MPI_Cartdim_get(cart%comm, nd)
        if (nd /= 2) call fail(who, "mpi_layout's cart%comm is not a 2-D Cartesian communicator")
        call MPI_Cart_get(cart%comm, 2, dims, periods, coords)
        key = [dims(1), dims(2), merge(1, 0, periods(1)), merge(1, 0, periods(2)), &
               box%global_size(1), box%global_size(2), box%hlo(3), box%hhi(3)]
        if (l_decomp .and. all(key == decomp_key)) then
            if (all(decomp_box == [box%lo(1:2), box%hi(1:2)])) return
            call fail(who, "box%lo/box%hi changed since the first exchange, but not the " // &
                "process grid or the global grid")
        endif
        if (l_decomp) then
            do e = 1, MAX_PLANS
                if (plans(e)%used) call free_plan(plans(e), who)
            enddo
            call haloswap_decomposition_free(decomp, ierr)
            l_decomp = .false.
        endif
        call build_decomposition(who, dims, periods, coords)
        decomp_key = key
        decomp_box = [box%lo(1:2), box%hi(1:2)]
        l_decomp = .true.
    end subroutine ensure_decomposition

    ! EPIC's process grid as a 3-D one (z on one rank), the same ranks as cart, with every
    ! rank's x and y ranges from box; box and neighbours checked against it on every rank.
    subroutine build_decomposition(who, dims, periods, coords)
        character(len=*), intent(in) :: who
        integer,          intent(in) :: dims(2), coords(2)
        logical,          intent(in) :: periods(2)
        type(MPI_Comm)               :: cart3
        integer                      :: nranks, ierr, r, a, k, nz, me, me3, expect
        integer                      :: mine(6), nb(3)
        integer, allocatable         :: boxes(:, :), ranges(:, :)
        character(len=400)           :: msg

        call MPI_Comm_size(cart%comm, nranks)
        call MPI_Comm_rank(cart%comm, me)
        mine = [coords(1), coords(2), box%lo(1), box%hi(1), box%lo(2), box%hi(2)]
        allocate(boxes(6, 0:nranks-1), ranges(maxval(dims), 2))
        call MPI_Allgather(mine, 6, MPI_INTEGER, boxes, 6, MPI_INTEGER, cart%comm)
        ! Points per rank along x (from the ranks of the first column) and y (first row).
        ranges = 0
        do r = 0, nranks - 1
            do a = 1, 2
                if (boxes(3 - a, r) == 0) &
                    ranges(boxes(a, r) + 1, a) = boxes(2 * a + 2, r) - boxes(2 * a + 1, r) + 1
            enddo
        enddo
        msg = ""
        do a = 1, 2
            if (msg /= "") exit
            if (box%hlo(a) /= box%lo(a) - 1 .or. box%hhi(a) /= box%hi(a) + 2) then
                write(msg, '(4(a,i0))') "box%hlo(", a, "):box%hhi(", a, ") = ", box%hlo(a), &
                    ":", box%hhi(a)
                write(msg, '(a,2(a,i0))') trim(msg) // "; EPIC's halo is box%lo-1:box%hi+2 = ", &
                    "", box%lo(a) - 1, ":", box%hi(a) + 2
            else if (box%hi(a) - box%lo(a) + 1 /= ranges(coords(a) + 1, a) .or. &
                     box%lo(a) /= sum(ranges(1:coords(a), a))) then
                write(msg, '(5(a,i0),a,i0,a)') "box%lo(", a, "):box%hi(", a, ") = ", box%lo(a), &
                    ":", box%hi(a), " does not continue the boxes before it along axis ", a, &
                    " of cart (expected to start at ", sum(ranges(1:coords(a), a)), ")"
            endif
        enddo
        nz = box%hhi(3) - box%hlo(3) + 1
        if (msg == "" .and. nz < 1) write(msg, '(2(a,i0))') "box%hlo(3):box%hhi(3) = ", &
            box%hlo(3), ":", box%hhi(3)
        call agree(who, msg)

        call MPI_Cart_create(cart%comm, 3, [dims(1), dims(2), 1], [periods(1), periods(2), .false.], &
                             .false., cart3)
        ! The neighbours EPIC's mpi_layout found must be the grid's (ranks of cart).
        call MPI_Comm_rank(cart3, me3)
        if (me3 /= me) write(msg, '(2(a,i0))') "rank ", me, " of cart is rank ", me3
        do k = 1, 8
            if (msg /= "") exit
            nb = [coords(1) + EPIC_ORDER(1, k), coords(2) + EPIC_ORDER(2, k), 0]
            expect = MPI_PROC_NULL
            if ((periods(1) .or. (nb(1) >= 0 .and. nb(1) < dims(1))) .and. &
                (periods(2) .or. (nb(2) >= 0 .and. nb(2) < dims(2)))) call MPI_Cart_rank(cart3, nb, expect)
            if (neighbours(EPIC_DIRECTION(k))%rank /= expect) &
                write(msg, '(5(a,i0))') "neighbours(", EPIC_DIRECTION(k), ")%rank = ", &
                    neighbours(EPIC_DIRECTION(k))%rank, "; cart's neighbour at offset (", &
                    EPIC_ORDER(1, k), ",", EPIC_ORDER(2, k), ") is rank ", expect
        enddo
        call agree(who, msg)

        call haloswap_decomposition_create_ex(decomp, cart3, [sum(ranges(1:dims(1), 1)), &
            sum(ranges(1:dims(2), 2)), nz], ierr, procs=[dims(1), dims(2), 1],              &
            periodic=[merge(1, 0, periods(1)), merge(1, 0, periods(2)), 0],                 &
            axis_order=[1, 2, 3], ranges_x=ranges(1:dims(1), 1), ranges_y=ranges(1:dims(2), 2), &
            cart=cart3)
        call MPI_Comm_free(cart3)
        call haloswap_dropin_check(ierr, "field_mpi::" // who, epic_abort)
        do a = 1, 2
            if (haloswap_global_offset(decomp, a) /= box%lo(a) .or. &
                haloswap_local_extent(decomp, a) /= box%hi(a) - box%lo(a) + 1) &
                write(msg, '(4(a,i0))') "haloswap's interior along axis ", a, " is ", &
                    haloswap_global_offset(decomp, a), " + ", haloswap_local_extent(decomp, a), &
                    " points; box has ", box%lo(a)
        enddo
        call agree(who, msg)
    end subroutine build_decomposition

    ! Collective: if any rank has a message, every rank stops with the lowest such rank's.
    subroutine agree(who, msg)
        character(len=*), intent(in)    :: who
        character(len=*), intent(inout) :: msg
        integer                         :: me, nranks, first

        call MPI_Comm_rank(cart%comm, me)
        call MPI_Comm_size(cart%comm, nranks)
        first = merge(me, nranks, msg /= "")
        call MPI_Allreduce(MPI_IN_PLACE, first, 1, MPI_INTEGER, MPI_MIN, cart%comm)
        if (first == nranks) return
        call MPI_Bcast(msg, len(msg), MPI_CHARACTER, first, cart%comm)
        write(msg, '(a,i0,a)') "rank ", first, ": " // trim(msg)
        call fail(who, msg)
    end subroutine agree

    subroutine check_component(who, nc)
        character(len=*), intent(in) :: who
        integer,          intent(in) :: nc
        character(len=200)           :: msg

        if (.not. l_allocated) then
            write(msg, '(a,i0,a)') "no batch open for component nc = ", nc, &
                ": call field_mpi_alloc(ncomp, ndim) first"
            call fail(who, msg)
        endif
        if (nc < 1 .or. nc > n_comp) then
            write(msg, '(5(a,i0),a)') "nc = ", nc, " is outside 1..", n_comp, &
                " (field_mpi_alloc(", n_comp, ", ", n_dim, ") opened ", n_comp, " components)"
            call fail(who, msg)
        endif
    end subroutine check_component

    ! data's shape against box (3-D: z, y, x; 2-D: y, x).
    subroutine check_shape(who, shp, rank)
        character(len=*), intent(in) :: who
        integer,          intent(in) :: shp(:), rank
        integer                      :: want(3), i
        character(len=400)           :: msg
        character(len=120)           :: got

        want = [box%hhi(3) - box%hlo(3) + 1, box%hhi(2) - box%hlo(2) + 1, box%hhi(1) - box%hlo(1) + 1]
        if (all(shp == want(4 - rank:3))) return
        write(got, '(*(i0,:,","))') shp
        write(msg, '(a)') "data has shape (" // trim(got) // "); expected " //              &
            haloswap_dropin_bounds(box%hlo(rank:1:-1), box%hhi(rank:1:-1), ", ") // " = box%hlo:box%hhi"
        write(got, '(*(i0,:,","))') (want(i), i = 4 - rank, 3)
        call fail(who, trim(msg) // ", shape (" // trim(got) // ")")
    end subroutine check_shape

    subroutine check_vector(who, shp, rank, contiguous)
        character(len=*), intent(in) :: who
        integer,          intent(in) :: shp(:), rank
        logical,          intent(in) :: contiguous

        call check_shape(who, shp(1:rank), rank)
        call check_contiguous(who, contiguous)
    end subroutine check_vector

    subroutine check_contiguous(who, contiguous)
        character(len=*), intent(in) :: who
        logical,          intent(in) :: contiguous

        if (.not. contiguous) call fail(who, "data is not contiguous; the exchange works in " // &
            "place on the array, so pass the field itself (not a strided section)")
    end subroutine check_contiguous

    ! Errors stop through haloswap_dropin_fail (a failed haloswap call: haloswap_dropin_check):
    ! the message on standard error, then EPIC's mpi_exit_on_error with it.
    subroutine fail(who, msg)
        character(len=*), intent(in) :: who, msg

        call haloswap_dropin_fail("field_mpi::" // who, msg, epic_abort)
    end subroutine fail

    subroutine epic_abort(msg)
        character(len=*), intent(in) :: msg

        call mpi_exit_on_error(msg)
    end subroutine epic_abort

    !::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::::
    ! At the start of MPI_Finalize (haloswap_dropin_at_finalize): the statistics if
    ! HALOSWAP_EPIC_STATS=1, then the cached plans are freed.

    subroutine report_stats
        integer :: e, me

        if (.not. l_decomp) return
        call MPI_Comm_rank(MPI_COMM_WORLD, me)
        do e = 1, MAX_PLANS
            if (plans(e)%used) call print_stats(me, e)
        enddo
    end subroutine report_stats

    subroutine free_plans
        integer :: e, ierr

        if (.not. l_decomp) return
        do e = 1, MAX_PLANS
            if (.not. plans(e)%used) cycle
            call finalise_halo_communication(plans(e)%hs, ierr)
            plans(e)%used = .false.
        enddo
        call haloswap_decomposition_free(decomp, ierr)
        l_decomp = .false.
    end subroutine free_plans

    subroutine print_stats(me, e)
        integer, intent(in) :: me, e
        integer             :: d, i
        character(len=200)  :: kinds
        character(len=64)   :: tname

        kinds = ""
        do i = 1, size(plans(e)%kinds)
            kinds = trim(kinds) // merge(" f64", " i32", plans(e)%kinds(i) == 0) // &
                    merge("-3d", "-2d", plans(e)%ranks(i) == 3)
        enddo
        tname = haloswap_dropin_transport(plans(e)%hs)
        do d = FILL, GATHER
            if (plans(e)%count(d) == 0) cycle
            write(output_unit, '(a,i0,a,i0,a,a,a,a,a,i0,a,es10.3,a)') "field_mpi (haloswap) rank ", me, &
                ": plan ", e, " [", trim(adjustl(kinds)), "] ", trim(tname), &
                " " // trim(DIRNAME(d)) // ": ", plans(e)%count(d), " exchanges, ", &
                plans(e)%seconds(d), " s"
        enddo
    end subroutine print_stats

    !> For tests and diagnostics (C name haloswap_epic_plans_created): plans created so far.
    integer(c_int) function plans_created_c() bind(c, name="haloswap_epic_plans_created")
        plans_created_c = int(plans_created, c_int)
    end function plans_created_c

end module field_mpi
