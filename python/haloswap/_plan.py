"""Field and Plan: numpy arrays described to the library, and the swap plan over them."""
from __future__ import annotations

import itertools
import weakref
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._agree import agree
from ._decomp import Decomposition, _per_axis_pairs, made_xyz
from ._errors import ArgumentError, ArgumentTypeError, Error
from ._lifetime import Collective

__all__ = ["Field", "Plan", "DTYPES"]

#: numpy dtypes the library swaps, and the library's hs_type of each.
DTYPES: Dict[np.dtype, int] = {np.dtype(np.float64): 0, np.dtype(np.float32): 1,
                               np.dtype(np.int32): 2, np.dtype(np.int64): 3}
_LAYOUT_ZFAST, _LAYOUT_XFAST, _LAYOUT_STRIDED = 0, 1, 2
_COMP_SLOWEST, _COMP_FASTEST = 0, 1
_STENCIL = {"box": 0, "star": 1}
_ONEWAY = {"lower": 1, "upper": 2}
_OPS = {"sum": 0, "max": 1, "min": 2, "replace": 3}
_OWNER = {"upper": 0, "lower": 1}

Halo = Union[int, Sequence[Union[int, Tuple[int, int]]]]


class Field:
    """A numpy array with its halo, as one field of a plan.

    The array is indexed ``[x, y]`` or ``[x, y, z]`` (the decomposition's axes in order),
    in C or Fortran order; it must be contiguous, writeable, aligned, of native byte order
    and of a dtype in ``haloswap.DTYPES`` (float64, float32, int32, int64). Its extent on
    axis a is ``halo_lo + interior + halo_hi``. A plain array in a plan's field list is a
    ``Field`` with every option at its default.

    Parameters
    ----------
    array : numpy.ndarray
    halo : int, or per axis an int or (lo, hi), optional
        Allocated halo cells below and above the interior. Default: the plan's ``halo``,
        else half of what the array holds beyond the interior on each axis.
    depth : int, or per axis an int or (lo, hi), optional
        Cells to swap below and above (<= the halo). Default: the plan's depth. An int
        applies to the axes that have neighbours (as the plan's depth does).
    stagger : "cell" or "node", or one per axis, optional
        ``"node"``: node/face-centred along that axis (interior = cells + 1 points; the plane
        shared with the neighbour is owned by ``owner``).
    owner : "upper" or "lower", or one per axis
        Which rank owns a shared node plane (default the upper one).
    extent : int or None per axis, optional
        The field's own interior extent on an axis the decomposition keeps whole (a field
        with its own number of levels). A 2-D array in a 3-D plan is a surface field: z
        extent 1, no z halo, not swapped along z.
    components : int, optional
        The array dimension that holds the components of a vector or tensor field (any
        dimension: the first or last of a contiguous array is the fast path).
    axes : str, optional
        The grid axis of each array dimension in order, e.g. ``"yx"`` or ``"zyx"`` for an
        array indexed ``[y, x]`` or ``[z, y, x]`` (the components dimension left out).
        Default: the plan's ``axes``, else ``"xy"`` / ``"xyz"`` -- but an array with the same
        extent on two dimensions, at least one of them exchanged, is refused without it:
        its axis order cannot be told from its shape.
    """

    def __init__(self, array: np.ndarray, *, halo: Optional[Halo] = None,
                 depth: Optional[Halo] = None, stagger: Union[str, Sequence[str], None] = None,
                 owner: Union[str, Sequence[str]] = "upper",
                 extent: Optional[Sequence[Optional[int]]] = None,
                 components: Optional[int] = None, axes: Optional[str] = None):
        self.array = array
        self.axes = axes
        self.halo = halo
        self.depth = depth
        self.stagger = stagger
        self.owner = owner
        self.extent = extent
        self.components = components

    def __repr__(self) -> str:
        a = self.array
        desc = f"{a.dtype} {a.shape}" if isinstance(a, np.ndarray) else type(a).__name__
        return f"<haloswap.Field {desc} halo={self.halo!r} depth={self.depth!r}>"


