/* IC(0) / ILU(0) preconditioners on the GPU (sparse/precond.h, factors laid
 * out as in sparse/ilu0.h, on the pattern of the device matrix d, whose ptr
 * and col arrays the preconditioner borrows: d must outlive it).
 *
 * Factorisation: on the GPU, a thread per row with the same operations in
 * the same order as the CPU, without contraction into fused multiply-adds
 * (row i reads the finished rows k < i of its pattern), either sync-free
 * (rows in order from an atomic counter, waiting on per-row ready flags: no
 * level analysis) or one launch per level of the lower level sets; or on the
 * host (gt_ilu0_factor) followed by an upload.
 * Triangular solves: sync-free (Liu et al. 2016: a subwarp per row takes
 * the rows in dependency order from an atomic counter and spins on per-row
 * ready flags; two launches per apply, whatever the number of levels) or
 * level-scheduled (one launch per level of each solve, captured once into a
 * CUDA graph). The defaults are the
 * sync-free GPU factorisation and the sync-free solves. */
#ifndef GT_KERNELS_SPARSE_ILU0_CU_H
#define GT_KERNELS_SPARSE_ILU0_CU_H

#include <stdbool.h>

#include "common/status.h"
#include "kernels/sparse/sparse_cu.h"
#include "sparse/precond.h"
#include "sparse/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { GT_ILU_SOLVE_SYNCFREE = 0, GT_ILU_SOLVE_LEVELS } gt_ilu_solve_scheme;
typedef enum {
    GT_ILU_FACTOR_GPU_SYNCFREE = 0, /* a thread per row, rows in order from an atomic counter, ready flags */
    GT_ILU_FACTOR_GPU_LEVELS,       /* one launch per level of the lower level sets (computed on the host) */
    GT_ILU_FACTOR_HOST              /* gt_ilu0_factor, then an upload */
} gt_ilu_factor_where;

typedef struct gt_cu_ilu0_opts {
    gt_ilu_solve_scheme solve;
    gt_ilu_factor_where factor;
} gt_cu_ilu0_opts;

/* d: prec 8 with CSR; host: the same matrix on the host (checks, level sets,
 * the host factorisation). Bad input as gt_ilu0_factor (GT_ERR_DATA). */
gt_status gt_cu_ilu0_create(const gt_spd *d, const gt_csr *host, bool ic, gt_precond *p);
gt_status gt_cu_ilu0_create_ex(const gt_spd *d, const gt_csr *host, bool ic, const gt_cu_ilu0_opts *o,
                               gt_precond *p);

/* For tests: the factor values (nnz doubles, the layout of gt_ilu0.f.val). */
gt_status gt_cu_ilu0_download(const gt_precond *p, double *val);
/* For tests: p->apply captured into a CUDA graph (as the solvers capture
 * their iterations), the graph launched twice and waited for. */
gt_status gt_cu_ilu0_apply_captured(const gt_precond *p, const double *r, double *z);

#ifdef __cplusplus
}
#endif
#endif
