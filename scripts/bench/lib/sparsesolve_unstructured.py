#!/usr/bin/env python3
"""Unstructured half of scripts/bench/sparsesolve (issue 16 item 3): the
tet-mesh Laplacian (gen_tetmesh 74: 405,224 rows, ~6.0M nonzeros, random
numbering) and the 7-point 160^3 Laplacian as Matrix Market files, then in
one run:
  ours   sparsesolve --spmv-bench (reorder none / rcm), -m pcg --timings with
         --reorder none|rcm|auto, the other helpers' methods by their options
         (--precond amg|ic0|ilu0, -m gmres --restart 30; "n/a" where the
         option is unknown to this build)
  peers  cuSPARSE SpMV through CuPy (csr_matrix @ x, CUDA events, the file's
         order), CuPy's cg with Jacobi (ms per iteration from CUDA events),
         scipy cg with Jacobi, pyamg smoothed aggregation as CG preconditioner
         (setup, solve, iterations), scipy spilu + gmres on the nonsymmetric
         problems (hook: NONSYM_MATRICES, a space-separated list of .mtx files,
         e.g. what sp-krylov's generator writes)
and a table: time per SpMV, per iteration, iterations, setup, whole command,
ratios against the peer. Floors: SpMV bytes = (n+1)*8 + nnz*12 + 2n*8 (CSR,
int64 row offsets, double), printed with the % achieved.
  sparsesolve_unstructured.py --prog P --gen G --out DIR [--work DIR] [--quick]
--out gets table.txt and runs.log (every command's output) only; the
matrices (~0.5 GB) and x files go to --work (default /dev/shm/sparsesolve-u).
"""
import argparse
import os
import re
import subprocess
import sys
import time

PEER = r'''
import sys, time, json
import numpy as np
what, path, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
def load():
    import scipy.io
    a = scipy.io.mmread(path).tocsr()
    a.sum_duplicates()
    return a, a @ np.ones(a.shape[0])
res = {}
if what == "cupy-spmv":
    import cupy as cp, cupyx.scipy.sparse as csp
    a, _ = load()
    ad = csp.csr_matrix(a)
    x = cp.ones(a.shape[0])
    for _ in range(5): y = ad @ x
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    reps = 200
    e0.record()
    for _ in range(reps): y = ad @ x
    e1.record(); e1.synchronize()
    res["spmv_ms"] = cp.cuda.get_elapsed_time(e0, e1) / reps
elif what == "cupy-cg":
    import cupy as cp, cupyx.scipy.sparse as csp
    from cupyx.scipy.sparse.linalg import cg
    a, b = load()
    ad = csp.csr_matrix(a); bd = cp.asarray(b)
    m = csp.diags(1.0 / ad.diagonal())
    it = [0]
    kw = dict(maxiter=20000, M=m, callback=lambda x: it.__setitem__(0, it[0] + 1))
    def run():
        try: return cg(ad, bd, tol=tol, **kw)
        except TypeError: return cg(ad, bd, rtol=tol, **kw)
    run(); it[0] = 0  # warm-up (kernels compiled, cuSPARSE buffers)
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    t = time.perf_counter(); e0.record()
    x, info = run()
    e1.record(); e1.synchronize()
    ms = cp.cuda.get_elapsed_time(e0, e1)
    res.update(iters=it[0], solve_ms=ms, iter_ms=ms / max(it[0], 1),
               relres=float(np.linalg.norm(b - a @ cp.asnumpy(x)) / np.linalg.norm(b)), ok=info == 0)
elif what == "scipy-cg":
    import scipy.sparse as sp
    from scipy.sparse.linalg import cg
    a, b = load()
    m = sp.diags(1.0 / a.diagonal()); it = [0]
    kw = dict(M=m, maxiter=20000, callback=lambda x: it.__setitem__(0, it[0] + 1))
    t = time.perf_counter()
    try: x, info = cg(a, b, rtol=tol, **kw)
    except TypeError: x, info = cg(a, b, tol=tol, **kw)
    ms = (time.perf_counter() - t) * 1e3
    res.update(iters=it[0], solve_ms=ms, iter_ms=ms / max(it[0], 1),
               relres=float(np.linalg.norm(b - a @ x) / np.linalg.norm(b)), ok=info == 0)
elif what == "pyamg":
    import pyamg
    a, b = load()
    t = time.perf_counter()
    ml = pyamg.smoothed_aggregation_solver(a, symmetry="symmetric")
    setup = (time.perf_counter() - t) * 1e3
    hist = []
    t = time.perf_counter()
    x = ml.solve(b, tol=tol, maxiter=500, accel="cg", residuals=hist)
    ms = (time.perf_counter() - t) * 1e3
    it = max(len(hist) - 1, 0)
    res.update(iters=it, setup_ms=setup, solve_ms=ms, iter_ms=ms / max(it, 1), levels=len(ml.levels),
               relres=float(np.linalg.norm(b - a @ x) / np.linalg.norm(b)), ok=True)
elif what == "scipy-ilu-gmres":
    from scipy.sparse.linalg import spilu, gmres, LinearOperator
    a, b = load()
    a = a.tocsc()
    t = time.perf_counter()
    ilu = spilu(a, drop_tol=0.0, fill_factor=1.0)
    setup = (time.perf_counter() - t) * 1e3
    m = LinearOperator(a.shape, ilu.solve)
    it = [0]
    t = time.perf_counter()
    kw = dict(M=m, restart=30, maxiter=2000, callback=lambda r: it.__setitem__(0, it[0] + 1), callback_type="pr_norm")
    try: x, info = gmres(a, b, rtol=tol, **kw)
    except TypeError: x, info = gmres(a, b, tol=tol, **kw)
    ms = (time.perf_counter() - t) * 1e3
    res.update(iters=it[0], setup_ms=setup, solve_ms=ms, iter_ms=ms / max(it[0], 1),
               relres=float(np.linalg.norm(b - a @ x) / np.linalg.norm(b)), ok=info == 0)
print("RESULT " + json.dumps(res), flush=True)
'''


