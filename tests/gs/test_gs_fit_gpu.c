/* gsrender --fit's GPU kernels against the CPU oracle: the loss, its parts
 * and dLoss/dimage (kernels/gs/gs_fit.cu vs lib/gs/gs_fit_loss.c) on images
 * of odd sizes, and Adam steps with the SH DC/rest split (vs
 * gt_gs_adam_cpu), the 8-bit training images' conversion and MCMC's
 * regulariser gradients and position noise (vs gs_fit_mcmc.h on the CPU). Exits 77
 * without a GPU. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gs/gs_fit.h"
#include "gt_config.h"
#include "gt_test.h"
#if GT_HAVE_CUDA
#include "common/gpu_runtime.h"
#include "kernels/gs/gs_fit_cuda.h"
#endif

#if GT_HAVE_CUDA
static float *upload(const float *h, size_t n)
{
    float *d = NULL;
    assert_int_equal(gt_cu_malloc((void **)&d, n * sizeof(float), "test"), GT_OK);
    assert_int_equal(gt_cu_memcpy_h2d(d, h, n * sizeof(float), NULL), GT_OK);
    return d;
}

static void loss_case(int w, int h, uint64_t seed)
{
    size_t n = 3 * (size_t)w * h;
    float *x = malloc(n * 4), *y = malloc(n * 4), *gc = malloc(n * 4), *gg = malloc(n * 4);
    gt_rng r = {seed};
    for (size_t i = 0; i < n; i++) {
        /* a smooth image plus noise, the rendering a noisy copy */
        size_t p = i % ((size_t)w * h);
        double u = (double)(p % w) / w, v = (double)(p / w) / h;
        y[i] = (float)(0.5 + 0.4 * sin(6 * u + i / ((size_t)w * h)) * cos(4 * v));
        x[i] = (float)fmin(1, fmax(0, y[i] + gt_rng_range(&r, -0.1, 0.1)));
    }
    gt_gs_loss lc;
    assert_int_equal(gt_gs_loss_cpu(x, y, w, h, 0.2, &lc, gc), GT_OK);
    gt_gs_cu_loss *L;
    assert_int_equal(gt_gs_cu_loss_create(w, h, NULL, &L), GT_OK);
    float *dx = upload(x, n), *dy = upload(y, n), *dg = upload(gc, n);
    assert_int_equal(gt_gs_cu_loss_eval(L, dx, dy, w, h, 0.2, dg), GT_OK);
    double loss, l1, ssim, sse;
    assert_int_equal(gt_gs_cu_loss_fetch(L, &loss, &l1, &ssim, &sse), GT_OK);
    assert_int_equal(gt_cu_memcpy_d2h(gg, dg, n * 4, NULL), GT_OK);
    double num = 0, den = 0, se = 0;
    for (size_t i = 0; i < n; i++) {
        num += (gg[i] - gc[i]) * (double)(gg[i] - gc[i]);
        den += (double)gc[i] * gc[i];
        se += ((double)x[i] - y[i]) * ((double)x[i] - y[i]);
    }
    double rel = sqrt(num / den);
    printf("%4dx%-4d loss cpu %.7f gpu %.7f  ssim cpu %.7f gpu %.7f  gradient rel. error %.2e\n", w, h, lc.loss,
           loss, lc.ssim, ssim, rel);
    assert_true(fabs(loss - lc.loss) <= 1e-5 * fabs(lc.loss));
    assert_true(fabs(l1 - lc.l1) <= 1e-5 * lc.l1);
    assert_true(fabs(ssim - lc.ssim) <= 1e-5);
    assert_true(fabs(sse - se) <= 1e-5 * se);
    assert_true(rel < 1e-3); /* float moments (e_xx - mu_x^2 cancels) vs double: ~1e-5 */
    /* without a gradient: the same sums */
    assert_int_equal(gt_gs_cu_loss_eval(L, dx, dy, w, h, 0.2, NULL), GT_OK);
    double loss2;
    assert_int_equal(gt_gs_cu_loss_fetch(L, &loss2, NULL, NULL, NULL), GT_OK);
    assert_true(fabs(loss2 - loss) <= 1e-9);
    gt_cu_free(dx), gt_cu_free(dy), gt_cu_free(dg);
    gt_gs_cu_loss_destroy(L);
    free(x), free(y), free(gc), free(gg);
}
#endif

static void test_loss(void **state)
{
    (void)state;
#if GT_HAVE_CUDA
    loss_case(37, 29, 1);
    loss_case(640, 361, 2);
    loss_case(1920, 1080, 3);
#endif
}

static void test_adam(void **state)
{
    (void)state;
#if GT_HAVE_CUDA
    const size_t n = 48 * 1001; /* SH of degree 3: 48 floats per Gaussian */
    float *p = malloc(n * 4), *g = malloc(n * 4), *m = calloc(n, 4), *v = calloc(n, 4), *pg = malloc(n * 4);
    gt_rng r = {5};
    for (size_t i = 0; i < n; i++) p[i] = (float)gt_rng_range(&r, -1, 1);
    float *dp = upload(p, n), *dm = upload(m, n), *dv = upload(v, n), *dg = NULL;
    assert_int_equal(gt_cu_malloc((void **)&dg, n * 4, "test"), GT_OK);
    for (int t = 1; t <= 5; t++) {
        for (size_t i = 0; i < n; i++) g[i] = (float)gt_rng_range(&r, -1e-3, 1e-3) * (t == 3 ? 0 : 1);
        assert_int_equal(gt_cu_memcpy_h2d(dg, g, n * 4, NULL), GT_OK);
        gt_gs_adam_cpu(p, g, m, v, n, 0.0025, 0.000125, 48, t);
        assert_int_equal(gt_gs_cu_adam(dp, dg, dm, dv, n, 0.0025, 0.000125, 48, t, NULL), GT_OK);
    }
    assert_int_equal(gt_cu_memcpy_d2h(pg, dp, n * 4, NULL), GT_OK);
    double dmax = 0;
    for (size_t i = 0; i < n; i++) dmax = fmax(dmax, fabs((double)pg[i] - p[i]));
    printf("Adam, 5 steps of %zu parameters: max |gpu - cpu| %.2e\n", n, dmax);
    assert_true(dmax < 1e-6); /* steps are ~1e-3: float rounding only */
    gt_cu_free(dp), gt_cu_free(dm), gt_cu_free(dv), gt_cu_free(dg);
    free(p), free(g), free(m), free(v), free(pg);
#endif
}

