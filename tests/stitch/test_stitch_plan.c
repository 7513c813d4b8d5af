/* The stitching plan computed on per-camera boxes (lib/stitch/plan.c) against
 * the straightforward computation over the whole panorama, kept here as the
 * reference: every camera's region tested at every panorama pixel, its
 * distance transform over the whole panorama (Felzenszwalb-Huttenlocher on
 * columns and rows, as it was), the mask pyramids reduced and
 * normalised over whole planes. The plan must equal it bit for bit
 * (distances, owners, feather weights, every level of the mask pyramids and
 * their boxes) on rigs that exercise the boxes' edges: cameras cut by the
 * panorama's borders, one larger than the panorama, masks, strong
 * perspective and a camera whose footprint is unbounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "stitch/stitch_math.h"
#include "stitch_synth.h"

/* ------------------------------------------------------------ reference */

typedef struct {
    float *dist;   /* ncam x pano */
    uint8_t *owner_luma;
    uint8_t *owner[3];
    float *weight[3];
    float *mbw[3][GT_STITCH_MAX_BANDS];
    int mbbox[3][GT_STITCH_MAX_BANDS][GT_STITCH_MAX_CAMS][4];
} ref_plan;

static void ref_box(const float *m, int w, int h, int box[4])
{
    int x0 = w, y0 = h, x1 = -1, y1 = -1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if (m[(size_t)y * w + x] != 0.0f) {
                if (x < x0) x0 = x;
                if (x > x1) x1 = x;
                if (y < y0) y0 = y;
                if (y > y1) y1 = y;
            }
    if (x1 < 0) x0 = y0 = 0, x1 = y1 = -1;
    box[0] = x0, box[1] = y0, box[2] = x1, box[3] = y1;
}

/* the distance transform as the plan computed it before (Felzenszwalb and
 * Huttenlocher on the columns, then on the rows, in double) */
static void ref_edt1d(const double *f, int n, double *d, int *v, double *z)
{
    int k = 0;
    v[0] = 0, z[0] = -INFINITY, z[1] = INFINITY;
    for (int q = 1; q < n; q++) {
        double s;
        for (;;) {
            int p = v[k];
            s = ((f[q] + (double)q * q) - (f[p] + (double)p * p)) / (2.0 * (q - p));
            if (s <= z[k] && k > 0) {
                k--;
                continue;
            }
            break;
        }
        if (s <= z[k]) {
            v[0] = q, z[0] = -INFINITY, z[1] = INFINITY;
            continue;
        }
        k++;
        v[k] = q, z[k] = s, z[k + 1] = INFINITY;
    }
    k = 0;
    for (int q = 0; q < n; q++) {
        while (z[k + 1] < q) k++;
        double dq = (double)(q - v[k]);
        d[q] = dq * dq + f[v[k]];
    }
}

static void ref_edt(const uint8_t *inside, int w, int h, float far, float *dist)
{
    const double BIG = 1e12;
    int n = w > h ? w : h, any_out = 0;
    double *sq = malloc((size_t)w * h * sizeof(double)), *f = malloc((size_t)n * sizeof(double));
    double *d = malloc((size_t)n * sizeof(double)), *z = malloc(((size_t)n + 1) * sizeof(double));
    int *v = malloc((size_t)n * sizeof(int));
    assert_true(sq && f && d && z && v);
    for (size_t i = 0; i < (size_t)w * h; i++) {
        sq[i] = inside[i] ? BIG : 0.0;
        any_out |= !inside[i];
    }
    for (int x = 0; x < w; x++) {
        for (int y = 0; y < h; y++) f[y] = sq[(size_t)y * w + x];
        ref_edt1d(f, h, d, v, z);
        for (int y = 0; y < h; y++) sq[(size_t)y * w + x] = d[y] > BIG ? BIG : d[y];
    }
    for (int y = 0; y < h; y++) {
        ref_edt1d(sq + (size_t)y * w, w, d, v, z);
        for (int x = 0; x < w; x++) dist[(size_t)y * w + x] = any_out ? (float)sqrt(d[x]) : far;
    }
    free(sq), free(f), free(d), free(z), free(v);
}

