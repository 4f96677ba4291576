!> MONC-style halo-swap policies for the drop-in tests, written like MONC's components use the
!! halo API: the prognostic swap (haloswapper: u, zu, v, zv, w, zw, th, zth, q(i), zq(i) pages
!! in that order), the one-field swaps of smagorinsky (vis/diff coefficients, with corners)
!! and the solver's swap of p or of a source_data array. Every callback records its
!! arguments so the test can compare them with MONC's loops.
module monc_policies
  use datadefn_mod, only : DEFAULT_PRECISION
  use grids_mod, only : X_INDEX, Y_INDEX, Z_INDEX
  use state_mod, only : model_state_type
  use prognostics_mod, only : prognostic_field_type
  use communication_types_mod, only : neighbour_description_type, field_data_wrapper_type
  use halo_communication_mod, only : copy_buffer_to_field, copy_field_to_buffer, &
       copy_corner_to_buffer, copy_buffer_to_corner, perform_local_data_copy_for_field
  implicit none
  private

  !> Call log: kind (1 pack, 2 unpack, 3 corner pack, 4 corner unpack), dim or corner,
  !! index (source/target; corners: x*1000+y), pid_location, current_page on entry.
  integer, public :: ncalls = 0
  integer, public :: calls(5, 4096)
  logical, public :: record = .false.
  integer, public :: callback_errors = 0

  public prognostic_fields, prog_pack, prog_unpack, prog_corner_pack, prog_corner_unpack, &
       prog_local_copy, vis_pack, vis_unpack, vis_corner_pack, vis_corner_unpack, &
       vis_local_copy, diff_pack, diff_unpack, diff_corner_pack, diff_corner_unpack, &
       diff_local_copy, p_pack, p_unpack, p_local_copy, src_pack, src_unpack, src_local_copy
