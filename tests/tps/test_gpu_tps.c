/* GPU vs CPU for lib/tps (suite gpu; exits 77 without a GPU).
 * Fit: random point sets n = 5..3000, both kernels, 3-D and planar; the
 * parameters (w, a) agree to 1e-9 relative to their largest magnitude
 * (both paths are double precision; differences are rounding amplified by
 * the condition of Q2^T K Q2 + lambda I, so lambda = 0 is checked for
 * n <= 100 and a small lambda above, where the condition stays < 1e5).
 * GCV: the same lambda to 1e-6 (golden-section tolerance on log lambda).
 * Apply: 20000 points through the fits, 1e-12 relative (double on both).
 * Volume warp: 24^3 float volume, voxels equal to 1e-4 of the range.
 * Cholesky (kernels/tps/tps_chol.cu) against tps_cholesky on random SPD
 * blocks of orders around its block sizes (32, 64, 128, 256), inside a
 * larger matrix: L to 1e-12 of its largest entry, the upper triangle and the
 * surroundings untouched, solves with 1-4 right-hand sides to 1e-11; a
 * matrix whose leading minor of order k + 1 is indefinite reports k + 1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "io/ply.h"
#include "common/gpu_runtime.h"
#include "kernels/tps/tps_cuda.h"
#include "tps/linalg.h"
#include "tps/warp.h"
#include "tps_testutil.h"

static double rel_diff(const double *a, const double *b, size_t n)
{
    double s = fmax(max_abs(a, n), max_abs(b, n));
    return s > 0 ? max_diff(a, b, n) / s : 0.0;
}

/* Largest evaluation difference relative to the rounding error it may carry:
 * a sum of n terms in double differs between two summation orders (and
 * log/fma implementations) by at most about n * eps * sum |terms|, so each
 * point's difference is measured against 1e-13 * (sum of |terms|) plus the
 * affine part's magnitude. Returns max over points of |fc - fg| / bound. */
static double eval_err_ratio(const gt_tps *t, const double *p, size_t M, const double *fc,
                             const double *fg)
{
    double worst = 0;
    for (size_t q = 0; q < M; q++) {
        double x = p[3 * q], y = p[3 * q + 1], z = p[3 * q + 2];
        double mag[3];
        for (int c = 0; c < 3; c++)
            mag[c] = fabs(t->a[0][c]) + fabs(t->a[1][c] * x) + fabs(t->a[2][c] * y) +
                     fabs(t->a[3][c] * z);
        for (size_t k = 0; k < t->n; k++) {
            const double *ck = t->c + 3 * k;
            double dx = x - ck[0], dy = y - ck[1], dz = z - ck[2];
            double u = fabs(gt_tps_u(t->kernel, dx * dx + dy * dy + dz * dz));
            for (int c = 0; c < 3; c++) mag[c] += fabs(t->w[3 * k + c]) * u;
        }
        for (int c = 0; c < 3; c++) {
            double r = fabs(fc[3 * q + c] - fg[3 * q + c]) / (1e-13 * mag[c] + 1e-300);
            if (r > worst) worst = r;
        }
    }
    return worst;
}

static void fit_both(const double *src, const double *dst, size_t n, gt_tps_kernel k,
                     double lambda, bool gcv, gt_tps *tc, gt_tps *tg)
{
    gt_tps_fit_opts o = {0};
    o.kernel = k;
    o.lambda = lambda;
    o.gcv = gcv;
    o.device = GT_DEVICE_CPU;
    GT_ASSERT_OK(gt_tps_fit(src, dst, n, &o, tc));
    o.device = GT_DEVICE_CUDA;
    GT_ASSERT_OK(gt_tps_fit(src, dst, n, &o, tg));
}

