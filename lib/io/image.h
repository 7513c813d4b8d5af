/* Images: PNG in (8/16-bit gray, gray+alpha, RGB, RGBA; through stb_image)
 * and out (8-bit; stb_image_write), 16-bit binary PGM (P5, maxval 65535) and
 * PFM (float) out, for depth maps. Writers are atomic; "-" = stdout. */
#ifndef GT_IMAGE_H
#define GT_IMAGE_H

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

gt_status gt_png_write(const char *path, int w, int h, int channels, const uint8_t *data);
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
