/* The CPU reference backward (gt_gs_backward_cpu) against central finite
 * differences of a double-precision forward, on tiny scenes: Gaussians on
 * tile borders, overlapping, partially off screen and beyond the 1.3 tan(fov/2)
 * clamp of the EWA Jacobian, one with alpha clamped at 0.99; SH degrees 0-3;
 * antialias on and off; a random upstream gradient dL/drgb. The reference's
 * variant (gt_gs_params.ref_grad) differs where it approximates. The double forward below is test-only: it
 * restates the reference rasterizer (lib/gs/gs_math.h, gt_gs_render_cpu) in
 * double, and is itself checked against gt_gs_forward_cpu's image.
 *
 * Error measure, per parameter element j of a group (pos, log_scale, rot,
 * logit_opacity, SH degree d):
 *     err_j = |g_j - fd_j| / max(|fd_j|, 0.01 * max_group |fd|)
 * and every err_j <= 1e-3. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gs/gs_grad.h"
#include "gs/gs_math.h"
#include "gs_testutil.h"

/* ------------------------------------------------------------ double forward */

typedef struct {
    size_t n;
    int sh_k;
    double *pos, *ls, *rot, *logit, *sh;
} draw;

typedef struct {
    double x, y, depth, conic[3], op, rgb[3];
    int rect[4], on;
} dproj;

