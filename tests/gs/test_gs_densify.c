/* gsrender --fit --densify's host step (lib/gs/gs_fit_densify.c) against
 * the reference's rules: which Gaussians are cloned, split and pruned, what
 * the copies and children hold (parameters, zero Adam moments, scale / 1.6,
 * children drawn from the parent's own covariance), the cap on the count,
 * the opacity reset, the default window; the CPU backward's
 * densification statistics (views counted, |dL/d 2-D mean| in NDC units);
 * and the MCMC strategy's pieces (opacity sharing, relocation and growth,
 * position noise, regulariser gradients). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gs/gs_fit.h"
#include "gs/gs_fit_mcmc.h"
#include "gs/gs_math.h"
#include "gt_test.h"

static float logit(double p)
{
    return (float)log(p / (1 - p));
}

/* Gaussian i: position (i, 2i, 3i), every axis `scale`, rotation w = 1,
 * opacity op, SH coefficient k = i + k/100; moments m = 1 + i, v = 2 + i. */
static void set_one(gt_gs_raw *r, gt_gs_raw *m, gt_gs_raw *v, size_t i, float scale, double op)
{
    size_t k3 = (size_t)r->sh_k * 3;
    for (int a = 0; a < 3; a++) r->pos[3 * i + a] = (float)(i * (a + 1)), r->log_scale[3 * i + a] = logf(scale);
    r->rot[4 * i] = 1, r->rot[4 * i + 1] = r->rot[4 * i + 2] = r->rot[4 * i + 3] = 0;
    r->logit_opacity[i] = logit(op);
    for (size_t k = 0; k < k3; k++) r->sh[k3 * i + k] = (float)i + k / 100.0f;
    gt_gs_raw *mv[2] = {m, v};
    for (int q = 0; q < 2; q++) {
        gt_gs_raw *x = mv[q];
        float val = (float)(q + 1 + i);
        for (int a = 0; a < 3; a++) x->pos[3 * i + a] = x->log_scale[3 * i + a] = val;
        for (int a = 0; a < 4; a++) x->rot[4 * i + a] = val;
        x->logit_opacity[i] = val;
        for (size_t k = 0; k < k3; k++) x->sh[k3 * i + k] = val;
    }
}

typedef struct fixture {
    gt_gs_raw r, m, v;
    float g[8], seen[8];
} fixture;

/* extent 10: percent_dense 0.01 -> axes up to 0.1 are "small"; big: 1.0 */
static void make(fixture *f, size_t n)
{
    assert_int_equal(gt_gs_raw_alloc(&f->r, n, 1), GT_OK);
    assert_int_equal(gt_gs_raw_alloc(&f->m, n, 1), GT_OK);
    assert_int_equal(gt_gs_raw_alloc(&f->v, n, 1), GT_OK);
    memset(f->g, 0, sizeof f->g);
    memset(f->seen, 0, sizeof f->seen);
}

static void unmake(fixture *f)
{
    gt_gs_raw_free(&f->r), gt_gs_raw_free(&f->m), gt_gs_raw_free(&f->v);
}

