# cython: language_level=3, boundscheck=False, wraparound=False, embedsignature=True
"""Thin layer over the public C API (include/haloswap.h). It only converts arguments and
holds what the C library points at; the checks a Python user sees first live in
haloswap/__init__.py, and the library's own checks stay in the library."""

from cpython.buffer cimport (PyObject_GetBuffer, PyBuffer_Release, PyBUF_WRITABLE,
                             PyBUF_ANY_CONTIGUOUS, PyBUF_FORMAT, PyBUF_STRIDES)
from libc.stdlib cimport calloc, free, malloc
from libc.stdint cimport uint64_t
from libc.stddef cimport ptrdiff_t

cdef extern from "mpi.h" nogil:
    ctypedef struct MPI_Comm:
        pass
    ctypedef int MPI_Fint
    MPI_Comm MPI_Comm_f2c(MPI_Fint)
    MPI_Fint MPI_Comm_c2f(MPI_Comm)
    int MPI_Get_library_version(char *, int *)
    enum: MPI_MAX_LIBRARY_VERSION_STRING

cdef extern from "haloswap.h" nogil:
    enum:
        HS_OK
        HS_MAX_DIMS
        HS_MAX_FIELDS
    ctypedef struct hs_decomp_s:
        pass
    ctypedef struct hs_plan_s:
        pass
    ctypedef hs_decomp_s *hs_decomp
    ctypedef hs_plan_s *hs_plan
    ctypedef int hs_type
    ctypedef int hs_layout
    ctypedef int hs_stencil
    ctypedef int hs_oneway
    ctypedef int hs_transport_id
    ctypedef int hs_op
    ctypedef int hs_stagger
    ctypedef int hs_owner
    ctypedef int hs_comp_order

    const char *hs_version(int *major, int *minor, int *patch)
    const char *hs_error_message()
    const char *hs_status_name(int status)
    enum:
        HS_ERR_ARG

    ctypedef struct hs_decomp_desc:
        int ndims
        int global_ "global"[3]
        int procs[3]
        int periodic[3]
        MPI_Comm cart
        const int *ranges[3]
        int remainder
        int axis_order[3]
        int placement
        int node_size
    void hs_decomp_desc_init(hs_decomp_desc *desc)
    int hs_decomp_create(MPI_Comm comm, const hs_decomp_desc *desc, hs_decomp *out)
    int hs_decomp_free(hs_decomp *d)
    int hs_decomp_ndims(hs_decomp d)
    int hs_decomp_local_extent(hs_decomp d, int axis)
    int hs_decomp_global_offset(hs_decomp d, int axis)
    int hs_decomp_global_extent(hs_decomp d, int axis)
    int hs_decomp_procs(hs_decomp d, int axis)
    int hs_decomp_coord(hs_decomp d, int axis)
    int hs_decomp_periodic(hs_decomp d, int axis)
    MPI_Comm hs_decomp_comm(hs_decomp d)
    int hs_decomp_placement(hs_decomp d, int block[3])

    ctypedef struct hs_field:
        hs_type type
        void *data
        int halo[3]
        hs_layout layout
        ptrdiff_t stride[3]
    hs_field hs_field_array(hs_type type, void *data, hs_layout layout, int halo)
    void hs_field_set_halo(hs_field *f, int axis, int lo, int hi)
    void hs_field_set_depth(hs_field *f, int axis, int lo, int hi)
    void hs_field_set_stagger(hs_field *f, int axis, hs_stagger s, hs_owner owner)
    void hs_field_set_extent(hs_field *f, int axis, int cells)
    void hs_field_set_components(hs_field *f, int ncomp, hs_comp_order order,
                                 ptrdiff_t comp_stride)

    ctypedef struct hs_plan_desc:
        int depth[3]
        hs_stencil stencil
        hs_oneway oneway
        int oneway_axis
        int nfields
        const hs_field *fields
        hs_transport_id transport
        const char *transport_name
        const char *options
    void hs_plan_desc_init(hs_plan_desc *desc)
    void hs_plan_desc_set_order_offsets(hs_plan_desc *d, int n, const int *offsets)
    void hs_plan_desc_set_order_sweep(hs_plan_desc *d, int n, const int *axes)
    int hs_plan_create(hs_decomp d, const hs_plan_desc *desc, hs_plan *out)
    int hs_swap_start(hs_plan p, void *const *arrays)
    int hs_swap_complete(hs_plan p, void *const *arrays)
    int hs_swap(hs_plan p, void *const *arrays)
    int hs_swap_test(hs_plan p, void *const *arrays, int *done)
    int hs_round_fail(hs_plan p, int code, int reverse, int arrays_given, const char *message)
    int hs_reverse_start(hs_plan p, hs_op op, void *const *arrays)
    int hs_reverse_complete(hs_plan p, void *const *arrays)
    int hs_reverse(hs_plan p, hs_op op, void *const *arrays)
    int hs_accumulate_fill(hs_plan p, hs_op op, void *const *arrays)
    int hs_plan_free(hs_plan *p)

    ctypedef struct hs_plan_stats:
        uint64_t swaps
        uint64_t bytes_sent_per_swap
        uint64_t bytes_recv_per_swap
        uint64_t bytes_self_per_swap
        double seconds_start
        double seconds_complete
        uint64_t bytes_allocated
        int npeers
        double seconds_total
        double seconds_exposed
        double seconds_test
        uint64_t reverses
        double seconds_reverse
    int hs_plan_get_stats(hs_plan p, hs_plan_stats *st)
    int hs_plan_reset_stats(hs_plan p)
    const char *hs_plan_transport(hs_plan p)
    int hs_plan_describe(hs_plan p, char *buf, size_t len)
    const char *hs_plan_selected_transport(hs_plan p)

    int hs_transport_count()
    const char *hs_transport_name(int i)
    const char *hs_transport_id_name(hs_transport_id id)
    int hs_transport_available(MPI_Comm comm, const char *name, char *why, size_t len)
    int hs_transport_options(const char *name, char *buf, size_t len)
    size_t hs_type_size(hs_type t)

