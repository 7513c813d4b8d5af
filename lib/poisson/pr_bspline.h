/* The per-element math of the Poisson solve and of chi's evaluation, shared
 * verbatim by the CPU reference (lib/poisson: solve.c, eval.c, octree.c) and
 * the CUDA kernels (kernels/poisson: pr_solve.cu, pr_eval_dev.cuh): the
 * centred quadratic B-spline and its derivative, a node's basis function at a
 * point, the 125-point Laplacian and divergence terms from the 1D integral
 * tables, a level's functions evaluated at a point, the splat of the normals
 * into one node, the sample area, and the descent that evaluates chi.
 *
 * Pure functions of their arguments (arrays of the octree as in
 * gt_pr_octree: keys sorted per level, 27 neighbours per node, first child),
 * so both paths compute the same numbers from the same expressions. The GPU
 * compiles them with nvcc's default contraction into FMAs; the GPU-vs-CPU
 * tests compare the solves with tolerances for that. */
#ifndef GT_PR_BSPLINE_H
#define GT_PR_BSPLINE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hostdev.h"
#include "poisson/pr_morton.h"
#include "poisson/pr_sort.h"

/* Centred quadratic B-spline (support |t| < 1.5) and its derivative. */
GT_HD double gt_pr_bspline(double t)
{
    double a = fabs(t);
    if (a < 0.5) return 0.75 - t * t;
    if (a < 1.5) return 0.5 * (1.5 - a) * (1.5 - a);
    return 0.0;
}
GT_HD double gt_pr_dbspline(double t)
{
    double a = fabs(t);
    if (a < 0.5) return -2.0 * t;
    if (a < 1.5) return t > 0 ? -(1.5 - a) : (1.5 - a);
    return 0.0;
}

/* cell coordinates of a node from its key */
GT_HD void gt_pr_cell_of(uint64_t key, int64_t c[3])
{
    uint32_t x, y, z;
    gt_pr_key_xyz(key, &x, &y, &z);
    c[0] = x;
    c[1] = y;
    c[2] = z;
}

/* F_o(p): the basis function of the level-`level` node of cell c at the
 * unit-cube point p (the tensor product of the three 1D B-splines) */
GT_HD double gt_pr_basis(int level, const int64_t c[3], const float *p)
{
    double s = ldexp(1.0, level), r = 1.0;
    for (int a = 0; a < 3; a++) r *= gt_pr_bspline((double)p[a] * s - (double)c[a] - 0.5);
    return r;
}

/* sum over the 27 neighbours t of `node` (same level) of x[t] F_t(p) */
GT_HD double gt_pr_eval_node(const uint64_t *key, const int32_t *nbr, int level, int32_t node, const float *p,
                             const double *x)
{
    double s = 0.0;
    for (int i = 0; i < 27; i++) {
        int32_t nb = nbr[27 * (size_t)node + i];
        if (nb < 0) continue;
        int64_t c[3];
        gt_pr_cell_of(key[(size_t)nb], c);
        s += x[nb] * gt_pr_basis(level, c, p);
    }
    return s;
}

/* The share of a sample of splat depth `depth` (gt_pr_sample_depth) that
 * goes to level l: the depth clamped to [F, D]; its ceiling gets depth -
 * (ceiling - 1), the level below the rest (PoissonRecon's split between the
 * two levels around a fractional depth); an integer depth goes whole. */
GT_HD double gt_pr_splat_weight(double depth, int F, int D, int l)
{
    const double dc = depth < (double)F ? (double)F : depth > (double)D ? (double)D : depth;
    const int sd = (int)ceil(dc);
    if (l == sd) return (double)sd == dc ? 1.0 : dc - (double)(sd - 1);
    if (l == sd - 1 && (double)sd != dc) return (double)sd - dc;
    return 0.0;
}

/* One point's term of gt_pr_splat_node: F_v(p_k) area_k n_k times the
 * share of sample k at level l, added to acc (c: the cell of node v).
 * Returns whether sample k has a share at level l: then node v has data
 * (GT_PR_T_DATA), even where F_v(p_k) is 0, as it is exactly for a
 * sample on the far boundary of its cell; a node's data would otherwise
 * depend on the side of a cell boundary a sample was rounded to. */
GT_HD int gt_pr_splat_point(int l, int F, int D, const int64_t c[3], size_t k, const float *u, const float *nrm,
                            const float *area, const float *depth, double acc[3])
{
    const double wl = gt_pr_splat_weight((double)depth[k], F, D, l);
    if (wl == 0.0) return 0;
    const double f = gt_pr_basis(l, c, u + 3 * k) * (double)area[k] * wl;
    for (int a = 0; a < 3; a++) acc[a] += f * (double)nrm[3 * k + a];
    return 1;
}