static void test_clone_split_prune(void **state)
{
    (void)state;
    fixture f;
    make(&f, 5);
    set_one(&f.r, &f.m, &f.v, 0, 0.05f, 0.5); /* small, high gradient: cloned */
    set_one(&f.r, &f.m, &f.v, 1, 0.5f, 0.5);  /* large, high gradient: split */
    set_one(&f.r, &f.m, &f.v, 2, 0.05f, 0.5); /* low gradient: kept */
    set_one(&f.r, &f.m, &f.v, 3, 0.05f, 0.001); /* nearly transparent: pruned */
    set_one(&f.r, &f.m, &f.v, 4, 2.0f, 0.5);  /* larger than 0.1 x extent: pruned only with prune_big */
    /* mean gradients 3e-4, 3e-4, 1e-4 (sum over 2 views), 0, 0 */
    float g[5] = {6e-4f, 9e-4f, 2e-4f, 0, 0}, seen[5] = {2, 3, 2, 1, 0};
    gt_gs_grad_stats st = {g, seen};
    gt_gs_densify_opts o;
    gt_gs_densify_opts_default(&o);
    uint64_t rng = 1;
    gt_gs_densify_count c;
    assert_int_equal(gt_gs_densify_prune(&f.r, &f.m, &f.v, &st, &o, 10.0, false, rng, &c), GT_OK);
    assert_int_equal(c.cloned, 1);
    assert_int_equal(c.split, 1);
    assert_int_equal(c.pruned, 1);
    assert_int_equal(c.n_before, 5);
    /* survivors 0, 2, 4; the clone of 0; the two children of 1 */
    assert_int_equal(c.n_after, 6);
    assert_int_equal(f.r.n, 6);
    float want_x[4] = {0, 2, 4, 0};
    for (int i = 0; i < 4; i++) assert_float_equal(f.r.pos[3 * i], want_x[i], 0);
    /* survivors keep their moments, the clone starts from zero */
    assert_float_equal(f.m.pos[3 * 1], 1 + 2, 0);
    assert_float_equal(f.v.sh[f.r.sh_k * 3 * 2], 2 + 4, 0);
    assert_float_equal(f.m.logit_opacity[3], 0, 0);
    assert_float_equal(f.v.sh[f.r.sh_k * 3 * 3 + 5], 0, 0);
    /* the clone is a copy of Gaussian 0 */
    assert_float_equal(f.r.log_scale[3 * 3], logf(0.05f), 0);
    assert_float_equal(f.r.sh[f.r.sh_k * 3 * 3 + 4], 0.04f, 1e-7);
    /* children: scale / 1.6, the parent's colour and opacity, zero moments */
    for (int i = 4; i < 6; i++) {
        for (int a = 0; a < 3; a++) assert_float_equal(f.r.log_scale[3 * i + a], logf(0.5f / 1.6f), 1e-6);
        assert_float_equal(f.r.logit_opacity[i], logit(0.5), 1e-6);
        assert_float_equal(f.r.sh[f.r.sh_k * 3 * i + 3], 1.03f, 1e-6);
        assert_float_equal(f.m.pos[3 * i], 0, 0);
        /* near the parent's centre (1, 2, 3): within 6 of its sigmas */
        for (int a = 0; a < 3; a++) assert_true(fabsf(f.r.pos[3 * i + a] - (float)(a + 1)) < 6 * 0.5f);
    }
    unmake(&f);

    /* prune_big (after the first opacity reset): the 2.0 axis goes too */
    make(&f, 2);
    set_one(&f.r, &f.m, &f.v, 0, 0.05f, 0.5);
    set_one(&f.r, &f.m, &f.v, 1, 2.0f, 0.5);
    gt_gs_grad_stats st2 = {f.g, f.seen};
    assert_int_equal(gt_gs_densify_prune(&f.r, &f.m, &f.v, &st2, &o, 10.0, true, rng, &c), GT_OK);
    assert_int_equal(c.n_after, 1);
    assert_float_equal(f.r.log_scale[0], logf(0.05f), 0);
    unmake(&f);
}

/* A Gaussian seen in no view has no mean gradient (the reference's NaN ->
 * 0), whatever its sum. */
static void test_unseen_not_densified(void **state)
{
    (void)state;
    fixture f;
    make(&f, 1);
    set_one(&f.r, &f.m, &f.v, 0, 0.05f, 0.5);
    f.g[0] = 1.0f, f.seen[0] = 0;
    gt_gs_grad_stats st = {f.g, f.seen};
    gt_gs_densify_opts o;
    gt_gs_densify_opts_default(&o);
    uint64_t rng = 1;
    gt_gs_densify_count c;
    assert_int_equal(gt_gs_densify_prune(&f.r, &f.m, &f.v, &st, &o, 10.0, false, rng, &c), GT_OK);
    assert_int_equal(c.n_after, 1);
    assert_int_equal(c.cloned + c.split, 0);
    unmake(&f);
}

/* With a cap the largest gradients go first. */
static void test_cap(void **state)
{
    (void)state;
    fixture f;
    make(&f, 4);
    float gm[4] = {3e-4f, 9e-4f, 5e-4f, 1e-5f};
    for (int i = 0; i < 4; i++) set_one(&f.r, &f.m, &f.v, (size_t)i, 0.05f, 0.5), f.g[i] = gm[i], f.seen[i] = 1;
    gt_gs_grad_stats st = {f.g, f.seen};
    gt_gs_densify_opts o;
    gt_gs_densify_opts_default(&o);
    o.max_gaussians = 6;
    uint64_t rng = 1;
    gt_gs_densify_count c;
    assert_int_equal(gt_gs_densify_prune(&f.r, &f.m, &f.v, &st, &o, 10.0, false, rng, &c), GT_OK);
    assert_int_equal(c.n_after, 6);
    assert_int_equal(c.cloned, 2);
    assert_int_equal(c.capped, 1);
    /* the clones are of Gaussians 1 and 2 (gradients 9e-4, 5e-4), in index order */
    assert_float_equal(f.r.pos[3 * 4], 1, 0);
    assert_float_equal(f.r.pos[3 * 5], 2, 0);
    unmake(&f);
}

