"""Surfaces, PLY I/O and mesh measures for scripts/bench/poissonrec (the
quality harness of issue 17): test surfaces with area-uniform samples, exact
outward normals and exact point-to-surface distances; the Stanford bunny with
area-weighted vertex normals; exact point-to-triangle-mesh distances;
watertightness and orientation of a triangle mesh.

Every distance here is exact up to floating point: closed forms (torus,
rounded disk), root finding (ellipsoid: bisection on the Lagrange
multiplier), or a closest-point iteration converged to 1e-12 (bumpy sphere);
to a triangle mesh, the minimum over the triangles whose centroids are the k
nearest to the query (exact when the closest triangle is among them, an upper
bound otherwise; k is far above what cell-sized triangles need).
"""
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

WORKERS = os.cpu_count() or 1
CHUNK = 1 << 17


def chunked(fn, x, *args):
    """fn over row chunks of x on all cores (numpy's ufuncs release the GIL)."""
    parts = [x[i:i + CHUNK] for i in range(0, len(x), CHUNK)]
    if len(parts) <= 1:
        return fn(x, *args)
    with ThreadPoolExecutor(WORKERS) as ex:
        res = list(ex.map(lambda p: fn(p, *args), parts))
    return np.concatenate(res)


def unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def random_dirs(g, n):
    return unit(g.normal(size=(n, 3)))


def rejection(g, n, draw, weight, wmax):
    """n draws of draw(g, m) kept with probability weight / wmax."""
    out, have = [], 0
    while have < n:
        m = int((n - have) * 1.3) + 1000
        p = draw(g, m)
        w = weight(p)
        if w.max() > wmax * 1.0001:
            raise RuntimeError("rejection sampling: weight bound too small")
        keep = p[g.random(m) * wmax < w]
        out.append(keep)
        have += len(keep)
    return np.concatenate(out)[:n]


# ------------------------------------------------------------------ surfaces
class Ellipsoid:
    """smooth: x^2/a^2 + y^2/b^2 + z^2/c^2 = 1"""
    name = "ellipsoid"

    def __init__(self, a=1.0, b=0.7, c=0.5):
        self.e = np.array([a, b, c])
        self.desc = f"ellipsoid {a:g} x {b:g} x {c:g} (smooth)"

    def sample(self, n, g):
        e = self.e
        # the map u -> e*u from the unit sphere scales area by prod(e) |u / e|
        u = rejection(g, n, random_dirs, lambda u: np.linalg.norm(u / e, axis=1), 1.0 / e.min())
        return u * e, unit(u / e)

    def distance(self, x):
        return chunked(self._dist, np.asarray(x, np.float64))

    def _dist(self, x):
        # Eberly, "Distance from a point to an ellipse, an ellipsoid, or a
        # hyperellipsoid": in the first octant the closest point is
        # e_i^2 y_i / (t + e_i^2), t the root of sum (e_i y_i / (t + e_i^2))^2 = 1
        # on t > -min(e)^2, where that sum decreases strictly: bisection
        e = self.e
        y = np.maximum(np.abs(x), 1e-12)
        e2 = e.min() ** 2
        lo = -e2 + e.min() * y[:, np.argmin(e)]
        hi = -e2 + np.linalg.norm(e * y, axis=1)
        for _ in range(80):
            t = 0.5 * (lo + hi)
            f = ((e * y / (t[:, None] + e * e)) ** 2).sum(axis=1) - 1.0
            pos = f > 0
            lo = np.where(pos, t, lo)
            hi = np.where(pos, hi, t)
        t = 0.5 * (lo + hi)
        c = e * e * y / (t[:, None] + e * e)
        return np.linalg.norm(y - c, axis=1)


