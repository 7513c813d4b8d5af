/* GPU dispatch of lib/sparse: SpMV with each kernel, the GPU conversions and
 * the GPU solvers, from host data. Without CUDA every call returns
 * GT_ERR_GPU. */
#ifndef GT_SPARSE_GPU_H
#define GT_SPARSE_GPU_H

#include <stddef.h>

#include "sparse/precond.h"
#include "sparse/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Mirrors gt_spmv_kernel in kernels/sparse/sparse_cu.h. */
typedef enum {
    GT_SPMV_K_COO = 0,
    GT_SPMV_K_CSR_SCALAR,
    GT_SPMV_K_CSR_VECTOR,
    GT_SPMV_K_CSR_MERGE,
    GT_SPMV_K_ELL,
    GT_SPMV_K_DIA,
    GT_SPMV_K_HYB,
    GT_SPMV_K_N
} gt_spmv_kind;
const char *gt_spmv_kind_name(gt_spmv_kind k); /* "coo", "csr-scalar", ... */
gt_sp_format gt_spmv_kind_format(gt_spmv_kind k);

/* y = A x on the GPU (upload, conversion on the GPU, SpMV, download).
 * prec 4: A and x rounded to float, y from float. */
gt_status gt_spmv_gpu(const gt_csr *a, gt_spmv_kind k, int prec, const double *x, double *y);

typedef struct gt_spmv_bench {
    double ms;       /* mean time per SpMV (CUDA events) */
    double convert_ms; /* the GPU conversion from CSR */
    size_t bytes;    /* bytes moved per SpMV (matrix + x + y) */
    double gbs, gflops;
} gt_spmv_bench;
/* reps SpMVs after a warm-up. GT_ERR_RUNTIME when the format does not fit. */
gt_status gt_spmv_gpu_bench(const gt_csr *a, gt_spmv_kind k, int prec, int reps, gt_spmv_bench *out);

/* Convert on the GPU and download the arrays (for tests). Fill the output
 * of format f (for HYB, width < 0 = Bell & Garland). */
gt_status gt_sp_convert_gpu(const gt_csr *a, gt_sp_format f, int64_t hyb_width, gt_coo *coo, gt_ell *ell,
                            gt_dia *dia, gt_hyb *hyb);

/* Solve on the GPU in format f (DIA/ELL/CSR; COO and HYB run as CSR),
 * prec 4 or 8. Same contract as gt_solve_cpu (true_relres recomputed on the
 * host in double). solve_ms (may be NULL) gets the time of the iterations. */
gt_status gt_solve_gpu(const gt_csr *a, gt_sp_format f, int prec, const double *b, double *x,
                       const gt_solve_opts *o, gt_solve_result *res, double *solve_ms);

/* Solve with a preconditioner on the GPU (the methods of krylov_prec.h, in
 * double): the preconditioner of kind pk built on the GPU from A
 * (gt_cu_precond_create), then the solve with SpMV in format f (DIA, ELL or
 * CSR; the others run as CSR). Same contract as gt_solve_prec_cpu (true
 * residual recomputed on the host in double). info (may be NULL) gets the
 * preconditioner's description: kind, setup_ms, levels, complexity, summary
 * (ctx, apply and destroy cleared). solve_ms: the iterations' wall time. */
gt_status gt_solve_gpu_prec(const gt_csr *a, gt_sp_format f, gt_precond_kind pk, const gt_precond_opts *po,
                            const double *b, double *x, const gt_solve_opts *o, int restart, gt_solve_result *res,
                            gt_precond *info, double *solve_ms);

#ifdef __cplusplus
}
#endif
#endif