/* Split children are drawn from the parent's own distribution: centre
 * mu, covariance R diag(s)^2 R^T of its (unnormalised) quaternion. A
 * transposed rotation or a missing scale moves the sample covariance far
 * outside the tolerance. */
static void test_split_distribution(void **state)
{
    (void)state;
    const size_t n = 20000;
    gt_gs_raw r, m, v;
    assert_int_equal(gt_gs_raw_alloc(&r, n, 0), GT_OK);
    assert_int_equal(gt_gs_raw_alloc(&m, n, 0), GT_OK);
    assert_int_equal(gt_gs_raw_alloc(&v, n, 0), GT_OK);
    float *g = malloc(n * sizeof *g), *seen = malloc(n * sizeof *seen);
    const float q[4] = {2.0f, 0.6f, -0.8f, 0.4f}, s[3] = {0.9f, 0.3f, 0.15f}, mu[3] = {1, -2, 0.5f};
    for (size_t i = 0; i < n; i++) {
        memcpy(r.pos + 3 * i, mu, sizeof mu);
        for (int a = 0; a < 3; a++) r.log_scale[3 * i + a] = logf(s[a]);
        memcpy(r.rot + 4 * i, q, sizeof q);
        r.logit_opacity[i] = 0;
        g[i] = 1e-3f, seen[i] = 1;
    }
    gt_gs_grad_stats st = {g, seen};
    gt_gs_densify_opts o;
    gt_gs_densify_opts_default(&o);
    uint64_t rng = 99;
    gt_gs_densify_count c;
    assert_int_equal(gt_gs_densify_prune(&r, &m, &v, &st, &o, 10.0, false, rng, &c), GT_OK);
    assert_int_equal(c.split, n);
    assert_int_equal(r.n, 2 * n);
    double mean[3] = {0, 0, 0}, cov[9] = {0};
    for (size_t i = 0; i < r.n; i++)
        for (int a = 0; a < 3; a++) mean[a] += r.pos[3 * i + a] / (double)r.n;
    for (size_t i = 0; i < r.n; i++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                cov[3 * a + b] += (r.pos[3 * i + a] - mean[a]) * (r.pos[3 * i + b] - mean[b]) / (double)r.n;
    float qn[4];
    memcpy(qn, q, sizeof qn);
    gs_quat_normalize(qn);
    float R[9];
    gs_rotmat(qn, R);
    for (int a = 0; a < 3; a++) assert_true(fabs(mean[a] - mu[a]) < 0.02);
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double want = 0;
            for (int k = 0; k < 3; k++) want += R[3 * a + k] * s[k] * s[k] * R[3 * b + k];
            /* sampling error of a covariance from 40000 draws: ~1% of 0.81 */
            if (fabs(cov[3 * a + b] - want) > 0.03)
                fail_msg("covariance (%d,%d): %.4f, want %.4f", a, b, cov[3 * a + b], want);
        }
    gt_gs_raw_free(&r), gt_gs_raw_free(&m), gt_gs_raw_free(&v);
    free(g), free(seen);
}

static void test_opacity_cap_and_window(void **state)
{
    (void)state;
    float l[4] = {logit(0.5), logit(0.001), logit(0.0100001), logit(0.99)};
    gt_gs_opacity_cap(l, 4, 0.01);
    assert_float_equal(1 / (1 + exp(-l[0])), 0.01, 1e-6);
    assert_float_equal(l[1], logit(0.001), 0);
    assert_float_equal(1 / (1 + exp(-l[2])), 0.01, 1e-6);
    assert_float_equal(1 / (1 + exp(-l[3])), 0.01, 1e-6);
    gt_gs_densify_opts o;
    gt_gs_densify_opts_default(&o);
    assert_int_equal(gt_gs_densify_until(&o, 2000), 1000);
    assert_int_equal(gt_gs_densify_until(&o, 30000), 15000);
    assert_int_equal(gt_gs_densify_until(&o, 100000), 15000);
    o.until_iter = 1700;
    assert_int_equal(gt_gs_densify_until(&o, 2000), 1700);
}

