! haloswap_ra Fortran 2008 module: the remote access layer (include/haloswap_ra.h, docs/ra.md)
! from Fortran. Distributed arrays of 4-byte integers, written and read one element at a time
! by remote put and get, in epochs separated by a collective sync.
!
! Fortran numbering: arrays are 1..narrays and elements 1..capacity (C's 0-based array and
! index plus one); ranks are the layer communicator's ranks (0-based, as MPI's). Every function
! returns a status (HALOSWAP_OK or an error code; haloswap_error_message says why).
module haloswap_ra
  use, intrinsic :: iso_c_binding
  use mpi_f08, only: MPI_Comm
  use haloswap, only: HALOSWAP_OK, HALOSWAP_ERR_ARG, HALOSWAP_ERR_MISMATCH, HALOSWAP_ERR_STATE, &
       HALOSWAP_ERR_NOMEM, HALOSWAP_ERR_MPI, HALOSWAP_ERR_UNAVAILABLE, HALOSWAP_ERR_INTERNAL, &
       haloswap_error_message
  implicit none
  private

  public :: HALOSWAP_OK, HALOSWAP_ERR_ARG, HALOSWAP_ERR_MISMATCH, HALOSWAP_ERR_STATE, &
       HALOSWAP_ERR_NOMEM, HALOSWAP_ERR_MPI, HALOSWAP_ERR_UNAVAILABLE, HALOSWAP_ERR_INTERNAL, &
       haloswap_error_message

  integer, parameter, public :: HALOSWAP_RA_MAX_ARRAYS = 8

  !> One layer (hs_ra). rank, size and capacity are this rank's, cached at creation.
  type, public :: haloswap_ra_layer
     type(c_ptr) :: ptr = c_null_ptr
     integer :: rank = -1, size = 0, capacity = 0, narrays = 0
  end type haloswap_ra_layer

  !> Counters (hs_ra_stats): remote operations, syncs, p2p messages and bytes, seconds.
  type, public, bind(c) :: haloswap_ra_stats
     integer(c_int64_t) :: puts = 0, gets = 0, syncs = 0, completes = 0, epochs = 0
     integer(c_int64_t) :: messages = 0, bytes = 0
     real(c_double) :: seconds_put = 0, seconds_get = 0, seconds_sync = 0
  end type haloswap_ra_stats

  public :: haloswap_ra_create, haloswap_ra_free, haloswap_ra_local, haloswap_ra_put, &
       haloswap_ra_get, haloswap_ra_sync, haloswap_ra_complete, haloswap_ra_epoch_begin, &
       haloswap_ra_epoch_end, haloswap_ra_set_targets, haloswap_ra_clear, haloswap_ra_capacity, &
       haloswap_ra_name, haloswap_ra_comm, haloswap_ra_backend_available, haloswap_ra_get_stats, &
       haloswap_ra_reset_stats, haloswap_ra_finalize

  interface
     integer(c_int) function c_create(comm, backend, narrays, capacity, npeers, peers, out) &
          bind(c, name="hs_ra_f_create")
       import :: c_int, c_char, c_ptr
       integer(c_int), value :: comm, narrays, capacity, npeers
       character(kind=c_char), intent(in) :: backend(*)
       integer(c_int), intent(in) :: peers(*)
       type(c_ptr), intent(out) :: out
     end function c_create
     integer(c_int) function c_free(ra) bind(c, name="hs_ra_free")
       import :: c_int, c_ptr
       type(c_ptr), intent(inout) :: ra
     end function c_free
     type(c_ptr) function c_local(ra, array) bind(c, name="hs_ra_local")
       import :: c_int, c_ptr
       type(c_ptr), value :: ra
       integer(c_int), value :: array
     end function c_local
     integer(c_int) function c_capacity(ra, rank) bind(c, name="hs_ra_capacity")
       import :: c_int, c_ptr
       type(c_ptr), value :: ra
       integer(c_int), value :: rank
     end function c_capacity
     integer(c_int) function c_put(ra, array, rank, index, v) bind(c, name="hs_ra_put")
       import :: c_int, c_int32_t, c_ptr
       type(c_ptr), value :: ra
       integer(c_int), value :: array, rank, index
       integer(c_int32_t), value :: v
     end function c_put
     integer(c_int) function c_get(ra, array, rank, index, v) bind(c, name="hs_ra_get")
       import :: c_int, c_int32_t, c_ptr
       type(c_ptr), value :: ra
       integer(c_int), value :: array, rank, index
       integer(c_int32_t), intent(out) :: v
     end function c_get
     integer(c_int) function c_sync_arrays(ra, mask) bind(c, name="hs_ra_sync_arrays")
       import :: c_int, c_ptr
       type(c_ptr), value :: ra
       integer(c_int), value :: mask
     end function c_sync_arrays
     integer(c_int) function c_complete(ra, mask) bind(c, name="hs_ra_complete")
       import :: c_int, c_ptr
       type(c_ptr), value :: ra
       integer(c_int), value :: mask
     end function c_complete
     integer(c_int) function c_epoch_begin(ra) bind(c, name="hs_ra_epoch_begin")
       import :: c_int, c_ptr
       type(c_ptr), value :: ra
     end function c_epoch_begin
     integer(c_int) function c_epoch_end(ra) bind(c, name="hs_ra_epoch_end")
       import :: c_int, c_ptr
       type(c_ptr), value :: ra
     end function c_epoch_end
     integer(c_int) function c_set_targets(ra, n, nindices, ranks, indices) &
          bind(c, name="hs_ra_f_set_targets")
       import :: c_int, c_ptr
       type(c_ptr), value :: ra
       integer(c_int), value :: n, nindices
       integer(c_int), intent(in) :: ranks(*), indices(*)
     end function c_set_targets
     integer(c_int) function c_explain(ra, get, array, rank, index, status) &
          bind(c, name="hs_ra_f_explain")
       import :: c_int, c_ptr
       type(c_ptr), value :: ra
       integer(c_int), value :: get, array, rank, index, status
     end function c_explain
     integer(c_int) function c_clear(ra) bind(c, name="hs_ra_clear")
       import :: c_int, c_ptr
       type(c_ptr), value :: ra
     end function c_clear
     integer(c_int) function c_name(ra, buf, len) bind(c, name="hs_ra_f_name")
       import :: c_int, c_char, c_ptr
       type(c_ptr), value :: ra
       character(kind=c_char), intent(out) :: buf(*)
       integer(c_int), value :: len
     end function c_name
     integer(c_int) function c_comm(ra) bind(c, name="hs_ra_f_comm")
       import :: c_int, c_ptr
       type(c_ptr), value :: ra
     end function c_comm
     integer(c_int) function c_available(name, why, len, why_len) &
          bind(c, name="hs_ra_f_backend_available")
       import :: c_int, c_char
       character(kind=c_char), intent(in) :: name(*)
       character(kind=c_char), intent(out) :: why(*)
       integer(c_int), value :: len
       integer(c_int), intent(out) :: why_len
     end function c_available
     integer(c_int) function c_get_stats(ra, st) bind(c, name="hs_ra_get_stats")
       import :: c_int, c_ptr, haloswap_ra_stats
       type(c_ptr), value :: ra
       type(haloswap_ra_stats), intent(out) :: st
     end function c_get_stats
     integer(c_int) function c_reset_stats(ra) bind(c, name="hs_ra_reset_stats")
       import :: c_int, c_ptr
       type(c_ptr), value :: ra
     end function c_reset_stats
     integer(c_int) function c_finalize() bind(c, name="hs_ra_finalize")
       import :: c_int
     end function c_finalize
  end interface

