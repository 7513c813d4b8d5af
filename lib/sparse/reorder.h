/* Reordering for gather locality (lib/sparse/reorder.c): reverse
 * Cuthill-McKee, the symmetric permutation P A P^T, vectors to and from the
 * new order, and the cheap locality measure --reorder auto decides by.
 * Convention: perm[k] = the old index of new row/column k. */
#ifndef GT_SPARSE_REORDER_H
#define GT_SPARSE_REORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sparse/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { GT_REORDER_AUTO = 0, GT_REORDER_NONE, GT_REORDER_RCM } gt_reorder_kind;

/* How far the x-gather of a row reaches: bandwidth max |i - j|, mean |i - j|
 * over the entries, and near = the fraction of entries with |i - j| within
 * GT_REORDER_WINDOW columns (32 KB of x in double), i.e. reads that stay in
 * a small cache window around the row's own part of x. */
#define GT_REORDER_WINDOW 4096
typedef struct gt_locality {
    int64_t bandwidth;
    double mean_dist;
    double near;
} gt_locality;
void gt_sp_locality(const gt_csr *a, gt_locality *out);

/* --reorder auto: RCM pays when x does not fit in a cache anyway (more than
 * 1 MB of x in double) and fewer than half the entries are near. `why` gets
 * one clause. */
bool gt_reorder_pays(const gt_csr *a, const gt_locality *l, char *why, size_t why_len);

/* Reverse Cuthill-McKee of the graph of A + A^T (A's own pattern when
 * symmetric is true; A square): per connected component a breadth-first
 * search from a pseudo-peripheral node (George & Liu: repeated searches
 * from a node of least degree in the last level while the depth grows),
 * neighbours visited in order of increasing degree; the whole order
 * reversed. perm has nrows entries. */
gt_status gt_rcm(const gt_csr *a, bool symmetric, int32_t *perm);

/* B = P A P^T: B[k][l] = A[perm[k]][perm[l]], rows sorted by column. */
gt_status gt_csr_permute(const gt_csr *a, const int32_t *perm, gt_csr *out);
/* out[k] = v[perm[k]] (to the new order); out[perm[k]] = v[k] (back). */
void gt_vec_permute(const double *v, const int32_t *perm, int64_t n, double *out);
void gt_vec_unpermute(const double *v, const int32_t *perm, int64_t n, double *out);
/* Whether perm is a permutation of 0..n-1. */
bool gt_is_permutation(const int32_t *perm, int64_t n);

/* What the jobs do for --reorder (kind a gt_reorder_kind): decide (auto:
 * gt_reorder_pays), then RCM and P A P^T into *pa, with *perm allocated
 * (free()); when not reordered *perm is NULL and *pa untouched. `why` gets
 * one sentence for -v: what was chosen and why, the locality before and
 * after. An RCM order that does not raise the near fraction is dropped
 * under auto. */
gt_status gt_reorder_apply(const gt_csr *a, bool symmetric, int kind, int32_t **perm, gt_csr *pa, char *why,
                           size_t why_len);

#ifdef __cplusplus
}
#endif
#endif