/* The CPU backward's statistics: a view counts for the Gaussians it sees
 * (one in front of the camera, one behind it), the gradient norm is that of
 * dL/d(2-D mean) in NDC units, so it is linear in the upstream gradient and
 * 0 for a zero one. */
static void test_backward_stats(void **state)
{
    (void)state;
    gt_gs_raw r, g;
    assert_int_equal(gt_gs_raw_alloc(&r, 2, 0), GT_OK);
    assert_int_equal(gt_gs_raw_alloc(&g, 2, 0), GT_OK);
    const float z[2] = {0.0f, -20.0f}; /* the camera at z = -6 looks at +z */
    for (int i = 0; i < 2; i++) {
        r.pos[3 * i] = 0.1f, r.pos[3 * i + 1] = -0.05f, r.pos[3 * i + 2] = z[i];
        for (int a = 0; a < 3; a++) r.log_scale[3 * i + a] = logf(0.3f);
        r.rot[4 * i] = 1;
        r.logit_opacity[i] = logit(0.8);
        r.sh[3 * i] = 1.0f;
    }
    gt_gs_camera c;
    const double eye[3] = {0, 0, -6}, target[3] = {0, 0, 0}, up[3] = {0, -1, 0};
    assert_int_equal(gt_gs_camera_lookat(&c, eye, target, up, 40.0, 64, 48), GT_OK);
    gt_gs_params p;
    gt_gs_params_init(&p);
    size_t np = 3 * 64 * 48;
    float *dl = malloc(np * sizeof *dl);
    gt_rng rr = {5};
    for (size_t i = 0; i < np; i++) dl[i] = (float)gt_rng_range(&rr, -1, 1);
    float s1[2] = {0, 0}, n1[2] = {0, 0}, s3[2] = {0, 0}, n3[2] = {0, 0}, s0[2] = {0, 0}, n0[2] = {0, 0};
    gt_gs_grad_stats a = {s1, n1}, b = {s3, n3}, zst = {s0, n0};
    assert_int_equal(gt_gs_backward_cpu(&r, 0, &c, &p, dl, NULL, &g, &a), GT_OK);
    assert_int_equal(gt_gs_backward_cpu(&r, 0, &c, &p, dl, NULL, &g, &a), GT_OK); /* two views */
    for (size_t i = 0; i < np; i++) dl[i] *= 3;
    assert_int_equal(gt_gs_backward_cpu(&r, 0, &c, &p, dl, NULL, &g, &b), GT_OK);
    memset(dl, 0, np * sizeof *dl);
    assert_int_equal(gt_gs_backward_cpu(&r, 0, &c, &p, dl, NULL, &g, &zst), GT_OK);
    assert_float_equal(n1[0], 2, 0);
    assert_float_equal(n1[1], 0, 0); /* behind the camera */
    assert_float_equal(s1[1], 0, 0);
    assert_true(s1[0] > 0);
    assert_float_equal(s3[0], 1.5 * s1[0], 1e-4 * s1[0]); /* one view at 3x = two views at 1x times 1.5 */
    assert_float_equal(n0[0], 1, 0);
    assert_float_equal(s0[0], 0, 0);
    free(dl);
    gt_gs_raw_free(&r), gt_gs_raw_free(&g);
}

/* MCMC: the paper's sharing of opacity among N copies (values from an
 * independent evaluation of its formula in Python's exact binomials) */
static void test_mcmc_share(void **state)
{
    (void)state;
    const double cases[4][4] = {{0.5, 2, 0.2928932188134524, 0.9521519537657248},
                                {0.9, 3, 0.5358411166387221, 0.8277648789094797},
                                {0.1, 5, 0.0208516376390232, 0.987794560229225},
                                {0.3, 1, 0.3, 1.0}};
    for (int c = 0; c < 4; c++) {
        double on, f;
        gt_gs_mcmc_share(cases[c][0], (int)cases[c][1], &on, &f);
        assert_float_equal(on, cases[c][2], 1e-12);
        assert_float_equal(f, cases[c][3], 1e-12);
        /* N copies composite to the original opacity */
        assert_float_equal(1 - pow(1 - on, cases[c][1]), cases[c][0], 1e-12);
    }
}

