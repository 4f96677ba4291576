#!/usr/bin/env python3
"""Bit-for-bit comparison of two SDF files (the output format of Lare3d and EPOCH), block by
block: every block's metadata and data bytes must be equal. A reader of our own, from the SDF
file layout: a header, then a chain of blocks, each a fixed-length header (next block, data
location, id, data length, block type, data type, dims, name, info length), its info bytes
(mesh, units, stagger, a constant's value, ...) and its data.

  sdf_compare.py A.sdf B.sdf [--ignore ID]... [--list]

Run-info blocks (build and run dates, host) are always skipped; --ignore skips more block ids
(EPOCH's wall-clock "elapsed_time"). Scope: every other block of the file, its metadata (name,
type, dimensions, info: mesh, units, stagger, ...) and its data bytes, the file header's step
and time. Prints one line per differing block (for data of a numeric type: how many values
differ and the largest difference) and a summary; exit status 0 when every compared block is
identical, 1 otherwise, 2 on a read error."""
import array
import math
import struct
import sys

RUN_INFO = 7
ID_LENGTH = 32
# SDF data types with a fixed-size element: array type code (1 int4, 2 int8, 3 real4, 4 real8)
NUMERIC = {1: "i", 2: "q", 3: "f", 4: "d"}
TYPE_NAME = {1: "int32", 2: "int64", 3: "float32", 4: "float64"}


def data_diff(dtype, a, b, swap):
    """How two equal-length data payloads differ: 'K of N TYPE values differ, largest
    difference D (at I: A vs B)', or a byte count for non-numeric data."""
    code = NUMERIC.get(dtype)
    if code is None or len(a) != len(b) or len(a) % array.array(code).itemsize:
        nb = sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b))
        return f"{nb} of {max(len(a), len(b))} bytes differ"
    va, vb = array.array(code, a), array.array(code, b)
    if swap:
        va.byteswap()
        vb.byteswap()
    size = va.itemsize
    ndiff, worst, where = 0, -1.0, 0
    for i in range(len(va)):
        if a[i * size:(i + 1) * size] == b[i * size:(i + 1) * size]:
            continue
        ndiff += 1
        d = abs(va[i] - vb[i])
        if math.isnan(d):
            d = math.inf
        if d > worst:
            worst, where = d, i
    return (f"{ndiff} of {len(va)} {TYPE_NAME[dtype]} values differ, largest difference "
            f"{worst:.6g} (at value {where}: {va[where]!r} vs {vb[where]!r})")


def blocks(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"SDF1":
        raise ValueError(f"{path}: not an SDF file")
    (endian,) = struct.unpack_from("<i", data, 4)
    e = "<" if endian == 0x01020E0F else ">"
    version, revision = struct.unpack_from(e + "ii", data, 8)
    first, = struct.unpack_from(e + "q", data, 16 + ID_LENGTH)
    nblocks, header_len, step = struct.unpack_from(e + "iii", data, 68)
    (time,) = struct.unpack_from(e + "d", data, 80)
    (string_len,) = struct.unpack_from(e + "i", data, 96)
    out = {"step": step, "time": time, "blocks": [], "swap": (e == ">") != (sys.byteorder == "big")}
    loc = first
    for _ in range(nblocks):
        nxt, dloc = struct.unpack_from(e + "qq", data, loc)
        bid = data[loc + 16:loc + 16 + ID_LENGTH].rstrip(b"\0 ").decode(errors="replace")
        p = loc + 16 + ID_LENGTH
        (dlen,) = struct.unpack_from(e + "q", data, p)
        btype, dtype, ndims = struct.unpack_from(e + "iii", data, p + 8)
        p += 20
        name = data[p:p + string_len].rstrip(b"\0 ").decode(errors="replace")
        p += string_len
        info_len = struct.unpack_from(e + "i", data, p)[0] if version + revision > 1 else 0
        info = data[loc + header_len:loc + header_len + info_len]
        payload = data[dloc:dloc + dlen] if dlen > 0 else b""
        if len(payload) != max(dlen, 0):
            raise ValueError(f"{path}: block {bid} data runs past the end of the file")
        out["blocks"].append((bid, name, btype, dtype, ndims, info, payload))
        loc = nxt
    return out


def main(argv):
    args, ignore, listing = [], set(), False
    it = iter(argv)
    for a in it:
        if a == "--ignore":
            ignore.add(next(it))
        elif a == "--list":
            listing = True
        else:
            args.append(a)
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        a, b = blocks(args[0]), blocks(args[1])
    except (OSError, ValueError, struct.error) as err:
        print(f"sdf_compare: {err}", file=sys.stderr)
        return 2
    bad = []
    if (a["step"], a["time"]) != (b["step"], b["time"]):
        bad.append(f"header: step/time {a['step']}/{a['time']!r} vs {b['step']}/{b['time']!r}")
    ids_a = [x[0] for x in a["blocks"]]
    ids_b = [x[0] for x in b["blocks"]]
    if ids_a != ids_b:
        bad.append(f"block lists differ: {ids_a} vs {ids_b}")
    compared = nbytes = 0
    bmap = {x[0]: x for x in b["blocks"]}
    for blk in a["blocks"]:
        bid, name, btype = blk[0], blk[1], blk[2]
        if btype == RUN_INFO or bid in ignore or bid not in bmap:
            continue
        other = bmap[bid]
        compared += 1
        nbytes += len(blk[6])
        if blk[1:6] != other[1:6]:
            bad.append(f"block {bid} ({name}): metadata differs")
        elif blk[6] != other[6]:
            bad.append(f"block {bid} ({name}): data differs: "
                       f"{data_diff(blk[3], blk[6], other[6], a['swap'])}")
        elif listing:
            print(f"block {bid} ({name}): identical, {len(blk[6])} data bytes")
    for line in bad:
        print(line)
    print(f"sdf_compare: {compared} blocks, {nbytes} data bytes compared; "
          f"{'identical' if not bad else str(len(bad)) + ' differ'}")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
