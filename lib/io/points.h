/* Point text: whitespace- or comma-separated x y z per line (x y per line is
 * accepted with z = 0), '#' starts a comment, blank lines ignored. */
#ifndef GT_POINTS_H
#define GT_POINTS_H

#include <stddef.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* *xyz gets n*3 doubles. GT_ERR_DATA with file:line on a bad line. */
gt_status gt_points_read(const char *path, double **xyz, size_t *n);
/* Read points from PLY (x,y,z vertex properties) or text, chosen by content
 * (a file starting with "ply\n" is PLY). */
gt_status gt_points_read_any(const char *path, double **xyz, size_t *n);
/* Write n points, %.17g, one per line. Atomic. */
gt_status gt_points_write(const char *path, const double *xyz, size_t n);

#ifdef __cplusplus
}
#endif
#endif