MAX_DIMS = HS_MAX_DIMS
# Registered arrays' layout kept by a plan: address, ndim, then shape and strides of up to
# _MAXND dimensions (3 axes and a components dimension).
cdef enum:
    _MAXND = 8
    _REG = 18  # 2 + 2 * _MAXND
MAX_FIELDS = HS_MAX_FIELDS
# The C library's own version (hs_version): the package's, as its metadata reads the header's.
cdef int _major, _minor, _patch
hs_version(&_major, &_minor, &_patch)
VERSION = (_major, _minor, _patch)

# The MPI library this extension was compiled against (mpi.h's own macros).
cdef extern from *:
    """
    #if defined(OPEN_MPI)
    #define HS_PY_MPI_FLAVOUR "openmpi"
    #elif defined(MPICH_VERSION)
    #define HS_PY_MPI_FLAVOUR "mpich"
    #else
    #define HS_PY_MPI_FLAVOUR "unknown"
    #endif
    """
    const char *HS_PY_MPI_FLAVOUR

MPI_FLAVOUR = HS_PY_MPI_FLAVOUR.decode()

# Set by haloswap/__init__.py: raise_status(code, message) raises the exception class of code.
_raise_status = None


def status_name(int code):
    """The library's name of a status code ("HS_ERR_ARG", ...)."""
    return hs_status_name(code).decode()


cdef int _check(int rc, call=None, int rank=-1) except -1:
    """Raises the exception of a failed call; call: the Python method a blocking call stands
    for ("Plan.swap"), named in place of the C calls it made in rank's own messages."""
    if rc != HS_OK:
        _raise_status(rc, hs_error_message().decode(errors="replace"), call, rank)
    return 0


cdef bytes _b(s):
    return None if s is None else str(s).encode()


def transport_names():
    """Names of the transports built into this library, in registry order."""
    return [hs_transport_name(i).decode() for i in range(hs_transport_count())]


def transport_id_name(int tid):
    """Name of a transport id (built or known but unbuilt), or None."""
    cdef const char *s = hs_transport_id_name(tid)
    return None if s == NULL else s.decode()


def transport_options(name):
    """hs_transport_options: the summary and every option, one per line."""
    cdef bytes bname = _b(name)
    cdef size_t n = 1 << 16
    cdef char *buf = <char *>malloc(n)
    if buf == NULL:
        raise MemoryError()
    try:
        _check(hs_transport_options(bname, buf, n))
        return buf.decode()
    finally:
        free(buf)


def transport_available(MPI_Fint comm, name):
    """(True, "") if usable on comm, else (False, reason). Collective over comm."""
    cdef bytes bname = _b(name)
    cdef char why[512]
    cdef int rc
    cdef const char *cname = bname
    cdef MPI_Comm c = MPI_Comm_f2c(comm)
    with nogil:
        rc = hs_transport_available(c, cname, why, sizeof(why))
    if rc == HS_OK:
        return True, ""
    msg = why.decode(errors="replace")
    return False, msg if msg else hs_error_message().decode(errors="replace")


