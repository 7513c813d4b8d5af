/* The GPU differentiable renderer (gt_gs_diff) against the CPU reference
 * (gt_gs_backward_cpu) on random scenes of hundreds to thousands of
 * Gaussians, 256x192 and sizes that are not multiples of the tile, SH
 * degrees 1-3, antialias and the reference's square binning:
 *  - forward image equal to gt_gs_gpu_render's of the activated scene to
 *    1e-5 (max abs over the channels), but for at most 2 pixels (see below);
 *  - gradients per group (pos, log_scale, rot, logit_opacity, SH): relative
 *    error ||g_gpu - g_cpu||_2 / ||g_cpu||_2 <= 1e-3 (float atomics and a
 *    float replay against the reference's double sums), also with the
 *    reference's variant (ref_grad); the elementwise
 *    max |g_gpu - g_cpu| / max(|g_cpu|, 0.01 max|g_cpu|) is printed;
 *  - a second backward of the same forward adds the same gradient again.
 * Exits 77 without a GPU. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gs/gs_grad.h"
#include "gs_testutil.h"
#include "common/gpu_runtime.h"

/* Device copy of a host gt_gs_raw (upload) or zeroed arrays (src NULL). */
static void dev_raw(gt_gs_raw *d, const gt_gs_raw *h)
{
    *d = *h;
    float **dp[5] = {&d->pos, &d->log_scale, &d->rot, &d->logit_opacity, &d->sh};
    float *hp[5] = {h->pos, h->log_scale, h->rot, h->logit_opacity, h->sh};
    size_t len[5] = {3 * h->n, 3 * h->n, 4 * h->n, h->n, h->n * (size_t)h->sh_k * 3};
    for (int k = 0; k < 5; k++) {
        GT_ASSERT_OK(gt_cu_malloc((void **)dp[k], len[k] * sizeof(float) + 16, "test"));
        GT_ASSERT_OK(gt_cu_memcpy_h2d(*dp[k], hp[k], len[k] * sizeof(float), NULL));
    }
}

static void dev_raw_free(gt_gs_raw *d)
{
    gt_cu_free(d->pos);
    gt_cu_free(d->log_scale);
    gt_cu_free(d->rot);
    gt_cu_free(d->logit_opacity);
    gt_cu_free(d->sh);
}

static void download(gt_gs_raw *h, const gt_gs_raw *d)
{
    float *dp[5] = {d->pos, d->log_scale, d->rot, d->logit_opacity, d->sh};
    float *hp[5] = {h->pos, h->log_scale, h->rot, h->logit_opacity, h->sh};
    size_t len[5] = {3 * h->n, 3 * h->n, 4 * h->n, h->n, h->n * (size_t)h->sh_k * 3};
    for (int k = 0; k < 5; k++) GT_ASSERT_OK(gt_cu_memcpy_d2h(hp[k], dp[k], len[k] * sizeof(float), NULL));
}

static double group_err(const char *name, const float *g, const float *c, size_t m, double scale)
{
    double num = 0, den = 0, mx = 0, worst = 0;
    for (size_t j = 0; j < m; j++) {
        double d = (double)g[j] - c[j] * scale;
        num += d * d;
        den += (double)c[j] * scale * c[j] * scale;
        mx = fmax(mx, fabs(c[j] * scale));
    }
    for (size_t j = 0; j < m; j++)
        worst = fmax(worst, fabs((double)g[j] - c[j] * scale) / fmax(fabs(c[j] * scale), 0.01 * mx));
    double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    print_message("  %-14s %7zu values, |cpu| %.3e, rel. error %.2e (elementwise max %.2e)\n", name, m, sqrt(den),
                  rel, worst);
    assert_true(den > 0);
    return rel;
}

