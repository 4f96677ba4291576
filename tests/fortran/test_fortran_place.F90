! Node-aware placement from Fortran (node_size argument of haloswap_decomposition_create), at 4
! ranks on virtual nodes of 2. Global 4 x 40: the faces across x are 10x larger than those across
! y, so each node must take a 2 x 1 block (x neighbours together): rank r at x = mod(r, 2),
! y = r / 2. Without the argument the grid keeps rank order: x = r / 2, y = mod(r, 2).
program test_fortran_place
  use mpi_f08
  use haloswap
  implicit none
  type(haloswap_decomposition) :: placed, plain
  integer :: ierr, rank, nranks, bad, totalbad

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  if (nranks /= 4) then
    if (rank == 0) print '(a)', "test_fortran_place: needs 4 ranks"
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  bad = 0
  call haloswap_decomposition_create(placed, MPI_COMM_WORLD, [4, 40, 3], ierr, procs=[2, 2, 1], &
       node_size=2)
  if (ierr /= 0) bad = bad + 1
  call haloswap_decomposition_create(plain, MPI_COMM_WORLD, [4, 40, 3], ierr, procs=[2, 2, 1])
  if (ierr /= 0) bad = bad + 1
  if (bad == 0) then
    if (haloswap_coord(placed, HALOSWAP_X) /= mod(rank, 2)) bad = bad + 1
    if (haloswap_coord(placed, HALOSWAP_Y) /= rank / 2) bad = bad + 1
    if (haloswap_coord(plain, HALOSWAP_X) /= rank / 2) bad = bad + 1
    if (haloswap_coord(plain, HALOSWAP_Y) /= mod(rank, 2)) bad = bad + 1
    if (bad /= 0) print '(a,i0,a,4i3)', "rank ", rank, ": placed x,y / plain x,y =", &
         haloswap_coord(placed, HALOSWAP_X), haloswap_coord(placed, HALOSWAP_Y), &
         haloswap_coord(plain, HALOSWAP_X), haloswap_coord(plain, HALOSWAP_Y)
    call haloswap_decomposition_free(placed, ierr)
    call haloswap_decomposition_free(plain, ierr)
  end if
  call MPI_Allreduce(bad, totalbad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a)', "test_fortran_place: ", totalbad, " wrong coordinates"
  call MPI_Finalize()
  if (totalbad /= 0) error stop 1
end program test_fortran_place
