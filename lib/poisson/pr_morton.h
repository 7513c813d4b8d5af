/* Morton keys: 3 coordinates of up to 21 bits interleaved (x in bit 0, y in
 * bit 1, z in bit 2). One definition for the CPU octree (octree.c) and the
 * GPU's octree, solve and extraction (kernels/poisson). */
#ifndef GT_PR_MORTON_H
#define GT_PR_MORTON_H

#include <stdint.h>

#ifdef __CUDACC__
#define PR_MORTON_HD __host__ __device__ __forceinline__
#else
#define PR_MORTON_HD static inline
#endif

/* the low 21 bits of v spread to every third bit */
PR_MORTON_HD uint64_t gt_pr_spread3(uint32_t v)
{
    uint64_t x = v & 0x1fffffu;
    x = (x | x << 32) & 0x1f00000000ffffull;
    x = (x | x << 16) & 0x1f0000ff0000ffull;
    x = (x | x << 8) & 0x100f00f00f00f00full;
    x = (x | x << 4) & 0x10c30c30c30c30c3ull;
    x = (x | x << 2) & 0x1249249249249249ull;
    return x;
}
/* the inverse: every third bit of x, from bit 0, packed */
PR_MORTON_HD uint32_t gt_pr_compact3(uint64_t x)
{
    x &= 0x1249249249249249ull;
    x = (x ^ (x >> 2)) & 0x10c30c30c30c30c3ull;
    x = (x ^ (x >> 4)) & 0x100f00f00f00f00full;
    x = (x ^ (x >> 8)) & 0x1f0000ff0000ffull;
    x = (x ^ (x >> 16)) & 0x1f00000000ffffull;
    x = (x ^ (x >> 32)) & 0x1fffffull;
    return (uint32_t)x;
}

#endif