static void dproj_one(const draw *r, size_t i, const gt_gs_camera *c, const gt_gs_params *p, int deg, dproj *o)
{
    memset(o, 0, sizeof *o);
    const double *m = r->pos + 3 * i;
    double R[9], t[3];
    for (int k = 0; k < 9; k++) R[k] = c->R[k];
    for (int k = 0; k < 3; k++) t[k] = c->t[k];
    double v[3];
    for (int a = 0; a < 3; a++) v[a] = R[3 * a] * m[0] + R[3 * a + 1] * m[1] + R[3 * a + 2] * m[2] + t[a];
    if (!(v[2] > GS_NEAR)) return;
    const double *q0 = r->rot + 4 * i;
    double ql = sqrt(q0[0] * q0[0] + q0[1] * q0[1] + q0[2] * q0[2] + q0[3] * q0[3]);
    double qr = q0[0] / ql, qx = q0[1] / ql, qy = q0[2] / ql, qz = q0[3] / ql;
    double Rq[9] = {1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qr * qz), 2 * (qx * qz + qr * qy),
                    2 * (qx * qy + qr * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qr * qx),
                    2 * (qx * qz - qr * qy), 2 * (qy * qz + qr * qx), 1 - 2 * (qx * qx + qy * qy)};
    double s2[3];
    for (int k = 0; k < 3; k++) {
        double s = p->scale_modifier * exp(r->ls[3 * i + k]);
        s2[k] = s * s;
    }
    double S[9];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            S[3 * a + b] = Rq[3 * a] * s2[0] * Rq[3 * b] + Rq[3 * a + 1] * s2[1] * Rq[3 * b + 1] +
                           Rq[3 * a + 2] * s2[2] * Rq[3 * b + 2];
    double W = c->width, H = c->height, fx = c->fx, fy = c->fy;
    /* the view's tangents widened by 0.3 of the half width on each side */
    double ppx = c->cx, ppy = c->cy, tanx = W / (2.0 * fx), tany = H / (2.0 * fy);
    double limx0 = ppx / fx + 0.3 * tanx, limx1 = (W - ppx) / fx + 0.3 * tanx;
    double limy0 = ppy / fy + 0.3 * tany, limy1 = (H - ppy) / fy + 0.3 * tany;
    double txtz = v[0] / v[2], tytz = v[1] / v[2], tz = v[2];
    double cx = fmin(limx1, fmax(-limx0, txtz)) * tz, cy = fmin(limy1, fmax(-limy0, tytz)) * tz;
    double J00 = fx / tz, J02 = -fx * cx / (tz * tz), J11 = fy / tz, J12 = -fy * cy / (tz * tz);
    double T0[3], T1[3];
    for (int k = 0; k < 3; k++) {
        T0[k] = J00 * R[k] + J02 * R[6 + k];
        T1[k] = J11 * R[3 + k] + J12 * R[6 + k];
    }
    double ca = 0, cb = 0, cc = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            ca += T0[a] * S[3 * a + b] * T0[b];
            cb += T0[a] * S[3 * a + b] * T1[b];
            cc += T1[a] * S[3 * a + b] * T1[b];
        }
    double det0 = ca * cc - cb * cb;
    ca += 0.3, cc += 0.3;
    double det = ca * cc - cb * cb;
    if (det == 0) return;
    double op = 1.0 / (1.0 + exp(-r->logit[i]));
    if (p->antialias) op *= sqrt(fmax(0.0, det0 / det));
    double mid = 0.5 * (ca + cc), disc = sqrt(fmax(0.1, mid * mid - det));
    double radius = ceil(3.0 * sqrt(fmax(mid + disc, mid - disc)));
    double px = fx * txtz + ppx - 0.5, py = fy * tytz + ppy - 0.5;
    int gx = (c->width + GS_TILE - 1) / GS_TILE, gy = (c->height + GS_TILE - 1) / GS_TILE;
    int rect[4];
    if (gs_tile_rect((float)px, (float)py, (float)radius, gx, gy, rect) == 0) return;
    double d[3];
    for (int k = 0; k < 3; k++) d[k] = m[k] - c->campos[k];
    double dl = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    double x = d[0] / dl, y = d[1] / dl, z = d[2] / dl, xx = x * x, yy = y * y, zz = z * z;
    double b[16] = {GS_SH_C0,
                    -GS_SH_C1 * y,
                    GS_SH_C1 * z,
                    -GS_SH_C1 * x,
                    GS_SH_C2_0 * x * y,
                    GS_SH_C2_1 * y * z,
                    GS_SH_C2_2 * (2 * zz - xx - yy),
                    GS_SH_C2_3 * x * z,
                    GS_SH_C2_4 * (xx - yy),
                    GS_SH_C3_0 * y * (3 * xx - yy),
                    GS_SH_C3_1 * x * y * z,
                    GS_SH_C3_2 * y * (4 * zz - xx - yy),
                    GS_SH_C3_3 * z * (2 * zz - 3 * xx - 3 * yy),
                    GS_SH_C3_4 * x * (4 * zz - xx - yy),
                    GS_SH_C3_5 * z * (xx - yy),
                    GS_SH_C3_6 * x * (xx - 3 * yy)};
    int nk = (deg + 1) * (deg + 1);
    for (int ch = 0; ch < 3; ch++) {
        double s = 0.5;
        for (int k = 0; k < nk; k++) s += b[k] * r->sh[(i * r->sh_k + k) * 3 + ch];
        o->rgb[ch] = fmax(s, 0.0);
    }
    o->x = px, o->y = py, o->depth = tz, o->op = op;
    o->conic[0] = cc / det, o->conic[1] = -cb / det, o->conic[2] = ca / det;
    memcpy(o->rect, rect, sizeof rect);
    o->on = 1;
}

static const dproj *g_sort_pr;
static int cmp_dproj(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    double di = g_sort_pr[i].depth, dj = g_sort_pr[j].depth;
    if (di != dj) return di < dj ? -1 : 1;
    return (i > j) - (i < j);
}

