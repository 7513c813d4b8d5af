/* The SpMV benchmark job of sparsesolve (--spmv-bench), for any C program
 * (see sparse.h): time N products y = A x with every GPU kernel, or with the
 * CPU reference of every format, and print one table row per kernel. */
#include <stdio.h>
#include <stdlib.h>

#include "common/log.h"
#include "common/timer.h"
#include "sparse/reorder.h"
#include "sparse/sparse.h"
#include "sparse/sparse_gpu.h"

/* One GPU kernel's row. GT_ERR_GPU stops the benchmark; any other failure
 * (the format does not fit) is printed as the row. */
static gt_status spmv_rows(const gt_sparse_matrix *m, const gt_csr *a, const gt_sparse_job *job,
                           gt_device_kind dev, int reps, FILE *out);

static gt_status gpu_row(const gt_csr *a, gt_spmv_kind kind, int prec, int reps, FILE *out)
{
    gt_spmv_bench b;
    gt_status s = gt_spmv_gpu_bench(a, kind, prec, reps, &b);
    if (s == GT_ERR_GPU) return s;
    if (s != GT_OK) {
        fprintf(out, "%-11s %s\n", gt_spmv_kind_name(kind), gt_errmsg());
        return GT_OK;
    }
    fprintf(out, "%-11s %10.4f %12zu %10.1f %10.2f %11.3f\n", gt_spmv_kind_name(kind), b.ms, b.bytes, b.gbs,
            b.gflops, b.convert_ms);
    return GT_OK;
}

/* The CPU reference of the kernel's format: converted from CSR, then timed
 * (double). A conversion that fails is printed as the row. */
static gt_status cpu_row(const gt_sparse_matrix *m, const gt_csr *a, gt_spmv_kind kind, int reps, FILE *out)
{
    gt_sp_format f = gt_spmv_kind_format(kind);
    double *x = malloc((size_t)(a->ncols + 1) * 8), *y = malloc((size_t)(a->nrows + 1) * 8);
    if (!x || !y) {
        free(x), free(y);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    for (int64_t j = 0; j < a->ncols; j++) x[j] = 1.0;
    gt_coo c = {0};
    gt_ell e = {0};
    gt_dia d = {0};
    gt_hyb h = {0};
    gt_status s = GT_OK;
    if (f == GT_SP_COO) s = gt_csr_to_coo(a, &c);
    if (f == GT_SP_ELL) s = gt_csr_to_ell(a, &e);
    if (f == GT_SP_DIA) s = gt_csr_to_dia(a, m->info.bytes[GT_SP_CSR][1] * 20 + (64u << 20), &d);
    if (f == GT_SP_HYB) s = gt_csr_to_hyb(a, -1, &h);
    if (s != GT_OK) {
        fprintf(out, "%-11s %s\n", gt_spmv_kind_name(kind), gt_errmsg());
        free(x), free(y);
        return GT_OK;
    }
    double t0 = gt_now_ms();
    for (int r = 0; r < reps; r++) {
        if (f == GT_SP_COO) gt_coo_spmv(&c, x, y);
        else if (f == GT_SP_ELL) gt_ell_spmv(&e, x, y);
        else if (f == GT_SP_DIA) gt_dia_spmv(&d, x, y);
        else if (f == GT_SP_HYB) gt_hyb_spmv(&h, x, y);
        else gt_csr_spmv(a, x, y);
    }
    double ms = (gt_now_ms() - t0) / reps;
    size_t bytes = m->info.bytes[f][1] + (size_t)(a->nrows + a->ncols) * 8;
    fprintf(out, "%-11s %10.4f %12zu %10.1f %10.2f %11s\n", gt_sp_format_name(f), ms, bytes, bytes / (ms * 1e6),
            2.0 * (double)a->nnz / (ms * 1e6), "-");
    gt_coo_free(&c), gt_ell_free(&e), gt_dia_free(&d), gt_hyb_free(&h);
    free(x), free(y);
    return GT_OK;
}

gt_status gt_sparse_spmv_bench(const gt_sparse_matrix *m, const gt_sparse_job *job, int reps, FILE *out)
{
    const gt_csr *a = &m->a;
    gt_device_kind dev;
    GT_TRY(gt_device_choose(job->device, job->gpu, &dev));
    /* --reorder: the kernels run on P A P^T (the matrix the solver would run on) */
    int32_t *perm = NULL;
    gt_csr pa = {0};
    char why[512];
    double t0 = gt_now_ms();
    char fwhy[256];
    int kind = job->reorder;
    if (kind == GT_REORDER_AUTO && gt_sp_choose_format(&m->info, fwhy, sizeof fwhy) == GT_SP_DIA)
        kind = GT_REORDER_NONE; /* a stencil: as the solve job, keep the DIA order */
    GT_TRY(gt_reorder_apply(a, m->info.symmetric, kind, &perm, &pa, why, sizeof why));
    if (perm) {
        fprintf(out, "%s (%.1f ms on the CPU)\n", why, gt_now_ms() - t0);
        a = &pa;
    } else {
        gt_info("%s", why);
    }
    gt_status s = spmv_rows(m, a, job, dev, reps, out);
    gt_csr_free(&pa);
    free(perm);
    return s;
}

static gt_status spmv_rows(const gt_sparse_matrix *m, const gt_csr *a, const gt_sparse_job *job,
                           gt_device_kind dev, int reps, FILE *out)
{
    int prec = job->prec;
    fprintf(out, "SpMV benchmark: %lld x %lld, nnz %lld, %s precision, %d repetitions (%s)\n", (long long)a->nrows,
            (long long)a->ncols, (long long)a->nnz, prec == 8 ? "double" : "single", reps,
            dev == GT_DEVICE_CUDA ? "cuda" : "cpu");
    fprintf(out, "%-11s %10s %12s %10s %10s %11s\n", "kernel", "ms", "bytes", "GB/s", "GFLOP/s", "convert ms");
    for (int k = 0; k < GT_SPMV_K_N; k++) {
        gt_spmv_kind kind = (gt_spmv_kind)k;
        if (dev == GT_DEVICE_CUDA) {
            GT_TRY(gpu_row(a, kind, prec, reps, out));
        } else if (kind != GT_SPMV_K_CSR_VECTOR && kind != GT_SPMV_K_CSR_MERGE) {
            /* CPU reference: one kernel per format */
            GT_TRY(cpu_row(m, a, kind, reps, out));
        }
    }
    return GT_OK;
}
