#!/usr/bin/env python3
"""The peers of scripts/bench/suite: what a user would run instead of each of
our programs, as one Python process per run so that the suite times it from
exec to exit, as it times ours (imports, reading the input and the compute
all count). Each subcommand prints 'compute_s X' (the peer's own work, input
in memory) and, where useful, 'frames_s X' or 'info ...' lines on stdout.
Exit 77 when the peer's package is not importable here.

  mc RAW N ISO                       skimage.measure.marching_cubes (CPU)
  cg-scipy MTX TOL MAXITER           scipy.sparse.linalg.cg, Jacobi (CPU)
  cg-cupy MTX TOL MAXITER            cupyx.scipy.sparse.linalg.cg, Jacobi (GPU)
  amg MTX TOL MAXITER                pyamg smoothed aggregation, CG-accelerated (CPU)
  tps-scipy SRC DST                  scipy RBFInterpolator thin_plate_spline, degree 1 (CPU)
  tps-torch SRC DST                  the same TPS system built and solved densely
                                     with torch.linalg.solve on the GPU (float64)
  stitch-cv DIR K                    OpenCV: read 4 yuyv422 1080p frames, convert,
                                     warpPerspective, MultiBandBlender(5), write BGR;
                                     K frames (DIR: rig.txt, cam*.yuv, masks/)
  gs-gsplat PLY VIEWS W H R ELEV FOVY    gsplat.rasterization, one view at a time,
  gs-dgr PLY VIEWS W H R ELEV FOVY       diff_gaussian_rasterization likewise;
                                     an orbit about the origin (up +y) built as
                                     gt_gs_camera_orbit builds ours; each image
                                     downloaded to host memory
"""
import math
import re
import sys
import time

import numpy as np


def absent(what):
    print(f"info {what} not importable", file=sys.stderr)
    sys.exit(77)


def out(key, val):
    print(f"{key} {val}", flush=True)


# ------------------------------------------------------------------ mcmesh
def mc(raw, n, iso):
    try:
        from skimage.measure import marching_cubes
    except ImportError:
        absent("skimage")
    n = int(n)
    v = np.fromfile(raw, dtype="<f4").reshape(n, n, n)
    t = time.perf_counter()
    verts, faces, _, _ = marching_cubes(v, level=float(iso))
    out("compute_s", f"{time.perf_counter() - t:.4f}")
    out("info", f"{len(verts)} vertices, {len(faces)} triangles")


# ------------------------------------------------------------- sparsesolve
def load_mtx(path):
    import scipy.io
    a = scipy.io.mmread(path).tocsr()
    return a, a @ np.ones(a.shape[0])


def cg_scipy(path, tol, maxiter):
    import scipy.sparse as sp
    from scipy.sparse.linalg import cg
    a, b = load_mtx(path)
    it = [0]
    m = sp.diags(1.0 / a.diagonal())
    t = time.perf_counter()
    kw = dict(M=m, maxiter=int(maxiter), callback=lambda x: it.__setitem__(0, it[0] + 1))
    try:
        x, info = cg(a, b, rtol=float(tol), **kw)
    except TypeError:  # scipy < 1.12
        x, info = cg(a, b, tol=float(tol), **kw)
    out("compute_s", f"{time.perf_counter() - t:.4f}")
    res = np.linalg.norm(b - a @ x) / np.linalg.norm(b)
    out("info", f"{it[0]} iterations, relres {res:.2e}{'' if info == 0 else ', NOT converged'}")


def cg_cupy(path, tol, maxiter):
    try:
        import cupy as cp
        import cupyx.scipy.sparse as csp
        from cupyx.scipy.sparse.linalg import cg
    except ImportError:
        absent("cupy")
    a, b = load_mtx(path)
    t = time.perf_counter()
    ad = csp.csr_matrix(a)
    bd = cp.asarray(b)
    m = csp.diags(1.0 / ad.diagonal())
    it = [0]
    kw = dict(maxiter=int(maxiter), M=m, callback=lambda x: it.__setitem__(0, it[0] + 1))
    try:
        x, info = cg(ad, bd, tol=float(tol), **kw)
    except TypeError:  # a CuPy that follows scipy's rename to rtol
        x, info = cg(ad, bd, rtol=float(tol), **kw)
    xh = cp.asnumpy(x)
    out("compute_s", f"{time.perf_counter() - t:.4f}")
    res = np.linalg.norm(b - a @ xh) / np.linalg.norm(b)
    out("info", f"{it[0]} iterations, relres {res:.2e}{'' if info == 0 else ', NOT converged'}")