def sh(cmd, timeout=300, env=None):
    t = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, time.perf_counter() - t, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, time.perf_counter() - t, "", "timeout"
    except OSError as e:
        return 127, 0.0, "", str(e)


def say(*a):
    print(*a, flush=True)


def peer(what, path, tol, env, timeout=400):
    rc, wall, so, se = sh([sys.executable, "-c", PEER, what, path, str(tol)], timeout, env)
    m = re.search(r"^RESULT (.*)$", so, re.M)
    if rc != 0 or not m:
        tail = (se.strip().splitlines() or ["?"])[-1]
        say(f"  peer {what}: n/a (rc {rc}: {tail[:160]})")
        return None
    import json
    r = json.loads(m.group(1))
    r["wall_s"] = wall
    say(f"  peer {what}: {r}")
    return r


def ours(prog, args, out_dir, tag):
    """Run sparsesolve; parse ms/iter, iterations, stages. None when an option is unknown (exit 2)."""
    cmd = [prog, "--timings", "-v", *args]
    rc, wall, so, se = sh(cmd, 400)
    with open(os.path.join(out_dir, f"ours-{tag}.log"), "w") as f:
        f.write(" ".join(cmd) + f"\nrc {rc} wall {wall:.3f}s\n--- stdout\n{so}\n--- stderr\n{se}")
    if rc == 2:
        say(f"  ours {tag}: n/a (option unknown to this build: {(se.strip().splitlines() or ['?'])[-1][:120]})")
        return None
    r = {"rc": rc, "wall_s": wall}
    m = re.search(r"after (\d+) iterations, true relative residual ([0-9.e+-]+), ([0-9.]+) ms \(([0-9.]+) ms/iter\)", se)
    if m:
        r.update(iters=int(m.group(1)), relres=float(m.group(2)), solve_ms=float(m.group(3)),
                 iter_ms=float(m.group(4)))
    for st in ("read", "analyze", "reorder", "setup", "precond", "solve", "write"):
        m = re.search(rf"^\s*{st}\S*\s+([0-9.]+)\s", se, re.M)
        if m:
            r[f"{st}_ms"] = float(m.group(1))
    m = re.search(r"reorder (\w+): (.*)", se)
    if m:
        r["reorder"] = m.group(1)
        say(f"  ours {tag}: -v says: reorder {m.group(1)}: {m.group(2)[:220]}")
    say(f"  ours {tag}: {r}")
    return r


