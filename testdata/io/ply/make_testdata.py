#!/usr/bin/env python3
"""Regenerates the PLY test inputs in this folder (good cubes + broken/).
Each broken file must make gt_ply_read fail with GT_ERR_DATA and a place."""
import os, struct

HERE = os.path.dirname(os.path.abspath(__file__))
B = os.path.join(HERE, "broken")

V = [(0,0,0),(1,0,0),(1,1,0),(0,1,0),(0,0,1),(1,0,1),(1,1,1),(0,1,1)]
F = [(0,3,2,1),(4,5,6,7),(0,1,5,4),(1,2,6,5),(2,3,7,6),(3,0,4,7)]

def header(fmt, nv=8, nf=6, vprops=("float x","float y","float z"), extra=""):
    h = "ply\nformat %s 1.0\ncomment unit cube\nelement vertex %s\n" % (fmt, nv)
    h += "".join("property %s\n" % p for p in vprops)
    h += "element face %s\nproperty list uchar int vertex_indices\n" % nf
    return h + extra + "end_header\n"

def cube_ascii():
    s = header("ascii")
    s += "".join("%g %g %g\n" % v for v in V)
    s += "".join("4 %d %d %d %d\n" % f for f in F)
    return s.encode()

def cube_bin(e):
    s = header("binary_little_endian" if e == "<" else "binary_big_endian").encode()
    s += b"".join(struct.pack(e + "3f", *v) for v in V)
    s += b"".join(struct.pack(e + "B4i", 4, *f) for f in F)
    return s

def w(name, data):
    if isinstance(data, str): data = data.encode()
    with open(os.path.join(B if "/" not in name and not name.startswith("cube") else HERE, name), "wb") as f:
        f.write(data)

w("cube_ascii.ply", cube_ascii())
w("cube_le.ply", cube_bin("<"))
w("cube_be.ply", cube_bin(">"))

good_le = cube_bin("<")
good_a = cube_ascii()
hl = good_le.index(b"end_header\n") + len("end_header\n")
ha = good_a.index(b"end_header\n") + len("end_header\n")