/* The splat of the normals into the level-l node v: sum over the points k of
 * its 27 neighbour cells of F_v(p_k) area_k n_k times the share of sample k
 * at level l (gt_pr_splat_weight of depth[k]; before the 2^{3l} scale).
 * Returns whether some sample of those cells has a share at level l (the
 * node's data bit, gt_pr_splat_point). */
GT_HD int gt_pr_splat_node(const uint64_t *key, const int32_t *nbr, const uint32_t *pt_start,
                           const uint32_t *pt_count, int l, int F, int D, size_t v, const float *u,
                           const float *nrm, const float *area, const float *depth, double acc[3])
{
    int64_t c[3];
    gt_pr_cell_of(key[v], c);
    acc[0] = acc[1] = acc[2] = 0.0;
    int share = 0;
    for (int i = 0; i < 27; i++) {
        int32_t nb = nbr[27 * v + i];
        if (nb < 0) continue;
        for (uint32_t k = pt_start[nb]; k < pt_start[nb] + pt_count[nb]; k++)
            share |= gt_pr_splat_point(l, F, D, c, k, u, nrm, area, depth, acc);
    }
    return share;
}

/* A sample's splat depth, PoissonRecon's (_getSampleDepthAndWeight): W_l
 * the density estimate at the sample at level l (gt_pr_eval_node of the
 * per-node sums wdens) in units of `unit`, the estimate that spn samples
 * per node of a flat surface give (GT_PR_KAPPA spn: PoissonRecon divides
 * its density by the same plane factor, so that it counts samples per
 * node). Where W_Dw >= 1 the depth is Dw + log4(W_Dw) (a node of that
 * depth holds about spn samples); else the walk goes up from the sample's
 * level-Dw node `node` (parent links), to level F at most, to the first
 * level whose W is >= 1, and interpolates log-linearly between it and the
 * level below; where W stays below 1 up to level F, F + log4(W_F). Not
 * clamped. */
GT_HD double gt_pr_sample_depth(const uint64_t *key, const int32_t *nbr, const int32_t *parent, int32_t node, int Dw,
                                int F, const float *p, const double *wdens, double unit)
{
    double w = gt_pr_eval_node(key, nbr, Dw, node, p, wdens) / unit;
    if (w >= 1.0) return (double)Dw + log(w) / log(4.0);
    int l = Dw;
    double oldw = w, neww = w;
    while (neww < 1.0 && l > F) {
        node = parent[node];
        l--;
        oldw = neww;
        neww = gt_pr_eval_node(key, nbr, l, node, p, wdens) / unit;
    }
    /* still below 1 at level F (PoissonRecon walks on to the root, but the
     * density exists only from F): a node of level l holds neww, so one
     * holding 1 is log4(1 / neww) levels up, as where W >= 1. The
     * interpolation below would divide by log(neww / oldw), near 0 where the
     * density hardly changes between the last two levels: depths far below
     * F, sample areas 4^-depth of 10^8 and more, and a screening term that
     * wrecks the solve (6,000 points thinning 20-fold, depth 8) */
    if (neww < 1.0) return neww > 0.0 ? (double)l + log(neww) / log(4.0) : (double)l;
    if (!(neww > oldw) || !(oldw > 0.0)) return (double)l;
    return (double)l + log(neww) / log(neww / oldw);
}

/* A sample's area from its splat depth: 4^-depth / spn, a node of that
 * depth shared by spn samples (where the depth is Dw + log4(W / (kappa
 * spn)): kappa w_Dw^2 / W, the area of a sample of a surface sampled at
 * density W; poisson.h says why kappa) */
GT_HD float gt_pr_sample_area(double depth, double spn)
{
    return (float)(exp2(-2.0 * depth) / spn);
}

/* Stray samples (a scan's stray returns) are sparse, so each stands for the
 * area of a coarse node. A sample whose area is more than GT_PR_AREA_CAP
 * times the samples' median (the cap) screens, and counts in the iso-value,
 * with the weight (cap / area)^2 (gt_pr_screen_weight), and counts with
 * that weight in the samples' mean area (the screening's weight, solve.c:
 * screen_area); its normal is splatted as any other. Without it, 2 % strays
 * about a bumpy sphere of 1M points (depth 10) raised the screening's weight
 * (0.1 % strays at depth 7: by 7.6 %, test_strays_screening), and the
 * strays inside pulled chi there to the iso-value: closed bubbles inside
 * the surface, 13 % of the mesh's vertices (mean distance 1045 times
 * PoissonRecon's; now 0.39 times).
 * The cap is high because surfaces sampled unevenly reach it too: a rounded
 * box sampled 20 times more densely at one end has samples up to 37 times
 * the median. A cap of 8 also removed the bubbles of strays packed densely
 * inside an object (5 %, 8 to 50 times the median: 25 bubbles before,
 * PoissonRecon 8 blobs), but fitted those surfaces' sparse ends more loosely (the rounded box's
 * mean distance 0.96 -> 1.10 times PoissonRecon's, a thin disk's max 1.69
 * -> 2.07 times); with 32 they are fitted as before, and such strays still
 * grow bubbles, as in PoissonRecon. RESULTS.md, 2026-11-29, nineteenth. The
 * median comes from a histogram of the areas' float bits (exponent and two
 * leading mantissa bits: bins a quarter octave wide), which the CPU and GPU
 * paths count alike, so both find the same cap. */
