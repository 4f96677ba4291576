"""The analytic oracle, in numpy: interior cells hold values computed from global
coordinates; after a swap every halo cell the plan writes must hold the value of the cell
it mirrors, and every other halo cell its sentinel. For the reverse exchange, every halo
cell holds a contribution computed from (holder rank, side, mirrored global cell), so the
owner can compute the serial result in the documented order: its offsets in canonical
(lexicographic) order, each offset's contribution combined into the strip it mirrors."""
import itertools

import numpy as np

SENTINEL = -3


class Geom:
    """One field as the oracle sees it (the same description the plan is given)."""

    def __init__(self, decomp, halo, depth=None, stagger=None, owner=None, extent=None,
                 stencil="box", ncomp=1):
        nd = decomp.ndims
        self.nd = nd
        self.d = decomp
        self.halo = [(h, h) if isinstance(h, int) else tuple(h) for h in halo]
        self.depth = [(x, x) if isinstance(x, int) else tuple(x) for x in depth]
        self.node = [s == "node" for s in (stagger or ["cell"] * nd)]
        self.owner = list(owner or ["upper"] * nd)
        self.extent = list(extent or [0] * nd)
        self.stencil = stencil
        self.ncomp = ncomp
        self.cells = [self.extent[a] or decomp.local_shape[a] for a in range(nd)]
        self.n = [self.cells[a] + self.node[a] for a in range(nd)]
        self.gofs = [0 if self.extent[a] else decomp.offset[a] for a in range(nd)]
        self.gext = [self.extent[a] or decomp.global_shape[a] for a in range(nd)]
        self.shape = tuple(self.halo[a][0] + self.n[a] + self.halo[a][1] for a in range(nd))

    def local_index(self, a):
        """Local indices (interior 0..n-1) of every allocated point on axis a."""
        return np.arange(-self.halo[a][0], self.n[a] + self.halo[a][1])

    def axis_class(self, a):
        """Per point on axis a: 0 owned, 1 written by the swap, 2 neither; and the global
        index (wrapped where periodic) of every point."""
        i = self.local_index(a)
        lo, hi = self.depth[a]
        n, cells = self.n[a], self.cells[a]
        per = self.d.periodic[a]
        has_lo = per or self.d.coords[a] > 0 if not self.extent[a] else per
        has_hi = per or self.d.coords[a] < self.d.procs[a] - 1 if not self.extent[a] else per
        g = self.gofs[a] + i
        cls = np.full(i.shape, 2)
        cls[(i >= 0) & (i < n)] = 0
        if self.node[a]:
            # the shared plane a neighbour owns is received like a halo plane
            if self.owner[a] == "upper" and has_hi:
                cls[i == cells] = 1
            if self.owner[a] == "lower" and has_lo:
                cls[i == 0] = 1
        below = (i < 0) & (i >= -lo)
        above = (i >= n) & (i < n + hi)
        cls[below & has_lo] = 1
        cls[above & has_hi] = 1
        if per:
            g = np.mod(g, self.gext[a])
        return cls, g

    def classes(self):
        """Per allocated cell: 0 owned, 1 written by the swap, 2 left alone."""
        parts = [self.axis_class(a)[0] for a in range(self.nd)]
        grids = np.meshgrid(*parts, indexing="ij")
        recv = sum((c == 1).astype(int) for c in grids)
        none = sum((c == 2).astype(int) for c in grids)
        out = np.full(grids[0].shape, 2)
        out[(none == 0) & (recv == 0)] = 0
        ok = (none == 0) & (recv >= 1)
        if self.stencil == "star":
            ok &= recv == 1
        out[ok] = 1
        return out

    def globals(self):
        return np.meshgrid(*[self.axis_class(a)[1] for a in range(self.nd)], indexing="ij")


