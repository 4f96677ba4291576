! Stand-in for BRAMS's var_tables: the field table entry the message sets point at.
! idim_type: 2 (x,y), 3 (z,x,y), 4/5 (z,x,y,patch), 6/7 (x,y,patch).
module var_tables
  implicit none
  private
  public :: var_tables_r
  type var_tables_r
     character(len=32) :: name = ''
     real, pointer :: var_p_2D(:,:) => null()
     real, pointer :: var_p_3D(:,:,:) => null()
     real, pointer :: var_p_4D(:,:,:,:) => null()
     integer :: idim_type = 0
  end type var_tables_r
end module var_tables
