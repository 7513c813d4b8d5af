/* lib/io/numtext: shortest round-trip formatting against printf's %.Ng and
 * strtod/strtof, exact parsing against strtod, on random bit patterns,
 * random decimal strings and the edge cases (subnormals, binade bounds,
 * powers of 2 and 10, the exponent limits, odd syntax). About 3 s of CPU. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gt_test.h"
#include "io/numrows.h"
#include "io/numtext.h"

static double from_bits(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}
static uint64_t bits_of(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}
static float fbits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}
static uint32_t fbits_of(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* significant digits of a decimal string (leading zeros and the point and
 * exponent aside), into dig */
static int sig_digits(const char *s, char *dig)
{
    int n = 0;
    bool lead = true;
    for (; *s && *s != 'e' && *s != 'E'; s++) {
        if (*s < '0' || *s > '9') continue;
        if (lead && *s == '0') continue;
        lead = false;
        dig[n++] = *s;
    }
    while (n > 0 && dig[n - 1] == '0') n--; /* 1000 has one */
    dig[n] = 0;
    return n;
}

/* v's text reads back as v, and has the digits of the shortest %.Ng that
 * reads back, at no greater length; with_oracle: check against printf */
static void check_double(double v, bool with_oracle)
{
    char b[GT_FMT_MAX];
    int len = gt_fmt_double(b, v);
    assert_int_equal(len, (int)strlen(b));
    assert_true(len < GT_FMT_MAX);
    char *end;
    double r = strtod(b, &end);
    if (*end || bits_of(r) != bits_of(v)) fail_msg("%.17g written '%s' reads back as %.17g", v, b, r);
    const char *e2;
    double r2;
    assert_true(gt_scan_double(b, &e2, &r2));
    if (*e2 || bits_of(r2) != bits_of(v)) fail_msg("'%s' scanned as %.17g", b, r2);
    if (!with_oracle || v == 0) return;
    for (int p = 1; p <= 17; p++) {
        char o[64];
        snprintf(o, sizeof o, "%.*g", p, v);
        if (bits_of(strtod(o, NULL)) != bits_of(v)) continue;
        char d1[40], d2[40];
        int n1 = sig_digits(b, d1), n2 = sig_digits(o, d2);
        /* fewer digits than printf's shortest happens where the interval
         * is lopsided (powers of two): the correctly rounded N-digit
         * decimal misses it while another N-digit one is inside */
        if (n1 > n2 || (n1 == n2 && strcmp(d1, d2)))
            fail_msg("%.17g: '%s' but shortest %%.%dg is '%s'", v, b, p, o);
        if (n1 < n2 && (bits_of(v) & ((UINT64_C(1) << 52) - 1)))
            fail_msg("%.17g: '%s' shorter than '%s' away from a power of two", v, b, o);
        if (len > (int)strlen(o)) fail_msg("%.17g: '%s' longer than '%s'", v, b, o);
        return;
    }
    fail_msg("%.17g: no %%.Ng round-trips", v);
}

static void check_float(float v, bool with_oracle)
{
    char b[GT_FMT_MAX];
    int len = gt_fmt_float(b, v);
    assert_int_equal(len, (int)strlen(b));
    char *end;
    float r = strtof(b, &end);
    if (*end || fbits_of(r) != fbits_of(v)) fail_msg("%.9g written '%s' reads back as %.9g", v, b, r);
    if (!with_oracle || v == 0) return;
    for (int p = 1; p <= 9; p++) {
        char o[64];
        snprintf(o, sizeof o, "%.*g", p, v);
        if (fbits_of(strtof(o, NULL)) != fbits_of(v)) continue;
        char d1[40], d2[40];
        int n1 = sig_digits(b, d1), n2 = sig_digits(o, d2);
        if (n1 > n2 || (n1 == n2 && strcmp(d1, d2)))
            fail_msg("%.9g: '%s' but shortest %%.%dg is '%s'", v, b, p, o);
        if (n1 < n2 && (fbits_of(v) & ((UINT32_C(1) << 23) - 1)))
            fail_msg("%.9g: '%s' shorter than '%s' away from a power of two", v, b, o);
        if (len > (int)strlen(o)) fail_msg("%.9g: '%s' longer than '%s'", v, b, o);
        return;
    }
    fail_msg("%.9g: no %%.Ng round-trips", v);
}