class BumpySphere:
    """high-curvature bumps: r(d) d with r(d) = 1 + 0.08 sum_k sin(f_k . d + phi_k) / sqrt(12)
    (the surface of issue 17's figures)"""
    name = "bumpy"

    def __init__(self):
        rng = np.random.default_rng(1)
        self.F = rng.normal(size=(12, 3)) * 4.0
        self.P = rng.uniform(0, 2 * np.pi, 12)
        self.A = 0.08 / np.sqrt(12)
        self.desc = "bumpy sphere r(d) = 1 + 0.08 sum_12 sin(f_k.d + phi_k)/sqrt(12), |f_k| ~ 7 (high curvature)"

    def r_grad(self, d):
        """r(d) and the ambient gradient of d -> r(d); products written out, not
        matmul: BLAS threads under chunked()'s threads would oversubscribe the cores"""
        F = self.F
        s = d[:, 0:1] * F[:, 0] + d[:, 1:2] * F[:, 1] + d[:, 2:3] * F[:, 2] + self.P
        c = np.cos(s)
        gr = np.stack([(c * F[:, k]).sum(axis=1) for k in range(3)], 1)
        return 1.0 + self.A * np.sin(s).sum(axis=1), self.A * gr

    def f_grad(self, p):
        """f(p) = |p| - r(p/|p|) (zero on the surface, negative inside) and its gradient"""
        rho = np.linalg.norm(p, axis=1)
        d = p / rho[:, None]
        r, gr = self.r_grad(d)
        tang = gr - (gr * d).sum(axis=1)[:, None] * d
        return rho - r, d - tang / rho[:, None]

    def sample(self, n, g):
        def weight(d):  # area element of d -> r(d) d over the unit sphere's
            r, gr = self.r_grad(d)
            tang = gr - (gr * d).sum(axis=1)[:, None] * d
            return r * np.sqrt(r * r + (tang * tang).sum(axis=1))
        wmax = 1.2 * weight(random_dirs(np.random.default_rng(7), 200000)).max()
        d = rejection(g, n, random_dirs, weight, wmax)
        r, _ = self.r_grad(d)
        p = d * r[:, None]
        return p, unit(self.f_grad(p)[1])

    def distance(self, x):
        return chunked(self._dist, np.asarray(x, np.float64))

    def _dist(self, x):
        # closest point by alternating projections from the radial projection:
        # onto f = 0 along the gradient, then within the tangent plane towards x;
        # the fixed point has f = 0 and x - y along the normal. Linear
        # convergence at rate ~ distance x curvature (<< 1 near the surface)
        d = unit(x)
        y = d * self.r_grad(d)[0][:, None]
        bound = np.linalg.norm(x - y, axis=1)  # an upper bound: y is on the surface
        act = np.arange(len(x))
        for _ in range(100):
            ya, xa = y[act], x[act]
            f, gd = self.f_grad(ya)  # one evaluation per round: a Newton step onto f = 0 ...
            g2 = (gd * gd).sum(axis=1)
            ya = ya - (f / g2)[:, None] * gd
            n = gd / np.sqrt(g2)[:, None]  # ... and the tangent plane there
            v = xa - ya
            step = v - (v * n).sum(axis=1)[:, None] * n
            y[act] = ya + step
            done = (np.linalg.norm(step, axis=1) < 1e-13) & (np.abs(f) < 1e-13)
            act = act[~done]
            if len(act) == 0:
                break
        for _ in range(2):
            f, gd = self.f_grad(y)
            y = y - (f / (gd * gd).sum(axis=1))[:, None] * gd
        return np.minimum(np.linalg.norm(x - y, axis=1), bound)


class Torus:
    """thin parts: a torus whose tube is a few finest cells across at depth 8"""
    name = "torus"

    def __init__(self, cells=4.0, depth=8, R=1.0):
        # tube diameter = cells x finest cell (1.1 x longest side / 2^depth), side = 2 (R + r)
        k = cells * 1.1 * 2 / 2 ** depth
        self.R, self.r = R, k * R / (2 - k)
        self.desc = (f"torus R {R:g}, tube radius {self.r:.4g} (diameter {cells:g} finest cells "
                     f"at depth {depth}: thin part)")

    def sample(self, n, g):
        R, r = self.R, self.r
        th = rejection(g, n, lambda g, m: g.uniform(0, 2 * np.pi, m), lambda t: R + r * np.cos(t), R + r)
        ph = g.uniform(0, 2 * np.pi, n)
        nrm = np.stack([np.cos(th) * np.cos(ph), np.cos(th) * np.sin(ph), np.sin(th)], 1)
        c = np.stack([R * np.cos(ph), R * np.sin(ph), np.zeros(n)], 1)
        return c + r * nrm, nrm

    def distance(self, x):
        x = np.asarray(x, np.float64)
        q = np.hypot(x[:, 0], x[:, 1])
        return np.abs(np.hypot(q - self.R, x[:, 2]) - self.r)


