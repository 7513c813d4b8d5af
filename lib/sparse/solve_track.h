/* Internal to the CPU solvers (solvers.c, krylov_prec.c): the per-iteration
 * bookkeeping every method shares — history callback, NaN, convergence,
 * stagnation (no 1e-3 relative improvement of the best residual for `window`
 * iterations) and the iteration limit. */
#ifndef GT_SPARSE_SOLVE_TRACK_H
#define GT_SPARSE_SOLVE_TRACK_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "sparse/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gt_solve_track {
    double best;
    int64_t best_it, window;
} gt_solve_track;

/* Records iteration `it` with relative residual rel in res; true when the
 * loop should stop (res->outcome and res->msg set). */
bool gt_solve_step_done(const gt_solve_opts *o, gt_solve_result *res, gt_solve_track *t, int64_t it, double rel);

/* BiCGStab's omega = t's / t't counts as zero (a breakdown: the minimal-
 * residual step makes no progress, BiCGStab's way to stall) when
 * |t's| <= rel ||t|| ||s|| (aa, bb the squared norms), rel GT_BICG_TINY in
 * double, GT_BICG_TINY_F32 in single. A NaN is not tiny (the NaN check
 * reports it). rho = r0'r and r0'v get no such test, only an exact 0: their
 * cosines fall to 1e-17 in runs that then converge (2-D recirculating
 * convection-diffusion Pe 1000, 128^2 and 256^2: rho's cosine 3e-17 and
 * 2e-18, converged after 827 and 1828 iterations), where the smallest
 * cosine of t and s stayed above 1e-2 on every problem of problems.h tried. */
#define GT_BICG_TINY 1e-14
#define GT_BICG_TINY_F32 1e-6
static inline bool gt_bicg_tiny(double d, double aa, double bb, double rel)
{
    return fabs(d) <= rel * sqrt(aa) * sqrt(bb);
}

#ifdef __cplusplus
}
#endif
#endif
