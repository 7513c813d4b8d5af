/* GPU vs CPU reference for rigs stitched through rays (stitch_proj.h):
 * a full spherical (equirectangular) panorama of a ring of cameras, a
 * partial cylindrical one, and a plane of cameras with radial distortion,
 * in every input format and blend mode, on views of a real photograph and
 * on noise, through the synchronous call and the streaming slots. Both
 * paths compute the mapping with the same float operations from the same
 * tables, so every sample must agree within 1 (an ulp at a .5 rounding
 * boundary), and the multiband mask pyramids bit for bit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gt_test.h"
#include "stitch_sphere.h"


typedef struct {
    const char *name;
    gt_stitch_proj proj;
    int W, H, ring, w, h;
    double hfov, k1, k2;
} ray_case;

static void rig_of(const ray_case *rc, sphere_spec *s, gt_stitch_rig *rig)
{
    sphere_spec_ring(s, rc->ring, rc->w, rc->h, rc->hfov, 0);
    s->k1 = rc->k1, s->k2 = rc->k2;
    if (rc->proj.kind == GT_PROJ_PLANE) { /* three cameras around the front */
        s->n = 3;
        s->yaw[0] = -35, s->yaw[1] = 0, s->yaw[2] = 35;
    }
    sphere_truth_rig(s, rc->proj, rc->W, rc->H, rig);
    for (int i = 0; i < s->n; i++) rig->cam[i].gain = (float)(1 / s->gain[i][0]);
    GT_ASSERT_OK(gt_stitch_rig_finish(rig));
    assert_true(rig->ray);
}

/* The photograph's views of spec s's cameras in format f, kept in views[f]:
 * rendered once per rig and chroma layout (the formats of one layout sample
 * the same positions) and repacked for the other formats of the layout. */
static uint8_t *const *photo_views(const photo_t *src, const sphere_spec *s, gt_pixfmt f,
                                   uint8_t *views[GT_PIX_COUNT][SPH_MAX])
{
    if (views[f][0]) return views[f];
    size_t inb = gt_pixfmt_frame_bytes(f, s->w, s->h);
    for (int i = 0; i < s->n; i++) assert_non_null(views[f][i] = malloc(inb));
    int from = -1;
    for (int o = 0; o < GT_PIX_COUNT && from < 0; o++)
        if (o != (int)f && views[o][0] && stitch_repack(views[o][0], (gt_pixfmt)o, views[f][0], f, s->w, s->h))
            from = o;
    for (int i = 0; i < s->n; i++) {
        if (from >= 0)
            assert_true(stitch_repack(views[from][i], (gt_pixfmt)from, views[f][i], f, s->w, s->h));
        else
            sphere_render(src, s, i, f, views[f][i]);
    }
    return views[f];
}

/* Set 0 (the photograph's views, or noise) goes through the synchronous
 * call (slot 0), then three streamed submissions, two slots in flight, slot
 * k & 1 getting set order[k]: slot 0 is reused while slot 1 is in flight,
 * and each submission's set differs from the one its slot held before, so
 * an upload, a computation or a download left out would show as the
 * previous frame. Two references on the CPU instead of one per submission. */
enum { SETS = 2, SUBMITS = 3 };
static const int order[SUBMITS] = {1, 0, 0};