/* Relocation keeps the count, leaves no dead Gaussian, makes each dead one a
 * copy of a live source whose opacity it now shares; moments of the moved
 * and the sources restart at 0, the others keep theirs. Then 5 % growth up
 * to the cap. */
static void test_mcmc_relocate(void **state)
{
    (void)state;
    fixture f;
    make(&f, 6);
    double ops[6] = {0.9, 0.001, 0.5, 0.004, 0.2, 0.7};
    for (int i = 0; i < 6; i++) set_one(&f.r, &f.m, &f.v, (size_t)i, 0.05f, ops[i]);
    gt_gs_densify_opts o;
    gt_gs_densify_opts_default(&o);
    o.mcmc = true;
    o.max_gaussians = 6; /* no growth */
    uint64_t rng = 3;
    gt_gs_densify_count c;
    assert_int_equal(gt_gs_mcmc_relocate(&f.r, &f.m, &f.v, &o, rng, &c), GT_OK);
    assert_int_equal(c.relocated, 2);
    assert_int_equal(c.added, 0);
    assert_int_equal(f.r.n, 6);
    for (int d = 1; d <= 3; d += 2) {
        float x = f.r.pos[3 * d];
        assert_true(x == 0 || x == 2 || x == 4 || x == 5); /* a live source's position (i, 2i, 3i) */
        int s = (int)x;
        assert_float_equal(f.r.pos[3 * d + 1], 2 * s, 0);
        assert_float_equal(f.r.logit_opacity[d], f.r.logit_opacity[s], 0);
        assert_float_equal(f.r.log_scale[3 * d], f.r.log_scale[3 * s], 0);
        assert_true(f.r.logit_opacity[s] < logit(ops[s])); /* shared */
        assert_true(f.r.log_scale[3 * s] < logf(0.05f));
        assert_float_equal(f.m.pos[3 * d], 0, 0);
        assert_float_equal(f.v.logit_opacity[s], 0, 0);
    }
    for (int i = 0; i < 6; i++) assert_true(1 / (1 + exp(-f.r.logit_opacity[i])) > o.min_opacity);
    /* a live Gaussian that was not drawn (opacity unchanged) keeps its
     * moments; a drawn one restarts them */
    for (int i = 0; i < 6; i++) {
        if (i == 1 || i == 3) continue;
        bool drawn = f.r.logit_opacity[i] != logit(ops[i]);
        assert_float_equal(f.m.pos[3 * i], drawn ? 0 : 1 + i, 0);
    }
    unmake(&f);

    gt_gs_raw r, m, v;
    assert_int_equal(gt_gs_raw_alloc(&r, 100, 0), GT_OK);
    assert_int_equal(gt_gs_raw_alloc(&m, 100, 0), GT_OK);
    assert_int_equal(gt_gs_raw_alloc(&v, 100, 0), GT_OK);
    for (size_t i = 0; i < 100; i++) r.logit_opacity[i] = 1.0f, r.rot[4 * i] = 1, r.pos[3 * i] = (float)i;
    o.max_gaussians = 0; /* gsplat's cap, far away */
    assert_int_equal(gt_gs_mcmc_relocate(&r, &m, &v, &o, rng, &c), GT_OK);
    assert_int_equal(c.added, 5);
    assert_int_equal(r.n, 105);
    assert_int_equal(m.n, 105);
    for (size_t i = 100; i < 105; i++) assert_float_equal(r.logit_opacity[i], r.logit_opacity[(size_t)r.pos[3 * i]], 0);
    o.max_gaussians = 107;
    assert_int_equal(gt_gs_mcmc_relocate(&r, &m, &v, &o, rng, &c), GT_OK);
    assert_int_equal(r.n, 107);
    gt_gs_raw_free(&r), gt_gs_raw_free(&m), gt_gs_raw_free(&v);
}

/* The position noise: none for an opaque Gaussian; for a transparent one
 * the draws' covariance is scaler^2 Sigma Sigma^T (Sigma = R diag(s)^2 R^T). */
