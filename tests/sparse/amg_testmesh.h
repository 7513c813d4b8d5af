/* Unstructured SPD test matrices for the AMG tests and benchmark
 * (header-only): the P1 finite-element Laplacian of the unit cube cut into
 * nc^3 cells of 6 tetrahedra (Kuhn), interior nodes jittered, Dirichlet
 * boundary: (nc-1)^3 rows, ~15 entries a row, some positive off-diagonals
 * (obtuse tetrahedra); and a random weighted graph. */
#ifndef AMG_TESTMESH_H
#define AMG_TESTMESH_H

#include <math.h>
#include <stdlib.h>

#include "sparse/laplace.h"
#include "sparse/sparse.h"
#include "sparse_testutil.h"

/* P1 Laplacian on the jittered Kuhn tetrahedral mesh of the unit cube (N
   cells a side, interior nodes only, in lattice order): the library's
   generator (laplace.h), as gen_tetmesh and scripts/bench/sparsesolve use it. */
static inline gt_status gt_test_tet_laplacian(int64_t nc, gt_csr *out)
{
    return gt_tetmesh_laplacian(nc - 1, 0.2, 1, false, out);
}

/* An unstructured SPD matrix: a random symmetric graph whose edges have
   weights in [0.1, 1] and sometimes a small positive sign (so that theta
   matters), diagonal = sum of |off-diagonals| + 0.01. */
static inline void gt_test_graph_spd(gt_rng *r, int64_t n, int deg, gt_csr *out)
{
    int64_t cap = n * (int64_t)deg * 2 + n;
    int32_t *ri = malloc((size_t)cap * 4), *ci = malloc((size_t)cap * 4);
    double *v = malloc((size_t)cap * 8), *d = calloc((size_t)n, 8);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        for (int e = 0; e < deg / 2; e++) {
            /* mostly local neighbours (like a mesh) and a few far ones */
            int64_t j = gt_rng_uniform(r) < 0.9 ? i + 1 + (int64_t)(gt_rng_u64(r) % 20) : (int64_t)(gt_rng_u64(r) % (uint64_t)n);
            if (j >= n || j == i) continue;
            double w = gt_rng_range(r, 0.1, 1.0);
            if (gt_rng_uniform(r) < 0.1) w = -0.05 * w;
            ri[k] = (int32_t)i, ci[k] = (int32_t)j, v[k++] = -w;
            ri[k] = (int32_t)j, ci[k] = (int32_t)i, v[k++] = -w;
            d[i] += fabs(w), d[j] += fabs(w);
        }
    for (int64_t i = 0; i < n; i++) ri[k] = (int32_t)i, ci[k] = (int32_t)i, v[k++] = d[i] + 0.01;
    if (gt_csr_from_triplets(n, n, k, ri, ci, v, out) != GT_OK) abort();
    free(ri), free(ci), free(v), free(d);
}

#endif
