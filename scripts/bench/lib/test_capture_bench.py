#!/usr/bin/env python3
"""test_capture_bench: checks of issue 52's capture benchmark without a GPU
(colmap_model, capture_data, scene_normalize, capture_eval, the driver
scripts/bench/gsrender-capture and gsplat_trainer.py --check), on a
synthetic capture it writes (PINHOLE cameras on a circle, textured images,
random points, the model in .bin and .txt) and on stand-ins for gsrender and
the gsplat peer whose renders differ from the ground truth by a known amount.

  python3 scripts/bench/lib/test_capture_bench.py [--capture REAL_CAPTURE]

Prints one line a check and 'N passed, N failed'; exit 0, 1 on a failure,
77 (skipped) without numpy, scipy and PIL.
"""
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import traceback

try:
    import numpy as np
    import scipy  # noqa: F401
    from PIL import Image
except ImportError as e:
    print(f"test_capture_bench: skipped ({e})")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import capture_data as cd  # noqa: E402
import capture_eval as ce  # noqa: E402
import colmap_model as cm  # noqa: E402
import scene_normalize as sn  # noqa: E402

DRIVER = os.path.join(os.path.dirname(HERE), "gsrender-capture")
TRAINER = os.path.join(HERE, "gsplat_trainer.py")


# ---- a synthetic capture, written by this test (COLMAP's documented formats) ----
def rotmat_to_qvec(R):
    w = math.sqrt(max(0.0, 1 + R[0, 0] + R[1, 1] + R[2, 2])) / 2
    x = math.copysign(math.sqrt(max(0.0, 1 + R[0, 0] - R[1, 1] - R[2, 2])) / 2, R[2, 1] - R[1, 2])
    y = math.copysign(math.sqrt(max(0.0, 1 - R[0, 0] + R[1, 1] - R[2, 2])) / 2, R[0, 2] - R[2, 0])
    z = math.copysign(math.sqrt(max(0.0, 1 - R[0, 0] - R[1, 1] + R[2, 2])) / 2, R[1, 0] - R[0, 1])
    return np.array([w, x, y, z])


def look_at_w2c(eye, target=(0, 0, 0), up=(0, 0, 1)):
    f = np.asarray(target, float) - eye
    f /= np.linalg.norm(f)
    r = np.cross(f, up)
    r /= np.linalg.norm(r)
    d = np.cross(f, r)  # camera y points down in the image
    R = np.stack([r, d, f])  # rows: camera axes in the world
    return R, -R @ eye


def make_capture(root, n=17, w=48, h=36, npts=120, seed=0, txt=False, model="PINHOLE"):
    rng = np.random.default_rng(seed)
    os.makedirs(os.path.join(root, "images"), exist_ok=True)
    sp = os.path.join(root, "sparse", "0")
    os.makedirs(sp, exist_ok=True)
    fx, fy, cx, cy = 40.0, 41.0, w / 2 + 1.5, h / 2 - 0.5
    params = {"PINHOLE": [fx, fy, cx, cy], "SIMPLE_PINHOLE": [fx, cx, cy],
              "OPENCV": [fx, fy, cx, cy, 0.01, 0, 0, 0]}[model]
    mid = {"SIMPLE_PINHOLE": 0, "PINHOLE": 1, "OPENCV": 4}[model]
    ims = []
    order = rng.permutation(n)  # image ids not in name order
    for k in range(n):
        t = 2 * math.pi * k / n
        R, tv = look_at_w2c(np.array([4 * math.cos(t), 4 * math.sin(t), 1.0 + 0.1 * k]))
        name = f"img_{k:03d}.jpg" if k % 3 else f"img_{k:03d}.png"
        img = (rng.random((h, w, 3)) * 255).astype(np.uint8)
        Image.fromarray(img).save(os.path.join(root, "images", name), quality=95)
        ims.append((int(order[k]) + 1, rotmat_to_qvec(R), tv, name))
    xyz = rng.normal(0, 1, (npts, 3))
    rgb = rng.integers(0, 256, (npts, 3)).astype(np.uint8)
    err = rng.random(npts)
    if txt:
        with open(os.path.join(sp, "cameras.txt"), "w") as f:
            f.write("# Camera list\n1 %s %d %d %s\n" % (model, w, h, " ".join(repr(p) for p in params)))
        with open(os.path.join(sp, "images.txt"), "w") as f:
            f.write("# Image list\n")
            for iid, q, tv, name in ims:
                f.write(f"{iid} {' '.join(repr(float(x)) for x in q)} {' '.join(repr(float(x)) for x in tv)} 1 {name}\n")
                f.write("1.5 2.5 -1\n" if iid % 2 else "\n")
        with open(os.path.join(sp, "points3D.txt"), "w") as f:
            for i in range(npts):
                f.write(f"{i + 1} {' '.join(repr(float(x)) for x in xyz[i])} {' '.join(map(str, rgb[i]))} "
                        f"{float(err[i])!r} 1 0 2 0\n")
    else:
        with open(os.path.join(sp, "cameras.bin"), "wb") as f:
            f.write(struct.pack("<QiiQQ", 1, 1, mid, w, h) + struct.pack(f"<{len(params)}d", *params))
        with open(os.path.join(sp, "images.bin"), "wb") as f:
            f.write(struct.pack("<Q", n))
            for iid, q, tv, name in ims:
                f.write(struct.pack("<i7di", iid, *q, *tv, 1) + name.encode() + b"\0")
                f.write(struct.pack("<Q", 2) + struct.pack("<ddq", 1.5, 2.5, -1) * 2)
        with open(os.path.join(sp, "points3D.bin"), "wb") as f:
            f.write(struct.pack("<Q", npts))
            for i in range(npts):
                f.write(struct.pack("<Q3d3BdQ", i + 1, *xyz[i], *rgb[i], err[i], 1) + struct.pack("<ii", 1, 0))
    return dict(xyz=xyz, rgb=rgb, names=sorted(x[3] for x in ims), fx=fx, fy=fy, cx=cx, cy=cy, w=w, h=h)


