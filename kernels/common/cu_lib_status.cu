// Status conversions of cuBLAS, cuSOLVER and cuSPARSE behind cu_check.h.
// The libraries are opened on first use (cu_libs.h), so these name a status
// through the library only when it is loaded, by number otherwise; libcore
// never calls cuSPARSE, whose codes are given by number.
#include <cstdio>

#include "kernels/common/cu_check.h"
#include "kernels/common/cu_libs.h"

gt_status gt_cublas_status_from(int e, const char *call, const char *file, int line)
{
    if (e == 0) return GT_OK;
    char buf[32];
    snprintf(buf, sizeof buf, "status %d", e);
    const char *reason = gt_cublas_loaded() ? gt_cublas.GetStatusString((cublasStatus_t)e) : buf;
    return gt_cu_fail("cuBLAS", reason, call, file, line, e == CUBLAS_STATUS_ALLOC_FAILED);
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
    char buf[32];
    snprintf(buf, sizeof buf, "status %d", e);
    return gt_cu_fail("cuSPARSE", buf, call, file, line, e == 3 /* CUSPARSE_STATUS_ALLOC_FAILED */);
}
