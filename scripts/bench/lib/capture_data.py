"""capture_data: one reading of a COLMAP capture (images/ + sparse/0/) that the
capture benchmark of issue 52 shares between the gsplat peer
(gsplat_trainer.py), the evaluator (capture_eval.py) and the driver
(scripts/bench/gsrender-capture), so that both trainers are split, fed and
scored on the same photographs:

  views(capture, resolution=1) -> [View] sorted by image name (the
      reference's and gsplat's order), each with its world-to-camera matrix,
      pinhole intrinsics at the resolution and the file it loads from
  split(views, test_every=8) -> (train, test): test = index % test_every == 0
      of the name-sorted list (the reference's llffhold, gsplat's test_every)
  load_rgb8(view) -> (H, W, 3) uint8: the ground truth at the resolution
  render_name(image_name) -> the PNG file name a held-out render is saved as

Resolution N > 1 (the reference's -r N): images_N/<same name> when that
folder exists, else images/<name> downscaled on load with PIL's bicubic
filter to round(W/N) x round(H/N) (gsplat's _resize_image_folder size and
filter). The intrinsics are scaled by the loaded image's size over the
camera's, as gsplat's parser does. Only PINHOLE and SIMPLE_PINHOLE cameras
(undistorted captures); numpy and PIL.
"""
import os
from collections import namedtuple

import numpy as np

import colmap_model as cm

View = namedtuple("View", "name path width height fx fy cx cy w2c")


class CaptureError(Exception):
    pass


def _image_path(capture, name, resolution):
    if resolution > 1:
        d = os.path.join(capture, f"images_{resolution}")
        if os.path.isdir(d):
            p = os.path.join(d, name)
            if os.path.isfile(p):
                return p, False
            stem = os.path.splitext(name)[0]
            for ext in (".png", ".jpg", ".jpeg", ".JPG", ".JPEG", ".PNG"):
                if os.path.isfile(os.path.join(d, stem + ext)):
                    return os.path.join(d, stem + ext), False
            raise CaptureError(f"{d} has no image for {name}")
    p = os.path.join(capture, "images", name)
    if not os.path.isfile(p):
        raise CaptureError(f"{p}: the image of camera '{name}' is missing")
    return p, resolution > 1


def _size(path):
    from PIL import Image
    with Image.open(path) as im:
        return im.size


def views(capture, resolution=1):
    if resolution not in (1, 2, 4, 8):
        raise CaptureError(f"resolution {resolution}: 1, 2, 4 or 8")
    try:
        model = cm.read_model(cm.find_sparse(capture))
    except cm.ModelError as e:
        raise CaptureError(str(e))
    if not model.images:
        raise CaptureError(f"{capture}: the model registers no image")
    out = []
    for im in sorted(model.images.values(), key=lambda i: i.name):
        cam = model.cameras[im.camera_id]
        try:
            fx, fy, cx, cy = cm.pinhole(cam)
        except cm.ModelError as e:
            raise CaptureError(f"image {im.name}: {e}")
        path, scaled = _image_path(capture, im.name, resolution)
        w0, h0 = _size(path)
        if not scaled and resolution == 1 and (w0, h0) != (cam.width, cam.height):
            raise CaptureError(f"{path} is {w0}x{h0}, its camera {cam.width}x{cam.height}")
        w, h = (round(w0 / resolution), round(h0 / resolution)) if scaled else (w0, h0)
        sx, sy = w / cam.width, h / cam.height
        w2c = np.eye(4)
        w2c[:3, :3] = cm.qvec_to_rotmat(im.qvec)
        w2c[:3, 3] = im.tvec
        out.append(View(im.name, path, w, h, fx * sx, fy * sy, cx * sx, cy * sy, w2c))
    return out


def points(capture):
    """xyz (N, 3) float64 and rgb (N, 3) uint8 of points3D, in file order."""
    model = cm.read_model(cm.find_sparse(capture))
    if len(model.xyz) == 0:
        raise CaptureError(f"{capture}: points3D is empty")
    return model.xyz, model.rgb


def split(vs, test_every=8):
    if test_every <= 0:
        return list(vs), []
    return ([v for i, v in enumerate(vs) if i % test_every != 0],
            [v for i, v in enumerate(vs) if i % test_every == 0])


def load_rgb8(view):
    from PIL import Image
    with Image.open(view.path) as im:
        im.load()
        if im.mode in ("RGBA", "LA") or (im.mode == "P" and "transparency" in im.info):
            # an alpha channel over a black background (gsrender's default)
            rgba = np.asarray(im.convert("RGBA"), dtype=np.float64) / 255.0
            a = (rgba[..., :3] * rgba[..., 3:] * 255.0 + 0.5).astype(np.uint8)
            im = Image.fromarray(a)
        else:
            im = im.convert("RGB")
        if im.size != (view.width, view.height):
            im = im.resize((view.width, view.height), Image.BICUBIC)
        return np.ascontiguousarray(np.asarray(im, dtype=np.uint8))


def render_name(image_name):
    """img_001.jpg -> img_001.png; sub/a.jpg -> sub__a.png."""
    return os.path.splitext(image_name)[0].replace("/", "__").replace("\\", "__") + ".png"


def save_png(path, rgb8):
    from PIL import Image
    tmp = path + ".tmp.png"
    Image.fromarray(np.ascontiguousarray(rgb8, dtype=np.uint8), "RGB").save(tmp)
    os.replace(tmp, path)