# ---- stand-ins for gsrender and the peer ----
STUB_GSRENDER = r'''#!%(python)s
# stand-in for gsrender: --fit writes PLYs and a cameras.json; a render is the
# ground truth with every byte XOR 1 (an error of exactly 1/255)
import json, os, sys
sys.path.insert(0, %(lib)r)
import capture_data as cd
import numpy as np
a = sys.argv[1:]
def opt(n, d=None):
    return a[a.index(n) + 1] if n in a else d
if "--fit" in a:
    if os.environ.get("STUB_FAIL"):
        print("gsrender: error: stub failure", file=sys.stderr); sys.exit(3)
    cap, out = opt("--fit"), opt("-o")
    stem = out[:-4]
    vs = cd.views(cap, int(opt("-r", 1)))
    tr, te = cd.split(vs, int(opt("--test-every", 8)))
    js = [{"img_name": os.path.splitext(v.name)[0], "width": v.width} for v in vs]
    json.dump(js, open(stem + ".cameras.json", "w"))
    json.dump([c for c in js if c["img_name"] in {os.path.splitext(v.name)[0] for v in te}],
              open(stem + ".test.json", "w"))
    for it in [int(x) for x in opt("--save-at").split(",")]:
        open("%%s-%%d.ply" %% (stem, it), "w").write("ply\nformat ascii 1.0\nelement vertex %%d\nend_header\n" %% (it + 5))
    open(out, "w").write("ply\nformat ascii 1.0\nelement vertex 7\nend_header\n")
    open(opt("--log"), "w").write("iteration,loss,l1,ssim,psnr,seconds,test_psnr,gaussians\n7,0.1,0.1,0.9,20,0.250,,7\n")
    sys.exit(0)
ply, cams, view, png = a[a.index("-q") + 1], opt("--cameras"), opt("--view"), opt("-o")
js = json.load(open(cams))
assert any(c["img_name"] == view for c in js), view
cap = os.environ["STUB_CAPTURE"]
v = [v for v in cd.views(cap, int(os.environ.get("STUB_R", 1))) if os.path.splitext(v.name)[0] == view][0]
cd.save_png(png, cd.load_rgb8(v) ^ 1)
'''

