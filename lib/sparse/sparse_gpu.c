/* GPU dispatch for lib/sparse (kernels/sparse under GT_HAVE_CUDA). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gt_config.h"
#include "common/timer.h"
#include "common/trace.h"
#include "sparse/krylov_prec.h"
#include "sparse/sparse_gpu.h"
#if GT_HAVE_CUDA
#include "common/gpu_runtime.h"
#include "kernels/sparse/sparse_cu.h"
#endif

static const char *const kind_names[GT_SPMV_K_N] = {"coo", "csr-scalar", "csr-vector", "csr-merge",
                                                     "ell", "dia", "hyb"};
const char *gt_spmv_kind_name(gt_spmv_kind k)
{
    return (k >= 0 && k < GT_SPMV_K_N) ? kind_names[k] : "?";
}
gt_sp_format gt_spmv_kind_format(gt_spmv_kind k)
{
    switch (k) {
    case GT_SPMV_K_COO: return GT_SP_COO;
    case GT_SPMV_K_ELL: return GT_SP_ELL;
    case GT_SPMV_K_DIA: return GT_SP_DIA;
    case GT_SPMV_K_HYB: return GT_SP_HYB;
    default: return GT_SP_CSR;
    }
}

#if GT_HAVE_CUDA
/* DIA may take at most 20x the CSR bytes (and fit the GPU). */
static size_t dia_limit(const gt_csr *a, int prec)
{
    size_t csr = ((size_t)a->nrows + 1) * 8 + (size_t)a->nnz * (4 + (size_t)prec);
    size_t freeb = 0, total = 0;
    size_t lim = csr * 20 + (64u << 20);
    if (gt_cu_mem_info(&freeb, &total) == GT_OK && freeb / 2 < lim) lim = freeb / 2;
    return lim;
}

static gt_status vec_up(const double *x, int64_t n, int prec, void **d)
{
    size_t bytes = (size_t)n * (size_t)prec;
    GT_TRY(gt_cu_malloc(d, bytes ? bytes : 8, "vector"));
    gt_status s = GT_OK;
    if (prec == 8) s = gt_cu_memcpy_h2d(*d, x, bytes, NULL);
    else if (n) {
        float *t = malloc(bytes);
        if (!t) s = gt_fail(GT_ERR_RUNTIME, "out of memory");
        else {
            for (int64_t i = 0; i < n; i++) t[i] = (float)x[i];
            s = gt_cu_memcpy_h2d(*d, t, bytes, NULL);
            free(t);
        }
    }
    if (s != GT_OK) gt_cu_free(*d), *d = NULL;
    return s;
}

static gt_status vec_down(const void *d, int64_t n, int prec, double *y)
{
    size_t bytes = (size_t)n * (size_t)prec;
    if (!n) return GT_OK;
    if (prec == 8) return gt_cu_memcpy_d2h(y, d, bytes, NULL);
    float *t = malloc(bytes);
    if (!t) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    gt_status s = gt_cu_memcpy_d2h(t, d, bytes, NULL);
    for (int64_t i = 0; s == GT_OK && i < n; i++) y[i] = t[i];
    free(t);
    return s;
}

static gt_status prepare(const gt_csr *a, gt_spmv_kind k, int prec, gt_spd *d)
{
    GT_TRY(gt_cu_spd_upload(a, prec, d));
    gt_status s = gt_cu_spd_convert(d, gt_spmv_kind_format(k), -1, dia_limit(a, prec));
    if (s != GT_OK) gt_cu_spd_free(d);
    return s;
}
#endif

gt_status gt_spmv_gpu(const gt_csr *a, gt_spmv_kind k, int prec, const double *x, double *y)
{
#if GT_HAVE_CUDA
    gt_spd d;
    GT_TRY(prepare(a, k, prec, &d));
    void *dx = NULL, *dy = NULL;
    gt_status s = vec_up(x, a->ncols, prec, &dx);
    if (s == GT_OK) s = gt_cu_malloc(&dy, (size_t)(a->nrows ? a->nrows : 1) * (size_t)prec, "y");
    if (s == GT_OK) s = gt_cu_spmv(&d, (gt_spmv_kernel)k, dx, dy, NULL);
    if (s == GT_OK) s = gt_cu_sync();
    if (s == GT_OK) s = vec_down(dy, a->nrows, prec, y);
    if (dx) gt_cu_free(dx);
    if (dy) gt_cu_free(dy);
    gt_cu_spd_free(&d);
    return s;
#else
    (void)a, (void)k, (void)prec, (void)x, (void)y;
    return gt_fail(GT_ERR_GPU, "built without CUDA");
#endif
}

