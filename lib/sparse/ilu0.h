/* Incomplete factorisations without fill, IC(0) and ILU(0), as
 * preconditioners (sparse/precond.h), and their pieces for tests and for the
 * GPU path (kernels/sparse/ilu0.cu):
 *
 *  - the checks and diagonal positions (gt_ilu0_check),
 *  - the factors on A's pattern (gt_ilu0_factor),
 *  - the level sets of the two triangular solves (gt_ilu0_levels): rows
 *    grouped so that every row depends only on rows of earlier levels. The
 *    factorisation has the same row dependencies as the lower solve (row i
 *    reads the finished rows k < i with a_ik in the pattern).
 *
 * Both factorisations are stored in one CSR `f` with A's pattern (columns
 * sorted within rows):
 *   ILU(0): strictly lower part = L (unit diagonal implied), diagonal and
 *           upper part = U, with (L U)_ij = a_ij on A's pattern.
 *   IC(0):  lower part with the diagonal = L, diagonal and upper part = L^T
 *           (A must be structurally symmetric; only its lower part is read),
 *           with (L L^T)_ij = a_ij on A's pattern.
 * So both apply z = U^-1 L^-1 r with one forward and one backward sweep over
 * f: y_i = (r_i - sum_{j<i} f_ij y_j) / ld_i (ld_i = 1 for ILU(0), f_ii for
 * IC(0)), z_i = (y_i - sum_{j>i} f_ij z_j) / f_ii. */
#ifndef GT_SPARSE_ILU0_H
#define GT_SPARSE_ILU0_H

#include <stdbool.h>
#include <stdint.h>

#include "common/status.h"
#include "sparse/precond.h"
#include "sparse/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rows grouped by level: the rows of level l are rows[ptr[l] .. ptr[l+1]),
 * ascending. */
typedef struct gt_levels {
    int64_t nlevels;
    int64_t *ptr; /* nlevels + 1 */
    int32_t *rows; /* n */
} gt_levels;

typedef struct gt_ilu0 {
    bool ic;
    int64_t n;
    gt_csr f;       /* the factors on A's pattern (see above) */
    int64_t *diag;  /* position of the diagonal entry of each row in f */
    gt_levels lower, upper;
    double ms;      /* factorisation time (host) */
} gt_ilu0;

/* The checks both paths make before factorising: A square, every entry
 * finite (GT_ERR_DATA naming the 1-based row and column), columns sorted and
 * a diagonal entry in every row; for IC(0) a structurally symmetric pattern.
 * diag (n entries, may be NULL) gets the diagonal positions. */
gt_status gt_ilu0_check(const gt_csr *a, bool ic, int64_t *diag);

/* Level sets of the lower (row i depends on the j < i of its row) or the
 * upper (on the j > i) triangular solve over the pattern of a. */
gt_status gt_ilu0_levels(const gt_csr *a, const int64_t *diag, bool upper, gt_levels *lv);
void gt_levels_free(gt_levels *lv);

/* Factorise (checks, factors, both level sets). Breakdown (zero ILU(0)
 * pivot, non-positive IC(0) pivot) is GT_ERR_DATA naming the row. */
gt_status gt_ilu0_factor(const gt_csr *a, bool ic, gt_ilu0 *out);
/* z = (L U)^-1 r (r and z may be the same array). */
void gt_ilu0_solve(const gt_ilu0 *f, const double *r, double *z);
void gt_ilu0_free(gt_ilu0 *f);

/* The breakdown message of both paths (row 0-based, pivot the value found). */
gt_status gt_ilu0_breakdown(bool ic, int64_t row, double pivot);

/* The preconditioner (CPU): p->apply runs gt_ilu0_solve on host vectors;
 * p->summary says what was built (levels of the two solves, nonzeros, time). */
gt_status gt_precond_ilu0_cpu(const gt_csr *a, bool ic, gt_precond *p);

#ifdef __cplusplus
}
#endif
#endif
