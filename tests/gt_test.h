/* Helpers shared by the cmocka tests. */
#ifndef GT_TEST_H
#define GT_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/device.h"
#include "common/rng.h"
#include "common/status.h"

/* GPU tests: exit 77 (meson's "skip") when no GPU can be used. */
static inline void gt_test_require_gpu(void)
{
    char why[256];
    if (gt_gpu_count(why, sizeof why) == 0) {
        printf("SKIP: no GPU (%s)\n", why);
        exit(77);
    }
    gt_device_kind k;
    if (gt_device_choose(GT_DEVICE_CUDA, 0, &k) != GT_OK) {
        printf("SKIP: cannot use GPU 0 (%s)\n", gt_errmsg());
        exit(77);
    }
}

/* Deterministic random numbers for tests (common/rng.h's splitmix64). */
typedef struct { uint64_t s; } gt_rng;
static inline uint64_t gt_rng_u64(gt_rng *r)
{
    return gt_splitmix64(&r->s);
}
static inline double gt_rng_uniform(gt_rng *r) /* [0,1) */
{
    return gt_rng_unit(&r->s);
}
static inline double gt_rng_range(gt_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * gt_rng_uniform(r);
}

/* The first byte offset at which files a and b differ (a shorter file
 * differs where it ends), -1 when they are identical, -2 when one cannot be
 * opened. */
static inline long gt_test_file_diff(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    long off = 0, r = -1;
    if (!fa || !fb) r = -2;
    while (r == -1) {
        int ca = getc(fa), cb = getc(fb);
        if (ca != cb) r = off;
        else if (ca == EOF) break;
        off++;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return r;
}

#define GT_ASSERT_SAME_FILE(a, b)                                                \
    do {                                                                         \
        long d_ = gt_test_file_diff((a), (b));                                   \
        if (d_ == -2) fail_msg("cannot open %s or %s", (a), (b));                \
        if (d_ >= 0) fail_msg("%s and %s differ at byte %ld", (a), (b), d_);     \
    } while (0)

#define GT_ASSERT_OK(expr)                                                       \
    do {                                                                         \
        gt_status s_ = (expr);                                                   \
        if (s_ != GT_OK) fail_msg("%s failed: %s", #expr, gt_errmsg());          \
    } while (0)

#endif
