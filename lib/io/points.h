/* Point text: whitespace- or comma-separated x y z per line (x y per line is
 * accepted with z = 0), '#' starts a comment, blank lines ignored. */
#ifndef GT_POINTS_H
#define GT_POINTS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"

struct gt_ply_mesh;

#ifdef __cplusplus
extern "C" {
#endif

/* *xyz gets n*3 doubles. GT_ERR_DATA with file:line on a bad line. */
gt_status gt_points_read(const char *path, double **xyz, size_t *n);
/* Read points from PLY (x,y,z vertex properties) or text, chosen by content
 * (a file starting with "ply\n" is PLY); float64 PLY coordinates far from 0
 * to float precision about the first point (gt_points_read_table's nrel). */
gt_status gt_points_read_any(const char *path, double **xyz, size_t *n);
/* Read a PLY (gt_ply_read) or, when the file does not start as one, point
 * text (separators and comments as above) with the same number k of values
 * on every line, k = kmin or kmax, as a vertex-only gt_ply_mesh whose
 * float32 properties are names[0..k-1] (PoissonRecon's .npts/.xyz-style
 * "x y z nx ny nz [red green blue]" for poissonrec). "-": stdin.
 * The properties names[0..nrel-1] (nrel <= 3: x y z) keep their detail far
 * from 0 (UTM coordinates): where the file holds them in more precision than
 * float32 (text, float64, 32-bit integers) and the first point's value is
 * 1024 or more from 0, the column is stored relative to that value rounded
 * to an integer, in m->origin (NULL when every origin is 0). */
gt_status gt_points_read_table(const char *path, const char *const *names, int kmin, int kmax, int nrel,
                               struct gt_ply_mesh *m);
/* Whether the file at path starts as a PLY does ("ply" and a line end), the
 * test gt_points_read_any applies; false for "-" and unreadable paths. */
bool gt_points_is_ply_file(const char *path);

/* Points where NaN and infinity mean nothing (landmarks, oriented samples):
 * GT_ERR_DATA naming the file, the vertex (counting from 0, as PLY faces do)
 * and the property when one of n rows of k floats (named by names[0..k-1])
 * is not finite. */
gt_status gt_points_check_finite(const float *v, size_t n, int k, const char *const *names,
                                 const char *path);

/* Write n points, one per line, each number the shortest text that reads
 * back as the same double (io/numtext.h). Atomic. */
gt_status gt_points_write(const char *path, const double *xyz, size_t n);

#ifdef __cplusplus
}
#endif
#endif
