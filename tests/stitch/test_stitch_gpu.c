/* GPU vs CPU reference: every sample within 1 (8-bit) for each format and
 * blend mode, on a natural-looking scene and on random noise, through the
 * synchronous call and through the double-buffered streaming path.
 * Tolerance 1: both paths use the same float operations (stitch_math.h,
 * explicit fmaf, IEEE division); only a value landing within an ulp of a .5
 * rounding boundary could differ, by one. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "stitch_photo.h"
#include "stitch_synth.h"

static size_t fbytes(gt_pixfmt f, int w, int h)
{
    return f == GT_PIX_YUV420P || f == GT_PIX_NV12 ? (size_t)w * h * 3 / 2 : (size_t)w * h * 2;
}


static const char *fmt_names[] = {"yuyv422", "uyvy422", "yuv420p", "nv12", "yuv422p", "yuv444p"};

/* gt_stitch_gpu_prealloc on a thread of its own, as yuvstitch's CUDA thread
 * makes the buffers while the plan is built */
typedef struct {
    int ncam;
    size_t in_bytes, out_bytes;
    gt_stitch_gpu *pre;
    gt_status st;
} prealloc_arg;

static void *prealloc_main(void *p)
{
    prealloc_arg *a = p;
    gt_device_prepare(GT_DEVICE_CUDA, 0);
    a->st = gt_stitch_gpu_prealloc(a->ncam, a->in_bytes, a->out_bytes, &a->pre);
    return NULL;
}

static gt_status create_on_thread(const gt_stitch_plan *plan, gt_stitch_gpu **g)
{
    prealloc_arg a = {plan->ncam, plan->in_bytes, plan->out_bytes, NULL, GT_OK};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, prealloc_main, &a), 0);
    pthread_join(th, NULL);
    GT_ASSERT_OK(a.st);
    return gt_stitch_gpu_create_from(a.pre, plan, g);
}

/* multiband: the GPU's mask pyramids (built there from the owner maps) are
 * the plan's, bit for bit, every plane and level */
static void check_masks(const gt_stitch_plan *plan, gt_stitch_gpu *g)
{
    if (plan->blend != GT_BLEND_MULTIBAND) return;
    int levels = 0;
    for (int p = 0; p < 3; p++) {
        const gt_stitch_plane *pl = &plan->plane[p];
        for (int k = 0; k < pl->levels; k++) {
            size_t n = (size_t)pl->lw[k] * pl->lh[k] * plan->ncam;
            float *m = malloc(n * sizeof(float));
            assert_non_null(m);
            GT_ASSERT_OK(gt_stitch_gpu_masks(g, p, k, m));
            size_t bad = 0, first = 0;
            for (size_t j = 0; j < n; j++)
                if (memcmp(&m[j], &pl->mbw[k][j], sizeof(float)) != 0 && bad++ == 0) first = j;
            if (bad) fail_msg("plane %d level %d: %zu mask weights differ, first at %zu: cpu %.9g gpu %.9g", p, k, bad,
                              first, pl->mbw[k][first], m[first]);
            free(m);
            levels++;
        }
    }
    assert_true(levels >= 3);
    assert_int_equal(gt_stitch_gpu_masks(g, 0, plan->plane[0].levels, NULL), GT_ERR_USAGE);
}

/* the rig of the scene cases: 4 cameras of CW x CH into a PW x PH panorama */
enum { CW = 136, CH = 150, PW = 402, PH = 130, SETS = 4 };

/* The scene's views in format f: SETS sets of the 4 cameras, the exposure
 * changing from set to set. The views depend on the format only, not on the
 * blend mode or the way the stitcher is made, so they are rendered once per
 * chroma layout (the formats of one layout sample the same positions) and
 * kept for the run; the others of the layout are repacked from them. */
static uint8_t *scene_cam[GT_PIX_COUNT][SETS][4];

static void scene_views(gt_pixfmt f, uint8_t *cam[SETS][4])
{
    if (!scene_cam[f][0][0]) {
        synth_scene sc;
        synth_init(&sc, 99);
        gt_stitch_rig rig;
        synth_rig(&rig, PW, PH, CW, CH, 0);
        const double e[4] = {0.9, 1.0, 1.1, 1.05};
        size_t inb = fbytes(f, CW, CH);
        for (int s = 0; s < SETS; s++)
            for (int i = 0; i < 4; i++) assert_non_null(scene_cam[f][s][i] = malloc(inb));
        int from = -1;
        for (int o = 0; o < GT_PIX_COUNT && from < 0; o++)
            if (o != (int)f && scene_cam[o][0][0] &&
                stitch_repack(scene_cam[o][0][0], (gt_pixfmt)o, scene_cam[f][0][0], f, CW, CH))
                from = o;
        for (int s = 0; s < SETS; s++)
            for (int i = 0; i < 4; i++) {
                if (from >= 0)
                    assert_true(stitch_repack(scene_cam[from][s][i], (gt_pixfmt)from, scene_cam[f][s][i], f, CW, CH));
                else
                    synth_render(&sc, rig.cam[i].H, e[i] * (1.0 + 0.05 * s), f, CW, CH, scene_cam[f][s][i]);
            }
    }
    memcpy(cam, scene_cam[f], sizeof scene_cam[f]);
}

