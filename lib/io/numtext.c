/* Shortest round-trip formatting (Schubfach, R. Giulietti, "The Schubfach
 * way to render doubles", 2020) and correctly rounded parsing (Clinger's
 * fast path, then Eisel-Lemire: D. Lemire, "Number parsing at a gigabyte
 * per second", 2021; strtod for what neither settles). See numtext.h. The
 * powers of ten come from numtext_pow10.h, generated exactly by
 * scripts/gen/numtext_pow10.py. Needs unsigned __int128 (GCC, Clang). */
#include "io/numtext.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/numtext_pow10.h"

typedef unsigned __int128 u128;

/* floor(q log10 2), floor(q log10 (3/4 2^q)), floor(e log2 10): exact for
 * the exponents used here (checked against exact arithmetic over
 * |q| <= 1100, |e| <= 350); >> on a negative value is arithmetic in GCC. */
static inline int flog10pow2(int q) { return (int)(((int64_t)q * 661971961083LL) >> 41); }
static inline int flog10_34pow2(int q) { return (int)(((int64_t)q * 661971961083LL - 274743187321LL) >> 41); }
static inline int flog2pow10(int e) { return (int)(((int64_t)e * 913124641741LL) >> 38); }

/* floor(g cp / 2^128), its lowest bit set when the result is not exact
 * (rounding to odd keeps the comparisons below exact) */
static inline uint64_t rop(const uint64_t g[2], uint64_t cp)
{
    u128 x = (u128)g[1] * cp, y = (u128)g[0] * cp;
    u128 z = y + (x >> 64);
    return (uint64_t)(z >> 64) | ((uint64_t)z > 1);
}

/* The shortest decimal d 10^k in the rounding interval of c 2^q (closest to
 * it among the shortest; ties to even d). irregular: c is the smallest
 * significand of a binade above the lowest, whose interval is lopsided. */
static void shortest(uint64_t c, int q, bool irregular, uint64_t *d, int *k)
{
    uint64_t cb = c << 2, cbr = cb + 2, cbl;
    int kk;
    if (irregular) {
        cbl = cb - 1;
        kk = flog10_34pow2(q);
    } else {
        cbl = cb - 2;
        kk = flog10pow2(q);
    }
    int h = q + flog2pow10(-kk) + 1;
    const uint64_t *g = gt_nt_g[-kk - GT_NT_G_MIN];
    uint64_t vbl = rop(g, cbl << h), vb = rop(g, cb << h), vbr = rop(g, cbr << h);
    uint64_t out = c & 1; /* an odd significand's interval excludes its ends */
    vbl += out;
    vbr -= out;
    uint64_t s = vb >> 2;
    if (s >= 10) { /* one digit fewer: at most one candidate, sp or sp + 1 */
        uint64_t sp = s / 10;
        bool uin = vbl <= 40 * sp, win = 40 * sp + 40 <= vbr;
        if (uin != win) {
            *d = sp + win;
            *k = kk + 1;
            return;
        }
    }
    bool uin = vbl <= 4 * s, win = 4 * s + 4 <= vbr;
    if (uin != win) {
        *d = s + win;
        *k = kk;
        return;
    }
    uint64_t mid = 4 * s + 2; /* both inside: the closer */
    *d = s + (vb > mid || (vb == mid && (s & 1)));
    *k = kk;
}

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* the digits of d < 10^9 ending at e (32-bit arithmetic: short chains) */
static char *put_digits32(char *e, uint32_t d)
{
    while (d >= 100) {
        uint32_t r = d % 100;
        d /= 100;
        e -= 2;
        memcpy(e, digit_pairs + 2 * r, 2);
    }
    if (d >= 10) {
        e -= 2;
        memcpy(e, digit_pairs + 2 * d, 2);
    } else {
        *--e = (char)('0' + d);
    }
    return e;
}

/* lo < 10^8 as exactly 8 digits, zero-padded, ending at e: 4 pairs */
static void put_digits8(char *e, uint32_t lo)
{
    uint32_t a = lo / 10000, b = lo % 10000;
    memcpy(e - 2, digit_pairs + 2 * (b % 100), 2);
    memcpy(e - 4, digit_pairs + 2 * (b / 100), 2);
    memcpy(e - 6, digit_pairs + 2 * (a % 100), 2);
    memcpy(e - 8, digit_pairs + 2 * (a / 100), 2);
}