STUB_PEER = r'''#!%(python)s
# stand-in for gsplat_trainer.py: renders are the ground truth with every byte XOR 2
import json, os, sys
sys.path.insert(0, %(lib)r)
import capture_data as cd
a = sys.argv[1:]
if "--build-only" in a:
    sys.exit(0)
def opt(n, d=None):
    return a[a.index(n) + 1] if n in a else d
cap, out = a[0], opt("--out")
_, te = cd.split(cd.views(cap, int(opt("--resolution"))), int(opt("--test-every")))
evals = []
for e in [int(x) for x in opt("--eval-at").split(",")]:
    rd = os.path.join(out, "renders_%%d" %% e)
    os.makedirs(rd, exist_ok=True)
    for v in te:
        cd.save_png(os.path.join(rd, cd.render_name(v.name)), cd.load_rgb8(v) ^ 2)
    evals.append(dict(step=e, gaussians=100 + e, loop_s=0.5 * e, eval_s=0.1, renders=rd, psnr_float=1.0))
json.dump(dict(gsplat="stub", strategy="DefaultStrategy()", ssim="stub", evals=evals),
          open(os.path.join(out, "result.json"), "w"))
'''


# ---- checks ----
CHECKS = []


def check(f):
    CHECKS.append(f)
    return f


def raises(exc, fn, *a, match=None):
    try:
        fn(*a)
    except exc as e:
        if match and match not in str(e):
            raise AssertionError(f"message {str(e)!r} lacks {match!r}")
        return str(e)
    raise AssertionError(f"{fn.__name__} did not raise {exc.__name__}")


@check
def reader_bin_equals_txt(tmp):
    a = make_capture(os.path.join(tmp, "b"))
    make_capture(os.path.join(tmp, "t"), txt=True)
    mb = cm.read_model(os.path.join(tmp, "b", "sparse", "0"))
    mt = cm.read_model(os.path.join(tmp, "t", "sparse", "0"))
    assert mb.cameras.keys() == mt.cameras.keys() and mb.images.keys() == mt.images.keys()
    for k in mb.images:
        assert mb.images[k].name == mt.images[k].name
        assert np.array_equal(mb.images[k].qvec, mt.images[k].qvec) and np.array_equal(mb.images[k].tvec, mt.images[k].tvec)
    assert np.array_equal(mb.xyz, mt.xyz) and np.array_equal(mb.rgb, mt.rgb) and np.array_equal(mb.error, mt.error)
    assert np.array_equal(mb.xyz, a["xyz"]) and np.array_equal(mb.rgb, a["rgb"])
    assert np.array_equal(mb.cameras[1].params, mt.cameras[1].params)


@check
def reader_broken_inputs(tmp):
    make_capture(os.path.join(tmp, "c"))
    sp = os.path.join(tmp, "c", "sparse", "0")
    raw = open(os.path.join(sp, "points3D.bin"), "rb").read()
    open(os.path.join(sp, "points3D.bin"), "wb").write(raw[:-5])
    raises(cm.ModelError, cm.read_model, sp, match="points3D.bin: truncated")
    open(os.path.join(sp, "points3D.bin"), "wb").write(raw + b"\0")
    raises(cm.ModelError, cm.read_model, sp, match="bytes after the last record")
    open(os.path.join(sp, "points3D.bin"), "wb").write(raw)
    cam = open(os.path.join(sp, "cameras.bin"), "rb").read()
    open(os.path.join(sp, "cameras.bin"), "wb").write(cam[:12] + struct.pack("<i", 99) + cam[16:])
    raises(cm.ModelError, cm.read_model, sp, match="unknown model id 99")
    open(os.path.join(sp, "cameras.bin"), "wb").write(cam[:8] + struct.pack("<i", 2) + cam[12:])
    raises(cm.ModelError, cm.read_model, sp, match="names camera 1, which the model lacks")
    os.remove(os.path.join(sp, "cameras.bin"))
    raises(cm.ModelError, cm.read_model, sp, match="no COLMAP model")
    make_capture(os.path.join(tmp, "t"), txt=True)
    spt = os.path.join(tmp, "t", "sparse", "0")
    open(os.path.join(spt, "cameras.txt"), "w").write("1 PINHOLE 48 36 40 41 24\n")
    raises(cm.ModelError, cm.read_model, spt, match="cameras.txt:1: PINHOLE takes 4 parameters")
    open(os.path.join(spt, "cameras.txt"), "w").write("1 FISHY 48 36 40\n")
    raises(cm.ModelError, cm.read_model, spt, match="unknown camera model FISHY")
    raises(cm.ModelError, cm.find_sparse, os.path.join(tmp, "nowhere"), match="no sparse/0 or sparse folder")


