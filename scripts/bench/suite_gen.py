#!/usr/bin/env python3
"""Input generators for scripts/bench/suite (numpy + scipy), one subcommand each:

  suite_gen.py volume N OUT.raw          N^3 float32: a gyroid plus band-limited
                                         smooth noise, iso 0 crosses it everywhere
  suite_gen.py fem N OUT.mtx             SPD P1 (linear tetrahedra) stiffness matrix
                                         on a Delaunay mesh of ~N jittered points in
                                         the unit cube, plus a small mass-like shift
                                         (unstructured, 12-16 nonzeros a row)
  suite_gen.py rgg N OUT.mtx             SPD random-geometric-graph Laplacian + shift:
                                         N uniform points in the unit cube in cell
                                         order (as a mesher numbers them), the
                                         symmetrised 12 nearest neighbours, Gaussian
                                         edge weights (13-20 nonzeros a row); seconds
                                         where fem's Delaunay takes a minute at 400k
  suite_gen.py lap7 N OUT.mtx            7-point Laplacian on an N^3 grid (Dirichlet)
  suite_gen.py tps N SRC.txt DST.txt     N landmark pairs: uniform in [-1,1]^3 moved
                                         by a smooth deformation
  suite_gen.py points N OUT.ply          N oriented points on the bumpy sphere of
                                         scripts/bench/poissonrec (exact normals)

Matrix Market files are written symmetric (the lower triangle, 1-based, row order).
Each prints one line on stdout describing what it wrote.
"""
import os
import sys

import numpy as np


def volume(n, path):
    # separable terms: every product is a broadcast of 1-D arrays, so 512^3
    # costs a few passes over the output and no N^3 temporaries beyond two
    x = np.linspace(0.0, 6.0 * np.pi, n, dtype=np.float32)
    s, c = np.sin(x), np.cos(x)
    v = s[:, None, None] * c[None, :, None] + np.zeros((1, 1, n), np.float32)
    v += s[None, :, None] * c[None, None, :]
    v += s[None, None, :] * c[:, None, None]
    rng = np.random.default_rng(3)
    u = np.linspace(0.0, 1.0, n, dtype=np.float32)
    for _ in range(6):  # smooth noise: random low-frequency separable waves
        f = rng.uniform(2, 9, 3) * 2 * np.pi
        p = rng.uniform(0, 2 * np.pi, 3)
        a = np.float32(0.25 * rng.uniform(0.5, 1.0))
        v += a * (np.sin(f[0] * u + p[0]).astype(np.float32)[:, None, None]
                  * np.sin(f[1] * u + p[1]).astype(np.float32)[None, :, None]
                  * np.sin(f[2] * u + p[2]).astype(np.float32)[None, None, :])
    v.astype("<f4").tofile(path)
    print(f"volume {n}^3 float32 -> {path}")


def _mmwrite_sym(path, a, comment):
    """The lower triangle as 'coordinate real symmetric', row by row, each value
    as repr (the shortest text that reads back to the same double). Written
    here rather than by scipy.io.mmwrite, whose handling of a given symmetry
    differs between its Python and C++ (scipy >= 1.12) writers."""
    import scipy.sparse as sp
    low = sp.tril(a, format="csr").tocoo()
    with open(path, "w") as f:
        f.write(f"%%MatrixMarket matrix coordinate real symmetric\n%{comment}\n")
        f.write(f"{a.shape[0]} {a.shape[1]} {low.nnz}\n")
        step = 1 << 20
        for s in range(0, low.nnz, step):
            r = (low.row[s:s + step] + 1).tolist()
            c = (low.col[s:s + step] + 1).tolist()
            v = low.data[s:s + step].tolist()
            f.write("".join(f"{i} {j} {x!r}\n" for i, j, x in zip(r, c, v)))


MASS_SHIFT = 1.0e3  # 1 / dt of an implicit heat-equation step: M / dt + K


