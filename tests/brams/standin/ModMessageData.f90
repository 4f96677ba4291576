! Stand-in for BRAMS's ModMessageData: one message's buffer and field sections.
module ModMessageData
  use ModFieldSectionList, only: FieldSectionList, FieldSection
  implicit none
  private
  public :: MessageData, DestroyMessageData
  type MessageData
     real, allocatable :: buf(:)
     integer :: bufSize = 0
     type(FieldSectionList), pointer :: fieldList => null()
  end type MessageData
contains
  subroutine DestroyMessageData(m)
    type(MessageData), intent(inout) :: m
    type(FieldSection), pointer :: s, n
    if (allocated(m%buf)) deallocate(m%buf)
    if (.not. associated(m%fieldList)) return
    s => m%fieldList%head
    do while (associated(s))
      n => s%next
      deallocate(s)
      s => n
    end do
    deallocate(m%fieldList)
  end subroutine DestroyMessageData
end module ModMessageData
