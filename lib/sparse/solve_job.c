/* The solve job of sparsesolve, for any C program (see sparse.h): load a
 * Matrix Market matrix into CSR with its analysis (gt_sparse_load), then
 * solve A x = b with the program's choices of method and format, its
 * progress bar, --history file, report lines on stderr, per-stage timings
 * and atomic output of x (gt_sparse_solve). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/log.h"
#include "common/output.h"
#include "common/progress.h"
#include "common/trace.h"
#include "io/mtx.h"
#include "sparse/sparse.h"
#include "sparse/sparse_gpu.h"

/* *sym: the file declared the matrix symmetric (its upper half is the mirror
 * of the lower, exactly). */
static gt_status read_matrix(const char *path, gt_csr *a, bool *sym)
{
    gt_mtx m;
    memset(&m, 0, sizeof m);
    /* a coordinate file comes back as CSR (rows sorted, duplicates summed),
       its sizes checked before the row offsets were allocated */
    GT_TRY(gt_mtx_read_csr(path, &m));
    *sym = m.symmetry == GT_MTX_SYMMETRIC;
    gt_status s = GT_OK;
    if (m.is_array) {
        /* dense column-major -> row-major CSR */
        size_t cells = (size_t)m.nrows * (size_t)m.ncols;
        double *rm = malloc((cells ? cells : 1) * sizeof *rm);
        if (!rm) {
            gt_mtx_free(&m);
            return gt_fail(GT_ERR_RUNTIME, "out of memory");
        }
        for (int64_t i = 0; i < m.nrows; i++)
            for (int64_t j = 0; j < m.ncols; j++) rm[i * m.ncols + j] = m.dense[j * m.nrows + i];
        s = gt_csr_from_dense(m.nrows, m.ncols, rm, a);
        free(rm);
    } else {
        a->nrows = m.nrows, a->ncols = m.ncols, a->nnz = m.nnz;
        a->ptr = m.ptr, a->col = m.col, a->val = m.val;
        m.ptr = NULL, m.col = NULL, m.val = NULL;
    }
    gt_mtx_free(&m);
    if (s != GT_OK) gt_errmsg_prefix("%s", gt_in_name(path));
    return s;
}