static int free_scenes(void **state)
{
    (void)state;
    for (int f = 0; f < GT_PIX_COUNT; f++)
        for (int s = 0; s < SETS; s++)
            for (int i = 0; i < 4; i++) free(scene_cam[f][s][i]);
    memset(scene_cam, 0, sizeof scene_cam);
    return 0;
}

/* pre: the GPU stitcher made in two steps, its buffers on another thread */
static void run_case_with(gt_pixfmt f, gt_blend_mode b, int noise, bool pre)
{
    gt_stitch_rig rig;
    synth_rig(&rig, PW, PH, CW, CH, 0);
    rig.cam[1].gain = 1.1f;
    rig.cam[3].gain = 0.93f;
    size_t inb = fbytes(f, CW, CH);
    gt_rng r = {1234 + (uint64_t)f * 7 + (uint64_t)b};
    uint8_t *cam[SETS][4];
    if (noise)
        for (int s = 0; s < SETS; s++)
            for (int i = 0; i < 4; i++) {
                cam[s][i] = malloc(inb);
                for (size_t k = 0; k < inb; k++) cam[s][i][k] = (uint8_t)(gt_rng_u64(&r) >> 56);
            }
    else /* the scene (kept for the run) */
        scene_views(f, cam);
    gt_stitch_plan_opts o;
    gt_stitch_plan_opts_init(&o);
    o.blend = b;
    gt_stitch_plan plan;
    GT_ASSERT_OK(gt_stitch_plan_build(&rig, CW, CH, f, &o, &plan));
    gt_stitch_gpu *g;
    GT_ASSERT_OK(pre ? create_on_thread(&plan, &g) : gt_stitch_gpu_create(&plan, &g));
    check_masks(&plan, g);
    uint8_t *ref[SETS], *got = malloc(plan.out_bytes);
    for (int s = 0; s < SETS; s++) {
        ref[s] = malloc(plan.out_bytes);
        const uint8_t *in[4] = {cam[s][0], cam[s][1], cam[s][2], cam[s][3]};
        GT_ASSERT_OK(gt_stitch_frame_cpu(&plan, in, ref[s]));
    }
    /* synchronous */
    const uint8_t *in0[4] = {cam[0][0], cam[0][1], cam[0][2], cam[0][3]};
    GT_ASSERT_OK(gt_stitch_gpu_frame(g, in0, got));
    size_t where = 0;
    int d = stitch_max_diff(ref[0], got, plan.out_bytes, &where);
    printf("%s blend %d %s: max |gpu-cpu| = %d\n", fmt_names[f], b, noise ? "noise" : "scene", d);
    if (d > 1) fail_msg("sample %zu: cpu %d gpu %d", where, ref[0][where], got[where]);
    /* streaming: two slots in flight */
    for (int s = 0; s < SETS + 1; s++) {
        if (s < SETS) {
            int slot = s & 1;
            GT_ASSERT_OK(gt_stitch_gpu_wait(g, slot));
            for (int i = 0; i < 4; i++) memcpy(gt_stitch_gpu_in_buf(g, slot, i), cam[s][i], inb);
            GT_ASSERT_OK(gt_stitch_gpu_submit(g, slot));
        }
        if (s > 0) {
            int slot = (s - 1) & 1;
            GT_ASSERT_OK(gt_stitch_gpu_wait(g, slot));
            d = stitch_max_diff(ref[s - 1], gt_stitch_gpu_out_buf(g, slot), plan.out_bytes, &where);
            if (d > 1) fail_msg("streamed set %d sample %zu: cpu %d gpu %d", s - 1, where, ref[s - 1][where],
                                gt_stitch_gpu_out_buf(g, slot)[where]);
        }
    }
    double ms[4];
    long frames;
    gt_stitch_gpu_stage_ms(g, ms, &frames);
    assert_true(frames == SETS + 1);
    gt_stitch_gpu_destroy(g);
    gt_stitch_plan_free(&plan);
    for (int s = 0; s < SETS; s++) {
        free(ref[s]);
        for (int i = 0; i < 4 && noise; i++) free(cam[s][i]);
    }
    free(got);
}

static void run_case(gt_pixfmt f, gt_blend_mode b, int noise) { run_case_with(f, b, noise, false); }

/* the two-step creation gives the same frames; buffers of other sizes are
 * refused (and released) */
static void test_gpu_prealloc(void **state)
{
    (void)state;
    run_case_with(GT_PIX_YUYV422, GT_BLEND_MULTIBAND, 0, true);
    run_case_with(GT_PIX_NV12, GT_BLEND_FEATHER, 1, true);
    gt_stitch_rig rig;
    synth_rig(&rig, PW, PH, CW, CH, 0);
    gt_stitch_plan_opts o;
    gt_stitch_plan_opts_init(&o);
    gt_stitch_plan plan;
    GT_ASSERT_OK(gt_stitch_plan_build(&rig, CW, CH, GT_PIX_YUYV422, &o, &plan));
    gt_stitch_gpu *pre, *g = (gt_stitch_gpu *)&plan;
    GT_ASSERT_OK(gt_stitch_gpu_prealloc(plan.ncam, plan.in_bytes + 2, plan.out_bytes, &pre));
    assert_int_equal(gt_stitch_gpu_create_from(pre, &plan, &g), GT_ERR_USAGE);
    assert_null(g);
    gt_stitch_plan_free(&plan);
}

