/* Internal to kernels/sparse: the GPU set-up of each preconditioner kind,
 * called by gt_cu_precond_create (precond.cu). C API. */
#ifndef GT_KERNELS_SPARSE_PRECOND_CU_H
#define GT_KERNELS_SPARSE_PRECOND_CU_H

#include "sparse/precond.h"
#include "sparse/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* z = D^-1 r with D^-1 from the host matrix (GT_ERR_DATA for a zero diagonal) */
gt_status gt_cu_precond_jacobi(const gt_csr *host, gt_precond *p);

#ifdef __cplusplus
}
#endif
#endif
