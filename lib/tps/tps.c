/* Smoothed thin-plate spline fit: input checks, CPU reference (Householder QR
 * with four reflectors applied from both sides, Cholesky, GCV through a
 * tridiagonal QL eigen solver), dispatch to CUDA. See tps.h. */
#include "tps/tps.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "gt_config.h"

#if GT_HAVE_CUDA
#include "kernels/tps/tps_cuda.h"
#endif

const char *gt_tps_kernel_name(gt_tps_kernel k) { return k == GT_TPS_R ? "r" : "r2logr"; }

double gt_tps_u(gt_tps_kernel k, double r2)
{
    if (k == GT_TPS_R) return -sqrt(r2);
    return r2 > 0.0 ? 0.5 * r2 * log(r2) : 0.0;
}

void gt_tps_init(gt_tps *t) { memset(t, 0, sizeof *t); }
void gt_tps_free(gt_tps *t)
{
    free(t->c);
    free(t->w);
    gt_tps_init(t);
}
void gt_tps_gcv_free(gt_tps_gcv *g)
{
    free(g->lambda);
    free(g->score);
    memset(g, 0, sizeof *g);
}

/* ---------------------------------------------------------------- checks */

typedef struct { double x[3]; size_t i; } pt_idx;
static int cmp_pt(const void *a, const void *b)
{
    const pt_idx *p = a, *q = b;
    for (int d = 0; d < 3; d++) {
        if (p->x[d] < q->x[d]) return -1;
        if (p->x[d] > q->x[d]) return 1;
    }
    return p->i < q->i ? -1 : (p->i > q->i);
}

/* Householder QR of X (n x m column-major, overwritten by the reflectors
 * v_j below the diagonal, v_j[j] = 1 implied), tau (m), R (m x m column-major). */
static void house_qr(double *X, size_t n, int m, double *tau, double *R)
{
    memset(R, 0, sizeof(double) * (size_t)m * m);
    for (int j = 0; j < m; j++) {
        double *x = X + (size_t)j * n;
        double alpha = x[j], xn = 0.0;
        for (size_t i = j + 1; i < n; i++) xn = hypot(xn, x[i]);
        double beta;
        if (xn == 0.0) {
            tau[j] = 0.0;
            beta = alpha;
        } else {
            beta = -copysign(hypot(alpha, xn), alpha);
            tau[j] = (beta - alpha) / beta;
            double s = 1.0 / (alpha - beta);
            for (size_t i = j + 1; i < n; i++) x[i] *= s;
        }
        x[j] = 1.0;
        for (int k = j + 1; k < m; k++) { /* apply H_j to column k */
            double *y = X + (size_t)k * n, dot = 0.0;
            for (size_t i = j; i < n; i++) dot += x[i] * y[i];
            dot *= tau[j];
            for (size_t i = j; i < n; i++) y[i] -= dot * x[i];
        }
        for (int i = 0; i < j; i++) R[i + (size_t)j * m] = x[i];
        R[j + (size_t)j * m] = beta;
        for (int i = 0; i < j; i++) x[i] = 0.0; /* v_j as a full n-vector */
    }
}

static void build_X(const double *src, size_t n, bool planar, double mu[3], double *X)
{
    int m = planar ? 3 : 4;
    for (int d = 0; d < 3; d++) {
        double s = 0.0;
        for (size_t i = 0; i < n; i++) s += src[3 * i + d];
        mu[d] = s / (double)n;
    }
    for (size_t i = 0; i < n; i++) {
        X[i] = 1.0;
        for (int d = 0; d < m - 1; d++) X[i + (size_t)(d + 1) * n] = src[3 * i + d] - mu[d];
    }
}

/* eigenvalues of the leading k x k block (k = 2 or 3) of symmetric S
 * (cyclic Jacobi; S is destroyed) */
