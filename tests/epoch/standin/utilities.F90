! Stand-in for EPOCH's utilities module: abort_code, EPOCH's abort path (MPI_ABORT with the
! lowest set bit of the error code).
MODULE utilities

  USE shared_data

  IMPLICIT NONE

CONTAINS

  SUBROUTINE abort_code(code)
    INTEGER, INTENT(IN) :: code
    INTEGER :: i, newcode, ierr
    newcode = code
    DO i = 0, 255
      IF (newcode == 0) THEN
        newcode = i
        EXIT
      END IF
      newcode = newcode / 2
    END DO
    CALL MPI_ABORT(MPI_COMM_WORLD, newcode, ierr)
  END SUBROUTINE abort_code

END MODULE utilities
