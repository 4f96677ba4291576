! The haloswap_ra Fortran module (fortran/haloswap_ra.F90) on every back end named on the
! command line: capacities differing per rank, remote puts to the next rank and owner stores
! read back by remote gets (values from the ranks and indices), the counters, the accessors,
! and refusals in Fortran's numbering on every rank together. Exit 77 if no named back end
! is built.
program test_ra_fortran
  use, intrinsic :: iso_c_binding, only: c_int32_t
  use mpi_f08
  use haloswap_ra
  implicit none
  type(haloswap_ra_layer) :: ra
  type(haloswap_ra_stats) :: st
  integer(c_int32_t), pointer :: a1(:), a2(:)
  integer(c_int32_t) :: v
  integer, allocatable :: ranks(:), idx(:)
  character(len=32) :: backend
  character(len=:), allocatable :: msg
  integer :: me, np, right, left, capr, i, k, fails, tested, peers(2)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  right = modulo(me + 1, np)
  left = modulo(me - 1, np)
  fails = 0
  tested = 0

  do k = 1, command_argument_count()
    call get_command_argument(k, backend)
    if (haloswap_ra_backend_available(trim(backend), msg) /= HALOSWAP_OK) then
      if (me == 0) print '(a)', 'SKIP ' // trim(backend) // ': ' // msg
      cycle
    end if
    tested = tested + 1
    peers = [left, right]
    call expect(haloswap_ra_create(MPI_COMM_WORLD, trim(backend), 2, 5 + me, ra, peers), &
         HALOSWAP_OK, 'create')
    call truth(haloswap_ra_name(ra) == trim(backend), 'name')
    call truth(ra%capacity == 5 + me .and. ra%rank == me .and. ra%size == np, 'cached sizes')
    do i = 0, np - 1
      call truth(haloswap_ra_capacity(ra, i) == 5 + i, 'capacity of another rank')
    end do
    a1 => haloswap_ra_local(ra, 1)
    a2 => haloswap_ra_local(ra, 2)
    call truth(associated(a1) .and. associated(a2), 'local arrays')
    call truth(size(a1) == 5 + me .and. all(a1 == 0) .and. all(a2 == 0), 'local arrays zeroed')
    call truth(.not. associated(haloswap_ra_local(ra, 3)), 'array 3 refused')

    ! every element of the right neighbour: put i + 1000 * me into array 1, get array 2
    capr = haloswap_ra_capacity(ra, right)
    allocate(ranks(capr), idx(capr))
    ranks = right
    idx = [(i, i = 1, capr)]
    call expect(haloswap_ra_set_targets(ra, ranks, idx), HALOSWAP_OK, 'set_targets')
    call expect(haloswap_ra_reset_stats(ra), HALOSWAP_OK, 'reset_stats')
    do i = 1, capr
      call expect(haloswap_ra_put(ra, 1, right, i, int(i + 1000 * me, c_int32_t)), HALOSWAP_OK, 'put')
    end do
    do i = 1, size(a2)
      a2(i) = int(7 * me + i, c_int32_t)
    end do
    call expect(haloswap_ra_sync(ra), HALOSWAP_OK, 'sync')
    do i = 1, size(a1)
      call truth(a1(i) == i + 1000 * left, 'value put by the left neighbour')
    end do
    do i = 1, capr
      call expect(haloswap_ra_get(ra, 2, right, i, v), HALOSWAP_OK, 'get')
      call truth(v == 7 * right + i, 'value stored by the right neighbour')
    end do
    ! p2p syncs only the arrays named: array 1 alone leaves array 2's mirrors alone
    call expect(haloswap_ra_sync(ra, [1]), HALOSWAP_OK, 'sync of array 1')
    call expect(haloswap_ra_complete(ra, [2]), HALOSWAP_OK, 'complete')
    call expect(haloswap_ra_get_stats(ra, st), HALOSWAP_OK, 'get_stats')
    if (right /= me) then
      call truth(st%puts == capr .and. st%gets == capr, 'remote operation counts')
    else
      call truth(st%puts == 0 .and. st%gets == 0, 'own elements are not remote')
    end if
    call truth(st%syncs == 2, 'sync count')
    call expect(haloswap_ra_epoch_begin(ra), HALOSWAP_OK, 'epoch_begin')
    call expect(haloswap_ra_epoch_end(ra), HALOSWAP_OK, 'epoch_end')
    call expect(haloswap_ra_clear(ra), HALOSWAP_OK, 'clear')
    call truth(all(a1 == 0) .and. all(a2 == 0), 'clear zeroes')

    ! refusals, in Fortran's numbering (arrays and elements from 1)
    call refused(haloswap_ra_put(ra, 3, right, 1, 1_c_int32_t), &
         'haloswap_ra_put: array = 3, must be in [1, 2]')
    call refused(haloswap_ra_get(ra, 1, np, 1, v), 'haloswap_ra_get: rank = ')
    call refused(haloswap_ra_put(ra, 1, right, 0, 1_c_int32_t), 'haloswap_ra_put: index = 0 on rank')
    call refused(haloswap_ra_put(ra, 1, right, capr + 1, 1_c_int32_t), 'must be in [1, ')
    ! collective refusals: the same status on every rank, even where only rank 0 is wrong
    if (me == 0) idx(1) = capr + 1
    call refused(haloswap_ra_set_targets(ra, ranks, idx), 'haloswap_ra_set_targets: indices(1) = ')
    call refused(haloswap_ra_set_targets(ra, ranks, idx(1:0)), &
         'haloswap_ra_set_targets: size(ranks) = ')
    deallocate(ranks, idx)
    call expect(haloswap_ra_free(ra), HALOSWAP_OK, 'free')
    call truth(.not. associated(haloswap_ra_local(ra, 1)), 'freed layer has no arrays')
  end do

  ! a back end name nobody knows: refused on every rank, naming it
  call refused(haloswap_ra_create(MPI_COMM_WORLD, 'carrier-pigeon', 1, 4, ra), "'carrier-pigeon'")

  call MPI_Allreduce(MPI_IN_PLACE, fails, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (me == 0) print '(a,i0,a,i0,a)', 'haloswap_ra Fortran: ', tested, ' back end(s), ', fails, &
       ' failure(s)'
  call MPI_Finalize()
  ! Freed: gfortran keeps main program variables on MAIN__'s stack, which LeakSanitizer's
  ! exit check no longer sees (a held array would be reported as a leak).
  if (allocated(msg)) deallocate(msg)
  if (fails /= 0) error stop 1
  if (tested == 0) stop 77

contains

  subroutine truth(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(a,i0,a)', 'rank ', me, ': ' // trim(backend) // ': ' // what // ' failed'
      fails = fails + 1
    end if
  end subroutine truth

  subroutine expect(got, want, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: what
    if (got /= want) then
      print '(a,i0,a,i0,a)', 'rank ', me, ': ' // trim(backend) // ': ' // what // ' returned ', &
           got, ': ' // haloswap_error_message()
      fails = fails + 1
    end if
  end subroutine expect

  ! status HALOSWAP_ERR_ARG and a message containing text
  subroutine refused(got, text)
    integer, intent(in) :: got
    character(len=*), intent(in) :: text
    character(len=:), allocatable :: m
    m = haloswap_error_message()
    if (got /= HALOSWAP_ERR_ARG .or. index(m, text) == 0) then
      print '(a,i0,a,i0,a)', 'rank ', me, ': ' // trim(backend) // ': expected a refusal with "' &
           // text // '", got status ', got, ': ' // m
      fails = fails + 1
    end if
  end subroutine refused

end program test_ra_fortran