def value(f, c, g):
    """Interior value of field f, component c, at global coordinates g (a list of arrays):
    integers below 8192, exact in every dtype."""
    v = f * 1009 + c * 17
    for k, w in zip(g, (131, 31, 7)):
        v = v + k * w
    return np.mod(v, 8191) + 1


def with_components(a, ncomp, comp_axis):
    """Views of each component's spatial array."""
    if ncomp == 1:
        return [a]
    return list(np.moveaxis(a, comp_axis, 0))


def fill(a, geom, f, comp_axis=None):
    """Interior = value(global), every other cell = SENTINEL (component by component)."""
    cls = geom.classes()
    g = geom.globals()
    for c, v in enumerate(with_components(a, geom.ncomp, comp_axis)):
        v = v.reshape(geom.shape) if v.ndim != geom.nd else v
        val = value(f, c, g).astype(a.dtype)
        v[...] = np.where(cls == 0, val, np.array(SENTINEL, dtype=a.dtype))


def written(geom):
    """Halo cells the swap writes on this rank (per component)."""
    return int(np.count_nonzero(geom.classes() == 1))


def check(a, geom, f, comp_axis=None):
    """Cells wrong after a swap (0: every written halo cell holds its value, every other
    cell is unchanged)."""
    cls = geom.classes()
    g = geom.globals()
    bad = 0
    for c, v in enumerate(with_components(a, geom.ncomp, comp_axis)):
        v = v.reshape(geom.shape) if v.ndim != geom.nd else v
        val = value(f, c, g).astype(a.dtype)
        want = np.where(cls == 2, np.array(SENTINEL, dtype=a.dtype), val)
        bad += int(np.count_nonzero(v != want))
    return bad


# ---------------------------------------------------------------- reverse exchange
OPS = ("sum", "max", "min", "replace")


def offsets(nd, stencil):
    out = []
    for o in itertools.product((-1, 0, 1), repeat=nd):
        if any(o) and (stencil == "box" or sum(map(abs, o)) == 1):
            out.append(o)
    return out


def contribution(holder, side, g, f, c, dtype):
    """What the holder's halo cell on side ``side`` mirroring global cell g carries."""
    sidx = sum((s + 1) * 3 ** k for k, s in enumerate(side))
    v = holder * 101 + sidx * 13 + f * 7 + c * 5
    for k, w in zip(g, (37, 11, 3)):
        v = v + k * w
    v = np.mod(v, 997)
    if np.issubdtype(dtype, np.integer):
        return v.astype(dtype)
    return (v / 7.0 + 0.1).astype(dtype)  # inexact: the combine order shows in the bits


def side_of(geom):
    """Per allocated cell: its side (-1, 0, 1 per axis) relative to the interior."""
    sides = []
    for a in range(geom.nd):
        i = geom.local_index(a)
        sides.append(np.where(i < 0, -1, np.where(i >= geom.n[a], 1, 0)))
    return np.meshgrid(*sides, indexing="ij")


def fill_reverse(a, geom, f, rank):
    """Interior = value(global); each halo cell the forward swap writes = its contribution."""
    cls = geom.classes()
    g = geom.globals()
    sides = side_of(geom)
    val = value(f, 0, g).astype(a.dtype)
    a[...] = np.where(cls == 0, val, np.array(SENTINEL, dtype=a.dtype))
    for side in offsets(geom.nd, "box"):
        m = (cls == 1)
        for k in range(geom.nd):
            m = m & (sides[k] == side[k])
        if m.any():
            a[m] = contribution(rank, side, [x[m] for x in g], f, 0, a.dtype)