static void sym3_eig(double S[3][3], int k, double ev[3])
{
    for (int sweep = 0; sweep < 50; sweep++) {
        double off = 0.0, tot = 0.0;
        for (int p = 0; p < k; p++)
            for (int q = 0; q < k; q++) {
                tot += S[p][q] * S[p][q];
                if (p != q) off += S[p][q] * S[p][q];
            }
        if (off <= 1e-32 * tot) break;
        for (int p = 0; p < k - 1; p++)
            for (int q = p + 1; q < k; q++) {
                if (S[p][q] == 0.0) continue;
                double th = (S[q][q] - S[p][p]) / (2.0 * S[p][q]);
                double t = copysign(1.0, th) / (fabs(th) + sqrt(th * th + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), sn = t * c;
                for (int r = 0; r < k; r++) { /* columns p, q */
                    double a = S[r][p], b = S[r][q];
                    S[r][p] = c * a - sn * b;
                    S[r][q] = sn * a + c * b;
                }
                for (int r = 0; r < k; r++) { /* rows p, q */
                    double a = S[p][r], b = S[q][r];
                    S[p][r] = c * a - sn * b;
                    S[q][r] = sn * a + c * b;
                }
            }
    }
    for (int d = 0; d < 3; d++) ev[d] = d < k ? fmax(S[d][d], 0.0) : 0.0;
}

gt_status gt_tps_check_points(const double *src, size_t n, bool *planar)
{
    if (n < 5)
        return gt_fail(GT_ERR_DATA, "a thin-plate spline needs at least 5 control points, got %zu", n);
    for (size_t i = 0; i < 3 * n; i++)
        if (!isfinite(src[i]))
            return gt_fail(GT_ERR_DATA, "control point %zu has a NaN or infinite coordinate",
                           i / 3 + 1);
    pt_idx *p = gt_malloc_array(n, sizeof *p, "point sort");
    if (!p) return GT_ERR_RUNTIME;
    for (size_t i = 0; i < n; i++) {
        memcpy(p[i].x, src + 3 * i, sizeof p[i].x);
        p[i].i = i;
    }
    qsort(p, n, sizeof *p, cmp_pt);
    for (size_t i = 1; i < n; i++)
        if (!memcmp(p[i].x, p[i - 1].x, sizeof p[i].x)) {
            gt_status s = gt_fail(GT_ERR_DATA,
                                  "control points %zu and %zu coincide (%.9g %.9g %.9g): the "
                                  "spline is undetermined; remove duplicates",
                                  p[i - 1].i + 1, p[i].i + 1, p[i].x[0], p[i].x[1], p[i].x[2]);
            free(p);
            return s;
        }
    free(p);
    bool pl = true; /* every z equal: planar (2-D) input */
    for (size_t i = 1; i < n && pl; i++) pl = src[3 * i + 2] == src[2];
    /* spread of the points along the principal axes: sqrt of the
     * eigenvalues of the scatter matrix (z dropped for planar input) */
    double mu[3] = {0, 0, 0}, S[3][3] = {{0}};
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < 3; d++) mu[d] += src[3 * i + d] / (double)n;
    for (size_t i = 0; i < n; i++)
        for (int p = 0; p < 3; p++)
            for (int q = 0; q < 3; q++)
                S[p][q] += (src[3 * i + p] - mu[p]) * (src[3 * i + q] - mu[q]);
    double ev[3];
    sym3_eig(S, pl ? 2 : 3, ev);
    int dim = pl ? 2 : 3, rank = 0;
    double emax = fmax(ev[0], fmax(ev[1], pl ? 0.0 : ev[2]));
    for (int d = 0; d < dim; d++)
        if (ev[d] > 1e-13 * emax) rank++; /* spread above ~3e-7 of the largest (rounding: 1e-16) */
    if (rank < 2)
        return gt_fail(GT_ERR_DATA,
                       "the control points are collinear: the affine part of the spline is "
                       "undetermined (need points spanning a plane for 2-D data with constant "
                       "z, or a volume for 3-D data)");
    if (rank < dim)
        return gt_fail(GT_ERR_DATA,
                       "the control points are coplanar (but not all at one z): the affine part "
                       "of the spline is undetermined; rotate 2-D data into a plane z = "
                       "constant, or add points off the plane");
    if (planar) *planar = pl;
    return GT_OK;
}

