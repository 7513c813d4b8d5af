/* Raw YUV / Y4M streams, pixel-format conversion and YUV<->RGB. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/status.h"
#include "gt_test.h"
#include "io/yuv.h"
#include "io_test_util.h"

/* temporary files in one folder per run (io_test_util.h) */
#define tpath io_tmp

static uint8_t *random_frame(gt_rng *rng, size_t n)
{
    uint8_t *b = malloc(n);
    for (size_t i = 0; i < n; i++) b[i] = (uint8_t)gt_rng_u64(rng);
    return b;
}

static void test_frame_bytes(void **state)
{
    (void)state;
    assert_int_equal(gt_pixfmt_frame_bytes(GT_PIX_YUV420P, 4, 2), 12);
    assert_int_equal(gt_pixfmt_frame_bytes(GT_PIX_NV12, 4, 2), 12);
    assert_int_equal(gt_pixfmt_frame_bytes(GT_PIX_YUYV422, 4, 3), 24);
    assert_int_equal(gt_pixfmt_frame_bytes(GT_PIX_YUV444P, 3, 3), 27);
    assert_int_equal(gt_pixfmt_frame_bytes(GT_PIX_YUV420P, 3, 2), 0);
    assert_int_equal(gt_pixfmt_frame_bytes(GT_PIX_YUV420P, 4, 3), 0);
    assert_int_equal(gt_pixfmt_frame_bytes(GT_PIX_YUV444P, 3, 3), 27);
    assert_int_equal(gt_pixfmt_frame_bytes(GT_PIX_UYVY422, -2, 2), 0);
    assert_int_equal(gt_pixfmt_check_size(GT_PIX_YUV422P, 5, 2), GT_ERR_USAGE);
    assert_non_null(strstr(gt_errmsg(), "even"));
    gt_pixfmt f;
    GT_ASSERT_OK(gt_pixfmt_parse("--pix-fmt", "nv12", &f));
    assert_int_equal(f, GT_PIX_NV12);
    assert_int_equal(gt_pixfmt_parse("--pix-fmt", "rgb24", &f), GT_ERR_USAGE);
    for (int i = 0; i < GT_PIX_COUNT; i++) {
        GT_ASSERT_OK(gt_pixfmt_parse("x", gt_pixfmt_name((gt_pixfmt)i), &f));
        assert_int_equal(f, i);
    }
}

/* Write 3 random frames of every format, raw and Y4M, read them back. In Y4M
 * packed and nv12 frames are stored planar: compare with gt_yuv_convert. */
static void test_stream_round_trips(void **state)
{
    (void)state;
    gt_rng rng = {11};
    const int w = 6, h = 4, nf = 3;
    for (int y4m = 0; y4m <= 1; y4m++)
        for (int f = 0; f < GT_PIX_COUNT; f++) {
            size_t fb = gt_pixfmt_frame_bytes((gt_pixfmt)f, w, h);
            uint8_t *frames[3];
            gt_yuv_writer *wr;
            const char *p = tpath(y4m ? "s.y4m" : "s.yuv");
            GT_ASSERT_OK(gt_yuv_create(p, y4m, w, h, (gt_pixfmt)f, 30000, 1001, &wr));
            for (int k = 0; k < nf; k++) {
                frames[k] = random_frame(&rng, fb);
                GT_ASSERT_OK(gt_yuv_write_frame(wr, frames[k]));
            }
            GT_ASSERT_OK(gt_yuv_finish(wr, true));
            gt_yuv_reader *r;
            GT_ASSERT_OK(gt_yuv_open(p, y4m ? 0 : w, y4m ? 0 : h, y4m ? -1 : f, &r));
            assert_int_equal(gt_yuv_is_y4m(r), y4m);
            assert_int_equal(gt_yuv_width(r), w);
            assert_int_equal(gt_yuv_height(r), h);
            gt_pixfmt rf = gt_yuv_pixfmt(r);
            if (y4m) {
                int n, d;
                gt_yuv_rate(r, &n, &d);
                assert_int_equal(n, 30000);
                assert_int_equal(d, 1001);
                gt_pixfmt want = f == GT_PIX_NV12 ? GT_PIX_YUV420P
                                 : (f == GT_PIX_YUYV422 || f == GT_PIX_UYVY422) ? GT_PIX_YUV422P
                                                                               : (gt_pixfmt)f;
                assert_int_equal(rf, want);
            } else {
                assert_int_equal(rf, f);
            }
            size_t rb = gt_yuv_frame_bytes(r);
            uint8_t *buf = malloc(rb), *want = malloc(rb);
            bool got;
            for (int k = 0; k < nf; k++) {
                GT_ASSERT_OK(gt_yuv_read_frame(r, buf, &got));
                assert_true(got);
                GT_ASSERT_OK(gt_yuv_convert(frames[k], (gt_pixfmt)f, want, rf, w, h));
                assert_memory_equal(buf, want, rb);
            }
            GT_ASSERT_OK(gt_yuv_read_frame(r, buf, &got));
            assert_false(got);
            assert_int_equal(gt_yuv_frames_read(r), nf);
            gt_yuv_close(r);
            for (int k = 0; k < nf; k++) free(frames[k]);
            free(buf);
            free(want);
        }
}

