! Errors during a swap through the Fortran haloswap module alone (issue 28; docs/design.md,
! "Errors during a swap"): one rank -- first, middle, last -- passes source_data of the wrong
! shape, or starts a swap twice, while the others swap correctly. Every rank must return a
! non-zero ierr whose message names the offending rank, in that very swap; a swap started
! twice begins no round: the offender alone gets the error, its swap completes as started and
! every state stays usable. The state is freed on every rank and a fresh one swaps every halo
! cell right. Each case is
! bounded by an alarm (20 s), well below the test's timeout. Argument: the transport.
program faults_f
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use haloswap
  implicit none
  interface
    integer(c_int) function c_alarm(seconds) bind(c, name="alarm")
      import :: c_int
      integer(c_int), value :: seconds
    end function c_alarm
  end interface
  integer, parameter :: h = 2, nz = 3, gx = 12, gy = 10
  type(haloswap_decomposition) :: dec
  type(halo_communication_type) :: hs
  real(c_double), allocatable, target :: a(:,:,:), src(:,:,:), wrong(:,:,:)
  character(len=64) :: transport
  integer :: ierr, rank, nprocs, nx, ny, ox, oy, k, b, bads(3), nb, nkinds, nfailed, first
  character(len=1024) :: msg
  character(len=*), parameter :: kname(2) = [character(len=24) :: "source_data wrong shape", &
       "swap started twice"]
  character(len=*), parameter :: needle(2) = [character(len=24) :: "source_data(1) has shape", &
       "already in progress"]

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  transport = "p2p"
  if (command_argument_count() > 0) call get_command_argument(1, transport)
  call haloswap_decomposition_create(dec, MPI_COMM_WORLD, [gx, gy, nz], ierr)
  if (ierr /= HALOSWAP_OK) error stop "faults_f: decomposition"
  nx = haloswap_local_extent(dec, HALOSWAP_X)
  ny = haloswap_local_extent(dec, HALOSWAP_Y)
  ox = haloswap_global_offset(dec, HALOSWAP_X)
  oy = haloswap_global_offset(dec, HALOSWAP_Y)
  allocate(a(nz, ny + 2 * h, nx + 2 * h), src(nz, ny + 2 * h, nx + 2 * h), &
       wrong(nz, ny + 2 * h - 1, nx + 2 * h))
  bads = [0, nprocs / 2, nprocs - 1]
  nb = merge(3, 2, nprocs > 2)
  nkinds = 0
  nfailed = 0
  do k = 1, 2
    do b = 1, nb
      call run_case(k, bads(b))
    end do
  end do
  call haloswap_decomposition_free(dec, ierr)
  if (rank == 0) write(*, '(a, a, a, i0, a, i0, a, i0, a)') "faults_f ", trim(transport), &
       " at ", nprocs, " ranks: ", nkinds, " kinds of fault checked, ", nfailed, " failed"
  call MPI_Finalize(ierr)
  ! Freed: gfortran keeps main program variables on MAIN__'s stack, which LeakSanitizer's
  ! exit check no longer sees (a held array would be reported as a leak).
  deallocate(a, src, wrong)
  if (nfailed > 0) error stop 1

