/* CUDA entry points of lib/tps (extern "C"). Double precision throughout.
 * Matrices are column-major. The plain fit runs on libcore's own kernels;
 * GCV's eigen-decomposition opens cuSOLVER and cuBLAS on first use and keeps
 * one handle of each for the life of the process. */
#ifndef GT_KERNELS_TPS_CUDA_H
#define GT_KERNELS_TPS_CUDA_H

#include <stddef.h>

#include "common/status.h"
#include "common/timer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Make sure the CUDA context exists; the time it took lands in stage
 * "context". */
gt_status gt_tps_cuda_init(gt_timings *tm);

/* For a job's preparing thread (gt_device_prepare_start), with the context
 * current: one small fit (GT_TPS_WARM_N synthetic points; with gcv
 * cuSOLVER's handles and the eigen-decomposition too) through the same
 * routines, so that their first-call costs are paid there. Reports nothing. */
#define GT_TPS_WARM_N 512
/* Open cuBLAS and cuSOLVER (no context needed; errors come again when GCV
 * creates its handles): for a thread beside the context creation, GCV fits
 * only. */
void gt_tps_cuda_load_libs(void);
void gt_tps_cuda_warm(int kernel, int gcv);

/* The lower triangle (diagonal included) of Q^T K Q into K (n x n on the
 * device, column-major; the strict upper triangle is not written), for
 * K[i][j] = U(|c_i - c_j|) (c: n*3 row-major on the device; K's entries
 * are computed where they are used, K is never read) and the reflectors V
 * (n x m, m <= 4, explicit as tps_house_qr leaves them) with scales tau, V
 * on the host and its copy dV on the device: two passes and an O(n m^2)
 * step on the host (tps_qtkq.cu). scratch: 2 n m doubles on the device. */
gt_status gt_tps_cuda_qtkq(int kernel, size_t n, const double *c, int m, const double *V, const double *tau,
                           const double *dV, double *K, double *scratch);

typedef struct gt_tps_cuda_fit gt_tps_cuda_fit;

/* Upload control points c (n*3 row-major), the QR's reflectors V (n x m,
 * column-major, m = 3 or 4, explicit: tps_house_qr of X = [1 c] on the
 * host) with scales tau, and Q^T Y (n x 3 column-major); form Q^T K Q's
 * lower triangle (gt_tps_cuda_qtkq). */
gt_status gt_tps_cuda_prepare(int kernel, size_t n, int m, const double *c, const double *V,
                              const double *tau, const double *QtY, gt_timings *tm, gt_tps_cuda_fit **out);
/* Eigenvalues d (n-m) of Q2^T K Q2 and z = U^T Q2^T Y ((n-m) x 3 column-major)
 * through syevd on a copy. */
gt_status gt_tps_cuda_spectrum(gt_tps_cuda_fit *f, double *d, double *z, gt_timings *tm);
/* Cholesky of Q2^T K Q2 + lambda I (gt_tps_cuda_cholesky; *not_pd = 1 and
 * GT_OK when it is not positive definite), solve: w = [0; z] (n x 3 column-major: the caller
 * applies Q, w = Q [0; z], on the host) and
 * top = (Q^T Y)[0:m] - (Q^T K Q)[0:m, m:] z (m x 3 column-major). Once per fit. */
gt_status gt_tps_cuda_solve(gt_tps_cuda_fit *f, double lambda, double *w, double *top,
                            int *not_pd, gt_timings *tm);
void gt_tps_cuda_fit_free(gt_tps_cuda_fit *f);

/* tps_chol.cu. In-place Cholesky A = L L^T of the N x N symmetric positive
 * definite block A (device, leading dimension ld): the lower triangle is
 * read and overwritten by L, the strict upper triangle is left as it was.
 * info: two device ints; info[0] gets 0, or j + 1 when the leading minor of
 * order j + 1 is not positive definite (as LAPACK's potrf; L is then not
 * usable); info[1] is the kernels' own. Stream 0, asynchronous: read info[0]
 * after a synchronizing call. */
gt_status gt_tps_cuda_cholesky(double *A, size_t ld, size_t N, int *info);
/* tps_chol_solve.cu. B <- A^-1 B for nrhs (1 to 4) columns of B (device, leading dimension ldb)
 * with L from gt_tps_cuda_cholesky; work: gt_tps_cuda_chol_solve_work(N,
 * nrhs) device doubles (the intermediate solution and the inverses of L's
 * 64 x 64 diagonal blocks). Stream 0, asynchronous. */
size_t gt_tps_cuda_chol_solve_work(size_t N, int nrhs);
gt_status gt_tps_cuda_chol_solve(const double *L, size_t ld, size_t N, double *B, size_t ldb, int nrhs,
                                 double *work);

/* f at npts points p (row-major xyz) -> out (row-major, may equal p).
 * c, w: n*3 row-major; a: 4x3 row-major (constant, then x, y, z rows). */
gt_status gt_tps_cuda_eval(int kernel, size_t n, const double *c, const double *w,
                           const double *a, const double *p, size_t npts, double *out,
                           gt_timings *tm);

/* Volume warp: out voxel (i,j,k) at world q = o + M [i j k]^T gets the
 * trilinear sample of `in` (float, x fastest, dims d) at index
 * Minv (f(q) - o); 0 outside. */
gt_status gt_tps_cuda_warp_volume(int kernel, size_t n, const double *c, const double *w,
                                  const double *a, const float *in, const long long dims[3],
                                  const double M[9], const double Minv[9], const double o[3],
                                  float *out, gt_timings *tm);

#ifdef __cplusplus
}
#endif
#endif
