/* Test problems beyond the Laplacians (laplace.h), for the preconditioned
 * solvers' tests and benchmarks: nonsymmetric 3-D convection-diffusion,
 * rotated anisotropic diffusion, and a singular pure-Neumann Laplacian.
 * All on the unit square/cube with grid spacing h = 1/(n+1), scaled by h^2. */
#ifndef GT_SPARSE_PROBLEMS_H
#define GT_SPARSE_PROBLEMS_H

#include <stdint.h>

#include "sparse/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* -lap u + Pe (w . grad u) = f on an n^3 grid, Dirichlet boundary, velocity
 * w = (1, 1/2, 1/4) / |(1, 1/2, 1/4)|, first-order upwind convection (an
 * M-matrix, weakly diagonally dominant, nonsymmetric for Pe > 0). The cell
 * Peclet number is Pe h / 2. */
gt_status gt_convdiff3d(int64_t n, double peclet, gt_csr *out);

/* The velocity fields of gt_convdiff, each with max |w| = 1. */
typedef enum {
    GT_FLOW_UNIFORM,  /* w = (1, 1/2, 1/4) / |.| (2-D: (1, 1/2) / |.|), as gt_convdiff3d */
    GT_FLOW_RECIRC,   /* the classical recirculating flow (Elman, Silvester and Wathen's
                         IFISS example 3.1.4, halved): with X = 2x - 1, Y = 2y - 1,
                         w = (Y (1 - X^2), -X (1 - Y^2), 0), closed streamlines
                         round the centre, w = 0 on x = 0, 1 and y = 0, 1 */
    GT_FLOW_DIAGONAL  /* w = (1, 1, 1) / sqrt 3 (2-D: (1, 1) / sqrt 2), along the
                         cube's diagonal: every axis convects equally, the longest
                         streamlines; at Pe 1000 unpreconditioned BiCGStab's residual
                         grows by ~1e11 on the way and its true residual stalls
                         (1e-5 to 1e-3 on 64^3 to 96^3) */
} gt_flow;

/* -lap u + Pe (w . grad u) = f on an n^dim grid (dim 2 or 3) of the unit
 * square or cube, Dirichlet boundary, first-order upwind convection (an
 * M-matrix for any w), scaled by h^2. */
gt_status gt_convdiff(int dim, int64_t n, double peclet, gt_flow flow, gt_csr *out);

/* -div(K grad u) on an n x n grid, Dirichlet boundary, K = R(theta)
 * diag(1, eps) R(theta)^T (theta in degrees), the 9-point stencil of the
 * centred differences (u_xy from the four diagonal neighbours). Symmetric;
 * hard for point smoothers when eps is small and theta is not a multiple
 * of 45 degrees. */
gt_status gt_rotated_aniso2d(int64_t n, double eps, double theta_deg, gt_csr *out);

/* The 5-point Laplacian on an nx x ny grid with a pure Neumann boundary:
 * diagonal = number of neighbours, so every row sums to 0 and A is singular
 * (the constants are its null space); A x = b is consistent only when b sums
 * to 0. */
gt_status gt_neumann_laplacian2d(int64_t nx, int64_t ny, gt_csr *out);

#ifdef __cplusplus
}
#endif
#endif
