/* gsrender --fit's pieces on the CPU: the loss gradient against central
 * finite differences, the SSIM of an image with itself and its range, Adam's
 * first step (torch.optim.Adam moves every parameter by lr sign(g)) and the
 * DC/rest split of the SH array, the position learning-rate decay, the SH
 * degree schedule and the scene extent of the reference; the training
 * images (alpha over the background, grey, 16 bit, downscaling, the data
 * errors) and the PLY writer read back by the scene reader. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <unistd.h>

#include "gs/gs_fit.h"
#include "gt_test.h"
#include "io/image.h"

static void random_pair(float *x, float *y, size_t n, uint64_t seed)
{
    gt_rng r = {seed};
    for (size_t i = 0; i < n; i++) {
        y[i] = (float)gt_rng_uniform(&r);
        /* x: y plus a smooth-ish error, so SSIM is neither 0 nor 1 */
        x[i] = (float)fmin(1.0, fmax(0.0, y[i] + gt_rng_range(&r, -0.3, 0.3)));
    }
}

static void test_loss_gradient_fd(void **state)
{
    (void)state;
    const int w = 23, h = 17;
    size_t n = 3 * (size_t)w * h;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *g = malloc(n * sizeof *g);
    random_pair(x, y, n, 7);
    gt_gs_loss l0;
    assert_int_equal(gt_gs_loss_cpu(x, y, w, h, GT_GS_LAMBDA_DSSIM, &l0, g), GT_OK);
    double num = 0, den = 0;
    int checked = 0;
    gt_rng r = {11};
    for (int s = 0; s < 300; s++) {
        size_t i = (size_t)(gt_rng_uniform(&r) * n);
        const float eps = 1e-3f;
        if (fabsf(x[i] - y[i]) < 3 * eps) continue; /* the L1 kink */
        float keep = x[i];
        gt_gs_loss lp, lm;
        x[i] = keep + eps;
        float xp = x[i];
        gt_gs_loss_cpu(x, y, w, h, GT_GS_LAMBDA_DSSIM, &lp, NULL);
        x[i] = keep - eps;
        float xm = x[i];
        gt_gs_loss_cpu(x, y, w, h, GT_GS_LAMBDA_DSSIM, &lm, NULL);
        x[i] = keep;
        double fd = (lp.loss - lm.loss) / ((double)xp - xm);
        num += (fd - g[i]) * (fd - g[i]);
        den += fd * fd;
        checked++;
    }
    double rel = sqrt(num / den);
    printf("loss %.6f l1 %.6f ssim %.6f; gradient vs finite differences at %d pixels: rel. error %.2e\n",
           l0.loss, l0.l1, l0.ssim, checked, rel);
    assert_true(checked > 200);
    assert_true(rel < 1e-3);
    assert_true(l0.ssim > 0.05 && l0.ssim < 0.95);
    assert_true(fabs(l0.loss - (0.8 * l0.l1 + 0.2 * (1 - l0.ssim))) < 1e-12);
    free(x), free(y), free(g);
}

static void test_loss_identity(void **state)
{
    (void)state;
    const int w = 16, h = 12;
    size_t n = 3 * (size_t)w * h;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *g = malloc(n * sizeof *g);
    random_pair(x, y, n, 3);
    gt_gs_loss l;
    assert_int_equal(gt_gs_loss_cpu(y, y, w, h, 0.2, &l, g), GT_OK);
    assert_true(fabs(l.ssim - 1.0) < 1e-9 && l.l1 == 0 && fabs(l.loss) < 1e-9);
    double gmax = 0;
    for (size_t i = 0; i < n; i++) gmax = fmax(gmax, fabs(g[i]));
    assert_true(gmax < 1e-9); /* a minimum: the SSIM part is flat, sign(0) = 0 */
    float win[GT_GS_SSIM_WIN], s = 0;
    gt_gs_ssim_window(win);
    for (int k = 0; k < GT_GS_SSIM_WIN; k++) s += win[k];
    assert_true(fabsf(s - 1.0f) < 1e-6f && win[5] > win[4] && fabsf(win[0] - win[10]) < 1e-9f);
    free(x), free(y), free(g);
}

static void test_adam(void **state)
{
    (void)state;
    /* two Gaussians of SH degree 1: 12 floats each, the first 3 DC */
    float p[24], g[24], m[24] = {0}, v[24] = {0};
    for (int i = 0; i < 24; i++) p[i] = 1.0f, g[i] = (i % 5 == 0) ? -0.5f : 0.01f * (float)(i + 1);
    gt_gs_adam_cpu(p, g, m, v, 24, 0.01, 0.001, 12, 1);
    for (int i = 0; i < 24; i++) {
        double lr = (i % 12) < 3 ? 0.01 : 0.001;
        double want = 1.0 - lr * (g[i] > 0 ? 1 : -1);
        assert_true(fabs(p[i] - want) < 1e-6);
    }
    /* a zero gradient after a step still moves the parameter (momentum) */
    float q = 0, gz = 1, mq = 0, vq = 0;
    gt_gs_adam_cpu(&q, &gz, &mq, &vq, 1, 0.1, 0.1, 0, 1);
    float q1 = q;
    gz = 0;
    gt_gs_adam_cpu(&q, &gz, &mq, &vq, 1, 0.1, 0.1, 0, 2);
    assert_true(q < q1);
}

