/* Ground truth from real photographs (issue 7): each photograph is cut into
 * 4 overlapping perspective views with known homographies and different
 * exposures; stitching the views back (CPU reference) must reproduce it:
 *  - with the rig's gains compensating the exposures: luma PSNR >= 38 dB
 *    against the photograph where one camera covers, for every blend mode;
 *  - with uncompensated gains: multi-band's seams are less visible than
 *    feather's and direct's (gradient energy of the smoothed error image in
 *    a band around the seams). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "stitch_photo.h"

enum { PW = 400, PH = 160 };
static const gt_pixfmt FMT = GT_PIX_YUV422P;

typedef struct {
    photo_t photo;
    gt_stitch_rig rig;
    int cw;
    uint8_t *cam[4];
} photo_set;

static void make(photo_set *s, const char *name, const double e[4], int overlap)
{
    photo_load(name, &s->photo);
    assert_int_equal(s->photo.w, PW);
    assert_int_equal(s->photo.h, PH);
    photo_rig(&s->rig, PW, PH, overlap, &s->cw);
    size_t bytes = gt_pixfmt_frame_bytes(FMT, s->cw, PHOTO_CH);
    for (int i = 0; i < 4; i++) {
        s->cam[i] = malloc(bytes);
        photo_render(&s->photo, s->rig.cam[i].H, e[i], FMT, s->cw, PHOTO_CH, s->cam[i]);
    }
}

static void unmake(photo_set *s)
{
    for (int i = 0; i < 4; i++) free(s->cam[i]);
    photo_free(&s->photo);
}

static uint8_t *stitch(photo_set *s, gt_blend_mode b, int bands, gt_stitch_plan *plan)
{
    gt_stitch_plan_opts o;
    gt_stitch_plan_opts_init(&o);
    o.blend = b;
    o.bands = bands;
    GT_ASSERT_OK(gt_stitch_plan_build(&s->rig, s->cw, PHOTO_CH, FMT, &o, plan));
    uint8_t *out = malloc(plan->out_bytes);
    const uint8_t *in[4] = {s->cam[0], s->cam[1], s->cam[2], s->cam[3]};
    GT_ASSERT_OK(gt_stitch_frame_cpu(plan, in, out));
    return out;
}

static int cover(const gt_stitch_plan *plan, int x, int y)
{
    int c = 0;
    for (int i = 0; i < plan->ncam; i++) c += plan->dist_luma[(size_t)PW * PH * i + (size_t)y * PW + x] > 0;
    return c;
}

/* Error budget where one camera covers: the views sample a Keys-bicubic
 * interpolant of the photograph at twice its resolution, the stitcher samples
 * them bilinearly (error ~ h^2 f''/8 with h = half a panorama pixel), plus
 * two 8-bit quantisations (the second scaled by the gain 1/e <= 1.18). */
static void test_photo_psnr(void **state)
{
    (void)state;
    const double e[4] = {0.85, 1.0, 1.07, 0.92}; /* 1.07 * 235 < 255: no clipping */
    const gt_blend_mode modes[3] = {GT_BLEND_NONE, GT_BLEND_FEATHER, GT_BLEND_MULTIBAND};
    for (int ph = 0; ph < PHOTO_N; ph++) {
        photo_set s;
        make(&s, photo_names[ph], e, 40);
        for (int i = 0; i < 4; i++) s.rig.cam[i].gain = (float)(1.0 / e[i]);
        for (int m = 0; m < 3; m++) {
            gt_stitch_plan plan;
            uint8_t *out = stitch(&s, modes[m], 5, &plan);
            double se = 0, sec = 0;
            long n = 0, nc = 0, multi = 0;
            for (int y = 1; y < PH - 1; y++)
                for (int x = 1; x < PW - 1; x++) {
                    int c = cover(&plan, x, y);
                    multi += c > 1;
                    if (c != 1) continue;
                    double d = (double)out[(size_t)y * PW + x] - stitch_q(s.photo.c[0][(size_t)y * PW + x]);
                    se += d * d;
                    n++;
                    if (x % 2 == 0) { /* 4:2:2 chroma sample (x/2, y) sits on luma x */
                        for (int k = 1; k <= 2; k++) {
                            size_t off = (size_t)PW * PH + (size_t)(k - 1) * (PW / 2) * PH;
                            double dc = (double)out[off + (size_t)y * (PW / 2) + x / 2] -
                                        stitch_q(s.photo.c[k][(size_t)y * PW + x]);
                            sec += dc * dc;
                            nc++;
                        }
                    }
                }
            double psnr = 10 * log10(255.0 * 255.0 / (se / n)), psnr_c = 10 * log10(255.0 * 255.0 / (sec / nc));
            printf("%-20s blend %d: PSNR luma %.2f dB, chroma %.2f dB on %ld single-camera pixels (%ld in overlaps)\n",
                   photo_names[ph], m, psnr, psnr_c, n, multi);
            assert_true(n > PW * PH / 2); /* the single-camera regions are most of the panorama */
            assert_true(multi > 4 * PH);  /* and there are overlaps (3 seams) */
            assert_true(psnr >= 38.0);
            assert_true(psnr_c >= 38.0);
            gt_stitch_plan_free(&plan);
            free(out);
        }
        unmake(&s);
    }
}

