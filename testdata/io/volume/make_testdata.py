#!/usr/bin/env python3
"""Regenerates the volume test inputs (good NRRD variants + broken/).
Good volumes hold v(i,j,k) = i + 10*j + 100*k on a 4 x 3 x 2 grid."""
import gzip, os, struct

HERE = os.path.dirname(os.path.abspath(__file__))
B = os.path.join(HERE, "broken")
X, Y, Z = 4, 3, 2
VALS = [i + 10 * j + 100 * k for k in range(Z) for j in range(Y) for i in range(X)]

def data(fmt):
    return b"".join(struct.pack(fmt, v) for v in VALS)

def w(path, b):
    if isinstance(b, str): b = b.encode()
    with open(os.path.join(HERE, path), "wb") as f: f.write(b)

# NRRD0001, spacings, big-endian int16, attached
w("be_int16_spacings.nrrd", "NRRD0001\n# old style\ntype: short\ndimension: 3\nsizes: 4 3 2\nspacings: 0.5 0.25 2\nendian: big\nencoding: raw\n\n".encode() + data(">h"))
# NRRD0005 float, space directions + origin + iso, gzip attached
w("float_gzip.nrrd", "NRRD0005\ntype: float\ndimension: 3\nspace: right-anterior-superior\nsizes: 4 3 2\nspace directions: (0,1,0) (1,0,0) (0,0,-2)\nspace origin: (1.5,-2,3)\nkinds: domain domain domain\nendian: little\nencoding: gzip\niso:=42.5\n\n".encode() + gzip.compress(data("<f")))
# detached header + raw data with a line skip and byte skip
w("detached.raw", b"some text\nmore\n" + b"XYZW" + data("<H"))
w("detached.nhdr", "NRRD0004\ntype: ushort\ndimension: 3\nsizes: 4 3 2\nendian: little\nencoding: raw\nline skip: 2\nbyte skip: 4\ndata file: detached.raw\n")
# uint8 with no endian field, unsigned char alias
w("uchar.nrrd", "NRRD0002\ntype: unsigned char\ndimension: 3\nsizes: 4 3 2\nencoding: raw\n\n".encode() + data("<B"))
# plain raw: uint16 little endian, 4x3x2
w("plain_4x3x2_uint16.raw", data("<H"))

