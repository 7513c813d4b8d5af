#!/usr/bin/python3
"""Interop: lib/tps against scipy.interpolate.RBFInterpolator.

scipy solves (K + s I) w + P a = y, P^T w = 0 with K_ij = r^2 log r
(kernel='thin_plate_spline', epsilon irrelevant for this scale-free kernel)
and P = [1 x y z] (degree=1). Our fit minimises |Y - f(c)|^2 + lambda w^T K w
under X^T w = 0, whose normal equations are the same system with s = lambda:
so smoothing=lambda exactly (Wahba's convention writes n*lambda instead).
Held-out points (not control points) must agree to 1e-8 relative to the
largest |f|. Skips (77) when numpy/scipy are missing."""
import subprocess
import sys

try:
    import numpy as np
    from scipy.interpolate import RBFInterpolator
except ImportError:
    print("SKIP: numpy/scipy not available")
    sys.exit(77)

probe = sys.argv[1]
device = sys.argv[2] if len(sys.argv) > 2 else "cpu"
rng = np.random.default_rng(12345)
fail = 0
for n, lam in [(20, 0.0), (200, 0.0), (200, 0.01), (500, 1.0), (300, 100.0)]:
    src = rng.uniform(-1, 1, (n, 3))
    dst = src + 0.1 * np.sin(3 * src[:, [1, 2, 0]]) + 0.01 * rng.standard_normal((n, 3))
    q = rng.uniform(-1.2, 1.2, (1000, 3))
    text = f"{n} {len(q)}\n" + "".join(
        " ".join(repr(float(v)) for v in np.r_[s, d]) + "\n" for s, d in zip(src, dst)) + "".join(
        " ".join(repr(float(v)) for v in p) + "\n" for p in q)
    r = subprocess.run([probe, repr(lam), "r2logr", device], input=text, capture_output=True,
                       text=True)
    if r.returncode == 77:
        print("SKIP:", r.stderr.strip())
        sys.exit(77)
    if r.returncode != 0:
        print("probe failed:", r.stderr)
        sys.exit(1)
    ours = np.array([[float(v) for v in l.split()] for l in r.stdout.splitlines()])
    ref = RBFInterpolator(src, dst, kernel="thin_plate_spline", smoothing=lam, degree=1)(q)
    rel = np.max(np.abs(ours - ref)) / np.max(np.abs(ref))
    ok = rel <= 1e-8
    print(f"n {n} lambda {lam}: max rel diff {rel:.3g} {'ok' if ok else 'FAIL'}")
    fail |= not ok
sys.exit(1 if fail else 0)