static void check(size_t n, int deg, int w, int h, int antialias, int square, int ref, uint64_t seed)
{
    print_message("%zu Gaussians, SH %d, %dx%d%s%s%s\n", n, deg, w, h, antialias ? ", antialias" : "",
                  square ? ", square binning" : "", ref ? ", reference gradients" : "");
    gt_gs_scene s;
    GT_ASSERT_OK(gs_random_scene(&s, n, deg, 0.01, 0.15, seed));
    gt_gs_raw r;
    GT_ASSERT_OK(gt_gs_raw_from_scene(&s, &r));
    gt_rng rng = {seed + 3};
    for (size_t i = 0; i < n; i++) {
        float l = (float)gt_rng_range(&rng, 0.5, 2.0);
        for (int k = 0; k < 4; k++) r.rot[4 * i + k] *= l;
    }
    gt_gs_scene act;
    GT_ASSERT_OK(gt_gs_raw_to_scene(&r, &act));
    gt_gs_camera c;
    GT_ASSERT_OK(gs_random_camera(&c, 3.0, w, h, seed + 1));
    gt_gs_params p;
    gt_gs_params_init(&p);
    p.antialias = antialias;
    p.square_binning = square;
    p.ref_grad = ref;
    p.sh_half = false; /* the renderer's image below is compared to the float forward */
    p.bg[0] = 0.3f, p.bg[1] = 0.1f, p.bg[2] = 0.7f;
    size_t np = (size_t)w * h;
    float *dl = malloc(3 * np * sizeof *dl), *rgb_c = malloc(3 * np * sizeof *rgb_c),
          *rgb_g = malloc(3 * np * sizeof *rgb_g);
    for (size_t i = 0; i < 3 * np; i++) dl[i] = (float)gt_rng_range(&rng, -1, 1);

    /* CPU reference */
    gt_gs_raw gc;
    GT_ASSERT_OK(gt_gs_raw_alloc(&gc, n, deg));
    float *hs_g = calloc(n, sizeof(float)), *hs_n = calloc(n, sizeof(float));
    gt_gs_grad_stats hs = {hs_g, hs_n};
    GT_ASSERT_OK(gt_gs_backward_cpu(&r, deg, &c, &p, dl, rgb_c, &gc, &hs));

    /* GPU */
    gt_gs_raw dr, dg, gg;
    dev_raw(&dr, &r);
    GT_ASSERT_OK(gt_gs_raw_alloc(&gg, n, deg));
    dev_raw(&dg, &gg); /* zeroed */
    float *d_rgb, *d_dl;
    GT_ASSERT_OK(gt_cu_malloc((void **)&d_rgb, 3 * np * sizeof(float), "test"));
    GT_ASSERT_OK(gt_cu_malloc((void **)&d_dl, 3 * np * sizeof(float), "test"));
    GT_ASSERT_OK(gt_cu_memcpy_h2d(d_dl, dl, 3 * np * sizeof(float), NULL));
    gt_gs_diff *d;
    GT_ASSERT_OK(gt_gs_diff_create(n, deg, w + 7, h + 5, NULL, &d));
    assert_true(gt_gs_diff_bytes(d) > n * 50);
    GT_ASSERT_OK(gt_gs_diff_forward(d, &dr, deg, &c, &p, d_rgb));
    gt_gs_grad_stats ds;
    GT_ASSERT_OK(gt_cu_malloc((void **)&ds.grad2d, n * sizeof(float), "test"));
    GT_ASSERT_OK(gt_cu_malloc((void **)&ds.seen, n * sizeof(float), "test"));
    GT_ASSERT_OK(gt_cu_memset(ds.grad2d, 0, n * sizeof(float), NULL));
    GT_ASSERT_OK(gt_cu_memset(ds.seen, 0, n * sizeof(float), NULL));
    GT_ASSERT_OK(gt_gs_diff_backward(d, d_dl, &dg, &ds));
    GT_ASSERT_OK(gt_cu_memcpy_d2h(rgb_g, d_rgb, 3 * np * sizeof(float), NULL));
    download(&gg, &dg);

    /* the forward is the renderer's image */
    gt_gs_gpu *gpu;
    GT_ASSERT_OK(gt_gs_gpu_create(&act, &p, &gpu));
    gt_gs_image im;
    GT_ASSERT_OK(gt_gs_image_alloc(&im, w, h));
    GT_ASSERT_OK(gt_gs_gpu_render(gpu, &c, &im, GT_GS_OUT_FLOAT, NULL));
    double worst = 0, worst_cpu = 0, cover = 0;
    size_t over = 0;
    for (size_t i = 0; i < np; i++) {
        double px = 0;
        for (int ch = 0; ch < 3; ch++) {
            px = fmax(px, fabs(rgb_g[ch * np + i] - im.rgb[3 * i + ch]));
            worst_cpu = fmax(worst_cpu, fabs(rgb_g[ch * np + i] - rgb_c[ch * np + i]));
            cover += fabs(rgb_c[ch * np + i] - p.bg[ch]);
        }
        worst = fmax(worst, px);
        over += px > 1e-5;
    }
    print_message("  image: max |gpu diff - gpu render| %.2e (%zu pixels over 1e-5), max |gpu - cpu| %.2e\n", worst,
                  over, worst_cpu);
    /* the two activate the parameters with the device's and the host's
     * expf, which may differ by an ulp: a pixel where that moves an alpha
     * across 1/255 or the transmittance across 1e-4 may differ by more
     * (expected well under one per image); every other pixel to 1e-5 */
    assert_true(over <= 2);
    assert_true(cover > 0.1 * np); /* the scene is in view */

    size_t shn = n * (size_t)gc.sh_k * 3;
    assert_true(group_err("pos", gg.pos, gc.pos, 3 * n, 1) <= 1e-3);
    assert_true(group_err("log_scale", gg.log_scale, gc.log_scale, 3 * n, 1) <= 1e-3);
    assert_true(group_err("rot", gg.rot, gc.rot, 4 * n, 1) <= 1e-3);
    assert_true(group_err("logit_opacity", gg.logit_opacity, gc.logit_opacity, n, 1) <= 1e-3);
    assert_true(group_err("sh", gg.sh, gc.sh, shn, 1) <= 1e-3);

    /* densification statistics: the same views counted (the GPU's exact
     * tile count may drop a Gaussian whose bounding rectangle the CPU
     * keeps: then it drew no pixel, so its CPU gradient is 0) and the same
     * |dL/d 2-D mean| */
    float *gs_g = malloc(n * sizeof(float)), *gs_n = malloc(n * sizeof(float));
    GT_ASSERT_OK(gt_cu_memcpy_d2h(gs_g, ds.grad2d, n * sizeof(float), NULL));
    GT_ASSERT_OK(gt_cu_memcpy_d2h(gs_n, ds.seen, n * sizeof(float), NULL));
    size_t seen_c = 0, seen_g = 0, differ = 0;
    for (size_t i = 0; i < n; i++) {
        seen_c += hs_n[i] > 0, seen_g += gs_n[i] > 0;
        assert_true(gs_n[i] == 0 || gs_n[i] == 1);
        if (gs_n[i] != hs_n[i]) {
            differ++;
            assert_true(hs_g[i] == 0 && gs_g[i] == 0);
        }
    }
    print_message("  seen: cpu %zu, gpu %zu Gaussians\n", seen_c, seen_g);
    assert_true(seen_g > n / 10);
    assert_true(differ <= n / 100 + 1);
    assert_true(group_err("grad2d", gs_g, hs_g, n, 1) <= 1e-3);
    free(gs_g), free(gs_n), free(hs_g), free(hs_n);
    gt_cu_free(ds.grad2d), gt_cu_free(ds.seen);

    /* a second backward adds the same again */
    GT_ASSERT_OK(gt_gs_diff_backward(d, d_dl, &dg, NULL));
    download(&gg, &dg);
    assert_true(group_err("pos (twice)", gg.pos, gc.pos, 3 * n, 2) <= 1e-3);
    assert_true(group_err("sh (twice)", gg.sh, gc.sh, shn, 2) <= 1e-3);

    gt_gs_image_free(&im);
    gt_gs_gpu_destroy(gpu);
    gt_gs_diff_destroy(d);
    gt_cu_free(d_rgb);
    gt_cu_free(d_dl);
    dev_raw_free(&dr);
    dev_raw_free(&dg);
    gt_gs_raw_free(&gg);
    gt_gs_raw_free(&gc);
    gt_gs_raw_free(&r);
    gt_gs_scene_free(&act);
    gt_gs_scene_free(&s);
    free(dl);
    free(rgb_c);
    free(rgb_g);
}

static void test_small(void **st)
{
    (void)st;
    check(300, 3, 256, 192, 0, 0, 0, 101);
}
static void test_odd_size(void **st)
{
    (void)st;
    check(2000, 2, 203, 117, 0, 0, 0, 102);
}
static void test_antialias(void **st)
{
    (void)st;
    check(1500, 1, 256, 192, 1, 0, 0, 103);
}
static void test_square_binning(void **st)
{
    (void)st;
    check(3000, 3, 250, 190, 0, 1, 0, 104);
    check(1000, 3, 256, 192, 0, 0, 1, 105);
}

int main(void)
{
    gt_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small),
        cmocka_unit_test(test_odd_size),
        cmocka_unit_test(test_antialias),
        cmocka_unit_test(test_square_binning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
