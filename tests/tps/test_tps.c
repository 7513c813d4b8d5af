/* Unit tests (CPU) of lib/tps: the fit's defining properties, GCV, the eigen
 * solver, input checks and the parameter file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tps/linalg.h"
#include "tps_testutil.h"

static gt_tps_fit_opts cpu_opts(gt_tps_kernel k, double lambda)
{
    gt_tps_fit_opts o = {0};
    o.kernel = k;
    o.lambda = lambda;
    o.device = GT_DEVICE_CPU;
    return o;
}

/* lambda = 0 interpolates: f(c_k) = y_k. Tolerance 1e-9 of the target scale:
 * the system's condition number for these 80 points is far below 1e6, so
 * rounding stays near 1e-12. Both kernels, 3-D and planar (z = 0) data. */
static void test_interpolation(void **state)
{
    (void)state;
    for (int planar = 0; planar < 2; planar++)
        for (int k = 0; k < 2; k++) {
            gt_rng r = {42 + planar * 2 + k};
            size_t n = 80;
            double *src = rand_points(&r, n, -1, 1, planar);
            double *dst = deform(&r, src, n, 0.0);
            gt_tps_fit_opts o = cpu_opts((gt_tps_kernel)k, 0.0);
            gt_tps t;
            gt_tps_init(&t);
            GT_ASSERT_OK(gt_tps_fit(src, dst, n, &o, &t));
            assert_true(t.planar == (planar != 0));
            double *f = malloc(n * 3 * sizeof(double));
            gt_tps_eval_cpu(&t, src, n, f);
            double err = max_diff(f, dst, 3 * n), sc = max_abs(dst, 3 * n);
            if (err > 1e-9 * sc) fail_msg("planar %d kernel %d: interpolation error %g", planar, k, err);
            /* side conditions X^T w = 0 */
            for (int c = 0; c < 3; c++) {
                double s = 0, sx = 0, sy = 0, sz = 0;
                for (size_t i = 0; i < n; i++) {
                    s += t.w[3 * i + c];
                    sx += t.w[3 * i + c] * src[3 * i];
                    sy += t.w[3 * i + c] * src[3 * i + 1];
                    sz += t.w[3 * i + c] * src[3 * i + 2];
                }
                double ws = max_abs(t.w, 3 * n) * n;
                assert_true(fabs(s) < 1e-10 * ws && fabs(sx) < 1e-10 * ws && fabs(sy) < 1e-10 * ws &&
                            fabs(sz) < 1e-10 * ws);
            }
            free(f);
            free(src);
            free(dst);
            gt_tps_free(&t);
        }
}

/* An affine target Y = c M + t is reproduced by the affine part alone for
 * every lambda: w = 0 and a = (t, M). */
static void test_affine_target(void **state)
{
    (void)state;
    gt_rng r = {7};
    size_t n = 50;
    double *src = rand_points(&r, n, -2, 3, false);
    double M[3][3] = {{1.2, 0.1, -0.3}, {0.05, 0.9, 0.2}, {-0.1, 0.3, 1.1}}, tr[3] = {4, -2, 0.5};
    double *dst = malloc(n * 3 * sizeof(double));
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
            dst[3 * i + c] = tr[c];
            for (int d = 0; d < 3; d++) dst[3 * i + c] += src[3 * i + d] * M[d][c];
        }
    double lambdas[] = {0.0, 1e-3, 1.0, 1e4};
    for (int k = 0; k < 2; k++)
        for (size_t l = 0; l < sizeof lambdas / sizeof *lambdas; l++) {
            gt_tps_fit_opts o = cpu_opts((gt_tps_kernel)k, lambdas[l]);
            gt_tps t;
            gt_tps_init(&t);
            GT_ASSERT_OK(gt_tps_fit(src, dst, n, &o, &t));
            assert_true(max_abs(t.w, 3 * n) < 1e-10);
            for (int c = 0; c < 3; c++) {
                assert_true(fabs(t.a[0][c] - tr[c]) < 1e-10);
                for (int d = 0; d < 3; d++) assert_true(fabs(t.a[1 + d][c] - M[d][c]) < 1e-10);
            }
            gt_tps_free(&t);
        }
    free(src);
    free(dst);
}

/* Large lambda: w -> 0 and a -> the least-squares affine fit (solved here by
 * normal equations, independent of the QR path). The gap is O(1/lambda). */
