/* Half-precision conversions (common/half.h): every half survives the round
 * trip through float; values between two halves round to the nearer, ties
 * to the even one, as the GPU's __float2half_rn; overflow, NaN, signed
 * zeros and subnormals; the array conversion (F16C where the CPU has it)
 * gives the scalar's results. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/half.h"

static int is_nan16(uint16_t h)
{
    return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
}

static void test_round_trip(void **st)
{
    (void)st;
    for (uint32_t h = 0; h < 0x10000u; h++) {
        float f = gt_f16_to_f32((uint16_t)h);
        if (is_nan16((uint16_t)h)) {
            assert_true(isnan(f));
            assert_true(is_nan16(gt_f32_to_f16(f)));
            continue;
        }
        assert_int_equal(gt_f32_to_f16(f), h);
    }
    /* values the decoder must give exactly */
    assert_true(gt_f16_to_f32(0x3c00) == 1.0f);
    assert_true(gt_f16_to_f32(0x7bff) == 65504.0f);
    assert_true(gt_f16_to_f32(0x0001) == ldexpf(1.0f, -24));
    assert_true(gt_f16_to_f32(0x0400) == ldexpf(1.0f, -14));
    assert_true(gt_f16_to_f32(0xc000) == -2.0f);
    assert_true(isinf(gt_f16_to_f32(0x7c00)) && gt_f16_to_f32(0xfc00) < 0);
}

/* Between consecutive finite halves a < b (same sign, a >= 0): below the
 * midpoint -> a, above -> b, at it -> whichever has an even mantissa. */
static void test_rounding(void **st)
{
    (void)st;
    for (uint32_t h = 0; h < 0x7bffu; h++) {
        const float a = gt_f16_to_f32((uint16_t)h), b = gt_f16_to_f32((uint16_t)(h + 1));
        const double mid = 0.5 * ((double)a + (double)b); /* exact in float: a and b have 11 bits */
        const float m = (float)mid;
        assert_true((double)m == mid);
        const uint16_t even = (h & 1u) ? (uint16_t)(h + 1) : (uint16_t)h;
        assert_int_equal(gt_f32_to_f16(m), even);
        assert_int_equal(gt_f32_to_f16(nextafterf(m, 0.0f)), h);
        assert_int_equal(gt_f32_to_f16(nextafterf(m, INFINITY)), h + 1);
        assert_int_equal(gt_f32_to_f16(-m), 0x8000u | even);
    }
}

static void test_specials(void **st)
{
    (void)st;
    assert_int_equal(gt_f32_to_f16(0.0f), 0x0000);
    assert_int_equal(gt_f32_to_f16(-0.0f), 0x8000);
    assert_int_equal(gt_f32_to_f16(INFINITY), 0x7c00);
    assert_int_equal(gt_f32_to_f16(-INFINITY), 0xfc00);
    assert_true(is_nan16(gt_f32_to_f16(NAN)));
    /* 65504 is the largest half; from the midpoint to 65536 (65520) on: inf */
    assert_int_equal(gt_f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(gt_f32_to_f16(65519.99f), 0x7bff);
    assert_int_equal(gt_f32_to_f16(65520.0f), 0x7c00);
    assert_int_equal(gt_f32_to_f16(1e10f), 0x7c00);
    assert_int_equal(gt_f32_to_f16(-1e10f), 0xfc00);
    /* below half the smallest subnormal: zero; the midpoint 2^-25 ties to 0 */
    assert_int_equal(gt_f32_to_f16(ldexpf(1.0f, -25)), 0x0000);
    assert_int_equal(gt_f32_to_f16(nextafterf(ldexpf(1.0f, -25), 1.0f)), 0x0001);
    assert_int_equal(gt_f32_to_f16(ldexpf(1.0f, -30)), 0x0000);
    assert_int_equal(gt_f32_to_f16(-ldexpf(1.0f, -30)), 0x8000);
    assert_int_equal(gt_f32_to_f16(1e-40f), 0x0000); /* a float subnormal */
    /* 1/3: 0x3555 (0.33325195...) */
    assert_int_equal(gt_f32_to_f16(1.0f / 3.0f), 0x3555);
}

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_array_matches_scalar(void **st)
{
    (void)st;
    enum { N = 1 << 20 };
    float *src = malloc(N * sizeof *src);
    uint16_t *dst = malloc(N * sizeof *dst);
    assert_non_null(src);
    assert_non_null(dst);
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < N; i++) {
        uint32_t u = (uint32_t)rng(&s);
        if (i % 3 == 0) u = (u & 0x807fffffu) | ((uint32_t)(100 + (u >> 24) % 60) << 23); /* the half's range */
        memcpy(&src[i], &u, sizeof u);
    }
    src[0] = 65520.0f;
    src[1] = ldexpf(1.0f, -25);
    src[2] = -0.0f;
    gt_f32_to_f16_array(dst, src, N - 3); /* a length that is not a multiple of 8 */
    for (size_t i = 0; i < N - 3; i++) {
        uint16_t want = gt_f32_to_f16(src[i]);
        if (is_nan16(want)) assert_true(is_nan16(dst[i]));
        else if (dst[i] != want) fail_msg("value %zu (%a): array %#06x, scalar %#06x", i, (double)src[i], dst[i], want);
    }
    free(src);
    free(dst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_rounding),
        cmocka_unit_test(test_specials),
        cmocka_unit_test(test_array_matches_scalar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