gt_status gt_sparse_load(const char *path, gt_timings *tm, gt_sparse_matrix *m)
{
    memset(m, 0, sizeof m[0]);
    double t0 = gt_now_ms();
    bool sym = false;
    GT_TRY(read_matrix(path, &m->a, &sym));
    double read_ms = gt_now_ms() - t0;
    if (tm) gt_timings_add(tm, "read", read_ms);
    struct stat sb;
    if (path && strcmp(path, "-") != 0 && stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
        gt_info("read %s: %.1f MB in %.1f ms (%.0f MB/s)", gt_in_name(path), (double)sb.st_size / 1e6, read_ms,
                read_ms > 0 ? (double)sb.st_size / 1e3 / read_ms : 0.0);
    gt_status s;
    if (m->a.nrows == 0 || m->a.ncols == 0 || m->a.nnz == 0) {
        s = gt_fail(GT_ERR_DATA, "%s: the matrix is empty (%lldx%lld, %lld nonzeros)", gt_in_name(path),
                    (long long)m->a.nrows, (long long)m->a.ncols, (long long)m->a.nnz);
        gt_csr_free(&m->a);
        return s;
    }
    t0 = gt_now_ms();
    m->path = strdup(path);
    if (!m->path) s = gt_fail(GT_ERR_RUNTIME, "out of memory");
    else s = gt_sp_analyze_sym(&m->a, sym, &m->info);
    if (s != GT_OK) {
        gt_sparse_matrix_free(m);
        return s;
    }
    if (tm) gt_timings_add(tm, "analyze", gt_now_ms() - t0);
    return GT_OK;
}

void gt_sparse_matrix_free(gt_sparse_matrix *m)
{
    gt_csr_free(&m->a);
    free(m->path);
    memset(m, 0, sizeof m[0]);
}

void gt_sparse_job_init(gt_sparse_job *job)
{
    memset(job, 0, sizeof job[0]);
    job->method = -1;
    job->format = -1;
    job->prec = 8;
    gt_solve_opts_init(&job->solve);
    job->device = GT_DEVICE_AUTO;
    job->progress = true;
}

/* The per-iteration residuals (for --history) and the progress bar. */
typedef struct hist_ctx {
    double *h;
    int64_t n, cap;
    gt_progress *prog;
} hist_ctx;

static void on_iter(void *ctx, int64_t it, double rel)
{
    hist_ctx *c = ctx;
    if (c->n == c->cap) {
        int64_t cap = c->cap ? 2 * c->cap : 1024;
        double *h = realloc(c->h, (size_t)cap * sizeof *h);
        if (!h) return;
        c->h = h, c->cap = cap;
    }
    c->h[c->n++] = rel;
    if (c->prog) {
        char extra[64];
        snprintf(extra, sizeof extra, "residual %.3e", rel);
        gt_progress_update(c->prog, (double)it, extra);
    }
}

static gt_status write_history(const char *path, const hist_ctx *h)
{
    gt_out o;
    GT_TRY(gt_out_open(&o, path));
    fprintf(o.fp, "# iteration relative_residual\n");
    for (int64_t k = 0; k < h->n; k++) fprintf(o.fp, "%lld %.17g\n", (long long)k + 1, h->h[k]);
    return gt_out_commit(&o);
}

/* Method and format: the job's, or the automatic choice (said with -v). */
static void choose_method_format(const gt_sparse_matrix *m, const gt_sparse_job *job, gt_sparse_result *res)
{
    const gt_sp_info *in = &m->info;
    res->method = job->method >= 0 ? (gt_solve_method)job->method
                                    : (in->symmetric ? GT_SOLVE_PCG : GT_SOLVE_BICGSTAB);
    if (job->method < 0)
        gt_info("method %s: the matrix is %s", gt_solve_method_name(res->method),
                in->symmetric ? "symmetric (Jacobi-preconditioned CG)" : "not symmetric (BiCGStab)");
    if (job->format < 0) {
        char why[256];
        res->format = gt_sp_choose_format(in, why, sizeof why);
        gt_info("format %s: %s", gt_sp_format_name(res->format), why);
    } else {
        res->format = (gt_sp_format)job->format;
    }
}

/* b (read, or A*1) and x0 (read, or 0), checked against A. */
static gt_status read_vectors(const gt_sparse_matrix *m, const gt_sparse_job *job, gt_solve_method method,
                              double **b, double **x)
{
    const gt_csr *a = &m->a;
    int64_t n = a->nrows, nb = n;
    if (job->rhs) GT_TRY(gt_mtx_read_vector(job->rhs, b, &nb));
    gt_status s = gt_solve_check(a, nb, method);
    if (s != GT_OK) {
        gt_errmsg_prefix("%s", gt_in_name(m->path));
        return s;
    }
    if (!*b) {
        double *one = malloc((size_t)n * 8);
        *b = malloc((size_t)n * 8);
        if (!one || !*b) {
            free(one);
            return gt_fail(GT_ERR_RUNTIME, "out of memory");
        }
        for (int64_t i = 0; i < n; i++) one[i] = 1.0;
        gt_csr_spmv(a, one, *b);
        free(one);
    }
    if (job->x0) {
        int64_t nx = 0;
        GT_TRY(gt_mtx_read_vector(job->x0, x, &nx));
        if (nx != n)
            return gt_fail(GT_ERR_DATA, "%s: x0 has %lld entries but the matrix has %lld rows",
                           gt_in_name(job->x0), (long long)nx, (long long)n);
    } else {
        *x = calloc((size_t)n, sizeof **x);
        if (!*x) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    return GT_OK;
}

/* The solver on the chosen device, with the progress bar; hc collects the residuals. */
static gt_status run_solver(const gt_sparse_matrix *m, const gt_sparse_job *job, const double *b, double *x,
                            hist_ctx *hc, gt_sparse_result *res)
{
    gt_solve_opts so = job->solve;
    so.method = res->method;
    gt_progress prog;
    bool show = job->progress && gt_progress_enabled();
    if (show) {
        gt_progress_start(&prog, gt_solve_method_name(so.method), 0);
        hc->prog = &prog;
    }
    so.on_iter = on_iter, so.ctx = hc;
    gt_status s;
    double t0 = gt_now_ms();
    if (res->device == GT_DEVICE_CUDA) {
        s = gt_solve_gpu(&m->a, res->format, res->prec, b, x, &so, &res->solve, &res->solve_ms);
    } else {
        s = gt_solve_cpu_prec(&m->a, res->prec, b, x, &so, &res->solve);
        res->solve_ms = gt_now_ms() - t0;
    }
    if (show) gt_progress_end(&prog);
    hc->prog = NULL;
    return s;
}

/* The lines on stderr after a solve, and the error against all ones. */
static void report(const gt_sparse_matrix *m, const double *x, gt_sparse_result *res)
{
    const gt_solve_result *r = &res->solve;
    gt_solve_method method = res->method;
    gt_sp_format fmt = res->format;
    res->format_run = res->device == GT_DEVICE_CUDA
                          ? (method == GT_SOLVE_GS ? "csr"
                             : (fmt == GT_SP_DIA || fmt == GT_SP_ELL) ? gt_sp_format_name(fmt) : "csr")
                          : "csr";
    double ms = res->solve_ms;
    gt_notice("%s (%s, %s, %s): %s after %lld iterations, true relative residual %.3e, %.3f ms (%.4f ms/iter)",
              gt_solve_method_name(method), res->format_run, res->prec == 8 ? "double" : "single",
              gt_device_name(res->device), r->outcome == GT_SOLVE_CONVERGED ? "converged" : "stopped",
              (long long)r->iters, r->true_relres, ms, r->iters ? ms / (double)r->iters : 0.0);
    if (method == GT_SOLVE_RICHARDSON) gt_info("Richardson tau %.6g", r->tau);
    if (method == GT_SOLVE_GS && r->ncolours) gt_info("multicolour Gauss-Seidel: %d colours", r->ncolours);
    if (res->exact) {
        int64_t n = m->a.nrows;
        double emax = 0, e2 = 0;
        for (int64_t i = 0; i < n; i++) {
            double e = fabs(x[i] - 1.0);
            if (e > emax || isnan(e)) emax = e;
            e2 += e * e;
        }
        res->err_max = emax, res->err_rms = sqrt(e2 / (double)n);
        gt_notice("error against the exact solution (all ones): max %.3e, rms %.3e", emax, res->err_rms);
    }
}

gt_status gt_sparse_solve(const gt_sparse_matrix *m, const gt_sparse_job *job, gt_timings *tm,
                          gt_sparse_result *res)
{
    memset(res, 0, sizeof res[0]);
    res->prec = job->prec;
    res->exact = job->rhs == NULL;
    res->err_max = res->err_rms = NAN;
    GT_TRY(gt_device_choose(job->device, job->gpu, &res->device));
    choose_method_format(m, job, res);
    double *b = NULL, *x = NULL;
    hist_ctx hc = {0};
    gt_status s = read_vectors(m, job, res->method, &b, &x);
    if (s == GT_OK) {
        gt_trace(res->device == GT_DEVICE_CUDA ? "first kernel" : "computing on the CPU");
        s = run_solver(m, job, b, x, &hc, res);
        gt_trace("job done");
    }
    if (s == GT_OK && tm) gt_timings_add(tm, "solve", res->solve_ms);
    if (s == GT_OK && job->history) s = write_history(job->history, &hc);
    if (s == GT_OK) {
        res->solved = true;
        report(m, x, res);
        if (res->solve.outcome != GT_SOLVE_CONVERGED) {
            s = gt_fail(GT_ERR_RUNTIME, "%s", res->solve.msg);
        } else if (job->output) {
            char comment[200];
            snprintf(comment, sizeof comment, "%s %s: %lld iterations, relative residual %.3e", gt_progname(),
                     gt_solve_method_name(res->method), (long long)res->solve.iters, res->solve.true_relres);
            double t0 = gt_now_ms();
            s = gt_mtx_write_vector(job->output, x, m->a.nrows, comment);
            if (tm) gt_timings_add(tm, "write", gt_now_ms() - t0);
            if (s == GT_OK) gt_trace("output written");
        }
    }
    free(hc.h), free(b), free(x);
    return s;
}
