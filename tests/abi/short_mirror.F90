! Test only (tests/abi): the mistake the suite must catch. A hand-written bind(c) copy of
! hs_plan_desc that stops at `options` (the MONC drop-in's old copy: 64 bytes, the C struct
! 96), then hs_plan_desc_init on it, a stack variable: the sanitizer build must report the
! 32 bytes written past it (abi_short_mirror_asan), and the layout check must report the
! size (abi_layout_selftest). hs_region's copy is right: the layout check passes it.
module abi_short_mirror
  use, intrinsic :: iso_c_binding
  implicit none

  type, bind(c) :: hs_region_c
     integer(c_int) :: field, lo(3), count(3)
  end type hs_region_c

  type, bind(c) :: hs_plan_desc_c
     integer(c_int) :: depth(3), stencil, oneway, oneway_axis, nfields
     type(c_ptr) :: fields
     integer(c_int) :: transport
     type(c_ptr) :: transport_name, options
  end type hs_plan_desc_c

  interface
     subroutine hs_plan_desc_init(desc) bind(c, name="hs_plan_desc_init")
       import hs_plan_desc_c
       type(hs_plan_desc_c), intent(inout) :: desc
     end subroutine hs_plan_desc_init
  end interface
end module abi_short_mirror

program short_mirror
  use abi_short_mirror
  implicit none
  call init_one()
  ! Not reached under AddressSanitizer.
  print '(a)', "short_mirror: hs_plan_desc_init returned (no sanitizer report)"
contains
  subroutine init_one()
    type(hs_plan_desc_c) :: desc
    call hs_plan_desc_init(desc)
    print '(a,i0)', "short_mirror: depth(1) = ", desc%depth(1)
  end subroutine init_one
end program short_mirror