static void test_fit_gpu_cpu(void **state)
{
    (void)state;
    const size_t ns[] = {5, 6, 17, 100, 500, 1742, 3000};
    for (size_t ii = 0; ii < sizeof ns / sizeof *ns; ii++)
        for (int k = 0; k < 2; k++)
            for (int planar = 0; planar < 2; planar++) {
                size_t n = ns[ii];
                gt_rng r = {1000 + n * 4 + k * 2 + planar};
                double *src = rand_points(&r, n, -1, 1, planar);
                double *dst = deform(&r, src, n, 0.01);
                /* condition of Q2^T K Q2 + lambda I (numpy, these point sets):
                 * lambda 0: 9e2 (n 100) .. 6.5e8 (n 3000, planar); 1e-3 at
                 * n 500: <= 6.4e4; 1e-2 at n 3000: <= 4.1e4 */
                double lambda = n <= 100 ? 0.0 : n <= 500 ? 1e-3 : 1e-2;
                gt_tps tc, tg;
                gt_tps_init(&tc);
                gt_tps_init(&tg);
                fit_both(src, dst, n, (gt_tps_kernel)k, lambda, false, &tc, &tg);
                double ew = rel_diff(tc.w, tg.w, 3 * n);
                double ea = rel_diff(&tc.a[0][0], &tg.a[0][0], 12);
                printf("n %zu kernel %d planar %d lambda %g: w %.3g a %.3g\n", n, k, planar,
                       lambda, ew, ea);
                if (ew > 1e-9 || ea > 1e-9) fail_msg("n %zu: GPU differs from CPU", n);
                /* evaluation at random points */
                size_t M = 20000;
                double *p = rand_points(&r, M, -1.2, 1.2, false);
                double *fc = malloc(M * 3 * sizeof(double)), *fg = malloc(M * 3 * sizeof(double));
                gt_tps_eval_cpu(&tc, p, M, fc);
                GT_ASSERT_OK(gt_tps_eval(&tc, p, M, fg, GT_DEVICE_CUDA, NULL));
                double ee = eval_err_ratio(&tc, p, M, fc, fg);
                if (ee > 1.0)
                    fail_msg("n %zu: eval differs by %g x the rounding bound (rel %g)", n, ee,
                             rel_diff(fc, fg, 3 * M));
                free(p); free(fc); free(fg);
                gt_tps_free(&tc);
                gt_tps_free(&tg);
                free(src);
                free(dst);
            }
}

static void test_gcv_gpu_cpu(void **state)
{
    (void)state;
    gt_rng r = {77};
    size_t n = 400;
    double *src = rand_points(&r, n, -1, 1, false);
    double *dst = deform(&r, src, n, 0.02);
    gt_tps tc, tg;
    gt_tps_init(&tc);
    gt_tps_init(&tg);
    fit_both(src, dst, n, GT_TPS_R2LOGR, 0, true, &tc, &tg);
    printf("GCV lambda cpu %.10g gpu %.10g\n", tc.lambda, tg.lambda);
    /* both minimise the same GCV curve; golden section stops within ~1e-7 */
    assert_true(fabs(tc.lambda - tg.lambda) <= 1e-6 * tc.lambda);
    /* at one lambda the two fits agree like any fit (test_fit_gpu_cpu) */
    gt_tps tg2;
    gt_tps_init(&tg2);
    gt_tps_fit_opts o = {0};
    o.kernel = GT_TPS_R2LOGR;
    o.lambda = tc.lambda;
    o.device = GT_DEVICE_CUDA;
    GT_ASSERT_OK(gt_tps_fit(src, dst, n, &o, &tg2));
    double ew = rel_diff(tc.w, tg2.w, 3 * n);
    printf("w at the CPU's lambda: rel diff %.3g\n", ew);
    assert_true(ew < 1e-9);
    gt_tps_free(&tg2);
    gt_tps_free(&tc);
    gt_tps_free(&tg);
    free(src);
    free(dst);
}

static void test_not_pd_gpu(void **state)
{
    (void)state;
    /* -r is conditionally positive definite: always fine; a duplicate is
     * caught before either path. Check that both paths report the same. */
    double src[18] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0};
    double dst[18] = {0};
    gt_tps_fit_opts o = {0};
    o.device = GT_DEVICE_CUDA;
    gt_tps t;
    gt_tps_init(&t);
    assert_int_equal(gt_tps_fit(src, dst, 6, &o, &t), GT_ERR_DATA);
}

