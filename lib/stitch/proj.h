/* Projections and the rotation-model camera on the host, in double
 * precision (proj.c): the geometry that calibration, the plan's footprints,
 * the gain sites and the tests use, and the float tables and per-camera
 * parameters that the per-sample mapping (stitch_proj.h) reads on the CPU
 * and the GPU. Frames: the panorama's x right, y down, z forward; a camera's
 * R turns panorama rays into its own frame. Positions are luma pixels with
 * centres at integers. */
#ifndef GT_STITCH_PROJ_HOST_H
#define GT_STITCH_PROJ_HOST_H

#include "stitch/stitch.h"
#include "stitch/stitch_proj.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Unit ray of panorama luma position (X, Y) of a W x H panorama. */
void gt_proj_ray(const gt_stitch_proj *pj, int W, int H, double X, double Y, double d[3]);
/* Panorama luma position of ray d (any length); 0 when the projection cannot
 * show it (plane: not in front; cylindrical: straight up or down). Longitudes
 * are taken within [left, left + 360). The position may lie outside the
 * panorama. */
int gt_proj_pixel(const gt_stitch_proj *pj, int W, int H, const double d[3], double *X, double *Y);
/* The tables of stitch_proj.h for plane view pv of a W x H panorama:
 * tab[0..pw) = A, [pw..2pw) = D, [2pw..2pw+ph) = B, [2pw+ph..2pw+2ph) = C. */
void gt_proj_tables(const gt_stitch_proj *pj, int W, int H, const gt_plane_view *pv, float *tab);
/* Whether the projection's extent is valid; else a message in why. */
int gt_proj_valid(const gt_stitch_proj *pj, char *why, size_t n);
const char *gt_proj_name(gt_proj_kind k);

/* Camera c's luma position of ray d (panorama frame); 0 when behind the
 * camera or beyond its lens's range (r^2 > gt_cam_r2max). */
int gt_cam_pixel(const gt_stitch_cam *c, const double d[3], double *u, double *v);
/* Unit ray (panorama frame) of camera c's luma position (u, v), the
 * distortion undone by Newton's method. */
void gt_cam_ray(const gt_stitch_cam *c, double u, double v, double d[3]);
/* The largest r^2 (normalised, undistorted) up to which the distortion
 * r (1 + k1 r^2 + k2 r^4) increases (1e30 when it always does). */
double gt_cam_r2max(const gt_stitch_cam *c);
/* Whether the distortion is increasing up to the view's farthest corner. */
int gt_cam_distortion_ok(const gt_stitch_cam *c);
/* Per-plane parameters of stitch_proj.h (GT_SP_N floats) for camera c whose
 * frames' plane is pv. */
void gt_cam_params(const gt_stitch_cam *c, const gt_plane_view *pv, float out[GT_SP_N]);

/* Rotation helpers (row-major 3x3): R = exp([w]x) (Rodrigues), w = log R,
 * the rotation nearest a matrix (polar factor, by Newton iterations;
 * negative for a matrix that is not near one), the angle of R in degrees. */
void gt_rot_exp(const double w[3], double R[9]);
void gt_rot_log(const double R[9], double w[3]);
int gt_rot_nearest(const double M[9], double R[9]);
double gt_rot_angle_deg(const double R[9]);
void gt_mat3_transpose(const double A[9], double T[9]);
void gt_mat3_vec(const double A[9], const double x[3], double y[3]);

#ifdef __cplusplus
}
#endif
#endif
