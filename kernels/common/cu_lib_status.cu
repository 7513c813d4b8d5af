// Status conversions of cuBLAS, cuSOLVER and cuSPARSE behind cu_check.h.
#include <cublas_v2.h>
#include <cstdio>
#include <cusolverDn.h>
#include <cusparse.h>

#include "kernels/common/cu_check.h"

gt_status gt_cublas_status_from(int e, const char *call, const char *file, int line)
{
    if (e == 0) return GT_OK;
    return gt_cu_fail("cuBLAS", cublasGetStatusString((cublasStatus_t)e), call, file, line,
                      e == CUBLAS_STATUS_ALLOC_FAILED);
}

gt_status gt_cusolver_status_from(int e, const char *call, const char *file, int line)
{
    if (e == 0) return GT_OK;
    char buf[32];
    snprintf(buf, sizeof buf, "status %d", e);
    return gt_cu_fail("cuSOLVER", buf, call, file, line, e == CUSOLVER_STATUS_ALLOC_FAILED);
}

gt_status gt_cusparse_status_from(int e, const char *call, const char *file, int line)
{
    if (e == 0) return GT_OK;
    return gt_cu_fail("cuSPARSE", cusparseGetErrorString((cusparseStatus_t)e), call, file, line,
                      e == CUSPARSE_STATUS_ALLOC_FAILED);
}