/* ------------------------------------------------------------- CPU pieces */

/* K <- H K H for H = I - tau v v^T (K symmetric n x n column-major). */
static void two_sided(double *K, size_t n, const double *v, double tau, double *p)
{
    if (tau == 0.0) return;
#pragma omp parallel for schedule(static) if (n > 512)
    for (size_t i = 0; i < n; i++) { /* p = tau K v (K symmetric: row i = column i) */
        const double *col = K + i * n;
        double s = 0.0;
        for (size_t k = 0; k < n; k++) s += col[k] * v[k];
        p[i] = tau * s;
    }
    double vp = 0.0;
    for (size_t i = 0; i < n; i++) vp += v[i] * p[i];
    double h = 0.5 * tau * vp;
    for (size_t i = 0; i < n; i++) p[i] -= h * v[i];
#pragma omp parallel for schedule(static) if (n > 512)
    for (size_t j = 0; j < n; j++) {
        double *col = K + j * n;
        double vj = v[j], pj = p[j];
        for (size_t i = 0; i < n; i++) col[i] -= v[i] * pj + p[i] * vj;
    }
}

/* y <- H y for the nb columns of Y (n x nb column-major). */
static void apply_h(double *Y, size_t n, int nb, const double *v, double tau)
{
    for (int c = 0; c < nb; c++) {
        double *y = Y + (size_t)c * n, s = 0.0;
        for (size_t i = 0; i < n; i++) s += v[i] * y[i];
        s *= tau;
        for (size_t i = 0; i < n; i++) y[i] -= s * v[i];
    }
}

/* In-place Cholesky of the N x N block A (column-major, ld): L(i,k) for
 * k <= i is stored at A[k + i*ld] (the upper triangle, read as row-major
 * lower), from the symmetric input. Returns false when not positive definite. */
static bool cholesky(double *A, size_t ld, size_t N)
{
    /* blocked right-looking: every inner product runs over contiguous row
     * pieces of length <= NB */
    enum { NB = 64 };
    for (size_t kb = 0; kb < N; kb += NB) {
        size_t ke = kb + NB < N ? kb + NB : N;
        for (size_t j = kb; j < ke; j++) { /* diagonal block */
            double *rj = A + j * ld;
            double s = rj[j];
            for (size_t k = kb; k < j; k++) s -= rj[k] * rj[k];
            if (!(s > 0.0)) return false;
            rj[j] = sqrt(s);
            for (size_t i = j + 1; i < ke; i++) {
                double *ri = A + i * ld, t = ri[j];
                for (size_t k = kb; k < j; k++) t -= ri[k] * rj[k];
                ri[j] = t / rj[j];
            }
        }
        /* panel below the diagonal block, then the trailing update */
#pragma omp parallel for schedule(dynamic, 16) if (N - ke > 512)
        for (size_t i = ke; i < N; i++) {
            double *ri = A + i * ld;
            for (size_t j = kb; j < ke; j++) {
                const double *rj = A + j * ld;
                double t = ri[j];
                for (size_t k = kb; k < j; k++) t -= ri[k] * rj[k];
                ri[j] = t / rj[j];
            }
        }
        /* (a separate loop: row i's update reads the panel of rows j <= i) */
#pragma omp parallel for schedule(dynamic, 16) if (N - ke > 512)
        for (size_t i = ke; i < N; i++) {
            double *ri = A + i * ld;
            for (size_t j = ke; j <= i; j++) {
                const double *rj = A + j * ld;
                double t = 0.0;
                for (size_t k = kb; k < ke; k++) t += ri[k] * rj[k];
                ri[j] -= t;
            }
        }
    }
    return true;
}

