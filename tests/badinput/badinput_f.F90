! Fortran part of the bad-input matrix: wrong arguments through the haloswap module (shape,
! kind, rank, bounds and contiguity of fields and per-swap arrays, state). Every kind is
! checked by test_badinput.c's badinput_check (same status and message on every rank, arrays
! untouched).
subroutine badinput_fortran(fcomm) bind(c, name="badinput_fortran")
  use, intrinsic :: iso_c_binding
  use mpi_f08, only: MPI_Comm, MPI_Comm_rank, MPI_Comm_size
  use haloswap
  implicit none
  integer(c_int), value :: fcomm
  interface
    subroutine c_begin(name) bind(c, name="badinput_begin")
      import :: c_char
      character(kind=c_char), intent(in) :: name(*)
    end subroutine c_begin
    integer(c_int) function c_check(rc, want, untouched, needle) bind(c, name="badinput_check")
      import :: c_int, c_char
      integer(c_int), value :: rc, want, untouched
      character(kind=c_char), intent(in) :: needle(*)
    end function c_check
  end interface
  real(c_double), parameter :: S = -123.25_c_double
  type(MPI_Comm) :: comm
  type(haloswap_decomposition) :: dec, bad
  type(halo_communication_type) :: hs, hs2
  real(c_double), allocatable, target :: a(:,:,:), src(:,:,:), other(:,:,:), wrong(:,:,:), &
       flat(:,:,:), big(:,:,:), a2(:,:)
  real(c_float), allocatable, target :: a32(:,:,:)
  integer :: ierr, nx, ny, rank, nprocs
  integer, parameter :: nz = 3, h = 2

  comm%MPI_VAL = fcomm
  call MPI_Comm_rank(comm, rank)
  call MPI_Comm_size(comm, nprocs)
  call haloswap_decomposition_create(dec, comm, [12, 10, nz], ierr)
  if (ierr /= HALOSWAP_OK) error stop "badinput_fortran: decomposition"
  nx = haloswap_local_extent(dec, HALOSWAP_X)
  ny = haloswap_local_extent(dec, HALOSWAP_Y)
  allocate(a(nz, ny + 2 * h, nx + 2 * h), src(nz, ny + 2 * h, nx + 2 * h), &
       other(nz, ny + 2 * h, nx + 2 * h), wrong(nz, ny + 2 * h - 1, nx + 2 * h), &
       flat(nz, nx + 2 * h, ny + 2 * h), big(nz, 2 * (ny + 2 * h), nx + 2 * h), &
       a2(ny + 2 * h, nx + 2 * h), a32(nz, ny + 2 * h, nx + 2 * h))
  call fill()

  call begin("Fortran: decomposition with 4 global extents")
  call haloswap_decomposition_create(bad, comm, [4, 4, 4, 4], ierr)
  call check(ierr, HALOSWAP_ERR_ARG, "ndims = 4")

  call begin("Fortran: field array not contiguous")
  call init_halo_communication(hs2, dec, [haloswap_field(big(:, 1::2, :))], h, .true., ierr)
  call check(ierr, HALOSWAP_ERR_ARG, "fields(1) is not contiguous")

  call begin("Fortran: field shape is not interior + 2*halo")
  call init_halo_communication(hs2, dec, [haloswap_field(wrong)], h, .true., ierr)
  call check(ierr, HALOSWAP_ERR_ARG, "the extent must be interior + 2*halo")

  call begin("Fortran: 2-D field on a 3-D decomposition")
  call init_halo_communication(hs2, dec, [haloswap_field(a2)], h, .true., ierr)
  call check(ierr, HALOSWAP_ERR_ARG, "fields(1) has extent 1 on axis 3")

  if (nprocs > 1) then
    call begin("one rank only (Fortran): field shape wrong on the last rank")
    if (rank == nprocs - 1) then
      call init_halo_communication(hs2, dec, [haloswap_field(wrong)], h, .true., ierr)
    else
      call init_halo_communication(hs2, dec, [haloswap_field(a)], h, .true., ierr)
    end if
    call check(ierr, HALOSWAP_ERR_ARG, "the extent must be interior + 2*halo")
  end if

  ! A mistake in a swap fails the halo state (its later swaps pass the error on), so every
  ! case below starts from a fresh one.
  call begin("Fortran: complete without initiate")
  call fresh()
  call complete_nonblocking_halo_swap(hs, ierr)
  call check(ierr, HALOSWAP_ERR_STATE, "no swap was started")

  call bad_source("of the wrong shape", [haloswap_field(wrong)], "source_data(1) has shape")
  call bad_source("of the wrong bounds (same size, x and y extents swapped)", &
       [haloswap_field(flat)], "was registered with shape")
  call bad_source("of the wrong kind", [haloswap_field(a32)], &
       "is real(c_float) but field 1 was registered as real(c_double)")
  call bad_source("of the wrong rank", [haloswap_field(a2)], &
       "has rank 2 but field 1 was registered with rank 3")
  call bad_source("not contiguous", [haloswap_field(big(:, 1::2, :))], &
       "source_data(1) is not contiguous")
  call bad_source("with the wrong number of fields", [haloswap_field(src), haloswap_field(other)], &
       "source_data has 2 fields but the plan has 1")

  ! One rank wrong in a swap while the others swap correctly (issue 28): every rank returns
  ! that rank's error in this very swap, and none is left waiting (tests/faults for C).
  if (nprocs > 1) then
    call begin("one rank only (Fortran): source_data of the wrong shape on the last rank")
    call fresh()
    if (rank == nprocs - 1) then
      call blocking_halo_swap(hs, ierr, source_data=[haloswap_field(wrong)])
    else
      call blocking_halo_swap(hs, ierr, source_data=[haloswap_field(src)])
    end if
    call check_only(ierr, HALOSWAP_ERR_ARG, "source_data(1) has shape", &
         all(wrong == S) .and. all(a == S))
    call begin("one rank only (Fortran): source_data of the wrong kind on the first rank")
    call fresh()
    if (rank == 0) then
      call initiate_nonblocking_halo_swap(hs, ierr, source_data=[haloswap_field(a32)])
    else
      call initiate_nonblocking_halo_swap(hs, ierr, source_data=[haloswap_field(src)])
      if (ierr == HALOSWAP_OK) call complete_nonblocking_halo_swap(hs, ierr, &
           source_data=[haloswap_field(src)])
    end if
    call check_only(ierr, HALOSWAP_ERR_ARG, "is real(c_float)", all(a32 == real(S, c_float)) &
         .and. all(a == S))
    src = S
  end if

  ! complete with a wrong array after a valid initiate: refused; the swap completes with the
  ! arrays initiate had (no neighbour waits) and the state fails (this segfaulted inside
  ! complete before the checks).
  call begin("Fortran: complete with source_data of the wrong shape")
  call initiate_then_complete([haloswap_field(wrong)])
  call check_only(ierr, HALOSWAP_ERR_ARG, "source_data(1) has shape", &
       all(wrong == S) .and. all(a == S))
  call begin("Fortran: complete with a different array than initiate")
  call initiate_then_complete([haloswap_field(other)])
  call check_only(ierr, HALOSWAP_ERR_ARG, "is not the array given to initiate", &
       all(other == S) .and. all(a == S))
  call begin("Fortran: complete without the source_data initiate had")
  call initiate_then_complete()
  call check_only(ierr, HALOSWAP_ERR_ARG, "give complete the same source_data", all(a == S))

  call finalise_halo_communication(hs, ierr)
  call haloswap_decomposition_free(dec, ierr)

