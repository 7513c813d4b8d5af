#!/usr/bin/env python3
"""The fast PNG encoder's files read by other decoders (suite interop).

python's zlib inflates each file's IDAT stream (checking its Adler-32, which
stb does not, across the bands that threads deflate apart) and the rows are
unfiltered here per the PNG spec; ffmpeg, when installed, decodes the same
files. Both must give back the samples written, for 8/16 bits, 1..4
channels, one band and several, odd sizes. Exit 77 without a python zlib."""
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

try:
    import zlib
except ImportError:
    print("SKIP: python has no zlib")
    sys.exit(77)

TOOL = sys.argv[1]
FFMPEG = shutil.which("ffmpeg")
FMT8 = {1: "gray", 2: "ya8", 3: "rgb24", 4: "rgba"}
FMT16 = {1: "gray16be", 2: "ya16be", 3: "rgb48be", 4: "rgba64be"}


def decode(data):
    """samples (big endian for 16 bits) of a non-interlaced PNG"""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "signature"
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        crc = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]
        assert zlib.crc32(typ + body) & 0xffffffff == crc, "CRC of %s" % typ
        if typ == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif typ == b"IDAT":
            idat += body
        pos += 12 + n
        if typ == b"IEND":
            break
    w, h, bits, ctype, _, _, interlace = hdr
    assert interlace == 0
    ch = {0: 1, 4: 2, 2: 3, 6: 4}[ctype]
    d = zlib.decompressobj()
    raw = d.decompress(idat) + d.flush()
    assert d.eof and not d.unused_data, "zlib stream complete, nothing after it"
    bpp = ch * bits // 8
    rb = w * bpp
    assert len(raw) == h * (rb + 1)
    out, prev = bytearray(), bytearray(rb)
    for y in range(h):
        ft, row = raw[y * (rb + 1)], bytearray(raw[y * (rb + 1) + 1:(y + 1) * (rb + 1)])
        for i in range(rb):
            a = row[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                row[i] = (row[i] + a) & 255
            elif ft == 2:
                row[i] = (row[i] + b) & 255
            elif ft == 3:
                row[i] = (row[i] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            else:
                assert ft == 0, "filter type %d" % ft
        out += row
        prev = row
    return (w, h, ch, bits), bytes(out)


def main():
    rnd = random.Random(19)
    tmp = tempfile.mkdtemp(prefix="gt_interop_png.")
    fails = 0
    try:
        for (w, h), bits, ch, threads, level in [
                ((97, 61), 8, 3, 4, 1), ((97, 61), 8, 4, 1, 1), ((31, 17), 8, 1, 3, 9),
                ((31, 17), 8, 2, 16, 0), ((64, 48), 16, 1, 5, 1), ((33, 9), 16, 3, 2, 6),
                ((21, 30), 16, 4, 7, 1), ((17, 19), 16, 2, 2, 1), ((1, 1), 8, 3, 1, 1), ((300, 5), 8, 3, 5, 2)]:
            n = w * h * ch
            if bits == 8:
                big = bytes((rnd.getrandbits(8) if (i // (w * ch)) % 3 == 0 else (i // ch) % w * 5 % 256)
                            for i in range(n))
                host = big
            else:
                vals = [rnd.getrandbits(16) if (i // (w * ch)) % 3 == 0 else (i // ch) % w * 900 % 65536
                        for i in range(n)]
                big = struct.pack(">%dH" % n, *vals)
                host = struct.pack("=%dH" % n, *vals)
            rawp, pngp = os.path.join(tmp, "px.raw"), os.path.join(tmp, "out.png")
            with open(rawp, "wb") as f:
                f.write(host)
            subprocess.run([TOOL, "pngx", str(w), str(h), str(ch), str(bits), str(threads), str(level), rawp,
                            pngp], check=True)
            what = "%dx%d %d-bit %d channels, %d bands, level %d" % (w, h, bits, ch, threads, level)
            try:
                with open(pngp, "rb") as f:
                    info, got = decode(f.read())
                ok = info == (w, h, ch, bits) and got == big
            except AssertionError as e:
                ok, got = False, None
                print("  python:", e)
            print("%s: python zlib decodes %s" % ("ok" if ok else "FAIL", what))
            fails += not ok
            if FFMPEG:
                fmt = (FMT8 if bits == 8 else FMT16)[ch]
                r = subprocess.run([FFMPEG, "-nostdin", "-hide_banner", "-loglevel", "error", "-i", pngp, "-f",
                                    "rawvideo", "-pix_fmt", fmt, "-"], stdout=subprocess.PIPE)
                ok = r.returncode == 0 and r.stdout == big
                print("%s: ffmpeg decodes %s" % ("ok" if ok else "FAIL", what))
                fails += not ok
    finally:
        shutil.rmtree(tmp)
    return 1 if fails else 0


sys.exit(main())