static void test_fmt_special(void **state)
{
    (void)state;
    char b[GT_FMT_MAX];
    gt_fmt_double(b, 0.0);
    assert_string_equal(b, "0");
    gt_fmt_double(b, -0.0);
    assert_string_equal(b, "-0");
    gt_fmt_double(b, INFINITY);
    assert_string_equal(b, "inf");
    gt_fmt_double(b, -INFINITY);
    assert_string_equal(b, "-inf");
    gt_fmt_double(b, NAN);
    assert_string_equal(b, "nan");
    gt_fmt_float(b, -INFINITY);
    assert_string_equal(b, "-inf");
    /* the forms: plain where no longer, else an exponent */
    gt_fmt_double(b, 0.1);
    assert_string_equal(b, "0.1");
    gt_fmt_double(b, 1.5);
    assert_string_equal(b, "1.5");
    gt_fmt_double(b, -123456.75);
    assert_string_equal(b, "-123456.75");
    gt_fmt_double(b, 1e16);
    assert_string_equal(b, "1e16");
    gt_fmt_double(b, 1e-7);
    assert_string_equal(b, "1e-7");
    gt_fmt_double(b, 5e-324);
    assert_string_equal(b, "5e-324");
    gt_fmt_double(b, DBL_MAX);
    assert_string_equal(b, "1.7976931348623157e308");
    gt_fmt_float(b, 0.1f);
    assert_string_equal(b, "0.1");
    gt_fmt_float(b, FLT_MAX);
    assert_string_equal(b, "3.4028235e38");
    gt_fmt_float(b, 1e-45f);
    assert_string_equal(b, "1e-45");
}

static void test_fmt_double_edges(void **state)
{
    (void)state;
    /* every power of two and its neighbours */
    for (int e = -1074; e <= 1023; e++) {
        double v = ldexp(1.0, e);
        check_double(v, true);
        check_double(nextafter(v, 0), true);
        check_double(nextafter(v, INFINITY), true);
        check_double(-v, false);
    }
    /* powers of ten and their neighbours */
    for (int e = -323; e <= 308; e++) {
        char s[16];
        snprintf(s, sizeof s, "1e%d", e);
        double v = strtod(s, NULL);
        check_double(v, true);
        check_double(nextafter(v, 0), true);
        check_double(nextafter(v, INFINITY), true);
    }
    /* the smallest subnormals, the subnormal/normal boundary, the largest */
    for (uint64_t m = 1; m < 2000; m++) check_double(from_bits(m), true);
    for (uint64_t m = 0; m < 2000; m++) check_double(from_bits((UINT64_C(1) << 52) - 1000 + m), true);
    for (uint64_t m = 0; m < 2000; m++) check_double(from_bits(UINT64_C(0x7fefffffffffffff) - m), true);
    /* whole numbers and short decimals */
    for (int i = 0; i < 20000; i++) {
        check_double((double)i, true);
        check_double(i / 1000.0, true);
    }
}

static void test_fmt_double_random(void **state)
{
    (void)state;
    gt_rng rng = {18};
    /* random bit patterns (all exponents, subnormals, both signs) */
    for (int i = 0; i < 1000000; i++) {
        uint64_t b = gt_rng_u64(&rng);
        double v = from_bits(b);
        if (!isfinite(v)) continue;
        check_double(v, i < 100000);
    }
    /* values as programs print them: uniform in a range */
    for (int i = 0; i < 100000; i++) check_double(gt_rng_range(&rng, -1e3, 1e3), true);
}

static void test_fmt_float(void **state)
{
    (void)state;
    for (int e = -149; e <= 127; e++) {
        float v = ldexpf(1.0f, e);
        check_float(v, true);
        check_float(nextafterf(v, 0), true);
        check_float(nextafterf(v, INFINITY), true);
    }
    for (uint32_t m = 1; m < 100000; m++) check_float(fbits(m), true);
    for (uint32_t m = 0; m < 100000; m++) check_float(fbits(0x7f7fffffu - m), true);
    for (uint32_t m = 0; m < 20000; m++) check_float(fbits(0x00800000u - 10000 + m), true);
    gt_rng rng = {19};
    for (int i = 0; i < 1000000; i++) {
        float v = fbits((uint32_t)gt_rng_u64(&rng));
        if (!isfinite(v)) continue;
        check_float(v, i < 150000);
    }
}

/* gt_scan_double(s) is strtod(s): the same bits and the same end */
static void check_scan(const char *s)
{
    char *e1;
    const char *e2;
    double a = strtod(s, &e1), b = 12345;
    bool ok = gt_scan_double(s, &e2, &b);
    if (e1 != e2) fail_msg("'%s': strtod ends at %td, gt_scan_double at %td", s, e1 - s, e2 - s);
    assert_int_equal(ok, e1 != s);
    if (ok && bits_of(a) != bits_of(b) && !(isnan(a) && isnan(b)))
        fail_msg("'%s': strtod %a, gt_scan_double %a", s, a, b);
}

