/* CUDA side of lib/sparse: a sparse matrix on the device in one or more
 * formats (built from CSR by conversion kernels), SpMV kernels for every
 * format in single and double precision, and the GPU solvers. C API. */
#ifndef GT_SPARSE_CU_H
#define GT_SPARSE_CU_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "sparse/precond.h"
#include "sparse/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    GT_SPMV_COO = 0,     /* segmented reduction over nonzero tiles */
    GT_SPMV_CSR_SCALAR,  /* a thread per row */
    GT_SPMV_CSR_VECTOR,  /* a (sub)warp per row, width from the mean row length */
    GT_SPMV_CSR_MERGE,   /* merge-path load balancing (Merrill & Garland) */
    GT_SPMV_ELL,
    GT_SPMV_DIA,
    GT_SPMV_HYB,
    GT_SPMV_NKERNELS
} gt_spmv_kernel;

/* A device matrix. Arrays are device pointers; val arrays hold float (prec 4)
 * or double (prec 8). The CSR arrays are always present (the source). */
typedef struct gt_spd {
    int prec;
    int64_t nrows, ncols, nnz;
    int64_t *ptr;
    int32_t *col;
    void *val;
    int csr_vec_width; /* subwarp width for CSR vector (2..32) */
    /* COO: the whole matrix (COO) or the HYB remainder */
    int64_t cnnz;
    int32_t *crow, *ccol;
    void *cval;
    /* ELL: the whole matrix (ELL) or the HYB regular part */
    int64_t ewidth;
    int32_t *ecol;
    void *eval;
    int has_ell, has_coo, has_dia, hyb; /* hyb: ell+coo are the HYB split */
    /* DIA */
    int64_t ndiag;
    int32_t *doff;
    void *dval;
    /* merge-path scratch: carry rows and values, one per thread */
    int64_t merge_threads;
    int64_t *carry_row;
    void *carry_val;
} gt_spd;

/* Upload CSR (values rounded to float for prec 4). */
gt_status gt_cu_spd_upload(const gt_csr *a, int prec, gt_spd *d);
/* Build format f on the device from the device CSR. hyb_width: HYB's ELL
 * width (< 0: computed as Bell & Garland do, from device row lengths).
 * DIA fails with GT_ERR_RUNTIME when the padded size exceeds max_dia_bytes. */
gt_status gt_cu_spd_convert(gt_spd *d, gt_sp_format f, int64_t hyb_width, size_t max_dia_bytes);
void gt_cu_spd_free(gt_spd *d);
/* Copy a converted format back (values as double), for tests. */
gt_status gt_cu_spd_download(const gt_spd *d, gt_sp_format f, gt_coo *coo, gt_ell *ell, gt_dia *dia,
                             gt_hyb *hyb);

/* y = A x with kernel k (the format must have been converted). x, y device
 * vectors of d->prec. Asynchronous on stream. */
gt_status gt_cu_spmv(const gt_spd *d, gt_spmv_kernel k, const void *x, void *y, void *stream);

/* Device bytes a kernel reads and writes per SpMV (matrix + x + y). */
size_t gt_cu_spmv_bytes(const gt_spd *d, gt_spmv_kernel k);

/* Power iteration (see gt_power_estimate) with the CSR SpMV of a (and of
 * at = A^T, may be NULL) in a's precision; *est = the last Rayleigh quotient. */
gt_status gt_cu_power(const gt_spd *a, const gt_spd *at, int iters, double *est);

/* Solve on the GPU with d's format (DIA, ELL or CSR used by the fused Krylov
 * kernels; Gauss-Seidel uses CSR with the colouring). b, x (x0 on entry) are
 * host double vectors. */
gt_status gt_cu_solve(gt_spd *d, gt_sp_format f, const gt_csr *host, const double *b, double *x,
                      const gt_solve_opts *o, gt_solve_result *res);

/* A preconditioner for the GPU solvers (lib/sparse/precond.h): built from d
 * (prec 8, CSR present; host is the same matrix on the host, for set-up
 * steps that run there); p->on_gpu is true and p->apply takes device
 * vectors. kernels/sparse/precond.cu dispatches to the kinds. */
gt_status gt_cu_precond_create(const gt_spd *d, const gt_csr *host, gt_precond_kind k, const gt_precond_opts *o,
                               gt_precond *p);

/* The preconditioned solvers on the GPU (kernels/sparse/krylov_prec.cu, the
 * twin of gt_solve_prec_cpu in lib/sparse/krylov_prec.h): o->method pcg,
 * bicgstab, gmres, richardson or amg with the GPU preconditioner m; SpMV with
 * kernel kern (its format converted in d, prec 8). b, x (x0 on entry) are
 * host vectors. res->true_relres is left to the caller. */
gt_status gt_cu_solve_prec(const gt_spd *d, gt_spmv_kernel kern, const gt_precond *m, const double *b, double *x,
                           const gt_solve_opts *o, int restart, gt_solve_result *res);

#ifdef __cplusplus
}
#endif
#endif
