! Stand-in for BRAMS's ModParallelEnvironment: what haloswap's ModMessageSet uses of it
! (BRAMS numbers its processes from 1; MPI ranks from 0).
module ModParallelEnvironment
  implicit none
  private
  public :: Brams2MpiProcNbr, Mpi2BramsProcNbr, MsgDump
contains
  integer function Brams2MpiProcNbr(procNbr)
    integer, intent(in) :: procNbr
    Brams2MpiProcNbr = procNbr - 1
  end function Brams2MpiProcNbr

  integer function Mpi2BramsProcNbr(procNbr)
    integer, intent(in) :: procNbr
    Mpi2BramsProcNbr = procNbr + 1
  end function Mpi2BramsProcNbr

  subroutine MsgDump(str, noAdvance)
    character(len=*), intent(in) :: str
    logical, optional, intent(in) :: noAdvance
    if (present(noAdvance)) then
      if (noAdvance) then
        write(*, '(a)', advance='no') str
        return
      end if
    end if
    write(*, '(a)') str
  end subroutine MsgDump
end module ModParallelEnvironment