/* the plan as computed before per-camera boxes; `plan` gives the geometry
 * (P, plane views, levels), everything else is recomputed here */
static void ref_build(const gt_stitch_plan *plan, const gt_stitch_plan_opts *o, ref_plan *r)
{
    memset(r, 0, sizeof *r);
    int W = plan->pano_w, H = plan->pano_h, N = plan->ncam;
    size_t NP = (size_t)W * H;
    uint8_t *region = malloc(NP);
    r->dist = malloc(NP * N * sizeof(float));
    r->owner_luma = malloc(NP);
    float *wl = malloc(NP * N * sizeof(float));
    assert_non_null(region), assert_non_null(r->dist), assert_non_null(r->owner_luma), assert_non_null(wl);
    for (int i = 0; i < N; i++) {
        const float *P = plan->plane[0].P[i];
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float u, v;
                int ok = gt_sm_project(P, (float)x, (float)y, &u, &v);
                size_t j = (size_t)y * W + x;
                region[j] = ok && u >= 0 && v >= 0 && u <= (float)(plan->in_w - 1) &&
                            v <= (float)(plan->in_h - 1) && (!o->masks[i] || o->masks[i][j]);
            }
        ref_edt(region, W, H, (float)(W + H), r->dist + NP * i);
    }
    for (size_t j = 0; j < NP; j++) {
        int best = 255;
        float bd = 0, sum = 0;
        for (int i = 0; i < N; i++) {
            float d = r->dist[NP * i + j];
            if (d > bd) bd = d, best = i;
            float w = fminf(1.0f, o->feather_alpha * d);
            wl[NP * i + j] = w;
            sum += w;
        }
        r->owner_luma[j] = (uint8_t)best;
        for (int i = 0; i < N; i++) wl[NP * i + j] = sum > 0 ? wl[NP * i + j] / sum : 0.0f;
    }
    for (int p = 0; p < 3; p++) {
        const gt_stitch_plane *pl = &plan->plane[p];
        int pw = pl->out.w, ph = pl->out.h, sx = (int)pl->out.sx, sy = (int)pl->out.sy;
        size_t n = (size_t)pw * ph;
        r->owner[p] = malloc(n);
        r->weight[p] = malloc(n * N * sizeof(float));
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < pw; x++) {
                size_t jl = (size_t)y * sy * W + (size_t)x * sx;
                r->owner[p][(size_t)y * pw + x] = r->owner_luma[jl];
                for (int i = 0; i < N; i++) r->weight[p][n * i + (size_t)y * pw + x] = wl[NP * i + jl];
            }
        if (o->blend != GT_BLEND_MULTIBAND) continue;
        int L = pl->levels;
        for (int k = 0; k < L; k++) r->mbw[p][k] = malloc((size_t)pl->lw[k] * pl->lh[k] * N * sizeof(float));
        for (int i = 0; i < N; i++) {
            for (size_t j = 0; j < n; j++) r->mbw[p][0][n * i + j] = r->owner[p][j] == i ? 1.0f : 0.0f;
            for (int k = 1; k < L; k++) {
                size_t nk1 = (size_t)pl->lw[k - 1] * pl->lh[k - 1], nk = (size_t)pl->lw[k] * pl->lh[k];
                gt_stitch_reduce(r->mbw[p][k - 1] + nk1 * i, pl->lw[k - 1], pl->lh[k - 1], r->mbw[p][k] + nk * i);
            }
        }
        for (int k = 0; k < L; k++) {
            size_t nk = (size_t)pl->lw[k] * pl->lh[k];
            float *m = r->mbw[p][k];
            for (size_t j = 0; j < nk; j++) {
                float s = 0;
                for (int i = 0; i < N; i++) s += m[nk * i + j];
                for (int i = 0; i < N; i++) m[nk * i + j] = s > 0 ? m[nk * i + j] / s : 0.0f;
            }
            for (int i = 0; i < N; i++) ref_box(m + nk * i, pl->lw[k], pl->lh[k], r->mbbox[p][k][i]);
        }
    }
    free(region);
    free(wl);
}

