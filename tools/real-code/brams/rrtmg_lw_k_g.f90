! haloswap's stand-in for RRTMG's rrtmg_lw_k_g.f90 (the longwave k-distribution tables,
! 4 MiB, not in the fetched BRAMS snapshot). Written for tools/check-real-code brams: it
! only lets BRAMS link. The check runs with radiation off, where these are never called;
! if one is called, the run stops rather than computing with missing tables.
subroutine hs_lw_kg_absent(band)
  implicit none
  integer, intent(in) :: band
  write(*, '(a, i0, a)') 'haloswap stub of rrtmg_lw_k_g.f90: lw_kgb', band, &
    ' called, but the RRTMG longwave tables are absent (run with radiation off)'
  stop 1
end subroutine hs_lw_kg_absent

subroutine lw_kgb01
  call hs_lw_kg_absent(1)
end subroutine lw_kgb01

subroutine lw_kgb02
  call hs_lw_kg_absent(2)
end subroutine lw_kgb02

subroutine lw_kgb03
  call hs_lw_kg_absent(3)
end subroutine lw_kgb03

subroutine lw_kgb04
  call hs_lw_kg_absent(4)
end subroutine lw_kgb04

subroutine lw_kgb05
  call hs_lw_kg_absent(5)
end subroutine lw_kgb05

subroutine lw_kgb06
  call hs_lw_kg_absent(6)
end subroutine lw_kgb06

subroutine lw_kgb07
  call hs_lw_kg_absent(7)
end subroutine lw_kgb07

subroutine lw_kgb08
  call hs_lw_kg_absent(8)
end subroutine lw_kgb08

subroutine lw_kgb09
  call hs_lw_kg_absent(9)
end subroutine lw_kgb09

subroutine lw_kgb10
  call hs_lw_kg_absent(10)
end subroutine lw_kgb10

subroutine lw_kgb11
  call hs_lw_kg_absent(11)
end subroutine lw_kgb11

subroutine lw_kgb12
  call hs_lw_kg_absent(12)
end subroutine lw_kgb12

subroutine lw_kgb13
  call hs_lw_kg_absent(13)
end subroutine lw_kgb13

subroutine lw_kgb14
  call hs_lw_kg_absent(14)
end subroutine lw_kgb14

subroutine lw_kgb15
  call hs_lw_kg_absent(15)
end subroutine lw_kgb15

subroutine lw_kgb16
  call hs_lw_kg_absent(16)
end subroutine lw_kgb16
