/* A fast raw-deflate (RFC 1951) encoder for PNG's filtered rows: literals
 * and runs of one repeated byte (matches at distance 1, what zlib's Z_RLE
 * strategy finds), coded with one dynamic Huffman table per block of input
 * (a stored block where that is smaller). No hash chains, no lazy
 * matching: a byte compare and a table lookup per input byte, several
 * times zlib's speed at its level 1 on rendered images, with files of the
 * same size as Z_RLE's.
 *
 *     size_t cap = gt_deflate_rle_bound(n);
 *     size_t len = gt_deflate_rle(src, n, last, dst, cap);   // 0: cap too small
 *
 * The output is a piece of a raw deflate stream: with last, its final block
 * ends the stream; without, it ends with an empty stored block (zlib's
 * Z_SYNC_FLUSH), byte-aligned, so that pieces encoded separately (each with
 * an empty window: no match reaches into the piece before) concatenate into
 * one stream. */
#ifndef GT_IO_DEFLATE_RLE_H
#define GT_IO_DEFLATE_RLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most bytes gt_deflate_rle writes for n input bytes. */
size_t gt_deflate_rle_bound(size_t n);
/* Encode src[0..n) into dst (cap bytes); returns the bytes written, 0 when
 * they would not fit in cap (never with cap >= gt_deflate_rle_bound(n)) or
 * when out of memory. */
size_t gt_deflate_rle(const uint8_t *src, size_t n, bool last, uint8_t *dst, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