static void ref_free(ref_plan *r)
{
    free(r->dist);
    free(r->owner_luma);
    for (int p = 0; p < 3; p++) {
        free(r->owner[p]);
        free(r->weight[p]);
        for (int k = 0; k < GT_STITCH_MAX_BANDS; k++) free(r->mbw[p][k]);
    }
}

/* first differing float of two arrays, -1 if none (bitwise) */
static long first_diff(const float *a, const float *b, size_t n)
{
    for (size_t j = 0; j < n; j++)
        if (memcmp(a + j, b + j, sizeof(float))) return (long)j;
    return -1;
}

static void check_plan(const gt_stitch_rig *rig, int in_w, int in_h, gt_pixfmt fmt, const gt_stitch_plan_opts *o,
                       const char *what)
{
    gt_stitch_plan plan;
    GT_ASSERT_OK(gt_stitch_plan_build(rig, in_w, in_h, fmt, o, &plan));
    ref_plan r;
    ref_build(&plan, o, &r);
    int W = plan.pano_w, H = plan.pano_h, N = plan.ncam;
    size_t NP = (size_t)W * H;
    long d = first_diff(plan.dist_luma, r.dist, NP * N);
    if (d >= 0)
        fail_msg("%s: distance of camera %ld at (%ld, %ld): %.9g, reference %.9g", what, d / (long)NP + 1,
                 d % (long)NP % W, d % (long)NP / W, plan.dist_luma[d], r.dist[d]);
    assert_memory_equal(plan.owner_luma, r.owner_luma, NP);
    long covered = 0;
    for (size_t j = 0; j < NP; j++) covered += plan.owner_luma[j] != 255;
    assert_true(covered > 0); /* the rig stitches something */
    for (int p = 0; p < 3; p++) {
        const gt_stitch_plane *pl = &plan.plane[p];
        size_t n = (size_t)pl->out.w * pl->out.h;
        assert_memory_equal(pl->owner, r.owner[p], n);
        if (o->blend == GT_BLEND_FEATHER) {
            d = first_diff(pl->weight, r.weight[p], n * N);
            if (d >= 0) fail_msg("%s: plane %d feather weight %ld: %.9g, reference %.9g", what, p, d, pl->weight[d], r.weight[p][d]);
            /* the boxes the GPU's copy keeps to hold every nonzero weight */
            long inside = 0;
            for (int i = 0; i < N; i++) {
                const int *b = pl->wbox[i];
                if (b[2] >= b[0]) {
                    assert_true(b[0] >= 0 && b[1] >= 0 && b[2] < pl->out.w && b[3] < pl->out.h && b[3] >= b[1]);
                    inside += (long)(b[2] - b[0] + 1) * (b[3] - b[1] + 1);
                }
                for (int y = 0; y < pl->out.h; y++)
                    for (int x = 0; x < pl->out.w; x++) {
                        bool in = x >= b[0] && x <= b[2] && y >= b[1] && y <= b[3];
                        float w = pl->weight[n * i + (size_t)y * pl->out.w + x];
                        if (!in && w != 0.0f)
                            fail_msg("%s: plane %d camera %d weight %.9g at (%d, %d), outside its box %d %d %d %d", what,
                                     p, i + 1, w, x, y, b[0], b[1], b[2], b[3]);
                    }
            }
            /* and leave some out: the copy moves less than the whole */
            assert_true(inside < (long)n * N);
        }
        if (o->blend != GT_BLEND_MULTIBAND) continue;
        for (int k = 0; k < pl->levels; k++) {
            size_t nk = (size_t)pl->lw[k] * pl->lh[k];
            d = first_diff(pl->mbw[k], r.mbw[p][k], nk * N);
            if (d >= 0)
                fail_msg("%s: plane %d level %d mask of camera %ld at %ld: %.9g, reference %.9g", what, p, k,
                         d / (long)nk + 1, d % (long)nk, pl->mbw[k][d], r.mbw[p][k][d]);
            for (int i = 0; i < N; i++)
                if (memcmp(pl->mbbox[k][i], r.mbbox[p][k][i], sizeof pl->mbbox[k][i]))
                    fail_msg("%s: plane %d level %d box of camera %d: %d %d %d %d, reference %d %d %d %d", what, p, k,
                             i + 1, pl->mbbox[k][i][0], pl->mbbox[k][i][1], pl->mbbox[k][i][2], pl->mbbox[k][i][3],
                             r.mbbox[p][k][i][0], r.mbbox[p][k][i][1], r.mbbox[p][k][i][2], r.mbbox[p][k][i][3]);
        }
    }
    ref_free(&r);
    gt_stitch_plan_free(&plan);
}

