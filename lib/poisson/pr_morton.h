/* Morton keys: 3 coordinates of up to 21 bits interleaved (x in bit 0, y in
 * bit 1, z in bit 2). One definition for the CPU octree, solve and
 * extraction (lib/poisson) and the GPU's (kernels/poisson). */
#ifndef GT_PR_MORTON_H
#define GT_PR_MORTON_H

#include <stddef.h>
#include <stdint.h>

#include "common/hostdev.h"


/* the low 21 bits of v spread to every third bit */
GT_HD uint64_t gt_pr_spread3(uint32_t v)
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
GT_HD uint32_t gt_pr_compact3(uint64_t x)
{
    x &= 0x1249249249249249ull;
    x = (x ^ (x >> 2)) & 0x10c30c30c30c30c3ull;
    x = (x ^ (x >> 4)) & 0x100f00f00f00f00full;
    x = (x ^ (x >> 8)) & 0x1f0000ff0000ffull;
    x = (x ^ (x >> 16)) & 0x1f00000000ffffull;
    x = (x ^ (x >> 32)) & 0x1fffffull;
    return (uint32_t)x;
}
/* the key of cell (x, y, z) and back (gt_pr_morton / gt_pr_demorton) */
GT_HD uint64_t gt_pr_key(uint32_t x, uint32_t y, uint32_t z)
{
    return gt_pr_spread3(x) | gt_pr_spread3(y) << 1 | gt_pr_spread3(z) << 2;
}
GT_HD void gt_pr_key_xyz(uint64_t k, uint32_t *x, uint32_t *y, uint32_t *z)
{
    *x = gt_pr_compact3(k);
    *y = gt_pr_compact3(k >> 1);
    *z = gt_pr_compact3(k >> 2);
}

/* The neighbour rule of the octree (Zhou et al. 2011): the same-level
 * neighbour at offset index i of a node that is child c of `parent` is child
 * lutc[i] of the parent's neighbour lutp[i] (lutp, lutc: row c of the 27-
 * or 125-neighbour LUTs of poisson.h), or -1 where that neighbour of the
 * parent or its children do not exist. nbr: 27 per node; child: the first
 * of 8, or -1. */
GT_HD int32_t gt_pr_nbr_rule(const int32_t *nbr, const int32_t *child, int32_t parent, const uint8_t *lutp,
                             const uint8_t *lutc, int i)
{
    const int32_t pn = nbr[27 * (size_t)parent + lutp[i]];
    if (pn < 0) return -1;
    const int32_t ch = child[pn];
    return ch < 0 ? -1 : ch + lutc[i];
}

/* The octree's depth-D cells: every cell within 2 cells of a cell with
 * points, so that a sample's splat (its cell's 27 neighbours) and the
 * divergence around it (their 125-neighbourhoods) fall on nodes, as
 * PoissonRecon makes a sample's neighbours before splatting. With all 8
 * siblings of a node allocated, that set is the children of the 27
 * neighbours of the occupied cell's parent: both builders add, for each
 * parent key pk (level lp) of an occupied cell and each i in 0..26, child 0
 * of its neighbour i (gt_pr_widen_key), or GT_PR_NO_KEY(lp + 1) where the
 * neighbour is outside the grid (a value above every key of level lp + 1). */
#define GT_PR_NO_KEY(l) ((uint64_t)1 << (3 * (l)))
GT_HD uint64_t gt_pr_widen_key(uint64_t pk, int lp, int i)
{
    uint32_t c[3];
    gt_pr_key_xyz(pk, &c[0], &c[1], &c[2]);
    const int64_t res = (int64_t)1 << lp;
    const int d[3] = {i % 3 - 1, (i / 3) % 3 - 1, i / 9 - 1};
    uint32_t q[3];
    for (int a = 0; a < 3; a++) {
        int64_t v = (int64_t)c[a] + d[a];
        if (v < 0 || v >= res) return GT_PR_NO_KEY(lp + 1);
        q[a] = (uint32_t)v;
    }
    return gt_pr_key(q[0], q[1], q[2]) << 3;
}

#endif