class RoundedDisk:
    """thin parts: the points within rho of a flat disk of radius R (a slab with
    a rounded rim), 2 rho a few finest cells at depth 8"""
    name = "disk"

    def __init__(self, cells=4.0, depth=8, R=1.0):
        k = cells * 1.1 * 2 / 2 ** depth
        self.R, self.rho = R, k * R / (2 - k)
        self.desc = (f"rounded disk R {R:g}, thickness {2 * self.rho:.4g} ({cells:g} finest cells "
                     f"at depth {depth}: thin slab)")

    def sample(self, n, g):
        R, rho = self.R, self.rho
        a_cap = np.pi * R * R
        a_rim = 2 * np.pi * rho * (np.pi * R + 2 * rho)
        which = g.random(n) * (2 * a_cap + a_rim)
        p, nrm = np.zeros((n, 3)), np.zeros((n, 3))
        cap = which < 2 * a_cap
        m = int(cap.sum())
        q = R * np.sqrt(g.random(m))
        ph = g.uniform(0, 2 * np.pi, m)
        s = np.where(g.random(m) < 0.5, 1.0, -1.0)
        p[cap] = np.stack([q * np.cos(ph), q * np.sin(ph), s * rho], 1)
        nrm[cap] = np.stack([np.zeros(m), np.zeros(m), s], 1)
        m = n - m
        th = rejection(g, m, lambda g, k: g.uniform(-np.pi / 2, np.pi / 2, k),
                       lambda t: R + rho * np.cos(t), R + rho)
        ph = g.uniform(0, 2 * np.pi, m)
        nn = np.stack([np.cos(th) * np.cos(ph), np.cos(th) * np.sin(ph), np.sin(th)], 1)
        p[~cap] = np.stack([R * np.cos(ph), R * np.sin(ph), np.zeros(m)], 1) + rho * nn
        nrm[~cap] = nn
        return p, nrm

    def distance(self, x):
        x = np.asarray(x, np.float64)
        q = np.hypot(x[:, 0], x[:, 1])
        return np.abs(np.hypot(np.maximum(q - self.R, 0.0), x[:, 2]) - self.rho)