@check
def capture_views_split_and_errors(tmp):
    a = make_capture(os.path.join(tmp, "c"))
    vs = cd.views(os.path.join(tmp, "c"))
    assert [v.name for v in vs] == a["names"]  # sorted by name, not by image id
    tr, te = cd.split(vs, 8)
    assert [v.name for v in te] == [a["names"][i] for i in (0, 8, 16)] and len(tr) == 14
    v = vs[0]
    assert (v.width, v.height, v.fx, v.fy, v.cx, v.cy) == (a["w"], a["h"], a["fx"], a["fy"], a["cx"], a["cy"])
    assert np.allclose(v.w2c[:3, :3] @ v.w2c[:3, :3].T, np.eye(3))
    # resolution 2 without images_2/: downscaled on load, intrinsics scaled by the size ratio
    v2 = cd.views(os.path.join(tmp, "c"), 2)[0]
    assert (v2.width, v2.height) == (24, 18) and abs(v2.fx - a["fx"] / 2) < 1e-12 and abs(v2.cx - a["cx"] / 2) < 1e-12
    assert cd.load_rgb8(v2).shape == (18, 24, 3)
    # images_2/ is used when present
    os.makedirs(os.path.join(tmp, "c", "images_2"))
    for n in a["names"]:
        Image.new("RGB", (25, 18), (9, 9, 9)).save(os.path.join(tmp, "c", "images_2", os.path.splitext(n)[0] + ".png"))
    v2 = cd.views(os.path.join(tmp, "c"), 2)[0]
    assert (v2.width, v2.height) == (25, 18) and (cd.load_rgb8(v2) == 9).all()
    os.remove(os.path.join(tmp, "c", "images", a["names"][3]))
    raises(cd.CaptureError, cd.views, os.path.join(tmp, "c"), match="is missing")
    Image.new("RGB", (10, 10)).save(os.path.join(tmp, "c", "images", a["names"][3]), format="PNG")
    raises(cd.CaptureError, cd.views, os.path.join(tmp, "c"), match="is 10x10, its camera 48x36")
    make_capture(os.path.join(tmp, "d"), model="OPENCV")
    raises(cd.CaptureError, cd.views, os.path.join(tmp, "d"), match="OPENCV is not supported")
    make_capture(os.path.join(tmp, "e"), model="SIMPLE_PINHOLE")
    e = cd.views(os.path.join(tmp, "e"))[0]
    assert e.fx == e.fy == a["fx"]
    assert cd.render_name("sub/a.b.JPG") == "sub__a.b.png"


@check
def normalisation_is_a_similarity_that_keeps_the_images(tmp):
    make_capture(os.path.join(tmp, "c"))
    vs = cd.views(os.path.join(tmp, "c"))
    c2w = np.linalg.inv(np.stack([v.w2c for v in vs]))
    pts, _ = cd.points(os.path.join(tmp, "c"))
    nc, npts, T = sn.normalize(c2w, pts)
    R = nc[:, :3, :3]
    assert np.abs(R @ R.transpose(0, 2, 1) - np.eye(3)).max() < 1e-9
    assert np.abs(np.linalg.det(R) - 1).max() < 1e-9
    s = np.cbrt(np.linalg.det(T[:3, :3]))
    assert np.abs(T[:3, :3] / s @ (T[:3, :3] / s).T - np.eye(3)).max() < 1e-9  # a rotation times s
    assert np.allclose(npts, pts @ T[:3, :3].T + T[:3, 3])
    # every point projects to the same pixel through each camera before and after
    for k in (0, 5, 11):
        v = vs[k]
        K = np.array([[v.fx, 0, v.cx], [0, v.fy, v.cy], [0, 0, 1]])
        def px(w2c, p):
            q = (p @ w2c[:3, :3].T + w2c[:3, 3]) @ K.T
            return q[:, :2] / q[:, 2:]
        assert np.abs(px(v.w2c, pts) - px(np.linalg.inv(nc[k]), npts)).max() < 1e-8
    # the point cloud on its principal axes: covariance diagonal, variances decreasing
    cov = np.cov(npts, rowvar=False)
    assert np.abs(cov - np.diag(np.diag(cov))).max() < 1e-9 and cov[0, 0] >= cov[1, 1] >= cov[2, 2]
    assert abs(sn.scene_scale(nc) - s * sn.scene_scale(c2w)) < 1e-9


@check
def evaluator_self_test(tmp):
    ce.self_test()


