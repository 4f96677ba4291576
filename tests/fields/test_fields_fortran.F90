! Fortran field geometry on every transport: EPIC-shaped arrays (z,y,x) with global-index
! bounds, halo 1 below / 2 above in x and y, z whole with 1/1 not swapped (real(8), real(4),
! integer(4), integer(8), a rank-4 vector, a rank-2 surface field) and Lare3d-shaped arrays
! (x,y,z): cell-centred rho(-1:nx+2,...), node-centred vx(-2:nx+2,...) (upper rank owns the
! shared node), face-centred bx(-2:nx+2,-1:ny+2,-1:nz+2) (lower rank owns the shared face),
! with the remainder to the high ranks and Lare3d's Cartesian axis order.
! Forward: every point against its value from global coordinates (untouched points keep a
! sentinel); reverse (sum): every owned point counts its halo copies on all ranks, computed
! analytically; the swap is also driven through haloswap_swap_test. The combine-order
! arguments (orders, below) against EPIC's and EPOCH's own additions.
program test_fields_fortran
  use mpi_f08
  use haloswap
  use haloswap_geometry
  implicit none
  integer :: rank, nranks, ierr, t, nbad, passed, failed, skipped, allbad
  character(len=:), allocatable :: tname
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  passed = 0; failed = 0; skipped = 0
  do t = 1, haloswap_transport_count()
    tname = haloswap_transport_name_at(t)
    if (tname == "auto" .and. nranks > 2) cycle
    ! auto: the delegated plan is under test, not the choice (one short round per candidate)
    if (tname == "auto") tname = "auto:rounds=1,swaps=1"
    call epic(tname, nbad)
    call tally(nbad, "epic")
    call lare3d(tname, nbad)
    call tally(nbad, "lare3d")
    call orders(tname, nbad)
    call tally(nbad, "orders")
  end do
  if (rank == 0) print '(a,i0,a,i0,a,i0,a,i0,a)', 'test_fields_fortran at ', nranks, ' ranks: ', &
       passed, ' passed, ', failed, ' failed, ', skipped, ' skipped'
  call MPI_Finalize(ierr)
  ! Freed: gfortran keeps main program variables on MAIN__'s stack, which LeakSanitizer's
  ! exit check no longer sees (a held array would be reported as a leak).
  if (allocated(tname)) deallocate(tname)
  if (failed > 0 .or. passed == 0) stop 1