gt_status gt_spmv_gpu_bench(const gt_csr *a, gt_spmv_kind k, int prec, int reps, gt_spmv_bench *out)
{
#if GT_HAVE_CUDA
    memset(out, 0, sizeof *out);
    gt_spd d;
    GT_TRY(gt_cu_spd_upload(a, prec, &d));
    GT_TRY(gt_cu_sync());
    gt_timer t;
    gt_timer_start(&t, true, NULL);
    gt_status s = gt_cu_spd_convert(&d, gt_spmv_kind_format(k), -1, dia_limit(a, prec));
    out->convert_ms = gt_timer_stop(&t);
    if (s != GT_OK) {
        gt_cu_spd_free(&d);
        return s;
    }
    void *dx = NULL, *dy = NULL;
    double *x = malloc((size_t)(a->ncols ? a->ncols : 1) * sizeof *x);
    if (!x) s = gt_fail(GT_ERR_RUNTIME, "out of memory");
    for (int64_t j = 0; s == GT_OK && j < a->ncols; j++) x[j] = 1.0 + 1e-3 * (double)(j % 97);
    if (s == GT_OK) s = vec_up(x, a->ncols, prec, &dx);
    if (s == GT_OK) s = gt_cu_malloc(&dy, (size_t)(a->nrows ? a->nrows : 1) * (size_t)prec, "y");
    for (int w = 0; s == GT_OK && w < 3; w++) s = gt_cu_spmv(&d, (gt_spmv_kernel)k, dx, dy, NULL);
    if (s == GT_OK) s = gt_cu_sync();
    if (s == GT_OK) {
        gt_timer_start(&t, true, NULL);
        for (int r = 0; s == GT_OK && r < reps; r++) s = gt_cu_spmv(&d, (gt_spmv_kernel)k, dx, dy, NULL);
        double ms = gt_timer_stop(&t);
        if (s == GT_OK) s = gt_cu_sync();
        out->ms = ms / (reps > 0 ? reps : 1);
        out->bytes = gt_cu_spmv_bytes(&d, (gt_spmv_kernel)k);
        out->gbs = out->ms > 0 ? (double)out->bytes / (out->ms * 1e6) : 0;
        out->gflops = out->ms > 0 ? 2.0 * (double)a->nnz / (out->ms * 1e6) : 0;
    }
    free(x);
    if (dx) gt_cu_free(dx);
    if (dy) gt_cu_free(dy);
    gt_cu_spd_free(&d);
    return s;
#else
    (void)a, (void)k, (void)prec, (void)reps, (void)out;
    return gt_fail(GT_ERR_GPU, "built without CUDA");
#endif
}

gt_status gt_sp_convert_gpu(const gt_csr *a, gt_sp_format f, int64_t hyb_width, gt_coo *coo, gt_ell *ell,
                            gt_dia *dia, gt_hyb *hyb)
{
#if GT_HAVE_CUDA
    gt_spd d;
    GT_TRY(gt_cu_spd_upload(a, 8, &d));
    gt_status s = gt_cu_spd_convert(&d, f, hyb_width, 0);
    if (s == GT_OK) s = gt_cu_spd_download(&d, f, coo, ell, dia, hyb);
    gt_cu_spd_free(&d);
    return s;
#else
    (void)a, (void)f, (void)hyb_width, (void)coo, (void)ell, (void)dia, (void)hyb;
    return gt_fail(GT_ERR_GPU, "built without CUDA");
#endif
}

#if GT_HAVE_CUDA
/* Richardson's tau from the power iteration on the device (A, or A^T A with
   A^T built on the host and uploaded when A is not symmetric). */
static gt_status power_tau(const gt_csr *a, const gt_spd *d, int prec, double *tau)
{
    gt_sp_info in;
    GT_TRY(gt_sp_analyze(a, &in));
    gt_csr at = {0};
    gt_spd dt;
    bool have_t = false;
    gt_status s = GT_OK;
    if (!in.symmetric) {
        s = gt_csr_transpose(a, &at);
        if (s == GT_OK) s = gt_cu_spd_upload(&at, prec, &dt);
        have_t = s == GT_OK;
    }
    double est = 0;
    if (s == GT_OK) s = gt_cu_power(d, have_t ? &dt : NULL, GT_POWER_ITERS, &est);
    if (have_t) gt_cu_spd_free(&dt);
    gt_csr_free(&at);
    if (s == GT_OK) *tau = gt_richardson_tau_bound(a, in.symmetric, est);
    return s;
}
#endif