static void test_large_lambda(void **state)
{
    (void)state;
    gt_rng r = {11};
    size_t n = 60;
    double *src = rand_points(&r, n, -1, 1, false);
    double *dst = deform(&r, src, n, 0.01);
    /* normal equations (X^T X) a = X^T Y, X = [1 c] */
    double A[4][4] = {{0}}, B[4][3] = {{0}};
    for (size_t i = 0; i < n; i++) {
        double x[4] = {1, src[3 * i], src[3 * i + 1], src[3 * i + 2]};
        for (int p = 0; p < 4; p++) {
            for (int q = 0; q < 4; q++) A[p][q] += x[p] * x[q];
            for (int c = 0; c < 3; c++) B[p][c] += x[p] * dst[3 * i + c];
        }
    }
    for (int p = 0; p < 4; p++) /* Gauss-Jordan (SPD, no pivoting needed) */
        for (int q = 0; q < 4; q++) {
            if (q == p) continue;
            double f = A[q][p] / A[p][p];
            for (int s = 0; s < 4; s++) A[q][s] -= f * A[p][s];
            for (int c = 0; c < 3; c++) B[q][c] -= f * B[p][c];
        }
    gt_tps_fit_opts o = cpu_opts(GT_TPS_R2LOGR, 1e10);
    gt_tps t;
    gt_tps_init(&t);
    GT_ASSERT_OK(gt_tps_fit(src, dst, n, &o, &t));
    for (int p = 0; p < 4; p++)
        for (int c = 0; c < 3; c++) {
            double ls = B[p][c] / A[p][p];
            if (fabs(t.a[p][c] - ls) > 1e-6) fail_msg("a[%d][%d] = %.12g vs LS %.12g", p, c, t.a[p][c], ls);
        }
    assert_true(max_abs(t.w, 3 * n) < 1e-8);
    gt_tps_free(&t);
    free(src);
    free(dst);
}

/* The blocked Cholesky (panels of 64, the trailing update four columns at a
 * time with SIMD sums, remainders): L L^T = A on a random SPD matrix whose
 * size leaves a partial last panel and column groups of every remainder,
 * with a leading dimension larger than the size; an indefinite matrix is
 * refused. */
static void test_cholesky(void **state)
{
    (void)state;
    gt_rng r = {11};
    const size_t N = 301, ld = 307;
    double *A = malloc(ld * N * sizeof(double)), *A0 = malloc(ld * N * sizeof(double));
    double *G = malloc(N * N * sizeof(double));
    for (size_t k = 0; k < N * N; k++) G[k] = gt_rng_range(&r, -1, 1);
    for (size_t i = 0; i < N; i++) /* A = G G^T / N + I: SPD, condition ~ 5 */
        for (size_t j = 0; j <= i; j++) {
            double t = 0;
            for (size_t k = 0; k < N; k++) t += G[i * N + k] * G[j * N + k];
            A[j + i * ld] = A[i + j * ld] = t / (double)N + (i == j);
        }
    memcpy(A0, A, ld * N * sizeof(double));
    assert_true(tps_cholesky(A, ld, N));
    double worst = 0;
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j <= i; j++) { /* (L L^T)(i,j), L(i,k) at A[k + i*ld] */
            double t = 0;
            for (size_t k = 0; k <= j; k++) t += A[k + i * ld] * A[k + j * ld];
            worst = fmax(worst, fabs(t - A0[j + i * ld]));
        }
    if (worst > 1e-12) fail_msg("|L L^T - A| = %g", worst);
    memcpy(A, A0, ld * N * sizeof(double));
    A[200 + 200 * ld] = -5.0; /* no longer positive definite */
    assert_false(tps_cholesky(A, ld, N));
    free(A); free(A0); free(G);
}

/* The compact WY form of the QR's reflectors (tps_wy_sym_factor, the GPU
 * fit's Q^T K Q): K - B V^T - V B^T equals the reflectors applied one by one
 * from both sides (tps_reflect_sym, the CPU fit's way) for a random
 * symmetric K and X = [1 c] with m = 1..4 columns. A wrong T (a sign, an
 * entry, the order of the reflectors) breaks the equality at O(1). */