static void chol_solve(const double *A, size_t ld, size_t N, double *b)
{
    for (size_t i = 0; i < N; i++) { /* L y = b */
        const double *ri = A + i * ld;
        double t = b[i];
        for (size_t k = 0; k < i; k++) t -= ri[k] * b[k];
        b[i] = t / ri[i];
    }
    for (size_t i = N; i-- > 0;) { /* L^T x = y */
        const double *ri = A + i * ld;
        b[i] /= ri[i];
        double xi = b[i];
        for (size_t k = 0; k < i; k++) b[k] -= ri[k] * xi;
    }
}

gt_status gt_tps_syev_apply(double *S, size_t ld, size_t m, double *d, double *b, int nb)
{
    double *e = gt_calloc(m + 1, sizeof(double), "eigen solver");
    double *v = gt_malloc_array(m + 1, sizeof(double), "eigen solver");
    double *p = gt_malloc_array(m + 1, sizeof(double), "eigen solver");
    if (!e || !v || !p) {
        free(e); free(v); free(p);
        return GT_ERR_RUNTIME;
    }
    /* Householder tridiagonalisation: for column k, reflect rows k+1.. */
    for (size_t k = 0; k + 2 < m; k++) {
        size_t len = m - k - 1;
        double *x = S + (k + 1) + k * ld;
        double alpha = x[0], xn = 0.0;
        for (size_t i = 1; i < len; i++) xn = hypot(xn, x[i]);
        if (xn == 0.0) continue; /* already tridiagonal here, tau = 0 */
        double beta = -copysign(hypot(alpha, xn), alpha);
        double tau = (beta - alpha) / beta, s = 1.0 / (alpha - beta);
        v[0] = 1.0;
        for (size_t i = 1; i < len; i++) v[i] = x[i] * s;
        x[0] = beta;
        for (size_t i = 1; i < len; i++) x[i] = 0.0;
        S[k + (k + 1) * ld] = beta;
        /* trailing block T = S[k+1.., k+1..]: T <- H T H (lower+upper kept) */
        double *T = S + (k + 1) + (k + 1) * ld;
#pragma omp parallel for schedule(static) if (len > 512)
        for (size_t i = 0; i < len; i++) {
            const double *col = T + i * ld;
            double t = 0.0;
            for (size_t q = 0; q < len; q++) t += col[q] * v[q];
            p[i] = tau * t;
        }
        double vp = 0.0;
        for (size_t i = 0; i < len; i++) vp += v[i] * p[i];
        double h = 0.5 * tau * vp;
        for (size_t i = 0; i < len; i++) p[i] -= h * v[i];
#pragma omp parallel for schedule(static) if (len > 512)
        for (size_t j = 0; j < len; j++) {
            double *col = T + j * ld;
            for (size_t i = 0; i < len; i++) col[i] -= v[i] * p[j] + p[i] * v[j];
        }
        for (int c = 0; c < nb; c++) { /* b <- H b */
            double *y = b + (size_t)c * m + k + 1, t = 0.0;
            for (size_t i = 0; i < len; i++) t += v[i] * y[i];
            t *= tau;
            for (size_t i = 0; i < len; i++) y[i] -= t * v[i];
        }
    }
    for (size_t i = 0; i < m; i++) {
        d[i] = S[i + i * ld];
        e[i] = i + 1 < m ? S[(i + 1) + i * ld] : 0.0;
    }
    /* implicit QL with Wilkinson-style shift; rotations applied to b's rows */
    for (long l = 0; l < (long)m; l++) {
        int iter = 0;
        long mm;
        do {
            for (mm = l; mm < (long)m - 1; mm++) {
                double dd = fabs(d[mm]) + fabs(d[mm + 1]);
                if (fabs(e[mm]) <= DBL_EPSILON * dd) break;
            }
            if (mm != l) {
                if (iter++ == 100) {
                    free(e); free(v); free(p);
                    return gt_fail(GT_ERR_RUNTIME, "the GCV eigen solver did not converge");
                }
                double g = (d[l + 1] - d[l]) / (2.0 * e[l]);
                double r = hypot(g, 1.0);
                g = d[mm] - d[l] + e[l] / (g + copysign(r, g));
                double s = 1.0, c = 1.0, pp = 0.0;
                long i;
                for (i = mm - 1; i >= l; i--) {
                    double f = s * e[i], bb = c * e[i];
                    e[i + 1] = (r = hypot(f, g));
                    if (r == 0.0) {
                        d[i + 1] -= pp;
                        e[mm] = 0.0;
                        break;
                    }
                    s = f / r;
                    c = g / r;
                    g = d[i + 1] - pp;
                    r = (d[i] - g) * s + 2.0 * c * bb;
                    d[i + 1] = g + (pp = s * r);
                    g = c * r - bb;
                    for (int q = 0; q < nb; q++) {
                        double *y = b + (size_t)q * m;
                        double t = y[i + 1];
                        y[i + 1] = s * y[i] + c * t;
                        y[i] = c * y[i] - s * t;
                    }
                }
                if (r == 0.0 && i >= l) continue;
                d[l] -= pp;
                e[l] = g;
                e[mm] = 0.0;
            }
        } while (mm != l);
    }
    free(e); free(v); free(p);
    return GT_OK;
}