def _array_checks(name: str, a: Any) -> None:
    if not isinstance(a, np.ndarray):
        raise ArgumentTypeError(f"{name} is a {type(a).__name__}, not a numpy.ndarray (the "
                                f"plan swaps the array's own memory)")
    dt = a.dtype
    if dt.newbyteorder("=") not in DTYPES or not dt.isnative:
        raise ArgumentTypeError(f"{name} has dtype {dt}{' (non-native byte order)' if not dt.isnative else ''}; "
                                f"haloswap swaps float64, float32, int32 and int64")
    if not a.flags.writeable:
        raise ArgumentError(f"{name} is read-only; the swap writes its halo")
    if not (a.flags.c_contiguous or a.flags.f_contiguous):
        raise ArgumentError(f"{name} is not contiguous (strides {a.strides}); pass the whole "
                            f"array, not a strided view (numpy.ascontiguousarray would copy it)")
    if not a.flags.aligned:
        raise ArgumentError(f"{name} is not aligned to its {dt.itemsize}-byte elements")


def _elem_strides(a: np.ndarray) -> List[int]:
    """Element strides of a contiguous array (C order when it is both)."""
    n = len(a.shape)
    s = [0] * n
    step = 1
    dims = range(n - 1, -1, -1) if a.flags.c_contiguous else range(n)
    for d in dims:
        s[d] = step
        step *= a.shape[d]
    return s


def _resolve_depth(name: str, value, dec: Decomposition) -> List[Tuple[int, int]]:
    """An int applies to every axis with a neighbour (split or periodic); else per axis."""
    if isinstance(value, (int, np.integer)):
        v = int(value)
        return [(v, v) if (dec.procs[a] > 1 or dec.periodic[a]) else (0, 0)
                for a in range(dec.ndims)]
    return _per_axis_pairs(name, value, dec.ndims)


def _per_axis_str(name: str, value, nd: int, allowed) -> List[str]:
    vals = [value] * nd if isinstance(value, str) else list(value)
    if len(vals) != nd:
        raise ArgumentError(f"{name} = {value!r} has {len(vals)} entries for {nd} axes")
    for v in vals:
        if v not in allowed:
            raise ArgumentError(f"{name} = {value!r}: {v!r} is not one of "
                                f"{', '.join(map(repr, allowed))}")
    return vals


def _fits(shape, interior, halo, depth, swapped) -> bool:
    """The dimensions fit the interiors with the halo given (or an even one), and the halo
    holds the swap depth on every exchanged axis."""
    for x, n in enumerate(shape):
        extra = n - interior[x]
        if halo is not None:
            ok = extra == halo[x][0] + halo[x][1]
            lo = min(halo[x])
        else:
            ok = extra >= 0 and extra % 2 == 0
            lo = extra // 2
        if not ok or (swapped[x] and lo < depth[x]):
            return False
    return True


