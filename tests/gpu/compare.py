#!/usr/bin/env python3
"""Compare the output of a run that shared the GPU with runs alone.

usage: compare.py NAME CONCURRENT SOLO1 SOLO2 [SOLO3 ...]

If the solo runs are byte-identical (the program is reproducible alone), the
concurrent output must be byte-identical to them. If they are not (e.g.
poissonrec, whose GPU solve sums with floating-point atomics in whatever
order the threads arrive), the concurrent output must be within 4 times the
largest solo-vs-solo difference, measured as:
  PLY:   the largest difference of a vertex property when all the meshes have
         the same element counts and faces; else (a corner value that lands
         on the other side of the iso value adds or moves a few vertices)
         the 99.9th percentile of the distances from each vertex of one mesh
         to the nearest vertex of the other, both ways;
  text:  the largest difference of a number, relative to the file's largest
         magnitude (the other tokens must be equal);
  other: the largest difference of a byte (the lengths must be equal).
Prints one verdict line ("ok ..." or "FAIL ...", with what differed) and
exits 0 or 1; exit 3 (and a note, not a verdict) when the solo runs are
byte-identical and the concurrent output is not: the caller may run the job
alone a few more times to tell a program that is not reproducible after all.
"""
import math
import struct
import sys

FACTOR = 4.0

PLY_TYPES = {"char": "b", "int8": "b", "uchar": "B", "uint8": "B", "short": "h", "int16": "h",
             "ushort": "H", "uint16": "H", "int": "i", "int32": "i", "uint": "I", "uint32": "I",
             "float": "f", "float32": "f", "double": "d", "float64": "d"}


def parse_ply(data):
    """{element: (names, rows)} with rows of tuples (lists as tuples), or None."""
    if not data.startswith(b"ply\n") and not data.startswith(b"ply\r\n"):
        return None
    end = data.find(b"end_header")
    if end < 0:
        return None
    nl = data.find(b"\n", end)
    head = data[:end].decode("ascii", "replace").split("\n")
    body = data[nl + 1:]
    fmt, elems = None, []
    for line in head:
        t = line.split()
        if not t:
            continue
        if t[0] == "format":
            fmt = t[1]
        elif t[0] == "element":
            elems.append([t[1], int(t[2]), []])
        elif t[0] == "property" and elems:
            if t[1] == "list":
                elems[-1][2].append((t[4], PLY_TYPES[t[2]], PLY_TYPES[t[3]]))
            else:
                elems[-1][2].append((t[2], None, PLY_TYPES[t[1]]))
    out = {}
    if fmt == "ascii":
        toks = body.split()
        pos = 0
        for name, count, props in elems:
            rows = []
            for _ in range(count):
                row = []
                for _, lt, vt in props:
                    if lt:
                        k = int(toks[pos]); pos += 1
                        row.append(tuple(float(x) for x in toks[pos:pos + k])); pos += k
                    else:
                        row.append(float(toks[pos])); pos += 1
                rows.append(tuple(row))
            out[name] = ([p[0] for p in props], rows)
        return out
    end_ch = "<" if fmt == "binary_little_endian" else ">"
    pos = 0
    for name, count, props in elems:
        rows = []
        if all(lt is None for _, lt, _ in props):
            rec = end_ch + "".join(vt for _, _, vt in props)
            size = struct.calcsize(rec)
            for r in struct.iter_unpack(rec, body[pos:pos + size * count]):
                rows.append(r)
            pos += size * count
        else:
            for _ in range(count):
                row = []
                for _, lt, vt in props:
                    if lt:
                        (k,) = struct.unpack_from(end_ch + lt, body, pos); pos += struct.calcsize(lt)
                        row.append(struct.unpack_from(end_ch + vt * k, body, pos)); pos += struct.calcsize(vt) * k
                    else:
                        (v,) = struct.unpack_from(end_ch + vt, body, pos); pos += struct.calcsize(vt)
                        row.append(v)
                rows.append(tuple(row))
        out[name] = ([p[0] for p in props], rows)
    return out


def same_structure(a, b):
    """PLYs with the same elements, counts and non-vertex (face) data."""
    if a.keys() != b.keys():
        return False
    for k in a:
        if a[k][0] != b[k][0] or len(a[k][1]) != len(b[k][1]):
            return False
        if k != "vertex" and a[k][1] != b[k][1]:
            return False
    return True


def nearest_distances(pa, pb):
    """for each point of pa, the distance to the nearest point of pb."""
    if not pa or not pb:
        return [] if not pa else [math.inf] * len(pa)
    lo = [min(p[i] for p in pb) for i in range(3)]
    hi = [max(p[i] for p in pb) for i in range(3)]
    diag = math.sqrt(sum((h - l) ** 2 for h, l in zip(hi, lo))) or 1.0
    h = diag / 64
    grid = {}
    for p in pb:
        grid.setdefault(tuple(int(math.floor((p[i] - lo[i]) / h)) for i in range(3)), []).append(p)
    dist = []
    for p in pa:
        c = [int(math.floor((p[i] - lo[i]) / h)) for i in range(3)]
        best, r = math.inf, 1
        while True:
            for dx in range(-r, r + 1):
                for dy in range(-r, r + 1):
                    for dz in range(-r, r + 1):
                        for q in grid.get((c[0] + dx, c[1] + dy, c[2] + dz), ()):
                            d = math.dist(p, q)
                            if d < best:
                                best = d
            if best <= r * h or r > 64:
                break
            r *= 2
        dist.append(best)
    return dist


