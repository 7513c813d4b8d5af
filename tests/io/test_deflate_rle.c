/* The fast deflate encoder (io/deflate_rle.h) against zlib's inflate: every
 * output inflates to its input (raw deflate), for empty input, random
 * bytes (stored blocks), long runs (matches of 3..258 and a run crossing
 * a block's end), data like filtered image rows, counts skewed enough
 * that Huffman's construction needs more than 15 bits (the length limit),
 * inputs of more than one block; pieces without `last` end byte-aligned and
 * concatenate into one stream; the output stays within the bound and a
 * short buffer gives 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "io/deflate_rle.h"

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* inflate a raw deflate stream of exactly `want` bytes; the stream must end */
static void check_inflate(const uint8_t *z, size_t zn, const uint8_t *want, size_t n)
{
    uint8_t *out = malloc(n + 16);
    assert_non_null(out);
    z_stream s;
    memset(&s, 0, sizeof s);
    assert_int_equal(inflateInit2(&s, -15), Z_OK);
    s.next_in = (Bytef *)(uintptr_t)z;
    s.avail_in = (uInt)zn;
    s.next_out = out;
    s.avail_out = (uInt)(n + 16);
    int r = inflate(&s, Z_FINISH);
    assert_int_equal(r, Z_STREAM_END);
    assert_int_equal(s.total_out, n);
    assert_int_equal(s.avail_in, 0); /* nothing after the final block */
    assert_memory_equal(out, want, n);
    inflateEnd(&s);
    free(out);
}

static size_t encode(const uint8_t *src, size_t n, bool last, uint8_t **z)
{
    size_t cap = gt_deflate_rle_bound(n);
    *z = malloc(cap);
    assert_non_null(*z);
    size_t zn = gt_deflate_rle(src, n, last, *z, cap);
    assert_true(zn > 0 && zn <= cap);
    return zn;
}

static void round_trip(const uint8_t *src, size_t n, const char *what)
{
    uint8_t *z;
    size_t zn = encode(src, n, true, &z);
    print_message("%-34s %9zu -> %9zu bytes\n", what, n, zn);
    check_inflate(z, zn, src, n);
    free(z);
}

static void test_empty(void **st)
{
    (void)st;
    uint8_t b = 0;
    round_trip(&b, 0, "empty");
    round_trip((const uint8_t *)"a", 1, "one byte");
    round_trip((const uint8_t *)"aaa", 3, "three equal bytes");
}

static void test_random(void **st)
{
    (void)st;
    size_t n = 300000;
    uint8_t *a = malloc(n);
    uint64_t s = 7;
    for (size_t i = 0; i < n; i++) a[i] = (uint8_t)rng(&s);
    uint8_t *z;
    size_t zn = encode(a, n, true, &z);
    assert_true(zn <= n + n / 1000 + 64); /* stored, not expanded by Huffman */
    check_inflate(z, zn, a, n);
    free(z);
    free(a);
}

static void test_runs(void **st)
{
    (void)st;
    size_t n = 1 << 20;
    uint8_t *a = calloc(n, 1);
    round_trip(a, n, "1 MB of zeros");
    /* runs of every length 1..600 of alternating bytes, across block ends */
    size_t k = 0;
    for (int len = 1; k < n; len = len % 600 + 1)
        for (int j = 0; j < len && k < n; j++) a[k++] = (uint8_t)(len & 1 ? 0x41 : 0x42);
    round_trip(a, n, "runs 1..600");
    free(a);
}