def fem(n, path):
    import scipy.sparse as sp
    from scipy.spatial import Delaunay
    k = max(3, int(round(n ** (1.0 / 3.0))))
    rng = np.random.default_rng(5)
    g = (np.stack(np.meshgrid(*[np.arange(k)] * 3, indexing="ij"), -1).reshape(-1, 3)
         + 0.5 + rng.uniform(-0.35, 0.35, (k ** 3, 3))) / k
    tet = Delaunay(g).simplices
    p = g[tet]                                  # T x 4 x 3
    e = p[:, 1:] - p[:, :1]                     # T x 3 x 3 (edge vectors as rows)
    det = np.linalg.det(e)
    keep = np.abs(det) > 1e-12 * np.abs(det).max()
    tet, e, det = tet[keep], e[keep], det[keep]
    inv = np.linalg.inv(e)                      # columns: gradients of barycentrics 1..3
    grads = np.concatenate([-inv.sum(axis=2, keepdims=True), inv], axis=2)  # T x 3 x 4
    vol = np.abs(det) / 6.0
    local = vol[:, None, None] * np.einsum("tki,tkj->tij", grads, grads)   # T x 4 x 4
    rows = np.repeat(tet, 4, axis=1).ravel()
    cols = np.tile(tet, (1, 4)).ravel()
    a = sp.coo_matrix((local.ravel(), (rows, cols)), shape=(k ** 3, k ** 3)).tocsr()
    a.sum_duplicates()
    # M / dt + K: SPD; the Delaunay slivers of the jittered grid keep it hard
    # for CG (Jacobi-PCG: ~800 iterations at 64k rows, more at 400k)
    mass = np.bincount(tet.ravel(), np.repeat(vol / 4.0, 4), minlength=k ** 3)
    a = (a + sp.diags(MASS_SHIFT * mass)).tocsr()
    _mmwrite_sym(path, a, f"P1 stiffness + lumped mass / dt (implicit heat step, dt = 1e-3), Delaunay of {k}^3 jittered points")
    print(f"fem {a.shape[0]} rows, {a.nnz} nonzeros ({a.nnz / a.shape[0]:.1f} a row) -> {path}")


def rgg(n, path):
    import scipy.sparse as sp
    from scipy.spatial import cKDTree
    rng = np.random.default_rng(7)
    p = rng.uniform(0.0, 1.0, (n, 3))
    h = n ** (-1.0 / 3.0)
    c = np.floor(p / (8 * h)).astype(np.int64)        # cells of ~512 points, in z-y-x order
    p = p[np.lexsort((p[:, 0], c[:, 0], c[:, 1], c[:, 2]))]
    d, j = cKDTree(p).query(p, k=13, workers=-1)
    i = np.repeat(np.arange(n), 12)
    w = np.exp(-(d[:, 1:].ravel() / h) ** 2)
    a = sp.coo_matrix((w, (i, j[:, 1:].ravel())), shape=(n, n)).tocsr()
    a = a.maximum(a.T)                                  # symmetric: i~j if either is a neighbour
    lap = sp.diags(np.asarray(a.sum(axis=1)).ravel()) - a
    a = (lap + sp.diags(np.full(n, 1e-3))).tocsr()
    _mmwrite_sym(path, a, f"random geometric graph Laplacian + 1e-3 I: {n} points, 12 nearest, Gaussian weights")
    print(f"rgg {n} rows, {a.nnz} nonzeros ({a.nnz / n:.1f} a row) -> {path}")


def lap7(n, path):
    import scipy.sparse as sp
    t = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])
    i = sp.identity(n)
    a = (sp.kron(sp.kron(t, i), i) + sp.kron(sp.kron(i, t), i) + sp.kron(sp.kron(i, i), t)).tocsr()
    _mmwrite_sym(path, a, f"7-point Laplacian {n}^3, Dirichlet")
    print(f"lap7 {n}^3: {a.shape[0]} rows, {a.nnz} nonzeros -> {path}")


def tps(n, src_path, dst_path):
    rng = np.random.default_rng(2)
    src = rng.uniform(-1, 1, (n, 3))
    dst = src + 0.1 * np.sin(3 * src[:, [1, 2, 0]])
    np.savetxt(src_path, src, fmt="%.17g")
    np.savetxt(dst_path, dst, fmt="%.17g")
    print(f"tps {n} pairs -> {src_path} {dst_path}")


def points(n, path):
    # the bumpy sphere of scripts/bench/poissonrec's quality harness (its
    # geometry lives in scripts/bench/lib/pr_quality.py)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
    import pr_quality as Q
    p, nrm = Q.BumpySphere().sample(n, np.random.default_rng(20))
    Q.write_points(path, p, nrm)
    print(f"points {n} oriented (bumpy sphere) -> {path}")


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    cmd, n = argv[0], int(argv[1])
    if cmd == "volume":
        volume(n, argv[2])
    elif cmd == "fem":
        fem(n, argv[2])
    elif cmd == "rgg":
        rgg(n, argv[2])
    elif cmd == "lap7":
        lap7(n, argv[2])
    elif cmd == "tps" and len(argv) == 4:
        tps(n, argv[2], argv[3])
    elif cmd == "points":
        points(n, argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