def ply_metric(a, b, structural):
    """(metric, description) for two parsed PLYs."""
    va, vb = a["vertex"], b["vertex"]
    if structural:
        worst, where = 0.0, ""
        for i, (ra, rb) in enumerate(zip(va[1], vb[1])):
            for j, (x, y) in enumerate(zip(ra, rb)):
                if x != y and not (isinstance(x, float) and math.isnan(x) and math.isnan(y)):
                    d = abs(x - y)
                    if d > worst:
                        worst, where = d, "vertex %d %s: %.9g vs %.9g" % (i, va[0][j], x, y)
        ndiff = sum(1 for ra, rb in zip(va[1], vb[1]) if ra != rb)
        return worst, "same counts and faces; %d of %d vertices differ, largest difference %.3g (%s)" % (
            ndiff, len(va[1]), worst, where or "none")
    ix = [va[0].index(n) for n in ("x", "y", "z")]
    pa = [tuple(r[i] for i in ix) for r in va[1]]
    pb = [tuple(r[i] for i in ix) for r in vb[1]]
    dist = sorted(nearest_distances(pa, pb) + nearest_distances(pb, pa))
    if not dist:
        return 0.0, "two empty meshes"
    q = dist[min(len(dist) - 1, int(0.999 * len(dist)))]
    counts = ", ".join("%s %d vs %d" % (k, len(a[k][1]), len(b[k][1])) for k in a if k in b)
    return q, "different meshes (%s); vertex-to-nearest-vertex distance: 99.9th percentile %.3g, largest %.3g" % (
        counts, q, dist[-1])


def text_metric(a, b):
    ta, tb = a.split(), b.split()
    if len(ta) != len(tb):
        return math.inf, "%d vs %d tokens" % (len(ta), len(tb))
    scale, worst, where, ndiff = 0.0, 0.0, "", 0
    nums = []
    for i, (x, y) in enumerate(zip(ta, tb)):
        if x == y:
            try:
                scale = max(scale, abs(float(x)))
            except ValueError:
                pass
            continue
        ndiff += 1
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            return math.inf, "token %d differs: '%s' vs '%s'" % (i, x[:40], y[:40])
        scale = max(scale, abs(fx), abs(fy))
        nums.append((abs(fx - fy), i, x, y))
    for d, i, x, y in nums:
        if d > worst:
            worst, where = d, "token %d: %s vs %s" % (i, x, y)
    rel = worst / scale if scale > 0 else worst
    return rel, "%d of %d tokens differ; largest difference %.3g of the largest magnitude (%s)" % (
        ndiff, len(ta), rel, where or "none")


def byte_metric(a, b):
    if len(a) != len(b):
        return math.inf, "%d vs %d bytes" % (len(a), len(b))
    diffs = [i for i in range(len(a)) if a[i] != b[i]]
    if not diffs:
        return 0.0, "identical"
    worst = max(abs(a[i] - b[i]) for i in diffs)
    return float(worst), "%d of %d bytes differ (first at byte %d), largest difference %d" % (
        len(diffs), len(a), diffs[0], worst)


def kind_of(data):
    if data.startswith(b"ply\n") or data.startswith(b"ply\r\n"):
        return "ply"
    try:
        data[:65536].decode("ascii")
        return "text"
    except UnicodeDecodeError:
        return "bytes"


def metrics(files):
    """metric(i, j) over the given file contents, one kind of measure for all."""
    kind = kind_of(files[0])
    if kind == "ply":
        plys = [parse_ply(f) for f in files]
        if all(p is not None and "vertex" in p for p in plys):
            structural = all(same_structure(plys[0], p) for p in plys[1:])
            return lambda i, j: ply_metric(plys[i], plys[j], structural)
        kind = "bytes"
    if kind == "text":
        texts = [f.decode("ascii", "replace") for f in files]
        return lambda i, j: text_metric(texts[i], texts[j])
    return lambda i, j: byte_metric(files[i], files[j])


def main(argv):
    if len(argv) < 5:
        print(__doc__.strip())
        return 2
    name, conc, solos = argv[1], argv[2], argv[3:]
    files = [open(p, "rb").read() for p in [conc] + solos]
    c, s = files[0], files[1:]
    m = metrics(files)
    if all(x == s[0] for x in s[1:]):
        if c == s[0]:
            print("ok   %s: byte-identical to the run alone (%d solo runs, byte-identical: reproducible)" % (
                name, len(s)))
            return 0
        _, what = m(1, 0)
        print("     %s: %d solo runs are byte-identical, the concurrent output is not: %s" % (name, len(s), what))
        return 3
    noise, nwhat = 0.0, ""
    for i in range(1, len(files)):
        for j in range(i + 1, len(files)):
            d, what = m(i, j)
            if d >= noise:
                noise, nwhat = d, what
    if math.isinf(noise):
        print("FAIL %s: the solo runs differ in structure, no tolerance applies: %s" % (name, nwhat))
        return 1
    d, what = m(1, 0)
    ok = d <= FACTOR * noise
    print("%s %s: not reproducible alone (solo vs solo: %s); concurrent vs solo: %s; %.3g %s %g x %.3g" % (
        "ok  " if ok else "FAIL", name, nwhat, what, d, "<=" if ok else ">", FACTOR, noise))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