/* Y4M through a pipe (no seeking), with FRAME parameters and extra tags. */
static void test_y4m_pipe(void **state)
{
    (void)state;
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        const char hdr[] = "YUV4MPEG2 W4 H2 F25:1 It A0:0 C420mpeg2 XYSCSS=420MPEG2\n";
        if (write(fd[1], hdr, sizeof hdr - 1) < 0) _exit(1);
        for (int k = 0; k < 2; k++) {
            const char *fl = k ? "FRAME Ixyz\n" : "FRAME\n";
            uint8_t px[12];
            memset(px, 10 + k, sizeof px);
            if (write(fd[1], fl, strlen(fl)) < 0 || write(fd[1], px, sizeof px) < 0) _exit(1);
        }
        _exit(0);
    }
    close(fd[1]);
    char path[64];
    snprintf(path, sizeof path, "/dev/fd/%d", fd[0]);
    gt_yuv_reader *r;
    GT_ASSERT_OK(gt_yuv_open(path, 0, 0, -1, &r));
    assert_int_equal(gt_yuv_pixfmt(r), GT_PIX_YUV420P);
    uint8_t buf[12];
    bool got;
    for (int k = 0; k < 2; k++) {
        GT_ASSERT_OK(gt_yuv_read_frame(r, buf, &got));
        assert_true(got);
        assert_int_equal(buf[5], 10 + k);
    }
    GT_ASSERT_OK(gt_yuv_read_frame(r, buf, &got));
    assert_false(got);
    gt_yuv_close(r);
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
}

static void test_truncated_raw_names_frame(void **state)
{
    (void)state;
    const char *p = tpath("t.yuv");
    FILE *f = fopen(p, "wb");
    uint8_t z[12 * 2 + 5] = {0};
    fwrite(z, 1, sizeof z, f);
    fclose(f);
    gt_yuv_reader *r;
    GT_ASSERT_OK(gt_yuv_open(p, 4, 2, GT_PIX_NV12, &r));
    uint8_t buf[12];
    bool got;
    GT_ASSERT_OK(gt_yuv_read_frame(r, buf, &got));
    GT_ASSERT_OK(gt_yuv_read_frame(r, buf, &got));
    assert_int_equal(gt_yuv_read_frame(r, buf, &got), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "inside frame 3"));
    assert_non_null(strstr(gt_errmsg(), "byte 29"));
    gt_yuv_close(r);
    /* raw needs size and format */
    assert_int_equal(gt_yuv_open(p, 0, 0, -1, &r), GT_ERR_USAGE);
    assert_int_equal(gt_yuv_open(p, 5, 2, GT_PIX_YUV420P, &r), GT_ERR_USAGE);
}

/* Frames 0..nf-1 of w x h yuv420p, frame k filled with 40 + k (Y4M: every
 * other FRAME line with parameters), written to a file; its bytes in *out. */
