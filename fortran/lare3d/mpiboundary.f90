! haloswap drop-in for Lare3d's src/core/mpiboundary.f90 (docs/lare3d.md): module mpiboundary
! with Lare3d's five argument-less routines over the module arrays of shared_data, each one
! haloswap plan made at its first call and kept. The plans sweep (HS_ORDER_SWEEP): x, then y,
! then z, each stage over the whole allocated extent of the other two axes (ghosts included, so
! a corner at a wall gets what Lare3d's sweep gives it), 2 ghost planes per side, the shared node
! plane of the velocities taken from the upper rank and the shared face of bx/by/bz from the
! lower rank, nothing received on a side without a neighbour. The transport comes from
! HALOSWAP_TRANSPORT (default p2p) and HALOSWAP_OPTIONS at run time.
MODULE mpiboundary

  USE, INTRINSIC :: iso_c_binding, ONLY: c_ptr, c_loc, c_associated
  USE shared_data
  USE mpi_f08, ONLY: hs_mpi_comm => MPI_Comm
  USE haloswap, ONLY: haloswap_decomposition, halo_communication_type, &
      haloswap_decomposition_free, haloswap_local_extent, finalise_halo_communication, &
      blocking_halo_swap
  USE haloswap_geometry, ONLY: haloswap_gfield, haloswap_field_set_stagger, &
      haloswap_geometry_init, haloswap_decomposition_create_ex, HALOSWAP_LAYOUT_XYZ, &
      HALOSWAP_OWNER_UPPER, HALOSWAP_OWNER_LOWER
  USE haloswap_dropin, ONLY: haloswap_dropin_at_finalize, haloswap_dropin_fail, &
      haloswap_dropin_check, haloswap_dropin_bounds, haloswap_dropin_transport, &
      haloswap_dropin_report

  IMPLICIT NONE

  PRIVATE
  PUBLIC :: bfield_mpi, energy_mpi, density_mpi, velocity_mpi, remap_v_mpi
  PUBLIC :: mpiboundary_report, mpiboundary_finalise

  INTEGER, PARAMETER :: nex = 5, k_check = 1, k_describe = 2
  CHARACTER(LEN=12), PARAMETER :: ex_name(nex) = [CHARACTER(LEN=12) :: 'bfield_mpi', &
      'energy_mpi', 'density_mpi', 'velocity_mpi', 'remap_v_mpi']
  TYPE(haloswap_decomposition), SAVE :: decomp
  LOGICAL, SAVE :: have_decomp = .FALSE.
  INTEGER, SAVE :: grid_cells(3) = 0
  TYPE(halo_communication_type), SAVE :: ex(nex)
  LOGICAL, SAVE :: have_ex(nex) = .FALSE.
  TYPE(c_ptr), SAVE :: registered(3, nex)
  REAL(KIND(1.D0)), SAVE :: seconds(nex) = 0.0D0
  INTEGER, SAVE :: calls(nex) = 0

CONTAINS

  !****************************************************************************
  ! Lare3d's routines
  !****************************************************************************

  SUBROUTINE bfield_mpi
    CALL exchange(1)
  END SUBROUTINE bfield_mpi

  SUBROUTINE energy_mpi
    CALL exchange(2)
  END SUBROUTINE energy_mpi

  SUBROUTINE density_mpi
    CALL exchange(3)
  END SUBROUTINE density_mpi

  SUBROUTINE velocity_mpi
    CALL exchange(4)
  END SUBROUTINE velocity_mpi

  SUBROUTINE remap_v_mpi
    CALL exchange(5)
  END SUBROUTINE remap_v_mpi

  !****************************************************************************
  ! Statistics (HALOSWAP_LARE3D_STATS=1 prints them at MPI_FINALIZE) and teardown
  !****************************************************************************

  !> One line per routine on this rank: calls and seconds inside it, with the transport.
  SUBROUTINE mpiboundary_report
    INTEGER :: i
    DO i = 1, nex
      IF (calls(i) > 0) CALL haloswap_dropin_report('mpiboundary', rank, ex_name(i), &
          haloswap_dropin_transport(ex(i)), calls(i), seconds(i))
    END DO
  END SUBROUTINE mpiboundary_report

  !> Frees every exchange (collective); the next call makes them again (for another
  !> HALOSWAP_TRANSPORT). Also run at MPI_FINALIZE, after the report if
  !> HALOSWAP_LARE3D_STATS=1 (haloswap_dropin_at_finalize).
  SUBROUTINE mpiboundary_finalise
    INTEGER :: i, rc
    DO i = 1, nex
      IF (have_ex(i)) CALL finalise_halo_communication(ex(i), rc)
      have_ex(i) = .FALSE.
    END DO
    IF (have_decomp) CALL haloswap_decomposition_free(decomp, rc)
    have_decomp = .FALSE.
    seconds = 0.0D0
    calls = 0
  END SUBROUTINE mpiboundary_finalise

  !****************************************************************************
  ! The exchange
  !****************************************************************************

  SUBROUTINE exchange(id)
    INTEGER, INTENT(IN) :: id
    INTEGER :: ierr, nf
    REAL(KIND(1.D0)) :: t0
    TYPE(haloswap_gfield) :: f(3)
    IF (.NOT. have_ex(id)) THEN
      ! Made on first use: every rank calls the same routine at the same time.
      IF (.NOT. have_decomp) CALL make_decomposition(id)
      CALL visit(id, k_describe, f, nf)
      CALL haloswap_geometry_init(ex(id), decomp, f(1:nf), [2, 2, 2], .TRUE., ierr, &
          sweep_axes=[1, 2, 3])
      CALL haloswap_dropin_check(ierr, here(id), lare3d_abort, .TRUE.)
      have_ex(id) = .TRUE.
    END IF
    CALL visit(id, k_check, f, nf)
    t0 = MPI_WTIME()
    CALL blocking_halo_swap(ex(id), ierr)
    seconds(id) = seconds(id) + (MPI_WTIME() - t0)
    calls(id) = calls(id) + 1
    CALL haloswap_dropin_check(ierr, here(id), lare3d_abort)
  END SUBROUTINE exchange

  ! The arrays of routine id, as Lare3d declares them: 2 points below the interior on every
  ! axis (cells 1..n; nodes and faces 0..n), staggered where node(a) = 1, the velocities' shared
  ! planes owned by the upper rank, the magnetic fields' shared faces by the lower. what:
  ! k_describe fills f(1:nf) (and checks the arrays), k_check checks them before a swap.
  SUBROUTINE visit(id, what, f, nf)
    INTEGER, INTENT(IN) :: id, what
    TYPE(haloswap_gfield), INTENT(INOUT) :: f(3)
    INTEGER, INTENT(OUT) :: nf
    nf = 3
    SELECT CASE (id)
    CASE (1)
      CALL one(bx, 'bx', id, 1, [1, 0, 0], HALOSWAP_OWNER_LOWER, what, f(1))
      CALL one(by, 'by', id, 2, [0, 1, 0], HALOSWAP_OWNER_LOWER, what, f(2))
      CALL one(bz, 'bz', id, 3, [0, 0, 1], HALOSWAP_OWNER_LOWER, what, f(3))
    CASE (2)
      nf = 1
      CALL one(energy, 'energy', id, 1, [0, 0, 0], 0, what, f(1))
    CASE (3)
      nf = 1
      CALL one(rho, 'rho', id, 1, [0, 0, 0], 0, what, f(1))
    CASE (4)
      CALL one(vx, 'vx', id, 1, [1, 1, 1], HALOSWAP_OWNER_UPPER, what, f(1))
      CALL one(vy, 'vy', id, 2, [1, 1, 1], HALOSWAP_OWNER_UPPER, what, f(2))
      CALL one(vz, 'vz', id, 3, [1, 1, 1], HALOSWAP_OWNER_UPPER, what, f(3))
    CASE (5)
      CALL one(vx1, 'vx1', id, 1, [1, 1, 1], HALOSWAP_OWNER_UPPER, what, f(1))
      CALL one(vy1, 'vy1', id, 2, [1, 1, 1], HALOSWAP_OWNER_UPPER, what, f(2))
      CALL one(vz1, 'vz1', id, 3, [1, 1, 1], HALOSWAP_OWNER_UPPER, what, f(3))
    END SELECT
  END SUBROUTINE visit

  SUBROUTINE one(a, name, id, k, node, owner, what, f)
    REAL(num), DIMENSION(:,:,:), ALLOCATABLE, TARGET, INTENT(INOUT) :: a
    CHARACTER(LEN=*), INTENT(IN) :: name
    INTEGER, INTENT(IN) :: id, k, node(3), owner, what
    TYPE(haloswap_gfield), INTENT(INOUT) :: f
    INTEGER :: ax
    IF (what == k_describe .AND. ALLOCATED(a)) registered(k, id) = c_loc(a)
    CALL check_array(a, name, id, k, node)
    IF (what /= k_describe) RETURN
    f = haloswap_gfield(a, [2, 2, 2], HALOSWAP_LAYOUT_XYZ)
    DO ax = 1, 3
      IF (node(ax) == 1) CALL haloswap_field_set_stagger(f, ax, owner)
    END DO
  END SUBROUTINE one

  ! The array must be allocated as mpi_initialise allocates it (a node/face axis: -2:n+2,
  ! a cell axis: -1:n+2) and be the array the exchange was made over.
  SUBROUTINE check_array(a, name, id, k, node)
    REAL(num), DIMENSION(:,:,:), ALLOCATABLE, TARGET, INTENT(IN) :: a
    CHARACTER(LEN=*), INTENT(IN) :: name
    INTEGER, INTENT(IN) :: id, k, node(3)
    INTEGER :: lo(3), hi(3), n(3)
    n = [nx, ny, nz]
    lo = -1 - node
    hi = n + 2
    IF (.NOT. ALLOCATED(a)) THEN
      CALL fail(ex_name(id), name // ' is not allocated: called before the grid exists ' // &
          '(mpi_initialise allocates the arrays)', .FALSE.)
    ELSE IF (ANY(LBOUND(a) /= lo) .OR. ANY(UBOUND(a) /= hi) .OR. ANY(n /= grid_cells)) THEN
      CALL fail(ex_name(id), name // ' is ' // haloswap_dropin_bounds(LBOUND(a), UBOUND(a)) // &
          ' but the exchange was made for ' // haloswap_dropin_bounds(lo, hi) // &
          ' (nx, ny, nz when it was made)', .FALSE.)
    ELSE IF (.NOT. c_associated(c_loc(a), registered(k, id))) THEN
      CALL fail(ex_name(id), name // ' was reallocated after its exchange was made ' // &
          '(mpiboundary keeps its exchanges over the arrays of the first call)', .FALSE.)
    END IF
  END SUBROUTINE check_array

  ! Lare3d's process grid as haloswap's decomposition: its Cartesian communicator (dimensions
  ! (z, y, x), periods from its boundaries) and its split (cell_nx_mins ... cell_nz_maxs).
  SUBROUTINE make_decomposition(id)
    INTEGER, INTENT(IN) :: id
    TYPE(hs_mpi_comm) :: cart
    INTEGER :: ierr, a
    CHARACTER(LEN=200) :: msg
    IF (.NOT. ALLOCATED(rho) .OR. .NOT. ALLOCATED(cell_nx_mins)) CALL fail(ex_name(id), &
        'called before the grid exists (mpi_initialise creates the Cartesian communicator ' // &
        'and allocates the arrays)', .FALSE.)
    grid_cells = [nx, ny, nz]
    cart%MPI_VAL = comm
    CALL haloswap_decomposition_create_ex(decomp, cart, [nx_global, ny_global, nz_global], &
        ierr, procs=[nprocx, nprocy, nprocz], axis_order=[3, 2, 1], &
        ranges_x=cell_nx_maxs - cell_nx_mins + 1, ranges_y=cell_ny_maxs - cell_ny_mins + 1, &
        ranges_z=cell_nz_maxs - cell_nz_mins + 1, cart=cart)
    CALL haloswap_dropin_check(ierr, here(id), lare3d_abort, .TRUE.)
    have_decomp = .TRUE.
    DO a = 1, 3
      IF (haloswap_local_extent(decomp, a) /= grid_cells(a)) THEN
        WRITE(msg, '(a,i0,a,i0,a,i0)') 'this rank has ', grid_cells(a), ' cells on axis ', a, &
            ' but its cell_n*_mins/maxs give ', haloswap_local_extent(decomp, a)
        CALL fail(ex_name(id), TRIM(msg), .FALSE.)
      END IF
    END DO
    CALL haloswap_dropin_at_finalize('LARE3D', ierr, mpiboundary_report, mpiboundary_finalise)
    CALL haloswap_dropin_check(ierr, here(id), lare3d_abort)
  END SUBROUTINE make_decomposition

  ! Errors stop through haloswap_dropin_fail (the message on standard error, then Lare3d's
  ! abort). agreed: every rank has the same message (collective setup).
  SUBROUTINE fail(routine, msg, agreed)
    CHARACTER(LEN=*), INTENT(IN) :: routine, msg
    LOGICAL, INTENT(IN) :: agreed
    CALL haloswap_dropin_fail('mpiboundary: ' // TRIM(routine), msg, lare3d_abort, agreed)
  END SUBROUTINE fail

  FUNCTION here(id)
    INTEGER, INTENT(IN) :: id
    CHARACTER(LEN=:), ALLOCATABLE :: here
    here = 'mpiboundary: ' // TRIM(ex_name(id))
  END FUNCTION here

  ! Lare3d's abort path: its error banner on standard output, then MPI_ABORT.
  SUBROUTINE lare3d_abort(msg)
    CHARACTER(LEN=*), INTENT(IN) :: msg
    INTEGER :: ierr
    PRINT *, '*** ERROR ***'
    PRINT *, msg
    CALL MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
  END SUBROUTINE lare3d_abort

END MODULE mpiboundary
