! haloswap_geometry: Fortran access to the field geometry of docs/api.md ("Field geometry",
! "Reverse exchange"): arrays as the model declares them -- any lower bounds, halos that
! differ below and above (EPIC's field(-1:nz+1, lo(2)-1:hi(2)+2, ...)), node/face-centred
! axes with n+1 points (Lare3d's vx(-2:nx+2, ...)), 2-D fields in 3-D plans, a component
! dimension (rank-4 arrays), real(4/8) and integer(4/8); the reverse exchange
! (halo -> owner, summed or max/min/replace), accumulate-then-fill, the non-blocking test,
! user-given ownership ranges and an existing Cartesian communicator.
! A second module next to `haloswap` (it uses its decomposition and plan types).
! Axes are x = 1, y = 2, z = 3. Arrays are passed in place: they must be contiguous.
module haloswap_geometry
  use, intrinsic :: iso_c_binding
  use mpi_f08, only: MPI_Comm, MPI_COMM_NULL, operator(/=)
  use haloswap, only: haloswap_decomposition, halo_communication_type, HALOSWAP_OK, &
       haloswap_order_args
  implicit none
  private

  integer(c_int), parameter :: T_F64 = 0, T_F32 = 1, T_I32 = 2, T_I64 = 3
  !> Array layouts: field(z,y,x) as MONC and EPIC (z fastest), or field(x,y,z) as Lare3d.
  integer, parameter, public :: HALOSWAP_LAYOUT_ZYX = 0, HALOSWAP_LAYOUT_XYZ = 1
  integer, parameter, public :: HALOSWAP_OWNER_UPPER = 0, HALOSWAP_OWNER_LOWER = 1
  integer, parameter, public :: HALOSWAP_OP_SUM = 0, HALOSWAP_OP_MAX = 1, HALOSWAP_OP_MIN = 2, &
       HALOSWAP_OP_REPLACE = 3

  !> One field with its geometry. Build it with haloswap_gfield(a, halo_lo), then set depths
  !> and staggering with the setters below.
  type, public :: haloswap_gfield
     type(c_ptr) :: data = c_null_ptr
     integer(c_int) :: kind = -1, rank = 0, layout = 0, comp_first = 0
     integer(c_int) :: shp(4) = 1       ! extents in declared order
     integer(c_int) :: halo_lo(4) = 0   ! points below the interior, declared order
     integer(c_int) :: depth_set(3) = 0, depth_lo(3) = 0, depth_hi(3) = 0 ! per axis x, y, z
     integer(c_int) :: stagger(3) = 0, owner(3) = 0
  end type haloswap_gfield

  integer(c_int), parameter :: R_START = 0, R_COMPLETE = 1, R_FILL = 2 ! hs_f_reverse_call

  ! Fields (haloswap_gfield) as the C side takes them, one array per member.
  type :: arrays_c
     integer(c_int) :: n = 0
     integer(c_int), allocatable :: kinds(:), ranks(:), layouts(:), cf(:), shapes(:), hlo(:)
     type(c_ptr), allocatable :: datas(:)
  end type arrays_c

  !> f = haloswap_gfield(a, halo_lo [, layout] [, comp_first]): a is a rank-2, 3 or 4 array of
  !> real(4), real(8), integer(4) or integer(8). halo_lo(i): the points of dimension i below
  !> the interior, in the array's declared order (EPIC field(-1:nz+1, lo(2)-1:hi(2)+2, ...)
  !> starting at interior index 0, lo(2), ...: halo_lo = [1, 1, 1]); the points above follow
  !> from the extent. Rank = grid dims: a field; rank = grid dims - 1 (3-D grids): a 2-D
  !> field (x, y); rank = grid dims + 1: a component dimension, last (slowest), or first
  !> with comp_first = .true.
  ! gfield_<type>_<rank> (fortran/specifics.cmake)
  interface haloswap_gfield
    include 'gfield_procedures.inc'
  end interface haloswap_gfield

  !> A region set (docs/api.md, "Region sets"): the halo sides a plan swaps, per field.
  type, public :: haloswap_region_set
     type(c_ptr) :: ptr = c_null_ptr
  end type haloswap_region_set

  public :: haloswap_decomposition_create_boxes, haloswap_region_set_create, &
       haloswap_region_set_add, haloswap_region_set_free, haloswap_get_bytes
  public :: haloswap_field_set_depth, haloswap_field_set_stagger, haloswap_geometry_init, &
       haloswap_reverse, haloswap_reverse_start, haloswap_reverse_complete, &
       haloswap_accumulate_fill, haloswap_swap_test, haloswap_decomposition_create_ex, &
       haloswap_get_overlap_stats

  interface
     integer(c_int) function c_plan_geom(d, nfields, kinds, datas, ranks, layouts, comp_first, &
          shapes, halo_lo, depth_set, depth_lo, depth_hi, stagger, owner, depth, stencil, &
          transport, orows, norder, offsets, nsweep, axes, out) &
          bind(c, name="hs_f_plan_create_geom")
       import :: c_int, c_ptr, c_char
       type(c_ptr), value :: d
       integer(c_int), value :: nfields, stencil, orows, norder, nsweep
       integer(c_int), intent(in) :: kinds(*), ranks(*), layouts(*), comp_first(*), shapes(*), &
            halo_lo(*), depth_set(*), depth_lo(*), depth_hi(*), stagger(*), owner(*), depth(*)
       integer(c_int), intent(in) :: offsets(*), axes(*)
       type(c_ptr), intent(in) :: datas(*)
       character(kind=c_char), intent(in) :: transport(*)
       type(c_ptr), intent(out) :: out
     end function c_plan_geom
     integer(c_int) function c_reverse_call(p, what, op, n, kinds, datas, ranks, layouts, cf, &
          shapes, hlo) bind(c, name="hs_f_reverse_call")
       import :: c_int, c_ptr
       type(c_ptr), value :: p
       integer(c_int), value :: what, op, n
       integer(c_int), intent(in) :: kinds(*), ranks(*), layouts(*), cf(*), shapes(*), hlo(*)
       type(c_ptr), intent(in) :: datas(*)
     end function c_reverse_call
     integer(c_int) function c_swap_test(p, done) bind(c, name="hs_f_swap_test")
       import :: c_int, c_ptr
       type(c_ptr), value :: p
       integer(c_int), intent(out) :: done
     end function c_swap_test
     integer(c_int) function c_decomp_ex(comm, ndims, global, procs, periodic, remainder, &
          axis_order, ranges, have_ranges, cart, out) bind(c, name="hs_f_decomp_create_ex")
       import :: c_int, c_ptr
       integer(c_int), value :: comm, ndims, remainder, cart
       integer(c_int), intent(in) :: global(*), procs(*), periodic(*), axis_order(*), ranges(*), &
            have_ranges(*)
       type(c_ptr), intent(out) :: out
     end function c_decomp_ex
     integer(c_int) function c_decomp_boxes(comm, ndims, global, periodic, lo, hi, out) &
          bind(c, name="hs_f_decomp_create_boxes")
       import :: c_int, c_ptr
       integer(c_int), value :: comm, ndims
       integer(c_int), intent(in) :: global(*), periodic(*), lo(*), hi(*)
       type(c_ptr), intent(out) :: out
     end function c_decomp_boxes
     integer(c_int) function c_region_set_create(out) bind(c, name="hs_region_set_create")
       import :: c_int, c_ptr
       type(c_ptr), intent(out) :: out
     end function c_region_set_create
     integer(c_int) function c_region_set_add(s, field, names) bind(c, name="hs_region_set_add")
       import :: c_int, c_ptr, c_char
       type(c_ptr), value :: s
       integer(c_int), value :: field
       character(kind=c_char), intent(in) :: names(*)
     end function c_region_set_add
     integer(c_int) function c_region_set_free(s) bind(c, name="hs_region_set_free")
       import :: c_int, c_ptr
       type(c_ptr), intent(inout) :: s
     end function c_region_set_free
     integer(c_int) function c_plan_bytes(p, sent, recv, self) bind(c, name="hs_f_plan_bytes")
       import :: c_int, c_ptr, c_double
       type(c_ptr), value :: p
       real(c_double), intent(out) :: sent, recv, self
     end function c_plan_bytes
     integer(c_int) function c_next_regions(s) bind(c, name="hs_f_next_regions")
       import :: c_int, c_ptr
       type(c_ptr), value :: s
     end function c_next_regions
     integer(c_int) function c_overlap(p, total, exposed, test) bind(c, name="hs_f_overlap_stats")
       import :: c_int, c_ptr, c_double
       type(c_ptr), value :: p
       real(c_double), intent(out) :: total, exposed, test
     end function c_overlap
  end interface

contains

  subroutine describe(f, kind, shp, contiguous, halo_lo, layout, comp_first)
    type(haloswap_gfield), intent(inout) :: f
    integer(c_int), intent(in) :: kind
    integer, intent(in) :: shp(:), halo_lo(:)
    logical, intent(in) :: contiguous
    integer, intent(in), optional :: layout
    logical, intent(in), optional :: comp_first
    integer :: n
    f%kind = merge(kind, -2_c_int, contiguous)  ! -2: refused at init with a clear message
    f%rank = int(size(shp), c_int)
    f%shp = 1
    f%shp(1:size(shp)) = int(shp, c_int)
    f%halo_lo = 0
    n = min(size(halo_lo), 4)
    f%halo_lo(1:n) = int(halo_lo(1:n), c_int)
    if (size(halo_lo) /= size(shp)) f%kind = -3  ! refused at init: halo_lo per dimension
    f%layout = 0
    if (present(layout)) f%layout = int(layout, c_int)
    f%comp_first = 0
    if (present(comp_first)) then
      if (comp_first) f%comp_first = 1
    end if
  end subroutine describe

  include 'gfield_bodies.inc'

  !> Swap depth below and above on one axis (default: the plan's depth on both sides).
  subroutine haloswap_field_set_depth(f, axis, lo, hi)
    type(haloswap_gfield), intent(inout) :: f
    integer, intent(in) :: axis, lo, hi
    if (axis < 1 .or. axis > 3) return
    f%depth_set(axis) = 1
    f%depth_lo(axis) = int(lo, c_int)
    f%depth_hi(axis) = int(hi, c_int)
  end subroutine haloswap_field_set_depth

  !> Node- or face-centred on this axis (n+1 interior points); owner: who owns the shared
  !> plane (HALOSWAP_OWNER_UPPER for Lare3d's velocities, HALOSWAP_OWNER_LOWER for its
  !> magnetic faces).
  subroutine haloswap_field_set_stagger(f, axis, owner)
    type(haloswap_gfield), intent(inout) :: f
    integer, intent(in) :: axis, owner
    if (axis < 1 .or. axis > 3) return
    f%stagger(axis) = 1
    f%owner(axis) = int(owner, c_int)
  end subroutine haloswap_field_set_stagger

  !> Build a plan over fields with their own geometry: depth(3) per axis x, y, z is the
  !> default depth of fields without their own; corners if involve_corners. The combine order
  !> (docs/api.md, "Combine order"): order_offsets(3, n), one neighbour offset (ox, oy, oz) per
  !> column in the order to combine (EPIC's W, E, S, N, NE, SE, SW, NW), or sweep_axes(:), the
  !> axes to sweep in order (Lare3d, EPOCH: [HALOSWAP_X, HALOSWAP_Y, HALOSWAP_Z]; empty: x, y,
  !> z); at most one of them.
  subroutine haloswap_geometry_init(hs, decomp, fields, depth, involve_corners, ierr, transport, &
       order_offsets, sweep_axes, regions)
    type(halo_communication_type), intent(inout) :: hs
    type(haloswap_decomposition), intent(in) :: decomp
    type(haloswap_gfield), intent(in) :: fields(:)
    integer, intent(in) :: depth(3)
    logical, intent(in) :: involve_corners
    integer, intent(out) :: ierr
    character(len=*), intent(in), optional :: transport
    integer, intent(in), optional :: order_offsets(:,:), sweep_axes(:)
    type(haloswap_region_set), intent(in), optional :: regions
    integer(c_int) :: orows, norder, nsweep
    integer :: nf, i
    integer(c_int), allocatable :: dset(:), dlo(:), dhi(:), stag(:), own(:), offs(:), axs(:)
    integer, allocatable :: given_offsets(:,:), given_axes(:)
    type(arrays_c) :: a
    character(kind=c_char, len=:), allocatable :: tname
    nf = size(fields)
    call flatten(fields, a)
    allocate(dset(3 * max(nf, 1)), dlo(3 * max(nf, 1)), dhi(3 * max(nf, 1)), &
         stag(3 * max(nf, 1)), own(3 * max(nf, 1)))
    do i = 1, nf
      dset(3 * i - 2:3 * i) = fields(i)%depth_set
      dlo(3 * i - 2:3 * i) = fields(i)%depth_lo
      dhi(3 * i - 2:3 * i) = fields(i)%depth_hi
      stag(3 * i - 2:3 * i) = fields(i)%stagger
      own(3 * i - 2:3 * i) = fields(i)%owner
    end do
    tname = c_null_char
    if (present(transport)) tname = trim(transport) // c_null_char
    if (present(order_offsets)) given_offsets = order_offsets
    if (present(sweep_axes)) given_axes = sweep_axes
    call haloswap_order_args(orows, norder, nsweep, offs, axs, given_offsets, given_axes)
    if (present(regions)) ierr = int(c_next_regions(regions%ptr))
    ierr = int(c_plan_geom(decomp%ptr, a%n, a%kinds, a%datas, a%ranks, a%layouts, a%cf, &
         a%shapes, a%hlo, dset, dlo, dhi, stag, own, int(depth, c_int), merge(0_c_int, 1_c_int, &
         involve_corners), tname, orows, norder, offs, nsweep, axs, hs%plan))
    if (ierr == HALOSWAP_OK) hs%nfields = nf
    hs%swap_in_progress = .false.
  end subroutine haloswap_geometry_init

  !> Reverse exchange: every halo point the forward swap writes is combined into its owner's
  !> interior point (op: HALOSWAP_OP_SUM, _MAX, _MIN, _REPLACE), deterministically (canonical
  !> order). Halos are left as they were. arrays: this call's arrays instead of the registered
  !> ones (haloswap_gfield of each, same kind, shape, halos and components as registered;
  !> anything else is an error on every rank and nothing moves).
  subroutine haloswap_reverse(hs, op, ierr, arrays)
    type(halo_communication_type), intent(inout) :: hs
    integer, intent(in) :: op
    integer, intent(out) :: ierr
    type(haloswap_gfield), intent(in), optional :: arrays(:)
    if (present(arrays)) then
      ierr = reverse_call(hs, R_START, op, arrays)
      if (ierr == HALOSWAP_OK) ierr = reverse_call(hs, R_COMPLETE, 0, arrays)
    else
      ierr = reverse_call(hs, R_START, op)
      if (ierr == HALOSWAP_OK) ierr = reverse_call(hs, R_COMPLETE, 0)
    end if
  end subroutine haloswap_reverse

  subroutine haloswap_reverse_start(hs, op, ierr, arrays)
    type(halo_communication_type), intent(inout) :: hs
    integer, intent(in) :: op
    integer, intent(out) :: ierr
    type(haloswap_gfield), intent(in), optional :: arrays(:)
    if (present(arrays)) then
      ierr = reverse_call(hs, R_START, op, arrays)
    else
      ierr = reverse_call(hs, R_START, op)
    end if
  end subroutine haloswap_reverse_start

  !> arrays: the same as given to haloswap_reverse_start (or none if none were).
  subroutine haloswap_reverse_complete(hs, ierr, arrays)
    type(halo_communication_type), intent(inout) :: hs
    integer, intent(out) :: ierr
    type(haloswap_gfield), intent(in), optional :: arrays(:)
    if (present(arrays)) then
      ierr = reverse_call(hs, R_COMPLETE, 0, arrays)
    else
      ierr = reverse_call(hs, R_COMPLETE, 0)
    end if
  end subroutine haloswap_reverse_complete

  !> Reverse then forward (EPIC's field_halo_swap after a parcel-to-grid deposit).
  subroutine haloswap_accumulate_fill(hs, op, ierr, arrays)
    type(halo_communication_type), intent(inout) :: hs
    integer, intent(in) :: op
    integer, intent(out) :: ierr
    type(haloswap_gfield), intent(in), optional :: arrays(:)
    if (present(arrays)) then
      ierr = reverse_call(hs, R_FILL, op, arrays)
    else
      ierr = reverse_call(hs, R_FILL, op)
    end if
  end subroutine haloswap_accumulate_fill

  ! One of the three over the registered arrays or this call's. The callers leave arrays out
  ! rather than pass their own absent one on (gfortran would build a descriptor from its
  ! unset bounds: see haloswap_order_args).
  integer function reverse_call(hs, what, op, arrays)
    type(halo_communication_type), intent(in) :: hs
    integer(c_int), intent(in) :: what
    integer, intent(in) :: op
    type(haloswap_gfield), intent(in), optional :: arrays(:)
    type(haloswap_gfield) :: none(0)
    type(arrays_c) :: a
    if (present(arrays)) then
      call flatten(arrays, a)
    else
      call flatten(none, a)
      a%n = -1
    end if
    reverse_call = int(c_reverse_call(hs%plan, what, int(op, c_int), a%n, a%kinds, a%datas, &
         a%ranks, a%layouts, a%cf, a%shapes, a%hlo))
  end function reverse_call

  ! The fields as the C side takes them (checked there against the registered fields).
  subroutine flatten(arrays, a)
    type(haloswap_gfield), intent(in) :: arrays(:)
    type(arrays_c), intent(out) :: a
    integer :: i, n
    n = size(arrays)
    a%n = int(n, c_int)
    allocate(a%kinds(max(n, 1)), a%ranks(max(n, 1)), a%layouts(max(n, 1)), a%cf(max(n, 1)), &
         a%shapes(4 * max(n, 1)), a%hlo(4 * max(n, 1)), a%datas(max(n, 1)))
    do i = 1, n
      a%kinds(i) = arrays(i)%kind
      a%ranks(i) = arrays(i)%rank
      a%layouts(i) = arrays(i)%layout
      a%cf(i) = arrays(i)%comp_first
      a%datas(i) = arrays(i)%data
      a%shapes(4 * i - 3:4 * i) = arrays(i)%shp
      a%hlo(4 * i - 3:4 * i) = arrays(i)%halo_lo
    end do
  end subroutine flatten

  !> Progress a started swap (initiate_nonblocking_halo_swap) without blocking; done once
  !> every halo point is written. Complete it with complete_nonblocking_halo_swap.
  subroutine haloswap_swap_test(hs, done, ierr)
    type(halo_communication_type), intent(inout) :: hs
    logical, intent(out) :: done
    integer, intent(out) :: ierr
    integer(c_int) :: d
    ierr = int(c_swap_test(hs%plan, d))
    done = d /= 0
  end subroutine haloswap_swap_test

  !> Seconds summed over swaps: total (start to end of complete), exposed (inside start, test
  !> and complete), of which in test.
  subroutine haloswap_get_overlap_stats(hs, seconds_total, seconds_exposed, seconds_test, ierr)
    type(halo_communication_type), intent(in) :: hs
    real(c_double), intent(out) :: seconds_total, seconds_exposed, seconds_test
    integer, intent(out) :: ierr
    ierr = int(c_overlap(hs%plan, seconds_total, seconds_exposed, seconds_test))
  end subroutine haloswap_get_overlap_stats

  !> A decomposition with user-given ownership (other arguments as in
  !> haloswap_decomposition_create; periodic: 1 or 0 per axis): ranges_x/y/z (cells per rank along the axis,
  !> PETSc's lx/ly/lz; procs must be given for that axis), remainder_high (Lare3d: extra
  !> cells to the last ranks), axis_order (axis_order(k): the grid axis, 1..3, of dimension k
  !> of the Cartesian communicator; Lare3d's dims = (nprocz, nprocy, nprocx): [3, 2, 1]),
  !> cart: an existing Cartesian communicator to adopt.
  subroutine haloswap_decomposition_create_ex(decomp, comm, global, ierr, procs, periodic, &
       remainder_high, axis_order, ranges_x, ranges_y, ranges_z, cart)
    type(haloswap_decomposition), intent(inout) :: decomp
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: global(:)
    integer, intent(out) :: ierr
    integer, intent(in), optional :: procs(:), periodic(:), axis_order(:), ranges_x(:), &
         ranges_y(:), ranges_z(:)
    logical, intent(in), optional :: remainder_high
    type(MPI_Comm), intent(in), optional :: cart
    integer(c_int) :: nd, g(3), p(3), per(3), ao(3), have(3), rem, fcart
    integer(c_int), allocatable :: flat(:)
    integer :: nx, ny, nz
    nd = int(size(global), c_int)
    g = 0
    g(1:min(3, size(global))) = int(global(1:min(3, size(global))), c_int)
    p = 0
    if (nd == 3) p(3) = 1
    if (present(procs)) p(1:min(3, size(procs))) = int(procs(1:min(3, size(procs))), c_int)
    per = [1_c_int, 1_c_int, 0_c_int]
    if (present(periodic)) per(1:min(3, size(periodic))) = &
         int(periodic(1:min(3, size(periodic))), c_int)
    ao = 0
    if (present(axis_order)) ao(1:min(3, size(axis_order))) = &
         int(axis_order(1:min(3, size(axis_order))) - 1, c_int)
    rem = 0
    if (present(remainder_high)) then
      if (remainder_high) rem = 1
    end if
    nx = 0; ny = 0; nz = 0
    if (present(ranges_x)) nx = size(ranges_x)
    if (present(ranges_y)) ny = size(ranges_y)
    if (present(ranges_z)) nz = size(ranges_z)
    allocate(flat(max(nx + ny + nz, 1)))
    have = 0
    if (present(ranges_x)) then
      flat(1:nx) = int(ranges_x, c_int); have(1) = int(nx, c_int)
    end if
    if (present(ranges_y)) then
      flat(nx + 1:nx + ny) = int(ranges_y, c_int); have(2) = int(ny, c_int)
    end if
    if (present(ranges_z)) then
      flat(nx + ny + 1:nx + ny + nz) = int(ranges_z, c_int); have(3) = int(nz, c_int)
    end if
    fcart = -1
    if (present(cart)) then
      if (cart /= MPI_COMM_NULL) fcart = int(cart%MPI_VAL, c_int)
    end if
    ierr = int(c_decomp_ex(int(comm%MPI_VAL, c_int), nd, g, p, per, rem, ao, flat, have, fcart, &
         decomp%ptr))
  end subroutine haloswap_decomposition_create_ex

  !> Any box decomposition (docs/api.md, "Box decompositions"): this rank's box of global
  !> points lo(a)..hi(a) (1-based, inclusive) on a grid of global(a) points per axis (2 or 3
  !> axes); periodic(a) 0 or 1 (default: none). Collective.
  subroutine haloswap_decomposition_create_boxes(decomp, comm, global, lo, hi, ierr, periodic)
    type(haloswap_decomposition), intent(inout) :: decomp
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: global(:), lo(:), hi(:)
    integer, intent(out) :: ierr
    integer, intent(in), optional :: periodic(:)
    integer(c_int) :: g(3), per(3), l(3), h(3), nd
    nd = int(size(global), c_int)
    g = 1; per = 0; l = 0; h = 1
    g(1:min(3, size(global))) = int(global(1:min(3, size(global))), c_int)
    if (present(periodic)) per(1:min(3, size(periodic))) = &
         int(periodic(1:min(3, size(periodic))), c_int)
    l(1:min(3, size(lo))) = int(lo(1:min(3, size(lo))) - 1, c_int)
    h(1:min(3, size(hi))) = int(hi(1:min(3, size(hi))), c_int)
    ierr = int(c_decomp_boxes(int(comm%MPI_VAL, c_int), nd, g, per, l, h, decomp%ptr))
  end subroutine haloswap_decomposition_create_boxes

  subroutine haloswap_region_set_create(set, ierr)
    type(haloswap_region_set), intent(inout) :: set
    integer, intent(out) :: ierr
    ierr = int(c_region_set_create(set%ptr))
  end subroutine haloswap_region_set_create

  !> Regions (names as in C: "west", "x+ y+", "faces", ...) for field `field` of the plan's
  !> fields (1-based), or every field (field = 0).
  subroutine haloswap_region_set_add(set, field, names, ierr)
    type(haloswap_region_set), intent(in) :: set
    integer, intent(in) :: field
    character(len=*), intent(in) :: names
    integer, intent(out) :: ierr
    ierr = int(c_region_set_add(set%ptr, int(field - 1, c_int), trim(names) // c_null_char))
  end subroutine haloswap_region_set_add

  !> Bytes a plan sends to other ranks, receives from them and copies within this rank per
  !> swap, on this rank.
  subroutine haloswap_get_bytes(hs, sent, recv, self, ierr)
    type(halo_communication_type), intent(in) :: hs
    real(c_double), intent(out) :: sent, recv, self
    integer, intent(out) :: ierr
    ierr = int(c_plan_bytes(hs%plan, sent, recv, self))
  end subroutine haloswap_get_bytes

  subroutine haloswap_region_set_free(set, ierr)
    type(haloswap_region_set), intent(inout) :: set
    integer, intent(out) :: ierr
    ierr = int(c_region_set_free(set%ptr))
  end subroutine haloswap_region_set_free

end module haloswap_geometry