class RoundBox:
    """sharp features: a box with rounded edges and corners (the points within
    r of a box of half-sides a, b, c); r a few finest cells at depth 8, so the
    edges and corners are as curved as the grid resolves, between flat faces"""
    name = "roundbox"

    def __init__(self, a=0.8, b=0.5, c=0.35, cells=3.0, depth=8):
        h = np.array([a, b, c])
        # r = cells x finest cell (1.1 x longest side / 2^depth), side = 2 (a + r)
        k = cells * 1.1 * 2 / 2 ** depth
        self.h, self.r = h, k * h.max() / (1 - k)
        self.desc = (f"rounded box {2 * a:g} x {2 * b:g} x {2 * c:g}, edge radius {self.r:.4g} "
                     f"({cells:g} finest cells at depth {depth}: sharp edges and corners)")

    def sample(self, n, g):
        h, r = self.h, self.r
        # parts: 6 faces, 12 quarter cylinders (along each axis), 8 sphere octants
        faces = [4 * h[(i + 1) % 3] * h[(i + 2) % 3] for i in range(3)]
        edges = [np.pi * r * h[i] for i in range(3)]  # (pi r / 2) x 2 h_i
        area = np.array(faces * 2 + edges * 4 + [4 * np.pi * r * r])
        which = np.searchsorted(np.cumsum(area) / area.sum(), g.random(n))
        p, nrm = np.zeros((n, 3)), np.zeros((n, 3))
        for w in range(len(area)):
            sel = which == w
            m = int(sel.sum())
            if m == 0:
                continue
            if w < 6:  # face of axis i, side s
                i, s = w % 3, 1.0 if w < 3 else -1.0
                j, k = (i + 1) % 3, (i + 2) % 3
                q = np.zeros((m, 3))
                q[:, i] = s * (h[i] + r)
                q[:, j] = g.uniform(-h[j], h[j], m)
                q[:, k] = g.uniform(-h[k], h[k], m)
                nn = np.zeros((m, 3))
                nn[:, i] = s
            elif w < 18:  # quarter cylinder along axis i, sides sj, sk
                e = w - 6
                i, sj, sk = e % 3, 1.0 if (e // 3) & 1 else -1.0, 1.0 if (e // 6) & 1 else -1.0
                j, k = (i + 1) % 3, (i + 2) % 3
                th = g.uniform(0, np.pi / 2, m)
                nn = np.zeros((m, 3))
                nn[:, j], nn[:, k] = sj * np.cos(th), sk * np.sin(th)
                q = r * nn
                q[:, i] = g.uniform(-h[i], h[i], m)
                q[:, j] += sj * h[j]
                q[:, k] += sk * h[k]
            else:  # corners: a uniform direction, centred on the corner of its octant
                nn = random_dirs(g, m)
                q = np.sign(nn) * h + r * nn
            p[sel], nrm[sel] = q, nn
        return p, nrm

    def distance(self, x):
        q = np.abs(np.asarray(x, np.float64)) - self.h
        out = np.linalg.norm(np.maximum(q, 0.0), axis=1) + np.minimum(q.max(axis=1), 0.0)
        return np.abs(out - self.r)


SURFACES = {s.name: s for s in (Ellipsoid, BumpySphere, Torus, RoundedDisk, RoundBox)}


def uneven(truth, n, g, ratio=20.0):
    """n points of truth's surface whose density grows by ratio from its -x end
    to its +x end (exponentially in x), as a scan's density falls with
    distance: area-uniform draws kept with probability ratio^(t - 1), t the
    draw's place in [0, 1] along x"""
    lo, hi = None, None
    out, nout, have = [], [], 0
    while have < n:
        m = int((n - have) * 1.3 * np.log(ratio) / (1 - 1 / ratio)) + 1000
        p, nrm = truth.sample(m, g)
        if lo is None:
            lo, hi = p[:, 0].min(), p[:, 0].max()
        t = np.clip((p[:, 0] - lo) / (hi - lo), 0.0, 1.0)
        keep = g.random(m) < ratio ** (t - 1.0)
        out.append(p[keep])
        nout.append(nrm[keep])
        have += int(keep.sum())
    return np.concatenate(out)[:n], np.concatenate(nout)[:n]


def perturb(p, nrm, sigma, deg, g):
    """position noise: a Gaussian step of deviation sigma along a random
    direction; normals turned by exactly deg degrees about a random axis
    perpendicular to them"""
    n = len(p)
    p = p + (sigma * g.normal(size=n))[:, None] * random_dirs(g, n)
    t = unit(np.cross(nrm, random_dirs(g, n)))  # a random direction perpendicular to the normal
    a = np.radians(deg)
    return p, unit(np.cos(a) * nrm + np.sin(a) * t)


# ------------------------------------------------------------------ meshes
PLY_TYPES = {"char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1", "short": "<i2", "int16": "<i2",
             "ushort": "<u2", "uint16": "<u2", "int": "<i4", "int32": "<i4", "uint": "<u4",
             "uint32": "<u4", "float": "<f4", "float32": "<f4", "double": "<f8", "float64": "<f8"}


def write_points(path, p, nrm):
    with open(path, "wb") as f:
        f.write(("ply\nformat binary_little_endian 1.0\nelement vertex %d\n"
                 "property float x\nproperty float y\nproperty float z\n"
                 "property float nx\nproperty float ny\nproperty float nz\nend_header\n" % len(p)).encode())
        f.write(np.hstack([p, nrm]).astype("<f4").tobytes())


def read_mesh(path):
    """binary little-endian PLY: vertices (x y z first among any properties),
    faces as a list property; all faces must be triangles"""
    with open(path, "rb") as f:
        if f.readline().strip() != b"ply":
            raise ValueError(f"{path}: not a PLY")
        els, fmt = [], None
        while True:
            w = f.readline().decode("ascii").split()
            if not w:
                continue
            if w[0] == "format":
                fmt = w[1]
            elif w[0] == "element":
                els.append([w[1], int(w[2]), []])
            elif w[0] == "property":
                els[-1][2].append(w[1:])
            elif w[0] == "end_header":
                break
        if fmt != "binary_little_endian":
            raise ValueError(f"{path}: {fmt} PLY is not read here")
        v = t = None
        for name, count, props in els:
            if name == "vertex":
                dt = np.dtype([(p[1], PLY_TYPES[p[0]]) for p in props])
                a = np.frombuffer(f.read(count * dt.itemsize), dtype=dt)
                v = np.stack([a["x"], a["y"], a["z"]], 1).astype(np.float64)
            elif name == "face":
                (kind, ct, it, _), = props  # one list property
                dt = np.dtype([("n", PLY_TYPES[ct]), ("i", PLY_TYPES[it], 3)])
                a = np.frombuffer(f.read(count * dt.itemsize), dtype=dt)
                if count and (a["n"] != 3).any():
                    raise ValueError(f"{path}: faces other than triangles")
                t = a["i"].astype(np.int64)
            else:
                raise ValueError(f"{path}: element {name} is not read here")
    return v, (t if t is not None else np.zeros((0, 3), np.int64))


def face_normals(v, t):
    """unnormalised: length = twice the area"""
    return np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]])