/* L = sum dl_drgb * rgb of the double forward (rgb: planar, may be NULL). */
static double dforward(const draw *r, int deg, const gt_gs_camera *c, const gt_gs_params *p, const float *dl,
                       double *rgb)
{
    int w = c->width, h = c->height;
    size_t np = (size_t)w * h;
    dproj *pr = calloc(r->n, sizeof *pr);
    size_t *order = calloc(r->n, sizeof *order);
    for (size_t i = 0; i < r->n; i++) {
        dproj_one(r, i, c, p, deg, &pr[i]);
        order[i] = i;
    }
    g_sort_pr = pr;
    qsort(order, r->n, sizeof *order, cmp_dproj);
    double L = 0;
    for (int py = 0; py < h; py++)
        for (int px = 0; px < w; px++) {
            int tx = px / GS_TILE, ty = py / GS_TILE;
            double T = 1, C[3] = {0, 0, 0};
            for (size_t k = 0; k < r->n; k++) {
                const dproj *g = &pr[order[k]];
                if (!g->on || tx < g->rect[0] || tx >= g->rect[2] || ty < g->rect[1] || ty >= g->rect[3]) continue;
                double dx = g->x - px, dy = g->y - py;
                double power = -0.5 * (g->conic[0] * dx * dx + g->conic[2] * dy * dy) - g->conic[1] * dx * dy;
                if (power > 0) continue;
                double alpha = fmin(0.99, g->op * exp(power));
                if (alpha < 1.0 / 255.0) continue;
                double tt = T * (1 - alpha);
                if (tt < 0.0001) break;
                for (int ch = 0; ch < 3; ch++) C[ch] += g->rgb[ch] * alpha * T;
                T = tt;
            }
            size_t pix = (size_t)py * w + px;
            for (int ch = 0; ch < 3; ch++) {
                double v = C[ch] + T * p->bg[ch];
                if (rgb) rgb[ch * np + pix] = v;
                L += dl[ch * np + pix] * v;
            }
        }
    free(pr);
    free(order);
    return L;
}

static void draw_from(const gt_gs_raw *r, draw *d)
{
    d->n = r->n;
    d->sh_k = r->sh_k;
    d->pos = malloc(r->n * 3 * sizeof(double));
    d->ls = malloc(r->n * 3 * sizeof(double));
    d->rot = malloc(r->n * 4 * sizeof(double));
    d->logit = malloc(r->n * sizeof(double));
    d->sh = malloc(r->n * r->sh_k * 3 * sizeof(double));
    for (size_t i = 0; i < 3 * r->n; i++) d->pos[i] = r->pos[i], d->ls[i] = r->log_scale[i];
    for (size_t i = 0; i < 4 * r->n; i++) d->rot[i] = r->rot[i];
    for (size_t i = 0; i < r->n; i++) d->logit[i] = r->logit_opacity[i];
    for (size_t i = 0; i < r->n * r->sh_k * 3; i++) d->sh[i] = r->sh[i];
}

static void draw_free(draw *d)
{
    free(d->pos);
    free(d->ls);
    free(d->rot);
    free(d->logit);
    free(d->sh);
}

/* ------------------------------------------------------------ scenes */

/* A Gaussian whose mean lands on pixel (u, v) at view depth z. */
static void place(const gt_gs_camera *c, double u, double v, double z, float *m)
{
    double cam[3] = {(u - 0.5 * (c->width - 1)) / c->fx * z, (v - 0.5 * (c->height - 1)) / c->fy * z, z};
    for (int k = 0; k < 3; k++) {
        double acc = 0;
        for (int a = 0; a < 3; a++) acc += c->R[3 * a + k] * (cam[a] - c->t[a]);
        m[k] = (float)acc;
    }
}

/* Random raw scene: n Gaussians of gs_random_scene with opacities in
 * [0.1, 0.85] (no pixel reaches the T < 1e-4 cut-off), unnormalised
 * quaternions (length 0.5..2) and SH of degree deg. */
static void random_raw(gt_gs_raw *r, size_t n, int deg, double smin, double smax, uint64_t seed)
{
    gt_gs_scene s;
    assert_int_equal(gs_random_scene(&s, n, deg, smin, smax, seed), GT_OK);
    gt_rng g = {seed ^ 0x9e3779b97f4a7c15ull};
    for (size_t i = 0; i < n; i++) s.opacity[i] = (float)gt_rng_range(&g, 0.1, 0.85);
    assert_int_equal(gt_gs_raw_from_scene(&s, r), GT_OK);
    for (size_t i = 0; i < n; i++) {
        float l = (float)gt_rng_range(&g, 0.5, 2.0);
        for (int k = 0; k < 4; k++) r->rot[4 * i + k] *= l;
    }
    gt_gs_scene_free(&s);
}

