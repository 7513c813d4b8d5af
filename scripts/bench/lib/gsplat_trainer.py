#!/usr/bin/env python3
"""gsplat_trainer: the gsplat peer of `gsrender --fit` on a COLMAP capture
(issue 52): a short trainer written against gsplat 1.5.3's library API
(gsplat.rasterization, gsplat.strategy.DefaultStrategy / MCMCStrategy) that
follows the recipe of gsplat's examples/simple_trainer.py (not in the wheel),
on the GPU machine:

  gsplat_trainer.py CAPTURE --out DIR [--iters 30000] [--eval-at 7000,30000]
      [--mcmc CAP] [--resolution 1] [--test-every 8] [--lr-steps 30000]
      [--ssim auto|fused|torch] [--fused-ssim-src .peers/fused-ssim]
      [--no-normalize] [--seed 42]
  gsplat_trainer.py --build-only [--ssim ...]   (compile gsplat's CUDA and
      fused-ssim once, so that a timed run pays no compilation)
  gsplat_trainer.py CAPTURE --check              (CPU: the data path, no gsplat)

The recipe (simple_trainer's Config defaults, its "default" and "mcmc" configs):
- data: capture_data (images sorted by name, every --test-every-th held out),
  the world normalised as gsplat's parser does (scene_normalize.py) and
  scene_scale = 1.1 x the largest camera distance from their mean, there;
- init from points3D: means the points, colours SH DC = (rgb/255 - 0.5) / C0,
  SH rest 0 (degree 3), scales log(init_scale x sqrt(mean squared distance to
  the 3 nearest other points)), quats uniform in [0, 1)^4 (torch.rand),
  opacity logit(init_opa); init_opa 0.1 and init_scale 1.0, with --mcmc 0.5
  and 0.1;
- Adam per parameter, eps 1e-15, betas (0.9, 0.999) (batch 1: simple_trainer's
  lr x sqrt(batch) and eps / sqrt(batch) leave them as they are): means
  1.6e-4 x scene_scale with ExponentialLR gamma 0.01^(1/--lr-steps) stepped
  every iteration (gsplat's max_steps: 30,000, so step 7,000 of a
  30,000-step schedule whatever --iters is), scales 5e-3, quats 1e-3,
  opacities 5e-2, sh0 2.5e-3, shN 2.5e-3/20;
- each step one training view (a random permutation per epoch, as the
  DataLoader's shuffle), rasterization(packed=False, absgrad=False,
  sparse_grad=False, rasterize_mode="classic", near 0.01, far 1e10,
  sh_degree min(step // 1000, 3)), black background; loss
  0.8 L1 + 0.2 (1 - SSIM) with SSIM fused_ssim(padding="valid") as
  simple_trainer, plus with --mcmc 0.01 x mean opacity + 0.01 x mean scale;
- DefaultStrategy() defaults (refine 500-15,000 every 100, grow_grad2d
  2e-4, opacity reset every 3,000, prune_opa 0.005) with
  initialize_state(scene_scale); --mcmc CAP: MCMCStrategy(cap_max=CAP)
  defaults (refine 500-25,000 every 100, noise_lr 5e5), its lr the means'
  current one; the optimisers' step and zero_grad(set_to_none), the
  scheduler, then step_post_backward, as simple_trainer orders them.
Differences, all in the peer's favour or neutral: the training images are
preloaded on the GPU as bytes (no DataLoader), the view matrices inverted
once on the host (float64), no viewer, tensorboard, checkpoints or per-step
loss.item() (the loss is read every 1,000 steps for the progress line).
SSIM: fused-ssim (rahul-goel/fused-ssim at simple_trainer's pinned commit
328dc98) is on no package index; --ssim auto imports it, else builds it from
--fused-ssim-src with torch's JIT loader, else falls back to the same
function in plain torch (11x11 Gaussian window of sigma 1.5, valid
convolution, C1 0.01^2, C2 0.03^2, mean of the map), and says which in its
output and result.json.
Evaluation after step e of each --eval-at e (simple_trainer's place): every
held-out view rendered at SH degree 3, clamped to [0, 1], rounded to 8 bits,
saved as DIR/renders_<e>/<name>.png (capture_data.render_name) for
capture_eval.py; the Gaussians counted; the in-process PSNR of the float
renders printed beside. Training-loop time: wall time between a
torch.cuda.synchronize() before step 0 and one after the last step, the
evaluations (each between two synchronize()) subtracted and reported apart.
DIR/result.json holds the figures; the exit code is 0, or 1 on a failure, 2
usage, 3 bad capture, 4 no GPU.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import capture_data as cd  # noqa: E402
import scene_normalize as sn  # noqa: E402

SH_C0 = 0.28209479177387814
RECIPE = dict(means_lr=1.6e-4, scales_lr=5e-3, quats_lr=1e-3, opacities_lr=5e-2, sh0_lr=2.5e-3,
              shN_lr=2.5e-3 / 20, ssim_lambda=0.2, sh_degree=3, sh_degree_interval=1000,
              near_plane=0.01, far_plane=1e10, init_opa=0.1, init_scale=1.0,
              opacity_reg=0.0, scale_reg=0.0)
MCMC_RECIPE = dict(init_opa=0.5, init_scale=0.1, opacity_reg=0.01, scale_reg=0.01)
FUSED_SSIM_SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), ".peers", "fused-ssim")


def die(msg, code):
    print(f"gsplat_trainer: error: {msg}", file=sys.stderr)
    sys.exit(code)


# ---- data (numpy; checked on the CPU by --check) ----
def prepare(capture, resolution=1, test_every=8, normalize=True):
    vs = cd.views(capture, resolution)
    train, test = cd.split(vs, test_every)
    if not train:
        raise cd.CaptureError(f"{capture}: no training view")
    c2w = np.linalg.inv(np.stack([v.w2c for v in vs]))
    xyz, rgb = cd.points(capture)
    pts = xyz.astype(np.float32)  # as gsplat's parser
    T = np.eye(4)
    if normalize:
        c2w, pts, T = sn.normalize(c2w, pts)
    Ks = np.stack([np.array([[v.fx, 0, v.cx], [0, v.fy, v.cy], [0, 0, 1]]) for v in vs])
    return dict(views=vs, train=[vs.index(v) for v in train], test=[vs.index(v) for v in test],
                c2w=c2w, w2c=np.linalg.inv(c2w), Ks=Ks, points=np.asarray(pts, np.float32), rgb=rgb,
                transform=T, scene_scale=sn.scene_scale(c2w) * 1.1)


def init_arrays(points, rgb, init_scale):
    """means, log-scales (N, 3) and SH DC (N, 1, 3) as simple_trainer's sfm init."""
    from scipy.spatial import cKDTree
    d, _ = cKDTree(points).query(points, k=4)
    dist = np.sqrt((d[:, 1:] ** 2).mean(axis=1))
    with np.errstate(divide="ignore"):
        scales = np.log(dist * init_scale)
    scales = np.repeat(scales[:, None], 3, axis=1).astype(np.float32)
    sh0 = ((rgb.astype(np.float32) / 255.0 - 0.5) / SH_C0)[:, None, :].astype(np.float32)
    return points.astype(np.float32), scales, sh0