/* ------------------------------------------------------------------- GCV */

double gt_tps_gcv_score(const double *d, const double *z, size_t m, size_t n, double lambda)
{
    double num = 0.0, tr = 0.0;
    for (size_t i = 0; i < m; i++) {
        double di = d[i] > 0.0 ? d[i] : 0.0;
        double f = lambda / (di + lambda);
        double z2 = z[i] * z[i] + z[i + m] * z[i + m] + z[i + 2 * m] * z[i + 2 * m];
        num += f * f * z2;
        tr += f;
    }
    double nn = (double)n;
    if (tr <= 0.0) return INFINITY;
    return (num / (3.0 * nn)) / ((tr / nn) * (tr / nn));
}

static int cmp_dbl2(const void *a, const void *b)
{
    const double *p = a, *q = b;
    return (p[0] > q[0]) - (p[0] < q[0]);
}

gt_status gt_tps_gcv_choose(const double *d, const double *z, size_t m, size_t n,
                            gt_tps_gcv *curve, double *lambda)
{
    double dmax = 0.0;
    for (size_t i = 0; i < m; i++) dmax = fmax(dmax, d[i]);
    if (!(dmax > 0.0)) return gt_fail(GT_ERR_DATA, "GCV: Q2^T K Q2 has no positive eigenvalue");
    enum { NGRID = 81, NGOLD = 60 };
    /* log grid over [1e-10, 1e4] * largest eigenvalue */
    double lo = log(dmax * 1e-10), hi = log(dmax * 1e4);
    double pts[(NGRID + NGOLD) * 2];
    int np = 0, best = 0;
    for (int k = 0; k < NGRID; k++) {
        double ll = lo + (hi - lo) * k / (NGRID - 1);
        pts[2 * np] = exp(ll);
        pts[2 * np + 1] = gt_tps_gcv_score(d, z, m, n, exp(ll));
        if (pts[2 * np + 1] < pts[2 * best + 1]) best = np;
        np++;
    }
    double step = (hi - lo) / (NGRID - 1);
    double a = log(pts[2 * best]) - step, b = log(pts[2 * best]) + step;
    const double gr = 0.5 * (sqrt(5.0) - 1.0);
    double x1 = b - gr * (b - a), x2 = a + gr * (b - a);
    double f1 = gt_tps_gcv_score(d, z, m, n, exp(x1)), f2 = gt_tps_gcv_score(d, z, m, n, exp(x2));
    for (int it = 0; it < NGOLD && b - a > 1e-9; it++) {
        if (f1 <= f2) {
            b = x2; x2 = x1; f2 = f1;
            x1 = b - gr * (b - a);
            f1 = gt_tps_gcv_score(d, z, m, n, exp(x1));
            pts[2 * np] = exp(x1); pts[2 * np + 1] = f1;
        } else {
            a = x1; x1 = x2; f1 = f2;
            x2 = a + gr * (b - a);
            f2 = gt_tps_gcv_score(d, z, m, n, exp(x2));
            pts[2 * np] = exp(x2); pts[2 * np + 1] = f2;
        }
        np++;
    }
    double xb = 0.5 * (a + b), fb = gt_tps_gcv_score(d, z, m, n, exp(xb));
    if (pts[2 * best + 1] < fb) { /* the grid point itself (edge of the range) */
        xb = log(pts[2 * best]);
        fb = pts[2 * best + 1];
    }
    *lambda = exp(xb);
    if (curve) {
        qsort(pts, (size_t)np, 2 * sizeof(double), cmp_dbl2);
        curve->lambda = gt_malloc_array((size_t)np, sizeof(double), "GCV curve");
        curve->score = gt_malloc_array((size_t)np, sizeof(double), "GCV curve");
        if (!curve->lambda || !curve->score) {
            gt_tps_gcv_free(curve);
            return GT_ERR_RUNTIME;
        }
        for (int k = 0; k < np; k++) {
            curve->lambda[k] = pts[2 * k];
            curve->score[k] = pts[2 * k + 1];
        }
        curve->npts = np;
        curve->best_lambda = *lambda;
        curve->best_score = fb;
    }
    return GT_OK;
}

