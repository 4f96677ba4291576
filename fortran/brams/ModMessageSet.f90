! haloswap's drop-in for BRAMS's src/brams/mpi/ModMessageSet.f90 (docs/brams.md): the same
! module, MessageSet type and routines, with the ghost-zone exchange done by haloswap.
!
! BRAMS builds its message sets once (ModMessagePassing.f90: the selected ghost zone, the
! acoustic U, V, P, UV and WP sets, ...) through CreateMessageSet and
! InsertFieldSectionAtMessageSet, then calls PostRecvSendMsgs(SendMsg, RecvMsg) and, later,
! WaitRecvMsgs(SendMsg, RecvMsg), with physics in between. Here each (SendMsg, RecvMsg) pair
! becomes one haloswap plan, made collectively at the pair's first post and cached:
!  - the decomposition is a haloswap box decomposition of BRAMS's own node boxes (its
!    GlobalNoGhost partition, RAMS's irregular blocks included); a set that moves the domain's
!    boundary rows (IncludeDomainBoundaries: the full-ring sets) uses the boxes widened to
!    those rows, as the rank next to them owns them;
!  - the region set is the union, over all ranks, of the halo sides BRAMS's receive sections
!    cover (U: the west column only; V: the south row; P: east and north; the rest: the ring);
!  - the fields are the set's, single precision, 2-D (x,y) and 3-D (z,x,y) mixed in one plan
!    (z as components), (x,y,patch) as components, (z,x,y,patch) one field per patch;
!  - the transport is chosen at run time (HALOSWAP_TRANSPORT, as for the other drop-ins).
! The plan is then checked against BRAMS's own message set: the bytes this rank sends and
! receives per exchange must equal the set's; any difference stops the run.
! One change to the module's behaviour: a rank with no message in a set gets an empty set
! (nMsgs = 0) instead of a null pointer, so that every rank holds every set and can take part
! in the collective plan creation. BRAMS's callers only pass the sets on.
! Errors stop through BRAMS's own fatal_error with the routine, the argument and the bounds.
module ModMessageSet
  use, intrinsic :: iso_c_binding
  use mpi_f08, only: MPI_Comm
  use ModParallelEnvironment, only: &
       Brams2MpiProcNbr, &
       Mpi2BramsProcNbr, &
       MsgDump
  use ModMessageData, only: &
       MessageData, &
       DestroyMessageData
  use ModNeighbourNodes, only: &
       NeighbourNodes
  use ModFieldSectionList, only: &
       FieldSection, &
       CreateFieldSection, &
       NextFieldSection, &
       CreateFieldSectionList, &
       InsertAtFieldSectionList, &
       DumpFieldSectionList
  use ModDomainDecomp, only: &
       DomainDecomp
  use var_tables, only: &
       var_tables_r
  use haloswap, only: halo_communication_type, haloswap_decomposition, HALOSWAP_OK, &
       initiate_nonblocking_halo_swap, complete_nonblocking_halo_swap, haloswap_error_message, &
       haloswap_transport_name, finalise_halo_communication, haloswap_decomposition_free
  use haloswap_dropin, only: haloswap_dropin_at_finalize
  use haloswap_geometry, only: haloswap_gfield, haloswap_region_set, haloswap_geometry_init, &
       haloswap_decomposition_create_boxes, haloswap_region_set_create, &
       haloswap_region_set_add, haloswap_region_set_free, haloswap_get_bytes, HALOSWAP_LAYOUT_XYZ

  implicit none
  private
  public :: MessageSet
  public :: CreateMessageSet
  public :: InsertFieldSectionAtMessageSet
  public :: DumpMessageSet
  public :: DestroyMessageSet
  public :: PostRecvSendMsgs
  public :: WaitRecvMsgs

  include "mpif.h"

  integer, parameter :: UNDEFINED=-1

  ! all messages to send/receive from one process to update a field; arrays indexed 1:nMsgs
  type MessageSet
     character(len=64) :: name                   ! msg name
     integer :: nMsgs=UNDEFINED                  ! # procs on communication
     integer :: tag                              ! same tag for all messages in the set
     type(MessageData), allocatable :: oneMsg(:) ! data on communication
     integer, allocatable :: request(:)          ! communication request
     integer, allocatable :: otherProc(:)        ! MPI procs to communicate
     integer :: hsEntry = 0                      ! haloswap: this set's entry in `sets`
  end type MessageSet

  ! haloswap's side of each set: its fields, where its grid is, its pair and the plan
  type VTabRef
     type(var_tables_r), pointer :: p => null()
  end type VTabRef
  type SetEntry
     type(MessageSet), pointer :: set => null()
     integer :: pair = 0                          ! the other set of its (send, recv) pair
     integer :: nf = 0
     type(VTabRef), allocatable :: fields(:)
     type(DomainDecomp), pointer :: grid => null() ! BRAMS's GlobalWithGhost
     integer :: myNum = 0
     integer :: state = 0                         ! 0: no plan yet; 1: plan; 2: nothing to move
     type(halo_communication_type) :: hs
  end type SetEntry
  type(SetEntry), allocatable, target :: sets(:)
  integer :: nsets = 0

  ! the two box decompositions of a grid: BRAMS's node boxes, and those widened to the
  ! domain's boundary rows (made on first use)
  type(haloswap_decomposition) :: boxes(0:1)
  type(DomainDecomp), pointer :: boxesGrid => null()


  logical, parameter :: dumpLocal=.false.

  ! HALOSWAP_BRAMS_ULP=<receive set name>[:<field>] (the check's sensitivity run,
  ! docs/brams.md): after that set's first exchange, the lowest rank receiving anything moves
  ! one received point the model reads (one_ulp) up by one ulp
  character(len=64) :: ulpSet = ''
  logical :: ulpRead = .false.