contains

  subroutine tally(nbad, what)
    integer, intent(in) :: nbad
    character(len=*), intent(in) :: what
    call MPI_Allreduce(nbad, allbad, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
    if (allbad < 0) then
      skipped = skipped + 1
    else if (allbad > 0) then
      failed = failed + 1
      if (rank == 0) print '(a,a,a,a)', 'FAIL ', what, ' on ', tname
    else
      passed = passed + 1
    end if
  end subroutine tally

  !> After a plan's init (ierr): .true., with d freed, if it failed; nbad -1 for a transport
  !> not usable here (skipped), else 1, with the reason.
  logical function init_failed(what, d, nbad)
    character(len=*), intent(in) :: what
    type(haloswap_decomposition), intent(inout) :: d
    integer, intent(inout) :: nbad
    init_failed = ierr /= HALOSWAP_OK
    if (.not. init_failed) return
    if (ierr == HALOSWAP_ERR_UNAVAILABLE) then
      nbad = -1
    else
      nbad = 1
      if (rank == 0) print *, what, ' init: ', haloswap_error_message()
    end if
    call haloswap_decomposition_free(d, ierr)
  end function init_failed

  integer function val(gx, gy, gz, f)
    integer, intent(in) :: gx, gy, gz, f
    val = 1 + mod(gx * 7 + gy * 131 + gz * 1009 + f * 17, 100003)
  end function val

  ! Copies of owned cell i (0-based) of n along an axis with depth dl below / dh above
  ! (periodic): itself, the upper neighbour's lower halo, the lower neighbour's upper halo.
  integer function copies(i, n, dl, dh, extra)
    integer, intent(in) :: i, n, dl, dh, extra
    copies = 1
    if (i >= n - dl) copies = copies + 1
    if (i < dh + extra) copies = copies + 1
  end function copies

  ! ---------------------------------------------------------------- EPIC
  subroutine epic(tname, nbad)
    character(len=*), intent(in) :: tname
    integer, intent(out) :: nbad
    integer, parameter :: gx = 12, gy = 10, nz = 4
    type(haloswap_decomposition) :: d
    type(halo_communication_type) :: hs
    type(haloswap_gfield) :: f(6)
    real(8), allocatable :: q(:,:,:), vort(:,:,:,:)
    real(4), allocatable :: b(:,:,:)
    integer(4), allocatable :: cnt(:,:,:)
    integer(8), allocatable :: cnt8(:,:,:)
    real(8), allocatable :: surf(:,:)
    ! per-call arrays (the registered ones must stay untouched), and one of the wrong shape
    real(8), allocatable :: q2(:,:,:), vort2(:,:,:,:), surf2(:,:), qbad(:,:,:)
    real(4), allocatable :: b2(:,:,:)
    integer(4), allocatable :: cnt2(:,:,:)
    integer(8), allocatable :: cnt82(:,:,:)
    type(haloswap_gfield) :: g(6)
    integer :: ox, oy, lx, ly, i, j, k, c, a, want, wx, wy, sx, nxo, sy, nyo
    real(8) :: t0
    logical :: own, wr, done
    nbad = 0
    call haloswap_decomposition_create(d, MPI_COMM_WORLD, [gx, gy, nz], ierr, &
         procs=[0, 0, 1], periodic=[1, 1, 0])
    if (ierr /= HALOSWAP_OK) then
      nbad = 1
      return
    end if
    ox = haloswap_global_offset(d, 1); lx = haloswap_local_extent(d, 1)
    oy = haloswap_global_offset(d, 2); ly = haloswap_local_extent(d, 2)
    ! EPIC: (lo(3)-1:hi(3)+1, lo(2)-1:hi(2)+2, lo(1)-1:hi(1)+2) with global indices
    allocate(q(-1:nz, oy-1:oy+ly+1, ox-1:ox+lx+1), b(-1:nz, oy-1:oy+ly+1, ox-1:ox+lx+1))
    allocate(cnt(-1:nz, oy-1:oy+ly+1, ox-1:ox+lx+1), cnt8(-1:nz, oy-1:oy+ly+1, ox-1:ox+lx+1))
    allocate(vort(-1:nz, oy-1:oy+ly+1, ox-1:ox+lx+1, 3), surf(oy-1:oy+ly+1, ox-1:ox+lx+1))
    f = epic_fields(q, b, cnt, cnt8, vort, surf)
    do i = 1, 6
      do a = 1, 2
        call haloswap_field_set_depth(f(i), a, 1, 2)
      end do
    end do
    call haloswap_geometry_init(hs, d, f, [1, 1, 0], .true., ierr, transport=tname)
    if (init_failed('epic', d, nbad)) return
    ! forward: owned points their value, everything else a sentinel
    do i = ox - 1, ox + lx + 1
      do j = oy - 1, oy + ly + 1
        own = i >= ox .and. i < ox + lx .and. j >= oy .and. j < oy + ly
        surf(j, i) = merge(real(val(i, j, 0, 6), 8), -7d0, own)
        do k = -1, nz
          own = i >= ox .and. i < ox + lx .and. j >= oy .and. j < oy + ly .and. k >= 0 .and. k < nz
          q(k, j, i) = merge(real(val(i, j, k, 1), 8), -7d0, own)
          b(k, j, i) = merge(real(val(i, j, k, 2), 4), -7.0, own)
          cnt(k, j, i) = merge(val(i, j, k, 3), -7, own)
          cnt8(k, j, i) = merge(int(val(i, j, k, 4), 8), -7_8, own)
          do c = 1, 3
            vort(k, j, i, c) = merge(real(val(i, j, k, 4 + c), 8), -7d0, own)
          end do
        end do
      end do
    end do
    call initiate_nonblocking_halo_swap(hs, ierr)
    done = .false.
    t0 = MPI_Wtime()   ! every transport reports done in the test call; bounded, not a hang
    do while (ierr == HALOSWAP_OK .and. .not. done .and. MPI_Wtime() - t0 < 60d0)
      call haloswap_swap_test(hs, done, ierr)
    end do
    if (.not. done) nbad = nbad + 1
    if (ierr == HALOSWAP_OK) call complete_nonblocking_halo_swap(hs, ierr)
    if (ierr /= HALOSWAP_OK) nbad = nbad + 1
    do i = ox - 1, ox + lx + 1
      do j = oy - 1, oy + ly + 1
        wx = modulo(i, gx); wy = modulo(j, gy)   ! periodic x, y: every point is within depth
        if (surf(j, i) /= real(val(wx, wy, 0, 6), 8)) nbad = nbad + 1
        do k = -1, nz
          wr = k >= 0 .and. k < nz                ! z not swapped: z halos keep the sentinel
          want = merge(val(wx, wy, k, 1), -7, wr)
          if (q(k, j, i) /= real(want, 8)) nbad = nbad + 1
          if (b(k, j, i) /= real(merge(val(wx, wy, k, 2), -7, wr), 4)) nbad = nbad + 1
          if (cnt(k, j, i) /= merge(val(wx, wy, k, 3), -7, wr)) nbad = nbad + 1
          if (cnt8(k, j, i) /= int(merge(val(wx, wy, k, 4), -7, wr), 8)) nbad = nbad + 1
          do c = 1, 3
            if (vort(k, j, i, c) /= real(merge(val(wx, wy, k, 4 + c), -7, wr), 8)) nbad = nbad + 1
          end do
        end do
      end do
    end do
    if (nbad > 0) print '(a,i0,a,i0,a)', '[rank ', rank, '] epic forward: ', nbad, ' wrong points'
    ! reverse (sum): owned 0, every halo copy 1 -> each owned point counts its copies
    cnt = -5
    surf = 0
    call mark_copies(ox, oy, lx, ly, nz, cnt, surf)
    q = 0; b = 0; cnt8 = 0; vort = 0
    call haloswap_reverse(hs, HALOSWAP_OP_SUM, ierr)
    if (ierr /= HALOSWAP_OK) nbad = nbad + 1
    do i = ox, ox + lx - 1
      do j = oy, oy + ly - 1
        want = copies(i - ox, lx, 1, 2, 0) * copies(j - oy, ly, 1, 2, 0) - 1
        if (surf(j, i) /= real(want, 8)) nbad = nbad + 1
        do k = 0, nz - 1
          if (cnt(k, j, i) /= want) nbad = nbad + 1
        end do
      end do
    end do
    if (any(cnt(-1, :, :) /= -5) .or. any(cnt(nz, :, :) /= -5)) nbad = nbad + 1
    ! accumulate-then-fill: every point (z interior) ends with its owner's count
    cnt = -5
    call mark_copies(ox, oy, lx, ly, nz, cnt)
    call haloswap_accumulate_fill(hs, HALOSWAP_OP_SUM, ierr)
    if (ierr /= HALOSWAP_OK) nbad = nbad + 1
    do i = ox - 1, ox + lx + 1
      do j = oy - 1, oy + ly + 1
        call owner_range(modulo(i, gx), gx, haloswap_procs(d, 1), sx, nxo)
        call owner_range(modulo(j, gy), gy, haloswap_procs(d, 2), sy, nyo)
        want = copies(modulo(i, gx) - sx, nxo, 1, 2, 0) * copies(modulo(j, gy) - sy, nyo, 1, 2, 0) - 1
        if (any(cnt(0:nz-1, j, i) /= want)) nbad = nbad + 1
      end do
    end do
    ! reverse with per-call arrays: the same sums land in the per-call arrays; the registered
    ! ones keep what they hold; a per-call array of the wrong shape is an error, nothing moves
    allocate(q2, mold=q); allocate(b2, mold=b); allocate(cnt2, mold=cnt)
    allocate(cnt82, mold=cnt8); allocate(vort2, mold=vort); allocate(surf2, mold=surf)
    allocate(qbad(-1:nz, oy-1:oy+ly+1, ox-1:ox+lx+2))
    q2 = 0; b2 = 0; cnt82 = 0; vort2 = 0; cnt2 = -5; surf2 = 0; qbad = 0
    call mark_copies(ox, oy, lx, ly, nz, cnt2, surf2)
    cnt = -9
    g = epic_fields(q2, b2, cnt2, cnt82, vort2, surf2)
    call haloswap_reverse(hs, HALOSWAP_OP_SUM, ierr, arrays=g)
    if (ierr /= HALOSWAP_OK) then
      nbad = nbad + 1
      if (rank == 0) print *, 'epic per-call reverse: ', haloswap_error_message()
    end if
    if (any(cnt /= -9)) nbad = nbad + 1
    do i = ox, ox + lx - 1
      do j = oy, oy + ly - 1
        want = copies(i - ox, lx, 1, 2, 0) * copies(j - oy, ly, 1, 2, 0) - 1
        if (surf2(j, i) /= real(want, 8)) nbad = nbad + 1
        if (any(cnt2(0:nz-1, j, i) /= want)) nbad = nbad + 1
      end do
    end do
    g(1) = haloswap_gfield(qbad, [1, 1, 1])
    call haloswap_reverse(hs, HALOSWAP_OP_SUM, ierr, arrays=g)
    if (ierr /= HALOSWAP_ERR_ARG .or. index(haloswap_error_message(), "arrays(1)") == 0) then
      nbad = nbad + 1
      if (rank == 0) print *, 'epic wrong-shape per-call reverse: ierr ', ierr, ' ', &
           trim(haloswap_error_message())
    end if
    if (any(qbad /= 0)) nbad = nbad + 1
    call haloswap_accumulate_fill(hs, HALOSWAP_OP_SUM, ierr, arrays=g(1:5))
    if (ierr /= HALOSWAP_ERR_ARG) nbad = nbad + 1
    if (nbad > 0) print '(a,i0,a,i0,a)', '[rank ', rank, '] epic: ', nbad, ' wrong points'
    call finalise_halo_communication(hs, ierr)
    call haloswap_decomposition_free(d, ierr)
  end subroutine epic

  ! The default split (remainder to the low ranks) of n cells over p ranks: start and length
  ! of the owner of cell g (0 and 1 if none owns it).
  subroutine owner_range(g, n, p, start, len)
    integer, intent(in) :: g, n, p
    integer, intent(out) :: start, len
    integer :: r, q, rem
    q = n / p; rem = mod(n, p)
    do r = 0, p - 1
      start = r * q + min(r, rem)
      len = q + merge(1, 0, r < rem)
      if (g >= start .and. g < start + len) return
    end do
    start = 0
    len = 1
  end subroutine owner_range

  ! EPIC's six fields as one plan's (or one call's) gfields, halo 1 on every axis (z of surf
  ! and vort's component axis none).
  function epic_fields(q, b, cnt, cnt8, vort, surf) result(f)
    real(8), intent(inout), target :: q(:,:,:), vort(:,:,:,:), surf(:,:)
    real(4), intent(inout), target :: b(:,:,:)
    integer(4), intent(inout), target :: cnt(:,:,:)
    integer(8), intent(inout), target :: cnt8(:,:,:)
    type(haloswap_gfield) :: f(6)
    f = [haloswap_gfield(q, [1, 1, 1]), haloswap_gfield(b, [1, 1, 1]), &
         haloswap_gfield(cnt, [1, 1, 1]), haloswap_gfield(cnt8, [1, 1, 1]), &
         haloswap_gfield(vort, [1, 1, 1, 0]), haloswap_gfield(surf, [1, 1])]
  end function epic_fields

  ! The reverse's input: every owned column 0, every halo copy 1 (cnt's z interior, and surf).
  subroutine mark_copies(ox, oy, lx, ly, nz, cnt, surf)
    integer, intent(in) :: ox, oy, lx, ly, nz
    integer(4), intent(inout) :: cnt(-1:, oy-1:, ox-1:)
    real(8), intent(inout), optional :: surf(oy-1:, ox-1:)
    integer :: i, j
    logical :: own
    do i = ox - 1, ox + lx + 1
      do j = oy - 1, oy + ly + 1
        own = i >= ox .and. i < ox + lx .and. j >= oy .and. j < oy + ly
        if (present(surf)) surf(j, i) = merge(0d0, 1d0, own)
        cnt(0:nz-1, j, i) = merge(0, 1, own)
      end do
    end do
  end subroutine mark_copies

  ! ---------------------------------------------------------------- Lare3d
  subroutine lare3d(tname, nbad)
    character(len=*), intent(in) :: tname
    integer, intent(out) :: nbad
    integer, parameter :: gn(3) = [10, 9, 8]
    type(haloswap_decomposition) :: d
    type(halo_communication_type) :: hs
    type(haloswap_gfield) :: f(3)
    real(8), allocatable :: rho(:,:,:), vx(:,:,:)
    real(4), allocatable :: bx(:,:,:)
    integer :: n(3), o(3), i, j, k, a, c0(3), c1(3)
    nbad = 0
    ! Lare3d: all axes periodic, remainder to the high ranks, dims = (nprocz, nprocy, nprocx)
    call haloswap_decomposition_create_ex(d, MPI_COMM_WORLD, gn, ierr, procs=[0, 0, 0], &
         periodic=[1, 1, 1], remainder_high=.true., axis_order=[3, 2, 1])
    if (ierr /= HALOSWAP_OK) then
      if (rank == 0) print *, 'lare3d decomposition: ', haloswap_error_message()
      nbad = 1
      return
    end if
    do a = 1, 3
      n(a) = haloswap_local_extent(d, a)
      o(a) = haloswap_global_offset(d, a)
    end do
    allocate(rho(-1:n(1)+2, -1:n(2)+2, -1:n(3)+2), vx(-2:n(1)+2, -2:n(2)+2, -2:n(3)+2))
    allocate(bx(-2:n(1)+2, -1:n(2)+2, -1:n(3)+2))
    f(1) = haloswap_gfield(rho, [2, 2, 2], layout=HALOSWAP_LAYOUT_XYZ)
    f(2) = haloswap_gfield(vx, [2, 2, 2], layout=HALOSWAP_LAYOUT_XYZ)
    f(3) = haloswap_gfield(bx, [2, 2, 2], layout=HALOSWAP_LAYOUT_XYZ)
    do a = 1, 3
      call haloswap_field_set_stagger(f(2), a, HALOSWAP_OWNER_UPPER)
    end do
    call haloswap_field_set_stagger(f(3), 1, HALOSWAP_OWNER_LOWER)
    call haloswap_geometry_init(hs, d, f, [2, 2, 2], .true., ierr, transport=tname)
    if (init_failed('lare3d', d, nbad)) return
    ! owned: rho cells 1..n; vx nodes 0..n-1 (node n is the upper rank's); bx faces 1..n on x
    rho = -7; vx = -7; bx = -7
    do k = 1, n(3)
      do j = 1, n(2)
        do i = 1, n(1)
          rho(i, j, k) = val(o(1) + i - 1, o(2) + j - 1, o(3) + k - 1, 1)
          bx(i, j, k) = real(val(modulo(o(1) + i, gn(1)), o(2) + j - 1, o(3) + k - 1, 3), 4)
          vx(i - 1, j - 1, k - 1) = val(o(1) + i - 1, o(2) + j - 1, o(3) + k - 1, 2)
        end do
      end do
    end do
    call blocking_halo_swap(hs, ierr)
    if (ierr /= HALOSWAP_OK) nbad = nbad + 1
    ! every allocated point is within depth (+ the shared plane): all hold their global value
    ! (cells: global index offset + i - 1; nodes and faces: offset + i)
    do k = -2, n(3) + 2
      do j = -2, n(2) + 2
        do i = -2, n(1) + 2
          c0 = [modulo(o(1) + i - 1, gn(1)), modulo(o(2) + j - 1, gn(2)), modulo(o(3) + k - 1, gn(3))]
          c1 = [modulo(o(1) + i, gn(1)), modulo(o(2) + j, gn(2)), modulo(o(3) + k, gn(3))]
          if (vx(i, j, k) /= val(c1(1), c1(2), c1(3), 2)) call bad(nbad, 'vx', i, j, k)
          if (j < -1 .or. k < -1) cycle
          if (bx(i, j, k) /= real(val(c1(1), c0(2), c0(3), 3), 4)) call bad(nbad, 'bx', i, j, k)
          if (i < -1) cycle
          if (rho(i, j, k) /= val(c0(1), c0(2), c0(3), 1)) call bad(nbad, 'rho', i, j, k)
        end do
      end do
    end do
    if (nbad > 0) print '(a,i0,a,i0,a)', '[rank ', rank, '] lare3d forward: ', nbad, ' wrong points'
    ! reverse on the node field: owned nodes 0, others 1 -> copies - 1 per owned node
    vx = 1
    vx(0:n(1)-1, 0:n(2)-1, 0:n(3)-1) = 0
    call haloswap_reverse(hs, HALOSWAP_OP_SUM, ierr)
    if (ierr /= HALOSWAP_OK) nbad = nbad + 1
    do k = 0, n(3) - 1
      do j = 0, n(2) - 1
        do i = 0, n(1) - 1
          if (vx(i, j, k) /= real(copies(i, n(1), 2, 2, 1) * copies(j, n(2), 2, 2, 1) * &
               copies(k, n(3), 2, 2, 1) - 1, 8)) nbad = nbad + 1
        end do
      end do
    end do
    if (nbad > 0) print '(a,i0,a,i0,a)', '[rank ', rank, '] lare3d: ', nbad, ' wrong points'
    call finalise_halo_communication(hs, ierr)
    call haloswap_decomposition_free(d, ierr)
  end subroutine lare3d

  ! ---------------------------------------------------------------- combine orders
  ! The optional order arguments of haloswap_geometry_init, on one rank with periodic x and y
  ! (each rank its own decomposition over MPI_COMM_SELF), against the codes' own additions
  ! written out with array sections: EPIC's field_buffer_to_interior (order_offsets: W, E, S,
  ! N, NE, SE, SW, NW; halo 1 below, 2 above) and EPOCH's particle_periodic_bcs (sweep_axes:
  ! x, then y over the x ghosts; ghosts 2). Every point bit for bit (the sweep leaves partial
  ! sums in the ghosts, EPIC's order leaves the halos alone); the canonical order gives other
  ! bits somewhere. Then the arguments' errors.
  subroutine orders(tname, nbad)
    character(len=*), intent(in) :: tname
    integer, intent(out) :: nbad
    integer, parameter :: nx = 6, ny = 5, nz = 3
    integer, parameter :: epic_order(3, 8) = reshape([-1, 0, 0, 1, 0, 0, 0, -1, 0, 0, 1, 0, &
         1, 1, 0, 1, -1, 0, -1, -1, 0, -1, 1, 0], [3, 8])
    type(haloswap_decomposition) :: d
    type(halo_communication_type) :: he, hc, hw
    type(haloswap_gfield) :: f(1)
    real(8) :: q(0:nz - 1, -1:ny + 1, -1:nx + 1), qc(0:nz - 1, -1:ny + 1, -1:nx + 1)
    real(8) :: want(0:nz - 1, -1:ny + 1, -1:nx + 1)
    real(8) :: e(-2:nx + 1, -2:ny + 1, 0:nz - 1), ewant(-2:nx + 1, -2:ny + 1, 0:nz - 1)
    integer :: ndiff
    nbad = 0
    call haloswap_decomposition_create(d, MPI_COMM_SELF, [nx, ny, nz], ierr, procs=[1, 1, 1], &
         periodic=[1, 1, 0])
    if (ierr /= HALOSWAP_OK) then
      nbad = 1
      return
    end if
    ! EPIC: q(z, y, x), halo 1 below / 2 above in x and y
    f(1) = haloswap_gfield(q, [0, 1, 1])
    call haloswap_field_set_depth(f(1), HALOSWAP_X, 1, 2)
    call haloswap_field_set_depth(f(1), HALOSWAP_Y, 1, 2)
    call haloswap_geometry_init(he, d, f, [0, 0, 0], .true., ierr, transport=tname, &
         order_offsets=epic_order)
    if (ierr == HALOSWAP_OK) call haloswap_geometry_init(hc, d, f, [0, 0, 0], .true., ierr, &
         transport=tname)
    if (init_failed('orders', d, nbad)) return
    call set_or_check(q, -1, nx, ny, nz, .false.)
    want = q
    qc = q
    want(:, 0:ny-1, 0:1) = want(:, 0:ny-1, 0:1) + want(:, 0:ny-1, nx:nx+1)       ! W
    want(:, 0:ny-1, nx-1) = want(:, 0:ny-1, nx-1) + want(:, 0:ny-1, -1)          ! E
    want(:, 0:1, 0:nx-1) = want(:, 0:1, 0:nx-1) + want(:, ny:ny+1, 0:nx-1)       ! S
    want(:, ny-1, 0:nx-1) = want(:, ny-1, 0:nx-1) + want(:, -1, 0:nx-1)          ! N
    want(:, ny-1, nx-1) = want(:, ny-1, nx-1) + want(:, -1, -1)                  ! NE
    want(:, 0:1, nx-1) = want(:, 0:1, nx-1) + want(:, ny:ny+1, -1)               ! SE
    want(:, 0:1, 0:1) = want(:, 0:1, 0:1) + want(:, ny:ny+1, nx:nx+1)            ! SW
    want(:, ny-1, 0:1) = want(:, ny-1, 0:1) + want(:, -1, nx:nx+1)               ! NW
    call haloswap_reverse(he, HALOSWAP_OP_SUM, ierr)
    if (ierr /= HALOSWAP_OK) nbad = nbad + 1
    ndiff = 0
    call set_or_check(q, -1, nx, ny, nz, .false., want, 'EPIC-order reverse', nbad)
    q = qc
    call haloswap_reverse(hc, HALOSWAP_OP_SUM, ierr)
    ndiff = count(q /= want)
    if (ierr /= HALOSWAP_OK .or. ndiff == 0) call bad(nbad, 'canonical order gives EPIC''s bits', &
         ndiff, 0, 0)
    call finalise_halo_communication(he, ierr)
    call finalise_halo_communication(hc, ierr)
    ! EPOCH: e(x, y, z) with 2 ghosts, swept x then y
    f(1) = haloswap_gfield(e, [2, 2, 0], layout=HALOSWAP_LAYOUT_XYZ)
    call haloswap_geometry_init(hw, d, f, [2, 2, 0], .true., ierr, transport=tname, &
         sweep_axes=[HALOSWAP_X, HALOSWAP_Y])
    if (ierr /= HALOSWAP_OK) call bad(nbad, 'sweep plan', ierr, 0, 0)
    call set_or_check(e, -2, nx, ny, nz, .true.)
    ewant = e
    ewant(0:1, :, :) = ewant(0:1, :, :) + ewant(nx:nx+1, :, :)
    ewant(nx-2:nx-1, :, :) = ewant(nx-2:nx-1, :, :) + ewant(-2:-1, :, :)
    ewant(:, 0:1, :) = ewant(:, 0:1, :) + ewant(:, ny:ny+1, :)
    ewant(:, ny-2:ny-1, :) = ewant(:, ny-2:ny-1, :) + ewant(:, -2:-1, :)
    if (ierr == HALOSWAP_OK) call haloswap_reverse(hw, HALOSWAP_OP_SUM, ierr)
    if (ierr /= HALOSWAP_OK) call bad(nbad, 'sweep reverse', ierr, 0, 0)
    call set_or_check(e, -2, nx, ny, nz, .true., ewant, 'EPOCH sweep', nbad)
    call finalise_halo_communication(hw, ierr)
    ! the arguments' errors
    call haloswap_geometry_init(hw, d, f, [2, 2, 0], .true., ierr, transport=tname, &
         order_offsets=epic_order, sweep_axes=[1, 2])
    call expect_error(nbad, 'both given')
    call haloswap_geometry_init(hw, d, f, [2, 2, 0], .true., ierr, transport=tname, &
         sweep_axes=[1, 4])
    call expect_error(nbad, 'sweep_axes(2) = 4, must be 1..3')
    call haloswap_geometry_init(hw, d, f, [2, 2, 0], .true., ierr, transport=tname, &
         order_offsets=epic_order(1:2, :))
    call expect_error(nbad, 'order_offsets has 2 rows')
    call haloswap_decomposition_free(d, ierr)
  end subroutine orders

  ! The points (i, j, k) of field f, x and y from lo to n + 1 and z 0..nz-1, stored f(k, j, i)
  ! or, with xyz, f(i, j, k): set to mixed (interior 0 <= i < nx, 0 <= j < ny), or, with want,
  ! compared with want's bit for bit, in that order (bad: each wrong point, named what).
  subroutine set_or_check(f, lo, nx, ny, nz, xyz, want, what, nbad)
    real(8), intent(inout) :: f(:, :, :)
    integer, intent(in) :: lo, nx, ny, nz
    logical, intent(in) :: xyz
    real(8), intent(in), optional :: want(:, :, :)
    character(len=*), intent(in), optional :: what
    integer, intent(inout), optional :: nbad
    integer :: i, j, k, p(3)
    do i = lo, nx + 1
      do j = lo, ny + 1
        do k = 0, nz - 1
          p = merge([i - lo + 1, j - lo + 1, k + 1], [k + 1, j - lo + 1, i - lo + 1], xyz)
          if (.not. present(want)) then
            f(p(1), p(2), p(3)) = mixed(i, j, k, i >= 0 .and. i < nx .and. j >= 0 .and. j < ny)
          else if (.not. same(f(p(1), p(2), p(3)), want(p(1), p(2), p(3)))) then
            call bad(nbad, what, i, j, k)
          end if
        end do
      end do
    end do
  end subroutine set_or_check

  ! Interior values in [1, 2), halo values of 53 significant bits scaled by 2^-1..2^-5: the
  ! order of additions shows in the last bits.
  real(8) function mixed(i, j, k, inside)
    integer, intent(in) :: i, j, k
    logical, intent(in) :: inside
    integer(8) :: h
    h = int(i + 7, 8) * 1000003_8 + int(j + 7, 8) * 10007_8 + int(k, 8) * 101_8
    h = mod(h * 2654435761_8 + 1442695_8, 4503599627370496_8)
    if (inside) then
      mixed = 1.0d0 + real(h, 8) * 2.0d0**(-52)
    else
      mixed = (1.0d0 + real(h, 8) * 2.0d0**(-52)) * 2.0d0**(-1 - int(mod(h, 5_8)))
    end if
  end function mixed
  logical function same(a, b)
    real(8), intent(in) :: a, b
    same = transfer(a, 1_8) == transfer(b, 1_8)
  end function same
  ! The last call failed with HALOSWAP_ERR_ARG and a message containing needle.
  subroutine expect_error(nbad, needle)
    integer, intent(inout) :: nbad
    character(len=*), intent(in) :: needle
    if (ierr /= HALOSWAP_ERR_ARG .or. index(haloswap_error_message(), needle) == 0) then
      if (nbad < 3) print '(a,i0,a,a,a,i0,a,a)', '[rank ', rank, '] wanted an error with "', &
           needle, '", got ', ierr, ': ', haloswap_error_message()
      nbad = nbad + 1
    end if
  end subroutine expect_error

  subroutine bad(nbad, what, i, j, k)
    integer, intent(inout) :: nbad
    character(len=*), intent(in) :: what
    integer, intent(in) :: i, j, k
    if (nbad < 3) print '(a,i0,a,a,a,3(1x,i0))', '[rank ', rank, '] wrong ', what, ' at', i, j, k
    nbad = nbad + 1
  end subroutine bad

end program test_fields_fortran