contains

  subroutine log_call(kind, d, idx, loc, page)
    integer, intent(in) :: kind, d, idx, loc, page
    if (.not. record) return
    ncalls = ncalls + 1
    if (ncalls > size(calls, 2)) then
      callback_errors = callback_errors + 1
      return
    end if
    calls(:, ncalls) = [kind, d, idx, loc, page]
  end subroutine log_call

  integer function prognostic_fields(current_state)
    type(model_state_type), intent(inout) :: current_state
    prognostic_fields = 8 + 2 * current_state%number_q_fields
  end function prognostic_fields

  !> Field k of the prognostic swap in MONC's page order (u, zu, v, zv, w, zw, th, zth, then
  !! q(i), zq(i)) through one of the MONC helpers (op 1 pack, 2 unpack, 3 corner pack,
  !! 4 corner unpack, 5 local copy).
  subroutine prog_op(s, k, op, nd, a, b, c, page)
    type(model_state_type), intent(inout) :: s
    integer, intent(in) :: k, op, a, b, c, page
    type(neighbour_description_type), intent(inout) :: nd
    select case (k)
    case (1); call field_op(s, s%u%data, op, nd, a, b, c, page)
    case (2); call field_op(s, s%zu%data, op, nd, a, b, c, page)
    case (3); call field_op(s, s%v%data, op, nd, a, b, c, page)
    case (4); call field_op(s, s%zv%data, op, nd, a, b, c, page)
    case (5); call field_op(s, s%w%data, op, nd, a, b, c, page)
    case (6); call field_op(s, s%zw%data, op, nd, a, b, c, page)
    case (7); call field_op(s, s%th%data, op, nd, a, b, c, page)
    case (8); call field_op(s, s%zth%data, op, nd, a, b, c, page)
    case default
      if (mod(k - 9, 2) == 0) then
        call field_op(s, s%q((k - 9) / 2 + 1)%data, op, nd, a, b, c, page)
      else
        call field_op(s, s%zq((k - 9) / 2 + 1)%data, op, nd, a, b, c, page)
      end if
    end select
  end subroutine prog_op

  !> Every prognostic field through op, one page each from current_page(loc) on (loc = 0:
  !> the local copy, no pages).
  subroutine prog_all(s, op, nd, a, b, c, loc, current_page)
    type(model_state_type), intent(inout) :: s
    integer, intent(in) :: op, a, b, c, loc
    type(neighbour_description_type), intent(inout) :: nd
    integer, intent(inout) :: current_page(:)
    integer :: k
    do k = 1, prognostic_fields(s)
      if (loc == 0) then
        call prog_op(s, k, op, nd, a, b, c, 0)
      else
        call prog_op(s, k, op, nd, a, b, c, current_page(loc))
        current_page(loc) = current_page(loc) + 1
      end if
    end do
  end subroutine prog_all

  subroutine field_op(s, f, op, nd, a, b, c, page)
    type(model_state_type), intent(inout) :: s
    real(kind=DEFAULT_PRECISION), intent(inout) :: f(:,:,:)
    integer, intent(in) :: op, a, b, c, page
    type(neighbour_description_type), intent(inout) :: nd
    select case (op)
    case (1); call copy_field_to_buffer(s%local_grid, nd%send_halo_buffer, f, a, b, page)
    case (2); call copy_buffer_to_field(s%local_grid, nd%recv_halo_buffer, f, a, b, page)
    case (3); call copy_corner_to_buffer(s%local_grid, nd%send_corner_buffer, f, a, b, c, page)
    case (4); call copy_buffer_to_corner(s%local_grid, nd%recv_corner_buffer, f, a, b, c, page)
    case default
      call perform_local_data_copy_for_field(f, s%local_grid, s%parallel%my_rank, a, b == 1)
    end select
  end subroutine field_op

  subroutine prog_pack(current_state, neighbour_description, dim, source_index, &
       pid_location, current_page, source_data)
    type(model_state_type), intent(inout) :: current_state
    integer, intent(in) :: dim, pid_location, source_index
    integer, intent(inout) :: current_page(:)
    type(neighbour_description_type), intent(inout) :: neighbour_description
    type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data
    call log_call(1, dim, source_index, pid_location, current_page(pid_location))
    if (present(source_data)) callback_errors = callback_errors + 1
    call prog_all(current_state, 1, neighbour_description, dim, source_index, 0, pid_location, &
         current_page)
  end subroutine prog_pack

  subroutine prog_unpack(current_state, neighbour_description, dim, target_index, &
       neighbour_location, current_page, source_data)
    type(model_state_type), intent(inout) :: current_state
    integer, intent(in) :: dim, target_index, neighbour_location
    integer, intent(inout) :: current_page(:)
    type(neighbour_description_type), intent(inout) :: neighbour_description
    type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data
    call log_call(2, dim, target_index, neighbour_location, current_page(neighbour_location))
    call prog_all(current_state, 2, neighbour_description, dim, target_index, 0, &
         neighbour_location, current_page)
  end subroutine prog_unpack

  subroutine prog_corner_pack(current_state, neighbour_description, dim, x_source_index, &
       y_source_index, pid_location, current_page, source_data)
    type(model_state_type), intent(inout) :: current_state
    integer, intent(in) :: dim, pid_location, x_source_index, y_source_index
    integer, intent(inout) :: current_page(:)
    type(neighbour_description_type), intent(inout) :: neighbour_description
    type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data
    call log_call(3, dim, x_source_index * 1000 + y_source_index, pid_location, &
         current_page(pid_location))
    call prog_all(current_state, 3, neighbour_description, dim, x_source_index, y_source_index, &
         pid_location, current_page)
  end subroutine prog_corner_pack

  subroutine prog_corner_unpack(current_state, neighbour_description, corner_loc, &
       x_target_index, y_target_index, neighbour_location, current_page, source_data)
    type(model_state_type), intent(inout) :: current_state
    integer, intent(in) :: corner_loc, x_target_index, y_target_index, neighbour_location
    integer, intent(inout) :: current_page(:)
    type(neighbour_description_type), intent(inout) :: neighbour_description
    type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data
    call log_call(4, corner_loc, x_target_index * 1000 + y_target_index, neighbour_location, &
         current_page(neighbour_location))
    call prog_all(current_state, 4, neighbour_description, corner_loc, x_target_index, &
         y_target_index, neighbour_location, current_page)
  end subroutine prog_corner_unpack

  subroutine prog_local_copy(current_state, halo_depth, involve_corners, source_data)
    type(model_state_type), intent(inout) :: current_state
    integer, intent(in) :: halo_depth
    logical, intent(in) :: involve_corners
    type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data
    type(neighbour_description_type) :: unused
    integer :: no_pages(1)
    call prog_all(current_state, 5, unused, halo_depth, merge(1, 0, involve_corners), 0, 0, &
         no_pages)
  end subroutine prog_local_copy

  ! ---------------------------------------------------------------- one-field policies

  !> One field through op (field_op), one page from page(loc).
  subroutine one_op(s, nd, field, op, a, b, c, loc, page)
    type(model_state_type), intent(inout) :: s
    type(neighbour_description_type), intent(inout) :: nd
    real(kind=DEFAULT_PRECISION), intent(inout) :: field(:,:,:)
    integer, intent(in) :: op, a, b, c, loc
    integer, intent(inout) :: page(:)
    call field_op(s, field, op, nd, a, b, c, page(loc))
    page(loc) = page(loc) + 1
  end subroutine one_op

