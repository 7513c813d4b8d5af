#!/usr/bin/env python3
"""Writes the 16-bit PNG test inputs (pure Python, zlib): gray16.png (9x5,
1 channel) and rgba16.png (7x3, 4 channels) with sample (x, y, c) =
(x*4099 + y*771 + c*12345) & 0xffff, which tests/io/test_image.c recomputes."""
import struct, zlib, sys, os

def png(path, w, h, colortype, ch):
    raw = b""
    for y in range(h):
        raw += b"\0"
        for x in range(w):
            for c in range(ch):
                raw += struct.pack(">H", (x * 4099 + y * 771 + c * 12345) & 0xFFFF)
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, colortype, 0, 0, 0)) \
        + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    open(path, "wb").write(data)

d = os.path.dirname(os.path.abspath(__file__))
png(os.path.join(d, "gray16.png"), 9, 5, 0, 1)
png(os.path.join(d, "rgba16.png"), 7, 3, 6, 4)
