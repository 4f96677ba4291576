! haloswap Fortran 2008 module: MONC-style halo swapping on field(z,y,x) arrays.
! Axes in this API are x = 1, y = 2, z = 3 (as in the C API, 1-based); arrays are passed
! directly (no copies): they must be contiguous (allocatable or explicit-shape arrays are).
module haloswap
  use, intrinsic :: iso_c_binding
  use mpi_f08, only: MPI_Comm
  implicit none
  private

  integer, parameter, public :: HALOSWAP_OK = 0, HALOSWAP_ERR_ARG = 1, HALOSWAP_ERR_MISMATCH = 2, &
       HALOSWAP_ERR_STATE = 3, HALOSWAP_ERR_NOMEM = 4, HALOSWAP_ERR_MPI = 5, &
       HALOSWAP_ERR_UNAVAILABLE = 6, HALOSWAP_ERR_INTERNAL = 7
  integer, parameter, public :: HALOSWAP_X = 1, HALOSWAP_Y = 2, HALOSWAP_Z = 3
  integer, parameter, public :: HALOSWAP_ONEWAY_NONE = 0, HALOSWAP_ONEWAY_LOWER = 1, &
       HALOSWAP_ONEWAY_UPPER = 2
  integer(c_int), parameter :: T_F64 = 0, T_F32 = 1, T_I32 = 2, T_I64 = 3
  !> Element kinds of haloswap_hooks_init (hs_type).
  integer, parameter, public :: HALOSWAP_FLOAT64 = T_F64, HALOSWAP_FLOAT32 = T_F32

  type, public :: haloswap_decomposition
     type(c_ptr) :: ptr = c_null_ptr
  end type haloswap_decomposition

  !> One field: a contiguous array including its halo, field(z,y,x) (or field(y,x) in 2D).
  type, public :: haloswap_field
     type(c_ptr) :: data = c_null_ptr
     integer(c_int) :: kind = -1
     integer(c_int) :: extents(3) = 1   ! allocated extents in axis order x, y, z
     integer(c_int) :: rank = 0         ! rank of the array (2 or 3)
  end type haloswap_field

  !> State of one kind of swap (MONC's halo_communication_type).
  type, public :: halo_communication_type
     type(c_ptr) :: plan = c_null_ptr
     integer :: nfields = 0
     logical :: swap_in_progress = .false.
     ! What each registered field is, so per-swap arrays can be checked against it, and the
     ! arrays the running swap was started with (complete must get the same ones).
     integer(c_int), allocatable, private :: kinds(:), ranks(:), extents(:,:)
     type(c_ptr), allocatable, private :: started(:)
  end type halo_communication_type

  ! field_<type>_<rank> (fortran/specifics.cmake)
  interface haloswap_field
    include 'field_procedures.inc'
  end interface haloswap_field

  !> Field memory from hs_alloc (node-shared, for the shm transport's one-copy path).
  interface haloswap_allocate
     module procedure alloc_f64_3
  end interface haloswap_allocate
  interface haloswap_deallocate
     module procedure dealloc_f64_3
  end interface haloswap_deallocate

  public :: haloswap_allocate, haloswap_deallocate, haloswap_transport_count, &
       haloswap_transport_name_at, haloswap_hooks_init, haloswap_hook_region, haloswap_plan_staged
  public :: haloswap_decomposition_create, haloswap_decomposition_free, haloswap_local_extent, &
       haloswap_global_offset, haloswap_procs, haloswap_coord, init_halo_communication, &
       initiate_nonblocking_halo_swap, complete_nonblocking_halo_swap, blocking_halo_swap, &
       finalise_halo_communication, haloswap_error_message, haloswap_get_stats, &
       haloswap_transport_name, haloswap_order_args, haloswap_selected_transport, &
       haloswap_at_finalize, haloswap_flush_before_abort, haloswap_version

  !> A hook of haloswap_hooks_init, called with its ctx, the region (read it with
  !> haloswap_hook_region) and the region's contiguous buffer, z fastest, then y, then x.
  abstract interface
     subroutine haloswap_hook(ctx, region, buf) bind(c)
       import :: c_ptr
       type(c_ptr), value :: ctx, region, buf
     end subroutine haloswap_hook
  end interface
  public :: haloswap_hook

  interface
     integer(c_int) function c_decomp_create(comm, ndims, global, procs, periodic, out) &
          bind(c, name="hs_f_decomp_create")
       import :: c_int, c_ptr
       integer(c_int), value :: comm, ndims
       integer(c_int), intent(in) :: global(*), procs(*), periodic(*)
       type(c_ptr), intent(out) :: out
     end function c_decomp_create
     integer(c_int) function c_decomp_create_placed(comm, ndims, global, procs, periodic, &
          node_size, out) bind(c, name="hs_f_decomp_create_placed")
       import :: c_int, c_ptr
       integer(c_int), value :: comm, ndims, node_size
       integer(c_int), intent(in) :: global(*), procs(*), periodic(*)
       type(c_ptr), intent(out) :: out
     end function c_decomp_create_placed
     integer(c_int) function c_decomp_free(d) bind(c, name="hs_f_decomp_free")
       import :: c_int, c_ptr
       type(c_ptr), intent(inout) :: d
     end function c_decomp_free
     integer(c_int) function c_decomp_axis(d, what, axis) bind(c, name="hs_f_decomp_axis")
       import :: c_int, c_ptr
       type(c_ptr), value :: d
       integer(c_int), value :: what, axis
     end function c_decomp_axis
     integer(c_int) function c_plan_create(d, nfields, types, datas, shapes, depth, stencil, &
          oneway, axis, transport, orows, norder, offsets, nsweep, axes, out) &
          bind(c, name="hs_f_plan_create")
       import :: c_int, c_ptr, c_char
       type(c_ptr), value :: d
       integer(c_int), value :: nfields, stencil, oneway, axis, orows, norder, nsweep
       integer(c_int), intent(in) :: types(*), shapes(*), depth(*), offsets(*), axes(*)
       type(c_ptr), intent(in) :: datas(*)
       character(kind=c_char), intent(in) :: transport(*)
       type(c_ptr), intent(out) :: out
     end function c_plan_create
     integer(c_int) function c_plan_hooks(d, kind, halo, depth, stencil, pack, unpack, ctx, out) &
          bind(c, name="hs_f_plan_create_hooks")
       import :: c_int, c_ptr, c_funptr
       type(c_ptr), value :: d, ctx
       integer(c_int), value :: kind, stencil
       integer(c_int), intent(in) :: halo(3), depth(3)
       type(c_funptr), value :: pack, unpack
       type(c_ptr), intent(out) :: out
     end function c_plan_hooks
     subroutine c_region(region, field, lo, count) bind(c, name="hs_f_region")
       import :: c_int, c_ptr
       type(c_ptr), value :: region
       integer(c_int), intent(out) :: field, lo(3), count(3)
     end subroutine c_region
     integer(c_int) function c_plan_staged(p) bind(c, name="hs_f_plan_staged")
       import :: c_int, c_ptr
       type(c_ptr), value :: p
     end function c_plan_staged
     integer(c_int) function c_swap_start(p, arrays) bind(c, name="hs_f_swap_start")
       import :: c_int, c_ptr
       type(c_ptr), value :: p, arrays
     end function c_swap_start
     integer(c_int) function c_swap_complete(p, arrays) bind(c, name="hs_f_swap_complete")
       import :: c_int, c_ptr
       type(c_ptr), value :: p, arrays
     end function c_swap_complete
     integer(c_int) function c_plan_free(p) bind(c, name="hs_f_plan_free")
       import :: c_int, c_ptr
       type(c_ptr), intent(inout) :: p
     end function c_plan_free
     integer(c_int) function c_stats(p, swaps, t_start, t_complete, bytes) bind(c, name="hs_f_stats")
       import :: c_int, c_ptr, c_double
       type(c_ptr), value :: p
       real(c_double), intent(out) :: swaps, t_start, t_complete, bytes
     end function c_stats
     integer(c_int) function c_error_message(buf, len) bind(c, name="hs_f_error_message")
       import :: c_int, c_char
       character(kind=c_char), intent(out) :: buf(*)
       integer(c_int), value :: len
     end function c_error_message
     integer(c_int) function c_error_source_data(given, want) bind(c, name="hs_f_error_source_data")
       import :: c_int
       integer(c_int), value :: given, want
     end function c_error_source_data
     integer(c_int) function c_swap_fail(p, code) bind(c, name="hs_f_swap_fail")
       import :: c_int, c_ptr
       type(c_ptr), value :: p
       integer(c_int), value :: code
     end function c_swap_fail
     integer(c_int) function c_fail_mark(p, code) bind(c, name="hs_f_fail_mark")
       import :: c_int, c_ptr
       type(c_ptr), value :: p
       integer(c_int), value :: code
     end function c_fail_mark
     integer(c_int) function c_set_error(code, msg, len) bind(c, name="hs_f_set_error")
       import :: c_int, c_char
       integer(c_int), value :: code, len
       character(kind=c_char), intent(in) :: msg(*)
     end function c_set_error
     type(c_ptr) function c_selected(p) bind(c, name="hs_plan_selected_transport")
       import :: c_ptr
       type(c_ptr), value :: p
     end function c_selected
     integer(c_int) function c_at_finalize(fn) bind(c, name="hs_f_at_finalize")
       import :: c_int, c_funptr
       type(c_funptr), value :: fn
     end function c_at_finalize
     type(c_ptr) function c_transport(p) bind(c, name="hs_f_transport")
       import :: c_ptr
       type(c_ptr), value :: p
     end function c_transport
     integer(c_int) function c_alloc(d, bytes, ptr) bind(c, name="hs_f_alloc")
       import :: c_int, c_ptr, c_long_long
       type(c_ptr), value :: d
       integer(c_long_long), value :: bytes
       type(c_ptr), intent(out) :: ptr
     end function c_alloc
     integer(c_int) function c_free(d, ptr) bind(c, name="hs_f_free")
       import :: c_int, c_ptr
       type(c_ptr), value :: d, ptr
     end function c_free
     integer(c_int) function c_transport_count() bind(c, name="hs_f_transport_count")
       import :: c_int
     end function c_transport_count
     type(c_ptr) function c_transport_name_at(i) bind(c, name="hs_f_transport_name")
       import :: c_ptr, c_int
       integer(c_int), value :: i
     end function c_transport_name_at
     type(c_ptr) function c_version(major, minor, patch) bind(c, name="hs_version")
       import :: c_ptr, c_int
       integer(c_int), intent(out) :: major, minor, patch
     end function c_version
     integer(c_size_t) function c_strlen(s) bind(c, name="strlen")
       import :: c_size_t, c_ptr
       type(c_ptr), value :: s
     end function c_strlen
  end interface

contains

  !> Decompose a global grid of size global(1:ndims) = [nx, ny(, nz)] over comm.
  !> procs: ranks per axis (0 = chosen by MPI_Dims_create; default [0, 0, 1]: z whole).
  !> periodic: 1/0 per axis (default periodic in x and y, walled in z).
  !> node_size: node-aware placement (each node a compact block of the process grid); 0 = nodes
  !> from MPI_Comm_split_type, N > 0 = virtual nodes of N consecutive ranks. Absent: rank order.
  subroutine haloswap_decomposition_create(decomp, comm, global, ierr, procs, periodic, node_size)
    type(haloswap_decomposition), intent(out) :: decomp
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: global(:)
    integer, intent(out) :: ierr
    integer, intent(in), optional :: procs(:), periodic(:)
    integer, intent(in), optional :: node_size
    integer(c_int) :: g(3), p(3), per(3), nd
    nd = int(size(global), c_int)
    g = 1
    p = [0, 0, 1]
    per = [1, 1, 0]
    if (nd < 2 .or. nd > 3) then
      nd = int(min(max(nd, 0), 9), c_int) ! passed through so the C side names the bad value
    end if
    g(1:min(nd, 3)) = int(global(1:min(nd, 3)), c_int)
    if (present(procs)) p(1:min(size(procs), 3)) = int(procs(1:min(size(procs), 3)), c_int)
    if (present(periodic)) per(1:min(size(periodic), 3)) = &
         int(periodic(1:min(size(periodic), 3)), c_int)
    if (nd == 2) p(3) = 0
    if (present(node_size)) then
      ierr = int(c_decomp_create_placed(int(comm%MPI_VAL, c_int), nd, g, p, per, &
           int(node_size, c_int), decomp%ptr))
      return
    end if
    ierr = int(c_decomp_create(int(comm%MPI_VAL, c_int), nd, g, p, per, decomp%ptr))
  end subroutine haloswap_decomposition_create

  subroutine haloswap_decomposition_free(decomp, ierr)
    type(haloswap_decomposition), intent(inout) :: decomp
    integer, intent(out) :: ierr
    ierr = int(c_decomp_free(decomp%ptr))
  end subroutine haloswap_decomposition_free

  integer function haloswap_local_extent(decomp, axis)
    type(haloswap_decomposition), intent(in) :: decomp
    integer, intent(in) :: axis
    haloswap_local_extent = int(c_decomp_axis(decomp%ptr, 0_c_int, int(axis - 1, c_int)))
  end function haloswap_local_extent

  !> Global index (0-based) of the first interior point on this rank along axis.
  integer function haloswap_global_offset(decomp, axis)
    type(haloswap_decomposition), intent(in) :: decomp
    integer, intent(in) :: axis
    haloswap_global_offset = int(c_decomp_axis(decomp%ptr, 1_c_int, int(axis - 1, c_int)))
  end function haloswap_global_offset

  integer function haloswap_procs(decomp, axis)
    type(haloswap_decomposition), intent(in) :: decomp
    integer, intent(in) :: axis
    haloswap_procs = int(c_decomp_axis(decomp%ptr, 2_c_int, int(axis - 1, c_int)))
  end function haloswap_procs

  integer function haloswap_coord(decomp, axis)
    type(haloswap_decomposition), intent(in) :: decomp
    integer, intent(in) :: axis
    haloswap_coord = int(c_decomp_axis(decomp%ptr, 3_c_int, int(axis - 1, c_int)))
  end function haloswap_coord

  ! ------------------------------------------------------------ field constructors
  ! A non-contiguous array (a section, a strided pointer) cannot be addressed in place:
  ! it is marked so that init_halo_communication refuses it with a clear message.
  subroutine describe(f, kind, shp, contiguous)
    type(haloswap_field), intent(out) :: f
    integer(c_int), intent(in) :: kind
    integer, intent(in) :: shp(:)
    logical, intent(in) :: contiguous
    f%kind = merge(kind, -2_c_int, contiguous)
    f%extents = 1
    f%rank = int(size(shp), c_int)
    if (size(shp) == 3) then
      f%extents = int([shp(3), shp(2), shp(1)], c_int) ! (z,y,x) -> x, y, z
    else
      f%extents(1:2) = int([shp(2), shp(1)], c_int)     ! (y,x) -> x, y
    end if
  end subroutine describe

  include 'field_bodies.inc'

  ! ------------------------------------------------------------ MONC API
  !> Build the swap of `fields` at halo_depth in x and y (depth_z in z, default 0), with
  !> corners (box stencil) if involve_corners. Halo widths come from the array shapes.
  !> transport: e.g. "p2p", "rma-pscw", "rma-fence:drive=get" (default: HALOSWAP_TRANSPORT or p2p).
  !> oneway/oneway_axis: a one-direction swap (HALOSWAP_ONEWAY_LOWER sends to the lower neighbour).
  !> Combine order of the reverse (docs/api.md, "Combine order"): order_offsets(3, n), one
  !> neighbour offset (ox, oy, oz) per column in the order to combine, or sweep_axes(:), the
  !> axes (HALOSWAP_X, ...) to sweep in order (empty: x, y, z); at most one of them.
  subroutine init_halo_communication(hs, decomp, fields, halo_depth, involve_corners, ierr, &
       transport, depth_z, oneway, oneway_axis, order_offsets, sweep_axes)
    type(halo_communication_type), intent(inout) :: hs
    type(haloswap_decomposition), intent(in) :: decomp
    type(haloswap_field), intent(in) :: fields(:)
    integer, intent(in) :: halo_depth
    logical, intent(in) :: involve_corners
    integer, intent(out) :: ierr
    character(len=*), intent(in), optional :: transport
    integer, intent(in), optional :: depth_z, oneway, oneway_axis
    integer, intent(in), optional :: order_offsets(:,:), sweep_axes(:)
    integer(c_int) :: types(max(size(fields), 1)), shapes(3 * max(size(fields), 1)), depth(3)
    type(c_ptr) :: datas(max(size(fields), 1))
    integer(c_int) :: stencil, ow, ax, orows, norder, nsweep
    integer(c_int), allocatable :: offs(:), axs(:)
    integer, allocatable :: given_offsets(:,:), given_axes(:)
    character(kind=c_char, len=:), allocatable :: tname
    integer :: i
    do i = 1, size(fields)
      types(i) = fields(i)%kind
      datas(i) = fields(i)%data
      shapes(3 * i - 2:3 * i) = fields(i)%extents
    end do
    depth = int([halo_depth, halo_depth, 0], c_int)
    if (present(depth_z)) depth(3) = int(depth_z, c_int)
    stencil = merge(0_c_int, 1_c_int, involve_corners)
    ow = 0
    ax = 0
    if (present(oneway)) ow = int(oneway, c_int)
    if (present(oneway_axis)) ax = int(oneway_axis - 1, c_int)
    tname = c_null_char
    if (present(transport)) tname = trim(transport) // c_null_char
    if (present(order_offsets)) given_offsets = order_offsets
    if (present(sweep_axes)) given_axes = sweep_axes
    call haloswap_order_args(orows, norder, nsweep, offs, axs, given_offsets, given_axes)
    ierr = int(c_plan_create(decomp%ptr, int(size(fields), c_int), types, datas, shapes, depth, &
         stencil, ow, ax, tname, orows, norder, offs, nsweep, axs, hs%plan))
    call forget_fields(hs)
    if (ierr == HALOSWAP_OK) then
      hs%nfields = size(fields)
      allocate(hs%kinds(size(fields)), hs%ranks(size(fields)), hs%extents(3, size(fields)))
      do i = 1, size(fields)
        hs%kinds(i) = fields(i)%kind
        hs%ranks(i) = fields(i)%rank
        hs%extents(:, i) = fields(i)%extents
      end do
    end if
  end subroutine init_halo_communication

  !> The optional combine-order arguments for the C side: their sizes (-1 where absent) and
  !> their values in arrays that always exist. The caller passes copies of the ones given,
  !> unallocated where absent, never an absent optional: passing one on, gfortran builds the
  !> new descriptor from the absent array's unset bounds (sanitized builds flagged the
  !> overflow now and then, fortran_fields_np2, 2026-12-01), and C must not see one either.
  !> haloswap_geometry_init uses it too.
  subroutine haloswap_order_args(orows, norder, nsweep, offs, axs, order_offsets, sweep_axes)
    integer(c_int), intent(out) :: orows, norder, nsweep
    integer(c_int), allocatable, intent(out) :: offs(:), axs(:)
    integer, allocatable, intent(in) :: order_offsets(:,:), sweep_axes(:)
    orows = 3
    norder = -1
    nsweep = -1
    if (allocated(order_offsets)) then
      orows = int(size(order_offsets, 1), c_int)
      norder = int(size(order_offsets, 2), c_int)
      offs = int(reshape(order_offsets, [max(size(order_offsets), 1)], pad=[0]), c_int)
    else
      allocate(offs(1))
      offs = 0
    end if
    if (allocated(sweep_axes)) then
      nsweep = int(size(sweep_axes), c_int)
      axs = int([sweep_axes, 0], c_int)
    else
      allocate(axs(1))
      axs = 0
    end if
  end subroutine haloswap_order_args

  !> A plan of one field that only the hooks pack and unpack touch (the MONC drop-in's
  !> policy callbacks): the data lie wherever the hooks put them, haloswap calls pack(ctx,
  !> region, buf) to fill each send region and unpack(ctx, region, buf) with each received
  !> one. kind: HALOSWAP_FLOAT64 or HALOSWAP_FLOAT32; halo, depth: per axis x, y, z (halo
  !> >= depth); the transport: HALOSWAP_TRANSPORT and HALOSWAP_OPTIONS (default p2p). Swap it
  !> with initiate/complete_nonblocking_halo_swap without source_data.
  subroutine haloswap_hooks_init(hs, decomp, kind, halo, depth, involve_corners, pack, unpack, &
       ctx, ierr)
    type(halo_communication_type), intent(inout) :: hs
    type(haloswap_decomposition), intent(in) :: decomp
    integer, intent(in) :: kind, halo(3), depth(3)
    logical, intent(in) :: involve_corners
    procedure(haloswap_hook) :: pack, unpack
    type(c_ptr), intent(in) :: ctx
    integer, intent(out) :: ierr
    ierr = int(c_plan_hooks(decomp%ptr, int(kind, c_int), int(halo, c_int), int(depth, c_int), &
         merge(0_c_int, 1_c_int, involve_corners), c_funloc(pack), c_funloc(unpack), ctx, &
         hs%plan))
    call forget_fields(hs)
    if (ierr == HALOSWAP_OK) hs%nfields = 1
  end subroutine haloswap_hooks_init

  !> The region a hook was called for: field (1-based), first local index per axis x, y, z
  !> (0-based; negative: in the lower halo) and extent per axis.
  subroutine haloswap_hook_region(region, field, lo, count)
    type(c_ptr), intent(in) :: region
    integer, intent(out) :: field, lo(3), count(3)
    integer(c_int) :: f, l(3), c(3)
    call c_region(region, f, l, c)
    field = int(f)
    lo = int(l)
    count = int(c)
  end subroutine haloswap_hook_region

  !> True if the plan runs the staged exchange (option staged=1): its hooks then get the
  !> stages' widened boxes, not one box per neighbour direction.
  logical function haloswap_plan_staged(hs)
    type(halo_communication_type), intent(in) :: hs
    haloswap_plan_staged = c_plan_staged(hs%plan) /= 0
  end function haloswap_plan_staged

  ! A plan (re)made: no swap in progress, no per-field records of an earlier plan.
  subroutine forget_fields(hs)
    type(halo_communication_type), intent(inout) :: hs
    hs%swap_in_progress = .false.
    if (allocated(hs%kinds)) deallocate(hs%kinds, hs%ranks, hs%extents)
    if (allocated(hs%started)) deallocate(hs%started)
  end subroutine forget_fields

  !> Start the swap (returns without waiting for any neighbour). source_data: arrays to swap
  !> this time instead of the registered ones (MONC's source_data), same shapes and kinds.
  subroutine initiate_nonblocking_halo_swap(hs, ierr, source_data)
    type(halo_communication_type), intent(inout) :: hs
    integer, intent(out) :: ierr
    type(haloswap_field), intent(in), optional, target :: source_data(:)
    type(c_ptr), allocatable, target :: arrays(:)
    if (present(source_data)) then
      call gather_arrays(hs, source_data, arrays, ierr, "initiate_nonblocking_halo_swap")
      if (ierr /= HALOSWAP_OK) then
        ! The neighbours wait for this swap: they get the error in it (design.md).
        ierr = int(c_swap_fail(hs%plan, int(ierr, c_int)))
        return
      end if
      ierr = int(c_swap_start(hs%plan, c_loc(arrays)))
    else
      ierr = int(c_swap_start(hs%plan, c_null_ptr))
    end if
    if (ierr == HALOSWAP_OK) then
      hs%swap_in_progress = .true.
      if (allocated(hs%started)) deallocate(hs%started)
      if (present(source_data)) call move_alloc(arrays, hs%started)
    end if
  end subroutine initiate_nonblocking_halo_swap

  !> Block until every halo cell of the started swap is written. source_data: the same arrays
  !> as given to initiate (or none if none were); otherwise an error, the swap completes with
  !> initiate's arrays and the state is failed (its next swaps pass the error on).
  subroutine complete_nonblocking_halo_swap(hs, ierr, source_data)
    type(halo_communication_type), intent(inout) :: hs
    integer, intent(out) :: ierr
    type(haloswap_field), intent(in), optional, target :: source_data(:)
    type(c_ptr), allocatable, target :: arrays(:)
    character(len=*), parameter :: who = "complete_nonblocking_halo_swap"
    character(len=200) :: msg
    integer :: i
    ierr = HALOSWAP_OK
    if (present(source_data) .and. hs%swap_in_progress) then
      call gather_arrays(hs, source_data, arrays, ierr, who)
      if (ierr == HALOSWAP_OK .and. .not. allocated(hs%started)) then
        ierr = set_error(HALOSWAP_ERR_ARG, who // ": source_data given, but the swap was " // &
             "initiated without source_data (complete needs the arrays initiate had)")
      else if (ierr == HALOSWAP_OK) then
        do i = 1, hs%nfields
          if (.not. c_associated(arrays(i), hs%started(i))) then
            write(msg, '(a,i0,a)') who // ": source_data(", i, ") is not the array given to " // &
                 "initiate_nonblocking_halo_swap for this swap"
            ierr = set_error(HALOSWAP_ERR_ARG, msg)
            exit
          end if
        end do
      end if
    else if (hs%swap_in_progress .and. allocated(hs%started)) then
      ierr = set_error(HALOSWAP_ERR_ARG, who // ": the swap was initiated with source_data; " // &
           "give complete the same source_data")
    end if
    ! A mistake fails the state; the swap completes with the arrays initiate had, so no
    ! neighbour is left waiting, and returns the error.
    if (ierr /= HALOSWAP_OK) ierr = int(c_fail_mark(hs%plan, int(ierr, c_int)))
    if (allocated(hs%started)) then
      arrays = hs%started
      ierr = int(c_swap_complete(hs%plan, c_loc(arrays)))
    else
      ierr = int(c_swap_complete(hs%plan, c_null_ptr))
    end if
    hs%swap_in_progress = .false.
    if (allocated(hs%started)) deallocate(hs%started)
  end subroutine complete_nonblocking_halo_swap

  subroutine blocking_halo_swap(hs, ierr, source_data)
    type(halo_communication_type), intent(inout) :: hs
    integer, intent(out) :: ierr
    type(haloswap_field), intent(in), optional, target :: source_data(:)
    ! Never an absent optional array passed on (see haloswap_order_args).
    if (present(source_data)) then
      call initiate_nonblocking_halo_swap(hs, ierr, source_data)
      if (ierr == HALOSWAP_OK) call complete_nonblocking_halo_swap(hs, ierr, source_data)
    else
      call initiate_nonblocking_halo_swap(hs, ierr)
      if (ierr == HALOSWAP_OK) call complete_nonblocking_halo_swap(hs, ierr)
    end if
  end subroutine blocking_halo_swap

  subroutine finalise_halo_communication(hs, ierr)
    type(halo_communication_type), intent(inout) :: hs
    integer, intent(out) :: ierr
    ierr = int(c_plan_free(hs%plan))
    if (ierr == HALOSWAP_OK) then
      hs%nfields = 0
      if (allocated(hs%kinds)) deallocate(hs%kinds, hs%ranks, hs%extents)
      if (allocated(hs%started)) deallocate(hs%started)
    end if
  end subroutine finalise_halo_communication

  ! Per-swap arrays must be exactly what was registered: same kind, rank and extents, and
  ! contiguous; otherwise the swap would read and write outside them. Local check (no
  ! communication): a mistake made on every rank gives every rank the same error; nothing is
  ! started, so nothing is written.
  subroutine gather_arrays(hs, source_data, arrays, ierr, who)
    type(halo_communication_type), intent(in) :: hs
    type(haloswap_field), intent(in) :: source_data(:)
    type(c_ptr), allocatable, intent(out) :: arrays(:)
    integer, intent(out) :: ierr
    character(len=*), intent(in) :: who
    character(len=300) :: msg
    integer :: i
    ierr = HALOSWAP_OK
    if (size(source_data) /= hs%nfields .or. .not. allocated(hs%kinds)) then
      ierr = int(c_error_source_data(int(size(source_data), c_int), int(hs%nfields, c_int)))
      return
    end if
    do i = 1, hs%nfields
      associate (f => source_data(i))
        if (f%kind == -2) then
          write(msg, '(a,i0,a)') who // ": source_data(", i, ") is not contiguous; " // &
               "haloswap_field needs the whole array (no section or strided pointer)"
        else if (f%kind /= hs%kinds(i)) then
          write(msg, '(a,i0,a,i0,a)') who // ": source_data(", i, ") is " // &
               trim(kind_name(f%kind)) // " but field ", i, " was registered as " // &
               trim(kind_name(hs%kinds(i)))
        else if (f%rank /= hs%ranks(i)) then
          write(msg, '(a,i0,a,i0,a,i0,a,i0)') who // ": source_data(", i, ") has rank ", &
               f%rank, " but field ", i, " was registered with rank ", hs%ranks(i)
        else if (any(f%extents /= hs%extents(:, i))) then
          write(msg, '(a,i0,a,a,a,i0,a,a)') who // ": source_data(", i, ") has shape ", &
               trim(shape_text(f%extents, f%rank)), " but field ", i, &
               " was registered with shape ", trim(shape_text(hs%extents(:, i), hs%ranks(i)))
        else if (.not. c_associated(f%data)) then
          write(msg, '(a,i0,a)') who // ": source_data(", i, ") has no data (an empty array)"
        else
          cycle
        end if
      end associate
      ierr = set_error(HALOSWAP_ERR_ARG, msg)
      return
    end do
    allocate(arrays(hs%nfields))
    do i = 1, hs%nfields
      arrays(i) = source_data(i)%data
    end do
  end subroutine gather_arrays

  function kind_name(k) result(s)
    integer(c_int), intent(in) :: k
    character(len=24) :: s
    select case (k)
    case (T_F64); s = "real(c_double)"
    case (T_F32); s = "real(c_float)"
    case (T_I32); s = "integer(c_int32_t)"
    case (T_I64); s = "integer(c_int64_t)"
    case default; s = "an unsupported kind"
    end select
  end function kind_name

  ! Array shape in Fortran order, e.g. "(4,12,12)" for field(z,y,x).
  function shape_text(ext, rank) result(s)
    integer(c_int), intent(in) :: ext(3), rank
    character(len=48) :: s
    if (rank == 3) then
      write(s, '("(",i0,",",i0,",",i0,")")') ext(3), ext(2), ext(1)
    else
      write(s, '("(",i0,",",i0,")")') ext(2), ext(1)
    end if
  end function shape_text

  integer function set_error(code, msg)
    integer, intent(in) :: code
    character(len=*), intent(in) :: msg
    set_error = int(c_set_error(int(code, c_int), trim(msg), int(len_trim(msg), c_int)))
  end function set_error

  !> Per-plan counters: swaps done, seconds in initiate and complete, bytes held by the plan.
  subroutine haloswap_get_stats(hs, swaps, seconds_start, seconds_complete, bytes_allocated, ierr)
    type(halo_communication_type), intent(in) :: hs
    integer(c_int64_t), intent(out) :: swaps, bytes_allocated
    real(c_double), intent(out) :: seconds_start, seconds_complete
    integer, intent(out) :: ierr
    real(c_double) :: s, b
    ierr = int(c_stats(hs%plan, s, seconds_start, seconds_complete, b))
    swaps = int(s, c_int64_t)
    bytes_allocated = int(b, c_int64_t)
  end subroutine haloswap_get_stats

  !> Message of the last failed call on this thread.
  function haloswap_error_message() result(msg)
    character(len=:), allocatable :: msg
    character(kind=c_char) :: buf(1024)
    integer :: n, i
    n = int(c_error_message(buf, 1024_c_int))
    allocate(character(len=n) :: msg)
    do i = 1, n
      msg(i:i) = buf(i)
    end do
  end function haloswap_error_message

  !> Name of the transport a plan uses.
  function haloswap_transport_name(hs) result(name)
    type(halo_communication_type), intent(in) :: hs
    character(len=:), allocatable :: name
    name = c_string(c_transport(hs%plan))
  end function haloswap_transport_name

  !> Name of the transport that moves a plan's data: for auto, the one it chose.
  function haloswap_selected_transport(hs) result(name)
    type(halo_communication_type), intent(in) :: hs
    character(len=:), allocatable :: name
    name = c_string(c_selected(hs%plan))
  end function haloswap_selected_transport

  !> Calls fn, c_funloc of a bind(c) subroutine without arguments, once at the start of
  !> MPI_Finalize while MPI still works: a drop-in for a code without a call for it frees its
  !> plans or prints its statistics there. Registering fn again changes nothing (8 at most).
  subroutine haloswap_at_finalize(fn, ierr)
    ! By value: a c_funloc actual passed by reference lands in .rodata, a text relocation in a PIE.
    type(c_funptr), value :: fn
    integer, intent(out) :: ierr
    ierr = int(c_at_finalize(fn))
  end subroutine haloswap_at_finalize

  !> Flushes standard output and error, then waits half a second: a launcher (MPICH's hydra)
  !> that kills every process on MPI_ABORT may otherwise drop a message still in its pipe.
  subroutine haloswap_flush_before_abort()
    use, intrinsic :: iso_fortran_env, only: output_unit, error_unit, int64
    integer(int64) :: t0, t, rate
    flush(output_unit)
    flush(error_unit)
    call system_clock(t0, rate)
    do
      call system_clock(t)
      if (t - t0 >= rate / 2) exit
    end do
  end subroutine haloswap_flush_before_abort

  !> Number of transports built into the library; names by haloswap_transport_name_at(1..n).
  integer function haloswap_transport_count()
    haloswap_transport_count = int(c_transport_count())
  end function haloswap_transport_count

  !> The library's version, "MAJOR.MINOR.PATCH" (hs_version); the parts too, if asked for.
  function haloswap_version(major, minor, patch) result(version)
    integer, intent(out), optional :: major, minor, patch
    character(len=:), allocatable :: version
    integer(c_int) :: v(3)
    version = c_string(c_version(v(1), v(2), v(3)))
    if (present(major)) major = int(v(1))
    if (present(minor)) minor = int(v(2))
    if (present(patch)) patch = int(v(3))
  end function haloswap_version

  function haloswap_transport_name_at(i) result(name)
    integer, intent(in) :: i
    character(len=:), allocatable :: name
    name = c_string(c_transport_name_at(int(i - 1, c_int)))
  end function haloswap_transport_name_at

  function c_string(p) result(str)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: str
    character(kind=c_char), pointer :: s(:)
    integer :: n, i
    if (.not. c_associated(p)) then
      str = ""
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, s, [n])
    allocate(character(len=n) :: str)
    do i = 1, n
      str(i:i) = s(i)
    end do
  end function c_string

  !> Allocate a(lower(1):upper(1), lower(2):upper(2), lower(3):upper(3)) with hs_alloc
  !> (collective; every rank allocates the same fields in the same order).
  subroutine alloc_f64_3(decomp, a, lower, upper, ierr)
    type(haloswap_decomposition), intent(in) :: decomp
    real(c_double), pointer, intent(out) :: a(:,:,:)
    integer, intent(in) :: lower(3), upper(3)
    integer, intent(out) :: ierr
    real(c_double), pointer :: flat(:,:,:)
    type(c_ptr) :: p
    integer :: n(3)
    n = max(upper - lower + 1, 0)
    nullify(a)
    ierr = int(c_alloc(decomp%ptr, product(int(n, c_long_long)) * 8_c_long_long, p))
    if (ierr /= HALOSWAP_OK) return
    call c_f_pointer(p, flat, n)
    a(lower(1):, lower(2):, lower(3):) => flat
  end subroutine alloc_f64_3

  subroutine dealloc_f64_3(decomp, a, ierr)
    type(haloswap_decomposition), intent(in) :: decomp
    real(c_double), pointer, intent(inout) :: a(:,:,:)
    integer, intent(out) :: ierr
    ierr = int(c_free(decomp%ptr, c_loc(a)))
    nullify(a)
  end subroutine dealloc_f64_3

end module haloswap