/* ------------------------------------------------------------ rigs */

/* camera -> panorama: translate the camera's centre to (tx, ty) after a
 * shear/rotation a, b and a perspective term p about the centre */
static void set_cam(gt_stitch_rig *rig, int i, int cw, int ch, double a, double b, double p, double tx, double ty)
{
    double cx = cw / 2.0, cy = ch / 2.0;
    double A[9] = {1.0, a, 0, b, 1.0, 0, p, 0, 1.0};
    double Tin[9] = {1, 0, -cx, 0, 1, -cy, 0, 0, 1}, Tout[9] = {1, 0, tx, 0, 1, ty, 0, 0, 1};
    double T1[9];
    gt_stitch_h_mul(A, Tin, T1);
    gt_stitch_h_mul(Tout, T1, rig->cam[i].H);
    GT_ASSERT_OK(gt_stitch_h_invert(rig->cam[i].H, rig->cam[i].Hinv));
}

/* the bench's rig at a tenth: 4 x 192x108 into 704x108 */
static void bench_rig(gt_stitch_rig *rig)
{
    memset(rig, 0, sizeof *rig);
    rig->pano_w = 704, rig->pano_h = 108, rig->ncam = 4;
    double step = (704 - 192) / 3.0;
    for (int i = 0; i < 4; i++)
        set_cam(rig, i, 192, 108, 0.004 * (i - 1.5), -0.002 * (i - 1.5), (i < 2 ? 1 : -1) * 2e-4, i * step + 96, 54);
}

static const gt_pixfmt fmts[] = {GT_PIX_YUYV422, GT_PIX_NV12, GT_PIX_YUV420P, GT_PIX_YUV422P};

static void test_plan_bench_rig(void **state)
{
    (void)state;
    gt_stitch_rig rig;
    bench_rig(&rig);
    gt_stitch_plan_opts o;
    gt_stitch_plan_opts_init(&o);
    for (int f = 0; f < 4; f++) {
        char what[64];
        snprintf(what, sizeof what, "bench rig, multiband(5), format %d", (int)fmts[f]);
        check_plan(&rig, 192, 108, fmts[f], &o, what);
    }
    o.blend = GT_BLEND_FEATHER;
    check_plan(&rig, 192, 108, GT_PIX_YUYV422, &o, "bench rig, feather");
    o.blend = GT_BLEND_NONE;
    check_plan(&rig, 192, 108, GT_PIX_NV12, &o, "bench rig, none");
}

/* cameras cut by every border of the panorama, rotated, with strong
 * perspective, one larger than the panorama, odd sizes, 3 bands */
