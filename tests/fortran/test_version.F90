! Prints the library's version as the Fortran module reports it (haloswap_version), string and
! parts; tests/core/test_version.py compares it with the header and every other place.
program test_version
  use haloswap, only: haloswap_version
  implicit none
  integer :: major, minor, patch
  character(len=:), allocatable :: v
  v = haloswap_version(major, minor, patch)
  print '(a, 1x, i0, ".", i0, ".", i0)', v, major, minor, patch
end program test_version
