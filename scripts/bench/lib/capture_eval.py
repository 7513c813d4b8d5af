#!/usr/bin/env python3
"""capture_eval: score held-out renders of a COLMAP capture (issue 52), one
code path for every trainer: each trainer's 8-bit PNG of every held-out view
(capture_data.split: every --test-every-th image by name) against the same
ground truth (capture_data.load_rgb8 at --resolution).

  capture_eval.py CAPTURE RENDER_DIR... [--resolution 1] [--test-every 8]
  capture_eval.py CAPTURE --rows ROWS.json [--json OUT.json] [--csv OUT.csv]
  capture_eval.py --self-test

RENDER_DIR holds <stem>.png for each held-out image <stem>.<ext>
(capture_data.render_name). ROWS.json: a list of {"trainer", "iterations",
"renders", "gaussians", "time"} (the driver's rows, other keys kept); each
gets "psnr", "ssim" and "views" and the table
  | trainer | iterations | held-out PSNR | SSIM | Gaussians | time |
is printed in markdown. PSNR: per view 10 log10(1 / MSE) over all pixels
and channels on [0, 1], then the mean over views. SSIM: the reference 3DGS
trainer's (utils/loss_utils.py ssim): an 11x11 Gaussian window of sigma
1.5 per channel, zero padding of 5 (the map keeps the image's size),
C1 = 0.01^2, C2 = 0.03^2, the mean of the map over pixels and channels;
per view, then the mean over views. A missing render or one of another size
than its ground truth is exit 3. numpy, scipy and PIL.
"""
import argparse
import csv
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capture_data as cd  # noqa: E402

WINDOW, SIGMA, C1, C2 = 11, 1.5, 0.01 ** 2, 0.03 ** 2


def gaussian_1d(size=WINDOW, sigma=SIGMA):
    x = np.arange(size, dtype=np.float64) - size // 2
    g = np.exp(-x * x / (2.0 * sigma * sigma))
    return g / g.sum()


def _blur(x, g):
    """Separable correlation of each channel of (H, W, C) with g, zero outside."""
    from scipy.ndimage import correlate1d
    y = correlate1d(x, g, axis=0, mode="constant", cval=0.0)
    return correlate1d(y, g, axis=1, mode="constant", cval=0.0)


def ssim_map(a, b):
    """(H, W, C) float in [0, 1] each -> the SSIM map (H, W, C)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    g = gaussian_1d()
    mu1, mu2 = _blur(a, g), _blur(b, g)
    s11 = _blur(a * a, g) - mu1 * mu1
    s22 = _blur(b * b, g) - mu2 * mu2
    s12 = _blur(a * b, g) - mu1 * mu2
    return ((2 * mu1 * mu2 + C1) * (2 * s12 + C2)) / ((mu1 * mu1 + mu2 * mu2 + C1) * (s11 + s22 + C2))


def ssim(a, b):
    return float(ssim_map(a, b).mean())


def psnr(a, b):
    """a, b float on [0, 1]: 10 log10(1 / MSE); inf when equal."""
    mse = float(np.mean((np.asarray(a, np.float64) - np.asarray(b, np.float64)) ** 2))
    return math.inf if mse == 0 else 10.0 * math.log10(1.0 / mse)


def read_png8(path):
    from PIL import Image
    with Image.open(path) as im:
        im.load()
        if im.mode in ("RGBA", "LA"):
            rgba = np.asarray(im.convert("RGBA"), dtype=np.float64) / 255.0
            return (rgba[..., :3] * rgba[..., 3:] * 255.0 + 0.5).astype(np.uint8)
        return np.asarray(im.convert("RGB"), dtype=np.uint8)


class EvalError(Exception):
    pass


def score_dir(test_views, truths, render_dir):
    """[(name, psnr, ssim)] of render_dir's PNGs against truths (name -> uint8)."""
    out = []
    for v in test_views:
        p = os.path.join(render_dir, cd.render_name(v.name))
        if not os.path.isfile(p):
            raise EvalError(f"{p}: no render of held-out view {v.name}")
        r = read_png8(p)
        t = truths[v.name]
        if r.shape != t.shape:
            raise EvalError(f"{p} is {r.shape[1]}x{r.shape[0]}, the ground truth of {v.name} "
                            f"{t.shape[1]}x{t.shape[0]}")
        rf, tf = r / 255.0, t / 255.0
        out.append((v.name, psnr(rf, tf), ssim(rf, tf)))
    return out


def fmt_int(n):
    return f"{int(n):,}" if isinstance(n, (int, float)) and not isinstance(n, bool) else str(n or "")