def _order_axes(name, f, a, dec, plan_halo, plan_axes, plan_depth, shape, strides, comp):
    """(shape, strides) of the array's dimensions in the grid's axis order [x, y(, z)]: as
    ``axes`` says, else as they are -- refused where that is a guess (two dimensions of the
    same extent, one of them exchanged) or where another order is the one that fits."""
    nd = len(shape)
    letters = "xyz"[:nd]
    axes = f.axes
    if axes is None and isinstance(plan_axes, str):
        axes = plan_axes if nd == len(plan_axes) else plan_axes.replace("z", "")  # a surface
    if axes is not None:
        if not isinstance(axes, str) or sorted(axes) != sorted(letters):
            raise ArgumentError(f"{name}: axes = {axes!r} must name each of the axes "
                                f"{', '.join(letters)} once, in the order of the array's "
                                f"dimensions{' (the components dimension left out)' if comp is not None else ''}")
        perm = [axes.index(c) for c in letters]
        return [shape[p] for p in perm], [strides[p] for p in perm]
    if made_xyz(a):
        return shape, strides
    swapped = [dec.procs[x] > 1 or dec.periodic[x] for x in range(nd)]
    # The interior each dimension must hold in the order [x, y(, z)].
    stag = f.stagger if f.stagger is not None else "cell"
    stag = [stag] * nd if isinstance(stag, str) else list(stag)
    ext = list(f.extent) if f.extent is not None and not isinstance(f.extent, int) else [None] * nd
    if len(stag) != nd or len(ext) != nd:
        return shape, strides  # refused with its own message later
    interior = [(ext[x] or dec.local_shape[x]) + (stag[x] == "node") for x in range(nd)]
    halo = f.halo if f.halo is not None else plan_halo
    try:
        hp = _per_axis_pairs("halo", halo, nd) if halo is not None else None
        depth = [lo for lo, _ in _resolve_depth("depth", f.depth, dec)] if f.depth is not None \
            else list(plan_depth or [0] * nd)
    except Error:
        return shape, strides
    # An order other than [x, y(, z)] that fits where that one does not: say so.
    if not _fits(shape, interior, hp, depth, swapped):
        for perm in itertools.permutations(range(nd)):
            if list(perm) != list(range(nd)) and _fits([shape[p] for p in perm], interior, hp,
                                                      depth, swapped):
                order = "".join(letters[perm.index(k)] for k in range(nd))
                raise ArgumentError(
                    f"{name} has shape {tuple(a.shape)}: indexed [{', '.join(letters)}] (the "
                    f"default) it does not fit this rank's interior {tuple(interior)} with its "
                    f"halo, but indexed [{', '.join(order)}] it does; haloswap indexes arrays "
                    f"by grid axis [{', '.join(letters)}]: pass haloswap.Field(array, "
                    f"axes={order!r}) (or Plan(..., axes={order!r}))")
        return shape, strides  # refused with its own message later
    for i in range(nd):
        for j in range(i + 1, nd):
            if shape[i] == shape[j] and (swapped[i] or swapped[j]):
                raise ArgumentError(
                    f"{name} has the same extent ({shape[i]}) on dimensions {i} and {j}, so "
                    f"its axis order cannot be told from its shape ([{', '.join(letters)}] or "
                    f"[{', '.join(_swap(letters, i, j))}]?); say which: "
                    f"haloswap.Field(array, axes={letters!r}) (or "
                    f"{''.join(_swap(letters, i, j))!r}), or Plan(..., axes={letters!r}) for "
                    f"every array of the plan")
    return shape, strides


def _owners(a: np.ndarray) -> List[np.ndarray]:
    """The array and the arrays whose memory it views."""
    out = [a]
    while isinstance(out[-1].base, np.ndarray):
        out.append(out[-1].base)
    return out


def _swap(letters: str, i: int, j: int) -> List[str]:
    out = list(letters)
    out[i], out[j] = out[j], out[i]
    return out