/* The hand-placed scene on a 40x30 image (3x2 tiles, the last ones partial):
 * means on a tile corner and a tile border, an overlapping pair, Gaussians
 * partially off the left and bottom edges, and one whose mean lies beyond
 * the Jacobian's 1.3 tan(fov/2) clamp but whose footprint reaches in. */
static void placed_raw(gt_gs_raw *r, const gt_gs_camera *c, int deg, int saturate, uint64_t seed)
{
    static const double spot[][5] = {
        /* u, v, z, scale, opacity */
        {15.5, 15.5, 4.0, 0.12, 0.7}, {16.0, 10.0, 4.3, 0.15, 0.6}, {-3.0, 12.0, 3.5, 0.2, 0.8},
        {0, 0, 4.0, 0.9, 0.5},        {32.0, 16.0, 5.0, 0.18, 0.75}, {20.0, 29.0, 3.8, 0.14, 0.65},
        {12.0, 20.0, 4.6, 0.3, 0.4},
    };
    size_t n = sizeof spot / sizeof spot[0];
    random_raw(r, n, deg, 0.1, 0.3, seed);
    gt_rng g = {seed + 7};
    for (size_t i = 0; i < n; i++) {
        double u = spot[i][0], v = spot[i][1];
        if (i == 3) u = 0.5 * (c->width - 1) + c->fx * 1.2 * ((double)c->width / (2.0 * c->fx)) * 1.25;
        place(c, u, v, spot[i][2], r->pos + 3 * i);
        for (int k = 0; k < 3; k++)
            r->log_scale[3 * i + k] = (float)(log(spot[i][3]) + gt_rng_range(&g, -0.4, 0.4));
        r->logit_opacity[i] = (float)log(spot[i][4] / (1 - spot[i][4]));
    }
    if (saturate) { /* the first on a pixel centre with alpha clamped at 0.99 there */
        place(c, 15.0, 15.0, 4.0, r->pos);
        r->logit_opacity[0] = (float)log(0.999 / 0.001);
    }
}

/* ------------------------------------------------------------ the check */

typedef struct {
    const char *name;
    float *g;     /* analytic gradient */
    double *x;    /* parameter in the double scene */
    size_t count; /* elements */
    size_t stride, first, len; /* for SH degrees: element e of Gaussian i at i*stride + first + e */
} group;

static double check_group(const group *gr, const draw *d, int deg, const gt_gs_camera *c, const gt_gs_params *p,
                          const float *dl, size_t n)
{
    size_t m = gr->stride ? n * gr->len : gr->count;
    double *fd = malloc(m * sizeof *fd), *an = malloc(m * sizeof *an), mx = 0;
    for (size_t j = 0; j < m; j++) {
        size_t e = gr->stride ? (j / gr->len) * gr->stride + gr->first + j % gr->len : j;
        double x0 = gr->x[e], hstep = 1e-6 * fmax(1.0, fabs(x0));
        gr->x[e] = x0 + hstep;
        double lp = dforward(d, deg, c, p, dl, NULL);
        gr->x[e] = x0 - hstep;
        double lm = dforward(d, deg, c, p, dl, NULL);
        gr->x[e] = x0;
        fd[j] = (lp - lm) / (2 * hstep);
        an[j] = gr->g[e];
        mx = fmax(mx, fabs(fd[j]));
    }
    double worst = 0;
    for (size_t j = 0; j < m; j++) {
        double err = fabs(an[j] - fd[j]) / fmax(fabs(fd[j]), 0.01 * mx);
        if (err > worst) worst = err;
    }
    print_message("  %-14s %4zu elements, max |fd| %.3e, max err %.2e\n", gr->name, m, mx, worst);
    assert_true(mx > 0); /* the group's gradient is exercised */
    free(fd);
    free(an);
    return worst;
}

