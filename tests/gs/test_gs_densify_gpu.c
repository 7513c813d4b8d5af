/* gsrender --fit's density control on the GPU (kernels/gs/gs_densify.cu)
 * against the CPU reference (lib/gs/gs_fit_densify.c) on random states of
 * 50k Gaussians (SH degree 3): densify-and-prune without and with a cap on
 * the count, with and without the big-Gaussian prune; MCMC relocation and
 * growth; the opacity reset. Both must give the same count, the same
 * Gaussians in the same order (parameters within 2e-6 relative: nvcc fuses
 * multiply-adds that gcc does not) and the same Adam moments; a split's
 * children must be where the CPU drew them. Exits 77 without a GPU. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gs/gs_fit.h"
#include "gt_config.h"
#include "gt_test.h"
#if GT_HAVE_CUDA
#include "common/gpu_runtime.h"
#include "kernels/gs/gs_densify_cuda.h"
#endif

#if GT_HAVE_CUDA
enum { N = 50000, DEG = 3 };

/* A random state: positions in a cube, log-scales so that about half are
 * "small" at extent 10 (axes 0.01..0.5, percent_dense x extent = 0.1),
 * opacities from 0.001 to 0.99 (some below min_opacity), moments random. */
static void random_state(gt_gs_raw *r, gt_gs_raw *m, gt_gs_raw *v, float *g, float *seen, uint64_t seed)
{
    gt_rng q = {seed};
    assert_int_equal(gt_gs_raw_alloc(r, N, DEG), GT_OK);
    assert_int_equal(gt_gs_raw_alloc(m, N, DEG), GT_OK);
    assert_int_equal(gt_gs_raw_alloc(v, N, DEG), GT_OK);
    gt_gs_raw *all[3] = {r, m, v};
    for (int k = 0; k < 3; k++) {
        gt_gs_raw *x = all[k];
        for (size_t i = 0; i < 3 * (size_t)N; i++) x->pos[i] = (float)gt_rng_range(&q, -3, 3);
        for (size_t i = 0; i < 3 * (size_t)N; i++)
            x->log_scale[i] = k ? (float)gt_rng_range(&q, 0, 1) : (float)log(gt_rng_range(&q, 0.01, 0.5));
        for (size_t i = 0; i < 4 * (size_t)N; i++) x->rot[i] = (float)gt_rng_range(&q, -1, 1);
        for (size_t i = 0; i < N; i++) {
            double op = gt_rng_range(&q, 0.001, 0.99);
            x->logit_opacity[i] = k ? (float)op : (float)log(op / (1 - op));
        }
        for (size_t i = 0; i < (size_t)N * x->sh_k * 3; i++) x->sh[i] = (float)gt_rng_range(&q, -1, 1);
    }
    for (size_t i = 0; i < N; i++) {
        seen[i] = (float)(int)gt_rng_range(&q, 0, 4); /* 0: never seen */
        g[i] = seen[i] * (float)gt_rng_range(&q, 0, 0.0005);
    }
    g[7] = seen[7] = 2; /* ties of equal gradients, ordered by index under a cap */
    g[11] = seen[11] = 2;
}

static void upload_raw(gt_gs_raw *d, const gt_gs_raw *h)
{
    assert_int_equal(gt_gs_cu_raw_alloc(d, h->n, h->sh_degree, "test"), GT_OK);
    assert_int_equal(gt_gs_cu_raw_copy(d, h, 0, NULL), GT_OK);
}

static float *upload(const float *h, size_t n)
{
    float *d;
    assert_int_equal(gt_cu_malloc((void **)&d, n * sizeof(float), "test"), GT_OK);
    assert_int_equal(gt_cu_memcpy_h2d(d, h, n * sizeof(float), NULL), GT_OK);
    return d;
}

