/* Raw YUV and Y4M (YUV4MPEG2) video, a frame at a time, on files and pipes.
 *
 * Pixel formats use ffmpeg's names. Frames in memory are laid out exactly as
 * in a raw file of that format (planes back to back for planar formats).
 * A stream that ends cleanly between frames is the end of the stream; one that
 * ends inside a frame is GT_ERR_DATA naming the frame number. */
#ifndef GT_YUV_H
#define GT_YUV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gt_pixfmt {
    GT_PIX_YUYV422 = 0, /* packed Y0 U Y1 V */
    GT_PIX_UYVY422,     /* packed U Y0 V Y1 */
    GT_PIX_YUV420P,     /* planar Y, U (w/2 x h/2), V */
    GT_PIX_NV12,        /* planar Y, interleaved UV (w/2 pairs x h/2) */
    GT_PIX_YUV422P,     /* planar Y, U (w/2 x h), V */
    GT_PIX_YUV444P,     /* planar Y, U, V full size */
    GT_PIX_COUNT
} gt_pixfmt;

const char *gt_pixfmt_name(gt_pixfmt f);
gt_status gt_pixfmt_parse(const char *opt, const char *s, gt_pixfmt *f); /* usage error if unknown */
/* Bytes of one frame; 0 when w/h are invalid for the format (odd width for
 * 4:2:2/4:2:0, odd height for 4:2:0) or the size overflows. */
size_t gt_pixfmt_frame_bytes(gt_pixfmt f, int w, int h);
/* Check w/h for the format: GT_ERR_USAGE naming the constraint. */
gt_status gt_pixfmt_check_size(gt_pixfmt f, int w, int h);

typedef struct gt_yuv_reader gt_yuv_reader;

/* Open a stream. If the data starts with "YUV4MPEG2 " it is read as Y4M and
 * w/h/fmt come from its header (the arguments are ignored, pass 0/0/-1);
 * otherwise it is raw and w, h, fmt must be given (GT_ERR_USAGE if not). */
gt_status gt_yuv_open(const char *path, int w, int h, int fmt, gt_yuv_reader **r);
int gt_yuv_width(const gt_yuv_reader *r);
int gt_yuv_height(const gt_yuv_reader *r);
gt_pixfmt gt_yuv_pixfmt(const gt_yuv_reader *r);
bool gt_yuv_is_y4m(const gt_yuv_reader *r);
void gt_yuv_rate(const gt_yuv_reader *r, int *num, int *den); /* Y4M F tag; 25/1 for raw */
size_t gt_yuv_frame_bytes(const gt_yuv_reader *r);
/* Read the next frame into buf (gt_yuv_frame_bytes bytes). *got = false at a
 * clean end of stream. */
gt_status gt_yuv_read_frame(gt_yuv_reader *r, void *buf, bool *got);
long gt_yuv_frames_read(const gt_yuv_reader *r);
/* Pass over the next n frames (yuvstitch --start): seeks in a regular file
 * (Y4M: over each frame's data, after reading its FRAME line), reads and
 * drops on a pipe. *skipped < n when the stream ends first (a clean end; a
 * raw file's partial last frame is left for the next read to report). A
 * frame cut short or a broken FRAME line is GT_ERR_DATA, as when reading.
 * Skipped frames count in gt_yuv_frames_read and in messages. */
gt_status gt_yuv_skip_frames(gt_yuv_reader *r, long n, long *skipped);
void gt_yuv_close(gt_yuv_reader *r);

typedef struct gt_yuv_writer gt_yuv_writer;
/* Open an output stream (atomic file or "-"). y4m selects the container;
 * fps as a rational (num/den). yuv422p/yuyv422/uyvy422 are written to Y4M as
 * C422 (packed formats are converted to planar in Y4M). */
gt_status gt_yuv_create(const char *path, bool y4m, int w, int h, gt_pixfmt fmt, int fps_num,
                        int fps_den, gt_yuv_writer **wr);
gt_status gt_yuv_write_frame(gt_yuv_writer *wr, const void *frame);
/* Finish: commit the file (or abort and remove it when ok is false). */
gt_status gt_yuv_finish(gt_yuv_writer *wr, bool ok);

/* Pixel-format conversion of one frame (any to any of the formats above,
 * chroma resampled by averaging down / replicating up). */
gt_status gt_yuv_convert(const void *src, gt_pixfmt sf, void *dst, gt_pixfmt df, int w, int h);

/* YUV -> RGB for previews. */
typedef enum { GT_BT601 = 0, GT_BT709 = 1 } gt_yuv_matrix;
typedef enum { GT_RANGE_LIMITED = 0, GT_RANGE_FULL = 1 } gt_yuv_range;
/* frame in format f -> packed RGB (w*h*3) */
gt_status gt_yuv_to_rgb(const void *frame, gt_pixfmt f, int w, int h, gt_yuv_matrix m,
                        gt_yuv_range r, uint8_t *rgb);
/* packed RGB -> frame in format f (chroma averaged over each subsampled block) */
gt_status gt_rgb_to_yuv(const uint8_t *rgb, int w, int h, gt_yuv_matrix m, gt_yuv_range r,
                        void *frame, gt_pixfmt f);

/* What both directions of the colour conversion compute with, for w x h
 * frames in format f under matrix m and range r (gt_rgb_to_yuv and
 * gt_yuv_to_rgb use it; so does a GPU conversion that must give the same
 * bytes): the luma weights kr, kg, kb; the luma offset yo and scale ys and
 * the chroma scale cs; the chroma subsampling sx x sy; component c (0 Y,
 * 1 Cb, 2 Cr) sample (x, y), in the component's own resolution, at
 * off[c] + y*stride[c] + x*step[c]; the frame's size in bytes. */
typedef struct gt_yuv_colour {
    double kr, kg, kb;
    double yo, ys, cs;
    size_t off[3], stride[3], step[3];
    size_t bytes;
    int sx, sy;
} gt_yuv_colour;
gt_status gt_yuv_colour_of(gt_pixfmt f, int w, int h, gt_yuv_matrix m, gt_yuv_range r, gt_yuv_colour *c);

#ifdef __cplusplus
}
#endif
#endif
