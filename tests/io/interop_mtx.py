#!/usr/bin/python3
"""Matrix Market interop with scipy.io: scipy reads what libcore writes, and
libcore reads what scipy writes (general/symmetric/skew-symmetric, real/
integer/pattern, coordinate/array); values compared exactly (both sides print
17 significant digits). Exit 77 (skip) without numpy/scipy."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import scipy.io
    import scipy.sparse as sp
except ImportError as e:
    print("SKIP: scipy not available:", e)
    sys.exit(77)

tool = sys.argv[1]
fails = 0


def check(cond, what):
    global fails
    if not cond:
        fails += 1
        print("FAIL:", what)
    else:
        print("ok:", what)


def dump(path):
    out = subprocess.run([tool, "dump", path], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return parse(out.stdout)


def parse(text):
    lines = text.split("\n")
    kind, r, c = lines[0].split()
    r, c = int(r), int(c)
    body = [l for l in lines[1:] if l]
    if kind == "array":
        return np.array([float(x) for x in body]).reshape((c, r)).T
    rows, cols, vals = [], [], []
    for l in body:
        i, j, v = l.split()
        rows.append(int(i)); cols.append(int(j)); vals.append(float(v))
    return sp.coo_matrix((vals, (rows, cols)), shape=(r, c))


with tempfile.TemporaryDirectory() as d:
    # scipy reads ours
    p = os.path.join(d, "ours.mtx")
    out = subprocess.run([tool, "write", p], capture_output=True, text=True, check=True)
    want = parse(out.stdout).toarray()
    got = scipy.io.mmread(p)
    got = got.toarray() if sp.issparse(got) else got
    check(got.shape == want.shape and np.array_equal(got, want), "scipy.io.mmread reads our coordinate matrix exactly")
    p = os.path.join(d, "vec.mtx")
    out = subprocess.run([tool, "writevec", p], capture_output=True, text=True, check=True)
    want = parse(out.stdout)
    got = scipy.io.mmread(p)
    check(got.shape == want.shape and np.array_equal(got, want), "scipy.io.mmread reads our array vector exactly")

    # we read scipy's
    rng = np.random.default_rng(5)
    a = sp.random(40, 30, density=0.1, random_state=rng, format="coo")
    a.data = rng.standard_normal(a.nnz) * 1e5
    n = 25
    s = sp.random(n, n, density=0.15, random_state=rng, format="coo")
    sym = (s + s.T).tocoo()
    lo = sp.tril(s, k=-1)
    skew = (lo - lo.T).tocoo()
    ints = sp.random(20, 20, density=0.2, random_state=rng, format="coo")
    ints.data = np.round(ints.data * 1000 - 500)
    cases = [
        ("general real", a, {}),
        ("symmetric real", sym, {"symmetry": "symmetric"}),
        ("skew-symmetric real", skew, {"symmetry": "skew-symmetric"}),
        ("general integer", ints.astype(np.int64), {"field": "integer"}),
        ("pattern", a, {"field": "pattern"}),
        ("array real", rng.standard_normal((7, 5)), {}),
        ("array symmetric", (lambda m: m + m.T)(rng.standard_normal((6, 6))), {"symmetry": "symmetric"}),
    ]
    for name, m, kw in cases:
        p = os.path.join(d, "scipy.mtx")
        scipy.io.mmwrite(p, m, precision=17, **kw)
        got = dump(p)
        got = got.toarray() if sp.issparse(got) else got
        want = m.toarray() if sp.issparse(m) else m
        if kw.get("field") == "pattern":
            want = (want != 0).astype(float)
        check(got.shape == want.shape and np.array_equal(got, want.astype(float)),
              "we read scipy.io.mmwrite's %s exactly" % name)

sys.exit(1 if fails else 0)