#define GT_PR_AREA_CAP 32.0
#define GT_PR_AREA_BINS 1024
GT_HD uint32_t gt_pr_area_bin(float a)
{
    union {
        float f;
        uint32_t u;
    } x;
    x.f = a;
    return (x.u & 0x7fffffffu) >> 21;
}
/* GT_PR_AREA_CAP times the lower edge of the bin that holds the median of
 * the n areas counted in hist (0 when n is 0) */
GT_HD double gt_pr_area_cap(const uint32_t *hist, size_t n)
{
    size_t c = 0;
    uint32_t b = 0;
    while (b < GT_PR_AREA_BINS - 1 && 2 * (c + hist[b]) <= n) c += hist[b++];
    union {
        float f;
        uint32_t u;
    } x;
    x.u = b << 21;
    return n ? GT_PR_AREA_CAP * (double)x.f : 0.0;
}
/* a sample's weight in the screening and the iso-value: 1 up to the cap,
 * (cap / area)^2 beyond */
GT_HD float gt_pr_screen_weight(float area, double cap)
{
    const double r = cap / (double)area;
    return (double)area <= cap ? 1.0f : (float)(r * r);
}
/* that weight times the area, in double: the screening's mean area is
 * their sum over the weights' (solve.c: screen_area) */
GT_HD double gt_pr_screen_area(float area, double cap)
{
    return (double)area <= cap ? (double)area : cap * (cap / (double)area);
}
/* At the finest two levels (gt_pr_screen_own_level) each sample screens
 * with its own area, that weighted area (gt_pr_screen_area) but at most
 * GT_PR_OWN_CLAMP times the median (cap / GT_PR_AREA_CAP), over the mean
 * area (screen_area): the sparse part of an unevenly sampled surface screens
 * as strongly per unit of surface as the dense part. A thin disk sampled
 * 20 times more densely at one end (disk+uneven, areas up to 18x the
 * median) had a max distance 1.69x PoissonRecon's with the mean area
 * there; 1.29x with this. Without the clamp (a weight of up to 32 times
 * the median's area, for the strays just below the cap and just above it)
 * 400 strays about a sphere of 20,000 points at depth 7 grew 6 blobs
 * (test_outliers: Euler 12 to 14); a clamp of 16 grew none, 8 none with a
 * margin (disk+uneven 1.26x with 16, 1.41x with 4; CPU, depth 8,
 * scripts/bench/poissonrec). */
#define GT_PR_OWN_CLAMP 8.0
GT_HD float gt_pr_screen_own(float area, double cap, double mean)
{
    const double c = GT_PR_OWN_CLAMP / GT_PR_AREA_CAP * cap, a = gt_pr_screen_area(area, cap);
    return mean > 0.0 ? (float)((a < c ? a : c) / mean) : 1.0f;
}

/* The 1D integral tables' rows for a fine node of cell cf and the coarse
 * functions around its ancestor of cell ca, `shift` levels up: tM/tG are the
 * tables of that level pair (2^shift rows of 5, see gt_pr_cross_fill) */
GT_HD void gt_pr_cross_rows(const double *tM, const double *tG, const int64_t cf[3], const int64_t ca[3],
                            int shift, double M[3][5], double G[3][5])
{
    for (int a = 0; a < 3; a++) {
        size_t r = (size_t)(cf[a] - (ca[a] << shift));
        for (int k = 0; k < 5; k++) {
            M[a][k] = tM[r * 5 + k];
            G[a][k] = tG[r * 5 + k];
        }
    }
}
/* Which of the 5 coarse functions along axis a the rows reach: bit k set
 * where M[a][k] or G[a][k] is nonzero. A 125-index i = kx + 5 ky + 25 kz
 * whose bit is clear on some axis has every term below exactly zero (each
 * product holds one factor of each axis), so loops may skip it. */
