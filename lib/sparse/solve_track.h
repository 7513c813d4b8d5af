/* Internal to the CPU solvers (solvers.c, krylov_prec.c): the per-iteration
 * bookkeeping every method shares — history callback, NaN, convergence,
 * stagnation (no 1e-3 relative improvement of the best residual for `window`
 * iterations) and the iteration limit. */
#ifndef GT_SPARSE_SOLVE_TRACK_H
#define GT_SPARSE_SOLVE_TRACK_H

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

#ifdef __cplusplus
}
#endif
#endif
