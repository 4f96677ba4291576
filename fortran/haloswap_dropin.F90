! haloswap_dropin: what the drop-ins of fortran/<code>/ share (docs/design.md, "Drop-in
! support"): their teardown at MPI_Finalize, the statistics switch and transport name of their
! reports, the blocking swap and reverse of a plan with per-call arrays, and one abort path that
! ends in the code's own abort routine with the routine, the argument and its bounds named.
! A module of libhaloswap next to haloswap (installed with its .mod), so every build of a
! drop-in inside its code (docs/<code>.md) finds it where it finds haloswap.
module haloswap_dropin
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit, output_unit
  use mpi_f08, only: MPI_COMM_WORLD, MPI_Comm_rank, MPI_Barrier
  use haloswap, only: halo_communication_type, HALOSWAP_OK, haloswap_at_finalize, &
       haloswap_error_message, haloswap_flush_before_abort, haloswap_selected_transport, &
       haloswap_transport_name
  implicit none
  private

  abstract interface
     !> A drop-in's report or teardown, run at the start of MPI_Finalize while MPI works.
     subroutine haloswap_dropin_hook()
     end subroutine haloswap_dropin_hook
     !> The code's own abort routine (EPIC's mpi_exit_on_error, EPOCH's abort_code, ...),
     !> given the whole message; it must not return.
     subroutine haloswap_dropin_abort(msg)
       character(len=*), intent(in) :: msg
     end subroutine haloswap_dropin_abort
  end interface

  public :: haloswap_dropin_hook, haloswap_dropin_abort, haloswap_dropin_at_finalize, &
       haloswap_dropin_fail, haloswap_dropin_check, haloswap_dropin_bounds, haloswap_dropin_itoa, &
       haloswap_dropin_stats_wanted, haloswap_dropin_transport, haloswap_dropin_report, &
       haloswap_dropin_swap, haloswap_dropin_reverse

  ! What runs at MPI_Finalize: per drop-in (code, e.g. "EPIC"), its report if
  ! HALOSWAP_<code>_STATS asks for it, then its teardown.
  type :: final_entry
     character(len=16) :: code = ""
     procedure(haloswap_dropin_hook), pointer, nopass :: report => null(), teardown => null()
  end type final_entry

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
  end interface

contains

  !> At the start of MPI_Finalize (while MPI still works, from haloswap_at_finalize's one
  !> registry), the drop-in of code (e.g. "LARE3D") runs report if HALOSWAP_<code>_STATS is
  !> set (haloswap_dropin_stats_wanted), then teardown (free its plans). Registering a code
  !> again changes nothing.
  subroutine haloswap_dropin_at_finalize(code, ierr, report, teardown)
    character(len=*), intent(in) :: code
    integer, intent(out) :: ierr
    procedure(haloswap_dropin_hook), optional :: report, teardown
    type(final_entry) :: f
    call haloswap_at_finalize(c_funloc(run_finals), ierr)
    if (ierr /= HALOSWAP_OK) return
    f%code = code
    if (present(report)) f%report => report
    if (present(teardown)) f%teardown => teardown
    call finals(f)
  end subroutine haloswap_dropin_at_finalize

  ! No binding label: called through its address only, so the library exports no new name.
  subroutine run_finals() bind(c, name="")
    call finals()
  end subroutine run_finals

  ! The registry (its table a saved local: the shared library exports no module variable):
  ! with add, records it unless its code is there; without, runs and empties the table.
  subroutine finals(add)
    type(final_entry), intent(in), optional :: add
    type(final_entry), save :: table(8)
    integer, save :: n = 0
    integer :: i
    if (present(add)) then
      if (any(table(1:n)%code == add%code)) return
      if (n == size(table)) error stop "haloswap_dropin_at_finalize: more than 8 codes"
      n = n + 1
      table(n) = add
      return
    end if
    do i = 1, n
      associate (f => table(i))
        if (associated(f%report)) then
          if (haloswap_dropin_stats_wanted(trim(f%code))) call f%report()
        end if
        if (associated(f%teardown)) call f%teardown()
      end associate
    end do
    n = 0
  end subroutine finals

  !> Stops the run through abort with "where: msg", written to standard error first and given
  !> time to drain (a launcher may drop what a rank wrote just before the abort). agreed: every
  !> rank has the same message (a collective setup), so rank 0 alone writes it and the others
  !> wait for its abort.
  subroutine haloswap_dropin_fail(where, msg, abort, agreed)
    character(len=*), intent(in) :: where, msg
    procedure(haloswap_dropin_abort) :: abort
    logical, intent(in), optional :: agreed
    integer :: rank
    logical :: quiet
    quiet = .false.
    if (present(agreed)) then
      call MPI_Comm_rank(MPI_COMM_WORLD, rank)
      quiet = agreed .and. rank /= 0
    end if
    if (quiet) then
      call MPI_Barrier(MPI_COMM_WORLD)
    else
      write(error_unit, '(a)') where // ": " // trim(msg)
      call haloswap_flush_before_abort()
    end if
    call abort(where // ": " // trim(msg))
    error stop 1 ! an abort routine that returned
  end subroutine haloswap_dropin_fail

  !> A haloswap call's result: if it failed, haloswap_dropin_fail with haloswap's message.
  subroutine haloswap_dropin_check(ierr, where, abort, agreed)
    integer, intent(in) :: ierr
    character(len=*), intent(in) :: where
    procedure(haloswap_dropin_abort) :: abort
    logical, intent(in), optional :: agreed
    if (ierr /= HALOSWAP_OK) call haloswap_dropin_fail(where, "haloswap: " // &
         haloswap_error_message(), abort, agreed)
  end subroutine haloswap_dropin_check

  !> Bounds as a message names them: "(lo(1):hi(1),lo(2):hi(2),...)", items joined by sep
  !> (default ",").
  function haloswap_dropin_bounds(lo, hi, sep) result(text)
    integer, intent(in) :: lo(:), hi(:)
    character(len=*), intent(in), optional :: sep
    character(len=:), allocatable :: text
    character(len=32) :: item
    integer :: i
    text = "("
    do i = 1, size(lo)
      write(item, '(i0,":",i0)') lo(i), hi(i)
      if (i > 1) then
        if (present(sep)) then
          text = text // sep
        else
          text = text // ","
        end if
      end if
      text = text // trim(item)
    end do
    text = text // ")"
  end function haloswap_dropin_bounds

  !> An integer as a message names it: no blanks.
  function haloswap_dropin_itoa(i) result(s)
    integer, intent(in) :: i
    character(len=:), allocatable :: s
    character(len=16) :: b
    write(b, '(i0)') i
    s = trim(b)
  end function haloswap_dropin_itoa

  !> True if HALOSWAP_<code>_STATS is set to anything but empty or 0.
  logical function haloswap_dropin_stats_wanted(code)
    character(len=*), intent(in) :: code
    character(len=8) :: env
    integer :: n, st
    call get_environment_variable("HALOSWAP_" // code // "_STATS", env, n, st)
    haloswap_dropin_stats_wanted = st == 0 .and. n > 0 .and. env(1:1) /= '0'
  end function haloswap_dropin_stats_wanted

  !> The transport that moved a plan's data, for a report: with auto, the one it chose,
  !> marked "(auto's choice)".
  function haloswap_dropin_transport(hs) result(name)
    type(halo_communication_type), intent(in) :: hs
    character(len=:), allocatable :: name
    name = haloswap_selected_transport(hs)
    if (haloswap_transport_name(hs) == "auto") name = name // " (auto's choice)"
  end function haloswap_dropin_transport

  !> A report line on standard output: "who: rank R what transport T calls N seconds S"
  !> followed by more.
  subroutine haloswap_dropin_report(who, rank, what, transport, calls, seconds, more)
    character(len=*), intent(in) :: who, what, transport
    integer, intent(in) :: rank, calls
    real(c_double), intent(in) :: seconds
    character(len=*), intent(in), optional :: more
    character(len=16) :: s
    character(len=:), allocatable :: tail
    tail = ""
    if (present(more)) tail = more
    write(s, '(es11.5)') seconds
    write(output_unit, '(a,i0,a,i0,a)') who // ": rank ", rank, " " // trim(what) // &
         " transport " // trim(transport) // " calls ", calls, " seconds " // trim(s) // tail
  end subroutine haloswap_dropin_report

  !> The blocking swap of a plan over this call's arrays (one per field, hs_swap).
  integer function haloswap_dropin_swap(hs, arrays)
    type(halo_communication_type), intent(in) :: hs
    type(c_ptr), intent(in), target :: arrays(:)
    haloswap_dropin_swap = int(c_swap(hs%plan, c_loc(arrays(1))))
  end function haloswap_dropin_swap

  !> The blocking reverse (op: HALOSWAP_OP_SUM, ...) over this call's arrays (hs_reverse).
  integer function haloswap_dropin_reverse(hs, op, arrays)
    type(halo_communication_type), intent(in) :: hs
    integer, intent(in) :: op
    type(c_ptr), intent(in), target :: arrays(:)
    haloswap_dropin_reverse = int(c_reverse(hs%plan, int(op, c_int), c_loc(arrays(1))))
  end function haloswap_dropin_reverse

end module haloswap_dropin
