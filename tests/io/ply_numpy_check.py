#!/usr/bin/python3
"""Independent PLY reader (numpy) for interop: parses the header, reads the
body with numpy structured dtypes and compares with the expected values.
usage: ply_numpy_check.py FILE.ply EXPECTED.f64  (nvert*nprops float64 values,
then the face indices as float64, triangles only)"""
import sys
import numpy as np

TYPES = {"char": "i1", "uchar": "u1", "short": "i2", "ushort": "u2", "int": "i4", "uint": "u4",
         "float": "f4", "double": "f8", "int8": "i1", "uint8": "u1", "int16": "i2", "uint16": "u2",
         "int32": "i4", "uint32": "u4", "float32": "f4", "float64": "f8"}

def main(path, expected):
    data = open(path, "rb").read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    lines = data[:end].decode("ascii").splitlines()
    assert lines[0] == "ply", "first line"
    fmt = lines[1].split()[1]
    order = {"binary_little_endian": "<", "binary_big_endian": ">"}[fmt]
    elems = []
    for ln in lines[2:]:
        t = ln.split()
        if t[0] == "element":
            elems.append((t[1], int(t[2]), []))
        elif t[0] == "property":
            elems[-1][2].append(t[1:])
    off = end
    vert = faces = None
    for name, count, props in elems:
        if name == "vertex":
            dt = np.dtype([(p[1], order + TYPES[p[0]]) for p in props])
            vert = np.frombuffer(data, dtype=dt, count=count, offset=off)
            off += dt.itemsize * count
        elif name == "face":
            assert props == [["list", "uchar", "int", "vertex_indices"]], props
            dt = np.dtype([("n", "u1"), ("i", order + "i4", (3,))])
            faces = np.frombuffer(data, dtype=dt, count=count, offset=off)
            assert (faces["n"] == 3).all()
            off += dt.itemsize * count
    assert off == len(data), "trailing or missing bytes: %d vs %d" % (off, len(data))
    exp = np.fromfile(expected, dtype="<f8")
    nv = len(vert)
    cols = np.stack([vert[n].astype(np.float64) for n in vert.dtype.names], axis=1).ravel()
    got = np.concatenate([cols, faces["i"].astype(np.float64).ravel() if faces is not None else []])
    if got.shape != exp.shape or not np.array_equal(got, exp):
        print("mismatch", got[:10], exp[:10], nv)
        return 1
    print("ok", nv, "vertices", 0 if faces is None else len(faces), "faces")
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