static void test_u8(void **state)
{
    (void)state;
#if GT_HAVE_CUDA
    unsigned char b[256];
    float f[256], *df = NULL;
    unsigned char *db = NULL;
    for (int i = 0; i < 256; i++) b[i] = (unsigned char)i;
    assert_int_equal(gt_cu_malloc((void **)&db, 256, "test"), GT_OK);
    assert_int_equal(gt_cu_malloc((void **)&df, 256 * 4, "test"), GT_OK);
    assert_int_equal(gt_cu_memcpy_h2d(db, b, 256, NULL), GT_OK);
    assert_int_equal(gt_gs_cu_u8_to_float(db, df, 256, NULL), GT_OK);
    assert_int_equal(gt_cu_memcpy_d2h(f, df, 256 * 4, NULL), GT_OK);
    for (int i = 0; i < 256; i++) assert_true(fabsf(f[i] - i / 255.0f) <= 1e-7f);
    gt_cu_free(db), gt_cu_free(df);
#endif
}

/* MCMC's regulariser gradients and position noise: the kernels draw the
 * same noise as the CPU (counter-based) for the same Gaussians */
static void test_mcmc(void **state)
{
    (void)state;
#if GT_HAVE_CUDA
    const size_t n = 5003;
    gt_gs_raw r, g, rg, gg;
    assert_int_equal(gt_gs_raw_alloc(&r, n, 0), GT_OK);
    assert_int_equal(gt_gs_raw_alloc(&g, n, 0), GT_OK);
    gt_rng q = {31};
    for (size_t i = 0; i < n; i++) {
        for (int a = 0; a < 3; a++)
            r.pos[3 * i + a] = (float)gt_rng_range(&q, -1, 1), r.log_scale[3 * i + a] = (float)gt_rng_range(&q, -5, -1);
        for (int a = 0; a < 4; a++) r.rot[4 * i + a] = (float)gt_rng_range(&q, -1, 1);
        r.logit_opacity[i] = (float)gt_rng_range(&q, -8, 4); /* transparent to opaque */
    }
    /* device copies */
    float **hs[4] = {&r.pos, &r.log_scale, &r.rot, &r.logit_opacity}, **gs[4] = {&g.pos, &g.log_scale, &g.rot,
                                                                                      &g.logit_opacity};
    size_t len[4] = {3 * n, 3 * n, 4 * n, n};
    rg = r, gg = g;
    float **ds[4] = {&rg.pos, &rg.log_scale, &rg.rot, &rg.logit_opacity}, **dg[4] = {&gg.pos, &gg.log_scale, &gg.rot,
                                                                                          &gg.logit_opacity};
    for (int k = 0; k < 4; k++) *ds[k] = upload(*hs[k], len[k]), *dg[k] = upload(*gs[k], len[k]);
    gt_gs_mcmc_reg_cpu(&r, 0.01, 0.02, &g);
    assert_int_equal(gt_gs_cu_mcmc_reg(&rg, 0.01, 0.02, &gg, NULL), GT_OK);
    gt_gs_mcmc_noise_cpu(&r, 0.5, 77, 3);
    assert_int_equal(gt_gs_cu_mcmc_noise(&rg, 0.5, 77, 3, NULL), GT_OK);
    float *h = malloc(3 * n * sizeof(float));
    double worst = 0, moved = 0;
    assert_int_equal(gt_cu_memcpy_d2h(h, rg.pos, 3 * n * sizeof(float), NULL), GT_OK);
    for (size_t i = 0; i < 3 * n; i++) worst = fmax(worst, fabs(h[i] - r.pos[i]));
    for (size_t i = 0; i < n; i++) moved += r.logit_opacity[i] < -6 ? 1 : 0;
    printf("mcmc noise: max |gpu - cpu| %.2e over %zu positions (%.0f nearly transparent)\n", worst, 3 * n, moved);
    assert_true(worst <= 1e-6);
    assert_int_equal(gt_cu_memcpy_d2h(h, gg.log_scale, 3 * n * sizeof(float), NULL), GT_OK);
    for (size_t i = 0; i < 3 * n; i++) assert_true(fabsf(h[i] - g.log_scale[i]) <= 1e-6f * fabsf(g.log_scale[i]) + 1e-12f);
    assert_int_equal(gt_cu_memcpy_d2h(h, gg.logit_opacity, n * sizeof(float), NULL), GT_OK);
    for (size_t i = 0; i < n; i++)
        assert_true(fabsf(h[i] - g.logit_opacity[i]) <= 1e-6f * fabsf(g.logit_opacity[i]) + 1e-12f);
    free(h);
    for (int k = 0; k < 4; k++) gt_cu_free(*ds[k]), gt_cu_free(*dg[k]);
    gt_gs_raw_free(&r), gt_gs_raw_free(&g);
#endif
}

int main(void)
{
    gt_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loss),
        cmocka_unit_test(test_adam),
        cmocka_unit_test(test_u8),
        cmocka_unit_test(test_mcmc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