static void test_wy_sym(void **state)
{
    (void)state;
    for (int m = 1; m <= 4; m++) {
        gt_rng r = {70 + (uint64_t)m};
        const size_t n = 37;
        double *X = malloc(n * 4 * sizeof(double)), *K = malloc(n * n * sizeof(double));
        double *K1 = malloc(n * n * sizeof(double)), *P = malloc(n * 4 * sizeof(double));
        double *B = malloc(n * 4 * sizeof(double)), *p = malloc(n * sizeof(double));
        double tau[4], R[16];
        for (size_t i = 0; i < n; i++) {
            X[i] = 1.0;
            for (int c = 1; c < m; c++) X[i + c * n] = gt_rng_range(&r, -1, 1);
            for (size_t j = 0; j <= i; j++) K[i + j * n] = K[j + i * n] = gt_rng_range(&r, -1, 1);
        }
        tps_house_qr(X, n, m, tau, R);
        memcpy(K1, K, n * n * sizeof(double));
        for (int j = 0; j < m; j++) tps_reflect_sym(K1, n, n, X + (size_t)j * n, tau[j], p);
        for (size_t i = 0; i < n; i++) /* P = K V */
            for (int c = 0; c < m; c++) {
                double t = 0;
                for (size_t k = 0; k < n; k++) t += K[i + k * n] * X[k + c * n];
                P[i + c * n] = t;
            }
        tps_wy_sym_factor(n, m, tau, X, P, B);
        double worst = 0, scale = max_abs(K1, n * n);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) {
                double t = K[i + j * n];
                for (int c = 0; c < m; c++) t -= B[i + c * n] * X[j + c * n] + X[i + c * n] * B[j + c * n];
                worst = fmax(worst, fabs(t - K1[i + j * n]));
            }
        if (worst > 1e-12 * scale) fail_msg("m = %d: |WY - reflectors| = %g (scale %g)", m, worst, scale);
        free(X); free(K); free(K1); free(P); free(B); free(p);
    }
}

/* --device auto's choice for a plain fit: the CPU for small ones, more
 * points with more threads, never for a large one. */
static void test_fit_prefers_cpu(void **state)
{
    (void)state;
    assert_true(gt_tps_fit_prefers_cpu(0, 1));
    assert_true(gt_tps_fit_prefers_cpu(500, 1));
    assert_true(gt_tps_fit_prefers_cpu(1742, 16)); /* issue 18's n on the GPU machine's 16 cores */
    assert_false(gt_tps_fit_prefers_cpu(1742, 1));
    assert_false(gt_tps_fit_prefers_cpu(20000, 128));
    size_t last = 0;
    for (int t = 1; t <= 64; t *= 2) { /* the largest n it takes grows with the threads */
        size_t n = 0;
        while (gt_tps_fit_prefers_cpu(n + 1, t)) n++;
        assert_true(n > last);
        last = n;
    }
}

/* The eigen solver: S U = U D with U^T = the transformed identity. */
static void test_syev(void **state)
{
    (void)state;
    gt_rng r = {5};
    size_t m = 40;
    double *S = malloc(m * m * sizeof(double)), *S0 = malloc(m * m * sizeof(double));
    double *b = calloc(m * m, sizeof(double)), d[40];
    for (size_t j = 0; j < m; j++)
        for (size_t i = j; i < m; i++) S[i + j * m] = S[j + i * m] = gt_rng_range(&r, -1, 1);
    memcpy(S0, S, m * m * sizeof(double));
    for (size_t i = 0; i < m; i++) b[i + i * m] = 1.0;
    GT_ASSERT_OK(gt_tps_syev_apply(S, m, m, d, b, (int)m));
    /* b now holds U^T (column c = U^T e_c), so U[i][k] = b[k + i*m] */
    double worst = 0;
    for (size_t k = 0; k < m; k++)
        for (size_t i = 0; i < m; i++) {
            double su = 0;
            for (size_t j = 0; j < m; j++) su += S0[i + j * m] * b[k + j * m];
            worst = fmax(worst, fabs(su - d[k] * b[k + i * m]));
        }
    if (worst > 1e-12) fail_msg("|S u - d u| = %g", worst);
    free(S); free(S0); free(b);
}

/* GCV: noisy samples of a smooth deformation with known sigma; the lambda
 * that minimises the true error |f_lambda(c) - f_true(c)|^2 (scanned by
 * refitting) and GCV's choice agree within a factor 2. */
