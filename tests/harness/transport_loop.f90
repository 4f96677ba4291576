!> The transport loop of the drop-in tests that run several transports in one launch
!! (tests/epic, tests/monc, tests/lare3d, tests/epoch): which transports to run, HALOSWAP_TRANSPORT
!! set before each (plans made afterwards use it), whether it is usable here, and each one's
!! verdict on a line of its own, so a failing or skipped transport names itself.
!! Rank 0 prints; every rank must make the same calls (the usability check is collective).
module transport_loop
  use, intrinsic :: iso_c_binding
  use haloswap, only: haloswap_transport_count, haloswap_transport_name_at
  implicit none
  private

  public :: transport_list, transport_set, transport_usable, transport_begin, transport_end, &
       transport_end_summed, transport_summary, transport_finish, grids_2d

  integer, parameter, public :: TL_MAX = 32
  integer :: passed = 0, failed = 0, skipped = 0

  interface
     integer(c_int) function c_setenv(name, val, overwrite) bind(c, name="setenv")
       import :: c_int, c_char
       character(kind=c_char), intent(in) :: name(*), val(*)
       integer(c_int), value :: overwrite
     end function c_setenv
     integer(c_int) function c_usable(why, len) bind(c, name="hs_test_transport_usable")
       import :: c_int, c_char
       character(kind=c_char) :: why(*)
       integer(c_int), value :: len
     end function c_usable
  end interface

