/* cuBLAS and cuSOLVER, opened on first use (lib/common/dynlib.h) rather than
 * linked: the entry points libcore calls, one table per library. Include
 * this instead of calling cublas* / cusolverDn* directly; the headers give
 * the types, the tables the functions:
 *     GT_TRY(gt_cusolver_load());
 *     GT_CUSOLVER(gt_cusolver.DnDgeqrf(h, ...));
 * Each load runs once per process (later calls return its status and
 * message again); safe from any thread. Absent library or entry point:
 * GT_ERR_GPU, "cuSOLVER not found (libcusolver.so.12: ...)". */
#ifndef GT_CU_LIBS_H
#define GT_CU_LIBS_H

#include <cublas_v2.h>
#include <cusolverDn.h>

#include "common/status.h"

struct gt_cublas_api {
    decltype(&cublasCreate_v2) Create;
    decltype(&cublasDestroy_v2) Destroy;
    decltype(&cublasDgemm_v2) Dgemm;
    decltype(&cublasGetStatusString) GetStatusString;
};

struct gt_cusolver_api {
    decltype(&cusolverDnCreate) DnCreate;
    decltype(&cusolverDnDestroy) DnDestroy;
    decltype(&cusolverDnCreateParams) DnCreateParams;
    decltype(&cusolverDnDestroyParams) DnDestroyParams;
    decltype(&cusolverDnDgeqrf_bufferSize) DnDgeqrf_bufferSize;
    decltype(&cusolverDnDgeqrf) DnDgeqrf;
    decltype(&cusolverDnDormqr_bufferSize) DnDormqr_bufferSize;
    decltype(&cusolverDnDormqr) DnDormqr;
    decltype(&cusolverDnXpotrf_bufferSize) DnXpotrf_bufferSize;
    decltype(&cusolverDnXpotrf) DnXpotrf;
    decltype(&cusolverDnXpotrs) DnXpotrs;
    decltype(&cusolverDnXsyevd_bufferSize) DnXsyevd_bufferSize;
    decltype(&cusolverDnXsyevd) DnXsyevd;
};

extern gt_cublas_api gt_cublas;     /* valid after gt_cublas_load() == GT_OK */
extern gt_cusolver_api gt_cusolver; /* valid after gt_cusolver_load() == GT_OK */

gt_status gt_cublas_load(void);
gt_status gt_cusolver_load(void);
/* Whether gt_cublas_load has succeeded (for status messages). */
bool gt_cublas_loaded(void);

#endif