static void run(const ray_case *rc, const photo_t *src, gt_pixfmt f, gt_blend_mode b, int noise,
                uint8_t *views[GT_PIX_COUNT][SPH_MAX])
{
    sphere_spec s;
    gt_stitch_rig rig;
    rig_of(rc, &s, &rig);
    size_t inb = gt_pixfmt_frame_bytes(f, s.w, s.h);
    const uint8_t *cam[SETS][SPH_MAX];
    uint8_t *own[SETS][SPH_MAX] = {{NULL}};
    gt_rng r = {77 + (uint64_t)f * 5 + (uint64_t)b};
    uint8_t *const *photo = noise ? NULL : photo_views(src, &s, f, views);
    for (int k = 0; k < SETS; k++)
        for (int i = 0; i < s.n; i++) {
            if (noise || k > 0) {
                own[k][i] = malloc(inb);
                for (size_t q = 0; q < inb; q++) own[k][i][q] = (uint8_t)(gt_rng_u64(&r) >> 56);
                cam[k][i] = own[k][i];
            } else {
                cam[k][i] = photo[i];
            }
        }
    gt_stitch_plan_opts o;
    gt_stitch_plan_opts_init(&o);
    o.blend = b;
    gt_stitch_plan plan;
    GT_ASSERT_OK(gt_stitch_plan_build(&rig, s.w, s.h, f, &o, &plan));
    gt_stitch_gpu *g;
    GT_ASSERT_OK(gt_stitch_gpu_create(&plan, &g));
    if (b == GT_BLEND_MULTIBAND)
        for (int p = 0; p < 3; p++)
            for (int k = 0; k < plan.plane[p].levels; k++) {
                const gt_stitch_plane *pl = &plan.plane[p];
                size_t n = (size_t)pl->lw[k] * pl->lh[k] * plan.ncam;
                float *m = malloc(n * sizeof(float));
                GT_ASSERT_OK(gt_stitch_gpu_masks(g, p, k, m));
                assert_memory_equal(m, pl->mbw[k], n * sizeof(float));
                free(m);
            }
    uint8_t *ref[SETS], *got = malloc(plan.out_bytes);
    for (int k = 0; k < SETS; k++) {
        ref[k] = malloc(plan.out_bytes);
        GT_ASSERT_OK(gt_stitch_frame_cpu(&plan, cam[k], ref[k]));
    }
    GT_ASSERT_OK(gt_stitch_gpu_frame(g, cam[0], got));
    size_t where = 0;
    int d = stitch_max_diff(ref[0], got, plan.out_bytes, &where);
    printf("%-12s %-8s blend %d %s: max |gpu-cpu| = %d\n", rc->name, gt_pixfmt_name(f), b, noise ? "noise" : "photo", d);
    if (d > 1) fail_msg("sample %zu: cpu %d gpu %d", where, ref[0][where], got[where]);
    for (int k = 0; k <= SUBMITS; k++) { /* streaming, two slots in flight */
        if (k < SUBMITS) {
            GT_ASSERT_OK(gt_stitch_gpu_wait(g, k & 1));
            for (int i = 0; i < s.n; i++) memcpy(gt_stitch_gpu_in_buf(g, k & 1, i), cam[order[k]][i], inb);
            GT_ASSERT_OK(gt_stitch_gpu_submit(g, k & 1));
        }
        if (k > 0) {
            GT_ASSERT_OK(gt_stitch_gpu_wait(g, (k - 1) & 1));
            d = stitch_max_diff(ref[order[k - 1]], gt_stitch_gpu_out_buf(g, (k - 1) & 1), plan.out_bytes, &where);
            if (d > 1)
                fail_msg("streamed submission %d (set %d) sample %zu differs by %d", k - 1, order[k - 1], where, d);
        }
    }
    double ms[4];
    long frames;
    gt_stitch_gpu_stage_ms(g, ms, &frames);
    assert_int_equal(frames, SUBMITS + 1);
    gt_stitch_gpu_destroy(g);
    gt_stitch_plan_free(&plan);
    for (int k = 0; k < SETS; k++) {
        free(ref[k]);
        for (int i = 0; i < s.n; i++) free(own[k][i]);
    }
    free(got);
    gt_stitch_rig_free(&rig);
}

static const ray_case cases[] = {
    {"spherical", {GT_PROJ_SPHERICAL, -180, 180, 90, -90}, 640, 320, 6, 240, 180, 90, 0, 0},
    {"cylindrical", {GT_PROJ_CYLINDRICAL, -150, 150, 45, -55}, 600, 250, 6, 240, 180, 90, -0.05, 0.01},
    {"plane+lens", {GT_PROJ_PLANE, -65, 65, 40, -50}, 500, 300, 6, 240, 180, 60, -0.15, 0.04},
};

static void test_rays_gpu_vs_cpu(void **state)
{
    (void)state;
    photo_t src;
    sphere_load(4, &src);
    const gt_pixfmt fmts[5] = {GT_PIX_YUYV422, GT_PIX_UYVY422, GT_PIX_YUV420P, GT_PIX_NV12, GT_PIX_YUV422P};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        uint8_t *views[GT_PIX_COUNT][SPH_MAX] = {{NULL}}; /* this rig's views of the photograph */
        for (int f = 0; f < 5; f++)
            for (int b = 0; b < 3; b++)
                for (int noise = 0; noise < 2; noise++)
                    if (!noise || f % 2 == 0) run(&cases[c], &src, fmts[f], (gt_blend_mode)b, noise, views);
        for (int f = 0; f < GT_PIX_COUNT; f++)
            for (int i = 0; i < SPH_MAX; i++) free(views[f][i]);
    }
    photo_free(&src);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* each case's line as it is printed, even into a pipe */
    gt_test_require_gpu();
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_rays_gpu_vs_cpu)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
