/* Laplacian test matrices (Dirichlet boundary, SPD, diagonal = number of
 * stencil neighbours... see gt_laplacian) and random matrices for tests and
 * benchmarks. */
#ifndef GT_SPARSE_LAPLACE_H
#define GT_SPARSE_LAPLACE_H

#include <stdint.h>

#include "sparse/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stencil matrices on an nx x ny x nz grid (ny = nz = 1 for 1-D etc.):
 * points = 3 (1-D), 5 or 9 (2-D), 7 or 27 (3-D). Off-diagonals are -1 for
 * each neighbour inside the grid, the diagonal is the stencil's full
 * neighbour count (so the matrix is SPD with Dirichlet boundary). */
gt_status gt_laplacian(int points, int64_t nx, int64_t ny, int64_t nz, gt_csr *out);

#ifdef __cplusplus
}
#endif
#endif