static void test_schedules(void **state)
{
    (void)state;
    gt_gs_fit_rates r;
    gt_gs_fit_rates_default(&r);
    assert_true(fabs(gt_gs_fit_rest_lr(&r) * 20 - r.sh_dc) < 1e-15);
    r.sh_dc = 0.01; /* the rest follows the DC rate unless it is given */
    assert_true(fabs(gt_gs_fit_rest_lr(&r) - 0.0005) < 1e-15);
    r.sh_rest = 0.003;
    assert_true(fabs(gt_gs_fit_rest_lr(&r) - 0.003) < 1e-15);
    gt_gs_fit_rates_default(&r);
    assert_int_equal(r.pos_steps, 30000); /* the reference's position_lr_max_steps */
    double e = 3.0;
    assert_true(fabs(gt_gs_fit_pos_lr(&r, 0, 2000, e) - 0.00016 * e) < 1e-12);
    assert_true(fabs(gt_gs_fit_pos_lr(&r, 2000, 2000, e) - 0.0000016 * e) < 1e-12);
    assert_true(fabs(gt_gs_fit_pos_lr(&r, 5000, 2000, e) - 0.0000016 * e) < 1e-12);
    double mid = gt_gs_fit_pos_lr(&r, 1000, 2000, e);
    assert_true(fabs(mid - sqrt(0.00016 * 0.0000016) * e) < 1e-12); /* log-linear */
    assert_int_equal(gt_gs_fit_sh_degree(1, 3), 0);
    assert_int_equal(gt_gs_fit_sh_degree(999, 3), 0);
    assert_int_equal(gt_gs_fit_sh_degree(1000, 3), 1);
    assert_int_equal(gt_gs_fit_sh_degree(3500, 3), 3);
    assert_int_equal(gt_gs_fit_sh_degree(9000, 2), 2);
    /* cameras on a circle of radius 2 around (1,1,1): extent 2.2 */
    gt_gs_camera c[6];
    double centre[3] = {1, 1, 1}, up[3] = {0, 1, 0};
    for (int i = 0; i < 6; i++)
        assert_int_equal(gt_gs_camera_orbit(&c[i], centre, up, 2.0, 0.0, i, 6, 50, 32, 24), GT_OK);
    assert_true(fabs(gt_gs_cameras_extent(c, 6) - 2.2) < 1e-5);
    assert_true(gt_gs_cameras_extent(c, 1) == 1.0);
}

static char g_dir[64];

static void path_in(char *p, size_t n, const char *name)
{
    snprintf(p, n, "%s/%s", g_dir, name);
}

