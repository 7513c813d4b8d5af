#!/usr/bin/python3
"""Interop: scipy.io.mmread reads our solution, and the system we solve
matches scipy.sparse.linalg.spsolve to 1e-8 (relative, max norm).
Skips (77) when scipy or the program is missing."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import scipy.io
    import scipy.sparse as sp
    import scipy.sparse.linalg as spl
except ImportError:
    print("SKIP: scipy not installed")
    sys.exit(77)

prog = os.environ.get("SPARSESOLVE") or os.path.join(os.environ["GT_BUILD_DIR"], "tools", "sparsesolve")
if not os.access(prog, os.X_OK):
    print("SKIP: %s not built" % prog)
    sys.exit(77)

rng = np.random.default_rng(1234)
fail = 0
with tempfile.TemporaryDirectory() as d:
    cases = []
    # nonsymmetric, diagonally dominant (bicgstab by default)
    n = 400
    A = sp.random(n, n, density=0.02, random_state=5, format="csr")
    A = A - sp.diags(A.diagonal()) + sp.diags(np.asarray(abs(A).sum(axis=1)).ravel() * 1.5 + 1.0)
    cases.append(("nonsym", A.tocoo(), None))
    # SPD: 2-D Laplacian (pcg by default), written as symmetric
    m = 20
    T = sp.diags([-1, 2, -1], [-1, 0, 1], shape=(m, m))
    L = (sp.kron(sp.eye(m), T) + sp.kron(T, sp.eye(m))).tocoo()
    cases.append(("lap2d", L, "symmetric"))
    for name, A, sym in cases:
        a_path, b_path, x_path = (os.path.join(d, name + s) for s in ("_A.mtx", "_b.mtx", "_x.mtx"))
        b = rng.uniform(-1, 1, A.shape[0])
        scipy.io.mmwrite(a_path, sp.tril(A) if sym else A, symmetry=sym or "general")
        scipy.io.mmwrite(b_path, b.reshape(-1, 1))
        r = subprocess.run([prog, "--tol", "1e-13", "--maxiter", "100000", a_path, "-b", b_path, "-o", x_path],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL %s: exit %d\n%s" % (name, r.returncode, r.stderr))
            fail = 1
            continue
        x = np.asarray(scipy.io.mmread(x_path)).ravel()
        ref = spl.spsolve(A.tocsc(), b)
        err = np.max(np.abs(x - ref)) / np.max(np.abs(ref))
        print("%s: n=%d, max |x - spsolve| / max |x| = %.3g" % (name, A.shape[0], err))
        if not err <= 1e-8:
            fail = 1
sys.exit(fail)