static void skip_stream(const char *p, bool y4m, int nf, size_t fb, uint8_t **out, size_t *n)
{
    size_t cap = 64 + (size_t)nf * (fb + 16), len = 0;
    uint8_t *b = malloc(cap);
    if (y4m) len += (size_t)sprintf((char *)b, "YUV4MPEG2 W4 H2 F25:1 C420\n");
    for (int k = 0; k < nf; k++) {
        if (y4m) len += (size_t)sprintf((char *)b + len, k % 2 ? "FRAME Ixyz\n" : "FRAME\n");
        memset(b + len, 40 + k, fb);
        len += fb;
    }
    io_write_file(p, b, len);
    *out = b;
    *n = len;
}

/* The bytes in a pipe from a child process; the path of the read end. */
static pid_t pipe_of(const uint8_t *b, size_t n, int *rfd, char *path, size_t cap)
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        _exit(write(fd[1], b, n) == (ssize_t)n ? 0 : 1);
    }
    close(fd[1]);
    *rfd = fd[0];
    snprintf(path, cap, "/dev/fd/%d", fd[0]);
    return pid;
}

/* gt_yuv_skip_frames on raw and Y4M, regular files (seek) and pipes (read
 * and drop): after skipping s of nf frames the next read is frame s, or the
 * clean end; skipped frames count in gt_yuv_frames_read. */
static void test_skip_frames(void **state)
{
    (void)state;
    const int nf = 5;
    const size_t fb = 12; /* 4x2 yuv420p */
    for (int y4m = 0; y4m <= 1; y4m++)
        for (int piped = 0; piped <= 1; piped++)
            for (long s = 0; s <= nf + 2; s++) {
                const char *p = tpath(y4m ? "k.y4m" : "k.yuv");
                uint8_t *bytes, buf[12];
                size_t len;
                skip_stream(p, y4m, nf, fb, &bytes, &len);
                char path[64];
                int rfd = -1;
                pid_t pid = piped ? pipe_of(bytes, len, &rfd, path, sizeof path) : 0;
                gt_yuv_reader *r;
                GT_ASSERT_OK(gt_yuv_open(piped ? path : p, 4, 2, GT_PIX_YUV420P, &r));
                long skipped = -1;
                GT_ASSERT_OK(gt_yuv_skip_frames(r, s, &skipped));
                long want = s < nf ? s : nf;
                assert_int_equal(skipped, want);
                assert_int_equal(gt_yuv_frames_read(r), want);
                bool got;
                GT_ASSERT_OK(gt_yuv_read_frame(r, buf, &got));
                assert_int_equal(got, s < nf);
                if (got) assert_int_equal(buf[0], 40 + s), assert_int_equal(buf[11], 40 + s);
                gt_yuv_close(r);
                if (piped) {
                    close(rfd);
                    waitpid(pid, NULL, 0);
                }
                free(bytes);
            }
}

/* A stream cut inside a frame: a raw file's partial frame is left for the
 * read, which names it; a Y4M frame cut while skipping is GT_ERR_DATA. */
static void test_skip_cut_frame(void **state)
{
    (void)state;
    uint8_t *bytes, buf[12];
    size_t len;
    const char *p = tpath("c.yuv");
    skip_stream(p, false, 3, 12, &bytes, &len);
    io_write_file(p, bytes, len - 5);
    free(bytes);
    gt_yuv_reader *r;
    long skipped;
    GT_ASSERT_OK(gt_yuv_open(p, 4, 2, GT_PIX_YUV420P, &r));
    GT_ASSERT_OK(gt_yuv_skip_frames(r, 10, &skipped));
    assert_int_equal(skipped, 2);
    bool got;
    assert_int_equal(gt_yuv_read_frame(r, buf, &got), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "inside frame 3 (7 of 12 bytes)"));
    gt_yuv_close(r);
    p = tpath("c.y4m");
    skip_stream(p, true, 3, 12, &bytes, &len);
    io_write_file(p, bytes, len - 5);
    free(bytes);
    GT_ASSERT_OK(gt_yuv_open(p, 0, 0, -1, &r));
    assert_int_equal(gt_yuv_skip_frames(r, 10, &skipped), GT_ERR_DATA);
    assert_non_null(strstr(gt_errmsg(), "inside frame 3 (7 of 12 bytes)"));
    assert_int_equal(skipped, 2);
    gt_yuv_close(r);
}

