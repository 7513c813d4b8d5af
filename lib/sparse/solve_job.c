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
#include "sparse/krylov_prec.h"
#include "sparse/precond.h"
#include "sparse/reorder.h"
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
    job->precond = -1;
    job->restart = 0;
    job->precond_opts = NULL;
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

/* Method, preconditioner and format: the job's, or the automatic choice
   (said with -v). res->precond is -1 where the solver of solvers.c / the
   fused GPU kernels runs (Jacobi-PCG included), else the kind that
   krylov_prec.c or its GPU twin runs with. */
static gt_status choose_method_format(const gt_sparse_matrix *m, const gt_sparse_job *job, gt_sparse_result *res)
{
    const gt_sp_info *in = &m->info;
    int pk = job->precond;
    bool asked = pk > GT_PRECOND_NONE;
    res->method = job->method >= 0 ? (gt_solve_method)job->method
                  : in->symmetric  ? GT_SOLVE_PCG
                  : asked          ? GT_SOLVE_GMRES
                                   : GT_SOLVE_BICGSTAB;
    if (job->method < 0)
        gt_info("method %s: the matrix is %s", gt_solve_method_name(res->method),
                in->symmetric ? (asked ? "symmetric (preconditioned CG)" : "symmetric (Jacobi-preconditioned CG)")
                              : (asked ? "not symmetric, with a preconditioner (GMRES)" : "not symmetric (BiCGStab)"));
    gt_solve_method me = res->method;
    if (pk < 0) pk = me == GT_SOLVE_PCG ? GT_PRECOND_JACOBI : me == GT_SOLVE_AMG ? GT_PRECOND_AMG : GT_PRECOND_NONE;
    if (me == GT_SOLVE_CG && pk > GT_PRECOND_NONE) me = GT_SOLVE_PCG; /* CG with a preconditioner */
    if (me == GT_SOLVE_PCG && pk == GT_PRECOND_NONE) me = GT_SOLVE_CG;
    if (me == GT_SOLVE_AMG && pk != GT_PRECOND_AMG)
        return gt_fail(GT_ERR_USAGE, "--method amg is the AMG V-cycle as a solver: it takes no --precond %s",
                       gt_precond_name((gt_precond_kind)pk));
    if ((me == GT_SOLVE_JACOBI || me == GT_SOLVE_GS) && pk > GT_PRECOND_NONE)
        return gt_fail(GT_ERR_USAGE, "--precond %s: %s takes no preconditioner (pcg, bicgstab, gmres and "
                       "richardson do)", gt_precond_name((gt_precond_kind)pk), gt_solve_method_name(me));
    res->method = me;
    /* the solvers of solvers.c and the fused GPU kernels: no preconditioner object */
    bool legacy = (pk == GT_PRECOND_NONE && me != GT_SOLVE_GMRES && me != GT_SOLVE_AMG) ||
                  (me == GT_SOLVE_PCG && pk == GT_PRECOND_JACOBI);
    res->precond = legacy ? -1 : pk;
    if (!legacy && job->prec != 8)
        return gt_fail(GT_ERR_USAGE, "--precision single: %s%s%s runs in double only", gt_solve_method_name(me),
                       pk > GT_PRECOND_NONE ? " with the preconditioner " : "",
                       pk > GT_PRECOND_NONE ? gt_precond_name((gt_precond_kind)pk) : "");
    if (job->format < 0) {
        char why[256];
        res->format = gt_sp_choose_format(in, why, sizeof why);
        gt_info("format %s: %s", gt_sp_format_name(res->format), why);
    } else {
        res->format = (gt_sp_format)job->format;
    }
    return GT_OK;
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

/* A solver of krylov_prec.h with its preconditioner, on the chosen device;
   the set-up is timed apart from the iterations and described with -v. */
static gt_status run_precond(const gt_csr *a, const char *path, const gt_sparse_job *job, const double *b,
                             double *x, const gt_solve_opts *so, gt_sparse_result *res)
{
    gt_precond_kind pk = (gt_precond_kind)res->precond;
    gt_precond p;
    gt_status s;
    if (res->device == GT_DEVICE_CUDA) {
        s = gt_solve_gpu_prec(a, res->format, pk, job->precond_opts, b, x, so, job->restart, &res->solve, &p,
                              &res->solve_ms);
        if (p.kind == pk) res->setup_ms = p.setup_ms;
    } else {
        s = gt_precond_create_cpu(a, pk, job->precond_opts, &p);
        if (s == GT_OK) {
            res->setup_ms = p.setup_ms;
            double t0 = gt_now_ms();
            s = gt_solve_prec_cpu(a, &p, b, x, so, job->restart, &res->solve);
            res->solve_ms = gt_now_ms() - t0;
            gt_precond_destroy(&p);
        }
    }
    if (s == GT_ERR_DATA) gt_errmsg_prefix("%s", gt_in_name(path));
    if (s == GT_OK)
        gt_info("preconditioner %s, set-up %.3f ms: %s", gt_precond_name(pk), p.setup_ms, p.summary);
    return s;
}

/* The solver on the chosen device, with the progress bar; hc collects the residuals. */
static gt_status run_solver(const gt_csr *a, const char *path, const gt_sparse_job *job, const double *b,
                            double *x, hist_ctx *hc, gt_sparse_result *res)
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
    if (res->precond >= 0) {
        s = run_precond(a, path, job, b, x, &so, res);
    } else if (res->device == GT_DEVICE_CUDA) {
        s = gt_solve_gpu(a, res->format, res->prec, b, x, &so, &res->solve, &res->solve_ms);
    } else {
        s = gt_solve_cpu_prec(a, res->prec, b, x, &so, &res->solve);
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
    char name[64];
    if (res->precond >= 0)
        snprintf(name, sizeof name, "%s+%s", gt_solve_method_name(method), gt_precond_name((gt_precond_kind)res->precond));
    else
        snprintf(name, sizeof name, "%s", gt_solve_method_name(method));
    gt_notice("%s (%s, %s, %s): %s after %lld iterations, true relative residual %.3e, %.3f ms (%.4f ms/iter)",
              name, res->format_run, res->prec == 8 ? "double" : "single",
              gt_device_name(res->device), r->outcome == GT_SOLVE_CONVERGED ? "converged" : "stopped",
              (long long)r->iters, r->true_relres, ms, r->iters ? ms / (double)r->iters : 0.0);
    if (method == GT_SOLVE_RICHARDSON) gt_info("Richardson tau %.6g", r->tau);
    if (res->precond < 0 && method == GT_SOLVE_PCG)
        gt_info("preconditioner jacobi: z = D^-1 r, fused into the PCG iteration (no separate set-up)");
    if (res->precond >= 0 && res->setup_ms > 0)
        gt_info("preconditioner set-up %.3f ms + solve %.3f ms = %.3f ms to solution", res->setup_ms, ms,
                res->setup_ms + ms);
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
    res->precond = -1;
    GT_TRY(gt_device_choose(job->device, job->gpu, &res->device));
    GT_TRY(choose_method_format(m, job, res));
    double *b = NULL, *x = NULL;
    hist_ctx hc = {0};
    gt_status s = read_vectors(m, job, res->method, &b, &x);
    /* --reorder: the solver runs on P A P^T with P b and P x0; x mapped back */
    int32_t *perm = NULL;
    gt_csr pa = {0};
    if (s == GT_OK) {
        double t0 = gt_now_ms();
        char why[512];
        if (job->reorder == GT_REORDER_AUTO) {
            /* one solve does not repay RCM: on the H100 a randomly numbered
             * 405k-row tetrahedral mesh took 131-244 ms to reorder (and map
             * x back) where the Jacobi-PCG it sped up went from 53 to 40-48
             * ms; a DIA stencil's diagonals read x in order already; and a
             * banded factor's triangular solves (ic0, ilu0) are long chains
             * of dependent rows (IC(0)-PCG 93 ms per iteration after RCM) */
            snprintf(why, sizeof why, "reorder none: one solve does not repay the reordering (--reorder rcm "
                     "asks for it)");
        } else {
            s = gt_reorder_apply(&m->a, m->info.symmetric, job->reorder, &perm, &pa, why, sizeof why);
        }
        if (s == GT_OK && perm) {
            int64_t n = m->a.nrows;
            double *pb = malloc((size_t)n * sizeof *pb), *px = malloc((size_t)n * sizeof *px);
            if (!pb || !px) {
                free(pb), free(px);
                s = gt_fail(GT_ERR_RUNTIME, "out of memory");
            } else {
                gt_vec_permute(b, perm, n, pb);
                gt_vec_permute(x, perm, n, px);
                free(b), free(x);
                b = pb, x = px;
                res->reordered = true;
            }
        }
        if (s == GT_OK) gt_info("%s", why);
        if (tm && perm) gt_timings_add(tm, "reorder", gt_now_ms() - t0);
    }
    if (s == GT_OK) {
        gt_trace(res->device == GT_DEVICE_CUDA ? "first kernel" : "computing on the CPU");
        s = run_solver(res->reordered ? &pa : &m->a, m->path, job, b, x, &hc, res);
        gt_trace("job done");
    }
    if (s == GT_OK && tm && res->precond >= 0) gt_timings_add(tm, "setup", res->setup_ms);
    if (s == GT_OK && res->reordered) { /* x back to the file's order */
        double t0 = gt_now_ms();
        int64_t n = m->a.nrows;
        double *xo = malloc((size_t)n * sizeof *xo);
        if (!xo) s = gt_fail(GT_ERR_RUNTIME, "out of memory");
        else {
            gt_vec_unpermute(x, perm, n, xo);
            free(x);
            x = xo;
        }
        if (tm) gt_timings_add(tm, "reorder", gt_now_ms() - t0);
    }
    gt_csr_free(&pa);
    free(perm);
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