contains

  ! A new halo state for the next case (the last one freed).
  subroutine fresh()
    integer :: e
    if (c_associated(hs%plan)) call finalise_halo_communication(hs, e)
    call init_halo_communication(hs, dec, [haloswap_field(a)], h, .true., e)
    if (e /= HALOSWAP_OK) error stop "badinput_fortran: valid plan refused"
  end subroutine fresh

  ! A fresh halo state initiated with the per-swap arrays fields: refused with needle.
  subroutine bad_source(what, fields, needle)
    character(len=*), intent(in) :: what, needle
    type(haloswap_field), intent(in) :: fields(:)
    call begin("Fortran: source_data " // what)
    call fresh()
    call initiate_nonblocking_halo_swap(hs, ierr, source_data=fields)
    call check(ierr, HALOSWAP_ERR_ARG, needle)
  end subroutine bad_source

  ! A fresh halo state, a valid initiate with src, then complete with fields (or none).
  subroutine initiate_then_complete(fields)
    type(haloswap_field), intent(in), optional :: fields(:)
    call fresh()
    call initiate_nonblocking_halo_swap(hs, ierr, source_data=[haloswap_field(src)])
    if (ierr /= HALOSWAP_OK) error stop "badinput_fortran: valid initiate refused"
    if (present(fields)) then ! an absent optional array is never passed on (haloswap.F90)
      call complete_nonblocking_halo_swap(hs, ierr, source_data=fields)
    else
      call complete_nonblocking_halo_swap(hs, ierr)
    end if
  end subroutine initiate_then_complete

  subroutine begin(name)
    character(len=*), intent(in) :: name
    call c_begin(name // c_null_char)
  end subroutine begin

  subroutine fill()
    a = S
    src = S
    other = S
    wrong = S
    flat = S
    big = S
    a2 = S
    a32 = real(S, c_float)
  end subroutine fill

  logical function untouched()
    untouched = all(a == S) .and. all(src == S) .and. all(other == S) .and. all(wrong == S) &
         .and. all(flat == S) .and. all(big == S) .and. all(a2 == S) .and. &
         all(a32 == real(S, c_float))
  end function untouched

  subroutine check(rc, want, needle)
    integer, intent(in) :: rc, want
    character(len=*), intent(in) :: needle
    call check_only(rc, want, needle, untouched())
  end subroutine check

  subroutine check_only(rc, want, needle, clean)
    integer, intent(in) :: rc, want
    character(len=*), intent(in) :: needle
    logical, intent(in) :: clean
    integer(c_int) :: ok
    ok = c_check(int(rc, c_int), int(want, c_int), merge(1_c_int, 0_c_int, clean), &
         needle // c_null_char)
  end subroutine check_only
end subroutine badinput_fortran
