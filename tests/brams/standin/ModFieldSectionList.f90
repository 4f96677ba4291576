! Stand-in for BRAMS's ModFieldSectionList: a field's section (local bounds) in a list.
module ModFieldSectionList
  use var_tables, only: var_tables_r
  use ModDomainDecomp, only: DomainDecomp
  implicit none
  private
  public :: FieldSection, FieldSectionList, CreateFieldSection, NextFieldSection, &
       CreateFieldSectionList, InsertAtFieldSectionList, DumpFieldSectionList
  type FieldSection
     type(var_tables_r), pointer :: vTabPtr => null()
     integer :: xStart, xEnd, yStart, yEnd
     integer :: fieldSectionSize
     type(FieldSection), pointer :: next => null()
  end type FieldSection
  type FieldSectionList
     type(FieldSection), pointer :: head => null()
     type(FieldSection), pointer :: tail => null()
  end type FieldSectionList
contains
  function CreateFieldSection(vTabPtr, xStart, xEnd, yStart, yEnd, GlobalWithGhost) &
       result(s)
    type(var_tables_r), pointer :: vTabPtr
    integer, intent(in) :: xStart, xEnd, yStart, yEnd
    type(DomainDecomp), pointer :: GlobalWithGhost
    type(FieldSection), pointer :: s
    integer :: per
    allocate(s)
    s%vTabPtr => vTabPtr
    s%xStart = xStart
    s%xEnd = xEnd
    s%yStart = yStart
    s%yEnd = yEnd
    per = 1
    if (associated(vTabPtr%var_p_3D)) per = size(vTabPtr%var_p_3D, 1)
    if (vTabPtr%idim_type == 6 .or. vTabPtr%idim_type == 7) per = size(vTabPtr%var_p_3D, 3)
    if (associated(vTabPtr%var_p_4D)) per = size(vTabPtr%var_p_4D, 1) * size(vTabPtr%var_p_4D, 4)
    s%fieldSectionSize = per * (xEnd - xStart + 1) * (yEnd - yStart + 1)
    if (.not. associated(GlobalWithGhost)) s%fieldSectionSize = -1
  end function CreateFieldSection

  function CreateFieldSectionList() result(l)
    type(FieldSectionList), pointer :: l
    allocate(l)
  end function CreateFieldSectionList

  subroutine InsertAtFieldSectionList(s, l)
    type(FieldSection), pointer :: s
    type(FieldSectionList), pointer :: l
    if (associated(l%tail)) then
      l%tail%next => s
    else
      l%head => s
    end if
    l%tail => s
  end subroutine InsertAtFieldSectionList

  function NextFieldSection(s, l) result(n)
    type(FieldSection), pointer :: s
    type(FieldSectionList), pointer :: l
    type(FieldSection), pointer :: n
    if (associated(s)) then
      n => s%next
    else
      n => l%head
    end if
  end function NextFieldSection

  subroutine DumpFieldSectionList(l)
    type(FieldSectionList), pointer :: l
    type(FieldSection), pointer :: s
    s => l%head
    do while (associated(s))
      write(*, '(a, 4(1x, i0))') trim(s%vTabPtr%name), s%xStart, s%xEnd, s%yStart, s%yEnd
      s => s%next
    end do
  end subroutine DumpFieldSectionList
end module ModFieldSectionList