/* max relative difference of a device raw's every value against the host's */
static double compare_raw(const char *what, const gt_gs_raw *d, const gt_gs_raw *h)
{
    assert_int_equal(d->n, h->n);
    gt_gs_raw back;
    assert_int_equal(gt_gs_raw_alloc(&back, h->n, h->sh_degree), GT_OK);
    assert_int_equal(gt_gs_cu_raw_copy(&back, d, 1, NULL), GT_OK);
    const float *a[5] = {back.pos, back.log_scale, back.rot, back.logit_opacity, back.sh};
    const float *b[5] = {h->pos, h->log_scale, h->rot, h->logit_opacity, h->sh};
    size_t len[5] = {3 * h->n, 3 * h->n, 4 * h->n, h->n, h->n * (size_t)h->sh_k * 3};
    double worst = 0;
    for (int k = 0; k < 5; k++)
        for (size_t i = 0; i < len[k]; i++) {
            double e = fabs((double)a[k][i] - b[k][i]) / fmax(1.0, fabs(b[k][i]));
            if (!(e <= worst)) worst = e;
        }
    printf("  %s: %zu Gaussians, max relative difference %.2e\n", what, h->n, worst);
    gt_gs_raw_free(&back);
    return worst;
}

static void densify_case(size_t cap, bool prune_big, uint64_t seed)
{
    gt_gs_raw r, m, v, dr, dm, dv;
    float *g = malloc(N * sizeof(float)), *seen = malloc(N * sizeof(float));
    random_state(&r, &m, &v, g, seen, seed);
    upload_raw(&dr, &r), upload_raw(&dm, &m), upload_raw(&dv, &v);
    gt_gs_grad_stats hs = {g, seen}, ds = {upload(g, N), upload(seen, N)};
    gt_gs_densify_opts o;
    gt_gs_densify_opts_default(&o);
    o.on = true;
    o.max_gaussians = cap;
    gt_gs_densify_count cc, gc;
    assert_int_equal(gt_gs_densify_prune(&r, &m, &v, &hs, &o, 10.0, prune_big, seed * 31, &cc), GT_OK);
    assert_int_equal(gt_gs_cu_densify_prune(&dr, &dm, &dv, &ds, &o, 10.0, prune_big, seed * 31, &gc, NULL), GT_OK);
    printf("densify (cap %zu%s): %zu -> %zu: %zu cloned, %zu split, %zu pruned, %zu capped (GPU %zu -> %zu)\n", cap,
           prune_big ? ", big pruned" : "", cc.n_before, cc.n_after, cc.cloned, cc.split, cc.pruned, cc.capped,
           gc.n_before, gc.n_after);
    /* the scene exercises every path: uncapped, many of each; capped, the
     * candidates fill the cap exactly and the rest are counted */
    if (!cap) assert_true(cc.cloned > 100 && cc.split > 100 && cc.pruned > 100);
    else assert_true(cc.capped > 0 && cc.n_before + cc.cloned + cc.split == cap && cc.pruned > 100);
    assert_int_equal(gc.n_after, cc.n_after);
    assert_int_equal(gc.cloned, cc.cloned);
    assert_int_equal(gc.split, cc.split);
    assert_int_equal(gc.pruned, cc.pruned);
    assert_int_equal(gc.capped, cc.capped);
    assert_true(compare_raw("parameters", &dr, &r) <= 2e-6);
    assert_true(compare_raw("first moments", &dm, &m) == 0);
    assert_true(compare_raw("second moments", &dv, &v) == 0);
    gt_gs_cu_raw_free(&dr), gt_gs_cu_raw_free(&dm), gt_gs_cu_raw_free(&dv);
    gt_cu_free(ds.grad2d), gt_cu_free(ds.seen);
    gt_gs_raw_free(&r), gt_gs_raw_free(&m), gt_gs_raw_free(&v);
    free(g), free(seen);
}
#endif

