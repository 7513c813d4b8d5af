/* Sorting and searching of 64-bit keys for the CPU octree and extraction (sort64.c);
 * the searches are shared with the GPU extraction. */
#ifndef GT_PR_SORT_H
#define GT_PR_SORT_H

#include <stddef.h>
#include <stdint.h>

#include "common/hostdev.h"

/* the searches below are also the GPU extraction's (kernels/poisson/pr_extract.cu) */

typedef struct gt_pr_kv {
    uint64_t k, v;
} gt_pr_kv;

/* Stable LSD radix sorts on key bits [0, nbits); tmp holds n items; the
 * result is in a. */
void gt_pr_radix_u64(uint64_t *a, uint64_t *tmp, size_t n, int nbits);
void gt_pr_radix_kv(gt_pr_kv *a, gt_pr_kv *tmp, size_t n, int nbits);
/* Drop repeats from sorted a; returns the new length. */
size_t gt_pr_unique_u64(uint64_t *a, size_t n);
/* First i with a[i] >= k in sorted a (n when none). */
GT_HD size_t gt_pr_lower_bound(const uint64_t *a, size_t n, uint64_t k)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < k) lo = mid + 1; else hi = mid;
    }
    return lo;
}
GT_HD int gt_pr_contains(const uint64_t *a, size_t n, uint64_t k)
{
    size_t i = gt_pr_lower_bound(a, n, k);
    return i < n && a[i] == k;
}

#endif