static void test_convert(void **state)
{
    (void)state;
    gt_rng rng = {3};
    const int w = 8, h = 6;
    /* lossless pairs: same chroma resolution */
    gt_pixfmt same[][2] = {{GT_PIX_YUV420P, GT_PIX_NV12},
                           {GT_PIX_YUYV422, GT_PIX_UYVY422},
                           {GT_PIX_YUYV422, GT_PIX_YUV422P}};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        size_t n = gt_pixfmt_frame_bytes(same[i][0], w, h);
        uint8_t *a = random_frame(&rng, n), *b = malloc(n), *c = malloc(n);
        GT_ASSERT_OK(gt_yuv_convert(a, same[i][0], b, same[i][1], w, h));
        GT_ASSERT_OK(gt_yuv_convert(b, same[i][1], c, same[i][0], w, h));
        assert_memory_equal(a, c, n);
        free(a);
        free(b);
        free(c);
    }
    /* up (replicate) then down (average) gives the original for every format */
    for (int f = 0; f < GT_PIX_COUNT; f++) {
        size_t n = gt_pixfmt_frame_bytes((gt_pixfmt)f, w, h);
        uint8_t *a = random_frame(&rng, n), *b = malloc((size_t)w * h * 3), *c = malloc(n);
        GT_ASSERT_OK(gt_yuv_convert(a, (gt_pixfmt)f, b, GT_PIX_YUV444P, w, h));
        GT_ASSERT_OK(gt_yuv_convert(b, GT_PIX_YUV444P, c, (gt_pixfmt)f, w, h));
        assert_memory_equal(a, c, n);
        free(a);
        free(b);
        free(c);
    }
    /* 444 -> 420 averages each 2x2 block (rounded half up) */
    uint8_t s[4 * 2 * 3], d[12];
    memset(s, 0, sizeof s);
    uint8_t u[8] = {10, 20, 100, 101, 30, 41, 100, 100};
    memcpy(s + 8, u, 8);
    memset(s + 16, 200, 8);
    GT_ASSERT_OK(gt_yuv_convert(s, GT_PIX_YUV444P, d, GT_PIX_YUV420P, 4, 2));
    assert_int_equal(d[8], (10 + 20 + 30 + 41 + 2) / 4);
    assert_int_equal(d[9], (100 + 101 + 100 + 100 + 2) / 4);
    assert_int_equal(d[10], 200);
}

/* Standard reference values (ITU-R BT.601 / BT.709, 8-bit limited range):
 * red = (81, 90, 240) in BT.601 and (63, 102, 240) in BT.709; white and black
 * are (235,128,128) and (16,128,128); full range maps them to 255 and 0. */
static void test_rgb_reference_values(void **state)
{
    (void)state;
    uint8_t rgb[2 * 2 * 3], yuv[12];
    struct {
        uint8_t r, g, b;
        gt_yuv_matrix m;
        gt_yuv_range rg;
        uint8_t y, u, v;
    } cases[] = {
        {255, 0, 0, GT_BT601, GT_RANGE_LIMITED, 81, 90, 240},
        {255, 0, 0, GT_BT709, GT_RANGE_LIMITED, 63, 102, 240},
        {255, 255, 255, GT_BT601, GT_RANGE_LIMITED, 235, 128, 128},
        {0, 0, 0, GT_BT709, GT_RANGE_LIMITED, 16, 128, 128},
        {255, 255, 255, GT_BT709, GT_RANGE_FULL, 255, 128, 128},
        {0, 0, 0, GT_BT601, GT_RANGE_FULL, 0, 128, 128},
        {0, 0, 255, GT_BT601, GT_RANGE_FULL, 29, 255, 107},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int p = 0; p < 4; p++) {
            rgb[p * 3] = cases[i].r;
            rgb[p * 3 + 1] = cases[i].g;
            rgb[p * 3 + 2] = cases[i].b;
        }
        GT_ASSERT_OK(gt_rgb_to_yuv(rgb, 2, 2, cases[i].m, cases[i].rg, yuv, GT_PIX_YUV420P));
        assert_int_equal(yuv[0], cases[i].y);
        assert_int_equal(yuv[4], cases[i].u);
        assert_int_equal(yuv[5], cases[i].v);
        uint8_t back[12];
        GT_ASSERT_OK(gt_yuv_to_rgb(yuv, GT_PIX_YUV420P, 2, 2, cases[i].m, cases[i].rg, back));
        for (int c = 0; c < 3; c++)
            assert_true(abs(back[c] - rgb[c]) <= 2);
    }
}