def amg(path, tol, maxiter):
    try:
        import pyamg
    except ImportError:
        absent("pyamg")
    a, b = load_mtx(path)
    t = time.perf_counter()
    ml = pyamg.smoothed_aggregation_solver(a, symmetry="symmetric")
    res_hist = []
    x = ml.solve(b, tol=float(tol), maxiter=int(maxiter), accel="cg", residuals=res_hist)
    out("compute_s", f"{time.perf_counter() - t:.4f}")
    res = np.linalg.norm(b - a @ x) / np.linalg.norm(b)
    out("info", f"{len(ml.levels)} levels, {max(len(res_hist) - 1, 0)} iterations, relres {res:.2e}")


# ----------------------------------------------------------------- stpsfit
def tps_scipy(src, dst):
    from scipy.interpolate import RBFInterpolator
    s, d = np.loadtxt(src), np.loadtxt(dst)
    t = time.perf_counter()
    RBFInterpolator(s, d, kernel="thin_plate_spline", smoothing=0.0, degree=1)
    out("compute_s", f"{time.perf_counter() - t:.4f}")


def tps_torch(src, dst):
    try:
        import torch
    except ImportError:
        absent("torch")
    if not torch.cuda.is_available():
        absent("torch with CUDA")
    s, d = np.loadtxt(src), np.loadtxt(dst)
    torch.zeros(1, device="cuda")  # context outside compute_s, as ours reports it apart
    torch.cuda.synchronize()
    t = time.perf_counter()
    c = torch.as_tensor(s, device="cuda", dtype=torch.float64)
    y = torch.as_tensor(d, device="cuda", dtype=torch.float64)
    n = c.shape[0]
    r = torch.cdist(c, c, compute_mode="donot_use_mm_for_euclid_dist")  # exact zeros on the diagonal
    k = torch.where(r > 0, r * r * torch.log(torch.clamp(r, min=1e-300)), torch.zeros_like(r))
    p = torch.cat([torch.ones(n, 1, device="cuda", dtype=torch.float64), c], 1)
    a = torch.zeros(n + 4, n + 4, device="cuda", dtype=torch.float64)
    a[:n, :n] = k
    a[:n, n:] = p
    a[n:, :n] = p.T
    rhs = torch.cat([y, torch.zeros(4, 3, device="cuda", dtype=torch.float64)])
    w = torch.linalg.solve(a, rhs)
    w.cpu()
    out("compute_s", f"{time.perf_counter() - t:.4f}")


# --------------------------------------------------------------- yuvstitch
def stitch_cv(d, k):
    try:
        import cv2
    except ImportError:
        absent("cv2")
    k = int(k)
    txt = open(f"{d}/rig.txt").read()
    pw, ph = map(int, re.search(r"panorama (\d+) (\d+)", txt).groups())
    hs = [np.array(list(map(float, m.split()))).reshape(3, 3) for m in re.findall(r"H ([^\n]+)", txt)]
    masks = [cv2.imread(f"{d}/masks/mask_{i + 1}.png", cv2.IMREAD_GRAYSCALE) for i in range(len(hs))]
    fs = [open(f"{d}/cam{i + 1}.yuv", "rb") for i in range(len(hs))]
    fsz = 1920 * 1080 * 2
    t = time.perf_counter()
    with open(f"{d}/peer_out.bgr", "wb") as o:
        for _ in range(k):
            b = cv2.detail_MultiBandBlender(0, 5)
            b.prepare((0, 0, pw, ph))
            for i, hm in enumerate(hs):
                yuyv = np.frombuffer(fs[i].read(fsz), np.uint8).reshape(1080, 1920, 2)
                bgr = cv2.cvtColor(yuyv, cv2.COLOR_YUV2BGR_YUYV)
                w = cv2.warpPerspective(bgr, hm, (pw, ph), flags=cv2.INTER_LINEAR)
                b.feed(w.astype(np.int16), masks[i], (0, 0))
            res, _ = b.blend(None, None)
            o.write(np.clip(res, 0, 255).astype(np.uint8).tobytes())
    dt = time.perf_counter() - t
    out("frames_s", f"{dt:.4f}")
    out("compute_s", f"{dt:.4f}")
    out("info", f"OpenCV {cv2.__version__}, {cv2.getNumThreads()} threads, {k} frames")


