#!/usr/bin/python3
"""Sample oriented points (area-uniform, face normals) from a binary PLY
triangle mesh: make_bunny_points.py MESH.ply N SEED OUT.ply [flip]
bunny.ply's faces wind clockwise seen from outside, so its face normals point
inward: pass "flip" to negate them (done for bunny_8k.ply).
Used once to make testdata/poisson/bunny_8k.ply from ../shared/data/meshes/bunny.ply."""
import sys
import numpy as np

def read_ply(path):
    f = open(path, 'rb')
    nv = nf = 0
    props = []
    el = None
    while True:
        line = f.readline().decode().strip()
        if line.startswith('element vertex'): nv = int(line.split()[2]); el = 'v'
        elif line.startswith('element face'): nf = int(line.split()[2]); el = 'f'
        elif line.startswith('property') and el == 'v': props.append(line.split()[2])
        elif line == 'end_header': break
    v = np.frombuffer(f.read(nv * 4 * len(props)), dtype='<f4').reshape(nv, len(props))[:, :3]
    dt = np.dtype([('n', 'u1'), ('i', '<i4', 3)])
    fa = np.frombuffer(f.read(nf * dt.itemsize), dtype=dt)
    assert (fa['n'] == 3).all()
    return v.astype(np.float64), fa['i']

v, t = read_ply(sys.argv[1])
n, seed = int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(seed)
a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
cr = np.cross(b - a, c - a)
area = np.linalg.norm(cr, axis=1)
keep = area > 0
t, a, b, c, cr, area = t[keep], a[keep], b[keep], c[keep], cr[keep], area[keep]
f = rng.choice(len(t), size=n, p=area / area.sum())
r1, r2 = rng.random(n), rng.random(n)
s = np.sqrt(r1)
p = (1 - s)[:, None] * a[f] + (s * (1 - r2))[:, None] * b[f] + (s * r2)[:, None] * c[f]
nr = cr[f] / area[f][:, None]
if len(sys.argv) > 5 and sys.argv[5] == 'flip':
    nr = -nr
out = np.hstack([p, nr]).astype('<f4')
with open(sys.argv[4], 'wb') as o:
    o.write(("ply\nformat binary_little_endian 1.0\ncomment sampled from %s (%d points, seed %d%s)\n"
             "element vertex %d\nproperty float x\nproperty float y\nproperty float z\n"
             "property float nx\nproperty float ny\nproperty float nz\nend_header\n"
             % (sys.argv[1].split('/')[-1], n, seed, ', normals flipped outward' if len(sys.argv) > 5 else '', n)).encode())
    o.write(out.tobytes())