# ---- SSIM ----
def torch_ssim_valid(x, y):
    """fused_ssim(x, y, padding="valid") in plain torch: x, y [B, C, H, W]."""
    import torch
    import torch.nn.functional as F
    c = x.shape[1]
    g = torch.arange(11, dtype=torch.float32, device=x.device) - 5
    g = torch.exp(-g * g / (2 * 1.5 * 1.5))
    g = g / g.sum()
    w = (g[:, None] * g[None, :]).expand(c, 1, 11, 11).contiguous()
    mu1 = F.conv2d(x, w, groups=c)
    mu2 = F.conv2d(y, w, groups=c)
    s11 = F.conv2d(x * x, w, groups=c) - mu1 * mu1
    s22 = F.conv2d(y * y, w, groups=c) - mu2 * mu2
    s12 = F.conv2d(x * y, w, groups=c) - mu1 * mu2
    c1, c2 = 0.01 ** 2, 0.03 ** 2
    m = ((2 * mu1 * mu2 + c1) * (2 * s12 + c2)) / ((mu1 * mu1 + mu2 * mu2 + c1) * (s11 + s22 + c2))
    return m.mean()


def load_ssim(mode, src):
    """(function(x, y) -> SSIM, description)."""
    if mode == "torch":
        return torch_ssim_valid, "torch (fused_ssim's function, valid window, in plain torch)"
    try:
        from fused_ssim import fused_ssim
        return (lambda x, y: fused_ssim(x, y, padding="valid")), "fused-ssim (installed)"
    except ImportError:
        pass
    why = f"no fused-ssim source at {src}"
    if os.path.isfile(os.path.join(src, "ssim.cu")):
        try:
            import torch.utils.cpp_extension as ext
            t = time.time()
            mod = ext.load(name="fused_ssim_cuda", sources=[os.path.join(src, "ssim.cu"), os.path.join(src, "ext.cpp")],
                           extra_cflags=["-O3"], extra_cuda_cflags=["-O3", "--maxrregcount=32", "--use_fast_math"],
                           verbose=False)
            sys.modules["fused_ssim_cuda"] = mod
            sys.path.insert(0, src)
            from fused_ssim import fused_ssim
            print(f"gsplat_trainer: fused-ssim loaded from {src} ({time.time() - t:.1f} s)", flush=True)
            return (lambda x, y: fused_ssim(x, y, padding="valid")), f"fused-ssim (built from {src})"
        except Exception as e:  # a failed build falls back, loudly
            why = f"fused-ssim build failed: {type(e).__name__}: {str(e)[-400:]}"
    if mode == "fused":
        die(why, 1)
    print(f"gsplat_trainer: {why}; SSIM in plain torch instead", file=sys.stderr, flush=True)
    return torch_ssim_valid, f"torch fallback ({why})"