hdr = "NRRD0004\ntype: float\ndimension: 3\nsizes: 4 3 2\nendian: little\nencoding: raw\n\n"
good = hdr.encode() + data("<f")
broken = {
  "empty.nrrd": b"",
  "bad_magic.nrrd": b"NRRD0009\n" + good[9:],
  "no_blank_line.nrrd": hdr[:-1].encode(),
  "truncated_header.nrrd": good[:30],
  "truncated_data.nrrd": good[:-1],
  "no_data.nrrd": hdr.encode(),
  "no_type.nrrd": hdr.replace("type: float\n", "").encode() + data("<f"),
  "no_sizes.nrrd": hdr.replace("sizes: 4 3 2\n", "").encode() + data("<f"),
  "no_encoding.nrrd": hdr.replace("encoding: raw\n", "").encode() + data("<f"),
  "no_endian.nrrd": hdr.replace("endian: little\n", "").encode() + data("<f"),
  "no_dimension.nrrd": hdr.replace("dimension: 3\n", "").encode() + data("<f"),
  "unknown_type.nrrd": hdr.replace("float", "complex").encode() + data("<f"),
  "block_type.nrrd": hdr.replace("float", "block").encode() + data("<f"),
  "dimension_2.nrrd": hdr.replace("dimension: 3", "dimension: 2").replace("sizes: 4 3 2", "sizes: 4 6").encode() + data("<f"),
  "dimension_4.nrrd": hdr.replace("dimension: 3", "dimension: 4").replace("sizes: 4 3 2", "sizes: 1 4 3 2").encode() + data("<f"),
  "zero_size.nrrd": hdr.replace("sizes: 4 3 2", "sizes: 4 0 2").encode(),
  "negative_size.nrrd": hdr.replace("sizes: 4 3 2", "sizes: 4 -3 2").encode() + data("<f"),
  "two_sizes.nrrd": hdr.replace("sizes: 4 3 2", "sizes: 4 3").encode() + data("<f"),
  "four_sizes.nrrd": hdr.replace("sizes: 4 3 2", "sizes: 4 3 2 1").encode() + data("<f"),
  "nonnumeric_size.nrrd": hdr.replace("sizes: 4 3 2", "sizes: 4 three 2").encode() + data("<f"),
  "sizes_overflow_64bit.nrrd": hdr.replace("sizes: 4 3 2", "sizes: 4294967296 4294967296 4").encode() + data("<f"),
  "sizes_overflow_32bit.nrrd": hdr.replace("sizes: 4 3 2", "sizes: 65536 65536 2").encode() + data("<f"),
  "size_too_big_for_ll.nrrd": hdr.replace("sizes: 4 3 2", "sizes: 4 3 99999999999999999999").encode() + data("<f"),
  "lying_sizes.nrrd": hdr.replace("sizes: 4 3 2", "sizes: 1000 1000 1000").encode() + data("<f"),
  "bad_endian.nrrd": hdr.replace("little", "middle").encode() + data("<f"),
  "ascii_encoding.nrrd": hdr.replace("encoding: raw", "encoding: ascii").encode() + b"1 2 3\n",
  "bzip2_encoding.nrrd": hdr.replace("encoding: raw", "encoding: bzip2").encode(),
  "bad_spacings.nrrd": hdr.replace("encoding", "spacings: 1 x 1\nencoding").encode() + data("<f"),
  "zero_spacing.nrrd": hdr.replace("encoding", "spacings: 1 0 1\nencoding").encode() + data("<f"),
  "spacings_and_directions.nrrd": hdr.replace("encoding", "spacings: 1 1 1\nspace directions: (1,0,0) (0,1,0) (0,0,1)\nencoding").encode() + data("<f"),
  "bad_directions.nrrd": hdr.replace("encoding", "space directions: (1,0,0) (0,1) (0,0,1)\nencoding").encode() + data("<f"),
  "none_direction.nrrd": hdr.replace("encoding", "space directions: none (1,0,0) (0,1,0)\nencoding").encode() + data("<f"),
  "bad_origin.nrrd": hdr.replace("encoding", "space origin: (1,2)\nencoding").encode() + data("<f"),
  "bad_space_dimension.nrrd": hdr.replace("encoding", "space dimension: 2\nencoding").encode() + data("<f"),
  "unknown_field.nrrd": hdr.replace("encoding", "frobnicate: yes\nencoding").encode() + data("<f"),
  "no_colon.nrrd": hdr.replace("encoding: raw", "encoding raw").encode() + data("<f"),
  "bad_iso.nrrd": hdr.replace("encoding", "iso:=high\nencoding").encode() + data("<f"),
  "missing_data_file.nhdr": hdr.replace("encoding: raw\n\n", "encoding: raw\ndata file: does_not_exist.raw\n").encode(),
  "data_file_list.nhdr": hdr.replace("encoding: raw\n\n", "encoding: raw\ndata file: LIST\na.raw\n").encode(),
  "negative_byte_skip.nrrd": hdr.replace("encoding", "byte skip: -2\nencoding").encode() + data("<f"),
  "byte_skip_past_end.nrrd": hdr.replace("encoding", "byte skip: 1000\nencoding").encode() + data("<f"),
  "line_skip_past_end.nrrd": hdr.replace("encoding", "line skip: 5\nencoding").encode() + b"a\nb\n",
  "gzip_truncated.nrrd": hdr.replace("raw", "gzip").encode() + gzip.compress(data("<f"))[:-20],
  "gzip_corrupt.nrrd": hdr.replace("raw", "gzip").encode() + b"\x1f\x8b\x08\x00" + b"garbage!" * 8,
  "gzip_short.nrrd": hdr.replace("raw", "gzip").encode() + gzip.compress(data("<f")[:-8]),
  "nul_in_header.nrrd": hdr.replace("float", "fl\0at").encode() + data("<f"),
}
for k, v in broken.items():
    with open(os.path.join(B, k), "wb") as f: f.write(v)
print(len(broken), "broken files")
