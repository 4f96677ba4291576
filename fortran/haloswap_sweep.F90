! haloswap_sweep: the exchange of the sweep codes (Lare3d's mpiboundary, EPOCH's field_bc and
! particle_periodic_bcs). One stage per axis, in sweep order; a stage exchanges the two faces of
! its axis over the whole allocated extent of the other axes, ghost planes included, whether or
! not a stage filled them yet (so a corner at a wall gets what the sweep codes give it). The
! reverse (a sum) runs the same stages: each adds the halo slabs of its axis, whole transverse
! extent, into the owners' interior slabs, the lower neighbour's contribution first, so halo
! cells of the other axes hold partial sums afterwards, as the sweep codes leave them.
! Each stage is a haloswap plan over the whole Cartesian communicator, on a decomposition whose
! other axes count every rank's ghost planes as its cells (ranges padded by the ghost width,
! depth 0 there), so a face box spans the whole allocated extent and any transport serves it.
! A second layer over `haloswap` and `haloswap_geometry`.
module haloswap_sweep
  use, intrinsic :: iso_c_binding
  use mpi_f08, only: MPI_Comm, MPI_Cart_get, MPI_Cartdim_get, MPI_Allgather, MPI_INTEGER, &
       MPI_Topo_test, MPI_CART, MPI_ADDRESS_KIND, MPI_Comm_create_keyval, MPI_Comm_set_attr, &
       MPI_COMM_NULL_COPY_FN, MPI_COMM_SELF, MPI_SUCCESS
  use haloswap, only: haloswap_decomposition, halo_communication_type, HALOSWAP_OK, &
       HALOSWAP_ERR_ARG, haloswap_decomposition_free, finalise_halo_communication
  use haloswap_geometry, only: haloswap_gfield, haloswap_geometry_init, haloswap_field_set_depth, &
       haloswap_decomposition_create_ex, HALOSWAP_LAYOUT_XYZ, HALOSWAP_OP_SUM
  implicit none
  private

  !> A Cartesian process grid seen by the stages: per exchanged axis a decomposition that has
  !> the true cells on that axis and the cells plus the ghost planes on the others.
  type, public :: haloswap_sweep_grid
     private
     integer :: ndims = 0
     integer :: cells(3) = 0, ghosts(3) = 0
     logical :: active(3) = .false.   ! exchanged: more than one rank on the axis, or periodic
     logical :: made(3) = .false.     ! stage(a) created
     type(haloswap_decomposition) :: stage(3)
     type(MPI_Comm) :: cart
  end type haloswap_sweep_grid

  !> One exchange over fixed fields: a plan per stage.
  type, public :: haloswap_sweep_exchange
     private
     integer :: nstage = 0
     integer :: nfields = 0
     type(halo_communication_type) :: stage(3)
     type(MPI_Comm) :: cart
     integer(c_int), allocatable :: kinds(:), shp(:,:)
  end type haloswap_sweep_exchange

  !> A procedure to run at MPI_Finalize (haloswap_sweep_at_finalize).
  abstract interface
     subroutine haloswap_sweep_hook()
     end subroutine haloswap_sweep_hook
  end interface
  type :: hook_slot
     procedure(haloswap_sweep_hook), pointer, nopass :: run => null()
  end type hook_slot
  type(hook_slot), save :: hooks(8)
  integer, save :: nhooks = 0

  public :: haloswap_sweep_grid_create, haloswap_sweep_grid_free, haloswap_sweep_create, &
       haloswap_sweep_fill, haloswap_sweep_sum, haloswap_sweep_free, haloswap_sweep_stages, &
       haloswap_sweep_transport, haloswap_sweep_at_finalize, haloswap_sweep_hook

  interface
     integer(c_int) function c_swap(p, arrays) bind(c, name="hs_swap")
       import :: c_int, c_ptr
       type(c_ptr), value :: p, arrays
     end function c_swap
     integer(c_int) function c_reverse(p, op, arrays) bind(c, name="hs_reverse")
       import :: c_int, c_ptr
       type(c_ptr), value :: p, arrays
       integer(c_int), value :: op
     end function c_reverse
     integer(c_int) function c_set_error(code, msg, len) bind(c, name="hs_f_set_error")
       import :: c_int, c_char
       integer(c_int), value :: code, len
       character(kind=c_char), intent(in) :: msg(*)
     end function c_set_error
     integer(c_int) function c_agree(comm, rc) bind(c, name="hs_f_agree")
       import :: c_int
       integer(c_int), value :: comm, rc
     end function c_agree
     type(c_ptr) function c_transport(p) bind(c, name="hs_plan_selected_transport")
       import :: c_ptr
       type(c_ptr), value :: p
     end function c_transport
     integer(c_size_t) function c_strlen(s) bind(c, name="strlen")
       import :: c_size_t, c_ptr
       type(c_ptr), value :: s
     end function c_strlen
  end interface