contains

  !> The transports of this launch: every one the library registers (none goes untested),
  !> less those named by `--except T`; or only those named by `--only T`. `--share K/N` keeps
  !> the K-th of every N of that list (from 0): the launches at 6 and 9 ranks share the
  !> transports out (tests/CMakeLists.txt). Other arguments are the caller's. auto gets one
  !> short round per candidate: these tests make many plans.
  subroutine transport_list(names, n)
    character(len=64), intent(out) :: names(TL_MAX)
    integer, intent(out) :: n
    character(len=64) :: arg, val, except(TL_MAX)
    integer :: i, ne, k, kth, every, slash, ios
    n = 0
    ne = 0
    kth = 0
    every = 1
    do i = 1, command_argument_count() - 1
      call get_command_argument(i, arg)
      call get_command_argument(i + 1, val)
      if (arg == '--only') then
        n = n + 1
        names(n) = val
      else if (arg == '--except') then
        ne = ne + 1
        except(ne) = val
      else if (arg == '--share') then
        slash = index(val, '/')
        ios = 1
        if (slash > 1) read(val(:slash - 1), *, iostat=ios) kth
        if (ios == 0) read(val(slash + 1:), *, iostat=ios) every
        if (ios /= 0 .or. every < 1 .or. kth < 0 .or. kth >= every) then
          write(*, '(a)') 'transport_list: --share ' // trim(val) // ' is not K/N with 0 <= K < N'
          error stop 2
        end if
      end if
    end do
    if (n > 0) return
    k = 0
    do i = 1, haloswap_transport_count()
      val = haloswap_transport_name_at(i)
      if (any(except(1:ne) == val)) cycle
      k = k + 1
      if (mod(k - 1, every) /= kth) cycle
      if (val == 'auto') val = 'auto:rounds=1,swaps=1'
      n = n + 1
      names(n) = val
    end do
  end subroutine transport_list

  !> The 2-D process grids the drop-in tests run each transport on: 1 x n, n x 1 and grid
  !> (MPI_Dims_create's), each once.
  subroutine grids_2d(n, grid, grids, ngrids)
    integer, intent(in) :: n, grid(2)
    integer, intent(out) :: grids(2, 3), ngrids
    integer :: candidates(2, 3), k
    candidates = reshape([1, n, n, 1, grid(1), grid(2)], [2, 3])
    ngrids = 0
    do k = 1, 3
      if (any(all(grids(:, 1:ngrids) == spread(candidates(:, k), 2, ngrids), dim=1))) cycle
      ngrids = ngrids + 1
      grids(:, ngrids) = candidates(:, k)
    end do
  end subroutine grids_2d

  !> HALOSWAP_TRANSPORT = name.
  subroutine transport_set(name)
    character(len=*), intent(in) :: name
    integer(c_int) :: rc
    rc = c_setenv("HALOSWAP_TRANSPORT" // c_null_char, trim(name) // c_null_char, 1_c_int)
  end subroutine transport_set

  !> Makes name the transport HALOSWAP_TRANSPORT names; whether it is usable on
  !> MPI_COMM_WORLD, else why not.
  logical function transport_usable(name, why)
    character(len=*), intent(in) :: name
    character(len=*), intent(out) :: why
    character(kind=c_char) :: cwhy(256)
    integer :: i
    call transport_set(name)
    transport_usable = c_usable(cwhy, int(size(cwhy), c_int)) /= 0
    why = ''
    do i = 1, min(size(cwhy), len(why))
      if (cwhy(i) == c_null_char) exit
      why(i:i) = cwhy(i)
    end do
  end function transport_usable

  !> Selects transport name for what follows: .false. (printed as a skip) if not usable here.
  logical function transport_begin(name, rank)
    character(len=*), intent(in) :: name
    integer, intent(in) :: rank
    character(len=256) :: why
    transport_begin = transport_usable(name, why)
    if (transport_begin) then
      if (rank == 0) write(*, '(a)') 'RUN: transport ' // trim(name)
    else
      skipped = skipped + 1
      if (rank == 0) write(*, '(a)') 'SKIP: transport ' // trim(name) // ' not usable here: ' // &
           trim(why)
    end if
  end function transport_begin

  !> The verdict on transport name; failures: summed over the ranks.
  subroutine transport_end(name, rank, failures, what)
    character(len=*), intent(in) :: name, what
    integer, intent(in) :: rank, failures
    if (failures == 0) then
      passed = passed + 1
      if (rank == 0) write(*, '(a)') 'PASS: transport ' // trim(name) // ': ' // what
    else
      failed = failed + 1
      if (rank == 0) write(*, '(a)') 'FAIL: transport ' // trim(name) // ': ' // what
    end if
  end subroutine transport_end

  !> transport_end with this rank's wrong points (bad) and points received summed over the
  !> ranks: a launch of several ranks that received nothing, or one rank that received
  !> something, fails too (the oracle must see the exchange happen).
  subroutine transport_end_summed(name, rank, nranks, bad, received, what)
    use mpi_f08, only: MPI_Allreduce, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD
    character(len=*), intent(in) :: name, what
    integer, intent(in) :: rank, nranks, bad, received
    integer :: sums(2)
    call MPI_Allreduce([bad, received], sums, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if ((sums(2) == 0) .neqv. (nranks == 1)) sums(1) = sums(1) + 1
    call transport_end(name, rank, sums(1), what)
  end subroutine transport_end_summed

  !> The launch's exit status: 1 if a transport failed or none ran (unless all of them were
  !> skipped on purpose: a launch of one opt-in transport), else 77 if one was not usable here
  !> (CTest: skipped, never passed), else 0.
  integer function transport_summary(prefix, rank, all_may_skip)
    character(len=*), intent(in) :: prefix
    integer, intent(in) :: rank
    logical, intent(in) :: all_may_skip
    if (failed > 0 .or. (passed == 0 .and. .not. (all_may_skip .and. skipped > 0))) then
      transport_summary = 1
    else if (skipped > 0) then
      transport_summary = 77
    else
      transport_summary = 0
    end if
    if (rank == 0) write(*, '(a,": ",i0," transports passed, ",i0," failed, ",i0," skipped")') &
         prefix, passed, failed, skipped
  end function transport_summary

  !> The end of a test program: transport_summary, MPI_Finalize, and its status as the exit code.
  subroutine transport_finish(prefix, rank, all_may_skip)
    use mpi_f08, only: MPI_Finalize
    character(len=*), intent(in) :: prefix
    integer, intent(in) :: rank
    logical, intent(in) :: all_may_skip
    integer :: status
    status = transport_summary(prefix, rank, all_may_skip)
    call MPI_Finalize()
    if (status /= 0) stop status
  end subroutine transport_finish

end module transport_loop
