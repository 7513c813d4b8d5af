"""colmap_model: read a COLMAP sparse model (cameras, images, points3D; .bin
or .txt, COLMAP's documented formats) into numpy, for the capture benchmark
of issue 52 (scripts/bench/gsrender-capture, gsplat_trainer.py,
capture_eval.py). numpy only; the GPU machine carries no pycolmap.

  read_model(dir) -> Model(cameras, images, xyz, rgb, error)
    cameras: {camera_id: Camera(model, width, height, params)}
    images:  {image_id: Image(name, qvec (w, x, y, z), tvec, camera_id)}
    xyz (N, 3) float64, rgb (N, 3) uint8, error (N,) float64, in file order
  qvec_to_rotmat(q): world-to-camera rotation of a COLMAP image
Errors raise ModelError with the file and what is wrong.
"""
import os
import struct
from collections import namedtuple

import numpy as np

Camera = namedtuple("Camera", "model width height params")
Image = namedtuple("Image", "name qvec tvec camera_id")
Model = namedtuple("Model", "cameras images xyz rgb error")

# COLMAP's camera models: id -> (name, number of parameters)
CAMERA_MODELS = {
    0: ("SIMPLE_PINHOLE", 3), 1: ("PINHOLE", 4), 2: ("SIMPLE_RADIAL", 4), 3: ("RADIAL", 5),
    4: ("OPENCV", 8), 5: ("OPENCV_FISHEYE", 8), 6: ("FULL_OPENCV", 12), 7: ("FOV", 5),
    8: ("SIMPLE_RADIAL_FISHEYE", 4), 9: ("RADIAL_FISHEYE", 5), 10: ("THIN_PRISM_FISHEYE", 12),
    11: ("RAD_TAN_THIN_PRISM_FISHEYE", 16),
}
MODEL_PARAMS = {name: n for name, n in CAMERA_MODELS.values()}


class ModelError(Exception):
    pass


class _Reader:
    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.buf = f.read()
        self.pos = 0

    def take(self, fmt):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.buf):
            raise ModelError(f"{self.path}: truncated at byte {self.pos}")
        v = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return v

    def skip(self, n):
        if self.pos + n > len(self.buf):
            raise ModelError(f"{self.path}: truncated at byte {self.pos}")
        self.pos += n

    def cstring(self):
        end = self.buf.find(b"\0", self.pos)
        if end < 0:
            raise ModelError(f"{self.path}: unterminated image name at byte {self.pos}")
        s = self.buf[self.pos:end].decode("utf-8")
        self.pos = end + 1
        return s

    def done(self):
        if self.pos != len(self.buf):
            raise ModelError(f"{self.path}: {len(self.buf) - self.pos} bytes after the last record")


def _cameras_bin(path):
    r = _Reader(path)
    (n,) = r.take("<Q")
    cams = {}
    for _ in range(n):
        cid, mid, w, h = r.take("<iiQQ")
        if mid not in CAMERA_MODELS:
            raise ModelError(f"{path}: camera {cid} has unknown model id {mid}")
        name, k = CAMERA_MODELS[mid]
        cams[cid] = Camera(name, int(w), int(h), np.array(r.take(f"<{k}d")))
    r.done()
    return cams


def _images_bin(path):
    r = _Reader(path)
    (n,) = r.take("<Q")
    ims = {}
    for _ in range(n):
        v = r.take("<i7di")
        name = r.cstring()
        (npts,) = r.take("<Q")
        r.skip(24 * npts)  # x, y (double), point3D_id (int64) per observation
        ims[v[0]] = Image(name, np.array(v[1:5]), np.array(v[5:8]), v[8])
    r.done()
    return ims


def _points_bin(path):
    r = _Reader(path)
    (n,) = r.take("<Q")
    xyz = np.empty((n, 3))
    rgb = np.empty((n, 3), np.uint8)
    err = np.empty(n)
    for i in range(n):
        v = r.take("<Q3d3BdQ")
        xyz[i], rgb[i], err[i] = v[1:4], v[4:7], v[7]
        r.skip(8 * v[8])  # track: image_id, point2D_idx (int32 each)
    r.done()
    return xyz, rgb, err


def _lines(path):
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            s = line.strip()
            if s and not s.startswith("#"):
                yield no, s