static void run_fd(const gt_gs_raw *r, int deg, const gt_gs_camera *c, const gt_gs_params *p, uint64_t seed)
{
    int w = c->width, h = c->height;
    size_t np = (size_t)w * h;
    float *dl = malloc(3 * np * sizeof *dl), *rgb = malloc(3 * np * sizeof *rgb);
    gt_rng g = {seed};
    for (size_t i = 0; i < 3 * np; i++) dl[i] = (float)gt_rng_range(&g, -1, 1);
    gt_gs_raw grad;
    assert_int_equal(gt_gs_raw_alloc(&grad, r->n, r->sh_degree), GT_OK);
    assert_int_equal(gt_gs_backward_cpu(r, deg, c, p, dl, rgb, &grad, NULL), GT_OK);
    draw d;
    draw_from(r, &d);
    /* the double forward is the product forward in double: images agree */
    double *drgb = malloc(3 * np * sizeof *drgb), worst_img = 0;
    dforward(&d, deg, c, p, dl, drgb);
    for (size_t i = 0; i < 3 * np; i++) worst_img = fmax(worst_img, fabs(drgb[i] - rgb[i]));
    assert_true(worst_img < 1e-4);
    group gr[] = {
        {"pos", grad.pos, d.pos, 3 * r->n, 0, 0, 0},
        {"log_scale", grad.log_scale, d.ls, 3 * r->n, 0, 0, 0},
        {"rot", grad.rot, d.rot, 4 * r->n, 0, 0, 0},
        {"logit_opacity", grad.logit_opacity, d.logit, r->n, 0, 0, 0},
        {"sh degree 0", grad.sh, d.sh, 0, (size_t)r->sh_k * 3, 0, 3},
        {"sh degree 1", grad.sh, d.sh, 0, (size_t)r->sh_k * 3, 3, 9},
        {"sh degree 2", grad.sh, d.sh, 0, (size_t)r->sh_k * 3, 12, 15},
        {"sh degree 3", grad.sh, d.sh, 0, (size_t)r->sh_k * 3, 27, 21},
    };
    for (int k = 0; k < 4 + 1 + deg; k++) assert_true(check_group(&gr[k], &d, deg, c, p, dl, r->n) <= 1e-3);
    /* SH coefficients above the degree used get nothing */
    for (size_t i = 0; i < r->n; i++)
        for (int k = (deg + 1) * (deg + 1); k < r->sh_k; k++)
            for (int ch = 0; ch < 3; ch++) assert_true(grad.sh[(i * r->sh_k + k) * 3 + ch] == 0.0f);
    draw_free(&d);
    gt_gs_raw_free(&grad);
    free(dl);
    free(rgb);
    free(drgb);
}

static void random_case(int deg, int antialias, uint64_t seed)
{
    gt_gs_camera c;
    assert_int_equal(gs_random_camera(&c, 3.5, 40, 30, seed), GT_OK);
    gt_gs_params p;
    gt_gs_params_init(&p);
    p.antialias = antialias;
    p.bg[0] = 0.2f, p.bg[1] = 0.5f, p.bg[2] = 0.9f;
    gt_gs_raw r;
    random_raw(&r, 8, 3, 0.08, 0.4, seed);
    print_message("random scene, SH degree %d%s\n", deg, antialias ? ", antialias" : "");
    run_fd(&r, deg, &c, &p, seed + 1);
    gt_gs_raw_free(&r);
}

static void test_fd_random_deg0(void **st)
{
    (void)st;
    random_case(0, 0, 11);
}
static void test_fd_random_deg1(void **st)
{
    (void)st;
    random_case(1, 0, 12);
}
static void test_fd_random_deg2(void **st)
{
    (void)st;
    random_case(2, 0, 13);
}
static void test_fd_random_deg3(void **st)
{
    (void)st;
    random_case(3, 0, 14);
}
static void test_fd_random_antialias(void **st)
{
    (void)st;
    random_case(3, 1, 15);
}

