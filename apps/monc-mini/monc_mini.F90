! monc-mini-f: the Fortran twin of monc-mini, built on the haloswap module with MONC's
! procedure names and MONC-shaped arrays field(z,y,x) with a halo of 2 in x and y.
! Every expression is the C version's, with the same grouping, so the two give the same bits
! (docs/mini-apps.md). Interior indices run 1..n, as in MONC.
module monc_mini_kernels
  use, intrinsic :: iso_c_binding
  implicit none
  private
  integer, parameter, public :: dp = c_double, H = 2
  real(dp), parameter, public :: DT = 0.1_dp

  type, public :: field3
     real(dp), allocatable :: d(:,:,:)
  end type field3

  public :: init_value, advect, coefficients, diffuse, jacobi, update_fields

contains

  !> Initial value in [0,1) from global (0-based) coordinates: integer arithmetic only.
  real(dp) function init_value(gi, gj, k, fid)
    integer, intent(in) :: gi, gj, k, fid
    integer(c_int64_t) :: x
    integer :: r
    x = modulo(int(gi, c_int64_t) * 7919_c_int64_t + int(gj, c_int64_t) * 104729_c_int64_t + &
         int(k, c_int64_t) * 1299709_c_int64_t + int(fid, c_int64_t) * 15485863_c_int64_t, &
         2147483647_c_int64_t)
    do r = 1, 3
      x = modulo(48271_c_int64_t * x + 11_c_int64_t, 2147483647_c_int64_t)
    end do
    init_value = real(x, dp) / 2147483647.0_dp
  end function init_value

  pure real(dp) function vanleer(up, loc)
    real(dp), intent(in) :: up, loc
    real(dp) :: ab
    ab = up * loc
    if (ab > 0.0_dp) then
      vanleer = (2.0_dp * ab) / (up + loc)
    else
      vanleer = 0.0_dp
    end if
  end function vanleer

  pure real(dp) function tvd_flux(vel, smm, sm, sc, scp)
    real(dp), intent(in) :: vel, smm, sm, sc, scp
    real(dp) :: cr
    if (vel >= 0.0_dp) then
      cr = vel * DT
      tvd_flux = vel * (sm + (0.5_dp * (1.0_dp - cr)) * vanleer(sm - smm, sc - sm))
    else
      cr = -(vel * DT)
      tvd_flux = vel * (sc - (0.5_dp * (1.0_dp - cr)) * vanleer(scp - sc, sc - sm))
    end if
  end function tvd_flux

  !> TVD advection tendency of s by (u, v, w): reads the whole depth-2 halo.
  subroutine advect(nx, ny, nz, u, v, w, s, t)
    integer, intent(in) :: nx, ny, nz
    real(dp), intent(in) :: u(:,-1:,-1:), v(:,-1:,-1:), w(:,-1:,-1:), s(:,-1:,-1:)
    real(dp), intent(inout) :: t(:,-1:,-1:)
    integer :: i, j, k
    real(dp) :: fxm, fxp, fym, fyp, fzm, fzp, smm, scp
    do i = 1, nx
      do j = 1, ny
        do k = 1, nz
          fxm = tvd_flux(0.5_dp * (u(k,j,i-1) + u(k,j,i)), s(k,j,i-2), s(k,j,i-1), s(k,j,i), &
               s(k,j,i+1))
          fxp = tvd_flux(0.5_dp * (u(k,j,i) + u(k,j,i+1)), s(k,j,i-1), s(k,j,i), s(k,j,i+1), &
               s(k,j,i+2))
          fym = tvd_flux(0.5_dp * (v(k,j-1,i) + v(k,j,i)), s(k,j-2,i), s(k,j-1,i), s(k,j,i), &
               s(k,j+1,i))
          fyp = tvd_flux(0.5_dp * (v(k,j,i) + v(k,j+1,i)), s(k,j-1,i), s(k,j,i), s(k,j+1,i), &
               s(k,j+2,i))
          fzm = 0.0_dp
          fzp = 0.0_dp
          if (k > 1) then
            smm = s(k-1,j,i)
            if (k > 2) smm = s(k-2,j,i)
            scp = s(k,j,i)
            if (k < nz) scp = s(k+1,j,i)
            fzm = tvd_flux(0.5_dp * (w(k-1,j,i) + w(k,j,i)), smm, s(k-1,j,i), s(k,j,i), scp)
          end if
          if (k < nz) then
            smm = s(k,j,i)
            if (k > 1) smm = s(k-1,j,i)
            scp = s(k+1,j,i)
            if (k + 1 < nz) scp = s(k+2,j,i)
            fzp = tvd_flux(0.5_dp * (w(k,j,i) + w(k+1,j,i)), smm, s(k,j,i), s(k+1,j,i), scp)
          end if
          t(k,j,i) = -(((fxp - fxm) + (fyp - fym)) + (fzp - fzm))
        end do
      end do
    end do
  end subroutine advect

  !> Sub-grid coefficients and the pressure source; returns the local maximum |divergence|.
  subroutine coefficients(nx, ny, nz, u, v, w, visc, diff, rhs, divmax)
    integer, intent(in) :: nx, ny, nz
    real(dp), intent(in) :: u(:,-1:,-1:), v(:,-1:,-1:), w(:,-1:,-1:)
    real(dp), intent(inout) :: visc(:,-1:,-1:), diff(:,-1:,-1:), rhs(:,-1:,-1:)
    real(dp), intent(out) :: divmax
    integer :: i, j, k
    real(dp) :: dudx, dvdy, dudy, dvdx, wp, wm, dwdz, shear, def, div
    divmax = 0.0_dp
    do i = 1, nx
      do j = 1, ny
        do k = 1, nz
          dudx = u(k,j,i+1) - u(k,j,i-1)
          dvdy = v(k,j+1,i) - v(k,j-1,i)
          dudy = u(k,j+1,i) - u(k,j-1,i)
          dvdx = v(k,j,i+1) - v(k,j,i-1)
          wp = 0.0_dp
          if (k < nz) wp = w(k+1,j,i)
          wm = 0.0_dp
          if (k > 1) wm = w(k-1,j,i)
          dwdz = wp - wm
          shear = dudy + dvdx
          def = ((dudx * dudx + dvdy * dvdy) + dwdz * dwdz) + 0.5_dp * (shear * shear)
          visc(k,j,i) = 0.01_dp + 0.04_dp * (def / (1.0_dp + def))
          diff(k,j,i) = 0.01_dp + 0.05_dp * (def / (0.5_dp + def))
          div = 0.5_dp * ((dudx + dvdy) + dwdz)
          rhs(k,j,i) = div / DT
          if (abs(div) > divmax) divmax = abs(div)
        end do
      end do
    end do
  end subroutine coefficients

  !> Diffusion of the previous time level zs with coefficient coef, added to the tendency.
  subroutine diffuse(nx, ny, nz, coef, zs, t)
    integer, intent(in) :: nx, ny, nz
    real(dp), intent(in) :: coef(:,-1:,-1:), zs(:,-1:,-1:)
    real(dp), intent(inout) :: t(:,-1:,-1:)
    integer :: i, j, k
    real(dp) :: kb, lap, zm, zp, lapz
    do i = 1, nx
      do j = 1, ny
        do k = 1, nz
          kb = (4.0_dp * coef(k,j,i) + ((coef(k,j,i-1) + coef(k,j,i+1)) + (coef(k,j-1,i) + coef(k,j+1,i)))) &
               * 0.125_dp
          lap = ((4.0_dp * ((zs(k,j,i-1) + zs(k,j,i+1)) + (zs(k,j-1,i) + zs(k,j+1,i))) + &
               ((zs(k,j-1,i-1) + zs(k,j+1,i+1)) + (zs(k,j+1,i-1) + zs(k,j-1,i+1)))) - &
               20.0_dp * zs(k,j,i)) / 6.0_dp
          zm = zs(k,j,i)
          if (k > 1) zm = zs(k-1,j,i)
          zp = zs(k,j,i)
          if (k < nz) zp = zs(k+1,j,i)
          lapz = (zm + zp) - 2.0_dp * zs(k,j,i)
          t(k,j,i) = t(k,j,i) + kb * (lap + lapz)
        end do
      end do
    end do
  end subroutine diffuse

  !> One Jacobi sweep for lap(p) = rhs over columns i0..i1, j0..j1 (calc_Ax's shape).
  subroutine jacobi(nz, p, q, rhs, i0, i1, j0, j1)
    integer, intent(in) :: nz, i0, i1, j0, j1
    real(dp), intent(in) :: p(:,-1:,-1:), rhs(:,-1:,-1:)
    real(dp), intent(inout) :: q(:,-1:,-1:)
    integer :: i, j, k
    real(dp) :: pm, pp
    do i = i0, i1
      do j = j0, j1
        do k = 1, nz
          pm = p(k,j,i)
          if (k > 1) pm = p(k-1,j,i)
          pp = p(k,j,i)
          if (k < nz) pp = p(k+1,j,i)
          q(k,j,i) = ((((p(k,j,i-1) + p(k,j,i+1)) + (p(k,j-1,i) + p(k,j+1,i))) + (pm + pp)) - &
               rhs(k,j,i)) / 6.0_dp
        end do
      end do
    end do
  end subroutine jacobi

  !> new = old + dt*tendency (- dt*grad p for the flow); old becomes the previous level.
  subroutine update_fields(nx, ny, nz, m, s, zs, t, p)
    integer, intent(in) :: nx, ny, nz, m
    real(dp), intent(inout) :: s(:,-1:,-1:), zs(:,-1:,-1:)
    real(dp), intent(in) :: t(:,-1:,-1:), p(:,-1:,-1:)
    integer :: i, j, k
    real(dp) :: g, old, pp, pm
    do i = 1, nx
      do j = 1, ny
        do k = 1, nz
          g = 0.0_dp
          if (m == 1) then
            g = 0.5_dp * (p(k,j,i+1) - p(k,j,i-1))
          else if (m == 2) then
            g = 0.5_dp * (p(k,j+1,i) - p(k,j-1,i))
          else if (m == 3) then
            pp = p(k,j,i)
            if (k < nz) pp = p(k+1,j,i)
            pm = p(k,j,i)
            if (k > 1) pm = p(k-1,j,i)
            g = 0.5_dp * (pp - pm)
          end if
          old = s(k,j,i)
          s(k,j,i) = (old + DT * t(k,j,i)) - DT * g
          zs(k,j,i) = old
        end do
      end do
    end do
  end subroutine update_fields

end module monc_mini_kernels

program monc_mini_f
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use haloswap
  use monc_mini_kernels
  implicit none

  integer, parameter :: MAXT = 32, NPH = 4
  integer, parameter :: PH_PROG = 1, PH_COEF = 2, PH_PRES = 3, PH_REDUCE = 4
  character(len=12), parameter :: phase_name(NPH) = [character(len=12) :: "prognostic", &
       "coefficients", "pressure", "reduction"]

  integer :: rank, nranks, ierr, nq, steps, iters, px, py, ntr, procs(2), glob(3), loc(3)
  logical :: have_global, have_local, help, verbose
  character(len=128) :: tr(MAXT)
  character(len=:), allocatable :: json_path, errmsg
  type(haloswap_decomposition) :: decomp
  integer :: nx, ny, nz, ox, oy, nprog, nf, r, m, f, st, timed, it, cur, i, j, k, js
  type(field3), allocatable, target :: s(:), zs(:), tend(:)
  type(field3), target :: visc, diff, rhs, p(0:1)
  type(halo_communication_type) :: hs_prog, hs_coef, hs_p
  type(haloswap_field), allocatable :: flds(:)
  real(dp) :: t0, tstart, ttotal, comm(NPH), vals(3 + NPH), vmax(3 + NPH), vsum(3 + NPH)
  real(dp), asynchronous :: dloc, divmax
  type(MPI_Request) :: red
  integer(c_int64_t), allocatable :: lo(:), hi(:), glo(:), ghi(:)
  integer(c_int64_t) :: bits
  integer(c_int64_t), parameter :: MASK32 = 4294967295_c_int64_t
  character(len=32), allocatable :: names(:)
  character(len=16), allocatable :: hexs(:)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)

  errmsg = ""
  call parse_args()
  if (agree_fail()) goto 99
  if (help) then
    if (rank == 0) call usage()
    call MPI_Finalize()
    stop
  end if
  call check_grid()
  if (agree_fail()) goto 99
  js = -1
  if (allocated(json_path) .and. rank == 0) then
    open(newunit=js, file=json_path, status="replace", action="write", iostat=ierr)
    if (ierr /= 0) then
      errmsg = "option --json: cannot write '" // json_path // "'"
      js = -1
    end if
  end if
  if (agree_fail()) goto 99

  call haloswap_decomposition_create(decomp, MPI_COMM_WORLD, glob, ierr, &
       procs=[procs(1), procs(2), 1], periodic=[1, 1, 0])
  if (ierr /= HALOSWAP_OK) errmsg = "decomposition: " // haloswap_error_message()
  if (agree_fail()) goto 99
  nx = haloswap_local_extent(decomp, HALOSWAP_X)
  ny = haloswap_local_extent(decomp, HALOSWAP_Y)
  nz = haloswap_local_extent(decomp, HALOSWAP_Z)
  ox = haloswap_global_offset(decomp, HALOSWAP_X)
  oy = haloswap_global_offset(decomp, HALOSWAP_Y)
  nprog = 4 + nq
  nf = 2 * nprog + 1
  timed = 1
  if (steps > 1) timed = steps - 1
  allocate(lo(nf), hi(nf), glo(nf), ghi(nf), names(nf), hexs(nf))
  do f = 1, nf
    names(f) = field_name(f)
  end do

  if (rank == 0) then
    write(*, '(13(a,i0),a)') &
         "monc-mini-f: ", nranks, " ranks (", procs(1), " x ", procs(2), "), global ", glob(1), &
         " x ", glob(2), " x ", glob(3), ", local ", nx, " x ", ny, " x ", nz, " (rank 0), ", &
         nprog, " prognostics + previous levels = ", 2 * nprog, " fields swapped, ", steps, &
         " steps, ", iters, " Jacobi iterations"
    if (js >= 0) write(js, '(10(a,i0),a)', advance="no") &
         '{"app": "monc-mini", "language": "Fortran", "ranks": ', nranks, ', "procs": [', &
         procs(1), ', ', procs(2), '], "global": [', glob(1), ', ', glob(2), ', ', glob(3), &
         '], "nq": ', nq, ', "fields_swapped": ', 2 * nprog, ', "steps": ', steps, &
         ', "iters": ', iters, ',' // new_line('a') // ' "runs": ['
  end if

  do r = 1, ntr
    ! ---- state
    allocate(s(nprog), zs(nprog), tend(nprog))
    do m = 1, nprog
      call alloc3(s(m)); call alloc3(zs(m)); call alloc3(tend(m))
    end do
    call alloc3(visc); call alloc3(diff); call alloc3(rhs); call alloc3(p(0)); call alloc3(p(1))
    do m = 1, nprog
      do i = 1, nx
        do j = 1, ny
          do k = 1, nz
            s(m)%d(k,j,i) = initial(m, init_value(ox + i - 1, oy + j - 1, k - 1, m - 1))
            zs(m)%d(k,j,i) = s(m)%d(k,j,i)
          end do
        end do
      end do
    end do
    cur = 0
    ! ---- plans: MONC's halo_swapper, smagorinsky and iterative solver swaps
    allocate(flds(2 * nprog))
    do m = 1, nprog
      flds(2 * m - 1) = haloswap_field(s(m)%d)
      flds(2 * m) = haloswap_field(zs(m)%d)
    end do
    call init_halo_communication(hs_prog, decomp, flds, 2, .true., ierr, transport=trim(tr(r)))
    if (ierr == HALOSWAP_OK) call init_halo_communication(hs_coef, decomp, &
         [haloswap_field(visc%d), haloswap_field(diff%d)], 2, .true., ierr, transport=trim(tr(r)))
    if (ierr == HALOSWAP_OK) call init_halo_communication(hs_p, decomp, &
         [haloswap_field(p(0)%d)], 1, .false., ierr, transport=trim(tr(r)))
    deallocate(flds)
    if (ierr /= HALOSWAP_OK) errmsg = "transport '" // trim(tr(r)) // "': " // haloswap_error_message()
    if (agree_fail()) goto 99
    if (verbose .and. rank == 0) write(*, '(a,a)') "plans use transport ", haloswap_transport_name(hs_prog)

    ! ---- timesteps
    comm = 0.0_dp
    tstart = 0.0_dp
    do st = 1, steps
      if (st == steps - timed + 1) then
        call MPI_Barrier(MPI_COMM_WORLD)
        comm = 0.0_dp
        tstart = MPI_Wtime()
      end if
      call timestep()
    end do
    ttotal = MPI_Wtime() - tstart

    ! ---- checksums: 64-bit patterns summed modulo 2^64, as two exact 32-bit halves
    do f = 1, nf
      lo(f) = 0
      hi(f) = 0
      do i = 1, nx
        do j = 1, ny
          do k = 1, nz
            bits = transfer(field_value(f, k, j, i), bits)
            lo(f) = lo(f) + iand(bits, MASK32)
            hi(f) = hi(f) + ishft(bits, -32)
          end do
        end do
      end do
    end do
    call MPI_Allreduce(lo, glo, nf, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
    call MPI_Allreduce(hi, ghi, nf, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
    do f = 1, nf
      write(hexs(f)(1:8), '(z8.8)') iand(ghi(f) + ishft(glo(f), -32), MASK32)
      write(hexs(f)(9:16), '(z8.8)') iand(glo(f), MASK32)
    end do
    ! ---- timing: per timestep, max and mean over ranks
    vals(1) = ttotal
    vals(2) = ttotal - sum(comm)
    vals(3) = sum(comm)
    vals(4:) = comm
    call MPI_Allreduce(vals, vmax, 3 + NPH, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
    call MPI_Allreduce(vals, vsum, 3 + NPH, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    vmax = vmax / timed
    vsum = vsum / (timed * nranks)
    if (rank == 0) then
      write(*, '(a,a)') "run transport=", trim(tr(r))
      do f = 1, nf
        write(*, '(a,a,a,a)') "checksum ", trim(names(f)), " ", hexs(f)
      end do
      write(*, '(a,es23.17)') "divmax ", divmax
      write(*, '(a,a,a,i0,a,es9.3,a,es9.3,a,es9.3,a,4(a,1x,es9.3,:,", "))', advance="no") &
           "timing ", trim(tr(r)), ": per timestep over ", timed, &
           " steps, max over ranks: step ", vmax(1), " s, compute ", vmax(2), &
           " s, communication ", vmax(3), " s (", (trim(phase_name(i)), vmax(3 + i), i = 1, NPH)
      write(*, '(a,es9.3,a)') "); mean over ranks: communication ", vsum(3), " s"
      if (js >= 0) then
        if (r > 1) write(js, '(a)', advance="no") ","
        write(js, '(a)', advance="no") new_line('a') // '  {"transport": "' // trim(tr(r)) // &
             '", "divmax": '
        write(js, '(es24.17,a)', advance="no") divmax, ', "checksums": {'
        do f = 1, nf
          if (f > 1) write(js, '(a)', advance="no") ", "
          write(js, '(a)', advance="no") '"' // trim(names(f)) // '": "' // hexs(f) // '"'
        end do
        write(js, '(a,i0,a)', advance="no") '},' // new_line('a') // '   "timed_steps": ', timed, &
             ', "per_step_max": {'
        call json_times(vmax)
        write(js, '(a)', advance="no") '}, "per_step_mean": {'
        call json_times(vsum)
        write(js, '(a)', advance="no") '}}'
      end if
      flush(6)
    end if

    call finalise_halo_communication(hs_p, ierr)
    call finalise_halo_communication(hs_coef, ierr)
    call finalise_halo_communication(hs_prog, ierr)
    deallocate(s, zs, tend, visc%d, diff%d, rhs%d, p(0)%d, p(1)%d)
  end do

  if (js >= 0) then
    write(js, '(a)') new_line('a') // ' ]}'
    close(js)
  end if
  call haloswap_decomposition_free(decomp, ierr)
  call MPI_Finalize()
  stop

99 continue
  call MPI_Finalize()
  stop 1, quiet=.true.

contains

  subroutine usage()
    write(*, '(a)') "Usage: monc-mini-f [options]   (the Fortran twin of monc-mini)", &
         "  --transport SPEC   transport, e.g. p2p or ""rma-fence:drive=get""; repeat to run several", &
         "  --local NX,NY,NZ   interior points per rank (default 16,16,256); global = local x ranks", &
         "  --global NX,NY,NZ  global grid instead (split as MONC does: first ranks get one more)", &
         "  --nq N             moisture fields (default 11: 2*(4+N) = 30 swapped fields)", &
         "  --steps N          timesteps (default 10; the first is not timed when N > 1)", &
         "  --iters N          Jacobi iterations of the pressure solve per step (default 8)", &
         "  --px N, --py N     ranks along x and y (default 0: chosen by MPI_Dims_create)", &
         "  --alloc KIND       accepted for the C version's command lines; the arrays here are", &
         "                     always allocatables", &
         "  --json FILE        write checksums and timings as JSON", &
         "  --verbose          name the transport in use", &
         "  --help             this text", &
         "Prints one 'checksum FIELD HEX' line per field, the same bits as monc-mini."
  end subroutine usage

  !> Collective: true on every rank if any rank has an error; rank 0 prints one line.
  logical function agree_fail()
    integer :: mine, first
    character(len=512) :: msg
    mine = nranks
    if (len(errmsg) > 0) mine = rank
    call MPI_Allreduce(mine, first, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
    agree_fail = first < nranks
    if (.not. agree_fail) return
    msg = errmsg
    call MPI_Bcast(msg, len(msg), MPI_CHARACTER, first, MPI_COMM_WORLD)
    if (rank == 0) write(0, '(a,a)') "monc-mini-f: ", trim(msg)
  end function agree_fail

  logical function is_int(str)
    character(len=*), intent(in) :: str
    integer :: c
    is_int = len_trim(str) > 0 .and. len_trim(str) < 10
    do c = 1, len_trim(str)
      if (index("0123456789", str(c:c)) == 0) is_int = .false.
    end do
  end function is_int

  subroutine get_int(opt, val, lo_, hi_, out)
    character(len=*), intent(in) :: opt, val
    integer, intent(in) :: lo_, hi_
    integer, intent(inout) :: out
    character(len=24) :: b1, b2
    if (len(errmsg) > 0) return
    if (.not. is_int(val)) then
      errmsg = "option " // opt // ": '" // trim(val) // "' is not an integer"
      return
    end if
    read(val, *) out
    if (out < lo_ .or. out > hi_) then
      write(b1, '(i0)') lo_
      write(b2, '(i0)') hi_
      errmsg = "option " // opt // " = " // trim(val) // " is out of range: must be " // &
           trim(b1) // ".." // trim(b2)
    end if
  end subroutine get_int

  subroutine get_triple(opt, val, lo_, hi_, out)
    character(len=*), intent(in) :: opt, val
    integer, intent(in) :: lo_, hi_
    integer, intent(inout) :: out(3)
    integer :: c1, c2, q
    character(len=24) :: b1, b2
    character(len=64) :: part(3)
    if (len(errmsg) > 0) return
    c1 = scan(val, ",x")
    c2 = 0
    if (c1 > 0) c2 = c1 + scan(val(c1 + 1:), ",x")
    if (c1 == 0 .or. c2 == c1) then
      errmsg = "option " // opt // ": '" // trim(val) // "' is not of the form NX,NY,NZ"
      return
    end if
    part(1) = val(1:c1 - 1)
    part(2) = val(c1 + 1:c2 - 1)
    part(3) = val(c2 + 1:)
    do q = 1, 3
      if (.not. is_int(part(q))) then
        errmsg = "option " // opt // ": '" // trim(val) // "' is not of the form NX,NY,NZ"
        return
      end if
      read(part(q), *) out(q)
      if (out(q) < lo_ .or. out(q) > hi_) then
        write(b1, '(i0)') lo_
        write(b2, '(i0)') hi_
        errmsg = "option " // opt // ": value " // trim(part(q)) // " is out of range: must be " &
             // trim(b1) // ".." // trim(b2)
        return
      end if
    end do
  end subroutine get_triple

  subroutine parse_args()
    integer :: a, n, l
    character(len=:), allocatable :: key, val
    nq = 11; steps = 10; iters = 8; px = 0; py = 0; ntr = 0
    loc = [16, 16, 256]; glob = 0
    have_global = .false.; have_local = .false.; help = .false.; verbose = .false.
    n = command_argument_count()
    a = 1
    do while (a <= n .and. len(errmsg) == 0)
      key = arg(a)
      val = ""
      if (a < n) val = arg(a + 1)
      l = 2
      select case (key)
      case ("--help", "-h")
        help = .true.; l = 1
      case ("--verbose")
        verbose = .true.; l = 1
      case ("--transport")
        if (a == n) then
          errmsg = "option --transport needs a value"
        else if (val == "all") then
          errmsg = "option --transport: 'all' is not supported by the Fortran twin; name the transports"
        else if (ntr == MAXT) then
          errmsg = "option --transport given more than 32 times"
        else
          ntr = ntr + 1
          tr(ntr) = val
        end if
      case ("--local")
        call need(a, n, key)
        call get_triple(key, val, 1, 2**20, loc)
        have_local = .true.
      case ("--global")
        call need(a, n, key)
        call get_triple(key, val, 1, 2**24, glob)
        have_global = .true.
      case ("--nq")
        call need(a, n, key)
        call get_int(key, val, 0, 500, nq)
      case ("--steps")
        call need(a, n, key)
        call get_int(key, val, 1, 100000000, steps)
      case ("--iters")
        call need(a, n, key)
        call get_int(key, val, 1, 100000, iters)
      case ("--px")
        call need(a, n, key)
        call get_int(key, val, 0, 2**20, px)
      case ("--py")
        call need(a, n, key)
        call get_int(key, val, 0, 2**20, py)
      case ("--json")
        call need(a, n, key)
        json_path = val
      case ("--alloc")
        ! Accepted for the same command lines as the C version: the Fortran arrays are
        ! always the program's own allocatables (the module has no hs_alloc).
        call need(a, n, key)
        if (len(errmsg) == 0 .and. val /= "shared" .and. val /= "malloc") &
             errmsg = "option --alloc = '" // val // "': must be shared or malloc"
      case default
        errmsg = "unknown option '" // key // "' (see --help)"
      end select
      a = a + l
    end do
    if (len(errmsg) == 0 .and. have_global .and. have_local) &
         errmsg = "options --global and --local exclude each other"
    if (ntr == 0) then
      ntr = 1
      tr(1) = "p2p"
    end if
  end subroutine parse_args

  subroutine need(a, n, key)
    integer, intent(in) :: a, n
    character(len=*), intent(in) :: key
    if (a == n .and. len(errmsg) == 0) errmsg = "option " // key // " needs a value"
  end subroutine need

  function arg(a) result(str)
    integer, intent(in) :: a
    character(len=:), allocatable :: str
    integer :: l
    call get_command_argument(a, length=l)
    allocate(character(len=l) :: str)
    call get_command_argument(a, str)
  end function arg

  subroutine check_grid()
    character(len=2), parameter :: nm(2) = ["px", "py"]
    character(len=1), parameter :: ax(2) = ["x", "y"]
    character(len=256) :: b
    integer :: d, dims(2)
    procs = [px, py]
    do d = 1, 2
      if (procs(d) > 0) then
        if (mod(nranks, procs(d)) /= 0) then
          write(b, '(a,a,a,i0,a,i0,a)') "option --", nm(d), " = ", procs(d), &
               " does not divide the ", nranks, " ranks"
          errmsg = trim(b)
          return
        end if
      end if
    end do
    if (px > 0 .and. py > 0 .and. px * py /= nranks) then
      write(b, '(a,i0,a,i0,a,i0,a,i0,a)') "options --px ", px, " --py ", py, " make ", px * py, &
           " ranks but ", nranks, " are running"
      errmsg = trim(b)
      return
    end if
    dims = procs
    call MPI_Dims_create(nranks, 2, dims)
    procs = dims
    if (.not. have_global) then
      do d = 1, 2
        if (loc(d) < H) then
          write(b, '(a,a,a,i0,a,i0)') "option --local: ", ax(d), " extent ", loc(d), &
               " is smaller than the halo depth ", H
          errmsg = trim(b)
          return
        end if
        glob(d) = loc(d) * procs(d)
      end do
      glob(3) = loc(3)
    end if
    do d = 1, 2
      if (procs(d) > glob(d)) then
        write(b, '(i0,a,a,a,i0,a,a)') procs(d), " ranks along ", ax(d), &
             " but the grid has only ", glob(d), " columns in ", ax(d)
        errmsg = trim(b)
        return
      end if
      if (glob(d) / procs(d) < H) then
        write(b, '(a,i0,a,a,a,i0,a,i0,a,i0)') "grid smaller than the halo: ", glob(d), &
             " points in ", ax(d), " over ", procs(d), " ranks leave ", glob(d) / procs(d), &
             " on some rank, fewer than the halo depth ", H
        errmsg = trim(b)
        return
      end if
    end do
  end subroutine check_grid

  subroutine alloc3(x)
    type(field3), intent(inout) :: x
    allocate(x%d(nz, 1 - H:ny + H, 1 - H:nx + H))
    x%d = 0.0_dp
  end subroutine alloc3

  real(dp) function initial(m, rv)
    integer, intent(in) :: m
    real(dp), intent(in) :: rv
    if (m <= 2) then
      initial = 0.6_dp * (rv - 0.5_dp)
    else if (m == 3) then
      initial = 0.2_dp * (rv - 0.5_dp)
    else if (m == 4) then
      initial = 300.0_dp + (rv - 0.5_dp)
    else
      initial = (0.001_dp * real(m - 4, dp)) * rv
    end if
  end function initial

  character(len=32) function field_name(fi)
    integer, intent(in) :: fi
    character(len=2), parameter :: base(4) = ["u ", "v ", "w ", "th"]
    integer :: mm
    if (fi == nf) then
      field_name = "p"
      return
    end if
    mm = (fi + 1) / 2
    field_name = ""
    if (mod(fi, 2) == 0) field_name = "z"
    if (mm <= 4) then
      field_name = trim(field_name) // trim(base(mm))
    else
      write(field_name, '(a,a,i0)') trim(field_name), "q", mm - 4
    end if
  end function field_name

  real(dp) function field_value(fi, kk, jj, ii)
    integer, intent(in) :: fi, kk, jj, ii
    if (fi == nf) then
      field_value = p(cur)%d(kk, jj, ii)
    else if (mod(fi, 2) == 1) then
      field_value = s((fi + 1) / 2)%d(kk, jj, ii)
    else
      field_value = zs(fi / 2)%d(kk, jj, ii)
    end if
  end function field_value

  subroutine fail_swap(what)
    character(len=*), intent(in) :: what
    write(0, '(a,i0,a,a,a,a)') "monc-mini-f: rank ", rank, ": ", what, ": ", haloswap_error_message()
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine fail_swap

  subroutine timestep()
    integer :: mm
    ! 1. all prognostics and their previous levels, depth 2 with corners
    t0 = MPI_Wtime()
    call blocking_halo_swap(hs_prog, ierr)
    comm(PH_PROG) = comm(PH_PROG) + (MPI_Wtime() - t0)
    if (ierr /= HALOSWAP_OK) call fail_swap("blocking_halo_swap")
    ! 2. coefficients, swapped while the advection runs
    call coefficients(nx, ny, nz, s(1)%d, s(2)%d, s(3)%d, visc%d, diff%d, rhs%d, dloc)
    t0 = MPI_Wtime()
    call initiate_nonblocking_halo_swap(hs_coef, ierr)
    comm(PH_COEF) = comm(PH_COEF) + (MPI_Wtime() - t0)
    if (ierr /= HALOSWAP_OK) call fail_swap("initiate_nonblocking_halo_swap")
    t0 = MPI_Wtime()
    call MPI_Iallreduce(dloc, divmax, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, red)
    comm(PH_REDUCE) = comm(PH_REDUCE) + (MPI_Wtime() - t0)
    do mm = 1, nprog
      call advect(nx, ny, nz, s(1)%d, s(2)%d, s(3)%d, s(mm)%d, tend(mm)%d)
    end do
    t0 = MPI_Wtime()
    call complete_nonblocking_halo_swap(hs_coef, ierr)
    comm(PH_COEF) = comm(PH_COEF) + (MPI_Wtime() - t0)
    if (ierr /= HALOSWAP_OK) call fail_swap("complete_nonblocking_halo_swap")
    do mm = 1, nprog
      if (mm <= 3) then
        call diffuse(nx, ny, nz, visc%d, zs(mm)%d, tend(mm)%d)
      else
        call diffuse(nx, ny, nz, diff%d, zs(mm)%d, tend(mm)%d)
      end if
    end do
    ! 3. pressure: each iteration swaps the current iterate (source_data), as calc_Ax
    do it = 1, iters
      t0 = MPI_Wtime()
      call initiate_nonblocking_halo_swap(hs_p, ierr, source_data=[haloswap_field(p(cur)%d)])
      comm(PH_PRES) = comm(PH_PRES) + (MPI_Wtime() - t0)
      if (ierr /= HALOSWAP_OK) call fail_swap("initiate_nonblocking_halo_swap (pressure)")
      call jacobi(nz, p(cur)%d, p(1 - cur)%d, rhs%d, 2, nx - 1, 2, ny - 1)
      t0 = MPI_Wtime()
      call complete_nonblocking_halo_swap(hs_p, ierr, source_data=[haloswap_field(p(cur)%d)])
      comm(PH_PRES) = comm(PH_PRES) + (MPI_Wtime() - t0)
      if (ierr /= HALOSWAP_OK) call fail_swap("complete_nonblocking_halo_swap (pressure)")
      call jacobi(nz, p(cur)%d, p(1 - cur)%d, rhs%d, 1, nx, 1, 1)
      call jacobi(nz, p(cur)%d, p(1 - cur)%d, rhs%d, 1, nx, ny, ny)
      call jacobi(nz, p(cur)%d, p(1 - cur)%d, rhs%d, 1, 1, 2, ny - 1)
      call jacobi(nz, p(cur)%d, p(1 - cur)%d, rhs%d, nx, nx, 2, ny - 1)
      cur = 1 - cur
    end do
    t0 = MPI_Wtime()
    call blocking_halo_swap(hs_p, ierr, source_data=[haloswap_field(p(cur)%d)])
    comm(PH_PRES) = comm(PH_PRES) + (MPI_Wtime() - t0)
    if (ierr /= HALOSWAP_OK) call fail_swap("blocking_halo_swap (pressure)")
    t0 = MPI_Wtime()
    call MPI_Wait(red, MPI_STATUS_IGNORE)
    comm(PH_REDUCE) = comm(PH_REDUCE) + (MPI_Wtime() - t0)
    ! 4. update
    do mm = 1, nprog
      call update_fields(nx, ny, nz, mm, s(mm)%d, zs(mm)%d, tend(mm)%d, p(cur)%d)
    end do
  end subroutine timestep

  subroutine json_times(v)
    real(dp), intent(in) :: v(:)
    integer :: q
    write(js, '(a,es13.6,a,es13.6,a,es13.6)', advance="no") '"step": ', v(1), ', "compute": ', &
         v(2), ', "comm": ', v(3)
    do q = 1, NPH
      write(js, '(a,a,a,es13.6)', advance="no") ', "comm_', trim(phase_name(q)), '": ', v(3 + q)
    end do
  end subroutine json_times

end program monc_mini_f
