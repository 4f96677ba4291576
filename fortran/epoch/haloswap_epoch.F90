! haloswap drop-in for EPOCH's halo exchanges (epoch3d; docs/epoch.md): field_bc,
! do_field_mpi_with_lengths, its _r4 and _slice variants and particle_periodic_bcs, with the
! arguments and the results of the routines of that name in EPOCH's src/boundary.F90, which
! takes them from here (share/haloswap/epoch/haloswap.mk builds it so). The plans sweep
! (HS_ORDER_SWEEP), which is EPOCH's scheme: x, then y, then z over the whole allocated extent
! of the other axes; a field halo is filled from a side only where EPOCH unpacks it (a
! neighbour, or a periodic field boundary); the sums (the sweep's reverse) add, axis by axis,
! the lower neighbour's ghosts into the first ng planes and then the upper neighbour's into the
! last ng, where a neighbour exists or the particle boundary is periodic, and zero elsewhere
! (as EPOCH adds a zeroed buffer there), so every sum is rounded as EPOCH rounds it. The
! transport comes from HALOSWAP_TRANSPORT (default p2p) at run time.
MODULE haloswap_epoch

  USE shared_data
  USE utilities, ONLY: abort_code
  USE mpi_f08, ONLY: hs_mpi_comm => MPI_Comm
  USE haloswap, ONLY: haloswap_decomposition, halo_communication_type, &
      haloswap_decomposition_free, finalise_halo_communication
  USE haloswap_geometry, ONLY: haloswap_gfield, haloswap_geometry_init, &
      haloswap_decomposition_create_ex, HALOSWAP_LAYOUT_XYZ, HALOSWAP_OP_SUM
  USE haloswap_dropin, ONLY: haloswap_dropin_at_finalize, haloswap_dropin_fail, &
      haloswap_dropin_check, haloswap_dropin_transport, &
      haloswap_dropin_report, haloswap_dropin_swap, haloswap_dropin_reverse

  IMPLICIT NONE

  PRIVATE
  PUBLIC :: field_bc, do_field_mpi_with_lengths, do_field_mpi_with_lengths_r4
  PUBLIC :: do_field_mpi_with_lengths_slice, particle_periodic_bcs
  PUBLIC :: haloswap_epoch_report, haloswap_epoch_finalise, haloswap_epoch_lengths_cache

  ! A plan kept for the current domain: a fill (field_bc) or a sum (the particle sums) of
  ! arrays with ng ghosts, with the periodicity its decomposition was made for.
  TYPE :: kept
    LOGICAL :: used = .FALSE.
    INTEGER :: what = 0, ng = 0, per(3) = 0
    TYPE(haloswap_decomposition) :: d
    TYPE(halo_communication_type) :: hs
  END TYPE kept

  INTEGER, PARAMETER :: nkept = 16, k_fill = 1, k_sum = 2, k_lengths = 3
  CHARACTER(LEN=26), PARAMETER :: k_name(3) = [CHARACTER(LEN=26) :: 'field_bc', &
      'particle_periodic_bcs', 'do_field_mpi_with_lengths']
  TYPE(kept), SAVE :: plans(nkept)
  INTEGER, ALLOCATABLE, SAVE :: domain(:)
  REAL(KIND(1.D0)), SAVE :: seconds(3) = 0.0D0
  INTEGER, SAVE :: calls(3) = 0
  INTEGER, SAVE :: last = 0   ! the kept plan used last

  ! A plan of do_field_mpi_with_lengths (_r4, _slice) kept for the shape it was made for: key
  ! is the gathered table of every rank's row (grid coordinates, cells, process grid, world
  ! rank, ng, element kind, periodicity, slice direction), so a change of any rank's extents,
  ! of the communicator's layout, of the type or of the direction is a miss on every rank
  ! alike. stamp: the call that used it last.
  TYPE :: lentry
    LOGICAL :: used = .FALSE.
    INTEGER :: stamp = 0, serial = 0, plane = MPI_COMM_NULL   ! a slice's communicator
    INTEGER, ALLOCATABLE :: key(:,:)
    TYPE(haloswap_decomposition) :: d
    TYPE(halo_communication_type) :: hs
  END TYPE lentry

  ! At most nlengths explicit-length plans, the least recently used freed first: EPOCH's
  ! redistribution uses one shape per type and slice direction (the new split): 8 holds the
  ! 3-D real(num) and real(r4) shapes and the three slices of one split, and some of another.
  INTEGER, PARAMETER :: nlengths = 8
  ! A row of the gathered table: coords(3), cells(3), procs(3), then the world rank, ng, kind,
  ! per(3), direction, and (not part of the key) the cache's clock and signature, which must
  ! agree.
  INTEGER, PARAMETER :: nrow_key = 16
  TYPE(lentry), SAVE :: lplans(nlengths)
  INTEGER, SAVE :: lclock = 0, lmade = 0, lreused = 0
  REAL(KIND(1.D0)), SAVE :: lsetup = 0.0D0

