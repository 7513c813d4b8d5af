/* Error checks for .cu files: every CUDA, cuBLAS, cuSOLVER and cuSPARSE call
 * goes through one of these, which turns a failure into a libcore status
 * (GT_ERR_GPU) with the call, the reason and file:line, and returns it.
 * GT_CU (the runtime's calls) is common/gpu_runtime.h's. */
#ifndef GT_CU_CHECK_H
#define GT_CU_CHECK_H

#include <cuda_runtime.h>

#include "common/gpu_runtime.h" /* GT_CU, GT_CHECK_CALL, gt_cu_fail */
#include "common/status.h"

gt_status gt_cublas_status_from(int e, const char *call, const char *file, int line);
gt_status gt_cusolver_status_from(int e, const char *call, const char *file, int line);
gt_status gt_cusparse_status_from(int e, const char *call, const char *file, int line);

/* After a kernel launch: launch-configuration errors (asynchronous faults
 * surface at the next synchronizing call). */
#define GT_CU_LAUNCH(what) GT_CU(cudaGetLastError())

#define GT_CUBLAS(call) GT_CHECK_CALL(gt_cublas_status_from, call)
#define GT_CUSOLVER(call) GT_CHECK_CALL(gt_cusolver_status_from, call)
#define GT_CUSPARSE(call) GT_CHECK_CALL(gt_cusparse_status_from, call)

/* Blocks of `block` threads to cover n items (n may exceed 2^31 only through
 * grid-stride loops; callers pass the capped grid). */
static inline unsigned gt_grid(size_t n, unsigned block, unsigned max_grid = 1u << 30)
{
    size_t g = (n + block - 1) / block;
    if (g == 0) g = 1;
    return g > max_grid ? max_grid : (unsigned)g;
}

#endif