# ---- training ----
def build_only(a):
    import torch
    import gsplat
    if not torch.cuda.is_available():
        die("no CUDA device", 4)
    t = time.time()
    dev = "cuda"
    n = 64
    means = torch.randn(n, 3, device=dev) * 0.1
    means[:, 2] += 3
    out, _, _ = gsplat.rasterization(
        means, torch.rand(n, 4, device=dev), torch.full((n, 3), 0.05, device=dev),
        torch.full((n,), 0.5, device=dev), torch.rand(n, 16, 3, device=dev),
        torch.eye(4, device=dev)[None], torch.tensor([[[50.0, 0, 32], [0, 50.0, 32], [0, 0, 1]]], device=dev),
        64, 64, sh_degree=3, packed=False)
    fn, what = load_ssim(a.ssim, a.fused_ssim_src)
    x = out.permute(0, 3, 1, 2).clamp(0, 1).contiguous().requires_grad_(True)
    s = fn(x, torch.zeros_like(x))
    s.backward()
    torch.cuda.synchronize()
    print(f"gsplat_trainer: gsplat {gsplat.__version__} and SSIM ({what}) ready in {time.time() - t:.1f} s "
          f"on {torch.cuda.get_device_name()}")


def train(a):
    import torch
    import torch.nn.functional as F
    if not torch.cuda.is_available():
        die("no CUDA device", 4)
    import gsplat
    from gsplat.strategy import DefaultStrategy, MCMCStrategy
    t_start = time.perf_counter()
    rc = dict(RECIPE, **(MCMC_RECIPE if a.mcmc else {}))
    import random
    random.seed(a.seed)
    np.random.seed(a.seed)
    torch.manual_seed(a.seed)
    dev = "cuda"
    try:
        d = prepare(a.capture, a.resolution, a.test_every, not a.no_normalize)
    except cd.CaptureError as e:
        die(str(e), 3)
    ssim_fn, ssim_what = load_ssim(a.ssim, a.fused_ssim_src)
    means, scales, sh0 = init_arrays(d["points"], d["rgb"], rc["init_scale"])
    if not np.isfinite(scales).all():
        print(f"gsplat_trainer: {int((~np.isfinite(scales[:, 0])).sum())} points have a duplicate "
              "(log scale -inf), as gsplat's init would give", file=sys.stderr)
    n = len(means)
    quats = torch.rand((n, 4))
    opac = torch.logit(torch.full((n,), rc["init_opa"]))
    k = (rc["sh_degree"] + 1) ** 2
    shN = torch.zeros((n, k - 1, 3))
    ss = d["scene_scale"]
    params = [("means", torch.from_numpy(means), rc["means_lr"] * ss),
              ("scales", torch.from_numpy(scales), rc["scales_lr"]),
              ("quats", quats, rc["quats_lr"]),
              ("opacities", opac, rc["opacities_lr"]),
              ("sh0", torch.from_numpy(sh0), rc["sh0_lr"]),
              ("shN", shN, rc["shN_lr"])]
    splats = torch.nn.ParameterDict({nm: torch.nn.Parameter(v) for nm, v, _ in params}).to(dev)
    opts = {nm: torch.optim.Adam([{"params": splats[nm], "lr": lr, "name": nm}], eps=1e-15, betas=(0.9, 0.999))
            for nm, _, lr in params}
    sched = torch.optim.lr_scheduler.ExponentialLR(opts["means"], gamma=0.01 ** (1.0 / a.lr_steps))
    if a.mcmc:
        strategy = MCMCStrategy(cap_max=a.mcmc, verbose=False)
        strategy.check_sanity(splats, opts)
        state = strategy.initialize_state()
    else:
        strategy = DefaultStrategy(verbose=False)
        strategy.check_sanity(splats, opts)
        state = strategy.initialize_state(scene_scale=ss)

    vs = d["views"]
    tr, te = d["train"], d["test"]
    imgs = [torch.from_numpy(cd.load_rgb8(vs[i])).to(dev) for i in tr]  # preloaded, bytes
    truths = {i: torch.from_numpy(cd.load_rgb8(vs[i])).to(dev) for i in te}
    viewmats = torch.from_numpy(d["w2c"].astype(np.float32)).to(dev)
    Ks = torch.from_numpy(d["Ks"].astype(np.float32)).to(dev)
    eval_at = sorted(set(e for e in a.eval_at if 0 < e <= a.iters))
    os.makedirs(a.out, exist_ok=True)
    res = dict(trainer="gsplat", gsplat=gsplat.__version__, torch=torch.__version__,
               gpu=torch.cuda.get_device_name(), capture=os.path.abspath(a.capture),
               strategy=f"MCMCStrategy(cap_max={a.mcmc})" if a.mcmc else "DefaultStrategy()",
               iterations=a.iters, lr_steps=a.lr_steps, resolution=a.resolution, test_every=a.test_every,
               train_views=len(tr), test_views=[vs[i].name for i in te], initial_gaussians=n,
               scene_scale=ss, normalized=not a.no_normalize, transform=d["transform"].tolist(),
               ssim=ssim_what, recipe=rc, evals=[])
    print(f"gsplat_trainer: gsplat {gsplat.__version__}, {res['strategy']}, {n} points, "
          f"{len(tr)} training / {len(te)} held-out views of {vs[0].width}x{vs[0].height}, "
          f"scene_scale {ss:.4f}, SSIM: {ssim_what}", flush=True)

    def evaluate(step):
        rd = os.path.join(a.out, f"renders_{step}")
        os.makedirs(rd, exist_ok=True)
        psnrs = []
        with torch.no_grad():
            colors = torch.cat([splats["sh0"], splats["shN"]], 1)
            for i in te:
                v = vs[i]
                r, _, _ = gsplat.rasterization(
                    splats["means"], splats["quats"], torch.exp(splats["scales"]),
                    torch.sigmoid(splats["opacities"]), colors, viewmats[i:i + 1], Ks[i:i + 1],
                    v.width, v.height, sh_degree=rc["sh_degree"], near_plane=rc["near_plane"],
                    far_plane=rc["far_plane"], packed=False, rasterize_mode="classic")
                r = r[0].clamp(0, 1)
                gt = truths[i].float() / 255.0
                psnrs.append(float(10 * torch.log10(1 / torch.mean((r - gt) ** 2))))
                px = (r * 255).round().to(torch.uint8).cpu().numpy()
                cd.save_png(os.path.join(rd, cd.render_name(v.name)), px)
        return rd, psnrs

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    setup_s = t0 - t_start
    excluded = 0.0
    perm, ptr = [], 0
    for step in range(a.iters):
        if ptr == len(perm):
            perm, ptr = torch.randperm(len(tr)).tolist(), 0
        j = perm[ptr]
        ptr += 1
        v = vs[tr[j]]
        pixels = imgs[j].unsqueeze(0).float() / 255.0
        sh_deg = min(step // rc["sh_degree_interval"], rc["sh_degree"])
        renders, _, info = gsplat.rasterization(
            means=splats["means"], quats=splats["quats"], scales=torch.exp(splats["scales"]),
            opacities=torch.sigmoid(splats["opacities"]), colors=torch.cat([splats["sh0"], splats["shN"]], 1),
            viewmats=viewmats[tr[j]:tr[j] + 1], Ks=Ks[tr[j]:tr[j] + 1], width=v.width, height=v.height,
            sh_degree=sh_deg, near_plane=rc["near_plane"], far_plane=rc["far_plane"], packed=False,
            absgrad=False, sparse_grad=False, rasterize_mode="classic", render_mode="RGB")
        strategy.step_pre_backward(params=splats, optimizers=opts, state=state, step=step, info=info)
        l1 = F.l1_loss(renders, pixels)
        ssim = ssim_fn(renders.permute(0, 3, 1, 2), pixels.permute(0, 3, 1, 2))
        loss = l1 * (1.0 - rc["ssim_lambda"]) + (1.0 - ssim) * rc["ssim_lambda"]
        if rc["opacity_reg"] > 0:
            loss = loss + rc["opacity_reg"] * torch.sigmoid(splats["opacities"]).mean()
        if rc["scale_reg"] > 0:
            loss = loss + rc["scale_reg"] * torch.exp(splats["scales"]).mean()
        loss.backward()
        for o in opts.values():
            o.step()
            o.zero_grad(set_to_none=True)
        sched.step()
        if a.mcmc:
            strategy.step_post_backward(params=splats, optimizers=opts, state=state, step=step, info=info,
                                        lr=sched.get_last_lr()[0])
        else:
            strategy.step_post_backward(params=splats, optimizers=opts, state=state, step=step, info=info,
                                        packed=False)
        if (step + 1) % 1000 == 0:
            print(f"gsplat_trainer: step {step + 1} loss {loss.item():.4f} "
                  f"{len(splats['means'])} Gaussians {time.perf_counter() - t0 - excluded:.1f} s", flush=True)
        if step + 1 in eval_at:
            torch.cuda.synchronize()
            te0 = time.perf_counter()
            loop_s = te0 - t0 - excluded
            rd, psnrs = evaluate(step + 1)
            torch.cuda.synchronize()
            ev_s = time.perf_counter() - te0
            excluded += ev_s
            e = dict(step=step + 1, gaussians=int(len(splats["means"])), loop_s=loop_s, eval_s=ev_s,
                     renders=rd, psnr_float=float(np.mean(psnrs)),
                     peak_mem_gib=torch.cuda.max_memory_allocated() / 2 ** 30)
            res["evals"].append(e)
            print(f"gsplat_trainer: eval at {step + 1}: {e['gaussians']} Gaussians, training loop "
                  f"{loop_s:.2f} s, in-process PSNR {e['psnr_float']:.3f} dB (float renders), "
                  f"eval {ev_s:.1f} s -> {rd}", flush=True)
    torch.cuda.synchronize()
    res["loop_s"] = time.perf_counter() - t0 - excluded
    res["eval_s"] = excluded
    res["setup_s"] = setup_s
    res["gaussians"] = int(len(splats["means"]))
    tmp = os.path.join(a.out, "result.json.tmp")
    with open(tmp, "w") as f:
        json.dump(res, f, indent=1)
    os.replace(tmp, os.path.join(a.out, "result.json"))
    print(f"gsplat_trainer: {a.iters} steps, training loop {res['loop_s']:.2f} s "
          f"({1000 * res['loop_s'] / max(a.iters, 1):.2f} ms/step), evaluations {excluded:.1f} s, "
          f"set-up {setup_s:.1f} s, {res['gaussians']} Gaussians")


def check(a):
    """The data path on the CPU (no GPU, no gsplat): what train() would start from."""
    try:
        d = prepare(a.capture, a.resolution, a.test_every, not a.no_normalize)
    except cd.CaptureError as e:
        die(str(e), 3)
    rc = dict(RECIPE, **(MCMC_RECIPE if a.mcmc else {}))
    means, scales, sh0 = init_arrays(d["points"], d["rgb"], rc["init_scale"])
    vs = d["views"]
    img = cd.load_rgb8(vs[d["train"][0]])
    assert img.shape == (vs[0].height, vs[0].width, 3), img.shape
    # the normalisation is a similarity: camera distances scale alike, rotations stay rotations
    R = d["c2w"][:, :3, :3]
    assert np.abs(R @ R.transpose(0, 2, 1) - np.eye(3)).max() < 1e-9
    out = dict(views=len(vs), train=len(d["train"]), test=[vs[i].name for i in d["test"]],
               size=f"{vs[0].width}x{vs[0].height}", points=len(means), scene_scale=d["scene_scale"],
               init_scale_median=float(np.median(np.exp(scales[:, 0]))),
               sh0_range=[float(sh0.min()), float(sh0.max())], recipe=rc)
    try:
        import torch
        x = torch.rand(1, 3, 40, 50, generator=torch.Generator().manual_seed(1))
        y = (x + 0.1 * torch.randn(1, 3, 40, 50, generator=torch.Generator().manual_seed(2))).clamp(0, 1)
        import capture_eval as ce
        ref = ce.ssim_map(x[0].permute(1, 2, 0).numpy(), y[0].permute(1, 2, 0).numpy())[5:-5, 5:-5].mean()
        out["torch_ssim_minus_numpy"] = float(torch_ssim_valid(x, y)) - float(ref)
        assert abs(out["torch_ssim_minus_numpy"]) < 1e-5
    except ImportError:
        out["torch_ssim_minus_numpy"] = "torch not installed"
    print(json.dumps(out, indent=1))


def parse(argv=None):
    ap = argparse.ArgumentParser(prog="gsplat_trainer.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("capture", nargs="?")
    ap.add_argument("--out")
    ap.add_argument("--iters", type=int, default=30000)
    ap.add_argument("--eval-at", default="7000,30000")
    ap.add_argument("--mcmc", type=int, default=0, metavar="CAP")
    ap.add_argument("--resolution", "-r", type=int, default=1)
    ap.add_argument("--test-every", type=int, default=8)
    ap.add_argument("--lr-steps", type=int, default=30000)
    ap.add_argument("--ssim", choices=("auto", "fused", "torch"), default="auto")
    ap.add_argument("--fused-ssim-src", default=os.environ.get("FUSED_SSIM_SRC", FUSED_SSIM_SRC))
    ap.add_argument("--no-normalize", action="store_true")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args(argv)
    try:
        a.eval_at = [int(x) for x in a.eval_at.split(",") if x.strip()]
    except ValueError:
        ap.error(f"--eval-at {a.eval_at}: a comma-separated list of iterations")
    if a.iters < 1 or a.lr_steps < 1 or a.mcmc < 0 or a.resolution not in (1, 2, 4, 8):
        ap.error("--iters and --lr-steps >= 1, --mcmc >= 0, --resolution 1, 2, 4 or 8")
    if not a.build_only:
        if not a.capture:
            ap.error("CAPTURE is required")
        if not a.check and not a.out:
            ap.error("--out DIR is required")
    return a


def main(argv=None):
    a = parse(argv)
    if a.build_only:
        build_only(a)
    elif a.check:
        check(a)
    else:
        train(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
