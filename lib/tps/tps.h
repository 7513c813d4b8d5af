/* Smoothed thin-plate splines (Wahba 1990) in 3-D: fit, GCV, evaluation,
 * parameter files and volume warps.
 *
 *   f(p) = a0 + A^T p + sum_k w_k U(|p - c_k|)            (p, f(p) in R^3)
 *
 * U(r) = r^2 log r (U(0) = 0, GT_TPS_R2LOGR, scipy's thin_plate_spline) or
 * U(r) = -r (GT_TPS_R, the 3-D biharmonic kernel). With K_ij = U(|c_i-c_j|),
 * X = [1 c] (n x 4) = [Q1 Q2] [R1; 0] (four Householder reflectors, never an
 * n x n Q), the fit for targets Y (n x 3) and smoothing lambda >= 0 is
 *
 *   w = Q2 (Q2^T K Q2 + lambda I)^-1 Q2^T Y,   a = R1^-1 Q1^T (Y - K w)
 *
 * i.e. the minimiser of |Y - f(c)|^2 + lambda * w^T K w (bending energy),
 * subject to X^T w = 0. lambda = 0 interpolates exactly.
 *
 * Planar inputs: when every source point has the same z (2-D data with z = 0
 * is the usual case) the z column of X is dropped (X = [1 x y], three
 * reflectors) and the affine part gets no z term (A's z row is 0). Any other
 * coplanar or collinear source set leaves the affine part undetermined and is
 * an error (GT_ERR_DATA).
 *
 * Precision: double throughout, on the CPU and the GPU (fit and evaluation). */
#ifndef GT_TPS_H
#define GT_TPS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/device.h"
#include "common/status.h"
#include "common/timer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gt_tps_kernel { GT_TPS_R2LOGR = 0, GT_TPS_R = 1 } gt_tps_kernel;

const char *gt_tps_kernel_name(gt_tps_kernel k); /* "r2logr", "r" */
/* U(r) from r^2 (the form every path evaluates): 0.5 r2 log r2, or -sqrt(r2) */
double gt_tps_u(gt_tps_kernel k, double r2);

typedef struct gt_tps {
    gt_tps_kernel kernel;
    double lambda;
    size_t n;
    bool planar;     /* fitted with X = [1 x y] (all source z equal) */
    double a[4][3];  /* a[0] = constant a0; a[1+d][j] = coefficient of p_d in f_j */
    double *c;       /* n*3 control points (source), row-major xyz */
    double *w;       /* n*3 weights, row-major */
} gt_tps;

void gt_tps_init(gt_tps *t);
void gt_tps_free(gt_tps *t);

/* GCV curve: filled when requested (lambda_gcv). */
typedef struct gt_tps_gcv {
    int npts;
    double *lambda; /* npts values, increasing (the log grid, then the refinement) */
    double *score;  /* GCV(lambda) */
    double best_lambda, best_score;
} gt_tps_gcv;
void gt_tps_gcv_free(gt_tps_gcv *g);

typedef struct gt_tps_fit_opts {
    gt_tps_kernel kernel;
    double lambda;        /* >= 0, used when gcv is false */
    bool gcv;             /* choose lambda by GCV */
    gt_device_kind device;/* GT_DEVICE_CUDA or GT_DEVICE_CPU (resolved) */
    gt_timings *timings;  /* may be NULL */
    gt_tps_gcv *gcv_out;  /* may be NULL: receives the curve when gcv */
} gt_tps_fit_opts;

/* Check inputs: n >= 5, finite, no coincident control points, affine part
 * determined (see "Planar inputs"). GT_ERR_DATA with a clear message. */
gt_status gt_tps_check_points(const double *src, size_t n, bool *planar);

/* Fit f with f(src_k) ~ dst_k (src, dst: n*3 row-major): gt_tps_fit_plan,
 * then gt_tps_fit_planned. */
gt_status gt_tps_fit(const double *src, const double *dst, size_t n, const gt_tps_fit_opts *o,
                     gt_tps *out);

/* A fit's host part, which needs no device: the checks of the points and
 * of lambda, the QR of the design matrix (X becomes its reflectors) and
 * Q^T Y (o->device is not read). stpsfit plans while the CUDA context
 * starts. */
typedef struct gt_tps_plan {
    size_t n;
    int m;          /* 4, or 3 for planar control points */
    bool planar;
    double mu[3];   /* the control points' centroid */
    double R[16];   /* R1 of the QR, m x m */
    double tau[4];
    double *X;      /* n x m reflectors (column-major) */
    double *Y;      /* Q^T Y, n x 3 (column-major) */
} gt_tps_plan;
gt_status gt_tps_fit_plan(const double *src, const double *dst, size_t n, const gt_tps_fit_opts *o,
                          gt_tps_plan *p);
/* The rest on o->device (src: the plan's control points); out as gt_tps_fit's */
gt_status gt_tps_fit_planned(const double *src, const gt_tps_plan *p, const gt_tps_fit_opts *o, gt_tps *out);
void gt_tps_plan_free(gt_tps_plan *p);

/* GCV(lambda) from eigenvalues d (m, of Q2^T K Q2) and z = U^T Q2^T Y (m x 3,
 * row-major), n the number of points: (1/3n)|(I-A)Y|^2 / ((1/n) tr(I-A))^2,
 * with I - A(lambda) = lambda Q2 (Q2^T K Q2 + lambda I)^-1 Q2^T. */