def mpi_library_version():
    """MPI_Get_library_version as seen by this extension."""
    cdef char buf[MPI_MAX_LIBRARY_VERSION_STRING]
    cdef int n = 0
    MPI_Get_library_version(buf, &n)
    return buf[:n].decode(errors="replace")


cdef class DecompCore:
    """An hs_decomp. Created collectively; freed collectively with free()."""
    cdef hs_decomp d

    def __cinit__(self):
        self.d = NULL

    def create(self, MPI_Fint comm, global_shape, procs, periodic, ranges, int remainder,
               axis_order, int placement, int node_size, MPI_Fint cart, bint have_cart):
        cdef hs_decomp_desc desc
        cdef int *rbuf[3]
        cdef int a, i, rc
        hs_decomp_desc_init(&desc)
        desc.ndims = len(global_shape)
        for a in range(3):
            rbuf[a] = NULL
            desc.global_[a] = global_shape[a] if a < desc.ndims else 1
            desc.procs[a] = procs[a]
            desc.periodic[a] = periodic[a]
            desc.axis_order[a] = axis_order[a]
        desc.remainder = remainder
        desc.placement = placement
        desc.node_size = node_size
        if have_cart:
            desc.cart = MPI_Comm_f2c(cart)
        try:
            for a in range(3):
                if ranges[a] is not None:
                    rbuf[a] = <int *>calloc(max(1, len(ranges[a])), sizeof(int))
                    if rbuf[a] == NULL:
                        raise MemoryError()
                    for i in range(len(ranges[a])):
                        rbuf[a][i] = ranges[a][i]
                    desc.ranges[a] = rbuf[a]
            with nogil:
                rc = hs_decomp_create(MPI_Comm_f2c(comm), &desc, &self.d)
            _check(rc)
        finally:
            for a in range(3):
                free(rbuf[a])

    def free(self):
        if self.d != NULL:
            _check(hs_decomp_free(&self.d))

    @property
    def alive(self):
        return self.d != NULL

    def info(self):
        """(ndims, local, offset, global, procs, coords, periodic, placement, block)."""
        cdef int block[3]
        cdef int a
        nd = hs_decomp_ndims(self.d)
        place = hs_decomp_placement(self.d, block)
        ax = range(nd)
        return (nd, tuple(hs_decomp_local_extent(self.d, a) for a in ax),
                tuple(hs_decomp_global_offset(self.d, a) for a in ax),
                tuple(hs_decomp_global_extent(self.d, a) for a in ax),
                tuple(hs_decomp_procs(self.d, a) for a in ax),
                tuple(hs_decomp_coord(self.d, a) for a in ax),
                tuple(bool(hs_decomp_periodic(self.d, a)) for a in ax),
                place, tuple(block[a] for a in ax))

    def comm_f(self):
        """Fortran handle of the Cartesian communicator (owned by the decomposition)."""
        return MPI_Comm_c2f(hs_decomp_comm(self.d))