def _cameras_txt(path):
    cams = {}
    for no, s in _lines(path):
        t = s.split()
        try:
            name = t[1]
            if name not in MODEL_PARAMS:
                raise ModelError(f"{path}:{no}: unknown camera model {name}")
            if len(t) != 4 + MODEL_PARAMS[name]:
                raise ModelError(f"{path}:{no}: {name} takes {MODEL_PARAMS[name]} parameters, "
                                 f"the line has {len(t) - 4}")
            cams[int(t[0])] = Camera(name, int(t[2]), int(t[3]), np.array([float(x) for x in t[4:]]))
        except (ValueError, IndexError):
            raise ModelError(f"{path}:{no}: not a camera line")
    return cams


def _images_txt(path):
    ims = {}
    it = _lines_with_blank(path)
    for no, s in it:
        t = s.split(None, 9)
        if len(t) != 10:
            raise ModelError(f"{path}:{no}: not an image line (ID QW QX QY QZ TX TY TZ CAMERA_ID NAME)")
        try:
            v = [float(x) for x in t[1:8]]
            ims[int(t[0])] = Image(t[9], np.array(v[:4]), np.array(v[4:7]), int(t[8]))
        except ValueError:
            raise ModelError(f"{path}:{no}: not an image line")
        next(it, None)  # its POINTS2D line (possibly empty)
    return ims


def _lines_with_blank(path):
    """images.txt: two lines an image, the second (observations) may be empty."""
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            if line.startswith("#"):
                continue
            yield no, line.strip()


def _points_txt(path):
    xyz, rgb, err = [], [], []
    for no, s in _lines(path):
        t = s.split()
        try:
            xyz.append([float(x) for x in t[1:4]])
            rgb.append([int(x) for x in t[4:7]])
            err.append(float(t[7]))
        except (ValueError, IndexError):
            raise ModelError(f"{path}:{no}: not a point line")
    return (np.array(xyz, dtype=float).reshape(-1, 3), np.array(rgb, dtype=np.uint8).reshape(-1, 3),
            np.array(err, dtype=float))


def read_model(d):
    """The model in folder d: .bin files when all three are there, else .txt."""
    def have(ext):
        return all(os.path.isfile(os.path.join(d, f"{n}.{ext}")) for n in ("cameras", "images", "points3D"))
    if have("bin"):
        cams = _cameras_bin(os.path.join(d, "cameras.bin"))
        ims = _images_bin(os.path.join(d, "images.bin"))
        xyz, rgb, err = _points_bin(os.path.join(d, "points3D.bin"))
    elif have("txt"):
        cams = _cameras_txt(os.path.join(d, "cameras.txt"))
        ims = _images_txt(os.path.join(d, "images.txt"))
        xyz, rgb, err = _points_txt(os.path.join(d, "points3D.txt"))
    else:
        raise ModelError(f"{d}: no COLMAP model (cameras, images, points3D as .bin or .txt)")
    for iid, im in ims.items():
        if im.camera_id not in cams:
            raise ModelError(f"{d}: image {im.name} names camera {im.camera_id}, which the model lacks")
    return Model(cams, ims, xyz, rgb, err)


def find_sparse(capture):
    """capture/sparse/0 (the reference trainer's and gsplat's first choice), else capture/sparse."""
    for d in (os.path.join(capture, "sparse", "0"), os.path.join(capture, "sparse")):
        if os.path.isdir(d):
            return d
    raise ModelError(f"{capture}: no sparse/0 or sparse folder")


def qvec_to_rotmat(q):
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array([
        [1 - 2 * y * y - 2 * z * z, 2 * x * y - 2 * w * z, 2 * x * z + 2 * w * y],
        [2 * x * y + 2 * w * z, 1 - 2 * x * x - 2 * z * z, 2 * y * z - 2 * w * x],
        [2 * x * z - 2 * w * y, 2 * y * z + 2 * w * x, 1 - 2 * x * x - 2 * y * y]])


def pinhole(cam):
    """fx, fy, cx, cy of a PINHOLE or SIMPLE_PINHOLE camera; ModelError otherwise."""
    p = cam.params
    if cam.model == "PINHOLE":
        return p[0], p[1], p[2], p[3]
    if cam.model == "SIMPLE_PINHOLE":
        return p[0], p[0], p[1], p[2]
    raise ModelError(f"camera model {cam.model} is not supported: undistort the capture to PINHOLE "
                     "first (colmap image_undistorter, or scripts/bench/capture-prepare)")