contains

  !> Collective over comm. backend: "p2p", "rma", "rma-epoch" or "shmem". peers (p2p only):
  !> the ranks this rank may target or be targeted by, symmetric between ranks; absent: any.
  integer function haloswap_ra_create(comm, backend, narrays, capacity, layer, peers) result(status)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: backend
    integer, intent(in) :: narrays, capacity
    type(haloswap_ra_layer), intent(out) :: layer
    integer, intent(in), optional :: peers(:)
    integer(c_int), allocatable :: p(:)
    integer(c_int) :: np
    if (present(peers)) then
       p = int(peers, c_int)
    else
       allocate(p(0))
    end if
    np = int(size(p), c_int)
    if (np == 0) p = [0_c_int] ! a valid address; npeers = 0 means no list
    status = int(c_create(int(comm%MPI_VAL, c_int), trim(backend) // c_null_char, &
         int(narrays, c_int), int(capacity, c_int), np, p, layer%ptr))
    if (status /= HALOSWAP_OK) return
    layer%narrays = narrays
    layer%capacity = capacity
    call layer_rank(layer)
  end function haloswap_ra_create

  subroutine layer_rank(layer)
    use mpi_f08, only: MPI_Comm_rank, MPI_Comm_size
    type(haloswap_ra_layer), intent(inout) :: layer
    type(MPI_Comm) :: c
    c%MPI_VAL = c_comm(layer%ptr)
    call MPI_Comm_rank(c, layer%rank)
    call MPI_Comm_size(c, layer%size)
  end subroutine layer_rank

  !> Collective. The layer's element memory goes with it.
  integer function haloswap_ra_free(layer) result(status)
    type(haloswap_ra_layer), intent(inout) :: layer
    status = int(c_free(layer%ptr))
    layer = haloswap_ra_layer()
  end function haloswap_ra_free

  !> This rank's elements of array (1..narrays) as a pointer to elements 1..capacity, or a
  !> disassociated pointer for a bad argument.
  function haloswap_ra_local(layer, array) result(p)
    type(haloswap_ra_layer), intent(in) :: layer
    integer, intent(in) :: array
    integer(c_int32_t), pointer :: p(:)
    type(c_ptr) :: c
    p => null()
    c = c_local(layer%ptr, int(array - 1, c_int))
    if (c_associated(c)) call c_f_pointer(c, p, [layer%capacity])
  end function haloswap_ra_local

  integer function haloswap_ra_put(layer, array, rank, index, value) result(status)
    type(haloswap_ra_layer), intent(in) :: layer
    integer, intent(in) :: array, rank, index
    integer(c_int32_t), intent(in) :: value
    status = int(c_put(layer%ptr, int(array - 1, c_int), int(rank, c_int), &
         int(index - 1, c_int), value))
    if (status /= HALOSWAP_OK) status = int(c_explain(layer%ptr, 0_c_int, int(array, c_int), &
         int(rank, c_int), int(index, c_int), int(status, c_int)))
  end function haloswap_ra_put

  integer function haloswap_ra_get(layer, array, rank, index, value) result(status)
    type(haloswap_ra_layer), intent(in) :: layer
    integer, intent(in) :: array, rank, index
    integer(c_int32_t), intent(out) :: value
    status = int(c_get(layer%ptr, int(array - 1, c_int), int(rank, c_int), &
         int(index - 1, c_int), value))
    if (status /= HALOSWAP_OK) status = int(c_explain(layer%ptr, 1_c_int, int(array, c_int), &
         int(rank, c_int), int(index, c_int), int(status, c_int)))
  end function haloswap_ra_get

  !> The bit mask of a list of arrays (1..narrays); the callers pass -1 (every array) when
  !> they were given none, rather than their absent optional (see haloswap.F90's
  !> haloswap_order_args).
  integer(c_int) function array_mask(arrays) result(mask)
    integer, intent(in) :: arrays(:)
    integer :: k
    mask = 0
    do k = 1, size(arrays)
       if (arrays(k) >= 1 .and. arrays(k) <= HALOSWAP_RA_MAX_ARRAYS) &
            mask = ior(mask, ishft(1_c_int, arrays(k) - 1))
    end do
  end function array_mask

  !> Collective end of an epoch. arrays: p2p exchanges only these (the others' puts wait).
  integer function haloswap_ra_sync(layer, arrays) result(status)
    type(haloswap_ra_layer), intent(in) :: layer
    integer, intent(in), optional :: arrays(:)
    if (present(arrays)) then
       status = int(c_sync_arrays(layer%ptr, array_mask(arrays)))
    else
       status = int(c_sync_arrays(layer%ptr, -1_c_int))
    end if
  end function haloswap_ra_sync

  !> Completes this rank's puts at their owners without a barrier (p2p: a collective sync).
  integer function haloswap_ra_complete(layer, arrays) result(status)
    type(haloswap_ra_layer), intent(in) :: layer
    integer, intent(in), optional :: arrays(:)
    if (present(arrays)) then
       status = int(c_complete(layer%ptr, array_mask(arrays)))
    else
       status = int(c_complete(layer%ptr, -1_c_int))
    end if
  end function haloswap_ra_complete

  integer function haloswap_ra_epoch_begin(layer) result(status)
    type(haloswap_ra_layer), intent(in) :: layer
    status = int(c_epoch_begin(layer%ptr))
  end function haloswap_ra_epoch_begin

  integer function haloswap_ra_epoch_end(layer) result(status)
    type(haloswap_ra_layer), intent(in) :: layer
    status = int(c_epoch_end(layer%ptr))
  end function haloswap_ra_epoch_end

  !> Collective: the remote elements (ranks(k), indices(k)) this rank will access until the
  !> next call (p2p builds its mirrors from them; the others check them).
  integer function haloswap_ra_set_targets(layer, ranks, indices) result(status)
    type(haloswap_ra_layer), intent(in) :: layer
    integer, intent(in) :: ranks(:), indices(:)
    integer(c_int) :: dummy(1) = 0
    if (size(ranks) == 0 .or. size(indices) == 0) then
       status = int(c_set_targets(layer%ptr, int(size(ranks), c_int), int(size(indices), c_int), &
            dummy, dummy))
    else
       status = int(c_set_targets(layer%ptr, int(size(ranks), c_int), int(size(indices), c_int), &
            int(ranks, c_int), int(indices, c_int)))
    end if
  end function haloswap_ra_set_targets

  !> Collective: every element of every array to 0 on all ranks.
  integer function haloswap_ra_clear(layer) result(status)
    type(haloswap_ra_layer), intent(in) :: layer
    status = int(c_clear(layer%ptr))
  end function haloswap_ra_clear

  !> Capacity of rank (-1 for a bad argument).
  integer function haloswap_ra_capacity(layer, rank)
    type(haloswap_ra_layer), intent(in) :: layer
    integer, intent(in) :: rank
    haloswap_ra_capacity = int(c_capacity(layer%ptr, int(rank, c_int)))
  end function haloswap_ra_capacity

  function haloswap_ra_name(layer) result(name)
    type(haloswap_ra_layer), intent(in) :: layer
    character(len=:), allocatable :: name
    character(kind=c_char) :: buf(32)
    integer :: n
    n = int(c_name(layer%ptr, buf, 32_c_int))
    name = fortran_string(buf, n)
  end function haloswap_ra_name

  !> The layer's own duplicate of the communicator it was created on.
  function haloswap_ra_comm(layer) result(comm)
    type(haloswap_ra_layer), intent(in) :: layer
    type(MPI_Comm) :: comm
    comm%MPI_VAL = c_comm(layer%ptr)
  end function haloswap_ra_comm

  !> HALOSWAP_OK if the named back end is built into this library; why says what is missing.
  integer function haloswap_ra_backend_available(name, why) result(status)
    character(len=*), intent(in) :: name
    character(len=:), allocatable, intent(out), optional :: why
    character(kind=c_char) :: buf(512)
    integer(c_int) :: n
    status = int(c_available(trim(name) // c_null_char, buf, 512_c_int, n))
    if (present(why)) why = fortran_string(buf, int(n))
  end function haloswap_ra_backend_available

  integer function haloswap_ra_get_stats(layer, stats) result(status)
    type(haloswap_ra_layer), intent(in) :: layer
    type(haloswap_ra_stats), intent(out) :: stats
    status = int(c_get_stats(layer%ptr, stats))
  end function haloswap_ra_get_stats

  integer function haloswap_ra_reset_stats(layer) result(status)
    type(haloswap_ra_layer), intent(in) :: layer
    status = int(c_reset_stats(layer%ptr))
  end function haloswap_ra_reset_stats

  !> MPI_Finalize, ending OpenSHMEM first if it runs (see hs_ra_finalize).
  integer function haloswap_ra_finalize() result(status)
    status = int(c_finalize())
  end function haloswap_ra_finalize

  function fortran_string(buf, n) result(s)
    character(kind=c_char), intent(in) :: buf(:)
    integer, intent(in) :: n
    character(len=:), allocatable :: s
    integer :: i
    allocate(character(len=n) :: s)
    do i = 1, n
       s(i:i) = buf(i)
    end do
  end function fortran_string

end module haloswap_ra