static void test_gcv(void **state)
{
    (void)state;
    gt_rng r = {2024};
    size_t n = 300;
    double *src = rand_points(&r, n, -1, 1, false);
    double *clean = deform(&r, src, n, 0.0);
    double *dst = malloc(n * 3 * sizeof(double));
    for (size_t i = 0; i < 3 * n; i++) {
        double u1 = gt_rng_uniform(&r), u2 = gt_rng_uniform(&r);
        dst[i] = clean[i] + 0.02 * sqrt(-2 * log(u1 + 1e-300)) * cos(6.283185307179586 * u2);
    }
    gt_tps_fit_opts o = cpu_opts(GT_TPS_R2LOGR, 0);
    o.gcv = true;
    gt_tps_gcv curve = {0};
    o.gcv_out = &curve;
    gt_tps t;
    gt_tps_init(&t);
    GT_ASSERT_OK(gt_tps_fit(src, dst, n, &o, &t));
    double lg = t.lambda;
    assert_true(curve.npts > 50 && curve.best_lambda == lg);
    double *f = malloc(n * 3 * sizeof(double));
    double best = INFINITY, lbest = 0;
    for (double ll = log(lg) - 3; ll <= log(lg) + 3; ll += 0.1) {
        gt_tps_fit_opts o2 = cpu_opts(GT_TPS_R2LOGR, exp(ll));
        GT_ASSERT_OK(gt_tps_fit(src, dst, n, &o2, &t));
        gt_tps_eval_cpu(&t, src, n, f);
        double e = 0;
        for (size_t i = 0; i < 3 * n; i++) e += (f[i] - clean[i]) * (f[i] - clean[i]);
        if (e < best) { best = e; lbest = exp(ll); }
    }
    printf("GCV lambda %.4g, true-risk optimum %.4g\n", lg, lbest);
    if (!(lg < 2 * lbest && lg > lbest / 2)) fail_msg("GCV %g vs optimum %g", lg, lbest);
    gt_tps_free(&t);
    gt_tps_gcv_free(&curve);
    free(f); free(src); free(clean); free(dst);
}

static void expect_data_error(const double *src, size_t n, const char *needle)
{
    double *dst = malloc((n ? n : 1) * 3 * sizeof(double));
    for (size_t i = 0; i < 3 * n; i++) dst[i] = src[i] * 2;
    gt_tps_fit_opts o = cpu_opts(GT_TPS_R2LOGR, 0);
    gt_tps t;
    gt_tps_init(&t);
    gt_status s = gt_tps_fit(src, dst, n, &o, &t);
    if (s != GT_ERR_DATA || !strstr(gt_errmsg(), needle))
        fail_msg("expected data error with '%s', got %d '%s'", needle, s, gt_errmsg());
    free(dst);
}

static void test_bad_inputs(void **state)
{
    (void)state;
    double few[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    expect_data_error(few, 4, "at least 5");
    double dup[18] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0};
    expect_data_error(dup, 6, "coincide");
    double line[15];
    for (int i = 0; i < 5; i++) { line[3 * i] = i; line[3 * i + 1] = 2 * i; line[3 * i + 2] = -i; }
    expect_data_error(line, 5, "collinear");
    double tilted[3 * 8]; /* plane x + y + z = 1, not z = const */
    gt_rng r = {3};
    for (int i = 0; i < 8; i++) {
        tilted[3 * i] = gt_rng_uniform(&r);
        tilted[3 * i + 1] = gt_rng_uniform(&r);
        tilted[3 * i + 2] = 1 - tilted[3 * i] - tilted[3 * i + 1];
    }
    expect_data_error(tilted, 8, "coplanar");
    double xplane[3 * 8]; /* plane x = 2: coplanar, not collinear */
    for (int i = 0; i < 8; i++) {
        xplane[3 * i] = 2;
        xplane[3 * i + 1] = gt_rng_uniform(&r);
        xplane[3 * i + 2] = gt_rng_uniform(&r);
    }
    expect_data_error(xplane, 8, "coplanar");
    double ring[3 * 6]; /* 3-D but all x,y on a line and z varying: the plane x = y */
    for (int i = 0; i < 6; i++) {
        ring[3 * i] = ring[3 * i + 1] = i * 0.5;
        ring[3 * i + 2] = gt_rng_uniform(&r);
    }
    expect_data_error(ring, 6, "coplanar");
    double nan[15] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, NAN, 1, 1};
    expect_data_error(nan, 5, "NaN");
    double flatline[15] = {0, 0, 0, 1, 1, 0, 2, 2, 0, 3, 3, 0, 4, 4, 0}; /* z = 0 and collinear */
    expect_data_error(flatline, 5, "collinear");
}

