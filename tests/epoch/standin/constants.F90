! Stand-in for EPOCH's constants module (epoch3d/src/constants.F90): the names the
! haloswap_epoch drop-in uses, with EPOCH's values.
MODULE constants

  IMPLICIT NONE

  INTEGER, PARAMETER :: num = KIND(1.d0)
  INTEGER, PARAMETER :: r4 = SELECTED_REAL_KIND(r=30)
  INTEGER, PARAMETER :: c_ndims = 3
  INTEGER, PARAMETER :: c_bc_periodic = 1, c_bc_open = 5, c_bc_reflect = 4, c_bc_mixed = 14
  INTEGER, PARAMETER :: c_bd_x_min = 1, c_bd_x_max = 2, c_bd_y_min = 3, c_bd_y_max = 4
  INTEGER, PARAMETER :: c_bd_z_min = 5, c_bd_z_max = 6
  INTEGER, PARAMETER :: c_dir_x = 1, c_dir_y = 2, c_dir_z = 3
  INTEGER, PARAMETER :: c_err_bad_setup = 2**5

END MODULE constants