/* ------------------------------------------------------------------- fit */

static gt_status not_pd_error(double lambda)
{
    if (lambda == 0.0)
        return gt_fail(GT_ERR_DATA,
                       "the spline system is not positive definite at lambda = 0 (control "
                       "points nearly coincident or the kernel ill-conditioned for this "
                       "layout); smooth with --lambda > 0 or --lambda gcv");
    return gt_fail(GT_ERR_DATA,
                   "the spline system is not positive definite at lambda = %.6g; use a larger "
                   "lambda",
                   lambda);
}

static void tm_add(gt_timings *tm, const char *name, double ms)
{
    if (tm) gt_timings_add(tm, name, ms);
}

static gt_status fit_cpu(const double *src, size_t n, int m, double *X, double *Y,
                         const gt_tps_fit_opts *o, double *lambda, double *R, double *w,
                         double *top)
{
    gt_status st = GT_OK;
    size_t nn;
    if (!gt_mul_size(n, n, &nn)) return gt_fail(GT_ERR_RUNTIME, "n = %zu is too large", n);
    double *K = gt_malloc_array(nn, sizeof(double), "kernel matrix");
    double *p = gt_malloc_array(n, sizeof(double), "work vector");
    double tau[4];
    if (!K || !p) {
        free(K); free(p);
        return GT_ERR_RUNTIME;
    }
    double t0 = gt_now_ms();
#pragma omp parallel for schedule(static) if (n > 512)
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++) {
            double dx = src[3 * i] - src[3 * j], dy = src[3 * i + 1] - src[3 * j + 1],
                   dz = src[3 * i + 2] - src[3 * j + 2];
            K[i + j * n] = gt_tps_u(o->kernel, dx * dx + dy * dy + dz * dz);
        }
    double t1 = gt_now_ms();
    tm_add(o->timings, "kernel matrix", t1 - t0);
    house_qr(X, n, m, tau, R);
    double t2 = gt_now_ms();
    tm_add(o->timings, "QR", t2 - t1);
    for (int j = 0; j < m; j++) {
        two_sided(K, n, X + (size_t)j * n, tau[j], p);
        apply_h(Y, n, 3, X + (size_t)j * n, tau[j]);
    }
    double t3 = gt_now_ms();
    tm_add(o->timings, "Q2^T K Q2", t3 - t2);
    size_t N = n - (size_t)m;
    double *B = K + m + (size_t)m * n;
    if (o->gcv) {
        double *S = gt_malloc_array(N * N, sizeof(double), "GCV matrix");
        double *d = gt_malloc_array(N, sizeof(double), "GCV eigenvalues");
        double *z = gt_malloc_array(N * 3, sizeof(double), "GCV projections");
        if (!S || !d || !z) {
            st = GT_ERR_RUNTIME;
        } else {
            for (size_t j = 0; j < N; j++) memcpy(S + j * N, B + j * n, N * sizeof(double));
            for (int c = 0; c < 3; c++) memcpy(z + (size_t)c * N, Y + (size_t)c * n + m, N * sizeof(double));
            st = gt_tps_syev_apply(S, N, N, d, z, 3);
            if (st == GT_OK) st = gt_tps_gcv_choose(d, z, N, n, o->gcv_out, lambda);
        }
        free(S); free(d); free(z);
        tm_add(o->timings, "GCV", gt_now_ms() - t3);
        if (st != GT_OK) goto done;
    }
    t3 = gt_now_ms();
    for (size_t i = 0; i < N; i++) B[i + i * n] += *lambda;
    if (!cholesky(B, n, N)) {
        st = not_pd_error(*lambda);
        goto done;
    }
    double t4 = gt_now_ms();
    tm_add(o->timings, "Cholesky", t4 - t3);
    /* z = B^-1 (Q^T Y)[m:], w = Q [0; z], top = (Q^T Y)[0:m] - (Q^T K Q)[0:m, m:] z */
    for (int c = 0; c < 3; c++) {
        double *y = Y + (size_t)c * n, *wc = w + (size_t)c * n;
        memcpy(wc, y, n * sizeof(double));
        chol_solve(B, n, N, wc + m);
        for (int r = 0; r < m; r++) {
            double s = y[r];
            for (size_t k = 0; k < N; k++) s -= K[r + (m + k) * n] * wc[m + k];
            top[r + c * m] = s;
            wc[r] = 0.0;
        }
    }
    for (int j = m; j-- > 0;) apply_h(w, n, 3, X + (size_t)j * n, tau[j]);
    tm_add(o->timings, "back-substitution", gt_now_ms() - t4);