#define ONE_FIELD_POLICY(NAME, FIELD) \
  subroutine NAME/**/_pack(current_state, neighbour_description, dim, source_index, pid_location, current_page, source_data); \
    type(model_state_type), intent(inout) :: current_state; \
    integer, intent(in) :: dim, pid_location, source_index; \
    integer, intent(inout) :: current_page(:); \
    type(neighbour_description_type), intent(inout) :: neighbour_description; \
    type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data; \
    call one_op(current_state, neighbour_description, FIELD, 1, dim, source_index, 0, pid_location, current_page); \
  end subroutine; \
  subroutine NAME/**/_unpack(current_state, neighbour_description, dim, target_index, neighbour_location, current_page, source_data); \
    type(model_state_type), intent(inout) :: current_state; \
    integer, intent(in) :: dim, target_index, neighbour_location; \
    integer, intent(inout) :: current_page(:); \
    type(neighbour_description_type), intent(inout) :: neighbour_description; \
    type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data; \
    call one_op(current_state, neighbour_description, FIELD, 2, dim, target_index, 0, neighbour_location, current_page); \
  end subroutine; \
  subroutine NAME/**/_local_copy(current_state, halo_depth, involve_corners, source_data); \
    type(model_state_type), intent(inout) :: current_state; \
    integer, intent(in) :: halo_depth; \
    logical, intent(in) :: involve_corners; \
    type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data; \
    type(neighbour_description_type) :: unused; \
    call field_op(current_state, FIELD, 5, unused, halo_depth, merge(1, 0, involve_corners), 0, 0); \
  end subroutine

#define ONE_FIELD_CORNERS(NAME, FIELD) \
  subroutine NAME/**/_corner_pack(current_state, neighbour_description, dim, x_source_index, y_source_index, pid_location, current_page, source_data); \
    type(model_state_type), intent(inout) :: current_state; \
    integer, intent(in) :: dim, pid_location, x_source_index, y_source_index; \
    integer, intent(inout) :: current_page(:); \
    type(neighbour_description_type), intent(inout) :: neighbour_description; \
    type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data; \
    call one_op(current_state, neighbour_description, FIELD, 3, dim, x_source_index, y_source_index, pid_location, current_page); \
  end subroutine; \
  subroutine NAME/**/_corner_unpack(current_state, neighbour_description, corner_loc, x_target_index, y_target_index, neighbour_location, current_page, source_data); \
    type(model_state_type), intent(inout) :: current_state; \
    integer, intent(in) :: corner_loc, x_target_index, y_target_index, neighbour_location; \
    integer, intent(inout) :: current_page(:); \
    type(neighbour_description_type), intent(inout) :: neighbour_description; \
    type(field_data_wrapper_type), dimension(:), intent(in), optional :: source_data; \
    call one_op(current_state, neighbour_description, FIELD, 4, corner_loc, x_target_index, y_target_index, neighbour_location, current_page); \
  end subroutine

  ONE_FIELD_POLICY(vis, current_state%vis_coefficient%data)
  ONE_FIELD_CORNERS(vis, current_state%vis_coefficient%data)
  ONE_FIELD_POLICY(diff, current_state%diff_coefficient%data)
  ONE_FIELD_CORNERS(diff, current_state%diff_coefficient%data)
  ONE_FIELD_POLICY(p, current_state%p%data)
  ONE_FIELD_POLICY(src, source_data(1)%data)
end module monc_policies
