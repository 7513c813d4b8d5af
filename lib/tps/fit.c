/* The smoothed thin-plate spline fit (gt_tps_fit, see tps.h): the design
 * matrix, the CPU reference (kernel matrix, QR of X applied to K and Y from
 * both sides, GCV, Cholesky of Q2^T K Q2 + lambda I, back-substitution;
 * linear algebra in linalg.c, U in tps_math.h) or the CUDA path (kernels/tps/tps_fit.cu),
 * and the affine part in the caller's coordinates. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "gt_config.h"
#include "tps/linalg.h"
#include "tps/tps.h"
#include "tps/tps_math.h"

#if GT_HAVE_CUDA
#include "kernels/tps/tps_cuda.h"
#endif

void gt_tps_init(gt_tps *t) { memset(t, 0, sizeof *t); }
void gt_tps_free(gt_tps *t)
{
    free(t->c);
    free(t->w);
    gt_tps_init(t);
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

static gt_status fit_cpu(const double *src, size_t n, int m, const double *X, const double *tau,
                         const double *Y, const gt_tps_fit_opts *o, double *lambda, double *w, double *top)
{
    gt_status st = GT_OK;
    size_t nn;
    if (!gt_mul_size(n, n, &nn)) return gt_fail(GT_ERR_RUNTIME, "n = %zu is too large", n);
    double *K = gt_malloc_array(nn, sizeof(double), "kernel matrix");
    double *p = gt_malloc_array(n, sizeof(double), "work vector");
    if (!K || !p) {
        free(K); free(p);
        return GT_ERR_RUNTIME;
    }
    double t0 = gt_now_ms();
#pragma omp parallel for schedule(static) if (n > 512)
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++) {
            K[i + j * n] = tps_u_at((int)o->kernel, src[3 * i], src[3 * i + 1], src[3 * i + 2], src[3 * j],
                                    src[3 * j + 1], src[3 * j + 2]);
        }
    double t1 = gt_now_ms();
    tm_add(o->timings, "kernel matrix", t1 - t0);
    for (int j = 0; j < m; j++) tps_reflect_sym(K, n, n, X + (size_t)j * n, tau[j], p);
    double t3 = gt_now_ms();
    tm_add(o->timings, "Q2^T K Q2", t3 - t1);
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
    if (!tps_cholesky(B, n, N)) {
        st = not_pd_error(*lambda);
        goto done;
    }
    double t4 = gt_now_ms();
    tm_add(o->timings, "Cholesky", t4 - t3);
    /* z = B^-1 (Q^T Y)[m:], w = [0; z], top = (Q^T Y)[0:m] - (Q^T K Q)[0:m, m:] z */
    for (int c = 0; c < 3; c++) {
        const double *y = Y + (size_t)c * n;
        double *wc = w + (size_t)c * n;
        memcpy(wc, y, n * sizeof(double));
        tps_chol_solve(B, n, N, wc + m);
        for (int r = 0; r < m; r++) {
            double s = y[r];
            for (size_t k = 0; k < N; k++) s -= K[r + (m + k) * n] * wc[m + k];
            top[r + c * m] = s;
            wc[r] = 0.0;
        }
    }
    tm_add(o->timings, "back-substitution", gt_now_ms() - t4);
done:
    free(K);
    free(p);
    return st;
}

void gt_tps_plan_free(gt_tps_plan *p)
{
    free(p->X);
    free(p->Y);
    p->X = p->Y = NULL;
}

gt_status gt_tps_fit_plan(const double *src, const double *dst, size_t n, const gt_tps_fit_opts *o,
                          gt_tps_plan *p)
{
    memset(p, 0, sizeof *p);
    GT_TRY(gt_tps_check_points(src, n, &p->planar));
    for (size_t i = 0; i < 3 * n; i++)
        if (!isfinite(dst[i]))
            return gt_fail(GT_ERR_DATA, "target point %zu has a NaN or infinite coordinate",
                           i / 3 + 1);
    if (!o->gcv && !(o->lambda >= 0.0 && isfinite(o->lambda)))
        return gt_fail(GT_ERR_USAGE, "lambda must be a finite number >= 0");
    p->n = n;
    p->m = p->planar ? 3 : 4;
    p->X = gt_malloc_array(n * 4, sizeof(double), "design matrix");
    p->Y = gt_malloc_array(n * 3, sizeof(double), "targets");
    if (!p->X || !p->Y) {
        gt_tps_plan_free(p);
        return GT_ERR_RUNTIME;
    }
    build_X(src, n, p->planar, p->mu, p->X);
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) p->Y[i + (size_t)c * n] = dst[3 * i + c];
    /* both paths: the O(n m) part on the host, the QR of X (X becomes the
     * reflectors) and Q^T Y here, w = Q [0; z] after the fit */
    double tq = gt_now_ms();
    tps_house_qr(p->X, n, p->m, p->tau, p->R);
    for (int j = 0; j < p->m; j++) tps_reflect(p->Y, n, n, 3, p->X + (size_t)j * n, p->tau[j]);
    tm_add(o->timings, "QR", gt_now_ms() - tq);
    return GT_OK;
}

gt_status gt_tps_fit_planned(const double *src, const gt_tps_plan *p, const gt_tps_fit_opts *o, gt_tps *out)
{
    const size_t n = p->n;
    const int m = p->m;
    const double *X = p->X, *Y = p->Y, *R = p->R, *tau = p->tau, *mu = p->mu;
    double top[12], lambda = o->gcv ? 0.0 : o->lambda;
    double *w = gt_malloc_array(n * 3, sizeof(double), "weights");
    gt_status st = GT_OK;
    if (!w) return GT_ERR_RUNTIME;
    if (o->device == GT_DEVICE_CPU) {
        st = fit_cpu(src, n, m, X, tau, Y, o, &lambda, w, top);
    } else {
#if GT_HAVE_CUDA
        gt_tps_cuda_fit *f = NULL;
        st = gt_tps_cuda_init(o->timings);
        if (st == GT_OK) st = gt_tps_cuda_prepare(o->kernel, n, m, src, X, tau, Y, o->timings, &f);
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
    for (int j = m; j-- > 0;) tps_reflect(w, n, n, 3, X + (size_t)j * n, tau[j]);
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
    out->planar = p->planar;
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
    free(w);
    return st;
}

gt_status gt_tps_fit(const double *src, const double *dst, size_t n, const gt_tps_fit_opts *o,
                     gt_tps *out)
{
    gt_tps_plan p;
    GT_TRY(gt_tps_fit_plan(src, dst, n, o, &p));
    gt_status st = gt_tps_fit_planned(src, &p, o, out);
    gt_tps_plan_free(&p);
    return st;
}
