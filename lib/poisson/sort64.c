/* LSD radix sorts of 64-bit keys (alone, or with a 64-bit value) on their low
 * bits, in passes of at most 11 bits; passes where all keys share the digit
 * are skipped. */
#include <string.h>

#include "poisson/pr_sort.h"

#define RADIX_SORT(NAME, T, KEY)                                                       \
    void NAME(T *a, T *tmp, size_t n, int nbits)                                       \
    {                                                                                  \
        if (n < 2 || nbits <= 0) return;                                               \
        int passes = (nbits + 10) / 11, bits = (nbits + passes - 1) / passes;          \
        size_t nb = (size_t)1 << bits, mask = nb - 1;                                  \
        static _Thread_local size_t cnt[1 << 11];                                      \
        T *src = a, *dst = tmp;                                                        \
        for (int p = 0; p < passes; p++) {                                             \
            int sh = p * bits;                                                         \
            memset(cnt, 0, nb * sizeof cnt[0]);                                        \
            for (size_t i = 0; i < n; i++) cnt[(KEY(src[i]) >> sh) & mask]++;          \
            if (cnt[(KEY(src[0]) >> sh) & mask] == n) continue;                        \
            size_t s = 0;                                                              \
            for (size_t d = 0; d < nb; d++) { size_t c = cnt[d]; cnt[d] = s; s += c; } \
            for (size_t i = 0; i < n; i++) dst[cnt[(KEY(src[i]) >> sh) & mask]++] = src[i]; \
            T *t = src; src = dst; dst = t;                                            \
        }                                                                              \
        if (src != a) memcpy(a, src, n * sizeof *a);                                   \
    }

#define KEY_SELF(x) (x)
#define KEY_K(x) ((x).k)
RADIX_SORT(gt_pr_radix_u64, uint64_t, KEY_SELF)
RADIX_SORT(gt_pr_radix_kv, gt_pr_kv, KEY_K)

size_t gt_pr_unique_u64(uint64_t *a, size_t n)
{
    if (n == 0) return 0;
    size_t m = 1;
    for (size_t i = 1; i < n; i++)
        if (a[i] != a[m - 1]) a[m++] = a[i];
    return m;
}
