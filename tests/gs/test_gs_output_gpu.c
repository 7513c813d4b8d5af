/* gsrender's Y4M output on the GPU (kernels/gs/gs_output.cu) against the CPU
 * conversion (gt_rgb_to_yuv), byte for byte:
 *  - the kernel on random 8-bit images, every pixel format, both matrices,
 *    both ranges, odd sizes where the format allows them;
 *  - rendered frames: gt_gs_gpu_render_yuv through the pinned slots, frames
 *    submitted ahead of their wait as the orbit does, against the rgba8
 *    image of the same view converted on the CPU;
 *  - the whole job: gt_gs_render_orbit to a Y4M file on the GPU against
 *    the same orbit's cameras rendered to rgba8 and converted on the CPU.
 * Exits 77 without a GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gs_testutil.h"
#include "gt_config.h"
#include "io/yuv.h"
#if GT_HAVE_CUDA
#include "kernels/gs/gs_output.h"
#endif

/* CPU conversion of an rgba8 image (alpha dropped) */
static void cpu_yuv(const uint8_t *rgba8, int w, int h, gt_pixfmt f, gt_yuv_matrix m, gt_yuv_range r,
                    uint8_t *out)
{
    size_t np = (size_t)w * h;
    uint8_t *rgb = malloc(np * 3);
    for (size_t i = 0; i < np; i++) memcpy(rgb + 3 * i, rgba8 + 4 * i, 3);
    GT_ASSERT_OK(gt_rgb_to_yuv(rgb, w, h, m, r, out, f));
    free(rgb);
}

static void first_difference(const uint8_t *a, const uint8_t *b, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) fail_msg("%s: byte %zu of %zu: GPU %d, CPU %d", what, i, n, a[i], b[i]);
}

static void test_kernel_matches_cpu(void **state)
{
    (void)state;
#if GT_HAVE_CUDA
    static const int sizes[][2] = {{2, 2}, {34, 18}, {640, 360}, {1, 1}, {7, 5}, {31, 2}};
    gt_rng rng = {42};
    int compared = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        int w = sizes[si][0], h = sizes[si][1];
        size_t np = (size_t)w * h;
        uint8_t *rgb = malloc(np * 3);
        for (size_t i = 0; i < np * 3; i++) rgb[i] = (uint8_t)gt_rng_u64(&rng);
        /* the extremes and greys, where rounding sits on .5 most often */
        for (size_t i = 0; i < np && i < 256; i++) rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = (uint8_t)i;
        if (np > 2) memset(rgb + 3, 255, 3);
        for (int f = 0; f < GT_PIX_COUNT; f++) {
            size_t bytes = gt_pixfmt_frame_bytes((gt_pixfmt)f, w, h);
            if (!bytes) continue; /* odd size for a subsampled format */
            for (int m = 0; m < 2; m++)
                for (int r = 0; r < 2; r++) {
                    uint8_t *g = malloc(bytes), *c = malloc(bytes);
                    memset(c, 0xAB, bytes);
                    gt_gs_yuv_planes planes;
                    GT_ASSERT_OK(gt_gs_yuv_planes_of(f, w, h, m, r, &planes));
                    assert_int_equal(planes.bytes, bytes);
                    GT_ASSERT_OK(gt_gs_cu_rgb_to_yuv(rgb, NULL, &planes, g));
                    GT_ASSERT_OK(gt_rgb_to_yuv(rgb, w, h, (gt_yuv_matrix)m, (gt_yuv_range)r, c, (gt_pixfmt)f));
                    char what[96];
                    snprintf(what, sizeof what, "%dx%d %s matrix %d range %d", w, h,
                             gt_pixfmt_name((gt_pixfmt)f), m, r);
                    first_difference(g, c, bytes, what);
                    compared++;
                    free(g);
                    free(c);
                }
        }
        free(rgb);
    }
    assert_true(compared >= 6 * 4 * 2);
#endif
}