static void test_mcmc_noise(void **state)
{
    (void)state;
    const size_t steps = 40000;
    gt_gs_raw r;
    assert_int_equal(gt_gs_raw_alloc(&r, 2, 0), GT_OK);
    const float q[4] = {0.8f, 0.2f, -0.5f, 0.3f}, s[3] = {0.9f, 0.5f, 0.2f};
    for (int i = 0; i < 2; i++) {
        memcpy(r.rot + 4 * i, q, sizeof q);
        for (int a = 0; a < 3; a++) r.log_scale[3 * i + a] = logf(s[a]);
    }
    r.logit_opacity[0] = logit(0.99), r.logit_opacity[1] = logit(1e-4);
    double mean[3] = {0}, cov[9] = {0};
    float prev[3] = {0, 0, 0};
    double *d = malloc(steps * 3 * sizeof *d);
    for (size_t t = 0; t < steps; t++) {
        gt_gs_mcmc_noise_cpu(&r, 2.0, 5, t);
        for (int a = 0; a < 3; a++) d[3 * t + a] = (double)r.pos[3 + a] - prev[a], prev[a] = r.pos[3 + a];
    }
    for (int a = 0; a < 3; a++) assert_true(fabsf(r.pos[a]) < 1e-20f); /* the opaque one stayed */
    for (size_t t = 0; t < steps; t++)
        for (int a = 0; a < 3; a++) mean[a] += d[3 * t + a] / steps;
    for (size_t t = 0; t < steps; t++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) cov[3 * a + b] += (d[3 * t + a] - mean[a]) * (d[3 * t + b] - mean[b]) / steps;
    float qn[4], S[6];
    memcpy(qn, q, sizeof qn);
    gs_quat_normalize(qn);
    gs_cov3(qn, s, 1.0f, S);
    double M[9] = {S[0], S[1], S[2], S[1], S[3], S[4], S[2], S[4], S[5]};
    double gate = 1 / (1 + exp(-100 * ((1 - 1e-4) - 0.995)));
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double want = 0;
            for (int k = 0; k < 3; k++) want += M[3 * a + k] * M[3 * b + k];
            want *= 4.0 * gate * gate;
            if (fabs(cov[3 * a + b] - want) > 0.03 * 4.0 * 0.81 * 0.81)
                fail_msg("noise covariance (%d,%d): %.5f, want %.5f", a, b, cov[3 * a + b], want);
        }
    free(d);
    gt_gs_raw_free(&r);
}

/* The regularisers' gradients against central differences of
 * opacity_reg mean(sigmoid(l)) + scale_reg mean(exp(s)). */
static void test_mcmc_reg(void **state)
{
    (void)state;
    const size_t n = 4;
    gt_gs_raw r, g;
    assert_int_equal(gt_gs_raw_alloc(&r, n, 0), GT_OK);
    assert_int_equal(gt_gs_raw_alloc(&g, n, 0), GT_OK);
    for (size_t i = 0; i < n; i++) {
        r.logit_opacity[i] = -2.0f + (float)i;
        for (int a = 0; a < 3; a++) r.log_scale[3 * i + a] = -3.0f + 0.5f * a + 0.1f * (float)i;
    }
    gt_gs_mcmc_reg_cpu(&r, 0.01, 0.03, &g);
    for (size_t i = 0; i < n; i++) {
        double l = r.logit_opacity[i], h = 1e-4;
        double fd = 0.01 * (1 / (1 + exp(-(l + h))) - 1 / (1 + exp(-(l - h)))) / (2 * h) / n;
        assert_float_equal(g.logit_opacity[i], fd, 1e-6 * fabs(fd) + 1e-12);
        for (int a = 0; a < 3; a++) {
            double sv = r.log_scale[3 * i + a];
            double fs = 0.03 * (exp(sv + h) - exp(sv - h)) / (2 * h) / (3.0 * n);
            assert_float_equal(g.log_scale[3 * i + a], fs, 1e-5 * fabs(fs) + 1e-12);
        }
    }
    gt_gs_raw_free(&r), gt_gs_raw_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clone_split_prune),   cmocka_unit_test(test_unseen_not_densified),
        cmocka_unit_test(test_cap),                 cmocka_unit_test(test_split_distribution),
        cmocka_unit_test(test_opacity_cap_and_window), cmocka_unit_test(test_backward_stats),
        cmocka_unit_test(test_mcmc_share),          cmocka_unit_test(test_mcmc_relocate),
        cmocka_unit_test(test_mcmc_noise),          cmocka_unit_test(test_mcmc_reg),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