contains

  ! CreateMessageSet: a MessageSet with one envelope per true hasMsg (neighbour order) and no
  ! data. Unlike BRAMS's own, a set with no message is allocated (nMsgs = 0), not null.
  function CreateMessageSet (name, tag, hasMsg, Neigh) result(Msgs)
    character(len=*), intent(in) :: name
    integer, intent(in) :: tag
    logical, intent(in) :: hasMsg(:)
    type(NeighbourNodes), pointer :: Neigh
    type(MessageSet), pointer :: Msgs

    character(len=*), parameter :: h="**(CreateMessageSet)**"
    integer :: nMsgs, iNeigh, cntMsg

    if (.not. associated(Neigh)) then
       Msgs => null()
       return
    end if
    if (size(hasMsg) < Neigh%nNeigh) call stop_at(h, "hasMsg", "has", size(hasMsg), &
         "entries; the neighbours are", Neigh%nNeigh)
    nMsgs = count(hasMsg(1:Neigh%nNeigh))
    allocate(Msgs)
    allocate(Msgs%oneMsg(nMsgs))
    allocate(Msgs%request(nMsgs))
    allocate(Msgs%otherProc(nMsgs))
    Msgs%name = name
    Msgs%nMsgs = nMsgs
    Msgs%tag = tag
    cntMsg = 0
    do iNeigh = 1, Neigh%nNeigh
       if (hasMsg(iNeigh)) then
          cntMsg = cntMsg + 1
          Msgs%oneMsg(cntMsg)%bufSize = 0
          Msgs%oneMsg(cntMsg)%fieldList => CreateFieldSectionList()
          Msgs%request(cntMsg) = MPI_REQUEST_NULL
          Msgs%otherProc(cntMsg) = Brams2MpiProcNbr(Neigh%neigh(iNeigh))
       end if
    end do
    call register(Msgs)
  end function CreateMessageSet

  ! The set's entry; a set created right after one with the same tag is that one's pair
  ! (BRAMS creates each send set, then its receive set).
  subroutine register(Msgs)
    type(MessageSet), pointer :: Msgs
    type(SetEntry), allocatable :: more(:)
    if (.not. allocated(sets)) allocate(sets(16))
    if (nsets == size(sets)) then
       allocate(more(2 * nsets))
       more(1:nsets) = sets(1:nsets)
       call move_alloc(more, sets)
    end if
    nsets = nsets + 1
    sets(nsets)%set => Msgs
    Msgs%hsEntry = nsets
    if (nsets > 1) then
       if (sets(nsets - 1)%pair == 0 .and. sets(nsets - 1)%set%tag == Msgs%tag) then
          sets(nsets)%pair = nsets - 1
          sets(nsets - 1)%pair = nsets
       end if
    end if
  end subroutine register

  ! InsertFieldSectionAtMessageSet: adds field vTabPtr's section for each neighbour that will
  ! communicate (global bounds xbComm..xeComm, ybComm..yeComm) to the set, as BRAMS's own;
  ! haloswap also records the field for the set's plan.
  subroutine InsertFieldSectionAtMessageSet(&
       myNum, vTabPtr, Neigh, GlobalWithGhost, &
       xbComm, xeComm, ybComm, yeComm, willComm, Msgs)
    integer, intent(in) :: myNum
    type(var_tables_r), pointer :: vTabPtr         ! intent(in)
    type(NeighbourNodes), pointer :: Neigh         ! intent(in)
    type(DomainDecomp), pointer :: GlobalWithGhost ! intent(in)
    integer, intent(in) :: xbComm(:)
    integer, intent(in) :: xeComm(:)
    integer, intent(in) :: ybComm(:)
    integer, intent(in) :: yeComm(:)
    logical, intent(in) :: willComm(:)
    type(MessageSet), pointer :: Msgs

    integer :: nMsgs, x0, y0, cntMsg, iNeigh
    type(FieldSection), pointer :: oneFieldSection
    type(SetEntry), pointer :: e
    type(VTabRef), allocatable :: more(:)
    character(len=*), parameter :: h="**(InsertFieldSectionAtMessageSet)**"

    if (.not. associated(vTabPtr)) then
       call fatal_error(h//" vTabPtr not associated")
    else if (.not. associated(Neigh)) then
       call fatal_error(h//" Neigh not associated")
    else if (.not. associated(GlobalWithGhost)) then
       call fatal_error(h//" GlobalWithGhost not associated")
    end if
    if (.not. associated(Msgs)) return
    nMsgs = Msgs%nMsgs

    e => sets(Msgs%hsEntry)
    if (.not. allocated(e%fields)) allocate(e%fields(8))
    if (e%nf == size(e%fields)) then
       allocate(more(2 * e%nf))
       more(1:e%nf) = e%fields(1:e%nf)
       call move_alloc(more, e%fields)
    end if
    e%nf = e%nf + 1
    e%fields(e%nf)%p => vTabPtr
    e%grid => GlobalWithGhost
    e%myNum = myNum

    x0 = GlobalWithGhost%xb(myNum) - 1
    y0 = GlobalWithGhost%yb(myNum) - 1
    cntMsg = 0
    do iNeigh = 1, Neigh%nNeigh
       if (willComm(iNeigh)) then
          cntMsg = cntMsg + 1
          if (cntMsg > nMsgs) call stop_at(h, "willComm", "names more than", nMsgs, &
               "messages of "//trim(Msgs%name)//" for field "//trim(vTabPtr%name), nMsgs)
          oneFieldSection => CreateFieldSection(vTabPtr, &
               xbComm(iNeigh)-x0, xeComm(iNeigh)-x0, &
               ybComm(iNeigh)-y0, yeComm(iNeigh)-y0, GlobalWithGhost)
          call InsertAtFieldSectionList(oneFieldSection, Msgs%oneMsg(cntMsg)%fieldList)
          Msgs%oneMsg(cntMsg)%bufSize = Msgs%oneMsg(cntMsg)%bufSize + &
               oneFieldSection%fieldSectionSize
       end if
    end do
  end subroutine InsertFieldSectionAtMessageSet

  subroutine DumpMessageSet(Msgs)
    type(MessageSet), pointer :: Msgs
    character(len=8) :: c0, c1, c3
    character(len=*), parameter :: h="**(DumpMessageSet)**"
    integer :: i
    if (.not. associated(Msgs)) then
       call MsgDump(h//" empty messages")
       return
    end if
    write(c0,"(i8)") Msgs%nMsgs
    write(c1,"(i8)") Msgs%tag
    call MsgDump(h//" named "//trim(adjustl(Msgs%name))//" with "//trim(adjustl(c0))// &
         " messages and tag "//trim(adjustl(c1))//" (haloswap's drop-in)")
    do i = 1, Msgs%nMsgs
       write(c0,"(i8)") i
       write(c1,"(i8)") Mpi2BramsProcNbr(Msgs%otherProc(i))
       write(c3,"(i8)") Msgs%oneMsg(i)%bufSize
       call MsgDump(h//" message "//trim(adjustl(c0))//" to/from node "//trim(adjustl(c1))// &
            ", size "//trim(adjustl(c3))//" and field sections:")
       call DumpFieldSectionList(Msgs%oneMsg(i)%fieldList)
    end do
  end subroutine DumpMessageSet

  ! The set's envelopes go; its haloswap plan stays (freeing a plan is collective, and BRAMS
  ! destroys sets at the end only).
  subroutine DestroyMessageSet (Msgs)
    type(MessageSet), pointer :: Msgs
    integer :: msg
    if (associated(Msgs)) then
       do msg = 1, Msgs%nMsgs
          call DestroyMessageData(Msgs%oneMsg(msg))
       end do
       deallocate(Msgs%oneMsg)
       deallocate(Msgs%request)
       deallocate(Msgs%otherProc)
       if (Msgs%hsEntry > 0) sets(Msgs%hsEntry)%set => null()
       deallocate(Msgs)
    end if
    Msgs => null()
  end subroutine DestroyMessageSet

  ! PostRecvSendMsgs: starts the exchange of the pair (SendMsg, RecvMsg); its plan is made
  ! (collectively: every rank posts the same pairs in the same order) at its first post.
  subroutine PostRecvSendMsgs(SendMsg, RecvMsg)
    type(MessageSet), pointer :: SendMsg
    type(MessageSet), pointer :: RecvMsg
    integer :: k, ierr
    character(len=*), parameter :: h="**(PostRecvSendMsgs)**"
    k = pair_entry(SendMsg, RecvMsg, h)
    if (k == 0) return
    if (sets(k)%state == 0) call make_plan(k, h)
    if (sets(k)%state /= 1) return
    call initiate_nonblocking_halo_swap(sets(k)%hs, ierr)
    if (ierr /= HALOSWAP_OK) call fatal_error(h//" haloswap, set "//trim(sets(k)%set%name)// &
         ": "//haloswap_error_message())
  end subroutine PostRecvSendMsgs

  ! WaitRecvMsgs: completes the pair's exchange (every ghost point of RecvMsg written).
  subroutine WaitRecvMsgs(SendMsg, RecvMsg)
    type(MessageSet), pointer :: SendMsg
    type(MessageSet), pointer :: RecvMsg
    integer :: k, ierr
    character(len=*), parameter :: h="**(WaitRecvMsgs)**"
    k = pair_entry(SendMsg, RecvMsg, h)
    if (k == 0) return
    if (sets(k)%state == 0) call stop_at(h, "RecvMsg", "set "//trim(sets(k)%set%name)// &
         " was never posted; posts:", 0, "", 0)
    if (sets(k)%state /= 1) return
    call complete_nonblocking_halo_swap(sets(k)%hs, ierr)
    if (ierr /= HALOSWAP_OK) call fatal_error(h//" haloswap, set "//trim(sets(k)%set%name)// &
         ": "//haloswap_error_message())
    if (.not. ulpRead) call get_environment_variable("HALOSWAP_BRAMS_ULP", ulpSet)
    ulpRead = .true.
    k = index(ulpSet, ':')
    if (k == 0) k = len_trim(ulpSet) + 1
    if (ulpSet /= '' .and. ulpSet(1:k - 1) == RecvMsg%name) call one_ulp(RecvMsg)
  end subroutine WaitRecvMsgs

  ! The sensitivity run's change (HALOSWAP_BRAMS_ULP=SET[:FIELD]), once: on the lowest rank
  ! receiving anything, in its largest message, the section of FIELD (default: the first),
  ! the point in the middle of the section and of the column (one the model reads: the
  ! section's ends can be the domain's boundary rows, which BRAMS overwrites).
  subroutine one_ulp(RecvMsg)
    type(MessageSet), pointer :: RecvMsg
    type(FieldSection), pointer :: node, pick
    integer :: has(1), ierr, rank, k, m, x, y, c
    character(len=64) :: field
    has = 0
    if (RecvMsg%nMsgs > 0) has = 1
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    if (has(1) == 0) rank = huge(rank)
    has(1) = rank
    call MPI_Allreduce(MPI_IN_PLACE, has, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
    c = index(ulpSet, ':')
    field = ''
    if (c > 0) field = ulpSet(c + 1:)
    ulpSet = ''
    if (has(1) == huge(rank)) then
       call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
       if (rank == 0) write(*, "(3a)") "haloswap ModMessageSet: HALOSWAP_BRAMS_ULP: no rank "// &
            "receives anything in ", trim(RecvMsg%name), ": nothing moved"
       return
    end if
    if (has(1) /= rank) return
    m = maxloc(RecvMsg%oneMsg(:)%bufSize, 1)
    pick => null()
    node => null()
    do
       node => NextFieldSection(node, RecvMsg%oneMsg(m)%fieldList)
       if (.not. associated(node)) exit
       if (.not. associated(pick)) pick => node
       if (field /= '' .and. trim(node%vTabPtr%name) == trim(field)) then
          pick => node
          exit
       end if
    end do
    if (field /= '' .and. .not. associated(node)) call fatal_error("haloswap ModMessageSet: "// &
         "HALOSWAP_BRAMS_ULP: set "//trim(RecvMsg%name)//" has no field "//trim(field))
    x = (pick%xStart + pick%xEnd) / 2
    y = (pick%yStart + pick%yEnd) / 2
    k = 1
    if (pick%vTabPtr%idim_type == 3) then        ! (z,x,y)
       k = max(1, size(pick%vTabPtr%var_p_3D, 1) / 2)
       pick%vTabPtr%var_p_3D(k, x, y) = nearest(pick%vTabPtr%var_p_3D(k, x, y), 1.0)
    else if (pick%vTabPtr%idim_type == 2) then   ! (x,y)
       pick%vTabPtr%var_p_2D(x, y) = nearest(pick%vTabPtr%var_p_2D(x, y), 1.0)
    else
       call fatal_error("haloswap ModMessageSet: HALOSWAP_BRAMS_ULP: field "// &
            trim(pick%vTabPtr%name)//" of "//trim(RecvMsg%name)//" is not (z,x,y) or (x,y)")
    end if
    write(*, "(a, i0, 5a, 3(i0, a), 2(i0, a))") "haloswap ModMessageSet: HALOSWAP_BRAMS_ULP: rank ", &
         rank, " moved ", trim(pick%vTabPtr%name), " of ", trim(RecvMsg%name), " at (k,i,j) = (", &
         k, ",", x, ",", y, ") (global i, j: ", x + sets(RecvMsg%hsEntry)%grid%xb(sets( &
         RecvMsg%hsEntry)%myNum) - 1, ", ", y + sets(RecvMsg%hsEntry)%grid%yb(sets( &
         RecvMsg%hsEntry)%myNum) - 1, ") up by one ulp"
  end subroutine one_ulp

  ! The receive set's entry of a (send, recv) pair; 0 when neither is associated (one rank:
  ! BRAMS makes no sets).
  integer function pair_entry(SendMsg, RecvMsg, h) result(k)
    type(MessageSet), pointer :: SendMsg, RecvMsg
    character(len=*), intent(in) :: h
    k = 0
    if (.not. associated(SendMsg) .and. .not. associated(RecvMsg)) return
    if (.not. associated(SendMsg) .or. .not. associated(RecvMsg)) &
         call stop_at(h, "SendMsg, RecvMsg", "one of the pair is null (associated:", &
         merge(1, 0, associated(SendMsg)), "and", merge(1, 0, associated(RecvMsg)))
    k = RecvMsg%hsEntry
    if (k < 1 .or. k > nsets .or. SendMsg%hsEntry < 1 .or. sets(k)%pair /= SendMsg%hsEntry) &
         call stop_at(h, "SendMsg, RecvMsg", trim(SendMsg%name)//" and "//trim(RecvMsg%name)// &
         " are not a pair made by CreateMessageSet (entries", SendMsg%hsEntry, "and", k)
  end function pair_entry

  ! The plan of the pair whose receive set is entry k (collective over MPI_COMM_WORLD).
  subroutine make_plan(k, h)
    integer, intent(in) :: k
    character(len=*), intent(in) :: h
    type(SetEntry), pointer :: e, s
    type(DomainDecomp), pointer :: g
    type(FieldSection), pointer :: node
    type(haloswap_gfield), allocatable :: gf(:)
    type(haloswap_region_set) :: rs
    real(c_double) :: moved(3)
    integer :: nf(2), wide, mask, m, i, j, x, y, gx, gy, x0, y0, lo(2), hi(2), ierr, f, n
    integer :: nnxp, nnyp, nfh, w1(1)
    real(c_double) :: want(2)
    character(len=64) :: names

    e => sets(k)
    s => sets(e%pair)
    ! every rank has the same fields (BRAMS inserts them in the same order everywhere)
    nf = [e%nf, -e%nf]
    call MPI_Allreduce(MPI_IN_PLACE, nf, 2, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
    if (nf(1) /= -nf(2)) call stop_at(h, "RecvMsg", trim(e%set%name)//" has", e%nf, &
         "fields on this rank; another rank has", merge(nf(1), -nf(2), nf(1) /= e%nf))
    if (e%nf == 0 .or. s%nf /= e%nf) then
       e%state = 2
       if (s%nf /= e%nf) call stop_at(h, "SendMsg", trim(s%set%name)//" has", s%nf, &
            "fields, "//trim(e%set%name)//" has", e%nf)
       return
    end if
    g => e%grid
    if (g%GhostZoneLength /= 1) call stop_at(h, "GlobalWithGhost", "GhostZoneLength is", &
         g%GhostZoneLength, "; the drop-in takes BRAMS's ghost zone of", 1)
    nnxp = maxval(g%xe)
    nnyp = maxval(g%ye)
    x0 = g%xb(e%myNum) - 1
    y0 = g%yb(e%myNum) - 1
    ! boundary rows received (IncludeDomainBoundaries): the widened boxes
    wide = 0
    do m = 1, e%set%nMsgs
       node => null()
       do
          node => NextFieldSection(node, e%set%oneMsg(m)%fieldList)
          if (.not. associated(node)) exit
          if (node%xStart + x0 == 1 .or. node%xEnd + x0 == nnxp .or. &
               node%yStart + y0 == 1 .or. node%yEnd + y0 == nnyp) wide = 1
       end do
    end do
    w1 = wide
    call MPI_Allreduce(MPI_IN_PLACE, w1, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
    wide = w1(1)
    call grid_boxes(g, nnxp, nnyp, e%myNum, wide, lo, hi, h)
    ! the halo sides BRAMS's receive sections cover, on any rank
    mask = 0
    do m = 1, e%set%nMsgs
       node => null()
       do
          node => NextFieldSection(node, e%set%oneMsg(m)%fieldList)
          if (.not. associated(node)) exit
          do y = node%yStart, node%yEnd
             do x = node%xStart, node%xEnd
                gx = x + x0
                gy = y + y0
                i = merge(-1, merge(1, 0, gx > hi(1)), gx < lo(1))
                j = merge(-1, merge(1, 0, gy > hi(2)), gy < lo(2))
                if (i == 0 .and. j == 0) call stop_at(h, trim(e%set%name), "receives "// &
                     "into point", gx, "(x) of its own box; y", gy)
                mask = ior(mask, ishft(1, (i + 1) * 3 + (j + 1)))
             end do
          end do
       end do
    end do
    w1 = mask
    call MPI_Allreduce(MPI_IN_PLACE, w1, 1, MPI_INTEGER, MPI_BOR, MPI_COMM_WORLD, ierr)
    mask = w1(1)
    call haloswap_region_set_create(rs, ierr)
    do i = -1, 1
       do j = -1, 1
          if (.not. btest(mask, (i + 1) * 3 + (j + 1))) cycle
          names = ""
          if (i /= 0) names = "x" // merge("-", "+", i < 0)
          if (j /= 0) names = trim(names) // "y" // merge("-", "+", j < 0)
          call haloswap_region_set_add(rs, 0, names, ierr)
       end do
    end do
    ! the fields: 2-D (x,y); z or patches as components; (z,x,y,patch) one field per patch
    nfh = 0
    do f = 1, e%nf
       nfh = nfh + merge(size(e%fields(f)%p%var_p_4D, 4), 1, &
            associated(e%fields(f)%p%var_p_4D))
    end do
    allocate(gf(nfh))
    n = 0
    do f = 1, e%nf
       call field_geometry(e%fields(f)%p, g, e%myNum, lo, gf, n, h)
    end do
    call haloswap_geometry_init(e%hs, boxes(wide), gf, [1, 1, 0], .true., ierr, regions=rs)
    if (ierr /= HALOSWAP_OK) call fatal_error(h//" haloswap plan for "//trim(e%set%name)// &
         ": "//haloswap_error_message())
    call haloswap_region_set_free(rs, ierr)
    ! the plan moves what BRAMS's sets list: the same bytes each way
    call haloswap_get_bytes(e%hs, moved(1), moved(2), moved(3), ierr)
    want = 0
    do m = 1, s%set%nMsgs
       want(1) = want(1) + 4.0_c_double * s%set%oneMsg(m)%bufSize
    end do
    do m = 1, e%set%nMsgs
       want(2) = want(2) + 4.0_c_double * e%set%oneMsg(m)%bufSize
    end do
    if (moved(1) /= want(1) .or. moved(2) /= want(2) .or. moved(3) /= 0) then
       write(names, "(4(i0,1x))") nint(moved(1)), nint(want(1)), nint(moved(2)), nint(want(2))
       call fatal_error(h//" haloswap plan for "//trim(e%set%name)//" differs from BRAMS's "// &
            "message sets: bytes sent, BRAMS's, received, BRAMS's: "//trim(names))
    end if
    e%state = 1
    if (dumpLocal) call MsgDump(h//" "//trim(e%set%name)//": haloswap "// &
         haloswap_transport_name(e%hs))
  end subroutine make_plan

  ! This rank's box of decomposition `wide` (BRAMS's node box, or with wide = 1 widened to the
  ! domain's boundary rows), 1-based inclusive global points; both decompositions are made on
  ! first use (collectively).
  subroutine grid_boxes(g, nnxp, nnyp, myNum, wide, lo, hi, h)
    type(DomainDecomp), pointer :: g
    integer, intent(in) :: nnxp, nnyp, myNum, wide
    integer, intent(out) :: lo(2), hi(2)
    character(len=*), intent(in) :: h
    integer :: w, ierr, l(2), u(2)
    type(MPI_Comm) :: world
    if (associated(boxesGrid) .and. .not. associated(boxesGrid, g)) call stop_at(h, &
         "GlobalWithGhost", "a second grid (nested grids are not served); points", nnxp, "x", nnyp)
    world%MPI_VAL = MPI_COMM_WORLD
    do w = 0, 1
       ! GlobalNoGhost: GlobalWithGhost less its one-point ghost zone
       l = [g%xb(myNum) + 1, g%yb(myNum) + 1]
       u = [g%xe(myNum) - 1, g%ye(myNum) - 1]
       if (w == 1) then
          if (l(1) == 2) l(1) = 1
          if (l(2) == 2) l(2) = 1
          if (u(1) == nnxp - 1) u(1) = nnxp
          if (u(2) == nnyp - 1) u(2) = nnyp
       end if
       if (.not. associated(boxesGrid)) then
          call haloswap_decomposition_create_boxes(boxes(w), world, [nnxp, nnyp], l, u, ierr)
          if (ierr /= HALOSWAP_OK) call fatal_error(h//" haloswap box decomposition: "// &
               haloswap_error_message())
          if (w == 0) call haloswap_dropin_at_finalize("BRAMS", ierr, teardown=at_finalize)
       end if
       if (w == wide) then
          lo = l
          hi = u
       end if
    end do
    boxesGrid => g
  end subroutine grid_boxes

  ! At MPI_Finalize (BRAMS has no call for it): the plans and decompositions go, in the order
  ! every rank made them (freeing is collective; MPI libraries complain of windows left).
  subroutine at_finalize()
    integer :: k, ierr
    do k = 1, nsets
       if (sets(k)%state == 1) call finalise_halo_communication(sets(k)%hs, ierr)
       sets(k)%state = 2
    end do
    if (associated(boxesGrid)) then
       call haloswap_decomposition_free(boxes(0), ierr)
       call haloswap_decomposition_free(boxes(1), ierr)
    end if
    boxesGrid => null()
  end subroutine at_finalize

  ! Field vt as haloswap fields gf(n+1...): its array covers GlobalWithGhost's box of this
  ! rank; the interior starts at the decomposition's box corner lo.
  subroutine field_geometry(vt, g, myNum, lo, gf, n, h)
    type(var_tables_r), pointer :: vt
    type(DomainDecomp), pointer :: g
    integer, intent(in) :: myNum, lo(2)
    type(haloswap_gfield), intent(inout) :: gf(:)
    integer, intent(inout) :: n
    character(len=*), intent(in) :: h
    integer :: hx, hy, nx, ny, p, dx
    hx = lo(1) - g%xb(myNum)
    hy = lo(2) - g%yb(myNum)
    nx = g%xe(myNum) - g%xb(myNum) + 1
    ny = g%ye(myNum) - g%yb(myNum) + 1
    dx = merge(2, 1, vt%idim_type == 3 .or. vt%idim_type == 4 .or. vt%idim_type == 5)
    select case (vt%idim_type)
    case (2)
       if (.not. associated(vt%var_p_2D)) call stop_at(h, trim(vt%name), "idim_type", 2, &
            "without var_p_2D; idim_type", 2)
       call check_extent(vt, shape(vt%var_p_2D), 1, nx, ny, h)
       n = n + 1
       gf(n) = haloswap_gfield(vt%var_p_2D, [hx, hy], HALOSWAP_LAYOUT_XYZ)
    case (3, 6, 7)
       if (.not. associated(vt%var_p_3D)) call stop_at(h, trim(vt%name), "idim_type", &
            vt%idim_type, "without var_p_3D; idim_type", vt%idim_type)
       call check_extent(vt, shape(vt%var_p_3D), dx, nx, ny, h)
       n = n + 1
       if (dx == 2) then
          gf(n) = haloswap_gfield(vt%var_p_3D, [0, hx, hy], HALOSWAP_LAYOUT_XYZ, .true.)
       else
          gf(n) = haloswap_gfield(vt%var_p_3D, [hx, hy, 0], HALOSWAP_LAYOUT_XYZ, .false.)
       end if
    case (4, 5)
       if (.not. associated(vt%var_p_4D)) call stop_at(h, trim(vt%name), "idim_type", &
            vt%idim_type, "without var_p_4D; idim_type", vt%idim_type)
       call check_extent(vt, shape(vt%var_p_4D), 2, nx, ny, h)
       do p = 1, size(vt%var_p_4D, 4)
          n = n + 1
          gf(n) = haloswap_gfield(vt%var_p_4D(:,:,:,p), [0, hx, hy], HALOSWAP_LAYOUT_XYZ, .true.)
       end do
    case default
       call stop_at(h, trim(vt%name), "idim_type", vt%idim_type, "is not one of 2..7;", 7)
    end select
  end subroutine field_geometry

  subroutine check_extent(vt, shp, dx, nx, ny, h)
    type(var_tables_r), pointer :: vt
    integer, intent(in) :: shp(:), dx, nx, ny
    character(len=*), intent(in) :: h
    if (shp(dx) /= nx .or. shp(dx + 1) /= ny) call stop_at(h, trim(vt%name), &
         "has x, y extents", shp(dx) * 100000 + shp(dx + 1), &
         "(x * 100000 + y); the node's box with its ghost zone is", nx * 100000 + ny)
  end subroutine check_extent

  ! fatal_error (BRAMS's abort) with "routine: argument what a ... b".
  subroutine stop_at(h, arg, what, a, more, b)
    character(len=*), intent(in) :: h, arg, what, more
    integer, intent(in) :: a, b
    character(len=16) :: ca, cb
    write(ca, "(i0)") a
    write(cb, "(i0)") b
    call fatal_error(h//" "//arg//": "//what//" "//trim(ca)//" "//more//" "//trim(cb))
  end subroutine stop_at
end module ModMessageSet
