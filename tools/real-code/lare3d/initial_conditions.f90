! haloswap's small Lare3d case, initial state (tools/real-code/lare3d.sh; not Lare3d's file):
! uniform density, a Gaussian pressure pulse off the centre, a uniform oblique magnetic field
! and a sheared velocity, so the flow crosses every rank boundary from the first step.
MODULE initial_conditions

  USE shared_data

  IMPLICIT NONE

  PRIVATE
  PUBLIC :: set_initial_conditions

CONTAINS

  SUBROUTINE set_initial_conditions
    REAL(num) :: r2

    grav = 0.0_num
    visc3 = 0.0_num
    rho = 1.0_num
    ! one construct per nest: every cell is independent
    DO CONCURRENT (iz = -1:nz + 2, iy = -1:ny + 2, ix = -1:nx + 2)
      r2 = (xc(ix) - 0.2_num)**2 + (yc(iy) + 0.1_num)**2 + (zc(iz) - 0.15_num)**2
      energy(ix,iy,iz) = (0.2_num + 2.0_num * EXP(-r2 / 0.05_num)) / (gamma - 1.0_num)
    END DO
    bx = 0.6_num
    by = 0.3_num
    bz = 0.2_num
    vx = 0.0_num
    vy = 0.0_num
    vz = 0.0_num
    DO CONCURRENT (iz = -2:nz + 2, iy = -2:ny + 2, ix = -2:nx + 2)
      vx(ix,iy,iz) = 0.3_num * SIN(3.0_num * yb(iy)) * COS(2.0_num * zb(iz))
      vy(ix,iy,iz) = 0.2_num * SIN(2.0_num * zb(iz) + xb(ix))
      vz(ix,iy,iz) = 0.1_num * COS(3.0_num * xb(ix)) * SIN(yb(iy))
    END DO

  END SUBROUTINE set_initial_conditions

END MODULE initial_conditions