static void test_warp_volume_gpu_cpu(void **state)
{
    (void)state;
    gt_rng r = {8};
    size_t n = 40;
    double *src = rand_points(&r, n, 0, 23, false);
    double *dst = malloc(n * 3 * sizeof(double));
    for (size_t i = 0; i < 3 * n; i++) dst[i] = src[i] + gt_rng_range(&r, -1, 1);
    gt_tps_fit_opts o = {0};
    o.lambda = 1.0;
    o.device = GT_DEVICE_CPU;
    gt_tps t;
    gt_tps_init(&t);
    GT_ASSERT_OK(gt_tps_fit(src, dst, n, &o, &t));
    gt_volume v;
    memset(&v, 0, sizeof v);
    v.info.dims[0] = 24; v.info.dims[1] = 20; v.info.dims[2] = 18;
    v.info.type = GT_VOL_FLOAT32;
    v.info.dir[0][0] = 1; v.info.dir[1][1] = 1.1; v.info.dir[2][2] = 1.2;
    size_t nv = 24 * 20 * 18;
    float *data = malloc(nv * sizeof(float));
    for (size_t i = 0; i < nv; i++) data[i] = (float)gt_rng_range(&r, 0, 100);
    v.data = data;
    gt_volume oc, og;
    GT_ASSERT_OK(gt_tps_warp_volume(&t, &v, &oc, GT_DEVICE_CPU, NULL));
    GT_ASSERT_OK(gt_tps_warp_volume(&t, &v, &og, GT_DEVICE_CUDA, NULL));
    const float *a = oc.data, *b = og.data;
    size_t nz = 0;
    for (size_t i = 0; i < nv; i++) {
        if (fabsf(a[i] - b[i]) > 1e-2f) fail_msg("voxel %zu: %g vs %g", i, a[i], b[i]);
        nz += a[i] != 0;
    }
    assert_true(nz > nv / 2);
    free(oc.data);
    free(og.data);
    free(data);
    gt_tps_free(&t);
    free(src);
    free(dst);
}

/* Real data: the Stanford bunny (34834 vertices). 600 vertices as
 * landmarks, moved by a twist about y; fit on both devices (lambda 1e-4),
 * then warp every vertex on both: parameters 1e-9, positions 1e-12. */
static void test_bunny_gpu_cpu(void **state)
{
    (void)state;
    const char *cands[] = {getenv("GT_BUNNY"), "/work/shared/data/meshes/bunny.ply",
                           "../shared/data/meshes/bunny.ply", "../../shared/data/meshes/bunny.ply"};
    const char *path = NULL;
    for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
        FILE *f = cands[i] ? fopen(cands[i], "rb") : NULL;
        if (f) { fclose(f); path = cands[i]; break; }
    }
    if (!path) { printf("bunny.ply not found: skipped\n"); return; }
    gt_ply_mesh m;
    GT_ASSERT_OK(gt_ply_read(path, &m));
    const char *xyz[3] = {"x", "y", "z"};
    float *v = malloc(m.nvert * 3 * sizeof(float));
    GT_ASSERT_OK(gt_ply_gather(&m, path, xyz, 3, v));
    size_t nv = m.nvert, n = 600;
    double *all = malloc(nv * 3 * sizeof(double));
    for (size_t i = 0; i < 3 * nv; i++) all[i] = v[i];
    double *src = malloc(n * 3 * sizeof(double)), *dst = malloc(n * 3 * sizeof(double));
    double ymin = 1e300, ymax = -1e300;
    for (size_t i = 0; i < nv; i++) { ymin = fmin(ymin, all[3 * i + 1]); ymax = fmax(ymax, all[3 * i + 1]); }
    for (size_t k = 0; k < n; k++) { /* evenly spaced vertices: distinct positions in this mesh */
        const double *p = all + 3 * (k * (nv / n));
        double a = 0.6 * (p[1] - ymin) / (ymax - ymin);
        memcpy(src + 3 * k, p, 3 * sizeof(double));
        dst[3 * k] = cos(a) * p[0] - sin(a) * p[2];
        dst[3 * k + 1] = p[1];
        dst[3 * k + 2] = sin(a) * p[0] + cos(a) * p[2];
    }
    gt_tps tc, tg;
    gt_tps_init(&tc);
    gt_tps_init(&tg);
    fit_both(src, dst, n, GT_TPS_R2LOGR, 1e-4, false, &tc, &tg);
    double ew = rel_diff(tc.w, tg.w, 3 * n), ea = rel_diff(&tc.a[0][0], &tg.a[0][0], 12);
    printf("bunny: w %.3g a %.3g\n", ew, ea);
    assert_true(ew < 1e-9 && ea < 1e-9);
    double *fc = malloc(nv * 3 * sizeof(double)), *fg = malloc(nv * 3 * sizeof(double));
    gt_tps_eval_cpu(&tc, all, nv, fc);
    GT_ASSERT_OK(gt_tps_eval(&tc, all, nv, fg, GT_DEVICE_CUDA, NULL));
    assert_true(rel_diff(fc, fg, 3 * nv) < 1e-12);
    free(fc); free(fg); free(src); free(dst); free(all); free(v);
    gt_tps_free(&tc);
    gt_tps_free(&tg);
    gt_ply_free(&m);
}