static void test_fd_placed(void **st)
{
    (void)st;
    gt_gs_camera c;
    double eye[3] = {0.3, -0.2, -4}, target[3] = {0, 0, 0}, up[3] = {0, 1, 0};
    assert_int_equal(gt_gs_camera_lookat(&c, eye, target, up, 60, 40, 30), GT_OK);
    gt_gs_params p;
    gt_gs_params_init(&p);
    p.bg[0] = 0.1f, p.bg[1] = 0.3f, p.bg[2] = 0.6f;
    for (int run = 0; run < 3; run++) {
        p.antialias = run == 1;
        gt_gs_raw r;
        placed_raw(&r, &c, 3, run == 2, 21);
        /* the mean of Gaussian 3 lies beyond the Jacobian's clamp */
        float tanx = (float)c.width / (2 * c.fx);
        float v[3];
        gs_view(c.R, c.t, r.pos[9], r.pos[10], r.pos[11], v);
        assert_true(v[0] / v[2] > 1.3f * tanx);
        print_message("placed scene, SH degree 3%s%s\n", p.antialias ? ", antialias" : "",
                      run == 2 ? ", alpha clamped at 0.99" : "");
        run_fd(&r, 3, &c, &p, 22 + run);
        /* that Gaussian reaches the image: it has a position gradient; and
         * the reference's variant differs exactly where it approximates:
         * Gaussian 3's depth (clamped Jacobian) and, when saturated,
         * Gaussian 0's opacity */
        size_t np = (size_t)c.width * c.height;
        float *dl = malloc(3 * np * sizeof *dl);
        gt_rng g = {99};
        for (size_t i = 0; i < 3 * np; i++) dl[i] = (float)gt_rng_range(&g, -1, 1);
        gt_gs_raw ge, gr;
        assert_int_equal(gt_gs_raw_alloc(&ge, r.n, 3), GT_OK);
        assert_int_equal(gt_gs_raw_alloc(&gr, r.n, 3), GT_OK);
        assert_int_equal(gt_gs_backward_cpu(&r, 3, &c, &p, dl, NULL, &ge, NULL), GT_OK);
        p.ref_grad = true;
        assert_int_equal(gt_gs_backward_cpu(&r, 3, &c, &p, dl, NULL, &gr, NULL), GT_OK);
        p.ref_grad = false;
        double d3 = 0, e3 = 0;
        for (int k = 0; k < 3; k++) {
            d3 += fabs(ge.pos[9 + k] - gr.pos[9 + k]);
            e3 += fabs(ge.pos[9 + k]);
        }
        assert_true(e3 > 0 && d3 > 1e-6 * e3);
        if (run == 2) assert_true(fabsf(ge.logit_opacity[0] - gr.logit_opacity[0]) > 1e-3f * fabsf(gr.logit_opacity[0]));
        /* colours are blended with the clamped alpha in both */
        assert_memory_equal(ge.sh, gr.sh, r.n * r.sh_k * 3 * sizeof(float));
        gt_gs_raw_free(&ge);
        gt_gs_raw_free(&gr);
        free(dl);
        gt_gs_raw_free(&r);
    }
}

/* gt_gs_forward_cpu is gt_gs_render_cpu of the activated scene. */
static void test_forward_matches_render(void **st)
{
    (void)st;
    gt_gs_camera c;
    assert_int_equal(gs_random_camera(&c, 3.0, 53, 37, 5), GT_OK);
    gt_gs_params p;
    gt_gs_params_init(&p);
    p.bg[1] = 0.4f;
    gt_gs_raw r;
    random_raw(&r, 60, 2, 0.03, 0.3, 5);
    gt_gs_scene s;
    assert_int_equal(gt_gs_raw_to_scene(&r, &s), GT_OK);
    gt_gs_image im;
    assert_int_equal(gt_gs_image_alloc(&im, 53, 37), GT_OK);
    assert_int_equal(gt_gs_render_cpu(&s, &c, &p, &im), GT_OK);
    size_t np = 53 * 37;
    float *rgb = malloc(3 * np * sizeof *rgb);
    assert_int_equal(gt_gs_forward_cpu(&r, 2, &c, &p, rgb), GT_OK);
    double worst = 0, sum = 0;
    for (size_t i = 0; i < np; i++)
        for (int ch = 0; ch < 3; ch++) {
            worst = fmax(worst, fabs(rgb[ch * np + i] - im.rgb[3 * i + ch]));
            sum += im.rgb[3 * i + ch];
        }
    assert_true(worst <= 1e-6);
    assert_true(sum > 0.05 * np); /* something was drawn */
    /* raw -> scene -> raw -> scene keeps the activated values */
    gt_gs_raw r2;
    gt_gs_scene s2;
    assert_int_equal(gt_gs_raw_from_scene(&s, &r2), GT_OK);
    assert_int_equal(gt_gs_raw_to_scene(&r2, &s2), GT_OK);
    for (size_t i = 0; i < s.n; i++) {
        assert_float_equal(s2.opacity[i], s.opacity[i], 1e-6);
        for (int k = 0; k < 3; k++) assert_float_equal(s2.scale[3 * i + k], s.scale[3 * i + k], 1e-6 * s.scale[3 * i + k]);
        for (int k = 0; k < 4; k++) assert_float_equal(s2.rot[4 * i + k], s.rot[4 * i + k], 1e-6);
    }
    gt_gs_raw_free(&r2);
    gt_gs_scene_free(&s2);
    free(rgb);
    gt_gs_image_free(&im);
    gt_gs_scene_free(&s);
    gt_gs_raw_free(&r);
}