def table(rows):
    lines = ["| trainer | iterations | held-out PSNR | SSIM | Gaussians | time |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        ps = f"{r['psnr']:.2f} dB" if r.get("psnr") is not None else \
            " ".join(str(r.get("error", "n/a")).split()).replace("|", "/")
        ss = f"{r['ssim']:.4f}" if r.get("ssim") is not None else ""
        lines.append(f"| {r.get('trainer', '')} | {fmt_int(r.get('iterations'))} | {ps} | {ss} | "
                     f"{fmt_int(r.get('gaussians'))} | {r.get('time', '')} |")
    return "\n".join(lines)


def evaluate(capture, rows, resolution=1, test_every=8, csv_path=None):
    """Fill each row's psnr, ssim, views (from its 'renders' folder)."""
    vs = cd.views(capture, resolution)
    _, test = cd.split(vs, test_every)
    if not test:
        raise EvalError(f"{capture}: no held-out view (test_every {test_every})")
    truths = {v.name: cd.load_rgb8(v) for v in test}
    per_view = []
    for r in rows:
        try:
            s = score_dir(test, truths, r["renders"])
        except EvalError as e:
            r["psnr"] = r["ssim"] = None
            r["error"] = f"not scored: {e}"
            continue
        r["psnr"] = float(np.mean([x[1] for x in s]))
        r["ssim"] = float(np.mean([x[2] for x in s]))
        r["views"] = len(s)
        per_view += [(r.get("trainer", ""), r.get("iterations", ""), n, p, q) for n, p, q in s]
    if csv_path:
        with open(csv_path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["trainer", "iterations", "view", "psnr", "ssim"])
            for t, it, n, p, q in per_view:
                w.writerow([t, it, n, f"{p:.6f}", f"{q:.6f}"])
    return rows, [v.name for v in test]


# ---- checks without a GPU ----
def self_test():
    """Properties of the metrics on synthetic images; raises AssertionError."""
    rng = np.random.default_rng(3)
    a = rng.random((40, 56, 3))
    # PSNR of a constant offset d: MSE = d^2
    assert abs(psnr(a * 0.5, a * 0.5 + 0.01) - 40.0) < 1e-9
    assert psnr(a, a) == math.inf
    # SSIM: 1 for equal images, symmetric, below 1 for noise, lower for more noise
    assert abs(ssim(a, a) - 1.0) < 1e-12
    b = np.clip(a + rng.normal(0, 0.05, a.shape), 0, 1)
    c = np.clip(a + rng.normal(0, 0.2, a.shape), 0, 1)
    assert abs(ssim(a, b) - ssim(b, a)) < 1e-12
    assert 0 < ssim(a, c) < ssim(a, b) < 1
    # the map against a direct windowed sum at interior, edge and corner pixels
    # (zero padding of 5: the window's part outside the image counts as 0)
    g = gaussian_1d()
    assert abs(g.sum() - 1) < 1e-15 and g.size == 11 and abs(g[5] / g[4] - math.exp(1 / 4.5)) < 1e-12
    w2 = np.outer(g, g)
    m = ssim_map(a, b)
    pa = np.pad(a, ((5, 5), (5, 5), (0, 0)))
    pb = np.pad(b, ((5, 5), (5, 5), (0, 0)))
    for (i, j, k) in [(20, 30, 0), (0, 0, 1), (39, 55, 2), (3, 50, 0), (39, 0, 1)]:
        wa, wb = pa[i:i + 11, j:j + 11, k], pb[i:i + 11, j:j + 11, k]
        mu1, mu2 = (w2 * wa).sum(), (w2 * wb).sum()
        s11 = (w2 * wa * wa).sum() - mu1 ** 2
        s22 = (w2 * wb * wb).sum() - mu2 ** 2
        s12 = (w2 * wa * wb).sum() - mu1 * mu2
        v = ((2 * mu1 * mu2 + C1) * (2 * s12 + C2)) / ((mu1 ** 2 + mu2 ** 2 + C1) * (s11 + s22 + C2))
        assert abs(m[i, j, k] - v) < 1e-12, (i, j, k, m[i, j, k], v)
    # a flat image against itself shifted in brightness: SSIM's luminance term only
    f1, f2 = np.full((30, 30, 3), 0.4), np.full((30, 30, 3), 0.5)
    centre = ssim_map(f1, f2)[15, 15, 0]
    assert abs(centre - (2 * 0.4 * 0.5 + C1) / (0.4 ** 2 + 0.5 ** 2 + C1)) < 1e-12
    return "capture_eval self-test: PSNR and SSIM properties hold"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="capture_eval.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("capture", nargs="?")
    ap.add_argument("renders", nargs="*", help="render folders (a row each, labelled by folder)")
    ap.add_argument("--rows", help="JSON list of rows with 'renders' folders")
    ap.add_argument("--resolution", type=int, default=1)
    ap.add_argument("--test-every", type=int, default=8)
    ap.add_argument("--json", help="write the scored rows here")
    ap.add_argument("--csv", help="write per-view PSNR and SSIM here")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args(argv)
    if a.self_test:
        print(self_test())
        return 0
    if not a.capture or (not a.renders and not a.rows):
        ap.print_usage(sys.stderr)
        print("capture_eval.py: error: give CAPTURE and render folders or --rows", file=sys.stderr)
        return 2
    rows = []
    if a.rows:
        with open(a.rows) as f:
            rows = json.load(f)
    rows += [{"trainer": os.path.basename(os.path.normpath(d)), "renders": d} for d in a.renders]
    try:
        rows, names = evaluate(a.capture, rows, a.resolution, a.test_every, a.csv)
    except (cd.CaptureError, EvalError) as e:
        print(f"capture_eval.py: error: {e}", file=sys.stderr)
        return 3
    print(f"held out: {len(names)} views of {a.capture} (every {a.test_every}th by name), "
          f"resolution 1/{a.resolution}")
    print(table(rows))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"capture": a.capture, "test_views": names, "rows": rows}, f, indent=1)
    return 3 if any(r.get("error") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