class _Spec:
    """What the plan registers for one field (and checks per-swap arrays against)."""

    def __init__(self, name: str, f: Field, dec: Decomposition, plan_halo, plan_axes=None,
                 plan_depth=None):
        a = f.array
        _array_checks(name, a)
        nd = dec.ndims
        comp = f.components
        shape = list(a.shape)
        strides = _elem_strides(a)
        cstride, ncomp = 0, 1
        if comp is not None:
            if not isinstance(comp, (int, np.integer)) or not -a.ndim <= comp < a.ndim:
                raise ArgumentError(f"{name}: components = {comp!r} is not a dimension of an "
                                    f"array of {a.ndim} dimensions")
            comp = int(comp) % a.ndim
            ncomp, cstride = shape[comp], strides[comp]
            del shape[comp], strides[comp]
        surface = nd == 3 and len(shape) == 2
        if len(shape) != nd and not surface:
            extra = " plus the components dimension" if comp is not None else ""
            raise ArgumentError(f"{name} has {a.ndim} dimensions; a field of a {nd}-D "
                                f"decomposition has {nd}{extra}"
                                f"{' (or 2: a surface field)' if nd == 3 else ''}")
        shape, strides = _order_axes(name, f, a, dec, plan_halo, plan_axes, plan_depth, shape,
                                     strides, comp)
        if surface:
            shape.append(1)
            strides.append(1)
        stag = _per_axis_str(f"{name}: stagger", f.stagger if f.stagger is not None else "cell",
                             nd, ("cell", "node"))
        own = _per_axis_str(f"{name}: owner", f.owner, nd, tuple(_OWNER))
        ext = [0] * nd
        if f.extent is not None:
            ev = list(f.extent) if not isinstance(f.extent, (int, np.integer)) else None
            if ev is None or len(ev) != nd:
                raise ArgumentError(f"{name}: extent = {f.extent!r}: give one entry (an int or "
                                    f"None) per axis ({nd})")
            ext = [int(e) if e is not None else 0 for e in ev]
        if surface:
            ext[2] = 1
        halo = f.halo if f.halo is not None else plan_halo
        if halo is not None:
            hp = _per_axis_pairs(f"{name}: halo", halo, nd)
            if surface:
                hp[2] = (0, 0)
        else:
            hp = []
        interior = [(ext[x] or dec.local_shape[x]) + (stag[x] == "node") for x in range(nd)]
        for ax in range(nd):
            if halo is None:
                extra = shape[ax] - interior[ax]
                if extra < 0 or extra % 2:
                    raise ArgumentError(
                        f"{name}: axis {ax} has {shape[ax]} points for an interior of "
                        f"{interior[ax]}; the halo cannot be split evenly: give halo=(lo, hi) "
                        f"per axis")
                hp.append((extra // 2, extra // 2))
            if min(hp[ax]) < 0:
                raise ArgumentError(f"{name}: halo on axis {ax} is {hp[ax]}; must be >= 0")
        alloc = [hp[x][0] + interior[x] + hp[x][1] for x in range(nd)]
        if alloc != shape:
            want = tuple(alloc[:2] if surface else alloc)
            raise ArgumentError(
                f"{name} has shape {tuple(a.shape)} but its halo {tuple(hp)} (below, above) "
                f"around this rank's interior {tuple(interior)} needs {want}"
                f"{' plus the components dimension' if comp is not None else ''}")
        dset = [0] * nd
        dp = [(0, 0)] * nd
        if f.depth is not None:
            dp = _resolve_depth(f"{name}: depth", f.depth, dec)
            dset = [1] * nd
        if surface:
            dp[2], dset[2] = (0, 0), 1
        # The layout the library knows by name, when the strides are its own.
        layout, corder = _LAYOUT_STRIDED, _COMP_SLOWEST
        for lay, axes in ((_LAYOUT_ZFAST, range(nd - 1, -1, -1)), (_LAYOUT_XFAST, range(nd))):
            for co in ((_COMP_FASTEST, _COMP_SLOWEST) if ncomp > 1 else (_COMP_SLOWEST,)):
                exp, step = [0] * nd, ncomp if co == _COMP_FASTEST and ncomp > 1 else 1
                for x in axes:
                    exp[x] = step
                    step *= alloc[x]
                cs = 1 if co == _COMP_FASTEST else int(np.prod(alloc))
                same = all(exp[x] == strides[x] for x in range(nd) if not (surface and x == 2))
                if same and (ncomp == 1 or cs == cstride) and layout == _LAYOUT_STRIDED:
                    layout, corder = lay, co
        self.name = name
        self.array = a
        self.dtype = a.dtype
        self.shape = a.shape
        self.c_order = bool(a.flags.c_contiguous)
        self.tuple = (a, DTYPES[a.dtype.newbyteorder("=")], layout, strides[:nd],
                      [h[0] for h in hp], [h[1] for h in hp], [d[0] for d in dp],
                      [d[1] for d in dp], dset, [s == "node" for s in stag],
                      [_OWNER[o] for o in own], ext, ncomp, corder, cstride)

    def check_same(self, name: str, b: Any) -> None:
        """A per-swap array must be laid out exactly as the registered one."""
        _array_checks(name, b)
        if b.dtype != self.dtype or b.shape != self.shape or \
                (self.c_order != bool(b.flags.c_contiguous) and b.ndim > 1):
            order = "C" if self.c_order else "Fortran"
            raise ArgumentError(f"{name} is {b.dtype} {b.shape}; the registered {self.name} is "
                                f"{self.dtype} {self.shape} in {order} order")


def _options_text(options) -> Optional[str]:
    if options is None:
        return None
    if isinstance(options, str):
        return options
    if isinstance(options, Mapping):
        parts = []
        for k, v in options.items():
            if isinstance(v, bool):
                v = int(v)
            elif isinstance(v, (list, tuple)):
                v = "[" + ",".join(map(str, v)) + "]"
            parts.append(f"{k}={v}")
        return ",".join(parts)
    raise ArgumentTypeError(f"options = {options!r}: give a dict or 'key=value,...'")


def _order(order, nd: int) -> Tuple[int, List[int]]:
    """(hs_order, flat list): the library checks the values, collectively."""
    if order is None or (isinstance(order, str) and order == "canonical"):
        return 0, []
    if isinstance(order, str) and order == "sweep":
        return 2, []
    if isinstance(order, (tuple, list)) and len(order) == 2 and order[0] == "sweep":
        try:
            axes = [int(a) for a in order[1]]
        except (TypeError, ValueError):
            raise ArgumentTypeError(f"order = {order!r}: ('sweep', axes) needs a sequence of "
                                    f"axis numbers") from None
        return 2, axes
    if isinstance(order, str):
        raise ArgumentError(f"order = {order!r}, must be 'canonical', 'sweep', ('sweep', "
                            f"axes) or a list of offsets")
    flat: List[int] = []
    try:
        offsets = [tuple(int(v) for v in o) for o in order]
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"order = {order!r}: a list of offsets, each a tuple of {nd} "
                                f"integers") from None
    if not 1 <= len(offsets) <= 26:
        raise ArgumentError(f"order has {len(offsets)} offsets, must be 1..26")
    for o in offsets:
        if len(o) != nd:
            raise ArgumentError(f"order: offset {o} has {len(o)} entries; the grid has {nd} "
                                f"axes")
        flat += list(o) + [0] * (3 - nd)
    return 1, flat


class Plan(Collective):
    """A halo swap of ``fields`` over ``decomp``: created collectively once, then swapped
    as often as needed.

    Parameters
    ----------
    decomp : Decomposition
    fields : numpy.ndarray or Field, or a sequence of them
        Every field's halo is swapped in one aggregated message per neighbour; dtypes,
        memory orders and geometries may differ between fields. The plan holds the arrays
        (they cannot be resized while it lives).
    depth : int, or per axis an int or (lo, hi)
        Cells to swap. An int applies to every axis that has a neighbour (split over ranks
        or periodic); give a tuple to choose per axis. At most each rank's own extent
        on that axis (checked collectively).
    halo : int, or per axis an int or (lo, hi), optional
        Allocated halo of plain arrays (default: inferred from each array's shape).
    stencil : "box" or "star"
        ``"box"``: faces, edges and corners; ``"star"``: faces only.
    transport : str, optional
        ``"p2p"``, ``"shm"``, ``"rma-fence:drive=get"``, ``"auto"``, ... (see
        ``haloswap.transports()``); default ``$HALOSWAP_TRANSPORT``, else p2p.
    options : dict or str, optional
        Transport and core options, e.g. ``{"persistent": 0}`` or ``"staged=1"``.
    oneway : (direction, axis), optional
        A one-direction swap: ``("lower", 0)`` sends every rank's lowest interior strip on
        axis 0 to its lower neighbour (MONC's TVD advection); ``("upper", 0)`` the mirror.
    order : "canonical", a list of offsets, "sweep" or ("sweep", axes)
        The combine order of the reverse exchange (docs/api.md, "Combine order"):
        ``"canonical"`` (the default) combines the contributions offset by offset in
        lexicographic order; a list of offsets such as EPIC's ``[(-1, 0), (1, 0), (0, -1),
        (0, 1), (1, 1), (1, -1), (-1, -1), (-1, 1)]`` in that order (the forward swap is
        unchanged); ``"sweep"`` (x, y, z) or ``("sweep", (2, 0, 1))`` runs forward and reverse
        one axis after another over the full transverse extent including halos (Lare3d,
        EPOCH), after which the halos of the other axes hold partial sums.
    axes : str, optional
        The grid axis of each dimension of the plan's arrays (``"xyz"``, ``"zyx"``, ``"yx"``,
        ...), for every field that does not give its own (``Field(axes=...)``).

    Use ``swap()``, or ``start()`` / ``test()`` / ``complete()`` around interior work, and
    ``reverse(op)`` for the reverse exchange (halo contributions combined into their owners
    in a fixed order: bit-identical results on every transport). Free it with ``free()``
    (collective) or use it as a context manager.
    """

    def __init__(self, decomp: Decomposition, fields, *, depth: Halo = 1,
                 halo: Optional[Halo] = None, stencil: str = "box",
                 transport: Optional[str] = None,
                 options: Union[Mapping[str, Any], str, None] = None,
                 oneway: Optional[Tuple[str, int]] = None, order: Any = "canonical",
                 axes: Optional[str] = None):
        if not isinstance(decomp, Decomposition):
            raise ArgumentTypeError(f"decomp = {decomp!r} is not a haloswap.Decomposition")
        if decomp.closed:
            raise ArgumentError("decomp has been freed")
        self._core = _core.PlanCore()
        self.decomposition = decomp
        if isinstance(fields, (np.ndarray, Field)):
            fields = [fields]
        fields = list(fields)
        specs: List[_Spec] = []
        cfg: dict = {}

        def check() -> None:
            if not 1 <= len(fields) <= _core.MAX_FIELDS:
                raise ArgumentError(f"fields has {len(fields)} entries, must be "
                                    f"1..{_core.MAX_FIELDS}")
            d = _resolve_depth("depth", depth, decomp)
            if any(lo != hi for lo, hi in d):
                raise ArgumentError(f"depth = {depth!r}: a plan's depth is one value per axis "
                                    f"(give per-side depths to a Field)")
            if stencil not in _STENCIL:
                raise ArgumentError(f"stencil = {stencil!r}, must be 'box' or 'star'")
            ow, oax = 0, 0
            if oneway is not None:
                try:
                    direction, oax = oneway
                except (TypeError, ValueError):
                    raise ArgumentError(f"oneway = {oneway!r}: give (direction, axis)") from None
                if direction not in _ONEWAY:
                    raise ArgumentError(f"oneway = {oneway!r}: direction must be 'lower' or "
                                        f"'upper'")
                ow = _ONEWAY[direction]
            cfg.update(depth=[lo for lo, _ in d] + [0] * (3 - decomp.ndims),
                       options=_options_text(options), oneway=ow, oneway_axis=int(oax),
                       order=_order(order, decomp.ndims))
            if transport is not None and not isinstance(transport, str):
                raise ArgumentTypeError(f"transport = {transport!r} is not a string")
            for i, f in enumerate(fields):
                specs.append(_Spec(f"fields[{i}]", f if isinstance(f, Field) else Field(f),
                                   decomp, halo, axes, [lo for lo, _ in d]))
            seen: Dict[int, int] = {}
            for i, s in enumerate(specs):
                addr = s.array.__array_interface__["data"][0]
                if addr in seen:
                    raise ArgumentError(f"fields[{i}] is the same array as fields[{seen[addr]}]")
                seen[addr] = i

        agree(decomp.comm, check)
        self._specs = specs
        self._order = order
        # numpy refuses to resize an array something holds a weak reference to, even with
        # refcheck=False: the registered arrays (and the arrays they view) keep their memory.
        self._pins = [weakref.ref(x) for s in specs for x in _owners(s.array)]
        self._core.rank = decomp.rank
        self._core.create(decomp._core, [s.tuple for s in specs], cfg["depth"],
                          _STENCIL[stencil], cfg["oneway"], cfg["oneway_axis"], transport,
                          cfg["options"], *cfg["order"])
        decomp._plans.add(self)

    # ------------------------------------------------------------------ swaps
    def _given(self, arrays, who: str):
        """(arrays as a list or None, this rank's fault in them as (status, message) or None).
        No communication: a fault fails the operation's round in the library, which carries
        it to the neighbours in that round (docs/design.md, "Errors during a swap")."""
        if arrays is None:
            return None, None
        arrays = list(arrays)
        try:
            if len(arrays) != len(self._specs):
                raise ArgumentError(f"{who}: arrays has {len(arrays)} entries; the plan has "
                                    f"{len(self._specs)} fields (None keeps a registered one)")
            for i, (s, b) in enumerate(zip(self._specs, arrays)):
                if b is not None:
                    s.check_same(f"{who}: arrays[{i}]", b)
        except Error as e:
            return [None] * len(self._specs), (e.status, e.message)
        return arrays, None

    def swap(self, arrays: Optional[Sequence[Optional[np.ndarray]]] = None) -> None:
        """Swap every halo and return when all are written. ``arrays``: one array (or None:
        the registered one) per field for this swap only, laid out as the registered one."""
        if arrays is None:
            self._core.swap()
        else:
            self._core.swap(*self._given(arrays, "Plan.swap"))

    def start(self, arrays: Optional[Sequence[Optional[np.ndarray]]] = None) -> "Plan":
        """Start a swap; returns at once without waiting for any neighbour. Until
        ``complete()``, neither write the interior cells next to the halo nor read the
        halo. Returns the plan (``plan.start().complete()``)."""
        self._core.start(*self._given(arrays, "Plan.start"))
        return self

    def test(self) -> bool:
        """Progress a started swap; True once every halo cell is written (``complete()``
        must still be called, and then returns at once)."""
        return self._core.test()

    def complete(self) -> None:
        """Wait until every halo cell of the started swap is written."""
        self._core.complete()

    wait = complete

    def reverse(self, op: str = "sum",
                arrays: Optional[Sequence[Optional[np.ndarray]]] = None) -> None:
        """The reverse exchange: every halo cell the forward swap writes is sent back to
        the rank owning the cell it mirrors and combined into it with ``op`` ("sum", "max",
        "min" or "replace"), in the plan's canonical order: bit-identical on every
        transport and run. Halo cells are left as they were."""
        self._core.reverse(*self._op_given(op, arrays, "Plan.reverse"))

    def reverse_start(self, op: str = "sum",
                      arrays: Optional[Sequence[Optional[np.ndarray]]] = None) -> "Plan":
        """Start a reverse exchange (see ``reverse``); finish it with ``reverse_complete``."""
        self._core.reverse_start(*self._op_given(op, arrays, "Plan.reverse_start"))
        return self

    def reverse_complete(self) -> None:
        """Wait until every owner has combined the contributions of the started reverse."""
        self._core.reverse_complete()

    def accumulate_fill(self, op: str = "sum",
                        arrays: Optional[Sequence[Optional[np.ndarray]]] = None) -> None:
        """``reverse(op)`` then ``swap()``: owners combine their halo contributions, then
        every halo gets the owners' results (EPIC's parcel-to-grid step)."""
        self._core.accumulate_fill(*self._op_given(op, arrays, "Plan.accumulate_fill"))

    def _op_given(self, op: str, arrays, who: str):
        """(hs_op, arrays, fault) of a reverse: an unknown op is a fault of this rank, carried
        in the round like the arrays' (the library's own check of op does the same)."""
        arrays, fault = self._given(arrays, who)
        known = isinstance(op, str) and op in _OPS
        if not known and fault is None:
            fault = (ArgumentError.status, f"{who}: op = {op!r}, must be one of 'sum', 'max', "
                                           f"'min', 'replace'")
        return _OPS[op] if known else 0, arrays, fault

    # ------------------------------------------------------------------ queries
    @property
    def fields(self) -> Tuple[np.ndarray, ...]:
        """The registered arrays, in plan order."""
        return tuple(s.array for s in self._specs)

    @property
    def transport(self) -> str:
        """The transport the plan was created with ("auto" stays "auto")."""
        return self._core.transport()

    @property
    def selected_transport(self) -> str:
        """The transport that moves the data (auto's choice)."""
        return self._core.selected_transport()

    @property
    def order(self) -> Any:
        """The combine order the plan was given."""
        return self._order

    @property
    def in_progress(self) -> Optional[str]:
        """"swap" or "reverse" while one is started and not completed, else None."""
        return {0: None, 1: "swap", 2: "reverse"}[self._core.pending]

    def describe(self) -> str:
        """The library's description: transport and resolved options, peers and bytes,
        and what the transport decided at creation (auto: every candidate's timing)."""
        return self._core.describe()

    @property
    def stats(self) -> Dict[str, Any]:
        """Counters of this rank: swaps, bytes per swap, seconds in start/complete/test,
        bytes_allocated, npeers, reverses, ..."""
        return self._core.stats()

    def reset_stats(self) -> None:
        """Zero the counters (swaps, seconds); the byte counts describe the plan and stay."""
        self._core.reset_stats()

    # ------------------------------------------------------------------ lifetime
    def free(self) -> None:
        """Collective: frees the plan and lets go of its arrays."""
        self._core.free()
        self._pins = []

    def __repr__(self) -> str:
        if self.closed:
            return "<haloswap.Plan (freed)>"
        return (f"<haloswap.Plan {len(self._specs)} fields, transport {self.transport}"
                f"{' -> ' + self.selected_transport if self.selected_transport != self.transport else ''}>")