/* Seam visibility with uncompensated gains: gradient energy of the error
 * image D = stitched - photograph (luma), smoothed with the binomial [1 4 6 4 1]/16 (what stays
 * visible is the low-frequency step, not 8-bit noise), summed over pixels
 * within 2 px of a seam. A hard seam is a step of (g_i - g_j)*Y in D;
 * feathering spreads it over the overlap, multi-band spreads each band over
 * a width that grows with the band (7 bands: the coarsest level is 64x
 * coarser), beyond a narrow overlap, which is what it is for. Overlaps here
 * are 16 px (measured, first photo: direct 84192, feather 13287, multiband
 * 2385). With wide overlaps (>= 40 px) and this exact alignment a feather's
 * linear ramp over the whole overlap is smoother than multi-band's sharp
 * finest band on this measure (40 px: feather 1593, multiband 2207): not
 * asserted, as it is not what multi-band is for. */
static double seam_energy(const photo_set *s, const gt_stitch_plan *plan, const uint8_t *out)
{
    double *D = malloc(sizeof(double) * PW * PH);
    for (int y = 0; y < PH; y++)
        for (int x = 0; x < PW; x++) D[y * PW + x] = out[y * PW + x] - s->photo.c[0][y * PW + x];
    stitch_smooth5(D, PW, PH);
    double E = 0;
    long n = 0;
    for (int y = 3; y < PH - 3; y++)
        for (int x = 3; x < PW - 3; x++) {
            int near = 0, uncovered = 0;
            for (int dy = -2; dy <= 2; dy++)
                for (int dx = -2; dx <= 2; dx++) {
                    uint8_t a = plan->owner_luma[(y + dy) * PW + x + dx], b = plan->owner_luma[(y + dy) * PW + x + dx + 1];
                    near |= a != b;
                    uncovered |= a == 255 || b == 255;
                }
            if (!near || uncovered) continue;
            double gx = D[y * PW + x + 1] - D[y * PW + x], gy = D[(y + 1) * PW + x] - D[y * PW + x];
            E += gx * gx + gy * gy;
            n++;
        }
    assert_true(n > 3 * PH); /* three seams crossing the panorama */
    free(D);
    return E;
}

static void test_photo_seams(void **state)
{
    (void)state;
    const double e[4] = {0.82, 1.06, 0.9, 1.04};
    const gt_blend_mode modes[3] = {GT_BLEND_NONE, GT_BLEND_FEATHER, GT_BLEND_MULTIBAND};
    for (int ph = 0; ph < PHOTO_N; ph++) {
        photo_set s;
        make(&s, photo_names[ph], e, 16);
        double E[3];
        for (int m = 0; m < 3; m++) {
            gt_stitch_plan plan;
            uint8_t *out = stitch(&s, modes[m], 7, &plan);
            E[m] = seam_energy(&s, &plan, out);
            gt_stitch_plan_free(&plan);
            free(out);
        }
        printf("%-20s seam gradient energy: direct %.0f feather %.0f multiband %.0f\n", photo_names[ph], E[0], E[1],
               E[2]);
        assert_true(E[2] < E[1]);
        assert_true(E[2] < E[0]);
        unmake(&s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_photo_psnr),
        cmocka_unit_test(test_photo_seams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