static void test_gpu_vs_cpu(void **state)
{
    (void)state;
    const gt_pixfmt fmts[5] = {GT_PIX_YUYV422, GT_PIX_UYVY422, GT_PIX_YUV420P, GT_PIX_NV12, GT_PIX_YUV422P};
    for (int f = 0; f < 5; f++)
        for (int b = 0; b < 3; b++)
            for (int noise = 0; noise < 2; noise++) run_case(fmts[f], (gt_blend_mode)b, noise);
}

/* The real-photograph ground truth (test_stitch_photo.c) through the GPU:
 * the same views and rig, every blend mode, packed and planar formats; the
 * GPU panorama within 1 of the CPU reference everywhere, and its luma PSNR
 * against the photograph >= 38 dB where one camera covers. */
static void test_gpu_photo(void **state)
{
    (void)state;
    const double e[4] = {0.85, 1.0, 1.07, 0.92};
    const gt_pixfmt fmts[3] = {GT_PIX_YUYV422, GT_PIX_YUV420P, GT_PIX_YUV422P};
    for (int ph = 0; ph < PHOTO_N; ph++) {
        photo_t photo;
        photo_load(photo_names[ph], &photo);
        gt_stitch_rig rig;
        int cw;
        photo_rig(&rig, photo.w, photo.h, 16, &cw);
        for (int i = 0; i < 4; i++) rig.cam[i].gain = (float)(1.0 / e[i]);
        for (int fi = 0; fi < 3; fi++) {
            gt_pixfmt f = fmts[fi];
            uint8_t *cam[4];
            for (int i = 0; i < 4; i++) {
                cam[i] = malloc(gt_pixfmt_frame_bytes(f, cw, PHOTO_CH));
                photo_render(&photo, rig.cam[i].H, e[i], f, cw, PHOTO_CH, cam[i]);
            }
            const uint8_t *in[4] = {cam[0], cam[1], cam[2], cam[3]};
            for (int b = 0; b < 3; b++) {
                gt_stitch_plan_opts o;
                gt_stitch_plan_opts_init(&o);
                o.blend = (gt_blend_mode)b;
                gt_stitch_plan plan;
                GT_ASSERT_OK(gt_stitch_plan_build(&rig, cw, PHOTO_CH, f, &o, &plan));
                uint8_t *ref = malloc(plan.out_bytes), *got = malloc(plan.out_bytes);
                GT_ASSERT_OK(gt_stitch_frame_cpu(&plan, in, ref));
                gt_stitch_gpu *g;
                GT_ASSERT_OK(gt_stitch_gpu_create(&plan, &g));
                check_masks(&plan, g);
                GT_ASSERT_OK(gt_stitch_gpu_frame(g, in, got));
                size_t where = 0;
                int d = stitch_max_diff(ref, got, plan.out_bytes, &where);
                gt_plane_view pv[3];
                gt_stitch_planes(f, photo.w, photo.h, pv);
                double se = 0;
                long n = 0;
                for (int y = 1; y < photo.h - 1; y++)
                    for (int x = 1; x < photo.w - 1; x++) {
                        int c = 0;
                        for (int i = 0; i < 4; i++)
                            c += plan.dist_luma[(size_t)photo.w * photo.h * i + (size_t)y * photo.w + x] > 0;
                        if (c != 1) continue;
                        double dv = (double)got[pv[0].off + (size_t)y * pv[0].pitch + (size_t)x * pv[0].step] -
                                    stitch_q(photo.c[0][(size_t)y * photo.w + x]);
                        se += dv * dv;
                        n++;
                    }
                double psnr = 10 * log10(255.0 * 255.0 / (se / n));
                printf("%-20s %s blend %d: max |gpu-cpu| = %d, GPU luma PSNR %.2f dB (%ld single-camera pixels)\n",
                       photo_names[ph], fmt_names[f], b, d, psnr, n);
                if (d > 1) fail_msg("sample %zu: cpu %d gpu %d", where, ref[where], got[where]);
                assert_true(n > (long)photo.w * photo.h / 2);
                assert_true(psnr >= 38.0);
                gt_stitch_gpu_destroy(g);
                gt_stitch_plan_free(&plan);
                free(ref);
                free(got);
            }
            for (int i = 0; i < 4; i++) free(cam[i]);
        }
        photo_free(&photo);
    }
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* each case's line as it is printed, even into a pipe */
    gt_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_vs_cpu),
        cmocka_unit_test(test_gpu_prealloc),
        cmocka_unit_test(test_gpu_photo),
    };
    return cmocka_run_group_tests(tests, NULL, free_scenes);
}
