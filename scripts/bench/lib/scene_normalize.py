"""scene_normalize: the world normalisation that gsplat 1.5.3's COLMAP parser
applies by default (examples/datasets/colmap.py with normalize=True, its
examples/datasets/normalize.py), written here from its description so that
the gsplat peer of issue 52 trains in the frame and at the scene scale that
gsplat's simple_trainer uses. numpy only.

normalize(c2w, points) -> (c2w', points', T) with T the 4x4 similarity
(c2w' = T c2w with its rotation rescaled to orthonormal, points' = T points):
 1. cameras: rotate the mean camera up vector (each camera's -y axis in the
    world) onto -y (Rodrigues; a mirror diag(-1, 1, 1) when it points exactly
    the other way, as gsplat); centre on the negated per-axis median of the
    points of the camera centres' optical axes closest to the origin; scale
    by 1 / the median distance of the centred camera centres;
 2. points: translate by their per-axis median and rotate onto their
    principal axes (covariance eigenvectors by decreasing eigenvalue, the
    first flipped when the determinant is negative), applied to both;
 3. when the points' median z is above their mean z, rotate 180 degrees
    about x (the floor is assumed below).
scene_scale(c2w): the largest distance of a camera centre from their mean
(gsplat's parser.scene_scale; simple_trainer multiplies it by 1.1).
"""
import numpy as np


def _similarity_from_cameras(c2w):
    t = c2w[:, :3, 3]
    R = c2w[:, :3, :3]
    down = np.array([0.0, -1.0, 0.0])
    up = (R @ down).mean(axis=0)
    up /= np.linalg.norm(up)
    c = float(up @ down)
    if c > -1:
        v = np.cross(up, down)
        K = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
        R_align = np.eye(3) + K + K @ K / (1.0 + c)
    else:
        R_align = np.diag([-1.0, 1.0, 1.0])
    R = R_align @ R
    fwd = R[:, :, 2]
    t = t @ R_align.T
    nearest = t + np.sum(fwd * -t, axis=-1)[:, None] * fwd
    shift = -np.median(nearest, axis=0)
    T = np.eye(4)
    T[:3, :3] = R_align
    T[:3, 3] = shift
    T[:3, :] *= 1.0 / np.median(np.linalg.norm(t + shift, axis=-1))
    return T


def _principal_axes(points):
    centre = np.median(points, axis=0)
    evals, evecs = np.linalg.eigh(np.cov(points - centre, rowvar=False))
    evecs = evecs[:, np.argsort(evals)[::-1]]
    if np.linalg.det(evecs) < 0:
        evecs[:, 0] *= -1
    T = np.eye(4)
    T[:3, :3] = evecs.T
    T[:3, 3] = -evecs.T @ centre
    return T


def apply_points(T, p):
    return p @ T[:3, :3].T + T[:3, 3]


def apply_cameras(T, c2w):
    out = T[None] @ c2w
    s = np.linalg.norm(out[:, 0, :3], axis=1)
    out[:, :3, :3] /= s[:, None, None]
    return out


def normalize(c2w, points):
    c2w = np.asarray(c2w, dtype=np.float64)
    T1 = _similarity_from_cameras(c2w)
    c2w = apply_cameras(T1, c2w)
    points = apply_points(T1, points)
    T2 = _principal_axes(points)
    c2w = apply_cameras(T2, c2w)
    points = apply_points(T2, points)
    T = T2 @ T1
    if np.median(points[:, 2]) > np.mean(points[:, 2]):
        T3 = np.diag([1.0, -1.0, -1.0, 1.0])
        c2w = apply_cameras(T3, c2w)
        points = apply_points(T3, points)
        T = T3 @ T
    return c2w, points, T


def scene_scale(c2w):
    centres = c2w[:, :3, 3]
    return float(np.max(np.linalg.norm(centres - centres.mean(axis=0), axis=1)))