cdef class PlanCore:
    """An hs_plan over registered buffers. Holds a buffer export of every registered array
    (they cannot be resized or freed while the plan lives) and of the arrays of a swap in
    flight."""
    cdef hs_plan p
    cdef DecompCore decomp
    cdef int nfields
    cdef Py_buffer *views      # registered arrays
    cdef int nviews
    cdef Py_buffer *swap_views # arrays given to start (kept until complete)
    cdef void **swap_ptrs
    cdef unsigned char *swap_held
    cdef int swap_given        # 1 while a started operation uses given arrays
    cdef int _pending          # 0 none, 1 forward swap, 2 reverse
    cdef Py_ssize_t *reg       # per registered array: its address, ndim, shape, strides
    cdef public int rank       # in the plan's communicator (messages: this rank's own)

    def __cinit__(self):
        self.p = NULL
        self.views = NULL
        self.swap_views = NULL
        self.swap_ptrs = NULL
        self.swap_held = NULL
        self.nviews = 0
        self._pending = 0
        self.reg = NULL

    def __dealloc__(self):
        # The plan itself is freed collectively by free(); here only our buffer exports.
        self._release_swap()
        self._release_views()
        free(self.reg)

    cdef void _release_views(self):
        cdef int i
        if self.views != NULL:
            for i in range(self.nviews):
                PyBuffer_Release(&self.views[i])
            free(self.views)
            self.views = NULL
        self.nviews = 0

    cdef void _release_swap(self):
        cdef int i
        if self.swap_views != NULL:
            for i in range(self.nfields):
                if self.swap_held[i]:
                    PyBuffer_Release(&self.swap_views[i])
            free(self.swap_views)
            self.swap_views = NULL
        free(self.swap_ptrs)
        free(self.swap_held)
        self.swap_ptrs = NULL
        self.swap_held = NULL
        self.swap_given = 0

    def create(self, DecompCore decomp, list fields, depth, int stencil, int oneway,
               int oneway_axis, transport, options, int order, list order_list):
        """fields: one tuple per field (array, type, layout, strides, halo_lo, halo_hi,
        depth_lo, depth_hi, depth_set, stagger, owner, extent, ncomp, comp_order,
        comp_stride). order: 0 canonical, 1 offsets (order_list: flat triples), 2 sweep
        (order_list: the axes, empty for x, y, z)."""
        cdef int nf = len(fields)
        cdef int olist[78]
        cdef int k
        cdef hs_field *fl = <hs_field *>calloc(max(1, nf), sizeof(hs_field))
        cdef hs_plan_desc pd
        cdef int f, a, rc
        cdef bytes btrans = _b(transport)
        cdef bytes bopts = _b(options)
        if fl == NULL:
            raise MemoryError()
        self.views = <Py_buffer *>calloc(max(1, nf), sizeof(Py_buffer))
        self.reg = <Py_ssize_t *>calloc(max(1, nf) * _REG, sizeof(Py_ssize_t))
        if self.views == NULL or self.reg == NULL:
            free(fl)
            raise MemoryError()
        self.nviews = 0
        self.nfields = nf
        self.decomp = decomp
        try:
            for f in range(nf):
                (arr, htype, layout, strides, hlo, hhi, dlo, dhi, dset, stag, own, ext, ncomp,
                 corder, cstride) = fields[f]
                PyObject_GetBuffer(arr, &self.views[f], PyBUF_WRITABLE | PyBUF_ANY_CONTIGUOUS)
                self.nviews = f + 1
                self._remember(f)
                fl[f] = hs_field_array(htype, self.views[f].buf, layout, 0)
                for a in range(len(hlo)):
                    fl[f].stride[a] = strides[a]
                    hs_field_set_halo(&fl[f], a, hlo[a], hhi[a])
                    if dset[a]:
                        hs_field_set_depth(&fl[f], a, dlo[a], dhi[a])
                    if stag[a]:
                        hs_field_set_stagger(&fl[f], a, 1, own[a])
                    if ext[a] > 0:
                        hs_field_set_extent(&fl[f], a, ext[a])
                if ncomp > 1:
                    hs_field_set_components(&fl[f], ncomp, corder, cstride)
            hs_plan_desc_init(&pd)
            for a in range(3):
                pd.depth[a] = depth[a]
            pd.stencil = stencil
            pd.oneway = oneway
            pd.oneway_axis = oneway_axis
            pd.nfields = nf
            pd.fields = fl
            pd.transport_name = NULL if btrans is None else <const char *>btrans
            pd.options = NULL if bopts is None else <const char *>bopts
            if len(order_list) > 78:
                raise ValueError("order: at most 26 offsets")
            for k in range(len(order_list)):
                olist[k] = order_list[k]
            if order == 1:
                hs_plan_desc_set_order_offsets(&pd, len(order_list) // 3, olist)
            elif order == 2:
                hs_plan_desc_set_order_sweep(&pd, len(order_list), olist)
            with nogil:
                rc = hs_plan_create(decomp.d, &pd, &self.p)
            _check(rc)
        except BaseException:
            self._release_views()
            raise
        finally:
            free(fl)

    def free(self):
        """Collective: frees the plan, then releases the arrays."""
        cdef int rc
        if self.p != NULL:
            with nogil:
                rc = hs_plan_free(&self.p)
            _check(rc)
        self._release_swap()
        self._release_views()

    @property
    def alive(self):
        return self.p != NULL

    cdef void _remember(self, int f):
        """What the plan was given of registered array f: address, ndim, shape, strides."""
        cdef Py_ssize_t *r = self.reg + f * _REG
        cdef Py_buffer *v = &self.views[f]
        cdef int k
        r[0] = <Py_ssize_t>v.buf
        r[1] = v.ndim
        for k in range(min(v.ndim, _MAXND)):
            r[2 + k] = v.shape[k]
            r[2 + _MAXND + k] = v.strides[k]

    cdef object _moved(self, arrays):
        """The first registered array (among those this operation uses: arrays[f] None, or
        no arrays) whose memory moved or whose shape or strides changed since the plan was
        made (numpy's resize(..., refcheck=False) frees the memory the plan holds), as an
        error message; None if every one is as registered."""
        cdef Py_buffer b
        cdef Py_ssize_t *r
        cdef int f, k, same
        for f in range(self.nviews):
            if arrays is not None and arrays[f] is not None:
                continue
            arr = <object>self.views[f].obj
            r = self.reg + f * _REG
            PyObject_GetBuffer(arr, &b, PyBUF_STRIDES)
            same = <Py_ssize_t>b.buf == r[0] and b.ndim == r[1]
            for k in range(min(b.ndim, _MAXND)):
                same = same and b.shape[k] == r[2 + k] and b.strides[k] == r[2 + _MAXND + k]
            PyBuffer_Release(&b)
            if not same:
                shape = tuple(r[2 + k] for k in range(min(r[1], _MAXND)))
                return (f"fields[{f}] was resized or moved since the plan was made (now shape "
                        f"{arr.shape} at {arr.__array_interface__['data'][0]:#x}, registered "
                        f"shape {shape} at {r[0]:#x}): the plan would write memory the array "
                        f"no longer owns. Free the plan and make a new one over the new array "
                        f"(a registered array must keep its memory: never resize it)")
        return None

    cdef int _fail(self, int reverse, int given, fault, call) except -1:
        """This rank's own fault (status, message) where a round begins: the round runs with
        failure flags (hs_round_fail), so every neighbour raises it too, in
        this round, with no collective call; raises it here."""
        cdef int rc, code = fault[0]
        cdef bytes msg = fault[1].encode(errors="replace")
        cdef const char *cmsg = msg
        with nogil:
            rc = hs_round_fail(self.p, code, reverse, given, cmsg)
        return _check(rc if rc != HS_OK else code, call, self.rank)

    cdef int _begin(self, int which, int op, arrays, fault, call) except -1:
        """Refuses a start while an operation is in flight (the library's state error on this
        rank alone, before the in-flight arrays could be replaced); else fails the round on
        this rank's fault (the caller's, or a registered array that moved); else takes the
        arrays."""
        cdef int rc = HS_OK
        if self._pending:
            with nogil:
                if which == 1:
                    rc = hs_swap_start(self.p, NULL)
                else:
                    rc = hs_reverse_start(self.p, op, NULL)
            _check(rc, call, self.rank)
        if fault is None and self.p != NULL:
            moved = self._moved(arrays)
            if moved is not None:
                fault = (HS_ERR_ARG, f"{call}: {moved}")
        if fault is not None and self.p != NULL:
            self._fail(which != 1, arrays is not None, fault, call)
        if arrays is not None:
            self._take_arrays(arrays)
        return 0

    cdef int _take_arrays(self, list arrays) except -1:
        """Exports of the arrays of one operation (None keeps the registered one)."""
        cdef int f
        self.swap_views = <Py_buffer *>calloc(self.nfields, sizeof(Py_buffer))
        self.swap_ptrs = <void **>calloc(self.nfields, sizeof(void *))
        self.swap_held = <unsigned char *>calloc(self.nfields, 1)
        if self.swap_views == NULL or self.swap_ptrs == NULL or self.swap_held == NULL:
            self._release_swap()
            raise MemoryError()
        try:
            for f in range(self.nfields):
                if arrays[f] is not None:
                    PyObject_GetBuffer(arrays[f], &self.swap_views[f],
                                       PyBUF_WRITABLE | PyBUF_ANY_CONTIGUOUS)
                    self.swap_held[f] = 1
                    self.swap_ptrs[f] = self.swap_views[f].buf
        except BaseException:
            self._release_swap()
            raise
        self.swap_given = 1
        return 0

    cdef void **_ptrs(self) noexcept nogil:
        return self.swap_ptrs if self.swap_given else NULL

    def swap(self, list arrays=None, fault=None):
        """hs_swap, with arrays[f] for this swap only where given (checked by the caller:
        fault is its finding on this rank, (status, message), or None)."""
        cdef int rc
        if arrays is None and fault is None and not self._pending:
            if self.p != NULL:
                moved = self._moved(None)
                if moved is not None:
                    fault = (HS_ERR_ARG, f"Plan.swap: {moved}")
            if fault is None:
                with nogil:
                    rc = hs_swap(self.p, NULL)
                return _check(rc, "Plan.swap", self.rank)
        self._begin(1, 0, arrays, fault, "Plan.swap")
        self._pending = 1
        with nogil:
            rc = hs_swap(self.p, self._ptrs())
        self._end(rc, 1, "Plan.swap")

    cdef int _end(self, int rc, int which, call) except -1:
        """After a complete (or a failed start): the arrays of operation ``which`` go."""
        if self._pending == which:
            self._pending = 0
            self._release_swap()
        return _check(rc, call, self.rank)

    cdef int _start(self, int which, int op, arrays, fault, call) except -1:
        """Starts a forward swap (1) or a reverse exchange (2)."""
        cdef int rc
        self._begin(which, op, arrays, fault, call)
        self._pending = which
        with nogil:
            if which == 1:
                rc = hs_swap_start(self.p, self._ptrs())
            else:
                rc = hs_reverse_start(self.p, op, self._ptrs())
        if rc != HS_OK:
            self._end(rc, which, call)
        return 0

    cdef int _complete(self, int which, call) except -1:
        """Completes the forward swap (1) or the reverse exchange (2) in flight."""
        cdef int rc
        with nogil:
            if which == 1:
                rc = hs_swap_complete(self.p, self._ptrs())
            else:
                rc = hs_reverse_complete(self.p, self._ptrs())
        self._end(rc, which, call)
        return 0

    def start(self, list arrays=None, fault=None):
        self._start(1, 0, arrays, fault, None)

    def test(self):
        cdef int rc, done = 0
        with nogil:
            rc = hs_swap_test(self.p, self._ptrs(), &done)
        _check(rc)
        return bool(done)

    def complete(self):
        self._complete(1, None)

    def reverse_start(self, int op, list arrays=None, fault=None):
        self._start(2, op, arrays, fault, None)

    def reverse_complete(self):
        self._complete(2, None)

    def reverse(self, int op, list arrays=None, fault=None):
        self._start(2, op, arrays, fault, "Plan.reverse")
        self._complete(2, "Plan.reverse")

    def accumulate_fill(self, int op, list arrays=None, fault=None):
        cdef int rc
        self._begin(2, op, arrays, fault, "Plan.accumulate_fill")
        self._pending = 3
        with nogil:
            rc = hs_accumulate_fill(self.p, op, self._ptrs())
        self._end(rc, 3, "Plan.accumulate_fill")

    @property
    def pending(self):
        """0: nothing in flight; 1: a forward swap; 2: a reverse exchange (3 only inside
        accumulate_fill)."""
        return self._pending

    def describe(self):
        cdef size_t n = 1 << 20
        cdef char *buf = <char *>malloc(n)
        if buf == NULL:
            raise MemoryError()
        try:
            _check(hs_plan_describe(self.p, buf, n))
            return buf.decode(errors="replace")
        finally:
            free(buf)

    def stats(self):
        cdef hs_plan_stats st
        _check(hs_plan_get_stats(self.p, &st))
        return dict(swaps=st.swaps, bytes_sent_per_swap=st.bytes_sent_per_swap,
                    bytes_recv_per_swap=st.bytes_recv_per_swap,
                    bytes_self_per_swap=st.bytes_self_per_swap,
                    seconds_start=st.seconds_start, seconds_complete=st.seconds_complete,
                    bytes_allocated=st.bytes_allocated, npeers=st.npeers,
                    seconds_total=st.seconds_total, seconds_exposed=st.seconds_exposed,
                    seconds_test=st.seconds_test, reverses=st.reverses,
                    seconds_reverse=st.seconds_reverse)

    def reset_stats(self):
        _check(hs_plan_reset_stats(self.p))

    def transport(self):
        cdef const char *s = hs_plan_transport(self.p)
        return None if s == NULL else s.decode()

    def selected_transport(self):
        cdef const char *s = hs_plan_selected_transport(self.p)
        return None if s == NULL else s.decode()

    def time_swaps(self, int n):
        """n swaps of the registered arrays in a C loop; seconds per swap (benchmarks)."""
        cdef int i, rc = HS_OK
        cdef double t0, t1
        import time
        t0 = time.perf_counter()
        with nogil:
            for i in range(n):
                rc = hs_swap(self.p, NULL)
                if rc != HS_OK:
                    break
        t1 = time.perf_counter()
        _check(rc)
        return (t1 - t0) / max(n, 1)
