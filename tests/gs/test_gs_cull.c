/* The GPU path's exact ellipse/tile culling (lib/gs/gs_cull.h), checked on
 * the CPU by brute force: every tile of the reference's bounding square
 * that has a pixel with alpha >= 1/255 is kept (the culling never changes
 * the image), and on anisotropic Gaussians it drops a good share of the
 * square's tiles (it is worth doing). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "gs/gs_cull.h"
#include "gt_test.h"

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static void test_cull_never_drops_a_visible_tile(void **state)
{
    (void)state;
    gt_rng r = {2024};
    const int gx = 20, gy = 14; /* a 320x224 image */
    long kept = 0, square = 0, needed = 0;
    for (int trial = 0; trial < 3000; trial++) {
        float px = (float)gt_rng_range(&r, -40, 360), py = (float)gt_rng_range(&r, -40, 264);
        double th = gt_rng_range(&r, 0, M_PI);
        double s1 = exp(gt_rng_range(&r, log(0.2), log(40))), s2 = exp(gt_rng_range(&r, log(0.2), log(40)));
        if (trial % 3 == 0) s2 = s1 * 0.02; /* needles */
        double ct = cos(th), st = sin(th);
        float a = (float)(s1 * s1 * ct * ct + s2 * s2 * st * st) + 0.3f;
        float b = (float)((s1 * s1 - s2 * s2) * ct * st);
        float c = (float)(s1 * s1 * st * st + s2 * s2 * ct * ct) + 0.3f;
        float o = (float)(trial % 10 == 0 ? gt_rng_range(&r, 0.001, 0.01) : gt_rng_range(&r, 0.01, 1.0));
        float det = gs_det2(a, b, c);
        float ca = c / det, cb = -b / det, cc = a / det; /* conic, as the renderer uses it */
        float mid = 0.5f * (a + c), disc = sqrtf(fmaxf(0.1f, mid * mid - det));
        float radius = ceilf(3.0f * sqrtf(mid + disc));
        int x0 = clampi((int)((px - radius) / 16), 0, gx), y0 = clampi((int)((py - radius) / 16), 0, gy);
        int x1 = clampi((int)((px + radius + 15) / 16), 0, gx), y1 = clampi((int)((py + radius + 15) / 16), 0, gy);
        float tau2 = gs_cull_tau2(o);
        for (int ty = y0; ty < y1; ty++) {
            int lo = x0, hi = x0;
            if (tau2 > 0) gs_row_span(px, py, a, b, c, det, tau2, ty, x0, x1, &lo, &hi);
            assert_true(lo >= x0 && hi <= x1);
            for (int tx = x0; tx < x1; tx++) {
                square++;
                bool in = tx >= lo && tx < hi;
                kept += in;
                bool vis = false;
                for (int yy = ty * 16; yy < ty * 16 + 16 && !vis; yy++)
                    for (int xx = tx * 16; xx < tx * 16 + 16 && !vis; xx++) {
                        float dx = px - (float)xx, dy = py - (float)yy;
                        float power = -0.5f * (ca * dx * dx + cc * dy * dy) - cb * dx * dy;
                        if (power > 0.0f) continue;
                        float alpha = fminf(0.99f, o * expf(power));
                        vis = alpha >= 1.0f / 255.0f;
                    }
                needed += vis;
                if (vis && !in)
                    fail_msg("trial %d: tile (%d,%d) has a visible pixel but was culled", trial, tx, ty);
            }
        }
    }
    printf("bounding squares: %ld tiles, kept %ld (%.1f%%), needed %ld (%.1f%%)\n", square, kept,
           100.0 * kept / square, needed, 100.0 * needed / square);
    assert_true(kept < 0.8 * square);      /* worth it on this mix */
    assert_true(kept <= needed * 1.6 + 50); /* and reasonably tight */
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cull_never_drops_a_visible_tile)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