def bunny_points(path):
    """the mesh's referenced vertices with area-weighted vertex normals, oriented
    outwards (the sign of the enclosed volume decides)"""
    v, t = read_mesh(path)
    fn = face_normals(v, t)
    vol = (v[t[:, 0]] * fn).sum() / 6.0
    if vol < 0:
        fn, t = -fn, t[:, ::-1]
    vn = np.zeros_like(v)
    for k in range(3):
        np.add.at(vn, t[:, k], fn)
    ln = np.linalg.norm(vn, axis=1)
    keep = ln > 0
    return v[keep], vn[keep] / ln[keep, None], v, t


def sample_mesh(v, t, n, g):
    """n points uniform by area on the triangles"""
    a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
    ar = np.linalg.norm(np.cross(b - a, c - a), axis=1)
    f = g.choice(len(t), size=n, p=ar / ar.sum())
    r1, r2 = np.sqrt(g.random(n)), g.random(n)
    return (1 - r1)[:, None] * a[f] + (r1 * (1 - r2))[:, None] * b[f] + (r1 * r2)[:, None] * c[f]


def point_triangle(p, a, b, c):
    """exact distance from points p to triangles (a, b, c), row by row: the
    plane's distance where the projection falls inside, else the nearest edge"""
    ab, ac = b - a, c - a
    n = np.cross(ab, ac)
    nn = (n * n).sum(-1)
    ap = p - a
    ok = nn > 0
    nns = np.where(ok, nn, 1.0)
    # barycentrics of the projection (Cramer on the plane)
    u = (np.cross(ap, ac) * n).sum(-1) / nns  # weight of b
    w = (np.cross(ab, ap) * n).sum(-1) / nns  # weight of c
    inside = ok & (u >= 0) & (w >= 0) & (u + w <= 1)
    dplane = np.abs((ap * n).sum(-1)) / np.sqrt(nns)

    def seg(q, s0, s1):
        d = s1 - s0
        dd = np.maximum((d * d).sum(-1), 1e-300)
        tt = np.clip(((q - s0) * d).sum(-1) / dd, 0.0, 1.0)
        e = q - s0 - tt[..., None] * d
        return (e * e).sum(-1)
    dedge = np.sqrt(np.minimum(np.minimum(seg(p, a, b), seg(p, b, c)), seg(p, c, a)))
    return np.where(inside, dplane, dedge)


class MeshDistance:
    """exact distances from points to a triangle mesh (see the module's note)"""

    def __init__(self, v, t, k=8):
        from scipy.spatial import cKDTree
        self.v, self.t = v, t
        self.k = min(k, len(t))
        # unbalanced and uncompacted: about twice as fast to build, as fast to query here
        self.tree = cKDTree(v[t].mean(axis=1), balanced_tree=False, compact_nodes=False)

    def __call__(self, q):
        return chunked(self._one, np.asarray(q, np.float64))

    def _one(self, q):
        _, idx = self.tree.query(q, k=self.k)
        idx = idx.reshape(len(q), self.k)
        tri = self.t[idx]  # m x k x 3
        v = self.v
        d = point_triangle(q[:, None, :], v[tri[..., 0]], v[tri[..., 1]], v[tri[..., 2]])
        return d.min(axis=1)


def topology(t, nv):
    """(watertight: every edge in exactly two triangles, oriented: every directed
    edge once, so neighbours agree on orientation)"""
    if len(t) == 0:
        return False, False
    a = t.reshape(-1)
    b = t[:, [1, 2, 0]].reshape(-1)
    nv = np.int64(nv)
    und = np.sort(np.minimum(a, b) * nv + np.maximum(a, b))
    starts = np.flatnonzero(np.r_[True, und[1:] != und[:-1]])
    counts = np.diff(np.r_[starts, len(und)])
    watertight = bool((counts == 2).all())
    dirs = np.sort(a * nv + b)
    oriented = bool((dirs[1:] != dirs[:-1]).all())
    return watertight, oriented


