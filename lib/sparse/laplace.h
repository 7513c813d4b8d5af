/* Laplacian test matrices (Dirichlet boundary, SPD, diagonal = number of
 * stencil neighbours... see gt_laplacian) and random matrices for tests and
 * benchmarks. */
#ifndef GT_SPARSE_LAPLACE_H
#define GT_SPARSE_LAPLACE_H

#include <stdbool.h>
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

/* The P1 finite-element Laplacian (stiffness matrix) of a structured
 * tetrahedral mesh of the unit cube (lib/sparse/tetmesh.c): (n+2)^3 nodes,
 * each cube split into the 6 Kuhn tetrahedra of its main diagonal, interior
 * nodes moved by up to jitter*h per coordinate (uniform; jitter < 0.25 keeps
 * every tetrahedron valid), Dirichlet boundary eliminated: n^3 rows, SPD,
 * 15 entries per interior row (the node and its 14 mesh neighbours). With
 * permute the unknowns are numbered in a random order (seeded), as mesh
 * generators' output often is. n = 74 gives 405,224 rows, ~6.0M nonzeros. */
gt_status gt_tetmesh_laplacian(int64_t n, double jitter, uint64_t seed, bool permute, gt_csr *out);

#ifdef __cplusplus
}
#endif
#endif