/* Random RGB -> yuv444p -> RGB: limited range quantises Y to 219 and chroma to
 * 224 levels; a half step of error in Y, Cb and Cr combines to at most about
 * 0.5*255/219 + 0.5*1.8*255/224 ~ 1.6 levels in R or B (1.8 = largest chroma
 * gain 2(1-Kb)), so 2 is the bound; full range is tighter but uses the same. */
static void test_rgb_round_trip(void **state)
{
    (void)state;
    gt_rng rng = {99};
    const int w = 16, h = 16;
    uint8_t *rgb = random_frame(&rng, (size_t)w * h * 3), back[16 * 16 * 3], yuv[16 * 16 * 3];
    for (int m = 0; m < 2; m++)
        for (int rg = 0; rg < 2; rg++) {
            GT_ASSERT_OK(gt_rgb_to_yuv(rgb, w, h, (gt_yuv_matrix)m, (gt_yuv_range)rg, yuv, GT_PIX_YUV444P));
            GT_ASSERT_OK(gt_yuv_to_rgb(yuv, GT_PIX_YUV444P, w, h, (gt_yuv_matrix)m, (gt_yuv_range)rg, back));
            int worst = 0;
            for (int i = 0; i < w * h * 3; i++) {
                int e = abs(back[i] - rgb[i]);
                if (e > worst) worst = e;
            }
            assert_true(worst <= 2);
        }
    /* subsampled formats agree with 444 on a flat image */
    memset(rgb, 77, (size_t)w * h * 3);
    for (int f = 0; f < GT_PIX_COUNT; f++) {
        GT_ASSERT_OK(gt_rgb_to_yuv(rgb, w, h, GT_BT709, GT_RANGE_LIMITED, yuv, (gt_pixfmt)f));
        GT_ASSERT_OK(gt_yuv_to_rgb(yuv, (gt_pixfmt)f, w, h, GT_BT709, GT_RANGE_LIMITED, back));
        for (int i = 0; i < w * h * 3; i++) assert_true(abs(back[i] - 77) <= 1);
    }
    free(rgb);
}

static void test_writer_abort_leaves_nothing(void **state)
{
    (void)state;
    const char *p = tpath("abort.y4m");
    unlink(p);
    gt_yuv_writer *wr;
    GT_ASSERT_OK(gt_yuv_create(p, true, 4, 4, GT_PIX_YUV420P, 25, 1, &wr));
    uint8_t f[24] = {0};
    GT_ASSERT_OK(gt_yuv_write_frame(wr, f));
    GT_ASSERT_OK(gt_yuv_finish(wr, false));
    assert_int_not_equal(access(p, F_OK), 0);
    assert_int_equal(gt_yuv_create(p, true, 3, 4, GT_PIX_YUV420P, 25, 1, &wr), GT_ERR_USAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_bytes),
        cmocka_unit_test(test_stream_round_trips),
        cmocka_unit_test(test_y4m_pipe),
        cmocka_unit_test(test_truncated_raw_names_frame),
        cmocka_unit_test(test_skip_frames),
        cmocka_unit_test(test_skip_cut_frame),
        cmocka_unit_test(test_convert),
        cmocka_unit_test(test_rgb_reference_values),
        cmocka_unit_test(test_rgb_round_trip),
        cmocka_unit_test(test_writer_abort_leaves_nothing),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    io_rm_tmpdir();
    return rc;
}
