/* Helpers shared by the files of lib/stitch (not part of libcore's API):
 * the distance transform with the caller's workspace, the Burt-Adelson
 * reduce restricted to a box of its output. */
#ifndef GT_STITCH_PRIV_H
#define GT_STITCH_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "stitch/stitch.h"

/* gt_stitch_edt with the caller's workspace sq (w*h doubles): the plan
 * reuses one for every camera instead of faulting in a fresh one each time */
gt_status gt_stitch_edt_ws(const uint8_t *inside, int w, int h, float far, float *dist, double *sq);

/* gt_stitch_reduce of src (w x h) for the outputs in box {x0, y0, x1, y1}
 * only (inclusive, inside ((w+1)/2) x ((h+1)/2)); dst is the whole output
 * level, left untouched outside the box. Each output is computed exactly as
 * gt_stitch_reduce computes it. */
void gt_stitch_reduce_box(const float *src, int w, int h, float *dst, const int box[4]);

/* gt_stitch_rig_finish with the rig file's name for messages at its lines
 * (NULL: messages without a place) */
gt_status gt_stitch_rig_finish_named(gt_stitch_rig *rig, const char *name);

#endif