gt_status gt_solve_gpu(const gt_csr *a, gt_sp_format f, int prec, const double *b, double *x,
                       const gt_solve_opts *o, gt_solve_result *res, double *solve_ms)
{
    memset(res, 0, sizeof *res);
    GT_TRY(gt_solve_check(a, a->nrows, o->method));
    if (o->method == GT_SOLVE_GMRES || o->method == GT_SOLVE_AMG) { /* krylov_prec.cu's methods */
        if (prec != 8)
            return gt_fail(GT_ERR_USAGE, "%s runs in double precision only", gt_solve_method_name(o->method));
        return gt_solve_gpu_prec(a, f, o->method == GT_SOLVE_AMG ? GT_PRECOND_AMG : GT_PRECOND_NONE, NULL, b, x,
                                 o, 0, res, NULL, solve_ms);
    }
#if GT_HAVE_CUDA
    if (o->method == GT_SOLVE_GS) f = GT_SP_CSR;
    if (f != GT_SP_DIA && f != GT_SP_ELL) f = GT_SP_CSR;
    gt_spd d;
    GT_TRY(gt_cu_spd_upload(a, prec, &d));
    gt_trace("matrix uploaded");
    gt_status s = gt_cu_spd_convert(&d, f, -1, dia_limit(a, prec));
    if (s == GT_ERR_RUNTIME && f == GT_SP_DIA) { /* too many diagonals: CSR (out of memory stays exit 4) */
        f = GT_SP_CSR;
        s = GT_OK;
    }
    gt_trace("matrix converted");
    if (s == GT_OK && o->method == GT_SOLVE_RICHARDSON) {
        res->tau = o->tau;
        if (!(o->tau > 0)) s = power_tau(a, &d, prec, &res->tau);
    }
    if (s == GT_OK) s = gt_cu_sync();
    double t0 = gt_now_ms();
    if (s == GT_OK) s = gt_cu_solve(&d, f, a, b, x, o, res);
    if (solve_ms) *solve_ms = gt_now_ms() - t0;
    gt_trace("solver done");
    gt_cu_spd_free(&d);
    if (s != GT_OK) return s;
    /* true residual, in double on the host */
    double *r = malloc((size_t)a->nrows * sizeof *r);
    if (!r) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    gt_csr_spmv(a, x, r);
    for (int64_t i = 0; i < a->nrows; i++) r[i] = b[i] - r[i];
    double bn = gt_vec_norm2(b, a->nrows);
    res->true_relres = gt_vec_norm2(r, a->nrows) / (bn > 0 ? bn : 1);
    free(r);
    gt_solve_honest(o, prec, res);
    return GT_OK;
#else
    (void)f, (void)prec, (void)b, (void)x, (void)solve_ms;
    return gt_fail(GT_ERR_GPU, "built without CUDA");
#endif
}

#if GT_HAVE_CUDA
/* The true residual ||b - A x|| / ||b|| on the host, in double. */
static gt_status true_relres(const gt_csr *a, const double *b, const double *x, double *out)
{
    double *r = malloc((size_t)a->nrows * sizeof *r);
    if (!r) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    gt_csr_spmv(a, x, r);
    for (int64_t i = 0; i < a->nrows; i++) r[i] = b[i] - r[i];
    double bn = gt_vec_norm2(b, a->nrows);
    *out = gt_vec_norm2(r, a->nrows) / (bn > 0 ? bn : 1);
    free(r);
    return GT_OK;
}
#endif

gt_status gt_solve_gpu_prec(const gt_csr *a, gt_sp_format f, gt_precond_kind pk, const gt_precond_opts *po,
                            const double *b, double *x, const gt_solve_opts *o, int restart, gt_solve_result *res,
                            gt_precond *info, double *solve_ms)
{
    memset(res, 0, sizeof *res);
    if (info) memset(info, 0, sizeof *info);
    GT_TRY(gt_solve_check(a, a->nrows, o->method));
    if (!gt_solve_method_takes_precond(o->method))
        return gt_fail(GT_ERR_USAGE, "%s takes no preconditioner", gt_solve_method_name(o->method));
#if GT_HAVE_CUDA
    if (f != GT_SP_DIA && f != GT_SP_ELL) f = GT_SP_CSR;
    gt_spd d;
    GT_TRY(gt_cu_spd_upload(a, 8, &d));
    gt_status s = gt_cu_spd_convert(&d, f, -1, dia_limit(a, 8));
    if (s == GT_ERR_RUNTIME && f == GT_SP_DIA) { /* too many diagonals: CSR */
        f = GT_SP_CSR;
        s = GT_OK;
    }
    gt_spmv_kernel k = f == GT_SP_DIA ? GT_SPMV_DIA : f == GT_SP_ELL ? GT_SPMV_ELL : GT_SPMV_CSR_VECTOR;
    gt_precond p;
    memset(&p, 0, sizeof p);
    if (s == GT_OK) s = gt_cu_precond_create(&d, a, pk, po, &p);
    if (s != GT_OK) {
        gt_cu_spd_free(&d);
        return s;
    }
    if (info) {
        *info = p;
        info->ctx = NULL, info->apply = NULL, info->destroy = NULL;
    }
    double t0 = gt_now_ms();
    s = gt_cu_solve_prec(&d, k, &p, b, x, o, restart, res);
    if (solve_ms) *solve_ms = gt_now_ms() - t0;
    gt_precond_destroy(&p);
    gt_cu_spd_free(&d);
    if (s == GT_OK) s = true_relres(a, b, x, &res->true_relres);
    if (s == GT_OK) gt_solve_prec_honest(o, res);
    return s;
#else
    (void)f, (void)pk, (void)po, (void)b, (void)x, (void)restart, (void)solve_ms;
    return gt_fail(GT_ERR_GPU, "built without CUDA");
#endif
}