# ---------------------------------------------------------------- gsrender
def read_3dgs(path):
    with open(path, "rb") as f:
        props, n = [], 0
        while True:
            line = f.readline().decode().strip()
            if line.startswith("element vertex"):
                n = int(line.split()[2])
            elif line.startswith("property"):
                if line.split()[1] not in ("float", "float32"):
                    sys.exit(f"{path}: only float properties are read here")
                props.append(line.split()[2])
            elif line == "end_header":
                break
        a = np.frombuffer(f.read(n * 4 * len(props)), dtype="<f4").reshape(n, len(props))
    col = {p: i for i, p in enumerate(props)}
    g = lambda names: a[:, [col[x] for x in names]]
    rest = sorted((p for p in props if p.startswith("f_rest_")), key=lambda p: int(p[7:]))
    nrest = len(rest) // 3
    sh = np.concatenate([g(["f_dc_0", "f_dc_1", "f_dc_2"])[:, None, :],
                         g(rest).reshape(n, 3, nrest).transpose(0, 2, 1)], 1)
    deg = int(round(math.sqrt(nrest + 1))) - 1
    return dict(means=g(["x", "y", "z"]), sh=sh, deg=deg, opacity=g(["opacity"])[:, 0],
                scales=g(["scale_0", "scale_1", "scale_2"]), quats=g(["rot_0", "rot_1", "rot_2", "rot_3"]))


def look_at(eye, target, up):
    """world -> camera 4x4 (rows right, down, forward: gsrender's convention)
    looking from eye at target."""
    f = target - eye
    f = f / np.linalg.norm(f)
    r = np.cross(f, up)
    if np.linalg.norm(r) < 1e-9:  # looking along the up: any right will do
        r = np.cross(f, [1.0, 0.0, 0.0] if abs(f[0]) < 0.9 else [0.0, 0.0, 1.0])
    r /= np.linalg.norm(r)
    m = np.eye(4)
    m[:3, :3] = np.stack([r, np.cross(f, r), f])
    m[:3, 3] = -m[:3, :3] @ eye
    return m


def view_from(theta, elev_deg, radius, centre=(0.0, 0.0, 0.0), up=(0.0, 1.0, 0.0)):
    """(world -> camera, eye) of a camera at azimuth theta (radians) and
    elevation elev_deg about `up`, `radius` from `centre`, looking at it;
    theta 0 lies along +x for up +y, as gt_gs_camera_orbit."""
    u = np.asarray(up, dtype=np.float64)
    e2 = np.cross(u, [1.0, 0.0, 0.0] if abs(u[0]) < 0.9 else [0.0, 0.0, 1.0])
    e2 /= np.linalg.norm(e2)
    e1 = np.cross(e2, u)
    el = math.radians(elev_deg)
    eye = np.asarray(centre, dtype=np.float64) + \
        radius * (math.cos(el) * (math.cos(theta) * e1 + math.sin(theta) * e2) + math.sin(el) * u)
    return look_at(eye, np.asarray(centre, dtype=np.float64), u), eye


def orbit_w2c(i, n, radius, elev_deg, centre=(0.0, 0.0, 0.0), up=(0.0, 1.0, 0.0)):
    """View i of gt_gs_camera_orbit's n (centre 0 and up +y by default)."""
    return view_from(2 * math.pi * i / n, elev_deg, radius, centre, up)


def gs_common(path):
    try:
        import torch
    except ImportError:
        absent("torch")
    if not torch.cuda.is_available():
        absent("torch with CUDA")
    torch.set_grad_enabled(False)
    s = read_3dgs(path)
    dev = "cuda"
    t = {k: torch.as_tensor(np.ascontiguousarray(v), device=dev) for k, v in s.items() if k != "deg"}
    t["quats"] = torch.nn.functional.normalize(t["quats"], dim=-1)
    t["scales"] = torch.exp(t["scales"])
    t["opacity"] = torch.sigmoid(t["opacity"])
    return torch, t, s["deg"]


