/* gsrender's Y4M output on the GPU (gs_output.cu): the rendered float image
 * to YUV by a kernel on the renderer's stream, then downloaded on a second
 * stream into pinned host buffers (slots), so that the download of frame k
 * overlaps the render of frame k+1 and a writer thread takes frame k from
 * its slot while k+1 renders.
 *
 * The conversion is gt_rgb_to_yuv's (lib/io/yuv_format.c) on the 8-bit
 * values gs_to8 gives (as the rgba8 output does): the same double
 * expressions, rounded step by step (no fused multiply-add), so the frames
 * are byte for byte those of the CPU conversion of the GPU's 8-bit image. */
#ifndef GT_KERNELS_GS_OUTPUT_H
#define GT_KERNELS_GS_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "common/timer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GT_GS_YUV_SLOTS 2

typedef struct gt_gs_cu_yuv gt_gs_cu_yuv;

/* What the conversion writes, as plain numbers (the pixel formats stay in
 * lib/io: gt_gs_yuv_planes_of in lib/gs fills this from gt_yuv_colour_of):
 * w x h pixels; luma weights kr, kg, kb; luma offset yo and scale ys,
 * chroma scale cs; chroma blocks of sx x sy pixels; component c (0 Y, 1 Cb,
 * 2 Cr) sample (x, y) at byte off[c] + y*stride[c] + x*step[c] of a frame
 * of `bytes` bytes. */
typedef struct gt_gs_yuv_planes {
    double kr, kg, kb, yo, ys, cs;
    size_t off[3], stride[3], step[3];
    size_t bytes;
    int w, h, sx, sy;
} gt_gs_yuv_planes;
/* p for w x h frames in pixel format fmt (a gt_pixfmt), matrix (a
 * gt_yuv_matrix), range (a gt_yuv_range); GT_ERR_USAGE for a size the
 * format cannot hold (lib/gs/gs_render.c, the host side). */
gt_status gt_gs_yuv_planes_of(int fmt, int w, int h, int matrix, int range, gt_gs_yuv_planes *p);

/* Buffers for frames of planes p: GT_GS_YUV_SLOTS device frames, as many
 * pinned host frames, the download stream and its events. */
gt_status gt_gs_cu_yuv_create(const gt_gs_yuv_planes *p, gt_gs_cu_yuv **out);
/* Bytes of one frame. */
size_t gt_gs_cu_yuv_frame_bytes(const gt_gs_cu_yuv *y);
/* Queue the conversion of the device image rgb (w*h*3 floats, written by
 * the work queued on `stream` so far) into `slot` on `stream`, and the
 * slot's download after it on the download stream; returns without
 * waiting. The caller must have taken the slot's previous frame
 * (gt_gs_cu_yuv_wait). tm (may be NULL): the conversion's GPU time as
 * "yuv convert" (waits for it). */
gt_status gt_gs_cu_yuv_submit(gt_gs_cu_yuv *y, const float *rgb, void *stream, int slot, gt_timings *tm);
/* Wait for slot's download (from any thread): *frame is the slot's pinned
 * host frame, valid until the slot is submitted again; *download_ms the
 * copy's GPU time. */
gt_status gt_gs_cu_yuv_wait(gt_gs_cu_yuv *y, int slot, const uint8_t **frame, double *download_ms);
void gt_gs_cu_yuv_destroy(gt_gs_cu_yuv *y);

/* For tests: the conversion kernel on host 8-bit RGB (p->w*p->h*3) ->
 * frame, or on host float RGB quantized by gs_to8 first (rgbf; rgb8 NULL). */
gt_status gt_gs_cu_rgb_to_yuv(const uint8_t *rgb8, const float *rgbf, const gt_gs_yuv_planes *p, uint8_t *frame);

#ifdef __cplusplus
}
#endif
#endif