contains

  integer function set_error(msg)
    character(len=*), intent(in) :: msg
    set_error = int(c_set_error(int(HALOSWAP_ERR_ARG, c_int), msg, int(len(msg), c_int)))
  end function set_error

  integer function agree(comm, rc)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: rc
    agree = int(c_agree(int(comm%MPI_VAL, c_int), int(rc, c_int)))
  end function agree

  !> The grid of the Cartesian communicator cart (collective over it). cells(a): this rank's
  !> cells along grid axis a (x, y, z; ranks with the same coordinate on an axis have the same
  !> cells there); ghosts(a): the ghost points the fields allocate on axis a, below plus above
  !> (a field has cells + ghosts points there, or one more for a node/face axis).
  !> axis_order(k): the grid axis (1..3) of cart dimension k (Lare3d and EPOCH create dims
  !> (z, y, x): [3, 2, 1]; default 1, 2, 3). periodic(a): 1/0 per grid axis instead of the
  !> cart's periods (EPOCH's fields and particles differ).
  subroutine haloswap_sweep_grid_create(g, cart, cells, ghosts, ierr, axis_order, periodic)
    type(haloswap_sweep_grid), intent(inout) :: g
    type(MPI_Comm), intent(in) :: cart
    integer, intent(in) :: cells(:), ghosts(:)
    integer, intent(out) :: ierr
    integer, intent(in), optional :: axis_order(:), periodic(:)
    integer :: nd, topo, k, a, r, rc, np, dims(3), coords(3), order(3), per(3), procs(3)
    integer :: mine(6)
    logical :: periods(3)
    integer, allocatable :: all(:,:), ranges(:,:)
    character(len=240) :: msg
    ierr = HALOSWAP_OK
    g%ndims = 0
    g%active = .false.
    call MPI_Topo_test(cart, topo)
    if (topo /= MPI_CART) then
      ierr = set_error("haloswap_sweep_grid_create: cart is not a Cartesian communicator")
      return
    end if
    call MPI_Cartdim_get(cart, nd)
    if (nd < 2 .or. nd > 3 .or. size(cells) /= nd .or. size(ghosts) /= nd) then
      write(msg, '(a,i0,a,i0,a,i0,a)') "haloswap_sweep_grid_create: cart has ", nd, &
           " dimensions, cells ", size(cells), " and ghosts ", size(ghosts), &
           " entries; all must be 2 or 3"
      ierr = set_error(trim(msg))
      return
    end if
    order(1:nd) = [(k, k = 1, nd)]
    if (present(axis_order)) then
      if (size(axis_order) /= nd) then
        ierr = set_error("haloswap_sweep_grid_create: axis_order needs one entry per dimension")
        return
      end if
      order(1:nd) = axis_order
    end if
    call MPI_Cart_get(cart, nd, dims, periods, coords)
    np = product(dims(1:nd))
    g%ndims = nd
    g%cart = cart
    g%cells(1:nd) = cells
    g%ghosts(1:nd) = ghosts
    ! Every rank's coordinates and cells per grid axis give each axis's ranges.
    mine = 0
    do k = 1, nd
      mine(order(k)) = coords(k)
      mine(3 + order(k)) = cells(order(k))
      procs(order(k)) = dims(k)
      per(order(k)) = merge(1, 0, periods(k))
    end do
    if (present(periodic)) per(1:nd) = periodic(1:nd)
    allocate(all(6, np), ranges(maxval(procs(1:nd)), 3))
    call MPI_Allgather(mine, 6, MPI_INTEGER, all, 6, MPI_INTEGER, cart)
    ranges = 0
    do r = 1, np
      do a = 1, nd
        associate (c => all(a, r) + 1, n => all(3 + a, r))
          if (ranges(c, a) /= 0 .and. ranges(c, a) /= n .and. ierr == HALOSWAP_OK) then
            write(msg, '(a,i0,a,i0,a,i0,a,i0)') "haloswap_sweep_grid_create: ranks at " // &
                 "coordinate ", c - 1, " of axis ", a, " have ", ranges(c, a), " and ", n, " cells"
            ierr = set_error(trim(msg))
          end if
          ranges(c, a) = n
        end associate
      end do
    end do
    ierr = agree(cart, ierr)
    do a = 1, nd
      if (ierr /= HALOSWAP_OK) exit
      g%active(a) = procs(a) > 1 .or. per(a) /= 0
      if (.not. g%active(a)) cycle
      call stage_decomposition(g, a, cart, procs, per, order, ranges, ierr)
      g%made(a) = ierr == HALOSWAP_OK
      ierr = agree(cart, ierr)
    end do
    if (ierr /= HALOSWAP_OK) call haloswap_sweep_grid_free(g, rc)
  end subroutine haloswap_sweep_grid_create

  ! Stage a's decomposition: true cells on axis a, cells + ghosts on the others (not swapped).
  subroutine stage_decomposition(g, a, cart, procs, per, order, ranges, ierr)
    type(haloswap_sweep_grid), intent(inout) :: g
    integer, intent(in) :: a, procs(3), per(3), order(3), ranges(:,:)
    type(MPI_Comm), intent(in) :: cart
    integer, intent(out) :: ierr
    integer :: b, nd, glob(3), pa(3)
    integer, allocatable :: rx(:), ry(:), rz(:)
    nd = g%ndims
    do b = 1, nd
      pa(b) = merge(per(b), 0, b == a)
    end do
    allocate(rx(procs(1)), ry(procs(2)), rz(max(procs(3), 1)))
    rx(:) = ranges(1:procs(1), 1) + merge(0, g%ghosts(1), a == 1)
    ry(:) = ranges(1:procs(2), 2) + merge(0, g%ghosts(2), a == 2)
    glob(1) = sum(rx)
    glob(2) = sum(ry)
    if (nd == 3) then
      rz(:) = ranges(1:procs(3), 3) + merge(0, g%ghosts(3), a == 3)
      glob(3) = sum(rz)
      call haloswap_decomposition_create_ex(g%stage(a), cart, glob(1:3), ierr, procs=procs(1:3), &
           periodic=pa(1:3), axis_order=order(1:3), ranges_x=rx, ranges_y=ry, ranges_z=rz)
    else
      call haloswap_decomposition_create_ex(g%stage(a), cart, glob(1:2), ierr, procs=procs(1:2), &
           periodic=pa(1:2), axis_order=order(1:2), ranges_x=rx, ranges_y=ry)
    end if
  end subroutine stage_decomposition

  subroutine haloswap_sweep_grid_free(g, ierr)
    type(haloswap_sweep_grid), intent(inout) :: g
    integer, intent(out) :: ierr
    integer :: a, rc
    ierr = HALOSWAP_OK
    do a = 1, 3
      if (g%made(a)) then
        call haloswap_decomposition_free(g%stage(a), rc)
        if (rc /= HALOSWAP_OK) ierr = rc
      end if
    end do
    g%made = .false.
    g%active = .false.
    g%ndims = 0
  end subroutine haloswap_sweep_grid_free

  ! Declared dimension of grid axis a in a field of the given layout (x fastest or z fastest).
  pure integer function dim_of(f, a, nd)
    type(haloswap_gfield), intent(in) :: f
    integer, intent(in) :: a, nd
    dim_of = merge(a, nd + 1 - a, f%layout == HALOSWAP_LAYOUT_XYZ)
  end function dim_of

  !> An exchange of fields (haloswap_gfield of each array, as the model declares it: points
  !> below the interior per dimension, staggering and owner per axis, depths per axis; an axis
  !> without a depth swaps its whole halo on both sides) over grid g, in the order sweep_axes
  !> (default 1, 2, 3; axes nobody exchanges are skipped). Collective over the grid's cart.
  subroutine haloswap_sweep_create(sw, g, fields, ierr, sweep_axes, transport)
    type(haloswap_sweep_exchange), intent(inout) :: sw
    type(haloswap_sweep_grid), intent(in) :: g
    type(haloswap_gfield), intent(in) :: fields(:)
    integer, intent(out) :: ierr
    integer, intent(in), optional :: sweep_axes(:)
    character(len=*), intent(in), optional :: transport
    type(haloswap_gfield) :: sf(size(fields))
    integer :: order(3), nord, s, a, b, i, d, n, hi, nd, rc
    character(len=240) :: msg
    ierr = HALOSWAP_OK
    sw%nstage = 0
    nd = g%ndims
    if (nd == 0) then
      ierr = set_error("haloswap_sweep_create: the grid was not created")
      return
    end if
    sw%cart = g%cart
    nord = nd
    order(1:nd) = [(a, a = 1, nd)]
    if (present(sweep_axes)) then
      nord = size(sweep_axes)
      if (nord < 1 .or. nord > nd) then
        ierr = set_error("haloswap_sweep_create: sweep_axes must name 1 to ndims axes")
      else
        order(1:nord) = sweep_axes
        do s = 1, nord
          if (order(s) < 1 .or. order(s) > nd .or. count(order(1:nord) == order(s)) /= 1) &
               ierr = set_error("haloswap_sweep_create: sweep_axes must name distinct axes 1..ndims")
        end do
      end if
    end if
    do i = 1, size(fields)
      if (ierr /= HALOSWAP_OK) exit
      if (fields(i)%rank /= nd .or. fields(i)%kind < 0) then
        write(msg, '(a,i0,a,i0,a)') "haloswap_sweep_create: fields(", i, &
             ") must be a contiguous array of rank ", nd, " (the grid's)"
        ierr = set_error(trim(msg))
      end if
    end do
    ierr = agree(g%cart, ierr)
    if (ierr /= HALOSWAP_OK) return
    sw%nfields = size(fields)
    if (allocated(sw%kinds)) deallocate(sw%kinds, sw%shp)
    allocate(sw%kinds(sw%nfields), sw%shp(4, sw%nfields))
    do i = 1, sw%nfields
      sw%kinds(i) = fields(i)%kind
      sw%shp(:, i) = fields(i)%shp
    end do
    do s = 1, nord
      a = order(s)
      if (.not. g%active(a)) cycle
      do i = 1, size(fields)
        sf(i) = fields(i)
        d = dim_of(fields(i), a, nd)
        if (fields(i)%depth_set(a) == 0) then
          n = g%cells(a) + fields(i)%stagger(a)
          hi = fields(i)%shp(d) - fields(i)%halo_lo(d) - n
          call haloswap_field_set_depth(sf(i), a, int(fields(i)%halo_lo(d)), max(hi, 0))
        end if
        do b = 1, nd
          if (b == a) cycle
          d = dim_of(fields(i), b, nd)
          n = g%cells(b) + g%ghosts(b)
          if (fields(i)%shp(d) /= n .and. fields(i)%shp(d) /= n + 1 .and. ierr == HALOSWAP_OK) then
            write(msg, '(a,i0,a,i0,a,i0,a,i0,a)') "haloswap_sweep_create: fields(", i, &
                 ") has ", fields(i)%shp(d), " points on axis ", b, &
                 "; with its cells and the grid's ghosts it must have ", n, " (or one more)"
            ierr = set_error(trim(msg))
          end if
          sf(i)%halo_lo(d) = 0
          sf(i)%stagger(b) = merge(1, 0, fields(i)%shp(d) == n + 1)
          sf(i)%owner(b) = 0
          call haloswap_field_set_depth(sf(i), b, 0, 0)
        end do
      end do
      ierr = agree(g%cart, ierr)
      if (ierr /= HALOSWAP_OK) then
        call haloswap_sweep_free(sw, rc)
        return
      end if
      sw%nstage = sw%nstage + 1
      call haloswap_geometry_init(sw%stage(sw%nstage), g%stage(a), sf, [0, 0, 0], .false., ierr, &
           transport)
      ierr = agree(g%cart, ierr)
      if (ierr /= HALOSWAP_OK) then
        sw%nstage = sw%nstage - 1
        call haloswap_sweep_free(sw, rc)
        return
      end if
    end do
  end subroutine haloswap_sweep_create

  ! The per-call arrays' addresses, after checking each is what field i was registered as
  ! (local: the same mistake on every rank gives every rank the same error; nothing moves).
  subroutine gather(sw, who, arrays, ptrs, ierr)
    type(haloswap_sweep_exchange), intent(in) :: sw
    character(len=*), intent(in) :: who
    type(haloswap_gfield), intent(in) :: arrays(:)
    type(c_ptr), intent(out) :: ptrs(:)
    integer, intent(out) :: ierr
    character(len=240) :: msg
    integer :: i
    ierr = HALOSWAP_OK
    if (size(arrays) /= sw%nfields) then
      write(msg, '(a,i0,a,i0)') who // ": ", size(arrays), " arrays given; fields: ", sw%nfields
      ierr = set_error(trim(msg))
      return
    end if
    do i = 1, sw%nfields
      if (arrays(i)%kind /= sw%kinds(i) .or. any(arrays(i)%shp /= sw%shp(:, i)) .or. &
           .not. c_associated(arrays(i)%data)) then
        write(msg, '(a,i0,a,4(1x,i0),a,4(1x,i0),a)') who // ": arrays(", i, ") has shape", &
             arrays(i)%shp, " but the field was registered with", sw%shp(:, i), &
             " (or another kind)"
        ierr = set_error(trim(msg))
        return
      end if
      ptrs(i) = arrays(i)%data
    end do
  end subroutine gather

  !> Forward: every stage in sweep order (blocking). arrays: this call's arrays instead of the
  !> registered ones (same kinds and shapes).
  subroutine haloswap_sweep_fill(sw, ierr, arrays)
    type(haloswap_sweep_exchange), intent(inout) :: sw
    integer, intent(out) :: ierr
    type(haloswap_gfield), intent(in), optional :: arrays(:)
    call run(sw, -1, "haloswap_sweep_fill", ierr, arrays)
  end subroutine haloswap_sweep_fill

  !> Reverse sum: every stage in sweep order, each adding its axis's halo slabs (whole
  !> transverse extent) into the owners' interior slabs, lower neighbour first.
  subroutine haloswap_sweep_sum(sw, ierr, arrays)
    type(haloswap_sweep_exchange), intent(inout) :: sw
    integer, intent(out) :: ierr
    type(haloswap_gfield), intent(in), optional :: arrays(:)
    call run(sw, HALOSWAP_OP_SUM, "haloswap_sweep_sum", ierr, arrays)
  end subroutine haloswap_sweep_sum

  ! op < 0: forward swap; else a reverse with that op.
  subroutine run(sw, op, who, ierr, arrays)
    type(haloswap_sweep_exchange), intent(inout) :: sw
    integer, intent(in) :: op
    character(len=*), intent(in) :: who
    integer, intent(out) :: ierr
    type(haloswap_gfield), intent(in), optional :: arrays(:)
    type(c_ptr), target :: ptrs(max(sw%nfields, 1))
    type(c_ptr) :: pa
    integer :: s
    ierr = HALOSWAP_OK
    pa = c_null_ptr
    if (present(arrays)) then
      call gather(sw, who, arrays, ptrs, ierr)
      if (ierr /= HALOSWAP_OK) return
      pa = c_loc(ptrs)
    end if
    do s = 1, sw%nstage
      if (op < 0) then
        ierr = int(c_swap(sw%stage(s)%plan, pa))
      else
        ierr = int(c_reverse(sw%stage(s)%plan, int(op, c_int), pa))
      end if
      if (ierr /= HALOSWAP_OK) return
    end do
  end subroutine run

  subroutine haloswap_sweep_free(sw, ierr)
    type(haloswap_sweep_exchange), intent(inout) :: sw
    integer, intent(out) :: ierr
    integer :: s, rc
    ierr = HALOSWAP_OK
    do s = 1, sw%nstage
      call finalise_halo_communication(sw%stage(s), rc)
      if (rc /= HALOSWAP_OK) ierr = rc
    end do
    sw%nstage = 0
  end subroutine haloswap_sweep_free

  !> Number of stages (axes with an exchange).
  integer function haloswap_sweep_stages(sw)
    type(haloswap_sweep_exchange), intent(in) :: sw
    haloswap_sweep_stages = sw%nstage
  end function haloswap_sweep_stages

  !> The transport moving the data ("none" without stages; auto: the one it chose).
  function haloswap_sweep_transport(sw) result(name)
    type(haloswap_sweep_exchange), intent(in) :: sw
    character(len=:), allocatable :: name
    name = "none"
    if (sw%nstage >= 1) name = haloswap_sweep_transport_of(sw%stage(1))
  end function haloswap_sweep_transport

  function haloswap_sweep_transport_of(hs) result(name)
    type(halo_communication_type), intent(in) :: hs
    character(len=:), allocatable :: name
    character(kind=c_char), pointer :: s(:)
    type(c_ptr) :: p
    integer :: n, i
    name = "none"
    p = c_transport(hs%plan)
    if (.not. c_associated(p)) return
    n = int(c_strlen(p))
    call c_f_pointer(p, s, [n])
    name = repeat(" ", n)
    do i = 1, n
      name(i:i) = s(i)
    end do
  end function haloswap_sweep_transport_of

  !> Runs hook at the start of MPI_Finalize, while MPI still works (the delete callback of an
  !> attribute of MPI_COMM_SELF): a drop-in frees its plans and prints its statistics there,
  !> since the code it serves has no call for that. At most 8 hooks; returns .false. if full.
  logical function haloswap_sweep_at_finalize(hook)
    procedure(haloswap_sweep_hook) :: hook
    integer :: keyval
    haloswap_sweep_at_finalize = nhooks < size(hooks)
    if (.not. haloswap_sweep_at_finalize) return
    nhooks = nhooks + 1
    hooks(nhooks)%run => hook
    if (nhooks > 1) return
    call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, run_hooks, keyval, 0_MPI_ADDRESS_KIND)
    call MPI_Comm_set_attr(MPI_COMM_SELF, keyval, 0_MPI_ADDRESS_KIND)
  end function haloswap_sweep_at_finalize

  subroutine run_hooks(comm, keyval, attr, extra, ierr)
    type(MPI_Comm) :: comm
    integer :: keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: attr, extra
    integer :: i
    do i = 1, nhooks
      call hooks(i)%run()
    end do
    nhooks = 0
    ierr = MPI_SUCCESS
  end subroutine run_hooks

end module haloswap_sweep
