/* Error checks for .cu files: every CUDA, cuBLAS, cuSOLVER and cuSPARSE call
 * goes through one of these, which turns a failure into a libcore status
 * (GT_ERR_GPU) with the call, the reason and file:line, and returns it. */
#ifndef GT_CU_CHECK_H
#define GT_CU_CHECK_H

#include <cuda_runtime.h>

#include "common/status.h"

/* GT_OK for success codes; otherwise a GT_ERR_GPU message naming the call. */
gt_status gt_cu_status_from(cudaError_t e, const char *call, const char *file, int line);
/* "<kind> error in <call>: <reason> (file:line)", or the out-of-memory
 * message when oom; GT_ERR_GPU */
gt_status gt_cu_fail(const char *kind, const char *reason, const char *call, const char *file, int line, bool oom);
gt_status gt_cublas_status_from(int e, const char *call, const char *file, int line);
gt_status gt_cusolver_status_from(int e, const char *call, const char *file, int line);
gt_status gt_cusparse_status_from(int e, const char *call, const char *file, int line);

#define GT_CU(call)                                                                  \
    do {                                                                             \
        cudaError_t gt_e_ = (call);                                                  \
        if (gt_e_ != cudaSuccess) return gt_cu_status_from(gt_e_, #call, __FILE__, __LINE__); \
    } while (0)

/* After a kernel launch: launch-configuration errors (asynchronous faults
 * surface at the next synchronizing call). */
#define GT_CU_LAUNCH(what) GT_CU(cudaGetLastError())

#define GT_CUBLAS(call)                                                              \
    do {                                                                             \
        int gt_e_ = (int)(call);                                                     \
        if (gt_e_ != 0) return gt_cublas_status_from(gt_e_, #call, __FILE__, __LINE__); \
    } while (0)
#define GT_CUSOLVER(call)                                                            \
    do {                                                                             \
        int gt_e_ = (int)(call);                                                     \
        if (gt_e_ != 0) return gt_cusolver_status_from(gt_e_, #call, __FILE__, __LINE__); \
    } while (0)
#define GT_CUSPARSE(call)                                                            \
    do {                                                                             \
        int gt_e_ = (int)(call);                                                     \
        if (gt_e_ != 0) return gt_cusparse_status_from(gt_e_, #call, __FILE__, __LINE__); \
    } while (0)

/* Blocks of `block` threads to cover n items (n may exceed 2^31 only through
 * grid-stride loops; callers pass the capped grid). */
static inline unsigned gt_grid(size_t n, unsigned block, unsigned max_grid = 1u << 30)
{
    size_t g = (n + block - 1) / block;
    if (g == 0) g = 1;
    return g > max_grid ? max_grid : (unsigned)g;
}

#endif