/* The backward adds into the caller's arrays; mismatched arrays are refused. */
static void test_backward_adds(void **st)
{
    (void)st;
    gt_gs_camera c;
    assert_int_equal(gs_random_camera(&c, 3.0, 33, 21, 8), GT_OK);
    gt_gs_params p;
    gt_gs_params_init(&p);
    gt_gs_raw r, g1, g2, bad;
    random_raw(&r, 12, 1, 0.05, 0.3, 8);
    size_t np = 33 * 21;
    float *dl = malloc(3 * np * sizeof *dl);
    gt_rng rng = {8};
    for (size_t i = 0; i < 3 * np; i++) dl[i] = (float)gt_rng_range(&rng, -1, 1);
    assert_int_equal(gt_gs_raw_alloc(&g1, r.n, 1), GT_OK);
    assert_int_equal(gt_gs_raw_alloc(&g2, r.n, 1), GT_OK);
    assert_int_equal(gt_gs_backward_cpu(&r, 1, &c, &p, dl, NULL, &g1, NULL), GT_OK);
    assert_int_equal(gt_gs_backward_cpu(&r, 1, &c, &p, dl, NULL, &g2, NULL), GT_OK);
    assert_int_equal(gt_gs_backward_cpu(&r, 1, &c, &p, dl, NULL, &g2, NULL), GT_OK);
    double mx = 0;
    for (size_t i = 0; i < 3 * r.n; i++) {
        assert_float_equal(g2.pos[i], 2 * g1.pos[i], 1e-6 * (1 + fabs(g1.pos[i])));
        mx = fmax(mx, fabs(g1.pos[i]));
    }
    assert_true(mx > 0);
    for (size_t i = 0; i < r.n * 4 * 3; i++)
        assert_float_equal(g2.sh[i], 2 * g1.sh[i], 1e-6 * (1 + fabs(g1.sh[i])));
    assert_int_equal(gt_gs_raw_alloc(&bad, r.n, 0), GT_OK);
    assert_int_not_equal(gt_gs_backward_cpu(&r, 1, &c, &p, dl, NULL, &bad, NULL), GT_OK);
    assert_int_not_equal(gt_gs_forward_cpu(&r, 2, &c, &p, dl), GT_OK); /* degree above the scene's */
    gt_gs_raw_free(&bad);
    gt_gs_raw_free(&g1);
    gt_gs_raw_free(&g2);
    gt_gs_raw_free(&r);
    free(dl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward_matches_render), cmocka_unit_test(test_fd_random_deg0),
        cmocka_unit_test(test_fd_random_deg1),         cmocka_unit_test(test_fd_random_deg2),
        cmocka_unit_test(test_fd_random_deg3),         cmocka_unit_test(test_fd_random_antialias),
        cmocka_unit_test(test_fd_placed),             cmocka_unit_test(test_backward_adds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