done:
    free(K);
    free(p);
    return st;
}

gt_status gt_tps_fit(const double *src, const double *dst, size_t n, const gt_tps_fit_opts *o,
                     gt_tps *out)
{
    bool planar;
    GT_TRY(gt_tps_check_points(src, n, &planar));
    for (size_t i = 0; i < 3 * n; i++)
        if (!isfinite(dst[i]))
            return gt_fail(GT_ERR_DATA, "target point %zu has a NaN or infinite coordinate",
                           i / 3 + 1);
    if (!o->gcv && !(o->lambda >= 0.0 && isfinite(o->lambda)))
        return gt_fail(GT_ERR_USAGE, "lambda must be a finite number >= 0");
    int m = planar ? 3 : 4;
    double mu[3], R[16], top[12], lambda = o->gcv ? 0.0 : o->lambda;
    double *X = gt_malloc_array(n * 4, sizeof(double), "design matrix");
    double *Y = gt_malloc_array(n * 3, sizeof(double), "targets");
    double *w = gt_malloc_array(n * 3, sizeof(double), "weights");
    gt_status st = GT_OK;
    if (!X || !Y || !w) {
        st = GT_ERR_RUNTIME;
        goto fail;
    }
    build_X(src, n, planar, mu, X);
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) Y[i + (size_t)c * n] = dst[3 * i + c];
    if (o->device == GT_DEVICE_CPU) {
        st = fit_cpu(src, n, m, X, Y, o, &lambda, R, w, top);
    } else {
#if GT_HAVE_CUDA
        gt_tps_cuda_fit *f = NULL;
        st = gt_tps_cuda_init(o->timings);
        if (st == GT_OK) st = gt_tps_cuda_prepare(o->kernel, n, m, src, X, Y, R, o->timings, &f);
        if (st == GT_OK && o->gcv) {
            size_t N = n - (size_t)m;
            double *d = gt_malloc_array(N, sizeof(double), "GCV eigenvalues");
            double *z = gt_malloc_array(N * 3, sizeof(double), "GCV projections");
            if (!d || !z) st = GT_ERR_RUNTIME;
            if (st == GT_OK) st = gt_tps_cuda_spectrum(f, d, z, o->timings);
            if (st == GT_OK) st = gt_tps_gcv_choose(d, z, N, n, o->gcv_out, &lambda);
            free(d);
            free(z);
        }
        int not_pd = 0;
        if (st == GT_OK) st = gt_tps_cuda_solve(f, lambda, w, top, &not_pd, o->timings);
        if (st == GT_OK && not_pd) st = not_pd_error(lambda);
        gt_tps_cuda_fit_free(f);
#else
        st = gt_fail(GT_ERR_GPU, "this build has no CUDA support; use --device cpu");
#endif
    }
    if (st != GT_OK) goto fail;
    /* a = R1^-1 top (m x m upper triangular), in centred coordinates */
    double ac[4][3] = {{0}};
    for (int c = 0; c < 3; c++)
        for (int r = m; r-- > 0;) {
            double s = top[r + c * m];
            for (int k = r + 1; k < m; k++) s -= R[r + (size_t)k * m] * ac[k][c];
            ac[r][c] = s / R[r + (size_t)r * m];
        }
    gt_tps_free(out);
    out->kernel = o->kernel;
    out->lambda = lambda;
    out->n = n;
    out->planar = planar;
    for (int c = 0; c < 3; c++) { /* undo the centring: a0 = a0' - A'^T mu */
        double a0 = ac[0][c];
        for (int d = 0; d < 3; d++) {
            out->a[1 + d][c] = d < m - 1 ? ac[1 + d][c] : 0.0;
            a0 -= out->a[1 + d][c] * mu[d];
        }
        out->a[0][c] = a0;
    }
    out->c = gt_malloc_array(n * 3, sizeof(double), "control points");
    out->w = gt_malloc_array(n * 3, sizeof(double), "weights");
    if (!out->c || !out->w) {
        gt_tps_free(out);
        st = GT_ERR_RUNTIME;
        goto fail;
    }
    memcpy(out->c, src, n * 3 * sizeof(double));
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) out->w[3 * i + c] = w[i + (size_t)c * n];
fail:
    free(X);
    free(Y);
    free(w);
    return st;
}

