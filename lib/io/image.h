/* Images: PNG in (8/16-bit gray, gray+alpha, RGB, RGBA; through stb_image)
 * and out (8/16-bit; png_write.c: igzip, libdeflate), 16-bit binary PGM (P5, maxval 65535) and
 * PFM (float) out, for depth maps. Writers are atomic; "-" = stdout. */
#ifndef GT_IMAGE_H
#define GT_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gt_image {
    int w, h, channels; /* 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA */
    int bits;           /* 8 or 16 */
    void *data;         /* w*h*channels samples of uint8_t or uint16_t, row-major */
} gt_image;

/* Read a PNG (or a JPEG; other formats are refused). desired_channels 0 keeps the
 * file's; 1..4 converts. want16: keep 16-bit samples when the file has them. */
gt_status gt_image_read(const char *path, int desired_channels, int want16, gt_image *img);
void gt_image_free(gt_image *img);
/* The size of a PNG or JPEG from its header, without decoding it (other
 * formats are refused). */
gt_status gt_image_size(const char *path, int *w, int *h);

/* 8-bit PNG at the default level (png_write.c). */
gt_status gt_png_write(const char *path, int w, int h, int channels, const uint8_t *data);

/* The PNG encoder (png_write.c): 8 or 16-bit samples (16-bit in host order
 * in img->data), 1..4 channels; rows filtered Sub or Up by `threads` threads
 * in bands of rows (at most 16 and one a row; <= 0: one per core, each of at
 * least 256 KiB). src_channels: samples per pixel in img->data, of which the
 * first img->channels are written (RGBA data to an RGB file); <= 0: as
 * img->channels. level: 1 (GT_PNG_LEVEL_DEFAULT; -1 asks for it) is the
 * fastest, each band deflated on its thread by ISA-L's igzip; 0 stores and
 * 2..9 are libdeflate's levels over the whole image on one thread (smaller
 * files, slower). *png (malloc'ed, the caller frees) holds the whole file. */
#define GT_PNG_LEVEL_DEFAULT 1
gt_status gt_png_encode(const gt_image *img, int src_channels, int level, int threads, uint8_t **png,
                        size_t *len);
/* gt_png_encode to an atomic file ("-" = stdout). */
gt_status gt_png_write_image(const char *path, const gt_image *img, int src_channels, int level);
/* JPEG (baseline, 4:2:0 chroma as stb_image_write makes it) at quality 1..100;
 * channels 1..4 (alpha is dropped). */
gt_status gt_jpeg_write(const char *path, int w, int h, int channels, const uint8_t *data, int quality);
gt_status gt_pgm16_write(const char *path, int w, int h, const uint16_t *data);
/* PFM: 1 channel ("Pf") or 3 ("PF"), rows stored bottom-to-top as the format
 * requires (data given top-to-bottom), little endian (scale -1). */
gt_status gt_pfm_write(const char *path, int w, int h, int channels, const float *data);
gt_status gt_pfm_read(const char *path, int *w, int *h, int *channels, float **data);

#ifdef __cplusplus
}
#endif
#endif