/* A large parameter file (the control point lines are formatted in
 * parallel chunks): random bit patterns of every magnitude, subnormals and
 * signed zeros read back bit-identical and in order. */
static void test_params_roundtrip_large(void **state)
{
    (void)state;
    gt_rng r = {181};
    gt_tps t, u;
    gt_tps_init(&t);
    gt_tps_init(&u);
    t.kernel = GT_TPS_R;
    t.lambda = 1e-300;
    t.n = 50000;
    t.c = malloc(3 * t.n * sizeof(double));
    t.w = malloc(3 * t.n * sizeof(double));
    assert_non_null(t.c);
    assert_non_null(t.w);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) t.a[i][j] = gt_rng_range(&r, -1, 1) * pow(10, 3 * i - 4 * j);
    for (size_t k = 0; k < 3 * t.n; k++) {
        uint64_t b = gt_rng_u64(&r);
        if (k % 7 == 0) b &= ~(UINT64_C(0x7ff) << 52); /* subnormal or zero */
        double v;
        memcpy(&v, &b, sizeof v);
        if (!isfinite(v)) v = (double)k;
        t.c[k] = v;
        t.w[k] = gt_rng_range(&r, -1e6, 1e6);
    }
    t.c[5] = -0.0;
    char path[] = "/tmp/tps_params_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    GT_ASSERT_OK(gt_tps_write(path, &t));
    GT_ASSERT_OK(gt_tps_read(path, &u));
    assert_int_equal(u.n, t.n);
    assert_memory_equal(&u.lambda, &t.lambda, sizeof(double));
    assert_memory_equal(u.a, t.a, sizeof t.a);
    assert_memory_equal(u.c, t.c, t.n * 3 * sizeof(double));
    assert_memory_equal(u.w, t.w, t.n * 3 * sizeof(double));
    unlink(path);
    gt_tps_free(&t);
    gt_tps_free(&u);
}

/* Parameter file: write, read back, every double bit-identical. */
static void test_params_roundtrip(void **state)
{
    (void)state;
    gt_rng r = {99};
    size_t n = 30;
    double *src = rand_points(&r, n, -1e3, 1e3, false);
    double *dst = deform(&r, src, n, 0.5);
    gt_tps_fit_opts o = cpu_opts(GT_TPS_R, 0.37);
    gt_tps t, u;
    gt_tps_init(&t);
    gt_tps_init(&u);
    GT_ASSERT_OK(gt_tps_fit(src, dst, n, &o, &t));
    char path[] = "/tmp/tps_params_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    GT_ASSERT_OK(gt_tps_write(path, &t));
    GT_ASSERT_OK(gt_tps_read(path, &u));
    assert_int_equal(u.n, t.n);
    assert_int_equal(u.kernel, t.kernel);
    assert_true(u.planar == t.planar);
    assert_memory_equal(&u.lambda, &t.lambda, sizeof(double));
    assert_memory_equal(u.a, t.a, sizeof t.a);
    assert_memory_equal(u.c, t.c, n * 3 * sizeof(double));
    assert_memory_equal(u.w, t.w, n * 3 * sizeof(double));
    /* a truncated file is a clear data error */
    FILE *f = fopen(path, "r+");
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fclose(f);
    assert_int_equal(truncate(path, len / 2), 0);
    gt_tps v;
    assert_int_equal(gt_tps_read(path, &v), GT_ERR_DATA);
    unlink(path);
    gt_tps_free(&t);
    gt_tps_free(&u);
    free(src);
    free(dst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interpolation),  cmocka_unit_test(test_affine_target),
        cmocka_unit_test(test_large_lambda),   cmocka_unit_test(test_syev),
        cmocka_unit_test(test_cholesky),       cmocka_unit_test(test_wy_sym),
        cmocka_unit_test(test_fit_prefers_cpu),
        cmocka_unit_test(test_gcv),            cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_params_roundtrip),
        cmocka_unit_test(test_params_roundtrip_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