# ------------------------------------------------------------------ self-check
def self_check(n=20000):
    """properties the harness relies on, each of which could fail: samples lie
    on their surface; a step of delta along the normal is at distance |delta|
    (exact normals and distances); the ellipsoid's samples are uniform by area
    (the share in a cap against the cap's area from a fine mesh); point-triangle
    distance against dense sampling; topology of a closed and an opened mesh.
    Returns the list of failures."""
    from scipy.spatial import cKDTree
    g = np.random.default_rng(5)
    bad = []
    for cls in SURFACES.values():
        s = cls()
        p, nrm = s.sample(n, g)
        if np.abs(np.linalg.norm(nrm, axis=1) - 1).max() > 1e-9:
            bad.append(f"{s.name}: normals not unit")
        if s.distance(p).max() > 1e-9:
            bad.append(f"{s.name}: samples off the surface")
        for delta in (1e-3, -1e-3):
            if np.abs(s.distance(p + delta * nrm) - abs(delta)).max() > 1e-9:
                bad.append(f"{s.name}: offset {delta} along the normal not at distance {abs(delta)}")
    # uneven density: on the rounded box's +y face (x uniform there by area) the
    # count in x in [a/2, a] over that in [-a, -a/2] is ratio^(1.5 a / (2 (a + r)))
    rb = RoundBox()
    p, nrm = uneven(rb, 400000, g)
    a = rb.h[0]
    face = (nrm[:, 1] == 1.0)
    hi_n = (face & (p[:, 0] > a / 2)).sum()
    lo_n = (face & (p[:, 0] < -a / 2)).sum()
    want = 20.0 ** (1.5 * a / (2 * (a + rb.r)))
    if abs(hi_n / lo_n - want) > 5 * want * np.sqrt(1 / hi_n + 1 / lo_n):
        bad.append(f"uneven: density ratio {hi_n / lo_n:.3f} across the box face, want {want:.3f}")
    # uniform by area on the ellipsoid: the share of samples with z > 0.3 c against
    # the share of a fine latitude-longitude mesh's area there
    e = Ellipsoid()
    th, ph = np.meshgrid(np.linspace(0, np.pi, 801), np.linspace(0, 2 * np.pi, 1601), indexing="ij")
    grid = np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)], -1) * e.e
    a, b, c, d = grid[:-1, :-1], grid[1:, :-1], grid[:-1, 1:], grid[1:, 1:]
    area = 0.5 * (np.linalg.norm(np.cross(b - a, c - a), axis=-1) + np.linalg.norm(np.cross(c - d, b - d), axis=-1))
    zc = ((a + b + c + d) / 4)[..., 2]
    share = area[zc > 0.3 * e.e[2]].sum() / area.sum()
    p, _ = e.sample(400000, g)
    got = (p[:, 2] > 0.3 * e.e[2]).mean()
    if abs(got - share) > 4 * np.sqrt(share * (1 - share) / 400000) + 2e-3:
        bad.append(f"ellipsoid: share of samples above 0.3c {got:.4f}, of area {share:.4f}")
    tri = g.normal(size=(3, 3))
    q = g.normal(size=(2000, 3))
    ex = point_triangle(q, tri[0][None], tri[1][None], tri[2][None])
    r1, r2 = np.sqrt(g.random(400000)), g.random(400000)
    dense = (1 - r1)[:, None] * tri[0] + (r1 * (1 - r2))[:, None] * tri[1] + (r1 * r2)[:, None] * tri[2]
    dk, _ = cKDTree(dense).query(q)
    if (dk - ex).min() < -1e-12 or (dk - ex).max() > 0.01:
        bad.append("point_triangle disagrees with dense sampling")
    cube = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], float)
    t = np.array([[0, 2, 1], [0, 3, 2], [4, 5, 6], [4, 6, 7], [0, 1, 5], [0, 5, 4],
                  [1, 2, 6], [1, 6, 5], [2, 3, 7], [2, 7, 6], [3, 0, 4], [3, 4, 7]])
    if topology(t, 8) != (True, True):
        bad.append("closed cube not watertight and oriented")
    if topology(t[1:], 8)[0] or topology(np.vstack([t[:1, ::-1], t[1:]]), 8) != (True, False):
        bad.append("opened or flipped cube not detected")
    md = MeshDistance(cube, t)
    qq = g.uniform(-0.5, 1.5, size=(5000, 3))
    ref = np.linalg.norm(np.maximum(np.maximum(-qq, qq - 1), 0), axis=1)  # outside the unit cube
    inside = (ref == 0)
    ref[inside] = np.minimum(qq[inside], 1 - qq[inside]).min(axis=1)
    if np.abs(md(qq) - ref).max() > 1e-12:
        bad.append("mesh distance to a cube disagrees with the closed form")
    return bad


if __name__ == "__main__":
    fails = self_check()
    print("\n".join(fails) if fails else "pr_quality self-check: all passed")
    raise SystemExit(1 if fails else 0)
