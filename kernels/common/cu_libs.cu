// The cuBLAS and cuSOLVER tables of cu_libs.h, filled by dlopen/dlsym on
// first use. The sonames are those of the toolkit libcore was compiled
// with (the major version its headers give), then the unversioned name.
#include <pthread.h>

#include <cstdio>

#include "common/dynlib.h"
#include "common/trace.h"
#include "kernels/common/cu_libs.h"

gt_cublas_api gt_cublas;
gt_cusolver_api gt_cusolver;

#define GT_STR_(x) #x
#define GT_STR(x) GT_STR_(x)
#define SYM(tbl, field, name) {name, (void **)&tbl.field}

namespace {
struct lib_state {
    pthread_once_t once;
    gt_status st;
    char msg[1024];
};
lib_state blas_state = {PTHREAD_ONCE_INIT, GT_OK, ""};
lib_state solver_state = {PTHREAD_ONCE_INIT, GT_OK, ""};

void finish(lib_state *s, gt_status st, const char *what)
{
    s->st = st;
    if (st != GT_OK) snprintf(s->msg, sizeof s->msg, "%s", gt_errmsg());
    else if (gt_trace_on()) {
        char line[64];
        snprintf(line, sizeof line, "libs loaded: %s", what);
        gt_trace(line);
    }
}

void load_blas(void)
{
    static const char *const names[] = {"libcublas.so." GT_STR(CUBLAS_VER_MAJOR), "libcublas.so", nullptr};
    gt_cublas_api t{};
    const gt_dynsym syms[] = {
        SYM(t, Create, "cublasCreate_v2"),
        SYM(t, Destroy, "cublasDestroy_v2"),
        SYM(t, Dgemm, "cublasDgemm_v2"),
        SYM(t, GetStatusString, "cublasGetStatusString"),
    };
    gt_status st = gt_dynlib_load("cuBLAS", names, syms, sizeof syms / sizeof syms[0], nullptr);
    if (st == GT_OK) gt_cublas = t;
    finish(&blas_state, st, "cuBLAS");
}

void load_solver(void)
{
    static const char *const names[] = {"libcusolver.so." GT_STR(CUSOLVER_VER_MAJOR), "libcusolver.so", nullptr};
    gt_cusolver_api t{};
    const gt_dynsym syms[] = {
        SYM(t, DnCreate, "cusolverDnCreate"),
        SYM(t, DnDestroy, "cusolverDnDestroy"),
        SYM(t, DnCreateParams, "cusolverDnCreateParams"),
        SYM(t, DnDestroyParams, "cusolverDnDestroyParams"),
        SYM(t, DnDgeqrf_bufferSize, "cusolverDnDgeqrf_bufferSize"),
        SYM(t, DnDgeqrf, "cusolverDnDgeqrf"),
        SYM(t, DnDormqr_bufferSize, "cusolverDnDormqr_bufferSize"),
        SYM(t, DnDormqr, "cusolverDnDormqr"),
        SYM(t, DnXpotrf_bufferSize, "cusolverDnXpotrf_bufferSize"),
        SYM(t, DnXpotrf, "cusolverDnXpotrf"),
        SYM(t, DnXpotrs, "cusolverDnXpotrs"),
        SYM(t, DnXsyevd_bufferSize, "cusolverDnXsyevd_bufferSize"),
        SYM(t, DnXsyevd, "cusolverDnXsyevd"),
    };
    gt_status st = gt_dynlib_load("cuSOLVER", names, syms, sizeof syms / sizeof syms[0], nullptr);
    if (st == GT_OK) gt_cusolver = t;
    finish(&solver_state, st, "cuSOLVER");
}

gt_status result(const lib_state *s)
{
    return s->st == GT_OK ? GT_OK : gt_fail(s->st, "%s", s->msg);
}
} // namespace

gt_status gt_cublas_load(void)
{
    pthread_once(&blas_state.once, load_blas);
    return result(&blas_state);
}

gt_status gt_cusolver_load(void)
{
    pthread_once(&solver_state.once, load_solver);
    return result(&solver_state);
}

bool gt_cublas_loaded(void)
{
    return gt_cublas.Create != nullptr;
}
