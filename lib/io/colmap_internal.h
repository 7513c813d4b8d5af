/* What the COLMAP readers share (colmap*.c): the checks of one record, each
 * returning false with the reason in why (the reader adds the place). */
#ifndef GT_IO_COLMAP_INTERNAL_H
#define GT_IO_COLMAP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "io/colmap.h"

#define COLMAP_WHY 256

/* Size, parameters (finite; count = the model's) of a parsed camera. */
bool colmap_camera_ok(const gt_colmap_camera *c, char *why);
/* Finite pose, a quaternion that is not zero, a name. */
bool colmap_image_ok(const gt_colmap_image *im, char *why);
/* Finite position and error of point i. */
bool colmap_point_ok(const gt_colmap_points *p, size_t i, char *why);
/* Room for n points in p's arrays, of which *cap are allocated (doubling,
 * from 1024; the p->n points there are kept). */
gt_status colmap_points_reserve(gt_colmap_points *p, size_t *cap, size_t n, bool keep_tracks);
/* Grow an array of elements of `size` bytes to hold at least n (doubling). */
bool colmap_grow(void **a, size_t *cap, size_t n, size_t size);

#endif
