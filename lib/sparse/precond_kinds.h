/* Internal to the preconditioner framework: the set-up of each kind (called
 * by gt_precond_create_cpu / gt_cu_precond_create) and the shared helpers. */
#ifndef GT_SPARSE_PRECOND_KINDS_H
#define GT_SPARSE_PRECOND_KINDS_H

#include "sparse/precond.h"

#ifdef __cplusplus
extern "C" {
#endif

/* memset, then kind, n, on_gpu, complexity 1, levels 1 */
void gt_precond_init_fields(gt_precond *p, gt_precond_kind k, int64_t n, bool on_gpu);
/* GT_ERR_USAGE: "the <kind> preconditioner is not available <where>in this build" */
gt_status gt_precond_unavailable(gt_precond_kind k, const char *where);

/* The inverse diagonal of a: GT_ERR_DATA naming the 1-based row for a zero,
 * missing or non-finite diagonal. dinv: n doubles. */
gt_status gt_precond_inv_diag(const gt_csr *a, double *dinv);
/* z = D^-1 r on the host */
gt_status gt_precond_jacobi_cpu(const gt_csr *a, gt_precond *p);

#ifdef __cplusplus
}
#endif
#endif