contains

  subroutine run_case(k, bad)
    integer, intent(in) :: k, bad
    integer :: e, ok, all_ok, wrong_cells
    character(len=1024) :: msg0
    character(len=16) :: want
    ierr = c_alarm(20_c_int)
    call fresh()
    src = 0
    first = HALOSWAP_OK
    msg = ""
    call blocking_halo_swap(hs, e)  ! a correct swap first
    ok = merge(1, 0, e == HALOSWAP_OK)
    if (k == 1) then
      if (rank == bad) then
        call blocking_halo_swap(hs, e, source_data=[haloswap_field(wrong)])
      else
        call blocking_halo_swap(hs, e, source_data=[haloswap_field(src)])
      end if
      call note(e)
    else
      if (rank == bad) then
        call initiate_nonblocking_halo_swap(hs, e)
        call note(e)
        call initiate_nonblocking_halo_swap(hs, e)
        call note(e)
        call complete_nonblocking_halo_swap(hs, e)
        call note(e)
      else
        call blocking_halo_swap(hs, e)
        call note(e)
      end if
      call blocking_halo_swap(hs, e)  ! still usable everywhere
      if (e /= HALOSWAP_OK) ok = 0
    end if
    call finalise_halo_communication(hs, e)
    if (e /= HALOSWAP_OK) ok = 0
    ! A fresh state swaps every halo cell right.
    call fresh()
    call fill_interior()
    call blocking_halo_swap(hs, e)
    if (e /= HALOSWAP_OK) ok = 0
    wrong_cells = count_wrong()
    call finalise_halo_communication(hs, e)
    ierr = c_alarm(0_c_int)
    write(want, '(a, i0, a)') "rank ", bad, ": "
    msg0 = msg
    call MPI_Bcast(msg0, len(msg0), MPI_CHARACTER, 0, MPI_COMM_WORLD)
    if (k == 2) then
      if (wrong_cells /= 0) ok = 0
      if (rank == bad .and. (first == HALOSWAP_OK .or. index(msg, trim(needle(k))) == 0)) ok = 0
      if (rank /= bad .and. first /= HALOSWAP_OK) ok = 0
    else if (first == HALOSWAP_OK .or. wrong_cells /= 0 .or. msg /= msg0 .or. &
        index(msg, trim(want) // " ") /= 1 .or. index(msg, trim(needle(k))) == 0) then
      ok = 0
    end if
    if (ok == 0) write(*, '(a, i0, a, a, a, i0, a, i0, a, a, a, i0)') "[rank ", rank, "] FAIL ", &
         trim(kname(k)), " on rank ", bad, ": ierr ", first, " '", trim(msg), "', wrong cells ", &
         wrong_cells
    call MPI_Allreduce(ok, all_ok, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
    nkinds = nkinds + 1
    if (all_ok == 0) then
      nfailed = nfailed + 1
    else if (rank == 0) then
      write(*, '(a, a, a, i0, a, a)') "ok   ", trim(kname(k)), " on rank ", bad, ": ", trim(msg)
    end if
  end subroutine run_case

  ! This rank's first error on the state.
  subroutine note(e)
    integer, intent(in) :: e
    if (first == HALOSWAP_OK .and. e /= HALOSWAP_OK) then
      first = e
      msg = haloswap_error_message()
    end if
  end subroutine note

  subroutine fresh()
    integer :: e
    call init_halo_communication(hs, dec, [haloswap_field(a)], h, .true., e, &
         transport=trim(transport))
    if (e /= HALOSWAP_OK) then
      write(*, *) "faults_f: plan refused: ", trim(haloswap_error_message())
      error stop 3
    end if
  end subroutine fresh

  real(c_double) function gval(i, j, z)
    integer, intent(in) :: i, j, z  ! 1-based array indices (x, y with halo)
    integer :: x, y
    x = modulo(ox + i - 1 - h, gx)
    y = modulo(oy + j - 1 - h, gy)
    gval = real(x * 1000 + y * 10 + z, c_double)
  end function gval

  subroutine fill_interior()
    integer :: i, j, z
    a = -1
    do i = h + 1, h + nx
      do j = h + 1, h + ny
        do z = 1, nz
          a(z, j, i) = gval(i, j, z)
        end do
      end do
    end do
  end subroutine fill_interior

  integer function count_wrong()
    integer :: i, j, z
    count_wrong = 0
    do i = 1, nx + 2 * h
      do j = 1, ny + 2 * h
        do z = 1, nz
          if (a(z, j, i) /= gval(i, j, z)) count_wrong = count_wrong + 1
        end do
      end do
    end do
  end function count_wrong
end program faults_f