/* A (ld x cols, column-major) with an N x N SPD block at (off, off): G G^T / N
 * + I (G uniform in [-1, 1]); everything else a sentinel 7. */
static double *spd_in_frame(gt_rng *r, size_t N, size_t off, size_t ld, size_t cols)
{
    double *A = malloc(ld * cols * sizeof(double));
    double *G = malloc(N * N * sizeof(double));
    for (size_t i = 0; i < ld * cols; i++) A[i] = 7.0;
    for (size_t i = 0; i < N * N; i++) G[i] = 2.0 * gt_rng_uniform(r) - 1.0;
    for (size_t j = 0; j < N; j++)
        for (size_t i = j; i < N; i++) {
            double s = 0;
            for (size_t k = 0; k < N; k++) s += G[i + k * N] * G[j + k * N];
            double v = s / (double)N + (i == j ? 1.0 : 0.0);
            A[(off + i) + (off + j) * ld] = v; /* lower triangle only: the kernels read nothing else */
        }
    free(G);
    return A;
}

static void test_cholesky_gpu_cpu(void **state)
{
    (void)state;
    const size_t ns[] = {1, 2, 31, 32, 33, 63, 64, 65, 127, 129, 255, 256, 257, 300, 513, 777, 1500};
    for (size_t ii = 0; ii < sizeof ns / sizeof *ns; ii++) {
        const size_t N = ns[ii], off = 3, ld = N + 5, cols = N + off + 2;
        gt_rng r = {4242 + N};
        double *A = spd_in_frame(&r, N, off, ld, cols);
        double *C = malloc(ld * cols * sizeof(double)), *G = malloc(ld * cols * sizeof(double));
        memcpy(C, A, ld * cols * sizeof(double));
        /* the CPU's factor, from the symmetric block (it reads the upper triangle) */
        for (size_t j = 0; j < N; j++)
            for (size_t i = j + 1; i < N; i++) C[(off + j) + (off + i) * ld] = C[(off + i) + (off + j) * ld];
        assert_true(tps_cholesky(C + off + off * ld, ld, N));
        double *dA = NULL, *dw = NULL;
        int *dinfo = NULL, info = -1;
        GT_ASSERT_OK(gt_cu_malloc((void **)&dA, ld * cols * sizeof(double), "test matrix"));
        GT_ASSERT_OK(gt_cu_malloc((void **)&dinfo, 2 * sizeof(int), "info"));
        GT_ASSERT_OK(gt_cu_memcpy_h2d(dA, A, ld * cols * sizeof(double), NULL));
        GT_ASSERT_OK(gt_tps_cuda_cholesky(dA + off + off * ld, ld, N, dinfo));
        GT_ASSERT_OK(gt_cu_memcpy_d2h(G, dA, ld * cols * sizeof(double), NULL));
        GT_ASSERT_OK(gt_cu_memcpy_d2h(&info, dinfo, sizeof info, NULL));
        assert_int_equal(info, 0);
        double lmax = 0, err = 0;
        size_t touched = 0;
        for (size_t j = 0; j < cols; j++)
            for (size_t i = 0; i < ld; i++) {
                bool in = i >= off && j >= off && i - off < N && j - off < N && i >= j;
                if (!in) {
                    touched += G[i + j * ld] != 7.0;
                    continue;
                }
                double lc = C[j + i * ld]; /* tps_cholesky: L(i, j) at [j + i ld] */
                lmax = fmax(lmax, fabs(lc));
                err = fmax(err, fabs(lc - G[i + j * ld]));
            }
        printf("Cholesky N %zu: max |L_gpu - L_cpu| / max |L| = %.3g, outside %zu changed\n", N, err / lmax,
               touched);
        assert_int_equal(touched, 0);
        assert_true(err <= 1e-12 * lmax);
        /* solves: B (N x nrhs, ld N + 1) against tps_chol_solve column by column */
        for (int nrhs = 1; nrhs <= 4; nrhs++) {
            const size_t lb = N + 1;
            double *B = malloc(lb * nrhs * sizeof(double)), *X = malloc(lb * nrhs * sizeof(double)), *dB = NULL;
            for (size_t i = 0; i < lb * (size_t)nrhs; i++) B[i] = 2.0 * gt_rng_uniform(&r) - 1.0;
            GT_ASSERT_OK(gt_cu_malloc((void **)&dB, lb * nrhs * sizeof(double), "rhs"));
            GT_ASSERT_OK(gt_cu_malloc((void **)&dw, gt_tps_cuda_chol_solve_work(N, nrhs) * sizeof(double), "work"));
            GT_ASSERT_OK(gt_cu_memcpy_h2d(dB, B, lb * nrhs * sizeof(double), NULL));
            GT_ASSERT_OK(gt_tps_cuda_chol_solve(dA + off + off * ld, ld, N, dB, lb, nrhs, dw));
            GT_ASSERT_OK(gt_cu_memcpy_d2h(X, dB, lb * nrhs * sizeof(double), NULL));
            double xmax = 0, xerr = 0;
            for (int k = 0; k < nrhs; k++) {
                tps_chol_solve(C + off + off * ld, ld, N, B + (size_t)k * lb);
                for (size_t i = 0; i < N; i++) {
                    xmax = fmax(xmax, fabs(B[i + k * lb]));
                    xerr = fmax(xerr, fabs(B[i + k * lb] - X[i + k * lb]));
                }
                assert_true(X[N + k * lb] == B[N + k * lb]); /* the row past N is not touched */
            }
            if (xerr > 1e-11 * xmax) fail_msg("solve N %zu nrhs %d: %g of %g", N, nrhs, xerr, xmax);
            gt_cu_free(dB);
            gt_cu_free(dw);
            free(B);
            free(X);
        }
        /* indefinite from row k: A[k][k] made negative enough */
        if (N >= 2) {
            size_t k = N / 2 + (N > 40 ? 7 : 0);
            if (k >= N) k = N - 1;
            A[(off + k) + (off + k) * ld] = -5.0;
            GT_ASSERT_OK(gt_cu_memcpy_h2d(dA, A, ld * cols * sizeof(double), NULL));
            GT_ASSERT_OK(gt_tps_cuda_cholesky(dA + off + off * ld, ld, N, dinfo));
            GT_ASSERT_OK(gt_cu_memcpy_d2h(&info, dinfo, sizeof info, NULL));
            assert_int_equal(info, (int)k + 1);
        }
        gt_cu_free(dA);
        gt_cu_free(dinfo);
        free(A);
        free(C);
        free(G);
    }
}

int main(void)
{
    gt_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cholesky_gpu_cpu),
        cmocka_unit_test(test_fit_gpu_cpu),
        cmocka_unit_test(test_gcv_gpu_cpu),
        cmocka_unit_test(test_not_pd_gpu),
        cmocka_unit_test(test_warp_volume_gpu_cpu),
        cmocka_unit_test(test_bunny_gpu_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