/* ------------------------------------------------------------ evaluation */

void gt_tps_eval_cpu(const gt_tps *t, const double *p, size_t npts, double *out)
{
#pragma omp parallel for schedule(static) if (npts * t->n > 100000)
    for (size_t q = 0; q < npts; q++) {
        double x = p[3 * q], y = p[3 * q + 1], z = p[3 * q + 2];
        double f[3];
        for (int c = 0; c < 3; c++)
            f[c] = t->a[0][c] + t->a[1][c] * x + t->a[2][c] * y + t->a[3][c] * z;
        for (size_t k = 0; k < t->n; k++) {
            const double *ck = t->c + 3 * k;
            double dx = x - ck[0], dy = y - ck[1], dz = z - ck[2];
            double u = gt_tps_u(t->kernel, dx * dx + dy * dy + dz * dz);
            f[0] += t->w[3 * k] * u;
            f[1] += t->w[3 * k + 1] * u;
            f[2] += t->w[3 * k + 2] * u;
        }
        out[3 * q] = f[0];
        out[3 * q + 1] = f[1];
        out[3 * q + 2] = f[2];
    }
}

gt_status gt_tps_eval(const gt_tps *t, const double *p, size_t npts, double *out,
                      gt_device_kind device, gt_timings *tm)
{
    if (device == GT_DEVICE_CPU) {
        double t0 = gt_now_ms();
        gt_tps_eval_cpu(t, p, npts, out);
        tm_add(tm, "evaluate", gt_now_ms() - t0);
        return GT_OK;
    }
#if GT_HAVE_CUDA
    GT_TRY(gt_tps_cuda_init(tm));
    return gt_tps_cuda_eval((int)t->kernel, t->n, t->c, t->w, &t->a[0][0], p, npts, out, tm);
#else
    (void)tm;
    return gt_fail(GT_ERR_GPU, "this build has no CUDA support; use --device cpu");
#endif
}