def gs_gsplat(path, views, w, h, radius, elev, fovy):
    try:
        from gsplat import rasterization
    except ImportError:
        absent("gsplat")
    views, w, h = int(views), int(w), int(h)
    torch, g, deg = gs_common(path)
    fy = h / (2 * math.tan(math.radians(float(fovy)) / 2))
    k = torch.tensor([[fy, 0, w / 2], [0, fy, h / 2], [0, 0, 1]], device="cuda", dtype=torch.float32)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for i in range(views):
        vm, _ = orbit_w2c(i, views, float(radius), float(elev))
        vm = torch.as_tensor(vm, device="cuda", dtype=torch.float32)
        img, _, _ = rasterization(g["means"], g["quats"], g["scales"], g["opacity"], g["sh"],
                                  vm[None], k[None], w, h, sh_degree=deg)
        img.clamp(0, 1).mul(255).to(torch.uint8).cpu()
    dt = time.perf_counter() - t
    out("frames_s", f"{dt:.4f}")
    out("compute_s", f"{dt:.4f}")


def gs_dgr(path, views, w, h, radius, elev, fovy):
    try:
        from diff_gaussian_rasterization import GaussianRasterizationSettings, GaussianRasterizer
    except ImportError:
        absent("diff_gaussian_rasterization")
    views, w, h = int(views), int(w), int(h)
    torch, g, deg = gs_common(path)
    fovy = math.radians(float(fovy))
    tany = math.tan(fovy / 2)
    tanx = tany * w / h
    zn, zf = 0.01, 100.0
    proj = np.zeros((4, 4))  # the reference's getProjectionMatrix
    proj[0, 0], proj[1, 1] = 1 / tanx, 1 / tany
    proj[3, 2], proj[2, 2], proj[2, 3] = 1.0, zf / (zf - zn), -(zf * zn) / (zf - zn)
    bg = torch.zeros(3, device="cuda")
    means2d = torch.zeros_like(g["means"])
    torch.cuda.synchronize()
    t = time.perf_counter()
    for i in range(views):
        vm, eye = orbit_w2c(i, views, float(radius), float(elev))
        # the reference's row-vector convention: transposed, and contiguous for its kernels
        wv = torch.as_tensor(np.ascontiguousarray(vm.T), device="cuda", dtype=torch.float32)
        full = torch.as_tensor(np.ascontiguousarray((proj @ vm).T), device="cuda", dtype=torch.float32)
        kw = dict(image_height=h, image_width=w, tanfovx=tanx, tanfovy=tany, bg=bg, scale_modifier=1.0,
                  viewmatrix=wv, projmatrix=full, sh_degree=deg,
                  campos=torch.as_tensor(eye, device="cuda", dtype=torch.float32),
                  prefiltered=False, debug=False)
        try:
            st = GaussianRasterizationSettings(antialiasing=False, **kw)
        except TypeError:  # the original release has no antialiasing field
            st = GaussianRasterizationSettings(**kw)
        r = GaussianRasterizer(raster_settings=st)
        img = r(means3D=g["means"], means2D=means2d, shs=g["sh"], colors_precomp=None,
                opacities=g["opacity"][:, None], scales=g["scales"], rotations=g["quats"],
                cov3D_precomp=None)[0]
        img.clamp(0, 1).mul(255).to(torch.uint8).cpu()
    dt = time.perf_counter() - t
    out("frames_s", f"{dt:.4f}")
    out("compute_s", f"{dt:.4f}")


CMDS = {"mc": mc, "cg-scipy": cg_scipy, "cg-cupy": cg_cupy, "amg": amg, "tps-scipy": tps_scipy,
        "tps-torch": tps_torch, "stitch-cv": stitch_cv, "gs-gsplat": gs_gsplat, "gs-dgr": gs_dgr}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CMDS:
        sys.exit(__doc__)
    CMDS[sys.argv[1]](*sys.argv[2:])