static void test_render_yuv_slots(void **state)
{
    (void)state;
    gt_gs_scene s;
    GT_ASSERT_OK(gs_random_scene(&s, 3000, 2, 0.01, 0.2, 7));
    gt_gs_params p;
    gt_gs_params_init(&p);
    gt_gs_gpu *g;
    GT_ASSERT_OK(gt_gs_gpu_create(&s, &p, &g));
    static const int sizes[][3] = {{96, 64, GT_PIX_YUV420P}, {95, 63, GT_PIX_YUV444P}};
    for (int si = 0; si < 2; si++) {
        int w = sizes[si][0], h = sizes[si][1];
        gt_pixfmt f = (gt_pixfmt)sizes[si][2];
        size_t bytes = gt_pixfmt_frame_bytes(f, w, h);
        GT_ASSERT_OK(gt_gs_gpu_yuv_start(g, w, h, f, GT_BT601, GT_RANGE_LIMITED));
        enum { N = 7 };
        uint8_t *want[N];
        gt_gs_camera cams[N];
        gt_gs_image im;
        GT_ASSERT_OK(gt_gs_image_alloc(&im, w, h));
        for (int k = 0; k < N; k++) {
            GT_ASSERT_OK(gs_random_camera(&cams[k], 3.0, w, h, 100 + (uint64_t)k));
            GT_ASSERT_OK(gt_gs_gpu_render(g, &cams[k], &im, GT_GS_OUT_RGBA8, NULL));
            want[k] = malloc(bytes);
            cpu_yuv(im.rgba8, w, h, f, GT_BT601, GT_RANGE_LIMITED, want[k]);
        }
        /* as the orbit: frame k+1 is submitted before frame k is taken */
        gt_timings tm;
        gt_timings_init(&tm);
        GT_ASSERT_OK(gt_gs_gpu_render_yuv(g, &cams[0], 0, NULL));
        for (int k = 0; k < N; k++) {
            if (k + 1 < N) GT_ASSERT_OK(gt_gs_gpu_render_yuv(g, &cams[k + 1], (k + 1) % 2, k % 3 ? &tm : NULL));
            const uint8_t *frame;
            double ms = -1;
            GT_ASSERT_OK(gt_gs_gpu_yuv_frame(g, k % 2, &frame, &ms));
            assert_true(ms >= 0);
            char what[64];
            snprintf(what, sizeof what, "%dx%d frame %d", w, h, k);
            first_difference(frame, want[k], bytes, what);
            if (k > 0) free(want[k]);
        }
        assert_true(gt_timings_get(&tm, "yuv convert") > 0);
        /* the rgba8 path after YUV frames gives the same image again */
        GT_ASSERT_OK(gt_gs_gpu_render(g, &cams[0], &im, GT_GS_OUT_RGBA8 | GT_GS_OUT_FLOAT, NULL));
        uint8_t *again = malloc(bytes);
        cpu_yuv(im.rgba8, w, h, f, GT_BT601, GT_RANGE_LIMITED, again);
        first_difference(again, want[0], bytes, "rgba8 render after the YUV frames");
        free(again);
        free(want[0]);
        gt_gs_image_free(&im);
    }
    gt_gs_gpu_destroy(g);
    gt_gs_scene_free(&s);
}

/* the job (gsrender --orbit N -o x.y4m --device cuda) against its cameras
 * rendered to rgba8 and converted on the CPU */
static void test_job_orbit_y4m(void **state)
{
    (void)state;
    const char *td = getenv("GT_TESTDATA");
    if (!td) skip();
    char scene[1024], out[] = "/tmp/gt_gs_out_XXXXXX.y4m"; /* the extension says Y4M */
    snprintf(scene, sizeof scene, "%s/gs/scene.ply", td);
    int fd = mkstemps(out, 4);
    assert_true(fd >= 0);
    close(fd);
    const int W = 160, H = 90, N = 5;
    gt_gs_job j;
    gt_gs_job_init(&j);
    j.scene = scene;
    j.orbit = N;
    j.output = out;
    j.width = W, j.height = H, j.have_size = true;
    j.device = GT_DEVICE_CUDA;
    GT_ASSERT_OK(gt_gs_render_orbit(&j));

    FILE *fp = fopen(out, "rb");
    assert_non_null(fp);
    char line[256];
    assert_non_null(fgets(line, sizeof line, fp));
    assert_memory_equal(line, "YUV4MPEG2 W160 H90 ", 19);
    gt_gs_scene s;
    GT_ASSERT_OK(gt_gs_scene_read(scene, &s));
    float cf[3], ext;
    gt_gs_scene_bounds(&s, cf, &ext);
    double centre[3] = {cf[0], cf[1], cf[2]}, up[3] = {0, 1, 0};
    gt_gs_gpu *g;
    GT_ASSERT_OK(gt_gs_gpu_create(&s, &j.render, &g));
    gt_gs_image im;
    GT_ASSERT_OK(gt_gs_image_alloc(&im, W, H));
    size_t bytes = gt_pixfmt_frame_bytes(GT_PIX_YUV420P, W, H);
    uint8_t *want = malloc(bytes), *got = malloc(bytes);
    for (int f = 0; f < N; f++) {
        gt_gs_camera cam;
        GT_ASSERT_OK(gt_gs_camera_orbit(&cam, centre, up, 2.5 * ext, j.orbit_elevation, f, N, j.fovy, W, H));
        GT_ASSERT_OK(gt_gs_gpu_render(g, &cam, &im, GT_GS_OUT_RGBA8, NULL));
        cpu_yuv(im.rgba8, W, H, GT_PIX_YUV420P, GT_BT601, GT_RANGE_LIMITED, want);
        assert_non_null(fgets(line, sizeof line, fp));
        assert_string_equal(line, "FRAME\n");
        assert_int_equal(fread(got, 1, bytes, fp), bytes);
        char what[32];
        snprintf(what, sizeof what, "orbit frame %d", f);
        first_difference(got, want, bytes, what);
    }
    assert_int_equal(fgetc(fp), EOF);
    fclose(fp);
    unlink(out);
    free(want);
    free(got);
    gt_gs_image_free(&im);
    gt_gs_gpu_destroy(g);
    gt_gs_scene_free(&s);
}

int main(void)
{
    gt_test_require_gpu();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_matches_cpu),
        cmocka_unit_test(test_render_yuv_slots),
        cmocka_unit_test(test_job_orbit_y4m),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