static void test_plan_edges(void **state)
{
    (void)state;
    gt_stitch_rig rig;
    memset(&rig, 0, sizeof rig);
    rig.pano_w = 300, rig.pano_h = 122, rig.ncam = 6;
    set_cam(&rig, 0, 120, 90, 0.20, -0.15, 1.5e-3, 20, 30);    /* cut left and top */
    set_cam(&rig, 1, 120, 90, -0.1, 0.25, -2e-3, 150, 100);    /* cut bottom */
    set_cam(&rig, 2, 120, 90, 0.0, 0.0, 0.0, 290, 60);         /* cut right */
    set_cam(&rig, 3, 120, 90, 0.05, 0.0, 0.0, 110, 61);        /* inside */
    set_cam(&rig, 4, 120, 90, 0.0, 0.0, 0.0, 150, 61);         /* scaled below: nearly all */
    set_cam(&rig, 5, 120, 90, 0.0, 0.0, 0.0, 600, 61);         /* off the panorama: owns nothing */
    for (int k = 0; k < 6; k++) rig.cam[4].H[k] *= k % 3 == 2 ? 1.0 : 2.3;
    rig.cam[4].H[2] = 150 - 2.3 * 60, rig.cam[4].H[5] = 61 - 2.3 * 45;
    GT_ASSERT_OK(gt_stitch_h_invert(rig.cam[4].H, rig.cam[4].Hinv));
    gt_stitch_plan_opts o;
    gt_stitch_plan_opts_init(&o);
    for (int bands = 3; bands <= 6; bands += 3) {
        o.bands = bands;
        check_plan(&rig, 120, 90, GT_PIX_YUYV422, &o, "edges, yuyv422");
        check_plan(&rig, 120, 90, GT_PIX_NV12, &o, "edges, nv12");
    }
    o.blend = GT_BLEND_FEATHER;
    check_plan(&rig, 120, 90, GT_PIX_YUV422P, &o, "edges, feather");
    /* a camera whose footprint is unbounded: part of it maps behind the
     * panorama's plane (w <= 0), so no corner box bounds its region */
    set_cam(&rig, 2, 120, 90, 0.0, 0.0, -1.0 / 40, 250, 60);
    o.blend = GT_BLEND_MULTIBAND;
    o.bands = 5;
    check_plan(&rig, 120, 90, GT_PIX_YUYV422, &o, "edges, unbounded footprint");
    /* a camera that sees the whole panorama (no pixel outside its region:
     * distances 'far') beside one that does not */
    rig.ncam = 2;
    for (int k = 0; k < 6; k++) rig.cam[0].H[k] = rig.cam[4].H[k] * (k % 3 == 2 ? 1.0 : 2.0);
    rig.cam[0].H[2] = 150 - 4.6 * 60, rig.cam[0].H[5] = 61 - 4.6 * 45;
    memcpy(rig.cam[0].H + 6, (double[3]){0, 0, 1}, 3 * sizeof(double));
    GT_ASSERT_OK(gt_stitch_h_invert(rig.cam[0].H, rig.cam[0].Hinv));
    check_plan(&rig, 120, 90, GT_PIX_NV12, &o, "a camera covering the panorama");
}

/* masks: a disc cut out of one camera, another limited to a band, a third
 * masked off entirely */
static void test_plan_masks(void **state)
{
    (void)state;
    gt_stitch_rig rig;
    bench_rig(&rig);
    int W = rig.pano_w, H = rig.pano_h;
    uint8_t *m[3];
    for (int k = 0; k < 3; k++) m[k] = calloc((size_t)W * H, 1);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            size_t j = (size_t)y * W + x;
            m[0][j] = hypot(x - 150, y - 50) > 30 ? 255 : 0;
            m[1][j] = y > 20 && y < 90 && x > 200 && x < 420;
        }
    gt_stitch_plan_opts o;
    gt_stitch_plan_opts_init(&o);
    o.masks[0] = m[0], o.masks[1] = m[1], o.masks[3] = m[2];
    check_plan(&rig, 192, 108, GT_PIX_YUYV422, &o, "masks, multiband");
    o.blend = GT_BLEND_FEATHER;
    check_plan(&rig, 192, 108, GT_PIX_NV12, &o, "masks, feather");
    for (int k = 0; k < 3; k++) free(m[k]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_bench_rig),
        cmocka_unit_test(test_plan_edges),
        cmocka_unit_test(test_plan_masks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