/* the n decimal digits of d (n = its digit count) at p */
static void put_digits(char *p, uint64_t d, int n)
{
    char *e = p + n;
    /* at most 17 digits: up to two groups of 8 below the leading ones */
    for (int g = 0; g < 2 && d >= 100000000; g++) {
        put_digits8(e, (uint32_t)(d % 100000000));
        d /= 100000000;
        e -= 8;
    }
    put_digits32(e, (uint32_t)d);
}

static const uint64_t pow10_u64[20] = {1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL,
                                       10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
                                       100000000000ULL, 1000000000000ULL, 10000000000000ULL,
                                       100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
                                       100000000000000000ULL, 1000000000000000000ULL,
                                       10000000000000000000ULL};

static int ndigits(uint64_t d)
{
    /* d has b bits; n = floor(b log10 2) (1233/4096 ~ log10 2) is its digit
     * count or one less */
    int b = 64 - __builtin_clzll(d | 1);
    int n = (b * 1233) >> 12;
    return n + (d >= pow10_u64[n]);
}

/* d 10^k (d > 0) as text at p: plain or with an exponent, the shorter;
 * returns the length, NUL-terminated */
static int put_decimal(char *p, uint64_t d, int k)
{
    while (d % 10 == 0) d /= 10, k++;
    int n = ndigits(d), x = k + n - 1; /* d1.d2... 10^x */
    int ax = x < 0 ? -x : x;
    int elen = n + (n > 1) + 1 + (x < 0) + (ax >= 100 ? 3 : ax >= 10 ? 2 : 1);
    int plen = x >= n - 1 ? x + 1 : x >= 0 ? n + 1 : n + 1 - x;
    if (plen <= elen) {
        if (x >= n - 1) { /* 1234000 */
            put_digits(p, d, n);
            memset(p + n, '0', (size_t)(x + 1 - n));
        } else if (x >= 0) { /* 12.34 */
            put_digits(p + 1, d, n);
            memmove(p, p + 1, (size_t)x + 1);
            p[x + 1] = '.';
        } else { /* 0.001234 */
            p[0] = '0';
            p[1] = '.';
            memset(p + 2, '0', (size_t)(-x - 1));
            put_digits(p + 1 - x, d, n);
        }
        p[plen] = 0;
        return plen;
    }
    char *e = p;
    put_digits(e + 1, d, n); /* 1.234e-56 */
    e[0] = e[1];
    if (n > 1) {
        e[1] = '.';
        e += n + 1;
    } else {
        e += 1;
    }
    *e++ = 'e';
    if (x < 0) *e++ = '-';
    if (ax >= 100) *e++ = (char)('0' + ax / 100);
    if (ax >= 10) *e++ = (char)('0' + ax / 10 % 10);
    *e++ = (char)('0' + ax % 10);
    *e = 0;
    return (int)(e - p);
}

static int put_special(char *buf, bool neg, bool isnan_, bool isinf_)
{
    char *p = buf;
    if (neg) *p++ = '-';
    const char *s = isnan_ ? "nan" : isinf_ ? "inf" : "0";
    size_t l = strlen(s);
    memcpy(p, s, l + 1);
    return (int)(p - buf) + (int)l;
}

/* A binary floating-point value, taken apart: sign, the fraction field m of
 * `mbits` bits and the biased exponent field be (all ones: inf/nan); `bias`
 * is the exponent bias plus mbits (1075 for double, 150 for float). */
static int fmt_binary(char *buf, bool neg, uint64_t m, int be, int be_max, int mbits, int bias)
{
    if (be == be_max) return put_special(buf, neg, m != 0, m == 0);
    if (be == 0 && m == 0) return put_special(buf, neg, false, false);
    uint64_t c;
    int q;
    bool irregular = false;
    if (be) {
        c = m | UINT64_C(1) << mbits;
        q = be - bias;
        irregular = m == 0 && be > 1;
    } else {
        c = m;
        q = 1 - bias;
    }
    uint64_t d;
    int k;
    shortest(c, q, irregular, &d, &k);
    char *p = buf;
    if (neg) *p++ = '-';
    return (int)(p - buf) + put_decimal(p, d, k);
}