GT_HD unsigned gt_pr_rows_mask(const double M[3][5], const double G[3][5], int a)
{
    unsigned m = 0;
    for (int k = 0; k < 5; k++)
        if (M[a][k] != 0.0 || G[a][k] != 0.0) m |= 1u << k;
    return m;
}
/* the three axes' masks in one word (x in bits 0-4, y 5-9, z 10-14) */
GT_HD unsigned gt_pr_rows_mask3(const double M[3][5], const double G[3][5])
{
    return gt_pr_rows_mask(M, G, 0) | gt_pr_rows_mask(M, G, 1) << 5 | gt_pr_rows_mask(M, G, 2) << 10;
}
/* whether 125-index i can have a nonzero term under the mask word m3 */
GT_HD int gt_pr_mask_has(unsigned m3, int i)
{
    return (int)((m3 >> (i % 5)) & (m3 >> (5 + (i / 5) % 5)) & (m3 >> (10 + i / 25)) & 1u);
}
/* The Laplacian coupling int grad F_f . grad F_t with the coarse function t
 * at 125-index i = kx + 5 ky + 25 kz (M: values, G: derivatives) */
GT_HD double gt_pr_lap_term(const double M[3][5], const double G[3][5], int i)
{
    const int kx = i % 5, ky = (i / 5) % 5, kz = i / 25;
    return G[0][kx] * M[1][ky] * M[2][kz] + M[0][kx] * G[1][ky] * M[2][kz] + M[0][kx] * M[1][ky] * G[2][kz];
}
/* The divergence v . int grad F_t F_f of the fine node's vector v at the
 * coarse function t, 125-index i (G: the derivative of t against f) */
GT_HD double gt_pr_div_term(const double v[3], const double M[3][5], const double G[3][5], int i)
{
    const int kx = i % 5, ky = (i / 5) % 5, kz = i / 25;
    return v[0] * G[0][kx] * M[1][ky] * M[2][kz] + v[1] * M[0][kx] * G[1][ky] * M[2][kz] +
           v[2] * M[0][kx] * M[1][ky] * G[2][kz];
}

/* Node at `level` with cell (x, y, z) by binary search of the level's sorted
 * keys, or -1 (also outside the grid) */
GT_HD int32_t gt_pr_find_key(const uint64_t *key, const size_t *level_start, int level, int64_t x, int64_t y,
                             int64_t z)
{
    int64_t r = (int64_t)1 << level;
    if (x < 0 || y < 0 || z < 0 || x >= r || y >= r || z >= r) return -1;
    uint64_t k = gt_pr_key((uint32_t)x, (uint32_t)y, (uint32_t)z);
    const size_t s0 = level_start[level], n = level_start[level + 1] - s0;
    const size_t i = gt_pr_lower_bound(key + s0, n, k);
    return (i < n && key[s0 + i] == k) ? (int32_t)(s0 + i) : -1;
}

/* The value at unit point q of the functions of levels lmin..lmax with
 * per-node values arr (chi with the coefficients): descend from the root
 * along the cells that hold q; at each level the 27 neighbours of that cell
 * from its node's table where the cell exists, else by binary search. */
GT_HD double gt_pr_eval_descent(const uint64_t *key, const int32_t *child, const int32_t *nbr,
                                const size_t *level_start, const double q[3], const double *arr, int lmin,
                                int lmax)
{
    double sum = 0.0;
    /* cells outside the unit cube have no node: search (and find nothing) */
    int inside = 1;
    for (int a = 0; a < 3; a++) inside &= q[a] >= 0 && q[a] < 1;
    int32_t node = inside ? 0 : -1;
    for (int d = 0; d <= lmax; d++) {
        double sc = ldexp(1.0, d);
        int64_t c[3];
        for (int a = 0; a < 3; a++) c[a] = (int64_t)floor(q[a] * sc);
        if (d >= lmin) {
            for (int i = 0; i < 27; i++) {
                int64_t nc[3] = {c[0] + i % 3 - 1, c[1] + (i / 3) % 3 - 1, c[2] + i / 9 - 1};
                int32_t t = node >= 0 ? nbr[27 * (size_t)node + i]
                                      : gt_pr_find_key(key, level_start, d, nc[0], nc[1], nc[2]);
                if (t < 0) continue;
                double f = 1.0;
                for (int a = 0; a < 3; a++) f *= gt_pr_bspline(q[a] * sc - (double)nc[a] - 0.5);
                sum += arr[t] * f;
            }
        }
        if (d < lmax) {
            if (node >= 0 && child[node] >= 0) {
                int cb = 0;
                for (int a = 0; a < 3; a++) {
                    int64_t cc = (int64_t)floor(q[a] * sc * 2.0);
                    if (cc < 0) cc = 0;
                    cb |= (int)(cc & 1) << a;
                }
                node = child[node] + cb;
            } else {
                node = -1;
            }
        }
    }
    return sum;
}

#endif