static void test_densify(void **state)
{
    (void)state;
#if GT_HAVE_CUDA
    densify_case(0, false, 3);
    densify_case(0, true, 4);
    densify_case(N + 700, true, 5); /* fewer than the candidates fit */
#endif
}

static void test_mcmc(void **state)
{
    (void)state;
#if GT_HAVE_CUDA
    for (int run = 0; run < 2; run++) {
        gt_gs_raw r, m, v, dr, dm, dv;
        float *g = malloc(N * sizeof(float)), *seen = malloc(N * sizeof(float));
        random_state(&r, &m, &v, g, seen, 20 + run);
        /* run 1: a third of them dead */
        for (size_t i = 0; run == 1 && i < N; i += 3) r.logit_opacity[i] = -9.0f;
        upload_raw(&dr, &r), upload_raw(&dm, &m), upload_raw(&dv, &v);
        gt_gs_densify_opts o;
        gt_gs_densify_opts_default(&o);
        o.mcmc = true;
        o.max_gaussians = run ? N + 1000 : 0; /* growth capped, or 5 % */
        gt_gs_densify_count cc, gc;
        assert_int_equal(gt_gs_mcmc_relocate(&r, &m, &v, &o, 77 + run, &cc), GT_OK);
        assert_int_equal(gt_gs_cu_mcmc_relocate(&dr, &dm, &dv, &o, 77 + run, &gc, NULL), GT_OK);
        printf("mcmc: %zu -> %zu: %zu relocated, %zu added (GPU %zu relocated, %zu added)\n", cc.n_before, cc.n_after,
               cc.relocated, cc.added, gc.relocated, gc.added);
        assert_true(cc.relocated > (run ? N / 3 - 10 : 10));
        assert_int_equal(cc.added, run ? 1000 : N / 20);
        assert_int_equal(gc.n_after, cc.n_after);
        assert_int_equal(gc.relocated, cc.relocated);
        assert_int_equal(gc.added, cc.added);
        /* the draws: the same sources; the opacity, the sharing's pow and
         * the logit in double on both (CUDA's within 2 ulp of glibc's),
         * rounded to float */
        assert_true(compare_raw("parameters", &dr, &r) <= 2e-6);
        assert_true(compare_raw("first moments", &dm, &m) == 0);
        assert_true(compare_raw("second moments", &dv, &v) == 0);
        gt_gs_cu_raw_free(&dr), gt_gs_cu_raw_free(&dm), gt_gs_cu_raw_free(&dv);
        gt_gs_raw_free(&r), gt_gs_raw_free(&m), gt_gs_raw_free(&v);
        free(g), free(seen);
    }
#endif
}

static void test_opacity_cap(void **state)
{
    (void)state;
#if GT_HAVE_CUDA
    const size_t n = 1000;
    float *l = malloc(n * sizeof(float)), *h = malloc(n * sizeof(float));
    gt_rng q = {9};
    for (size_t i = 0; i < n; i++) l[i] = (float)gt_rng_range(&q, -8, 8);
    l[3] = NAN;
    float *dl = upload(l, n), *dm = upload(l, n), *dv = upload(l, n);
    assert_int_equal(gt_gs_cu_opacity_cap(dl, dm, dv, n, 0.01, NULL), GT_OK);
    gt_gs_opacity_cap(l, n, 0.01);
    assert_int_equal(gt_cu_memcpy_d2h(h, dl, n * sizeof(float), NULL), GT_OK);
    assert_memory_equal(h, l, n * sizeof(float));
    assert_int_equal(gt_cu_memcpy_d2h(h, dm, n * sizeof(float), NULL), GT_OK);
    for (size_t i = 0; i < n; i++) assert_true(h[i] == 0.0f);
    gt_cu_free(dl), gt_cu_free(dm), gt_cu_free(dv);
    free(l), free(h);
#endif
}

int main(void)
{
    gt_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_densify),
        cmocka_unit_test(test_mcmc),
        cmocka_unit_test(test_opacity_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