CONTAINS

  !****************************************************************************
  ! EPOCH's routines
  !****************************************************************************

  ! Exchanges field values at processor boundaries (EPOCH's field_bc).
  SUBROUTINE field_bc(field, ng)

    INTEGER, INTENT(IN) :: ng
    REAL(num), DIMENSION(1-ng:,1-ng:,1-ng:), INTENT(INOUT), TARGET :: field

    CALL kept_exchange(field, ng, k_fill, field_periodic('field_bc'))

  END SUBROUTINE field_bc



  ! The same for any extents (load balancing: arrays of the new domain, before EPOCH adopts
  ! it), over a plan kept for the shape of every rank's arrays (lengths_exchange).
  SUBROUTINE do_field_mpi_with_lengths(field, ng, nx_local, ny_local, nz_local)

    INTEGER, INTENT(IN) :: ng
    REAL(num), DIMENSION(1-ng:,1-ng:,1-ng:), INTENT(INOUT), TARGET :: field
    INTEGER, INTENT(IN) :: nx_local, ny_local, nz_local

    CALL lengths_exchange(haloswap_gfield(field, [ng, ng, ng], HALOSWAP_LAYOUT_XYZ), &
        [nx_local, ny_local, nz_local], ng, 0)

  END SUBROUTINE do_field_mpi_with_lengths



  SUBROUTINE do_field_mpi_with_lengths_r4(field, ng, nx_local, ny_local, nz_local)

    INTEGER, INTENT(IN) :: ng
    REAL(r4), DIMENSION(1-ng:,1-ng:,1-ng:), INTENT(INOUT), TARGET :: field
    INTEGER, INTENT(IN) :: nx_local, ny_local, nz_local

    CALL lengths_exchange(haloswap_gfield(field, [ng, ng, ng], HALOSWAP_LAYOUT_XYZ), &
        [nx_local, ny_local, nz_local], ng, 0)

  END SUBROUTINE do_field_mpi_with_lengths_r4



  ! A plane of field values normal to direction, exchanged along its two axes (first, then
  ! second) among the ranks of one plane of the process grid. Over the two-sided transport:
  ! the plane's communicator is a piece of a split, on which RMA windows and OpenSHMEM cannot
  ! be made (load balancing only).
  SUBROUTINE do_field_mpi_with_lengths_slice(field, direction, ng, n1_local, n2_local)

    INTEGER, INTENT(IN) :: direction, ng
    REAL(num), DIMENSION(1-ng:,1-ng:), INTENT(INOUT), TARGET :: field
    INTEGER, INTENT(IN) :: n1_local, n2_local
    TYPE(haloswap_gfield) :: f
    INTEGER :: cells(3)

    IF (ANY(SHAPE(field) /= [n1_local, n2_local] + 2 * ng)) CALL fail(k_lengths, &
        'do_field_mpi_with_lengths_slice: field is ' // TRIM(shape_text(SHAPE(field))) // &
        ' but n1_local, n2_local and ng make ' // &
        TRIM(shape_text([n1_local, n2_local] + 2 * ng)), .FALSE.)
    IF (direction < 1 .OR. direction > 3) CALL fail(k_lengths, &
        'do_field_mpi_with_lengths_slice: direction must be 1, 2 or 3 (c_dir_x, y, z)', .FALSE.)
    f = haloswap_gfield(field, [ng, ng], HALOSWAP_LAYOUT_XYZ)
    cells = 0
    cells(PACK([1, 2, 3], [1, 2, 3] /= direction)) = [n1_local, n2_local]
    CALL lengths_exchange(f, cells, ng, direction)

  END SUBROUTINE do_field_mpi_with_lengths_slice



  ! Sums the halo contributions of array onto their owners (EPOCH's particle_periodic_bcs):
  ! across the domain boundary where the particle boundary (of species, if given) is periodic;
  ! with species, the ghost points are zeroed afterwards.
  SUBROUTINE particle_periodic_bcs(array, ng, species)

    INTEGER, INTENT(IN) :: ng
    REAL(num), DIMENSION(1-ng:,1-ng:,1-ng:), INTENT(INOUT), TARGET :: array
    INTEGER, INTENT(IN), OPTIONAL :: species
    INTEGER :: per(3), a, n(3)

    per = particle_periodic(species)
    CALL kept_exchange(array, ng, k_sum, per)
    ! EPOCH adds a zeroed buffer on a side with nothing to receive: -0.0 becomes +0.0 there.
    n = SHAPE(array) - 2 * ng
    DO a = 1, 3
      IF (per(a) /= 0) CYCLE
      IF (.NOT. has_lower(a)) CALL add_zero(array, ng, a, 1)
      IF (.NOT. has_upper(a)) CALL add_zero(array, ng, a, n(a) + 1 - ng)
    END DO
    IF (PRESENT(species)) THEN
      array(:0,:,:) = 0.0_num
      array(n(1)+1:,:,:) = 0.0_num
      array(:,:0,:) = 0.0_num
      array(:,n(2)+1:,:) = 0.0_num
      array(:,:,:0) = 0.0_num
      array(:,:,n(3)+1:) = 0.0_num
    END IF

  END SUBROUTINE particle_periodic_bcs

  !****************************************************************************
  ! Statistics (HALOSWAP_EPOCH_STATS=1 prints them at MPI_FINALIZE) and teardown
  !****************************************************************************

  !> One line per kind of call on this rank: calls and seconds inside them, the transport.
  SUBROUTINE haloswap_epoch_report
    INTEGER :: i
    CHARACTER(LEN=64) :: t
    CHARACTER(LEN=160) :: more
    t = 'none'
    IF (last > 0) t = haloswap_dropin_transport(plans(last)%hs)
    DO i = 1, 3
      IF (calls(i) == 0) CYCLE
      more = ''
      IF (i == k_lengths) WRITE(more, '(a,i0,a,i0,a,es11.5)') ' plans made ', lmade, &
          ' reused ', lreused, ' setup seconds ', lsetup
      CALL haloswap_dropin_report('haloswap_epoch', rank, k_name(i), t, calls(i), &
          seconds(i), TRIM(more))
    END DO
  END SUBROUTINE haloswap_epoch_report

  !> The explicit-length exchanges' plans on this rank: made, reused from the cache, held in
  !> it now (at most 8).
  SUBROUTINE haloswap_epoch_lengths_cache(made, reused, held)
    INTEGER, INTENT(OUT) :: made, reused, held
    made = lmade
    reused = lreused
    held = COUNT(lplans(:)%used)
  END SUBROUTINE haloswap_epoch_lengths_cache

  !> Frees every kept plan (collective), the explicit-length ones too, and zeroes the
  !> statistics; the next call makes them again (for another HALOSWAP_TRANSPORT). Also run at
  !> MPI_FINALIZE.
  SUBROUTINE haloswap_epoch_finalise
    INTEGER :: i
    CALL free_kept
    DO i = 1, nlengths
      CALL free_lengths(i)
    END DO
    seconds = 0.0D0
    calls = 0
    lclock = 0
    lmade = 0
    lreused = 0
    lsetup = 0.0D0
  END SUBROUTINE haloswap_epoch_finalise

  SUBROUTINE free_lengths(i)
    INTEGER, INTENT(IN) :: i
    INTEGER :: rc
    IF (.NOT. lplans(i)%used) RETURN
    CALL finalise_halo_communication(lplans(i)%hs, rc)
    CALL haloswap_decomposition_free(lplans(i)%d, rc)
    IF (lplans(i)%plane /= MPI_COMM_NULL) CALL MPI_COMM_FREE(lplans(i)%plane, rc)
    lplans(i)%plane = MPI_COMM_NULL
    DEALLOCATE(lplans(i)%key)
    lplans(i)%used = .FALSE.
  END SUBROUTINE free_lengths

  SUBROUTINE free_kept
    INTEGER :: i, rc
    DO i = 1, nkept
      IF (.NOT. plans(i)%used) CYCLE
      CALL finalise_halo_communication(plans(i)%hs, rc)
      CALL haloswap_decomposition_free(plans(i)%d, rc)
      plans(i)%used = .FALSE.
    END DO
    last = 0
    IF (ALLOCATED(domain)) DEALLOCATE(domain)
  END SUBROUTINE free_kept

  !****************************************************************************
  ! Plans
  !****************************************************************************

  ! A fill or a sum of an array of the current domain (nx, ny, nz cells, ng ghosts), over the
  ! plan kept for (what, ng, per), made at its first use; all of them are made again when the
  ! domain changes (load balancing), which every rank sees at the same call.
  SUBROUTINE kept_exchange(field, ng, what, per)
    INTEGER, INTENT(IN) :: ng, what, per(3)
    REAL(num), DIMENSION(:,:,:), INTENT(INOUT), TARGET :: field
    TYPE(haloswap_gfield) :: f(1)
    REAL(num), DIMENSION(:,:,:), ALLOCATABLE, TARGET :: copy
    INTEGER :: i, k, ierr
    REAL(KIND(1.D0)) :: t0

    t0 = MPI_WTIME()
    IF (.NOT. ALLOCATED(cell_x_min)) CALL fail(what, 'called before the grid exists ' // &
        '(mpi_initialise creates the domain)', .FALSE.)
    CALL check_shape(SHAPE(field), [nx, ny, nz], ng, what)
    CALL check_domain
    k = 0
    DO i = 1, nkept
      IF (.NOT. plans(i)%used) CYCLE
      IF (plans(i)%what == what .AND. plans(i)%ng == ng .AND. ALL(plans(i)%per == per)) k = i
    END DO
    f(1) = haloswap_gfield(field, [ng, ng, ng], HALOSWAP_LAYOUT_XYZ)
    IF (f(1)%kind < 0) THEN
      ! A section that is not contiguous: exchanged through a contiguous copy.
      ALLOCATE(copy(SIZE(field, 1), SIZE(field, 2), SIZE(field, 3)))
      copy = field
      f(1) = haloswap_gfield(copy, [ng, ng, ng], HALOSWAP_LAYOUT_XYZ)
    END IF
    IF (k == 0) k = make(f, what, ng, per)
    last = k
    IF (what == k_fill) THEN
      ierr = haloswap_dropin_swap(plans(k)%hs, [f(1)%data])
    ELSE
      ierr = haloswap_dropin_reverse(plans(k)%hs, HALOSWAP_OP_SUM, [f(1)%data])
    END IF
    CALL check(ierr, what, .FALSE.)
    IF (ALLOCATED(copy)) field = copy
    CALL account(what, t0)
  END SUBROUTINE kept_exchange

  INTEGER FUNCTION make(f, what, ng, per) RESULT(k)
    TYPE(haloswap_gfield), INTENT(IN) :: f(1)
    INTEGER, INTENT(IN) :: what, ng, per(3)
    TYPE(hs_mpi_comm) :: cart
    INTEGER :: i, ierr
    k = 0
    DO i = nkept, 1, -1
      IF (.NOT. plans(i)%used) k = i
    END DO
    IF (k == 0) CALL fail(what, 'more than 16 kinds of exchange (ng and periodicity)', .TRUE.)
    cart%MPI_VAL = comm
    CALL decomposition(plans(k)%d, cart, [nx, ny, nz], per, [3, 2, 1], ierr)
    IF (ierr == 0) CALL haloswap_geometry_init(plans(k)%hs, plans(k)%d, f, [ng, ng, ng], &
        .TRUE., ierr, sweep_axes=[1, 2, 3])
    CALL check(ierr, what, .TRUE.)
    plans(k)%used = .TRUE.
    plans(k)%what = what
    plans(k)%ng = ng
    plans(k)%per = per
    CALL haloswap_dropin_at_finalize('EPOCH', ierr, haloswap_epoch_report, &
        haloswap_epoch_finalise)
    CALL check(ierr, what, .FALSE.)
  END FUNCTION make

  ! A fill of field (its haloswap_gfield) with the given extents (cells n per grid axis,
  ! ghosts ng) over EPOCH's communicator, or with direction > 0 over the plane of the process
  ! grid normal to it (n(direction) = 0). The plan is looked up by the table every rank of
  ! EPOCH's communicator gathers (the one allgather a plan for these extents needs anyway):
  ! every rank holds that table and has seen the same calls, so all find the plan or all make
  ! it (collective); the cache's clock and signature travel in the table and must agree.
  ! Slices run over p2p: the plane's communicator is a piece of a split, on which RMA windows
  ! and OpenSHMEM cannot be made.
  SUBROUTINE lengths_exchange(field, n, ng, direction)
    TYPE(haloswap_gfield), INTENT(IN) :: field
    INTEGER, INTENT(IN) :: n(3), ng, direction
    TYPE(haloswap_gfield) :: f(1)
    TYPE(hs_mpi_comm) :: cart, plane
    INTEGER, ALLOCATABLE :: table(:,:)
    INTEGER :: ierr, i, k, per(3), world, axes(2), a
    LOGICAL :: remain(3)
    REAL(KIND(1.D0)) :: t0, t1
    t0 = MPI_WTIME()
    f(1) = field
    IF (direction == 0) CALL check_shape(f(1)%shp(1:3), n, ng, k_lengths)
    IF (f(1)%kind < 0) CALL fail(k_lengths, 'do_field_mpi_with_lengths: field is not ' // &
        'contiguous (pass a whole array)', .FALSE.)
    per = field_periodic('do_field_mpi_with_lengths')
    cart%MPI_VAL = comm
    CALL MPI_COMM_RANK(MPI_COMM_WORLD, world, ierr)
    CALL gather_table(cart, n, [3, 2, 1], [world, ng, f(1)%kind, per, direction, lclock, &
        signature()], table)
    lclock = lclock + 1
    IF (ANY(table(nrow_key + 1:, :) /= SPREAD(table(nrow_key + 1:, 1), 2, SIZE(table, 2)))) &
        CALL fail(k_lengths, 'do_field_mpi_with_lengths: the ranks'' plan caches differ ' // &
        '(a call made on some of the communicator''s ranks only)', .TRUE.)
    k = 0
    DO i = 1, nlengths
      IF (.NOT. lplans(i)%used) CYCLE
      IF (SIZE(lplans(i)%key, 2) /= SIZE(table, 2)) CYCLE
      IF (ALL(lplans(i)%key == table(1:nrow_key, :))) k = i
    END DO
    IF (k > 0) THEN
      lreused = lreused + 1
    ELSE
      t1 = MPI_WTIME()
      k = MINLOC(lplans(:)%stamp, 1, .NOT. lplans(:)%used)
      IF (k == 0) THEN   ! full: the least recently used goes (on every rank: same clocks)
        k = MINLOC(lplans(:)%stamp, 1)
        CALL free_lengths(k)
      END IF
      IF (direction == 0) THEN
        CALL decomposition_of(lplans(k)%d, cart, table, per, [3, 2, 1], ierr)
        IF (ierr == 0) CALL haloswap_geometry_init(lplans(k)%hs, lplans(k)%d, f, &
            [ng, ng, ng], .TRUE., ierr, sweep_axes=[1, 2, 3])
      ELSE
        ! EPOCH's Cartesian dimensions are (z, y, x); the plane keeps the two that are not
        ! direction, and its dimension 1 is the slice's second axis.
        axes = PACK([1, 2, 3], [1, 2, 3] /= direction)
        DO a = 1, 3
          remain(4 - a) = a /= direction
        END DO
        CALL MPI_CART_SUB(comm, remain, lplans(k)%plane, ierr)
        plane%MPI_VAL = lplans(k)%plane
        CALL decomposition(lplans(k)%d, plane, n(axes), per(axes), [2, 1], ierr)
        IF (ierr == 0) CALL haloswap_geometry_init(lplans(k)%hs, lplans(k)%d, f, &
            [ng, ng, 0], .TRUE., ierr, transport='p2p', sweep_axes=[1, 2])
      END IF
      CALL check(ierr, k_lengths, .TRUE.)
      lplans(k)%used = .TRUE.
      lplans(k)%key = table(1:nrow_key, :)
      lmade = lmade + 1
      lplans(k)%serial = lclock
      CALL haloswap_dropin_at_finalize('EPOCH', ierr, haloswap_epoch_report, &
        haloswap_epoch_finalise)
      CALL check(ierr, k_lengths, .FALSE.)
      lsetup = lsetup + (MPI_WTIME() - t1)
    END IF
    lplans(k)%stamp = lclock
    ierr = haloswap_dropin_swap(lplans(k)%hs, [f(1)%data])
    CALL check(ierr, k_lengths, .FALSE.)
    CALL account(k_lengths, t0)
  END SUBROUTINE lengths_exchange

  ! The cache's content as one number: which serial sits in which slot.
  INTEGER FUNCTION signature()
    INTEGER :: i
    signature = 0
    DO i = 1, nlengths
      IF (lplans(i)%used) signature = signature + i * MODULO(lplans(i)%serial, 100003)
    END DO
  END FUNCTION signature

  ! The decomposition of the Cartesian communicator cart (EPOCH's, or a plane of it) whose
  ! ranks have cells(:) each, periodic where per(a) /= 0; order(k): the grid axis of cart's
  ! dimension k. Every rank's cells per axis come from all ranks (collective), so it serves
  ! the new split of load balancing as well as the current one.
  SUBROUTINE decomposition(d, cart, cells, per, order, ierr)
    TYPE(haloswap_decomposition), INTENT(INOUT) :: d
    TYPE(hs_mpi_comm), INTENT(IN) :: cart
    INTEGER, INTENT(IN) :: cells(:), per(:), order(:)
    INTEGER, INTENT(OUT) :: ierr
    INTEGER, ALLOCATABLE :: table(:,:)
    CALL gather_table(cart, cells, order, [INTEGER ::], table)
    CALL decomposition_of(d, cart, table, per, order, ierr)
  END SUBROUTINE decomposition

  ! Every rank's row, in cart's rank order: its grid coordinates, cells and the process grid
  ! (3 each, grid axes, zero past SIZE(cells)), then extra(:).
  SUBROUTINE gather_table(cart, cells, order, extra, table)
    TYPE(hs_mpi_comm), INTENT(IN) :: cart
    INTEGER, INTENT(IN) :: cells(:), order(:), extra(:)
    INTEGER, ALLOCATABLE, INTENT(OUT) :: table(:,:)
    INTEGER :: nd, k, np, ierr, dims(3), coords(3)
    INTEGER, ALLOCATABLE :: mine(:)
    LOGICAL :: periods(3)
    nd = SIZE(cells)
    CALL MPI_CART_GET(cart%MPI_VAL, nd, dims, periods, coords, ierr)
    np = PRODUCT(dims(1:nd))
    ALLOCATE(mine(9 + SIZE(extra)), table(9 + SIZE(extra), np))
    mine = 0
    DO k = 1, nd
      mine(order(k)) = coords(k)
      mine(3 + order(k)) = cells(order(k))
      mine(6 + order(k)) = dims(k)
    END DO
    mine(10:) = extra
    CALL MPI_ALLGATHER(mine, SIZE(mine), MPI_INTEGER, table, SIZE(mine), MPI_INTEGER, &
        cart%MPI_VAL, ierr)
  END SUBROUTINE gather_table

  ! The decomposition of cart from its gathered table (gather_table).
  SUBROUTINE decomposition_of(d, cart, table, per, order, ierr)
    TYPE(haloswap_decomposition), INTENT(INOUT) :: d
    TYPE(hs_mpi_comm), INTENT(IN) :: cart
    INTEGER, INTENT(IN) :: table(:,:), per(:), order(:)
    INTEGER, INTENT(OUT) :: ierr
    INTEGER :: nd, k, r, glob(3), procs(3)
    INTEGER, ALLOCATABLE :: ranges(:,:)
    nd = SIZE(order)
    procs(1:nd) = table(7:6 + nd, 1)
    ALLOCATE(ranges(MAXVAL(procs(1:nd)), 3))
    ranges = 0
    DO r = 1, SIZE(table, 2)
      DO k = 1, nd
        ranges(table(k, r) + 1, k) = table(3 + k, r)
      END DO
    END DO
    DO k = 1, nd
      glob(k) = SUM(ranges(1:procs(k), k))
    END DO
    IF (nd == 3) THEN
      CALL haloswap_decomposition_create_ex(d, cart, glob, ierr, procs=procs, periodic=per, &
          axis_order=order, ranges_x=ranges(1:procs(1), 1), ranges_y=ranges(1:procs(2), 2), &
          ranges_z=ranges(1:procs(3), 3))
    ELSE
      CALL haloswap_decomposition_create_ex(d, cart, glob(1:2), ierr, procs=procs(1:2), &
          periodic=per, axis_order=order, ranges_x=ranges(1:procs(1), 1), &
          ranges_y=ranges(1:procs(2), 2))
    END IF
  END SUBROUTINE decomposition_of

  SUBROUTINE account(what, t0)
    INTEGER, INTENT(IN) :: what
    REAL(KIND(1.D0)), INTENT(IN) :: t0
    seconds(what) = seconds(what) + (MPI_WTIME() - t0)
    calls(what) = calls(what) + 1
  END SUBROUTINE account

  ! The kept plans belong to one domain: cell_x_min ... cell_z_max (global, the same on every
  ! rank). A change (load balancing) frees them all, on every rank at the same call.
  SUBROUTINE check_domain
    INTEGER, ALLOCATABLE :: now(:)
    ALLOCATE(now(2 * (SIZE(cell_x_min) + SIZE(cell_y_min) + SIZE(cell_z_min))))
    now = [cell_x_min, cell_x_max, cell_y_min, cell_y_max, cell_z_min, cell_z_max]
    IF (ALLOCATED(domain)) THEN
      IF (SIZE(domain) == SIZE(now)) THEN
        IF (ALL(domain == now)) RETURN
      END IF
      CALL free_kept
    END IF
    CALL MOVE_ALLOC(now, domain)
  END SUBROUTINE check_domain

  SUBROUTINE check_shape(got, n, ng, what)
    INTEGER, INTENT(IN) :: got(3), n(3), ng, what
    IF (ANY(got /= n + 2 * ng)) CALL fail(what, 'the array is ' // TRIM(shape_text(got)) // &
        ' but the domain and ng make ' // TRIM(shape_text(n + 2 * ng)) // &
        ' (nx+2*ng, ny+2*ng, nz+2*ng)', .FALSE.)
  END SUBROUTINE check_shape

  FUNCTION shape_text(s) RESULT(text)
    INTEGER, INTENT(IN) :: s(:)
    CHARACTER(LEN=40) :: text
    IF (SIZE(s) == 3) THEN
      WRITE(text, '("(",i0,",",i0,",",i0,")")') s
    ELSE
      WRITE(text, '("(",i0,",",i0,")")') s
    END IF
  END FUNCTION shape_text

  ! Adds zero to the ng planes from `first` along axis a, over the whole other axes.
  SUBROUTINE add_zero(array, ng, a, first)
    INTEGER, INTENT(IN) :: ng, a, first
    REAL(num), DIMENSION(1-ng:,1-ng:,1-ng:), INTENT(INOUT) :: array
    INTEGER :: last
    last = first + ng - 1
    SELECT CASE (a)
    CASE (1)
      array(first:last,:,:) = array(first:last,:,:) + 0.0_num
    CASE (2)
      array(:,first:last,:) = array(:,first:last,:) + 0.0_num
    CASE DEFAULT
      array(:,:,first:last) = array(:,:,first:last) + 0.0_num
    END SELECT
  END SUBROUTINE add_zero

  !****************************************************************************
  ! EPOCH's boundary rules
  !****************************************************************************

  LOGICAL FUNCTION has_lower(a)
    INTEGER, INTENT(IN) :: a
    SELECT CASE (a)
    CASE (1); has_lower = .NOT. x_min_boundary
    CASE (2); has_lower = .NOT. y_min_boundary
    CASE DEFAULT; has_lower = .NOT. z_min_boundary
    END SELECT
  END FUNCTION has_lower

  LOGICAL FUNCTION has_upper(a)
    INTEGER, INTENT(IN) :: a
    SELECT CASE (a)
    CASE (1); has_upper = .NOT. x_max_boundary
    CASE (2); has_upper = .NOT. y_max_boundary
    CASE DEFAULT; has_upper = .NOT. z_max_boundary
    END SELECT
  END FUNCTION has_upper

  ! A field halo is filled across the domain boundary only where the field boundary is
  ! periodic (EPOCH unpacks there only); both sides of an axis must agree.
  FUNCTION field_periodic(who) RESULT(per)
    CHARACTER(LEN=*), INTENT(IN) :: who
    INTEGER :: per(3)
    per = both_periodic(bc_field, who, 'bc_field')
  END FUNCTION field_periodic

  ! The particle sums cross the domain boundary where the particle boundary is periodic
  ! (EPOCH's bc_allspecies, a species' own where it is mixed).
  FUNCTION particle_periodic(species) RESULT(per)
    INTEGER, INTENT(IN), OPTIONAL :: species
    INTEGER :: per(3), bc(2 * c_ndims), i
    bc = bc_allspecies
    IF (PRESENT(species)) THEN
      DO i = 1, 2 * c_ndims
        IF (bc(i) == c_bc_mixed) bc(i) = species_list(species)%bc_particle(i)
      END DO
    END IF
    per = both_periodic(bc, 'particle_periodic_bcs', 'the particle boundary')
  END FUNCTION particle_periodic

  FUNCTION both_periodic(bc, who, what) RESULT(per)
    INTEGER, INTENT(IN) :: bc(2 * c_ndims)
    CHARACTER(LEN=*), INTENT(IN) :: who, what
    INTEGER :: per(3), a
    CHARACTER(LEN=1), PARAMETER :: axis(3) = ['x', 'y', 'z']
    DO a = 1, 3
      per(a) = COUNT(bc(2 * a - 1:2 * a) == c_bc_periodic)
      IF (per(a) == 1) CALL fail(k_fill, who // ': ' // what // ' is periodic on one ' // &
          axis(a) // ' side only; both sides must be periodic or neither', .TRUE.)
      per(a) = per(a) / 2
    END DO
  END FUNCTION both_periodic

  ! Errors stop through haloswap_dropin_fail (the message on standard error, then EPOCH's
  ! abort). agreed: every rank has the same message (collective setup).
  SUBROUTINE fail(what, msg, agreed)
    INTEGER, INTENT(IN) :: what
    CHARACTER(LEN=*), INTENT(IN) :: msg
    LOGICAL, INTENT(IN) :: agreed
    CALL haloswap_dropin_fail('haloswap_epoch: ' // TRIM(k_name(what)), msg, epoch_abort, &
        agreed)
  END SUBROUTINE fail

  SUBROUTINE check(ierr, what, agreed)
    INTEGER, INTENT(IN) :: ierr, what
    LOGICAL, INTENT(IN) :: agreed
    CALL haloswap_dropin_check(ierr, 'haloswap_epoch: ' // TRIM(k_name(what)), epoch_abort, &
        agreed)
  END SUBROUTINE check

  ! EPOCH's abort path: its error banner on standard output, then abort_code.
  SUBROUTINE epoch_abort(msg)
    CHARACTER(LEN=*), INTENT(IN) :: msg
    PRINT *, '*** ERROR ***'
    PRINT *, msg
    CALL abort_code(c_err_bad_setup)
  END SUBROUTINE epoch_abort

END MODULE haloswap_epoch