broken = {
 "empty.ply": b"",
 "not_ply.ply": b"plx\nformat ascii 1.0\nend_header\n",
 "no_end_header.ply": good_a[:ha - len("end_header\n")],
 "truncated_header.ply": good_a[:40],
 "no_format.ply": b"ply\nelement vertex 1\nproperty float x\nend_header\n0\n",
 "unknown_format.ply": b"ply\nformat binary_middle_endian 1.0\nend_header\n",
 "bad_version.ply": b"ply\nformat ascii 2.0\nend_header\n",
 "unknown_type.ply": b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float16 x\nend_header\n0\n",
 "unknown_list_type.ply": b"ply\nformat ascii 1.0\nelement face 1\nproperty list uchar long vertex_indices\nend_header\n0\n",
 "float_list_count.ply": b"ply\nformat ascii 1.0\nelement face 1\nproperty list float int vertex_indices\nend_header\n0\n",
 "float_face_index.ply": b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nelement face 1\nproperty list uchar float vertex_indices\nend_header\n0\n0\n0\n3 0 1 2\n",
 "unknown_keyword.ply": b"ply\nformat ascii 1.0\nelemnt vertex 1\nend_header\n",
 "property_before_element.ply": b"ply\nformat ascii 1.0\nproperty float x\nend_header\n",
 "negative_count.ply": b"ply\nformat ascii 1.0\nelement vertex -3\nproperty float x\nend_header\n",
 "nonnumeric_count.ply": b"ply\nformat ascii 1.0\nelement vertex three\nproperty float x\nend_header\n",
 "count_overflows_64bit.ply": b"ply\nformat binary_little_endian 1.0\nelement vertex 99999999999999999999999\nproperty float x\nend_header\n",
 "product_overflows_64bit.ply": b"ply\nformat binary_little_endian 1.0\nelement vertex 4611686018427387904\nproperty double x\nproperty double y\nend_header\n" + b"\0" * 16,
 "count_overflows_32bit.ply": b"ply\nformat binary_little_endian 1.0\nelement vertex 4294967297\nproperty float x\nend_header\n" + b"\0" * 64,
 "duplicate_property.ply": b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float x\nend_header\n0 0\n",
 "duplicate_element.ply": b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nelement vertex 1\nend_header\n0\n",
 "property_missing_name.ply": b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float\nend_header\n0\n",
 "list_missing_name.ply": b"ply\nformat ascii 1.0\nelement face 1\nproperty list uchar int\nend_header\n0\n",
 "ascii_truncated_body.ply": good_a[:-12],
 "ascii_too_few_vertices.ply": good_a.replace(b"element vertex 8", b"element vertex 9"),
 "ascii_nonnumeric.ply": good_a[:ha] + b"0 0 zero\n" + good_a[ha + 6:],
 "ascii_extra_value.ply": good_a[:ha] + b"0 0 0 0\n" + good_a[ha + 6:],
 "ascii_missing_value.ply": good_a[:ha] + b"0 0\n" + good_a[ha + 6:],
 "ascii_trailing_data.ply": good_a + b"1 2 3\n",
 "ascii_uchar_out_of_range.ply": b"ply\nformat ascii 1.0\nelement vertex 1\nproperty uchar red\nend_header\n256\n",
 "ascii_int_as_float.ply": b"ply\nformat ascii 1.0\nelement vertex 1\nproperty int i\nend_header\n1.5\n",
 "ascii_index_out_of_range.ply": good_a.replace(b"4 2 3 7 6", b"4 2 3 8 6"),
 "ascii_negative_index.ply": good_a.replace(b"4 2 3 7 6", b"4 2 3 -1 6"),
 "ascii_short_face.ply": good_a.replace(b"4 2 3 7 6", b"4 2 3 7"),
 "ascii_negative_list_count.ply": b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nelement face 1\nproperty list int int vertex_indices\nend_header\n0\n-2 0 0\n",
 "ascii_negative_list_count_vertex.ply": b"ply\nformat ascii 1.0\nelement vertex 1\nproperty list int int k\nproperty float x\nend_header\n-2 0\n",
 "ascii_face_without_vertices.ply": b"ply\nformat ascii 1.0\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n3 0 1 2\n",
 "face_without_list.ply": b"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nelement face 1\nproperty int a\nend_header\n0\n1\n",
 "binary_truncated_vertices.ply": good_le[:hl + 50],
 "binary_truncated_faces.ply": good_le[:-3],
 "binary_header_only.ply": good_le[:hl],
 "binary_index_out_of_range.ply": good_le[:-4] + struct.pack("<i", 8),
 "binary_negative_index.ply": good_le[:-4] + struct.pack("<i", -7),
 "binary_huge_list_count.ply": b"ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty list int float k\nend_header\n" + struct.pack("<i", 2**31 - 1) + b"\0" * 8,
 "binary_negative_list_count.ply": b"ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty float x\nelement face 1\nproperty list int int vertex_indices\nend_header\n" + struct.pack("<fi", 0, -1),
 "binary_lying_vertex_count.ply": good_le.replace(b"element vertex 8", b"element vertex 800000000"),
 "binary_lying_face_count.ply": good_le.replace(b"element face 6", b"element face 60000000"),
 "binary_lying_extra_element.ply": good_le.replace(b"end_header", b"element junk 123456789012\nproperty double a\nend_header"),
 "nul_in_header.ply": b"ply\nformat ascii 1.0\ncomment a\0b\nend_header\n",
 "long_header_line.ply": b"ply\nformat ascii 1.0\ncomment " + b"x" * 70000 + b"\nend_header\n",
 "junk_after_end_header.ply": b"ply\nformat ascii 1.0\nend_header now\n",
 "empty_header_line.ply": b"ply\nformat ascii 1.0\n\nend_header\n",
}
for k, v in broken.items():
    with open(os.path.join(B, k), "wb") as f:
        f.write(v)
print(len(broken), "broken files")