def expected_reverse(geom, f, op, dtype, order=None):
    """The owner's interior after the reverse: the contributions of its neighbours, one
    offset after another in canonical order, or in ``order`` (a list of offsets; the ones
    the plan does not use are skipped), for cell-centred fields."""
    d = geom.d
    nd = geom.nd
    g = geom.globals()
    idx = tuple(slice(geom.halo[a][0], geom.halo[a][0] + geom.n[a]) for a in range(nd))
    gi = [x[idx] for x in g]
    acc = value(f, 0, gi).astype(dtype)
    use = offsets(nd, geom.stencil)
    for o in ([tuple(x) for x in order if tuple(x) in use] if order else use):
        if any(o[a] and not (geom.depth[a][0] or geom.depth[a][1]) for a in range(nd)):
            continue
        holder = d.neighbor(o)
        if holder is None:
            continue
        box = []
        for a in range(nd):
            n = geom.n[a]
            if o[a] < 0:
                box.append(slice(0, geom.depth[a][1]))   # the lower neighbour's upper halo
            elif o[a] > 0:
                box.append(slice(n - geom.depth[a][0], n))
            else:
                box.append(slice(0, n))
        if any(s.stop - s.start <= 0 for s in box):
            continue
        box = tuple(box)
        h = contribution(holder, tuple(-x for x in o), [x[box] for x in gi], f, 0, dtype)
        cur = acc[box]
        if op == "sum":
            acc[box] = (cur + h).astype(dtype)
        elif op == "max":
            acc[box] = np.maximum(cur, h)
        elif op == "min":
            acc[box] = np.minimum(cur, h)
        else:
            acc[box] = h
    return acc, idx


# ---------------------------------------------------------------- the sweep order
def sweep_emulate(comm, d, a, halo, depth, axes, op=None):
    """The sweep (docs/api.md, "Combine order", HS_ORDER_SWEEP) done serially on every rank's
    array: for each exchanged axis in ``axes``, a stage over the two faces whose slabs span,
    on the other axes, the interior plus the swapped halo. Forward (op None): each halo slab
    gets the face neighbour's interior slab. Reverse: each interior slab combines, first the
    lower neighbour's halo slab, then the upper one's. Halo and depth: one value per axis
    (both sides). Returns this rank's array as the sweep leaves it."""
    nd = d.ndims
    every = comm.allgather((a.copy(), d.local_shape, {o: r for o, r in d.neighbors.items()}))
    arrs = [x[0] for x in every]
    for ax in axes:
        dep = depth[ax]
        if dep == 0:
            continue
        snap = [x.copy() for x in arrs]

        def sl(r, lo, hi):
            """Index of rank r's slab [lo, hi) on axis ax (local indices), full transverse."""
            n = every[r][1]
            idx = []
            for b in range(nd):
                if b == ax:
                    idx.append(slice(halo[b] + lo, halo[b] + hi))
                else:
                    idx.append(slice(halo[b] - depth[b], halo[b] + n[b] + depth[b]))
            return tuple(idx)

        for r in range(len(arrs)):
            n = every[r][1][ax]
            low = tuple(-1 if b == ax else 0 for b in range(nd))
            up = tuple(1 if b == ax else 0 for b in range(nd))
            lo_nb, up_nb = every[r][2].get(low), every[r][2].get(up)
            if op is None:
                if lo_nb is not None:
                    m = every[lo_nb][1][ax]
                    arrs[r][sl(r, -dep, 0)] = snap[lo_nb][sl(lo_nb, m - dep, m)]
                if up_nb is not None:
                    arrs[r][sl(r, n, n + dep)] = snap[up_nb][sl(up_nb, 0, dep)]
                continue
            for nb, mine, theirs in ((lo_nb, (0, dep), "hi"), (up_nb, (n - dep, n), "lo")):
                if nb is None:
                    continue
                m = every[nb][1][ax]
                src = snap[nb][sl(nb, m, m + dep) if theirs == "hi" else sl(nb, -dep, 0)]
                dst = sl(r, *mine)
                cur = arrs[r][dst]
                arrs[r][dst] = {"sum": lambda x, y: (x + y).astype(x.dtype),
                                "max": np.maximum, "min": np.minimum,
                                "replace": lambda x, y: y}[op](cur, src)
    return arrs[comm.Get_rank()]