static void test_scan_syntax(void **state)
{
    (void)state;
    static const char *cases[] = {
        "0", "-0", "+0", "0.0", "-0.000e5", "1", "-1", "+1.5", "  \t12", "\n7", ".5", "5.", "-.5e1",
        "1e", "1e+", "1e-", "1ex", "1e5x", "1.5.5", "1,2", "12 34", "", "-", "+", ".", "-.", "e5",
        "inf", "-inf", "infinity", "INF", "nan", "-nan", "nan(123)", "0x1p3", "-0X1.8p-2", "0x",
        "1e400", "-1e400", "1e-400", "2.4703282292062327e-324", "2.4703282292062328e-324",
        "4.9406564584124654e-324", "2.2250738585072011e-308", "2.2250738585072012e-308",
        "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
        "9007199254740993", "9007199254740992.5", "00000000000000000000000012", "0.0000000000000000000000001",
        "123456789012345678901234567890", "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203124", "1e99999999999999999999",
        "1e-99999999999999999999", "0e99999999999", "7.2057594037927933e16", "1.5e-5\n", "3.0 #",
        "1_000", "١", "9999999999999999999", "18446744073709551615", "18446744073709551616",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_scan(cases[i]);
}

/* a random decimal: 1-20 digits, a point somewhere or none, an exponent in
 * one of several ranges or none */
static void random_decimal(gt_rng *r, char *s)
{
    char *p = s;
    uint64_t u = gt_rng_u64(r);
    if (u & 1) *p++ = '-';
    int nd = 1 + (int)(gt_rng_u64(r) % 20);
    int point = (int)(gt_rng_u64(r) % (uint64_t)(nd + 2)) - 1; /* -1: none */
    int lz = (u >> 1 & 7) == 0 ? (int)(gt_rng_u64(r) % 25) : 0;
    if (point == 0) *p++ = '0';
    for (int i = 0; i < nd; i++) {
        if (i == point) *p++ = '.';
        if (i == 0 && point >= 0 && point <= 0)
            for (int z = 0; z < lz; z++) *p++ = '0';
        *p++ = (char)('0' + gt_rng_u64(r) % 10);
    }
    if (point == nd) *p++ = '.';
    int ek = (int)(u >> 4 & 7);
    int ex = 0;
    switch (ek) {
    case 0: break;
    case 1: ex = (int)(gt_rng_u64(r) % 45) - 22; break;
    case 2: ex = (int)(gt_rng_u64(r) % 600) - 300; break;
    case 3: ex = 280 + (int)(gt_rng_u64(r) % 40); break;  /* near overflow */
    case 4: ex = -360 + (int)(gt_rng_u64(r) % 60); break; /* near and past underflow */
    case 5: ex = -330 + (int)(gt_rng_u64(r) % 30); break; /* subnormal */
    default: ex = (int)(gt_rng_u64(r) % 80) - 40; break;
    }
    if (ek) p += sprintf(p, "%c%s%d", (u >> 8 & 1) ? 'e' : 'E', ex >= 0 && (u >> 9 & 1) ? "+" : "", ex);
    *p = 0;
}

static void test_scan_random(void **state)
{
    (void)state;
    gt_rng rng = {20};
    char s[128];
    for (int i = 0; i < 600000; i++) {
        random_decimal(&rng, s);
        check_scan(s);
    }
    /* 17-digit decimals of random doubles: what %.17g writes */
    for (int i = 0; i < 200000; i++) {
        double v = from_bits(gt_rng_u64(&rng));
        if (!isfinite(v)) continue;
        snprintf(s, sizeof s, "%.17g", v);
        check_scan(s);
        snprintf(s, sizeof s, "%.16g", v);
        check_scan(s);
        snprintf(s, sizeof s, "%.*e", (int)(gt_rng_u64(&rng) % 20), v);
        check_scan(s);
    }
}

/* gt_write_rows: every row, in order, its numbers exact, for sizes around
 * the chunking (one chunk, a chunk boundary, many rounds) */
static void test_write_rows(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 255, 256, 257, 4097, 100000};
    gt_rng rng = {21};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si];
        double *a = malloc((2 * n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
        for (size_t i = 0; i < 2 * n; i++) a[i] = from_bits(gt_rng_u64(&rng) & ~(UINT64_C(1) << 62));
        for (size_t i = 0; i < n; i++) b[i] = gt_rng_range(&rng, -1, 1);
        FILE *f = tmpfile();
        assert_non_null(f);
        assert_int_equal(gt_write_rows(f, n, a, 2, b, 1), 0);
        rewind(f);
        char line[256];
        size_t rows = 0;
        while (fgets(line, sizeof line, f)) {
            assert_true(rows < n);
            const char *p = line;
            double v[3];
            for (int k = 0; k < 3; k++) assert_true(gt_scan_double(p, &p, &v[k]));
            assert_string_equal(p, "\n");
            assert_int_equal(bits_of(v[0]), bits_of(a[2 * rows]));
            assert_int_equal(bits_of(v[1]), bits_of(a[2 * rows + 1]));
            assert_int_equal(bits_of(v[2]), bits_of(b[rows]));
            rows++;
        }
        assert_int_equal(rows, n);
        fclose(f);
        free(a);
        free(b);
    }
    FILE *f = fopen("/dev/full", "w");
    if (f) { /* a write error is reported, and left in the stream */
        double x[3] = {1, 2, 3};
        setvbuf(f, NULL, _IONBF, 0);
        assert_int_equal(gt_write_rows(f, 1, x, 3, NULL, 0), -1);
        assert_true(ferror(f));
        fclose(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fmt_special),  cmocka_unit_test(test_fmt_double_edges),
        cmocka_unit_test(test_fmt_double_random), cmocka_unit_test(test_fmt_float),
        cmocka_unit_test(test_scan_syntax),  cmocka_unit_test(test_scan_random),
        cmocka_unit_test(test_write_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