static void test_images(void **state)
{
    (void)state;
    strcpy(g_dir, "/tmp/gs_fit_XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    char p[256];
    gt_gs_camera cams[2];
    double centre[3] = {0, 0, 0}, up[3] = {0, 1, 0};
    for (int i = 0; i < 2; i++) assert_int_equal(gt_gs_camera_orbit(&cams[i], centre, up, 3, 10, i, 2, 50, 8, 6), GT_OK);
    strcpy(cams[0].name, "a");      /* as the reference writes it */
    strcpy(cams[1].name, "b.png");  /* with the extension */
    uint8_t rgba[8 * 6 * 4], grey[8 * 6];
    for (int i = 0; i < 48; i++) {
        rgba[4 * i] = 255, rgba[4 * i + 1] = 0, rgba[4 * i + 2] = 0, rgba[4 * i + 3] = (uint8_t)(i < 24 ? 128 : 255);
        grey[i] = (uint8_t)(i % 8 < 4 ? 0 : 200);
    }
    path_in(p, sizeof p, "a.png");
    assert_int_equal(gt_png_write(p, 8, 6, 4, rgba), GT_OK);
    path_in(p, sizeof p, "b.png");
    assert_int_equal(gt_png_write(p, 8, 6, 1, grey), GT_OK);
    path_in(p, sizeof p, "unused.jpg");
    assert_int_equal(gt_png_write(p, 8, 6, 1, grey), GT_OK);
    const float bg[3] = {0, 0, 1};
    float **img;
    assert_int_equal(gt_gs_fit_images_read(g_dir, cams, 2, bg, 1, &img), GT_OK);
    size_t np = 48;
    float a = 128.0f / 255.0f;
    assert_true(fabsf(img[0][0] - a) < 1e-6f && img[0][np] == 0.0f && fabsf(img[0][2 * np] - (1 - a)) < 1e-6f);
    assert_true(img[0][30] == 1.0f && img[0][2 * np + 30] == 0.0f); /* opaque rows */
    assert_true(img[1][0] == 0.0f && fabsf(img[1][np + 5] - 200 / 255.0f) < 1e-6f);
    gt_gs_fit_images_free(img, 2);
    /* downscale 2: cameras 4x3, focal lengths halved, 2x2 box averages */
    gt_gs_camera half[2] = {cams[0], cams[1]};
    assert_int_equal(gt_gs_fit_images_read(g_dir, half, 2, bg, 2, &img), GT_OK);
    assert_true(half[1].width == 4 && half[1].height == 3 && fabsf(half[1].fx - cams[1].fx / 2) < 1e-4f);
    assert_true(img[1][0] == 0.0f && fabsf(img[1][3] - 200 / 255.0f) < 1e-6f && img[1][12 + 1] == 0.0f);
    gt_gs_fit_images_free(img, 2);
    /* a camera without an image: its name and the path tried */
    gt_gs_camera three[3] = {cams[0], cams[1], cams[1]};
    strcpy(three[2].name, "c");
    assert_int_equal(gt_gs_fit_images_read(g_dir, three, 3, bg, 1, &img), GT_ERR_DATA);
    assert_null(img);
    printf("%s\n", gt_errmsg());
    assert_non_null(strstr(gt_errmsg(), "camera 'c'"));
    assert_non_null(strstr(gt_errmsg(), g_dir));
    /* the wrong size: both sizes named */
    uint8_t big[9 * 6 * 3] = {0};
    path_in(p, sizeof p, "c.png");
    assert_int_equal(gt_png_write(p, 9, 6, 3, big), GT_OK);
    assert_int_equal(gt_gs_fit_images_read(g_dir, three, 3, bg, 1, &img), GT_ERR_DATA);
    printf("%s\n", gt_errmsg());
    assert_non_null(strstr(gt_errmsg(), "9x6"));
    assert_non_null(strstr(gt_errmsg(), "8x6"));
    /* an unreadable image */
    FILE *f = fopen(p, "wb");
    fputs("not a PNG at all", f);
    fclose(f);
    assert_int_equal(gt_gs_fit_images_read(g_dir, three, 3, bg, 1, &img), GT_ERR_DATA);
    printf("%s\n", gt_errmsg());
    assert_non_null(strstr(gt_errmsg(), "camera 'c'"));
    remove(p);
    path_in(p, sizeof p, "a.png"), remove(p);
    path_in(p, sizeof p, "b.png"), remove(p);
    path_in(p, sizeof p, "unused.jpg"), remove(p);
    rmdir(g_dir);
}

/* A 16-bit RGBA PNG (stored deflate blocks: no zlib needed), w*h*4 samples. */
static uint32_t crc_update(uint32_t c, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        c ^= b[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c;
}

static void put32(FILE *f, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    fwrite(b, 1, 4, f);
}

static void chunk(FILE *f, const char *type, const uint8_t *data, uint32_t n)
{
    put32(f, n);
    fwrite(type, 1, 4, f);
    if (n) fwrite(data, 1, n, f);
    uint32_t c = crc_update(0xFFFFFFFFu, (const uint8_t *)type, 4);
    put32(f, ~crc_update(c, data, n));
}

static void write_png16(const char *path, int w, int h, const uint16_t *rgba)
{
    size_t row = 1 + (size_t)w * 8, raw_n = row * h;
    uint8_t *raw = malloc(raw_n), *z = malloc(raw_n + 64);
    for (int y = 0; y < h; y++) {
        raw[y * row] = 0;
        for (int i = 0; i < w * 4; i++) {
            raw[y * row + 1 + 2 * i] = (uint8_t)(rgba[y * w * 4 + i] >> 8);
            raw[y * row + 2 + 2 * i] = (uint8_t)rgba[y * w * 4 + i];
        }
    }
    size_t zn = 0;
    z[zn++] = 0x78, z[zn++] = 0x01;
    z[zn++] = 1; /* one final stored block (raw_n < 65536) */
    z[zn++] = (uint8_t)raw_n, z[zn++] = (uint8_t)(raw_n >> 8);
    z[zn++] = (uint8_t)~raw_n, z[zn++] = (uint8_t)(~raw_n >> 8);
    memcpy(z + zn, raw, raw_n), zn += raw_n;
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < raw_n; i++) a = (a + raw[i]) % 65521, b = (b + a) % 65521;
    uint32_t ad = (b << 16) | a;
    z[zn++] = (uint8_t)(ad >> 24), z[zn++] = (uint8_t)(ad >> 16), z[zn++] = (uint8_t)(ad >> 8), z[zn++] = (uint8_t)ad;
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite("\x89PNG\r\n\x1a\n", 1, 8, f);
    uint8_t ihdr[13] = {0, 0, 0, (uint8_t)w, 0, 0, 0, (uint8_t)h, 16, 6, 0, 0, 0};
    chunk(f, "IHDR", ihdr, 13);
    chunk(f, "IDAT", z, (uint32_t)zn);
    chunk(f, "IEND", NULL, 0);
    fclose(f);
    free(raw), free(z);
}

/* 16-bit samples keep their precision (1000/65535 is no 8-bit value), alpha
 * over the background. */
static void test_images16(void **state)
{
    (void)state;
    strcpy(g_dir, "/tmp/gs_fit_XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    gt_gs_camera c;
    double centre[3] = {0, 0, 0}, up[3] = {0, 1, 0};
    assert_int_equal(gt_gs_camera_orbit(&c, centre, up, 3, 10, 0, 1, 50, 4, 3), GT_OK);
    strcpy(c.name, "deep");
    uint16_t px[4 * 3 * 4];
    for (int i = 0; i < 12; i++)
        px[4 * i] = 1000, px[4 * i + 1] = 65535, px[4 * i + 2] = 0, px[4 * i + 3] = (uint16_t)(i == 5 ? 16384 : 65535);
    char p[256];
    path_in(p, sizeof p, "deep.png");
    write_png16(p, 4, 3, px);
    const float bg[3] = {1, 1, 1};
    float **img;
    assert_int_equal(gt_gs_fit_images_read(g_dir, &c, 1, bg, 1, &img), GT_OK);
    assert_true(fabsf(img[0][0] - 1000 / 65535.0f) < 1e-7f);
    assert_true(img[0][12] == 1.0f && img[0][24] == 0.0f);
    double a = 16384 / 65535.0;
    assert_true(fabs(img[0][5] - (1000 / 65535.0 * a + (1 - a))) < 1e-6);
    assert_true(fabs(img[0][24 + 5] - (1 - a)) < 1e-6);
    gt_gs_fit_images_free(img, 1);
    remove(p);
    rmdir(g_dir);
}

static void test_ply_roundtrip(void **state)
{
    (void)state;
    const size_t n = 7;
    gt_gs_raw r = {n, 2, 9, NULL, NULL, NULL, NULL, NULL};
    float pos[21], ls[21], rot[28], op[7], sh[7 * 27];
    r.pos = pos, r.log_scale = ls, r.rot = rot, r.logit_opacity = op, r.sh = sh;
    gt_rng g = {9};
    for (int i = 0; i < 21; i++) pos[i] = (float)gt_rng_range(&g, -2, 2), ls[i] = (float)gt_rng_range(&g, -5, 0);
    for (int i = 0; i < 28; i++) rot[i] = (float)gt_rng_range(&g, -1, 1);
    for (int i = 0; i < 7; i++) op[i] = (float)gt_rng_range(&g, -4, 4);
    for (int i = 0; i < 7 * 27; i++) sh[i] = (float)gt_rng_range(&g, -1, 1);
    char p[256];
    strcpy(g_dir, "/tmp/gs_fit_XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    path_in(p, sizeof p, "r.ply");
    assert_int_equal(gt_gs_raw_write_ply(p, &r), GT_OK);
    gt_gs_scene s;
    assert_int_equal(gt_gs_scene_read_ply(p, &s), GT_OK);
    assert_int_equal(s.n, n);
    assert_int_equal(s.sh_degree, 2);
    for (size_t i = 0; i < n; i++) {
        double q = 0;
        for (int k = 0; k < 4; k++) q += (double)rot[4 * i + k] * rot[4 * i + k];
        for (int k = 0; k < 4; k++) assert_true(fabs(s.rot[4 * i + k] - rot[4 * i + k] / sqrt(q)) < 1e-6);
        for (int k = 0; k < 3; k++) {
            assert_true(s.pos[3 * i + k] == pos[3 * i + k]);
            assert_true(fabs(s.scale[3 * i + k] - exp(ls[3 * i + k])) < 1e-6 * exp(ls[3 * i + k]));
        }
        assert_true(fabs(s.opacity[i] - 1 / (1 + exp(-op[i]))) < 1e-6);
        for (int k = 0; k < 27; k++) assert_true(s.sh[i * 27 + k] == sh[i * 27 + k]);
    }
    gt_gs_scene_free(&s);
    remove(p);
    rmdir(g_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loss_gradient_fd),
        cmocka_unit_test(test_loss_identity),
        cmocka_unit_test(test_adam),
        cmocka_unit_test(test_schedules),
        cmocka_unit_test(test_images),
        cmocka_unit_test(test_images16),
        cmocka_unit_test(test_ply_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