def spmv_rows(prog, path, reorder, out_dir):
    rc, wall, so, se = sh([prog, "--spmv-bench", "200", "--reorder", reorder, path], 400)
    with open(os.path.join(out_dir, f"spmv-{os.path.basename(path)}-{reorder}.log"), "w") as f:
        f.write(so + "\n--- stderr\n" + se)
    if rc == 2:
        rc, wall, so, se = sh([prog, "--spmv-bench", "200", path], 400)  # a build without --reorder
        if reorder != "none":
            say("  ours --spmv-bench --reorder: n/a")
            return {}
    rows = {}
    for line in so.splitlines():
        f = line.split()
        if len(f) >= 6 and re.match(r"^[0-9.]+$", f[1]):
            rows[f[0]] = (float(f[1]), int(f[2]), float(f[3]))
    say(f"  ours --spmv-bench --reorder {reorder}: " +
        ", ".join(f"{k} {v[0]:.4f} ms" for k, v in rows.items()))
    return rows


def fmt(v, spec=".4f"):
    return "n/a" if v is None else format(v, spec)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prog", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", default="/dev/shm/sparsesolve-u")
    ap.add_argument("--tet", type=int, default=74)
    ap.add_argument("--lap", type=int, default=160)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--quick", action="store_true", help="skip the CPU peers on the 160^3 Laplacian")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    env = dict(os.environ)
    site = "/tmp/site"
    if os.path.isdir(site):
        env["PYTHONPATH"] = site + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")

    tet = os.path.join(a.work, f"tet{a.tet}.mtx")
    lap = os.path.join(a.work, f"lap7_{a.lap}.mtx")
    if not os.path.exists(tet):
        rc, wall, so, se = sh([a.gen, str(a.tet), tet], 600)
        say(f"== generated {tet} ({wall:.1f} s): {se.strip()}")
        if rc:
            sys.exit(f"gen_tetmesh failed: {se}")
    if not os.path.exists(lap):
        n = a.lap
        t = time.perf_counter()
        N = n * n * n
        with open(lap, "w") as f:  # symmetric, lower triangle, 1-based
            f.write("%%MatrixMarket matrix coordinate real symmetric\n")
            f.write(f"{N} {N} {N + 3 * (N - n * n)}\n")
            lines = []
            for z in range(n):
                for y in range(n):
                    base = (z * n + y) * n
                    for x in range(n):
                        i = base + x + 1
                        lines.append(f"{i} {i} 6\n")
                        if x > 0: lines.append(f"{i} {i - 1} -1\n")
                        if y > 0: lines.append(f"{i} {i - n} -1\n")
                        if z > 0: lines.append(f"{i} {i - n * n} -1\n")
                    if len(lines) > 1 << 20:
                        f.writelines(lines); lines = []
            f.writelines(lines)
        say(f"== generated {lap} ({time.perf_counter() - t:.1f} s)")

    table = []
    for name, path, slow in (("tet-mesh %d^3" % a.tet, tet, False), ("7-pt %d^3" % a.lap, lap, True)):
        say(f"\n== {name}: {path}")
        # SpMV: ours (CSR vector etc., file order and RCM) vs cuSPARSE through CuPy (file order)
        sp_none = spmv_rows(a.prog, path, "none", a.work)
        sp_rcm = spmv_rows(a.prog, path, "rcm", a.work) if not slow else {}
        cus = peer("cupy-spmv", path, a.tol, env)
        ccg = peer("cupy-cg", path, a.tol, env)
        runs = {
            "pcg --reorder none": ["-m", "pcg", "--reorder", "none"],
            "pcg --reorder rcm": ["-m", "pcg", "--reorder", "rcm"],
            "pcg (auto)": ["-m", "pcg"],
            "pcg --format csr --reorder none": ["-m", "pcg", "--format", "csr", "--reorder", "none"],
            "pcg --format csr --reorder rcm": ["-m", "pcg", "--format", "csr", "--reorder", "rcm"],
            "pcg --precond amg": ["-m", "pcg", "--precond", "amg"],
            "pcg --precond ic0": ["-m", "pcg", "--precond", "ic0"],
            "gmres --restart 30 --precond ilu0": ["-m", "gmres", "--restart", "30", "--precond", "ilu0"],
        }
        res = {}
        for tag, args in runs.items():
            if slow and "rcm" in tag:
                continue
            res[tag] = ours(a.prog, [*args, "--tol", str(a.tol), "--maxiter", "20000", path,
                                     "-o", os.path.join(a.work, "x.mtx")], a.work,
                            re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{name}-{tag}"))
        scg = pam = None
        if not (slow and a.quick):
            scg = peer("scipy-cg", path, a.tol, env, 500)
            pam = peer("pyamg", path, a.tol, env, 500)
        # SpMV rows of the table
        cms = cus["spmv_ms"] if cus else None
        for label, rows in (("ours csr-vector, file order", sp_none), ("ours csr-vector, RCM", sp_rcm)):
            if "csr-vector" in rows:
                ms, byt, gbs = rows["csr-vector"]
                table.append((name, label + f" ({gbs:.0f} GB/s of {byt / 1e6:.1f} MB)", ms, None, None, None, None,
                              cms / ms if cms else None))
        for label, rows in (("ours best kernel, file order", sp_none), ("ours best kernel, RCM", sp_rcm)):
            if rows:
                k, v = min(rows.items(), key=lambda kv: kv[1][0])
                table.append((name, f"{label}: {k}", v[0], None, None, None, None, cms / v[0] if cms else None))
        table.append((name, "cuSPARSE SpMV via CuPy (file order)", cms, None, None, None, None, 1.0 if cms else None))
        cit = ccg["iter_ms"] if ccg else None
        for tag, r in res.items():
            if r is None:
                table.append((name, f"ours {tag}", None, None, None, None, None, None))
                continue
            setup = sum(r.get(k, 0) for k in ("reorder_ms", "setup_ms", "precond_ms")) or None
            table.append((name, f"ours {tag}", None, r.get("iter_ms"), r.get("iters"), setup, r["wall_s"],
                          (r["iter_ms"] / cit) if (cit and r.get("iter_ms")) else None))
        if ccg:
            table.append((name, "CuPy cg, Jacobi", None, ccg["iter_ms"], ccg["iters"], None, ccg["wall_s"], 1.0))
        if scg:
            table.append((name, "scipy cg, Jacobi (CPU)", None, scg["iter_ms"], scg["iters"], None, scg["wall_s"],
                          scg["iter_ms"] / cit if cit else None))
        if pam:
            table.append((name, f"pyamg SA + CG (CPU, {pam['levels']} levels)", None, pam["iter_ms"], pam["iters"],
                          pam["setup_ms"], pam["wall_s"], None))
    # nonsymmetric hook: matrices from sp-krylov's generator
    for path in os.environ.get("NONSYM_MATRICES", "").split():
        name = os.path.basename(path)
        say(f"\n== nonsymmetric {name}")
        r = ours(a.prog, ["-m", "gmres", "--restart", "30", "--precond", "ilu0", "--tol", str(a.tol), path,
                          "-o", os.path.join(a.work, "x.mtx")], a.work, f"nonsym-{name}")
        p = peer("scipy-ilu-gmres", path, a.tol, env, 500)
        table.append((name, "ours gmres(30)+ilu0", None, r and r.get("iter_ms"), r and r.get("iters"),
                      None, r and r["wall_s"], None))
        if p:
            table.append((name, "scipy spilu + gmres(30)", None, p["iter_ms"], p["iters"], p["setup_ms"],
                          p["wall_s"], None))

    say("\n== table (ratio: SpMV rows cuSPARSE-ms / ours-ms, higher is better, target >= 1.3;"
        " iteration rows ours-ms/iter / CuPy-ms/iter, lower is better, target <= 0.6)")
    hdr = f"{'matrix':<16} {'what':<58} {'SpMV ms':>9} {'ms/iter':>9} {'iters':>6} {'setup ms':>9} {'whole s':>8} {'ratio':>7}"
    say(hdr)
    lines = [hdr]
    for row in table:
        m, w, sp, it, n, su, wall, ratio = row
        line = (f"{m:<16} {w:<58} {fmt(sp):>9} {fmt(it):>9} {('n/a' if n is None else str(n)):>6} "
                f"{fmt(su, '.1f'):>9} {fmt(wall, '.2f'):>8} {fmt(ratio, '.2f'):>7}")
        say(line)
        lines.append(line)
    with open(os.path.join(a.out, "table.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(a.out, "runs.log"), "w") as f:  # every run's command line and output
        for name in sorted(os.listdir(a.work)):
            if name.endswith(".log"):
                with open(os.path.join(a.work, name)) as g:
                    f.write(f"===== {name}\n{g.read()}\n")


if __name__ == "__main__":
    main()