int gt_fmt_double(char *buf, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return fmt_binary(buf, bits >> 63, bits & ((UINT64_C(1) << 52) - 1), (int)(bits >> 52 & 0x7ff), 0x7ff, 52, 1075);
}

int gt_fmt_float(char *buf, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return fmt_binary(buf, bits >> 31, bits & ((UINT32_C(1) << 23) - 1), (int)(bits >> 23 & 0xff), 0xff, 23, 150);
}

static inline bool isdig(char c) { return (unsigned)(c - '0') < 10; }

/* w 10^q (w > 0, at most 19 digits) correctly rounded, or false when
 * Eisel-Lemire cannot tell (subnormal, overflow) */
static bool eisel_lemire(uint64_t w, int q, double *out)
{
    if (q < GT_NT_P5_MIN || q > GT_NT_P5_MAX) return false;
    int lz = __builtin_clzll(w);
    w <<= lz;
    const uint64_t *t = gt_nt_p5[q - GT_NT_P5_MIN];
    u128 z = (u128)w * t[0];
    if (((uint64_t)(z >> 64) & 0x1ff) == 0x1ff) z += ((u128)w * t[1]) >> 64;
    uint64_t hi = (uint64_t)(z >> 64), lo = (uint64_t)z;
    int upper = (int)(hi >> 63), shift = upper + 9;
    uint64_t mant = hi >> shift;
    int p2 = (int)(((int64_t)q * (152170 + 65536)) >> 16) + 63 + upper - lz + 1023;
    if (p2 <= 0) return false;
    /* exactly halfway between two doubles happens only for small q: round
     * to even there instead of up */
    if (lo <= 1 && q >= -4 && q <= 23 && (mant & 3) == 1 && (mant << shift) == hi) mant &= ~UINT64_C(1);
    mant += mant & 1;
    mant >>= 1;
    if (mant >= UINT64_C(1) << 53) {
        mant = UINT64_C(1) << 52;
        p2++;
    }
    mant &= ~(UINT64_C(1) << 52);
    if (p2 >= 0x7ff) return false;
    uint64_t bits = mant | (uint64_t)p2 << 52;
    memcpy(out, &bits, sizeof bits);
    return true;
}

static const double exact_p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

bool gt_scan_double(const char *s, const char **end, double *v)
{
    const char *p = s;
    while (*p == ' ' || (*p >= '\t' && *p <= '\r')) p++;
    bool neg = *p == '-';
    if (*p == '+' || *p == '-') p++;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) goto slow;
    const char *m = p;
    while (*p == '0') p++;
    uint64_t w = 0;
    const char *ds = p;
    while (isdig(*p)) w = w * 10 + (uint64_t)(*p++ - '0');
    int nd = (int)(p - ds); /* significant digits */
    bool any = p > m;
    int q = 0;
    if (*p == '.') {
        const char *f = ++p;
        if (nd == 0)
            while (*p == '0') p++;
        const char *fs = p;
        while (isdig(*p)) w = w * 10 + (uint64_t)(*p++ - '0');
        nd += (int)(p - fs);
        q = -(int)(p - f);
        any = any || p > f;
    }
    if (!any || nd > 19) goto slow;
    if (*p == 'e' || *p == 'E') {
        const char *e = p + 1;
        bool eneg = *e == '-';
        if (*e == '+' || *e == '-') e++;
        if (isdig(*e)) {
            int x = 0;
            while (isdig(*e)) {
                if (x < 100000) x = x * 10 + (*e - '0');
                e++;
            }
            q += eneg ? -x : x;
            p = e;
        }
    }
    double r;
    if (w == 0) {
        r = 0;
    } else if (w <= UINT64_C(1) << 53 && q >= -22 && q <= 22) {
        r = (double)w; /* exact, and so is the power: one rounding */
        r = q < 0 ? r / exact_p10[-q] : r * exact_p10[q];
    } else if (!eisel_lemire(w, q, &r)) {
        goto slow;
    }
    *v = neg ? -r : r;
    *end = p;
    return true;
slow:;
    char *e;
    *v = strtod(s, &e);
    *end = e;
    return e != s;
}