@check
def evaluator_scores_known_errors(tmp):
    cap = os.path.join(tmp, "c")
    make_capture(cap)
    _, te = cd.split(cd.views(cap), 8)
    for d, x in (("one", 1), ("two", 2)):
        os.makedirs(os.path.join(tmp, d))
        for v in te:
            cd.save_png(os.path.join(tmp, d, cd.render_name(v.name)), cd.load_rgb8(v) ^ x)
    rows, names = ce.evaluate(cap, [dict(trainer="a", renders=os.path.join(tmp, "one")),
                                    dict(trainer="b", renders=os.path.join(tmp, "two"))], csv_path=os.path.join(tmp, "v.csv"))
    assert abs(rows[0]["psnr"] - 20 * math.log10(255)) < 1e-9, rows[0]
    assert abs(rows[1]["psnr"] - 20 * math.log10(255 / 2)) < 1e-9, rows[1]
    assert 0.99 < rows[1]["ssim"] < rows[0]["ssim"] < 1
    assert len(open(os.path.join(tmp, "v.csv")).read().splitlines()) == 1 + 2 * len(te)
    os.remove(os.path.join(tmp, "two", cd.render_name(te[1].name)))
    r = subprocess.run([sys.executable, os.path.join(HERE, "capture_eval.py"), cap, os.path.join(tmp, "two")],
                       capture_output=True, text=True)
    assert r.returncode == 3 and "no render of held-out view" in r.stdout, (r.returncode, r.stdout, r.stderr)
    r = subprocess.run([sys.executable, os.path.join(HERE, "capture_eval.py"), cap, os.path.join(tmp, "one")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "| one |  | 48.13 dB |" in r.stdout, r.stdout


def write_stub(path, text):
    with open(path, "w") as f:
        f.write(text % {"lib": HERE, "python": sys.executable})
    os.chmod(path, 0o755)


@check
def driver_end_to_end_with_stand_ins(tmp):
    cap = os.path.join(tmp, "cap")
    make_capture(cap, n=20)
    write_stub(os.path.join(tmp, "gsrender"), STUB_GSRENDER)
    write_stub(os.path.join(tmp, "peer"), STUB_PEER)
    env = dict(os.environ, GSRENDER_CAPTURE_PEER=os.path.join(tmp, "peer"), STUB_CAPTURE=cap,
               OUT=os.path.join(tmp, "out"))
    cmd = [sys.executable, DRIVER, cap, "--iters", "30", "--eval-at", "7,30", "--work", os.path.join(tmp, "w"),
           "--gsrender", os.path.join(tmp, "gsrender")]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    md = open(os.path.join(tmp, "out", "capture.md")).read()
    rows = [l for l in md.splitlines() if l.startswith("| gs")]
    assert len(rows) == 4, md
    assert rows[0].startswith("| gsrender --fit --densify | 7 | 48.13 dB |") and "| 12 | 0.2 s into the run" in rows[0], md
    assert rows[1].startswith("| gsplat stub, DefaultStrategy(), simple_trainer recipe | 7 | 42.11 dB |") and "| 107 | 3.5 s, training loop |" in rows[1], md
    assert rows[2].startswith("| gsrender --fit --densify | 30 | 48.13 dB |") and "| 35 |" in rows[2] and "whole command" in rows[2], md
    assert "| 130 | 15.0 s, training loop (" in rows[3] and "whole process)" in rows[3], md
    assert "at 30: PSNR ours - gsplat +6.02 dB" in md, md
    for f in ("capture.json", "capture_views.csv", "ours_fit.out", "peer_train.err", "rows_ours.json",
              "rows_peer.json", "ours_renders_30/img_000.png", "peer_renders_7/img_008.png"):
        assert os.path.isfile(os.path.join(tmp, "out", f)), f
    # each side in a call of its own (other work folders, as on two machines), scored by --eval-only
    for side, skip in (("o1", "--skip-peer"), ("o2", "--skip-ours")):
        e2 = dict(env, OUT=os.path.join(tmp, side))
        c2 = [x if x != os.path.join(tmp, "w") else os.path.join(tmp, "w" + side) for x in cmd]
        r = subprocess.run(c2 + [skip], env=e2, capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr  # one side alone scores its own rows
    e3 = dict(env, OUT=os.path.join(tmp, "o3"))
    r = subprocess.run([sys.executable, DRIVER, cap, "--iters", "30", "--eval-at", "7,30", "--eval-only",
                        os.path.join(tmp, "o1"), os.path.join(tmp, "o2")], env=e3, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    md3 = open(os.path.join(tmp, "o3", "capture.md")).read()
    rows3 = [l for l in md3.splitlines() if l.startswith("| gs")]
    strip = lambda rs: [l.split("|")[1:5] for l in rs]  # trainer, iterations, PSNR, SSIM
    assert strip(rows3) == strip(rows), md3
    # a later call that skips the peer keeps its rows; a failing fit is a row with its error and exit 1
    env["STUB_FAIL"] = "1"
    r = subprocess.run(cmd + ["--skip-peer"], env=env, capture_output=True, text=True)
    md = open(os.path.join(tmp, "out", "capture.md")).read()
    assert r.returncode == 1, r.stdout + r.stderr
    assert "gsrender --fit exited 3" in md and md.count("| gsplat stub") == 2, md
    # a capture with a camera model it cannot take: exit 3 before running anything
    make_capture(os.path.join(tmp, "dist"), model="OPENCV")
    r = subprocess.run([sys.executable, DRIVER, os.path.join(tmp, "dist"), "--dry-run"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 3 and "OPENCV is not supported" in r.stderr, r.stderr


@check
def trainer_check_mode(tmp):
    cap = os.path.join(tmp, "c")
    a = make_capture(cap, n=20, npts=300)
    r = subprocess.run([sys.executable, TRAINER, cap, "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    j = json.loads(r.stdout)
    assert j["views"] == 20 and j["train"] == 17 and j["test"] == [a["names"][i] for i in (0, 8, 16)]
    assert j["points"] == 300 and j["recipe"]["init_opa"] == 0.1
    r = subprocess.run([sys.executable, TRAINER, cap, "--check", "--mcmc", "1000"], capture_output=True, text=True)
    assert json.loads(r.stdout)["recipe"]["init_scale"] == 0.1
    # the initial scales: log of the RMS distance to the 3 nearest other points
    from scipy.spatial import cKDTree
    import gsplat_trainer as gt
    pts = np.random.default_rng(1).random((50, 3)).astype(np.float32)
    _, sc, sh0 = gt.init_arrays(pts, np.zeros((50, 3), np.uint8), 1.0)
    d = np.sort(np.linalg.norm(pts[:, None] - pts[None], axis=-1), axis=1)[:, 1:4]
    assert np.allclose(np.exp(sc[:, 0]), np.sqrt((d ** 2).mean(1)), rtol=1e-5)
    assert np.allclose(sh0, -0.5 / 0.28209479177387814)
    r = subprocess.run([sys.executable, TRAINER, os.path.join(tmp, "nothing"), "--check"], capture_output=True, text=True)
    assert r.returncode == 3 and "no sparse/0" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, TRAINER, cap, "--iters", "0", "--out", tmp], capture_output=True, text=True)
    assert r.returncode == 2
    del cKDTree


def main():
    real = sys.argv[sys.argv.index("--capture") + 1] if "--capture" in sys.argv else None
    npass = nfail = 0
    for f in CHECKS + ([lambda tmp: real_capture(real, tmp)] if real else []):
        tmp = tempfile.mkdtemp(prefix="capbench.")
        try:
            f(tmp)
            npass += 1
            print(f"OK   {getattr(f, '__name__', 'real')}")
        except Exception:
            nfail += 1
            print(f"FAIL {getattr(f, '__name__', 'real')}\n" + traceback.format_exc())
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"{npass} passed, {nfail} failed")
    return 1 if nfail else 0


def real_capture(cap, tmp):
    """A real capture: it reads, splits, normalises, and its ground truth scores 100% against itself."""
    vs = cd.views(cap)
    _, te = cd.split(vs, 8)
    os.makedirs(os.path.join(tmp, "same"))
    for v in te[:3]:
        cd.save_png(os.path.join(tmp, "same", cd.render_name(v.name)), cd.load_rgb8(v))
    t = {v.name: cd.load_rgb8(v) for v in te[:3]}
    s = ce.score_dir(te[:3], t, os.path.join(tmp, "same"))
    assert all(x[1] == math.inf and abs(x[2] - 1) < 1e-12 for x in s)
    c2w = np.linalg.inv(np.stack([v.w2c for v in vs]))
    pts, _ = cd.points(cap)
    nc, _, _ = sn.normalize(c2w, pts.astype(np.float32))
    print(f"     {cap}: {len(vs)} views, {len(te)} held out, {len(pts)} points, "
          f"scene_scale x1.1 {1.1 * sn.scene_scale(nc):.4f} (un-normalised {1.1 * sn.scene_scale(c2w):.4f})")


if __name__ == "__main__":
    sys.exit(main())