double gt_tps_gcv_score(const double *d, const double *z, size_t m, size_t n, double lambda);
/* Minimise GCV over a log grid refined by golden section. */
gt_status gt_tps_gcv_choose(const double *d, const double *z, size_t m, size_t n,
                            gt_tps_gcv *curve /* may be NULL */, double *lambda);

/* Evaluate f at npts points (xyz row-major in, out; in == out allowed) on the
 * CPU (double, OpenMP). */
void gt_tps_eval_cpu(const gt_tps *t, const double *p, size_t npts, double *out);
/* Evaluate on the chosen device. */
gt_status gt_tps_eval(const gt_tps *t, const double *p, size_t npts, double *out,
                      gt_device_kind device, gt_timings *tm);

/* Parameter file: documented text, shortest round-trip numbers (exact). "-" = stdout/stdin. */
gt_status gt_tps_write(const char *path, const gt_tps *t);
gt_status gt_tps_read(const char *path, gt_tps *t);

/* ---- the stpsfit jobs (tps_job.c): what the program does, as one call ----
 * Fill a gt_tps_job (defaults from gt_tps_job_init: kernel r2logr, lambda 0,
 * device auto) and call one of the three jobs. Each chooses the device, reads
 * its inputs, writes its output atomically (no partial file on failure) and,
 * with `timings`, prints the stage table on stderr, as stpsfit does.
 *
 *     gt_tps_job j;
 *     gt_tps_job_init(&j);
 *     j.source = "src.txt";            // PLY (vertex x,y,z) or text "x y z" lines
 *     j.target = "dst.txt";            // as many points as source
 *     j.gcv = true;                    // or j.lambda = 0.1; 0 interpolates
 *     j.output = "warp.tps";
 *     if (gt_tps_fit_job(&j) != GT_OK) fprintf(stderr, "%s\n", gt_errmsg());
 *
 *     gt_tps_job_init(&j);
 *     j.params = "warp.tps";
 *     j.input = "bunny.ply";           // a PLY mesh keeps its other properties and faces
 *     j.output = "warped.ply";
 *     gt_status st = gt_tps_apply_job(&j);
 *
 * gt_tps_apply_volume_job resamples the NRRD volume `input` through the
 * spline of `params`, which must map output positions to input positions
 * (the inverse warp), into the NRRD `output`. */
typedef struct gt_tps_job {
    const char *source, *target; /* fit: the point pairs (PLY or point text) */
    const char *params;          /* apply: a parameter file written by a fit */
    const char *input;           /* apply: points (text or PLY); apply_volume: NRRD */
    const char *output;          /* parameter file, points, mesh or volume; "-" = stdout */
    gt_tps_kernel kernel;        /* fit */
    double lambda;               /* fit: smoothing >= 0, when gcv is false */
    bool gcv;                    /* fit: choose lambda by GCV (-v level 1 prints the curve) */
    bool ascii;                  /* apply: PLY written ascii (default: the input's format) */
    gt_device_kind device;       /* auto, cuda or cpu */
    int gpu;                     /* CUDA device index */
    bool timings;                /* stage table on stderr */
} gt_tps_job;
void gt_tps_job_init(gt_tps_job *j);
gt_status gt_tps_fit_job(const gt_tps_job *j);
/* Whether gt_tps_fit_job under GT_DEVICE_AUTO fits n point pairs on the CPU
 * (with `threads` OpenMP threads) rather than starting CUDA: a plain fit (no
 * GCV) the CPU ends in about 200 ms, before the GPU machine's CUDA start
 * alone would be over. */
bool gt_tps_fit_prefers_cpu(size_t n, int threads);
gt_status gt_tps_apply_job(const gt_tps_job *j);
gt_status gt_tps_apply_volume_job(const gt_tps_job *j);

/* The three jobs, for a caller that picks one at run time (stpsfit). */
typedef enum { GT_TPS_FIT, GT_TPS_APPLY, GT_TPS_APPLY_VOLUME } gt_tps_mode;
/* The format the job of `mode` writes (common/guard.h's names): "tps" (a
 * fit's parameter file), "ply" or "points" (apply: as its input is),
 * "nrrd" (apply to a volume). */
const char *gt_tps_job_output_format(const gt_tps_job *j, gt_tps_mode mode);
/* Before any work, as stpsfit does: every input of the job (and a NRRD's
 * detached data file) can be opened and is not the output, the output's
 * folder exists and, unless format_given, its name fits the format. */
gt_status gt_tps_job_check_paths(const gt_tps_job *j, gt_tps_mode mode, bool format_given);

/* CPU building blocks (exposed for tests). */
/* Symmetric eigenvalues d (m) of the m x m matrix S (column-major, ld, lower
 * triangle used; destroyed) and z = U^T b for nb right-hand sides b (m x nb,
 * column-major, overwritten by z): Householder tridiagonalisation and
 * implicit QL with the rotations applied to b only. */
gt_status gt_tps_syev_apply(double *S, size_t ld, size_t m, double *d, double *b, int nb);

#ifdef __cplusplus
}
#endif
#endif