/* small signed values, mostly near 0, with rows of runs: like Sub/Up filtered rows */
static void test_filtered_like(void **st)
{
    (void)st;
    size_t n = 3 * 1000 * 1000;
    uint8_t *a = malloc(n);
    uint64_t s = 99;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng(&s);
        int v = (int)(r % 7) - 3;
        if ((r >> 8) % 5 == 0) v = 0;
        if ((i / 5761) % 7 == 0) v = 0; /* flat rows */
        a[i] = (uint8_t)v;
    }
    uint8_t *z;
    size_t zn = encode(a, n, true, &z);
    check_inflate(z, zn, a, n);
    /* against zlib's own run-length strategy at level 1 */
    uLongf zl = compressBound(n);
    uint8_t *zz = malloc(zl);
    z_stream c;
    memset(&c, 0, sizeof c);
    assert_int_equal(deflateInit2(&c, 1, Z_DEFLATED, -15, 8, Z_RLE), Z_OK);
    c.next_in = a;
    c.avail_in = (uInt)n;
    c.next_out = zz;
    c.avail_out = (uInt)zl;
    assert_int_equal(deflate(&c, Z_FINISH), Z_STREAM_END);
    print_message("filtered-like %zu bytes: ours %zu, zlib Z_RLE %lu\n", n, zn, c.total_out);
    assert_true(zn <= c.total_out + c.total_out / 50); /* within 2 % of zlib's */
    deflateEnd(&c);
    free(zz);
    free(z);
    free(a);
}

/* Fibonacci counts over 24 symbols: Huffman's tree is 23 deep */
static void test_length_limit(void **st)
{
    (void)st;
    size_t fib[24] = {1, 1};
    for (int i = 2; i < 24; i++) fib[i] = fib[i - 1] + fib[i - 2];
    size_t n = 0;
    for (int i = 0; i < 24; i++) n += fib[i];
    uint8_t *a = malloc(n);
    size_t k = 0;
    for (int i = 0; i < 24; i++)
        for (size_t j = 0; j < fib[i]; j++) a[k++] = (uint8_t)(i * 10);
    uint64_t s = 5; /* shuffled, so that most bytes are literals */
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = rng(&s) % (i + 1);
        uint8_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
    round_trip(a, n, "Fibonacci counts");
    free(a);
}

/* pieces without last concatenate into one stream */
static void test_pieces(void **st)
{
    (void)st;
    size_t n = 500000;
    uint8_t *a = malloc(n);
    uint64_t s = 3;
    for (size_t i = 0; i < n; i++) a[i] = (uint8_t)((i / 1000) % 3 == 0 ? rng(&s) % 4 : (i / 7) & 0xff);
    const size_t cut[] = {0, 1, 140000, 140000, 333333, n}; /* an empty piece too */
    uint8_t *all = malloc(gt_deflate_rle_bound(n) * 6);
    size_t len = 0;
    for (int p = 0; p < 5; p++) {
        uint8_t *z;
        size_t zn = encode(a + cut[p], cut[p + 1] - cut[p], p == 4, &z);
        if (p < 4) /* ends with the empty stored block of a sync flush */
            assert_true(zn >= 4 && !memcmp(z + zn - 4, "\x00\x00\xff\xff", 4));
        memcpy(all + len, z, zn);
        len += zn;
        free(z);
    }
    check_inflate(all, len, a, n);
    free(all);
    free(a);
}

static void test_short_buffer(void **st)
{
    (void)st;
    size_t n = 100000;
    uint8_t *a = malloc(n);
    for (size_t i = 0; i < n; i++) a[i] = (uint8_t)(i * 7 % 13);
    uint8_t *z;
    size_t zn = encode(a, n, true, &z);
    assert_int_equal(gt_deflate_rle(a, n, true, z, zn - 1), 0);
    assert_int_equal(gt_deflate_rle(a, n, true, z, 10), 0);
    assert_int_equal(gt_deflate_rle(a, n, true, z, zn), zn); /* exactly enough */
    check_inflate(z, zn, a, n);
    free(z);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),         cmocka_unit_test(test_random),
        cmocka_unit_test(test_runs),          cmocka_unit_test(test_filtered_like),
        cmocka_unit_test(test_length_limit),  cmocka_unit_test(test_pieces),
        cmocka_unit_test(test_short_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
