!> haloswap drop-in for MONC's halo_communication_mod (model_core/src/communication/
!! halocommunication.F90). Same public procedures, argument lists and policy-callback
!! contract as MONC's module, so that MONC's components compile and run unchanged; the data
!! moves through a haloswap plan whose transport is chosen at run time by HALOSWAP_TRANSPORT
!! and HALOSWAP_OPTIONS (default p2p).
!!
!! How MONC's pages map onto haloswap. Each halo state owns one haloswap plan with a single
!! "virtual" field whose pack/unpack hooks are MONC's policy callbacks. The plan runs on a
!! periodic Cartesian grid with MONC's process layout (haloswap axis 1 = MONC's Y, axis 2 =
!! MONC's X, same ranks), so each haloswap region is one direction of MONC's swap: a face
!! holds the pages of the `depth` planes sent that way, a corner the pages of one 2x2 block.
!! The virtual extents are chosen so every region is large enough (z' = fields*nz, x/y = the
!! largest local extent), so the hooks just lay MONC's pages out in the region buffer:
!!  * pack: send_halo_buffer / send_corner_buffer point into the transport's send memory,
!!  * unpack: recv_halo_buffer / recv_corner_buffer point into the transport's receive
!!    memory (RMA window, shared segment, receive buffer) - no copy besides the callbacks'.
!! The pointers are remapped so that the current_page values the callbacks see, and the
!! dim/index/pid_location arguments, are exactly those of MONC's module. Callbacks run when
!! the transport packs or unpacks a direction (not necessarily in MONC's loop order).
!!
!! Run-time switches besides haloswap's: HALOSWAP_MONC_RECV_COPY=1 copies each received
!! region into a separate buffer first (the paper's Fig. 4 baseline, for measurements);
!! HALOSWAP_MONC_STATS=1 prints per-state swap counts and times at finalisation.
module halo_communication_mod
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only : error_unit, output_unit
  use datadefn_mod, only : DEFAULT_PRECISION
  use communication_types_mod, only : halo_communication_type, neighbour_description_type, &
       field_data_wrapper_type
  use state_mod, only : model_state_type
  use grids_mod, only : local_grid_type, X_INDEX, Y_INDEX, Z_INDEX
  use mpi, only : MPI_REQUEST_NULL, MPI_INTEGER, MPI_MAX, MPI_WTIME, &
       MPI_COMM_WORLD
  use mpi_f08, only : haloswap_f08_comm => MPI_Comm
  ! Every haloswap call goes through the haloswap module: no copy of a C struct's layout here.
  use haloswap, only : haloswap_decomposition, haloswap_decomposition_create, &
       haloswap_decomposition_free, haloswap_coord, &
       HALOSWAP_FLOAT64, HALOSWAP_FLOAT32, haloswap_hooks_init, haloswap_hook_region, &
       haloswap_plan_staged, &
       hs_plan => halo_communication_type, hs_initiate => initiate_nonblocking_halo_swap, &
       hs_complete => complete_nonblocking_halo_swap, hs_finalise => finalise_halo_communication
  use haloswap_dropin, only : haloswap_dropin_at_finalize, haloswap_dropin_fail, &
       haloswap_dropin_check, haloswap_dropin_stats_wanted, haloswap_dropin_transport, &
       itoa => haloswap_dropin_itoa
  implicit none

#ifndef TEST_MODE
  private
#endif

  !> Policy procedure interfaces (MONC's).
  abstract interface
     integer function get_fields_per_halo_cell_proc_interface(current_state)
       import model_state_type
       type(model_state_type), intent(inout) :: current_state
     end function get_fields_per_halo_cell_proc_interface

     subroutine copy_fields_to_halo_buffer_proc_interface(current_state, neighbour_description, &
          dim, source_index, pid_location, current_page, source_data)
       import model_state_type, neighbour_description_type, field_data_wrapper_type
       type(model_state_type), intent(inout) :: current_state
       integer, intent(in) :: dim, pid_location, source_index
       integer, intent(inout) :: current_page(:)
       type(neighbour_description_type), intent(inout) :: neighbour_description
       type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data
     end subroutine copy_fields_to_halo_buffer_proc_interface

     subroutine copy_corners_to_halo_buffer_proc_interface(current_state, neighbour_description, &
          dim, x_source_index, y_source_index, pid_location, current_page, source_data)
       import model_state_type, neighbour_description_type, field_data_wrapper_type
       type(model_state_type), intent(inout) :: current_state
       integer, intent(in) :: dim, pid_location, x_source_index, y_source_index
       integer, intent(inout) :: current_page(:)
       type(neighbour_description_type), intent(inout) :: neighbour_description
       type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data
     end subroutine copy_corners_to_halo_buffer_proc_interface

     subroutine copy_halo_buffer_to_field_proc_interface(current_state, neighbour_description, &
          dim, target_index, neighbour_location, current_page, source_data)
       import model_state_type, neighbour_description_type, field_data_wrapper_type
       type(model_state_type), intent(inout) :: current_state
       integer, intent(in) :: dim, target_index, neighbour_location
       integer, intent(inout) :: current_page(:)
       type(neighbour_description_type), intent(inout) :: neighbour_description
       type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data
     end subroutine copy_halo_buffer_to_field_proc_interface

     subroutine copy_halo_buffer_to_corner_proc_interface(current_state, neighbour_description,&
          corner_loc, x_target_index, y_target_index, neighbour_location, current_page, &
          source_data)
       import model_state_type, neighbour_description_type, field_data_wrapper_type
       type(model_state_type), intent(inout) :: current_state
       integer, intent(in) :: corner_loc, x_target_index, y_target_index, neighbour_location
       integer, intent(inout) :: current_page(:)
       type(neighbour_description_type), intent(inout) :: neighbour_description
       type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data
     end subroutine copy_halo_buffer_to_corner_proc_interface

     subroutine perform_local_data_copy_proc_interface(current_state, halo_depth, &
          involve_corners, source_data)
       import model_state_type, field_data_wrapper_type
       type(model_state_type), intent(inout) :: current_state
       integer, intent(in) :: halo_depth
       logical, intent(in) :: involve_corners
       type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data
     end subroutine perform_local_data_copy_proc_interface
  end interface

  !> What one halo state needs beyond MONC's type: the plan, MONC's geometry in the order
  !! of its loops, and the callbacks of the swap under way (the hooks run inside haloswap).
  type :: monc_haloswap_ctx
     type(hs_plan) :: plan             ! plan%plan: not associated with local copies only
     type(haloswap_decomposition) :: decomp
     integer :: depth = 0, plan_depth = 0, fields = 0, nz = 0, my_rank = -1, nneigh = 0
     integer :: vext(2) = 0             ! virtual local extents on haloswap axes 1 (Y), 2 (X)
     logical :: corners = .false.
     integer :: nbr(3,4) = -1, cnbr(4) = -1   ! MONC's neighbours(:,1:4), corner_neighbours(:,1)
     integer :: dstart(3) = 0, dend(3) = 0, lsize(3) = 0
     integer :: loc(3,4) = -1, cloc(4) = -1   ! pid_location per face slot and per corner
     integer :: page0(3,4) = 0                ! MONC's current_page at each face call
     integer :: csend0(4) = 0, crecv0(4) = 0  ! ... at each corner call (send, receive)
     integer :: target(3,4) = 0               ! MONC's target_index per receive slot
     ! The swap under way.
     type(c_ptr) :: state = c_null_ptr, hstate = c_null_ptr
     procedure(copy_fields_to_halo_buffer_proc_interface), pointer, nopass :: pack_cb => null()
     procedure(copy_corners_to_halo_buffer_proc_interface), pointer, nopass :: &
          cpack_cb => null()
     procedure(copy_halo_buffer_to_field_proc_interface), pointer, nopass :: unpack_cb => null()
     procedure(copy_halo_buffer_to_corner_proc_interface), pointer, nopass :: &
          cunpack_cb => null()
     ! The call's source_data; not allocated (so absent in the callbacks) without one.
     type(field_data_wrapper_type), allocatable :: src(:)
     integer :: hook_error = 0
     character(len=200) :: hook_msg = ''
     ! Measurement switches and counters.
     logical :: recv_copy = .false., stats = .false.
     real(kind=DEFAULT_PRECISION), allocatable :: copybuf(:)
     integer(c_int64_t) :: swaps = 0, callbacks_direct = 0, callbacks_copied = 0
     double precision :: t_initiate = 0d0, t_complete = 0d0
  end type monc_haloswap_ctx

  ! States with HALOSWAP_MONC_STATS=1 not finalised yet: their statistics print at
  ! MPI_Finalize (MONC does not finalise every state).
  type :: ctx_ref
     type(monc_haloswap_ctx), pointer :: c => null()
  end type ctx_ref
  type(ctx_ref), allocatable :: live_stats(:)

  public copy_buffer_to_field, copy_field_to_buffer, copy_corner_to_buffer, &
       copy_buffer_to_corner, perform_local_data_copy_for_field, init_halo_communication, &
       finalise_halo_communication, initiate_nonblocking_halo_swap, &
       complete_nonblocking_halo_swap, blocking_halo_swap, get_single_field_per_halo_cell
contains

  !> initiate + complete. Give both corner callbacks or neither.
  subroutine blocking_halo_swap(current_state, halo_swap_state, copy_to_halo_buffer, &
       perform_local_data_copy, copy_from_halo_buffer, copy_corners_to_halo_buffer, &
       copy_from_halo_buffer_to_corner, source_data)
    type(model_state_type), intent(inout), target :: current_state
    type(halo_communication_type), intent(inout), target :: halo_swap_state
    procedure(copy_fields_to_halo_buffer_proc_interface) :: copy_to_halo_buffer
    procedure(copy_halo_buffer_to_field_proc_interface) :: copy_from_halo_buffer
    procedure(perform_local_data_copy_proc_interface) :: perform_local_data_copy
    procedure(copy_corners_to_halo_buffer_proc_interface), optional :: &
         copy_corners_to_halo_buffer
    procedure(copy_halo_buffer_to_corner_proc_interface), optional :: &
         copy_from_halo_buffer_to_corner
    type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data

    if (present(copy_corners_to_halo_buffer) .neqv. present(copy_from_halo_buffer_to_corner)) &
         call fatal("blocking_halo_swap", "give both corner callbacks " // &
         "(copy_corners_to_halo_buffer, copy_from_halo_buffer_to_corner) or neither")
    ! The corner callbacks pass their absence on; an absent source_data array is not passed
    ! on (gfortran would build its descriptor from unset bounds: haloswap.F90's
    ! haloswap_order_args).
    if (present(source_data)) then
      call initiate_nonblocking_halo_swap(current_state, halo_swap_state, copy_to_halo_buffer, &
           copy_corners_to_halo_buffer, source_data)
      call complete_nonblocking_halo_swap(current_state, halo_swap_state, &
           perform_local_data_copy, copy_from_halo_buffer, copy_from_halo_buffer_to_corner, &
           source_data)
    else
      call initiate_nonblocking_halo_swap(current_state, halo_swap_state, copy_to_halo_buffer, &
           copy_corners_to_halo_buffer)
      call complete_nonblocking_halo_swap(current_state, halo_swap_state, &
           perform_local_data_copy, copy_from_halo_buffer, copy_from_halo_buffer_to_corner)
    end if
  end subroutine blocking_halo_swap

  !> Local copies for self neighbours, then wait for the neighbours' data, which the
  !! transport hands to copy_from_halo_buffer (and the corner callback) as it unpacks.
  subroutine complete_nonblocking_halo_swap(current_state, halo_swap_state, &
       perform_local_data_copy, copy_from_halo_buffer, copy_from_halo_buffer_to_corner, &
       source_data)
    type(model_state_type), intent(inout), target :: current_state
    type(halo_communication_type), intent(inout), target :: halo_swap_state
    procedure(copy_halo_buffer_to_field_proc_interface) :: copy_from_halo_buffer
    procedure(perform_local_data_copy_proc_interface) :: perform_local_data_copy
    procedure(copy_halo_buffer_to_corner_proc_interface), optional :: &
         copy_from_halo_buffer_to_corner
    type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data

    type(monc_haloswap_ctx), pointer :: c
    double precision :: t0
    integer :: ierr

    if (present(copy_from_halo_buffer_to_corner) .neqv. halo_swap_state%involve_corners) &
         call warn("complete_nonblocking_halo_swap", "the state was initialised with " // &
         "involve_corners = " // merge("T", "F", halo_swap_state%involve_corners) // &
         " but copy_from_halo_buffer_to_corner is " // &
         merge("given  ", "missing", present(copy_from_halo_buffer_to_corner)))
    if (present(source_data)) then
      call perform_local_data_copy(current_state, halo_swap_state%halo_depth, &
           halo_swap_state%involve_corners, source_data)
    else
      call perform_local_data_copy(current_state, halo_swap_state%halo_depth, &
           halo_swap_state%involve_corners)
    end if
    c => context_of(halo_swap_state, "complete_nonblocking_halo_swap")
    if (c_associated(c%plan%plan)) then
      t0 = mpi_wtime()
      c%state = c_loc(current_state)
      c%hstate = c_loc(halo_swap_state)
      c%unpack_cb => copy_from_halo_buffer
      c%cunpack_cb => null()
      if (present(copy_from_halo_buffer_to_corner) .and. halo_swap_state%involve_corners) &
           c%cunpack_cb => copy_from_halo_buffer_to_corner
      if (present(source_data)) c%src = source_data ! the wrappers (pointers), not the data
      call hs_complete(c%plan, ierr)
      call check(ierr, "complete_nonblocking_halo_swap")
      call check_hooks(c, "complete_nonblocking_halo_swap")
      call clear_call(c)
      c%swaps = c%swaps + 1
      c%t_complete = c%t_complete + (mpi_wtime() - t0)
    end if
    halo_swap_state%swap_in_progress=.false.
  end subroutine complete_nonblocking_halo_swap

  !> Starts the swap: the transport calls copy_to_halo_buffer (and the corner callback) to
  !! fill its send memory and returns without waiting for any neighbour. The fields are not
  !! modified until the matching complete.
  subroutine initiate_nonblocking_halo_swap(current_state, halo_swap_state, copy_to_halo_buffer, &
       copy_corners_to_halo_buffer, source_data)
    type(model_state_type), intent(inout), target :: current_state
    type(halo_communication_type), intent(inout), target :: halo_swap_state
    procedure(copy_fields_to_halo_buffer_proc_interface) :: copy_to_halo_buffer
    procedure(copy_corners_to_halo_buffer_proc_interface), optional :: copy_corners_to_halo_buffer
    type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data

    type(monc_haloswap_ctx), pointer :: c
    double precision :: t0
    integer :: ierr

    if (halo_swap_state%swap_in_progress) call fatal("initiate_nonblocking_halo_swap", &
         "a swap of this halo state is already in progress (initiate called twice " // &
         "without complete_nonblocking_halo_swap)")
    c => context_of(halo_swap_state, "initiate_nonblocking_halo_swap")
    halo_swap_state%swap_in_progress = .true.
    if (.not. c_associated(c%plan%plan)) return
    if (present(copy_corners_to_halo_buffer) .neqv. halo_swap_state%involve_corners) &
         call warn("initiate_nonblocking_halo_swap", "the state was initialised with " // &
         "involve_corners = " // merge("T", "F", halo_swap_state%involve_corners) // &
         " but copy_corners_to_halo_buffer is " // &
         merge("given  ", "missing", present(copy_corners_to_halo_buffer)))
    t0 = mpi_wtime()
    if (allocated(halo_swap_state%send_requests)) halo_swap_state%send_requests(:) = &
         MPI_REQUEST_NULL
    if (allocated(halo_swap_state%recv_requests)) halo_swap_state%recv_requests(:) = &
         MPI_REQUEST_NULL
    c%state = c_loc(current_state)
    c%hstate = c_loc(halo_swap_state)
    c%pack_cb => copy_to_halo_buffer
    c%cpack_cb => null()
    if (present(copy_corners_to_halo_buffer) .and. halo_swap_state%involve_corners) &
         c%cpack_cb => copy_corners_to_halo_buffer
    if (present(source_data)) c%src = source_data ! the wrappers (pointers), not the data
    call hs_initiate(c%plan, ierr)
    call check(ierr, "initiate_nonblocking_halo_swap")
    call check_hooks(c, "initiate_nonblocking_halo_swap")
    call clear_call(c)
    c%t_initiate = c%t_initiate + (mpi_wtime() - t0)
  end subroutine initiate_nonblocking_halo_swap

  !> Sets up a halo state: MONC's neighbour description (distinct neighbours, pages,
  !! corners, sizes, cell_match) and the haloswap plan behind it. Collective over the
  !! model's ranks (every rank calls it for the same states in the same order).
  subroutine init_halo_communication(current_state, get_fields_per_halo_cell, halo_state, &
       halo_depth, involve_corners)
    type(model_state_type), intent(inout) :: current_state
    procedure(get_fields_per_halo_cell_proc_interface) :: get_fields_per_halo_cell
    logical, intent(in) :: involve_corners
    integer, intent(in) :: halo_depth
    type(halo_communication_type), intent(out) :: halo_state

    type(monc_haloswap_ctx), pointer :: c
    integer :: i, nreq

    if (halo_depth /= 1 .and. halo_depth /= 2) call fatal("init_halo_communication", &
         "halo_depth = " // itoa(halo_depth) // " but MONC's halo swap supports 1 or 2")
    if (.not. allocated(current_state%local_grid%neighbours)) call fatal( &
         "init_halo_communication", "current_state%local_grid%neighbours is not allocated " // &
         "(decomposition has not run)")
    if (size(current_state%local_grid%neighbours, 2) < 2 * halo_depth) call fatal( &
         "init_halo_communication", "local_grid%neighbours has " // &
         itoa(size(current_state%local_grid%neighbours, 2)) // " slots per dimension but " // &
         "halo_depth = " // itoa(halo_depth) // " needs " // itoa(2 * halo_depth))
    if (involve_corners .and. .not. allocated(current_state%local_grid%corner_neighbours)) &
         call fatal("init_halo_communication", "involve_corners = T but " // &
         "local_grid%corner_neighbours is not allocated")

    halo_state%involve_corners = involve_corners
    halo_state%halo_depth = halo_depth
    halo_state%cell_match = 0
    halo_state%fields_per_cell = get_fields_per_halo_cell(current_state)
    if (halo_state%fields_per_cell < 1) call fatal("init_halo_communication", &
         "get_fields_per_halo_cell returned " // itoa(halo_state%fields_per_cell) // &
         "; it must be at least 1")
    call describe_neighbours(current_state, halo_state)
    call generate_cell_match(current_state%local_grid, halo_depth, halo_state%cell_match)

    nreq = 0
    do i = 1, halo_state%number_distinct_neighbours
      if (halo_state%halo_swap_neighbours(i)%recv_size > 0) nreq = nreq + 1
      if (halo_state%halo_swap_neighbours(i)%recv_corner_size > 0) nreq = nreq + 1
    end do
    if (halo_state%number_distinct_neighbours > 0) then
      allocate(halo_state%send_requests(nreq), halo_state%recv_requests(nreq))
      halo_state%send_requests(:) = MPI_REQUEST_NULL
      halo_state%recv_requests(:) = MPI_REQUEST_NULL
    end if

    allocate(c)
    call setup_context(current_state, halo_state, c)
    halo_state%haloswap_context = c_loc(c)
    halo_state%initialised = .true.
  end subroutine init_halo_communication

  !> Frees the plan and the state's memory. Collective, like init.
  subroutine finalise_halo_communication(halo_swap_state)
    type(halo_communication_type), intent(inout) :: halo_swap_state

    type(monc_haloswap_ctx), pointer :: c
    integer :: ierr

    if (c_associated(halo_swap_state%haloswap_context)) then
      call c_f_pointer(halo_swap_state%haloswap_context, c)
      if (c%stats) then
        call print_stats(c)
        call stats_forget(c)
      end if
      if (c_associated(c%plan%plan)) then
        call hs_finalise(c%plan, ierr)
        call check(ierr, "finalise_halo_communication")
      end if
      if (c_associated(c%decomp%ptr)) then
        call haloswap_decomposition_free(c%decomp, ierr)
        call check(ierr, "finalise_halo_communication")
      end if
      deallocate(c)
      halo_swap_state%haloswap_context = c_null_ptr
    end if
    if (allocated(halo_swap_state%send_requests)) deallocate(halo_swap_state%send_requests)
    if (allocated(halo_swap_state%recv_requests)) deallocate(halo_swap_state%recv_requests)
    if (allocated(halo_swap_state%halo_swap_neighbours)) &
         deallocate(halo_swap_state%halo_swap_neighbours)
    halo_swap_state%number_distinct_neighbours = 0
    halo_swap_state%swap_in_progress = .false.
    halo_swap_state%initialised=.false.
  end subroutine finalise_halo_communication

  ! ------------------------------------------------------------ MONC's public helpers

  !> One received page into a 2x2 halo corner: columns 4, 3, 2, 1 of the page go to the
  !! target column and its neighbours away from the interior (MONC's order).
  subroutine copy_buffer_to_corner(local_grid, halo_buffer, field_data, corner_loc, &
       x_target_index, y_target_index, halo_page)
    type(local_grid_type), intent(inout) :: local_grid
    integer, intent(in) :: corner_loc, x_target_index, y_target_index, halo_page
    real(kind=DEFAULT_PRECISION), dimension(:,:,:), intent(inout) :: halo_buffer
    real(kind=DEFAULT_PRECISION), dimension(:,:,:), intent(inout) :: field_data

    integer :: zs, ze, ys(4), xs(4), k
    zs = local_grid%local_domain_start_index(Z_INDEX)
    ze = local_grid%local_domain_end_index(Z_INDEX)
    call corner_columns(corner_loc, x_target_index, y_target_index, ys, xs)
    do k = 1, 4
      field_data(zs:ze, ys(k), xs(k)) = halo_buffer(:, 5 - k, halo_page)
    end do
  end subroutine copy_buffer_to_corner

  !> One received page into the halo plane target_index of dimension dim.
  subroutine copy_buffer_to_field(local_grid, halo_buffer, field_data, dim, target_index, &
       halo_page)
    type(local_grid_type), intent(inout) :: local_grid
    integer, intent(in) :: dim, target_index, halo_page
    real(kind=DEFAULT_PRECISION), dimension(:,:,:), intent(inout) :: halo_buffer
    real(kind=DEFAULT_PRECISION), dimension(:,:,:), intent(inout) :: field_data

    integer :: zs, ze
    zs = local_grid%local_domain_start_index(Z_INDEX)
    ze = local_grid%local_domain_end_index(Z_INDEX)
    if (dim == X_INDEX) then
      field_data(zs:ze, local_grid%local_domain_start_index(Y_INDEX): &
           local_grid%local_domain_end_index(Y_INDEX), target_index) = halo_buffer(:, :, halo_page)
    else
      field_data(zs:ze, target_index, local_grid%local_domain_start_index(X_INDEX): &
           local_grid%local_domain_end_index(X_INDEX)) = halo_buffer(:, :, halo_page)
    end if
  end subroutine copy_buffer_to_field

  !> The interior plane source_index of dimension dim into one send page.
  subroutine copy_field_to_buffer(local_grid, halo_buffer, field_data, dim, source_index, &
       halo_page)
    type(local_grid_type), intent(inout) :: local_grid
    integer, intent(in) :: dim, source_index, halo_page
    real(kind=DEFAULT_PRECISION), dimension(:,:,:), intent(inout) :: halo_buffer
    real(kind=DEFAULT_PRECISION), dimension(:,:,:), intent(inout) :: field_data

    integer :: zs, ze
    zs = local_grid%local_domain_start_index(Z_INDEX)
    ze = local_grid%local_domain_end_index(Z_INDEX)
    if (dim == X_INDEX) then
      halo_buffer(:, :, halo_page) = field_data(zs:ze, &
           local_grid%local_domain_start_index(Y_INDEX):local_grid%local_domain_end_index(Y_INDEX), &
           source_index)
    else
      halo_buffer(:, :, halo_page) = field_data(zs:ze, source_index, &
           local_grid%local_domain_start_index(X_INDEX):local_grid%local_domain_end_index(X_INDEX))
    end if
  end subroutine copy_field_to_buffer

  !> The 2x2 block of columns at a corner into one send page, in MONC's column order:
  !! (y, x), (y-+1, x), (y, x-+1), (y-+1, x-+1), stepping towards the corner.
  subroutine copy_corner_to_buffer(local_grid, halo_buffer, field_data, corner_loc, &
       x_source_index, y_source_index, halo_page)
    type(local_grid_type), intent(inout) :: local_grid
    integer, intent(in) :: corner_loc, x_source_index, y_source_index, halo_page
    real(kind=DEFAULT_PRECISION), dimension(:,:,:), intent(inout) :: halo_buffer
    real(kind=DEFAULT_PRECISION), dimension(:,:,:), intent(inout) :: field_data

    integer :: ys(4), xs(4), k
    call corner_columns(corner_loc, x_source_index, y_source_index, ys, xs)
    do k = 1, 4
      halo_buffer(:, k, halo_page) = field_data(:, ys(k), xs(k))
    end do
  end subroutine copy_corner_to_buffer

  !> The 2x2 block of columns at corner corner_loc from column (y, x) in MONC's page order:
  !! (y, x), (y-+1, x), (y, x-+1), (y-+1, x-+1), stepping towards the corner.
  subroutine corner_columns(corner_loc, x, y, ys, xs)
    integer, intent(in) :: corner_loc, x, y
    integer, intent(out) :: ys(4), xs(4)
    integer :: ya, xa
    ya = y + merge(-1, 1, corner_loc < 3)
    xa = x + merge(-1, 1, corner_loc == 1 .or. corner_loc == 3)
    ys = [y, ya, y, ya]
    xs = [x, x, xa, xa]
  end subroutine corner_columns

  !> Halo copies within one field for every direction whose neighbour is this rank.
  subroutine perform_local_data_copy_for_field(field_data, local_grid, my_rank, halo_depth, &
       involve_corners)
    real(kind=DEFAULT_PRECISION), dimension(:,:,:), intent(inout) :: field_data
    type(local_grid_type), intent(inout) :: local_grid
    integer, intent(in) :: my_rank, halo_depth
    logical, intent(in) :: involve_corners

    call local_copy_dimension(Y_INDEX, my_rank, halo_depth, local_grid, field_data)
    call local_copy_dimension(X_INDEX, my_rank, halo_depth, local_grid, field_data)
    if (involve_corners) call local_copy_corners(my_rank, local_grid, field_data)
  end subroutine perform_local_data_copy_for_field

  !> The usual policy for a one-field swap.
  integer function get_single_field_per_halo_cell(current_state)
    type(model_state_type), intent(inout) :: current_state
    get_single_field_per_halo_cell = 1
  end function get_single_field_per_halo_cell

  ! ------------------------------------------------------------ private: local copies

  subroutine local_copy_dimension(dim, my_rank, halo_depth, local_grid, field_data)
    integer, intent(in) :: dim, my_rank, halo_depth
    type(local_grid_type), intent(inout) :: local_grid
    real(kind=DEFAULT_PRECISION), dimension(:,:,:), intent(inout) :: field_data

    integer :: j, t, s, zs, ze, ys, ye, xs, xe

    zs = local_grid%local_domain_start_index(Z_INDEX)
    ze = local_grid%local_domain_end_index(Z_INDEX)
    ys = local_grid%local_domain_start_index(Y_INDEX)
    ye = local_grid%local_domain_end_index(Y_INDEX)
    xs = local_grid%local_domain_start_index(X_INDEX)
    xe = local_grid%local_domain_end_index(X_INDEX)
    do j = merge(2, 1, halo_depth == 1), merge(3, 4, halo_depth == 1)
      if (local_grid%neighbours(dim, j) /= my_rank) cycle
      select case (j)
      case (1)
        t = 1
        s = local_grid%local_domain_end_index(dim) - 1
      case (2)
        t = 2
        s = local_grid%local_domain_end_index(dim)
      case (3)
        t = local_grid%local_domain_end_index(dim) + 1
        s = local_grid%local_domain_start_index(dim)
      case default
        t = local_grid%local_domain_end_index(dim) + 2
        s = local_grid%local_domain_start_index(dim) + 1
      end select
      if (dim == X_INDEX) then
        field_data(zs:ze, ys:ye, t) = field_data(zs:ze, ys:ye, s)
      else
        field_data(zs:ze, t, xs:xe) = field_data(zs:ze, s, xs:xe)
      end if
    end do
  end subroutine local_copy_dimension

  subroutine local_copy_corners(my_rank, local_grid, field_data)
    integer, intent(in) :: my_rank
    type(local_grid_type), intent(inout) :: local_grid
    real(kind=DEFAULT_PRECISION), dimension(:,:,:), intent(inout) :: field_data

    integer :: j, ys, xs, yt, xt, zs, ze

    zs = local_grid%local_domain_start_index(Z_INDEX)
    ze = local_grid%local_domain_end_index(Z_INDEX)
    do j = 1, size(local_grid%corner_neighbours, 1)
      if (local_grid%corner_neighbours(j, 1) /= my_rank) cycle
      ! Lower corners take the 2x2 block ending at end, upper ones the block from start.
      if (j <= 2) then
        ys = local_grid%local_domain_end_index(Y_INDEX) - 1
        yt = 1
      else
        ys = local_grid%local_domain_start_index(Y_INDEX)
        yt = local_grid%local_domain_end_index(Y_INDEX) + 1
      end if
      if (j == 1 .or. j == 3) then
        xs = local_grid%local_domain_end_index(X_INDEX) - 1
        xt = 1
      else
        xs = local_grid%local_domain_start_index(X_INDEX)
        xt = local_grid%local_domain_end_index(X_INDEX) + 1
      end if
      field_data(zs:ze, yt:yt+1, xt:xt+1) = field_data(zs:ze, ys:ys+1, xs:xs+1)
    end do
  end subroutine local_copy_corners

  ! ------------------------------------------------------------ private: MONC's geometry

  !> Distinct neighbours (faces in slot order, then corners), their pages and sizes, as
  !! MONC's module describes them (components read number_distinct_neighbours and
  !! fields_per_cell; callbacks read pid and the page counts).
  subroutine describe_neighbours(current_state, hs)
    type(model_state_type), intent(inout) :: current_state
    type(halo_communication_type), intent(inout) :: hs

    integer :: pids(16), dims(16), n, i, j, k, me, hstart, hend, face


    me = current_state%parallel%my_rank
    associate (g => current_state%local_grid)
      n = 0
      do i = 2, 3
        do j = 1, 4
          call add_pid(g%neighbours(i, j), i)
        end do
      end do
      if (hs%involve_corners) then
        do i = 1, size(g%corner_neighbours, 2)
          do j = 1, size(g%corner_neighbours, 1)
            call add_pid(g%corner_neighbours(j, i), 0)
          end do
        end do
      end if
      hs%number_distinct_neighbours = n
      if (n == 0) return
      allocate(hs%halo_swap_neighbours(n))
      do k = 1, n
        hs%halo_swap_neighbours(k)%pid = pids(k)
        hs%halo_swap_neighbours(k)%dimension = dims(k)
        hs%halo_swap_neighbours(k)%halo_pages = 0
        hs%halo_swap_neighbours(k)%halo_corners = 0
      end do
      hstart = merge(2, 1, hs%halo_depth == 1)
      hend = merge(3, 4, hs%halo_depth == 1)
      do i = 2, 3
        do j = hstart, hend
          k = find_pid(g%neighbours(i, j))
          if (k > 0) hs%halo_swap_neighbours(k)%halo_pages = &
               hs%halo_swap_neighbours(k)%halo_pages + hs%fields_per_cell
        end do
      end do
      if (hs%involve_corners) then
        ! Both columns count (MONC's sizing: corner messages carry twice the pages used).
        do i = 1, size(g%corner_neighbours, 2)
          do j = 1, size(g%corner_neighbours, 1)
            k = find_pid(g%corner_neighbours(j, i))
            if (k > 0) hs%halo_swap_neighbours(k)%halo_corners = &
                 hs%halo_swap_neighbours(k)%halo_corners + hs%fields_per_cell
          end do
        end do
      end if
      do k = 1, n
        associate (nd => hs%halo_swap_neighbours(k))
          face = 0
          if (nd%halo_pages > 0) then
            if (nd%dimension == 0) call fatal("init_halo_communication", "neighbour " // &
                 itoa(nd%pid) // " has face pages but was first seen as a corner")
            face = g%size(Z_INDEX) * merge(g%size(Y_INDEX), g%size(X_INDEX), &
                 nd%dimension == X_INDEX) * nd%halo_pages
          end if
          nd%recv_size = face
          nd%send_size = face
          nd%recv_corner_size = 0
          if (hs%involve_corners .and. nd%halo_corners > 0) &
               nd%recv_corner_size = g%size(Z_INDEX) * 4 * nd%halo_corners
          nd%send_corner_size = nd%recv_corner_size
        end associate
      end do
    end associate
  contains
    subroutine add_pid(pid, d)
      integer, intent(in) :: pid, d
      if (pid == me) return
      if (any(pids(1:n) == pid)) return
      n = n + 1
      pids(n) = pid
      dims(n) = d
    end subroutine add_pid
    integer function find_pid(pid)
      integer, intent(in) :: pid
      integer :: q
      find_pid = -1
      if (pid == me) return
      do q = 1, n
        if (pids(q) == pid) then
          find_pid = q
          return
        end if
      end do
    end function find_pid
  end subroutine describe_neighbours

  !> MONC's cell_match: which receive slot fills which halo plane. When the lower and upper
  !! neighbour of a dimension are one rank its two messages arrive the other way round.
  subroutine generate_cell_match(g, halo_depth, cell_match)
    type(local_grid_type), intent(in) :: g
    integer, intent(in) :: halo_depth
    integer, intent(out) :: cell_match(3,4)

    logical :: same(3)
    integer :: i, j

    same = .true.
    do i = 2, 3
      do j = 2, g%halo_size(Y_INDEX) * 2
        if (g%neighbours(i, j) /= g%neighbours(i, 1)) same(i) = .false.
      end do
    end do
    cell_match = 0
    do i = 2, 3
      if (halo_depth == 1) then
        cell_match(i, 1) = 1
        cell_match(i, 2) = merge(3, 2, same(i))
        cell_match(i, 3) = merge(2, 3, same(i))
        cell_match(i, 4) = 4
      else
        do j = 1, halo_depth
          cell_match(i, j) = merge(j + halo_depth, j, same(i))
          cell_match(i, j + halo_depth) = merge(j, j + halo_depth, same(i))
        end do
      end if
    end do
  end subroutine generate_cell_match

  !> Builds the haloswap plan for a state and the tables its hooks use.
  subroutine setup_context(current_state, hs, c)
    type(model_state_type), intent(inout) :: current_state
    type(halo_communication_type), intent(inout) :: hs
    type(monc_haloswap_ctx), pointer, intent(inout) :: c

    integer :: i, j, k, py, px, cur(16), ierr, lmax(2), lsend(2), bad, badall, coords(2)
    integer :: hstart, hend, expect, dy, dx
    character(len=32) :: env
    character(len=200) :: why
    integer :: envlen, envstat
    type(haloswap_f08_comm) :: comm

    associate (g => current_state%local_grid, par => current_state%parallel)
      c%depth = hs%halo_depth
      c%corners = hs%involve_corners
      c%fields = hs%fields_per_cell
      c%nz = g%size(Z_INDEX)
      c%lsize = g%size
      c%my_rank = par%my_rank
      c%nneigh = hs%number_distinct_neighbours
      c%dstart = g%local_domain_start_index
      c%dend = g%local_domain_end_index
      c%nbr(2:3, 1:4) = g%neighbours(2:3, 1:4)
      if (c%corners) c%cnbr(1:4) = g%corner_neighbours(1:4, 1)
      do i = 2, 3
        do j = 1, 4
          c%loc(i, j) = pid_location(hs, c%nbr(i, j))
        end do
      end do
      do j = 1, 4
        c%cloc(j) = pid_location(hs, c%cnbr(j))
      end do
      ! MONC's cursors: one pass over the face slots in its loop order (the same for the
      ! send and the receive loop), corners 1..4 when sending and 4..1 when receiving.
      hstart = merge(2, 1, c%depth == 1)
      hend = merge(3, 4, c%depth == 1)
      cur = 1
      do i = 2, 3
        do j = hstart, hend
          if (c%loc(i, j) < 1) cycle
          c%page0(i, j) = cur(c%loc(i, j))
          cur(c%loc(i, j)) = cur(c%loc(i, j)) + c%fields
          c%target(i, j) = target_index(hs%cell_match, i, j, c%dend(i))
        end do
      end do
      if (c%corners) then
        cur = 1
        do j = 1, 4
          if (c%cloc(j) < 1) cycle
          c%csend0(j) = cur(c%cloc(j))
          cur(c%cloc(j)) = cur(c%cloc(j)) + c%fields
        end do
        cur = 1
        do j = 4, 1, -1
          if (c%cloc(j) < 1) cycle
          c%crecv0(j) = cur(c%cloc(j))
          cur(c%cloc(j)) = cur(c%cloc(j)) + c%fields
        end do
      end if

      call get_environment_variable("HALOSWAP_MONC_RECV_COPY", env, envlen, envstat)
      c%recv_copy = envstat == 0 .and. envlen > 0 .and. env(1:1) /= '0'
      c%stats = haloswap_dropin_stats_wanted("MONC")
      if (c%stats) call stats_register(c)

      py = par%dim_sizes(Y_INDEX)
      px = par%dim_sizes(X_INDEX)
      if (py * px /= par%processes) call fatal("init_halo_communication", &
           "parallel%dim_sizes gives " // itoa(py) // " x " // itoa(px) // " ranks but " // &
           "parallel%processes = " // itoa(par%processes))
      if (py * px == 1) return   ! every neighbour is this rank: local copies only

      ! Corners at depth 1 still move 2x2 blocks: the plan then runs at depth 2.
      c%plan_depth = merge(2, c%depth, c%corners)
      lsend = [g%size(Y_INDEX), g%size(X_INDEX)]
      call mpi_allreduce(lsend, lmax, 2, MPI_INTEGER, MPI_MAX, par%neighbour_comm, ierr)
      c%vext = max(lmax, 2 * c%plan_depth + 1)
      comm%MPI_VAL = par%neighbour_comm
      call haloswap_decomposition_create(c%decomp, comm, [py * c%vext(1), px * c%vext(2), &
           c%fields * c%nz], ierr, procs=[py, px, 1], periodic=[1, 1, 0])
      call check(ierr, "init_halo_communication")

      ! haloswap's grid must put every rank where MONC's decomposition does.
      coords = [haloswap_coord(c%decomp, 1), haloswap_coord(c%decomp, 2)]
      bad = 0
      why = ''
      do j = 1, 2 * g%halo_size(Y_INDEX)
        dy = merge(-1, 1, j <= g%halo_size(Y_INDEX))
        expect = grid_rank(coords(1) + dy, coords(2))
        if (g%neighbours(Y_INDEX, j) /= expect) then
          bad = 1
          why = "neighbours(Y," // itoa(j) // ") = " // itoa(g%neighbours(Y_INDEX, j)) // &
               " but the periodic " // itoa(py) // "x" // itoa(px) // " grid has " // itoa(expect)
        end if
        expect = grid_rank(coords(1), coords(2) + dy)
        if (g%neighbours(X_INDEX, j) /= expect) then
          bad = 1
          why = "neighbours(X," // itoa(j) // ") = " // itoa(g%neighbours(X_INDEX, j)) // &
               " but the periodic " // itoa(py) // "x" // itoa(px) // " grid has " // itoa(expect)
        end if
      end do
      if (c%corners) then
        do j = 1, 4
          dy = merge(-1, 1, j <= 2)
          dx = merge(-1, 1, j == 1 .or. j == 3)
          expect = grid_rank(coords(1) + dy, coords(2) + dx)
          if (c%cnbr(j) /= expect) then
            bad = 1
            why = "corner_neighbours(" // itoa(j) // ",1) = " // itoa(c%cnbr(j)) // &
                 " but the periodic grid has " // itoa(expect)
          end if
        end do
      end if
      call mpi_allreduce(bad, badall, 1, MPI_INTEGER, MPI_MAX, par%neighbour_comm, ierr)
      if (badall /= 0) then
        if (bad /= 0) call fatal("init_halo_communication", "rank " // itoa(par%my_rank) // &
             ": " // trim(why))
        call fatal("init_halo_communication", "another rank's neighbours do not match " // &
             "the process grid")
      end if

      call haloswap_hooks_init(c%plan, c%decomp, merge(HALOSWAP_FLOAT64, HALOSWAP_FLOAT32, &
           storage_size(1.0_DEFAULT_PRECISION) == 64), [c%plan_depth, c%plan_depth, 0], &
           [c%plan_depth, c%plan_depth, 0], c%corners, pack_hook, unpack_hook, c_loc(c), ierr)
      call check(ierr, "init_halo_communication")
      if (haloswap_plan_staged(c%plan)) call fatal("init_halo_communication", "the staged " // &
           "exchange (option staged=1, from HALOSWAP_OPTIONS or HALOSWAP_TRANSPORT) cannot " // &
           "run MONC's callbacks, which take MONC's face and corner pages, not the stages' " // &
           "widened boxes; unset it (every other option and transport works)")
      if (c%recv_copy) then
        k = c%plan_depth * maxval(c%vext) * c%fields * c%nz
        allocate(c%copybuf(max(k, 4 * c%fields * c%nz)))
      end if
    end associate
  contains
    integer function grid_rank(cy, cx)
      integer, intent(in) :: cy, cx
      grid_rank = modulo(cy, py) * px + modulo(cx, px)
    end function grid_rank
  end subroutine setup_context

  integer function pid_location(hs, pid)
    type(halo_communication_type), intent(in) :: hs
    integer, intent(in) :: pid
    integer :: k
    pid_location = -1
    do k = 1, hs%number_distinct_neighbours
      if (hs%halo_swap_neighbours(k)%pid == pid) then
        pid_location = k
        return
      end if
    end do
  end function pid_location

  integer function target_index(cell_match, i, j, dend)
    integer, intent(in) :: cell_match(3,4), i, j, dend
    if (j == cell_match(i, 1)) then
      target_index = 1
    else if (j == cell_match(i, 2)) then
      target_index = 2
    else if (j == cell_match(i, 3)) then
      target_index = dend + 1
    else
      target_index = dend + 2
    end if
  end function target_index

  ! ------------------------------------------------------------ private: haloswap hooks

  !> Which side of the local box a region lies on along one virtual axis: -1 lower, +1
  !! upper, 0 the whole interior. halo: region is a halo box (receive) rather than the
  !! interior strip (send). Returns 99 for a shape this module never asks for.
  integer function side_of(lo, cnt, n, d, halo)
    integer, intent(in) :: lo, cnt, n, d
    logical, intent(in) :: halo
    side_of = 99
    if (lo == 0 .and. cnt == n) then
      side_of = 0
    else if (cnt == d) then
      if (halo) then
        if (lo == -d) side_of = -1
        if (lo == n) side_of = 1
      else
        if (lo == 0) side_of = -1
        if (lo == n - d) side_of = 1
      end if
    end if
  end function side_of

  !> What both hooks do first: the context, MONC's state and halo state of the call, and
  !! the region's side along y and x (sy, sx). False: nothing to do (no MONC swap running:
  !! a transport that times trial swaps while the plan is created, auto, runs the hooks
  !! outside one) or a region this module never asks for (recorded for check_hooks).
  logical function hook_begin(ctxp, region, halo, c, st, hs, sy, sx)
    type(c_ptr), intent(in) :: ctxp, region
    logical, intent(in) :: halo
    type(monc_haloswap_ctx), pointer, intent(out) :: c
    type(model_state_type), pointer, intent(out) :: st
    type(halo_communication_type), pointer, intent(out) :: hs
    integer, intent(out) :: sy, sx
    integer :: field, lo(3), cnt(3)

    hook_begin = .false.
    call c_f_pointer(ctxp, c)
    if (.not. c_associated(c%state)) return
    call c_f_pointer(c%state, st)
    call c_f_pointer(c%hstate, hs)
    call haloswap_hook_region(region, field, lo, cnt)
    sy = side_of(lo(1), cnt(1), c%vext(1), c%plan_depth, halo)
    sx = side_of(lo(2), cnt(2), c%vext(2), c%plan_depth, halo)
    if (sy == 99 .or. sx == 99 .or. (sy == 0 .and. sx == 0)) then
      call hook_failed(c, trim(merge("unpack hook", "pack hook  ", halo)) // &
           " got an unexpected region", region)
      return
    end if
    hook_begin = .true.
  end function hook_begin

  !> haloswap asks for the send data of one direction: MONC's copy callbacks write it
  !! straight into buf (the transport's send memory).
  subroutine pack_hook(ctxp, region, buf) bind(c)
    type(c_ptr), value :: ctxp, region, buf

    type(monc_haloswap_ctx), pointer :: c
    type(model_state_type), pointer :: st
    type(halo_communication_type), pointer :: hs
    real(kind=DEFAULT_PRECISION), pointer :: flat(:)
    integer :: sy, sx, dim, side, j, k, loc, n, lb, src, xs, ys
    integer, allocatable :: current_page(:)

    if (.not. hook_begin(ctxp, region, .false., c, st, hs, sy, sx)) return
    allocate(current_page(max(c%nneigh, 1)))
    current_page = 1
    if (sy /= 0 .and. sx /= 0) then
      if (.not. associated(c%cpack_cb)) return
      j = corner_of(sy, sx)
      loc = c%cloc(j)
      if (loc < 1) return                 ! this rank is its own corner neighbour
      xs = merge(c%dstart(X_INDEX) + 1, c%dend(X_INDEX) - 1, j == 1 .or. j == 3)
      ys = merge(c%dstart(Y_INDEX) + 1, c%dend(Y_INDEX) - 1, j == 1 .or. j == 2)
      lb = c%csend0(j)
      flat => pages_from(buf, lb, c%fields, c%nz * 4)
      hs%halo_swap_neighbours(loc)%send_corner_buffer(1:c%nz, 1:4, 1:lb + c%fields - 1) => flat
      current_page(loc) = lb
      call c%cpack_cb(st, hs%halo_swap_neighbours(loc), j, xs, ys, loc, current_page, c%src)
      nullify(hs%halo_swap_neighbours(loc)%send_corner_buffer)
      return
    end if
    dim = merge(Y_INDEX, X_INDEX, sy /= 0)
    side = merge(sy, sx, sy /= 0)
    n = merge(c%lsize(Y_INDEX), c%lsize(X_INDEX), dim == X_INDEX)
    k = 0
    do j = merge(2, 1, c%depth == 1), merge(3, 4, c%depth == 1)
      if ((j <= 2) .neqv. (side < 0)) cycle
      loc = c%loc(dim, j)
      if (loc < 1) return                 ! self neighbour: MONC's local copy does it
      select case (j)
      case (1)
        src = c%dstart(dim)
      case (2)
        src = c%dstart(dim) + merge(1, 0, c%depth /= 1)
      case (3)
        src = c%dend(dim) - merge(1, 0, c%depth /= 1)
      case default
        src = c%dend(dim)
      end select
      ! Plane k of this direction occupies pages k*F+1..(k+1)*F of buf; the pointer's
      ! bounds make MONC's cursor value address exactly those pages.
      lb = c%page0(dim, j) - k * c%fields
      flat => pages_from(buf, lb, (k + 1) * c%fields, c%nz * n)
      hs%halo_swap_neighbours(loc)%send_halo_buffer(1:c%nz, 1:n, 1:lb + (k + 1) * c%fields - 1) &
           => flat
      current_page(loc) = c%page0(dim, j)
      call c%pack_cb(st, hs%halo_swap_neighbours(loc), dim, src, loc, current_page, c%src)
      nullify(hs%halo_swap_neighbours(loc)%send_halo_buffer)
      k = k + 1
    end do
  end subroutine pack_hook

  !> haloswap hands over the received data of one direction: recv buffers point into buf
  !! (the transport's receive memory) while MONC's callbacks copy it into the halo.
  subroutine unpack_hook(ctxp, region, buf) bind(c)
    type(c_ptr), value :: ctxp, region, buf

    type(monc_haloswap_ctx), pointer :: c
    type(model_state_type), pointer :: st
    type(halo_communication_type), pointer :: hs
    real(kind=DEFAULT_PRECISION), pointer :: flat(:)
    integer :: sy, sx, dim, side, j, loc, n, lb, t, off, xt, yt, m
    integer, allocatable :: current_page(:)
    type(c_ptr) :: mem

    if (.not. hook_begin(ctxp, region, .true., c, st, hs, sy, sx)) return
    if (.not. associated(c%unpack_cb)) then
      call hook_failed(c, "data arrived during initiate_nonblocking_halo_swap", region)
      return
    end if
    allocate(current_page(max(c%nneigh, 1)))
    current_page = 1
    if (sy /= 0 .and. sx /= 0) then
      if (.not. associated(c%cunpack_cb)) return
      j = corner_of(sy, sx)
      loc = c%cloc(j)
      if (loc < 1) return
      xt = merge(2, c%dend(X_INDEX) + 1, j == 1 .or. j == 3)
      yt = merge(2, c%dend(Y_INDEX) + 1, j == 1 .or. j == 2)
      m = c%nz * 4 * c%fields
      lb = c%crecv0(j)
      flat => pages_from(recv_memory(c, buf, m), lb, c%fields, c%nz * 4)
      hs%halo_swap_neighbours(loc)%recv_corner_buffer(1:c%nz, 1:4, 1:lb + c%fields - 1) => flat
      current_page(loc) = lb
      call c%cunpack_cb(st, hs%halo_swap_neighbours(loc), j, xt, yt, loc, current_page, c%src)
      nullify(hs%halo_swap_neighbours(loc)%recv_corner_buffer)
      return
    end if
    dim = merge(Y_INDEX, X_INDEX, sy /= 0)
    side = merge(sy, sx, sy /= 0)
    n = merge(c%lsize(Y_INDEX), c%lsize(X_INDEX), dim == X_INDEX)
    m = c%nz * n * c%fields * c%depth
    mem = c_null_ptr
    do j = merge(2, 1, c%depth == 1), merge(3, 4, c%depth == 1)
      loc = c%loc(dim, j)
      if (loc < 1) cycle
      t = c%target(dim, j)
      ! The neighbour packed its planes nearest-first from its own side: the lower halo
      ! gets its end-1, end; the upper halo its start, start+1.
      if (side < 0) then
        if (t > 2) cycle
        off = t - merge(2, 1, c%depth == 1)
      else
        if (t <= 2) cycle
        off = t - (c%dend(dim) + 1)
      end if
      if (.not. c_associated(mem)) mem = recv_memory(c, buf, m)
      lb = c%page0(dim, j) - off * c%fields
      flat => pages_from(mem, lb, c%depth * c%fields, c%nz * n)
      hs%halo_swap_neighbours(loc)%recv_halo_buffer(1:c%nz, 1:n, 1:lb + c%depth * c%fields - 1) &
           => flat
      current_page(loc) = c%page0(dim, j)
      call c%unpack_cb(st, hs%halo_swap_neighbours(loc), dim, t, loc, current_page, c%src)
      nullify(hs%halo_swap_neighbours(loc)%recv_halo_buffer)
    end do
  end subroutine unpack_hook

  !> The received region: the transport's memory itself, or (measurement switch
  !! HALOSWAP_MONC_RECV_COPY) a copy of it in a separate buffer (the paper's Fig. 4).
  type(c_ptr) function recv_memory(c, buf, m)
    type(monc_haloswap_ctx), intent(inout), target :: c
    type(c_ptr), intent(in) :: buf
    integer, intent(in) :: m
    real(kind=DEFAULT_PRECISION), pointer :: src(:)
    if (c%recv_copy) then
      call c_f_pointer(buf, src, [m])
      c%copybuf(1:m) = src
      recv_memory = c_loc(c%copybuf)
      c%callbacks_copied = c%callbacks_copied + 1
    else
      recv_memory = buf
      c%callbacks_direct = c%callbacks_direct + 1
    end if
  end function recv_memory

  !> A 1-based page array whose page `first` is the start of mem, so that MONC's cursor
  !! values index the pages of this direction (its helpers take assumed-shape arrays, whose
  !! lower bound is always 1). Pages before `first` belong to other directions and are
  !! never addressed by the callbacks; the array is only used while one callback runs.
  function pages_from(mem, first, npages, page_elems) result(flat)
    type(c_ptr), intent(in) :: mem
    integer, intent(in) :: first, npages, page_elems
    real(kind=DEFAULT_PRECISION), pointer :: flat(:)
    integer(c_intptr_t) :: addr
    addr = transfer(mem, addr) - int(first - 1, c_intptr_t) * int(page_elems, c_intptr_t) * &
         int(storage_size(1.0_DEFAULT_PRECISION) / 8, c_intptr_t)
    call c_f_pointer(transfer(addr, mem), flat, [(first - 1 + npages) * page_elems])
  end function pages_from

  integer function corner_of(sy, sx)
    integer, intent(in) :: sy, sx
    corner_of = 1 + merge(2, 0, sy > 0) + merge(1, 0, sx > 0)
  end function corner_of

  subroutine hook_failed(c, what, region)
    type(monc_haloswap_ctx), intent(inout) :: c
    character(len=*), intent(in) :: what
    type(c_ptr), intent(in) :: region
    integer :: field, lo(3), cnt(3)
    call haloswap_hook_region(region, field, lo, cnt)
    c%hook_error = 1
    write(c%hook_msg, '(a, " (lo ", 3i5, ", count ", 3i5, ")")') what, lo, cnt
  end subroutine hook_failed

  subroutine check_hooks(c, where)
    type(monc_haloswap_ctx), intent(inout) :: c
    character(len=*), intent(in) :: where
    if (c%hook_error /= 0) call fatal(where, trim(c%hook_msg))
  end subroutine check_hooks

  subroutine clear_call(c)
    type(monc_haloswap_ctx), intent(inout) :: c
    c%state = c_null_ptr
    c%hstate = c_null_ptr
    c%pack_cb => null()
    c%cpack_cb => null()
    c%unpack_cb => null()
    c%cunpack_cb => null()
    if (allocated(c%src)) deallocate(c%src)
  end subroutine clear_call

  function context_of(hs, where) result(c)
    type(halo_communication_type), intent(in) :: hs
    character(len=*), intent(in) :: where
    type(monc_haloswap_ctx), pointer :: c
    if (.not. hs%initialised .or. .not. c_associated(hs%haloswap_context)) call fatal(where, &
         "halo_swap_state is not initialised (call init_halo_communication first)")
    call c_f_pointer(hs%haloswap_context, c)
  end function context_of

  subroutine stats_register(c)
    type(monc_haloswap_ctx), pointer, intent(in) :: c
    type(ctx_ref), allocatable :: more(:)
    integer :: i, ierr
    if (.not. allocated(live_stats)) then
      allocate(live_stats(8))
      call haloswap_dropin_at_finalize("MONC", ierr, report=print_live_stats)
      call check(ierr, "init_halo_communication")
    end if
    do i = 1, size(live_stats)
      if (.not. associated(live_stats(i)%c)) then
        live_stats(i)%c => c
        return
      end if
    end do
    allocate(more(2 * size(live_stats)))
    more(1:size(live_stats)) = live_stats
    more(size(live_stats) + 1)%c => c
    call move_alloc(more, live_stats)
  end subroutine stats_register

  subroutine stats_forget(c)
    type(monc_haloswap_ctx), pointer, intent(in) :: c
    integer :: i
    if (.not. allocated(live_stats)) return
    do i = 1, size(live_stats)
      if (associated(live_stats(i)%c, c)) live_stats(i)%c => null()
    end do
  end subroutine stats_forget

  !> At MPI_Finalize: the statistics of every state never finalised.
  subroutine print_live_stats()
    integer :: i
    if (.not. allocated(live_stats)) return
    do i = 1, size(live_stats)
      if (associated(live_stats(i)%c)) then
        call print_stats(live_stats(i)%c)
        live_stats(i)%c => null()
      end if
    end do
  end subroutine print_live_stats

  subroutine print_stats(c)
    type(monc_haloswap_ctx), intent(in) :: c
    character(len=64) :: tname
    if (c_associated(c%plan%plan)) then
      tname = haloswap_dropin_transport(c%plan)
    else
      tname = "(local copies only)"
    end if
    write(output_unit, '("halo_communication_mod: rank ", i0, " state fields=", i0, " depth=", &
         &i0, " corners=", l1, " transport=", a, " swaps=", i0, " initiate_s=", es10.3, &
         &" complete_s=", es10.3, " recv_callbacks_direct=", i0, " recv_callbacks_copied=", i0)') &
         c%my_rank, c%fields, c%depth, c%corners, trim(tname), c%swaps, c%t_initiate, &
         c%t_complete, c%callbacks_direct, c%callbacks_copied
  end subroutine print_stats

  subroutine check(rc, where)
    integer, intent(in) :: rc
    character(len=*), intent(in) :: where
    call haloswap_dropin_check(rc, "halo_communication_mod: " // where, monc_abort)
  end subroutine check

  !> MONC's LOG_ERROR: message, then the run stops.
  subroutine fatal(where, msg)
    character(len=*), intent(in) :: where, msg
    call haloswap_dropin_fail("halo_communication_mod: " // where, msg, monc_abort)
  end subroutine fatal

  ! MONC's abort (its LOG_ERROR ends in MPI_Abort); haloswap_dropin_fail wrote the message.
  subroutine monc_abort(msg)
    character(len=*), intent(in) :: msg
    integer :: ierr
    call mpi_abort(MPI_COMM_WORLD, 1, ierr)
  end subroutine monc_abort

  subroutine warn(where, msg)
    character(len=*), intent(in) :: where, msg
    write(error_unit, '(a)') "halo_communication_mod: warning: " // where // ": " // msg
  end subroutine warn

end module halo_communication_mod
