/* Matrices for the IC(0)/ILU(0) tests (header-only): a symmetric diagonally
 * dominant random matrix, the 2-D upwinded convection-diffusion operator, a
 * tetrahedral-mesh graph Laplacian, and the factors as dense matrices. */
#ifndef ILU0_TESTUTIL_H
#define ILU0_TESTUTIL_H

#include <math.h>
#include <stdlib.h>

#include "sparse/ilu0.h"
#include "sparse_testutil.h"

/* B + B^T with B random (density dens), diagonal = row sum of |.| + 1: SPD. */
static inline void ilu_sym_dd(gt_rng *r, int64_t n, double dens, gt_csr *out)
{
    gt_csr b;
    sp_random(r, n, n, dens, 0, &b);
    int64_t cap = 2 * b.nnz + n;
    int32_t *ri = malloc((size_t)cap * 4), *ci = malloc((size_t)cap * 4);
    double *v = malloc((size_t)cap * 8), *rs = calloc((size_t)n, 8);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = b.ptr[i]; p < b.ptr[i + 1]; p++) {
            int32_t j = b.col[p];
            if (j == i) continue;
            ri[k] = (int32_t)i, ci[k] = j, v[k++] = b.val[p];
            ri[k] = j, ci[k] = (int32_t)i, v[k++] = b.val[p];
            rs[i] += fabs(b.val[p]), rs[j] += fabs(b.val[p]);
        }
    for (int64_t i = 0; i < n; i++) ri[k] = ci[k] = (int32_t)i, v[k++] = rs[i] + 1.0;
    if (gt_csr_from_triplets(n, n, k, ri, ci, v, out) != GT_OK) abort();
    free(ri), free(ci), free(v), free(rs), gt_csr_free(&b);
}

/* -laplace(u) + beta . grad(u) on an nx x ny grid (h = 1), first-order upwind
   with beta = (bx, by) >= 0, Dirichlet boundary: nonsymmetric M-matrix,
   Peclet number bx (per cell). */
static inline void ilu_convdiff2d(int64_t nx, int64_t ny, double bx, double by, gt_csr *out)
{
    int64_t n = nx * ny, cap = 5 * n;
    int32_t *ri = malloc((size_t)cap * 4), *ci = malloc((size_t)cap * 4);
    double *v = malloc((size_t)cap * 8);
    int64_t k = 0;
    for (int64_t y = 0; y < ny; y++)
        for (int64_t x = 0; x < nx; x++) {
            int32_t i = (int32_t)(y * nx + x);
            ri[k] = ci[k] = i, v[k++] = 4 + bx + by;
            if (x > 0) ri[k] = i, ci[k] = i - 1, v[k++] = -1 - bx;
            if (x < nx - 1) ri[k] = i, ci[k] = i + 1, v[k++] = -1;
            if (y > 0) ri[k] = i, ci[k] = (int32_t)(i - nx), v[k++] = -1 - by;
            if (y < ny - 1) ri[k] = i, ci[k] = (int32_t)(i + nx), v[k++] = -1;
        }
    if (gt_csr_from_triplets(n, n, k, ri, ci, v, out) != GT_OK) abort();
    free(ri), free(ci), free(v);
}

/* Dense L and U (row-major n x n) from the factors. */
static inline void ilu_dense_factors(const gt_ilu0 *F, double *L, double *U)
{
    int64_t n = F->n;
    for (int64_t k = 0; k < n * n; k++) L[k] = U[k] = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!F->ic) L[i * n + i] = 1;
        for (int64_t p = F->f.ptr[i]; p < F->f.ptr[i + 1]; p++) {
            int32_t j = F->f.col[p];
            if (j < i || (F->ic && j == i)) L[i * n + j] = F->f.val[p];
            if (j >= i) U[i * n + j] = F->f.val[p];
        }
    }
}

/* The edge graph of the Freudenthal (Kuhn) tetrahedral mesh of an m^3 vertex
   lattice (neighbours at +-e1, e2, e3, e1+e2, e1+e3, e2+e3, e1+e2+e3: 15
   nonzeros per interior row), as a weighted graph Laplacian with symmetric
   random weights in [0.5, 1.5] plus 0.01 on the diagonal: SPD, FEM-like.
   shuffle: number the vertices in a random order (a badly ordered mesh). */
static inline void ilu_tet_lattice(gt_rng *r, int64_t m, bool shuffle, gt_csr *out)
{
    int64_t n = m * m * m, cap = 15 * n;
    int32_t *ri = malloc((size_t)cap * 4), *ci = malloc((size_t)cap * 4), *perm = malloc((size_t)n * 4);
    double *v = malloc((size_t)cap * 8), *dg = calloc((size_t)n, 8);
    for (int64_t i = 0; i < n; i++) perm[i] = (int32_t)i;
    if (shuffle)
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = (int64_t)(gt_rng_u64(r) % (uint64_t)(i + 1));
            int32_t t = perm[i];
            perm[i] = perm[j], perm[j] = t;
        }
    static const int off[7][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}};
    int64_t k = 0;
    for (int64_t z = 0; z < m; z++)
        for (int64_t y = 0; y < m; y++)
            for (int64_t x = 0; x < m; x++)
                for (int e = 0; e < 7; e++) {
                    int64_t X = x + off[e][0], Y = y + off[e][1], Z = z + off[e][2];
                    if (X >= m || Y >= m || Z >= m) continue;
                    int32_t a = perm[(z * m + y) * m + x], b = perm[(Z * m + Y) * m + X];
                    double w = gt_rng_range(r, 0.5, 1.5);
                    ri[k] = a, ci[k] = b, v[k++] = -w;
                    ri[k] = b, ci[k] = a, v[k++] = -w;
                    dg[a] += w, dg[b] += w;
                }
    for (int64_t i = 0; i < n; i++) ri[k] = ci[k] = (int32_t)i, v[k++] = dg[i] + 0.01;
    if (gt_csr_from_triplets(n, n, k, ri, ci, v, out) != GT_OK) abort();
    free(ri), free(ci), free(v), free(dg), free(perm);
}
#endif
