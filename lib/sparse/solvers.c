/* CPU reference solvers (double and single precision): Richardson, weighted Jacobi,
 * sequential Gauss-Seidel, CG, Jacobi-preconditioned CG and BiCGStab. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/krylov_prec.h"
#include "sparse/solve_track.h"
#include "sparse/sparse.h"

static const char *const method_names[GT_SOLVE_NMETHODS] = {
    "cg", "pcg", "bicgstab", "jacobi", "gauss-seidel", "richardson", "gmres", "amg"};
const char *gt_solve_method_name(gt_solve_method m)
{
    return (m >= 0 && m < GT_SOLVE_NMETHODS) ? method_names[m] : "?";
}

void gt_solve_opts_init(gt_solve_opts *o)
{
    memset(o, 0, sizeof *o);
    o->method = GT_SOLVE_PCG;
    o->tol = 1e-8;
    o->maxiter = 10000;
    o->omega = 1.0;
    o->tau = 0;
    o->check_every = 0; /* the GPU solvers choose (gt_solve_opts.check_every) */
    o->stagnation = 0;
}


gt_status gt_solve_check(const gt_csr *a, int64_t nb, gt_solve_method m)
{
    if (a->nrows == 0 || a->ncols == 0)
        return gt_fail(GT_ERR_DATA, "the matrix is empty (%lldx%lld)", (long long)a->nrows,
                       (long long)a->ncols);
    if (a->nrows != a->ncols)
        return gt_fail(GT_ERR_DATA, "the matrix is not square (%lldx%lld): these solvers need a square matrix",
                       (long long)a->nrows, (long long)a->ncols);
    if (nb != a->nrows)
        return gt_fail(GT_ERR_DATA, "b has %lld entries but the matrix has %lld rows", (long long)nb,
                       (long long)a->nrows);
    if (a->nnz == 0) return gt_fail(GT_ERR_DATA, "the matrix has no nonzeros");
    if (m == GT_SOLVE_JACOBI || m == GT_SOLVE_GS || m == GT_SOLVE_PCG) {
        for (int64_t i = 0; i < a->nrows; i++) {
            double d = 0;
            for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++)
                if (a->col[p] == i) d = a->val[p];
            if (d == 0.0)
                return gt_fail(GT_ERR_DATA, "zero diagonal at row %lld: %s divides by the diagonal "
                               "(try --method bicgstab)", (long long)i + 1, gt_solve_method_name(m));
        }
    }
    return GT_OK;
}

double gt_richardson_tau(const gt_csr *a)
{
    /* the Gershgorin rules alone (lib/sparse/power.c) */
    gt_sp_info in;
    bool sym = gt_sp_analyze(a, &in) == GT_OK && in.symmetric;
    return gt_richardson_tau_bound(a, sym, 0);
}

/* Tracks the residual history: stagnation, NaN, callbacks. Returns true when
   the loop should stop (res filled). Shared with krylov_prec.c (solve_track.h). */
typedef gt_solve_track track;

bool gt_solve_step_done(const gt_solve_opts *o, gt_solve_result *res, track *t, int64_t it, double rel)
{
    res->iters = it;
    res->relres = rel;
    if (o->on_iter) o->on_iter(o->ctx, it, rel);
    if (!isfinite(rel)) {
        res->outcome = GT_SOLVE_NAN;
        snprintf(res->msg, sizeof res->msg, "the residual became NaN/Inf at iteration %lld", (long long)it);
        return true;
    }
    if (rel <= o->tol) {
        res->outcome = GT_SOLVE_CONVERGED;
        return true;
    }
    if (rel < t->best * (1 - 1e-3)) t->best = rel, t->best_it = it;
    else if (it - t->best_it >= t->window) {
        res->outcome = GT_SOLVE_STAGNATION;
        snprintf(res->msg, sizeof res->msg,
                 "stagnation: no progress for %lld iterations (residual %.3g)", (long long)t->window, rel);
        return true;
    }
    if (it >= o->maxiter) {
        res->outcome = GT_SOLVE_MAXITER;
        snprintf(res->msg, sizeof res->msg,
                 "not converged after %lld iterations (residual %.3g > tol %.3g)", (long long)it, rel, o->tol);
        return true;
    }
    return false;
}

#define step_done gt_solve_step_done
#define REAL double
#define SFX(name) name##_f64
#define SPMV gt_csr_spmv
#include "sparse/solve_cpu_impl.h"
#undef REAL
#undef SFX
#undef SPMV
#define REAL float
#define SFX(name) name##_f32
#define SPMV gt_csr_spmv_f32
#include "sparse/solve_cpu_impl.h"
#undef REAL
#undef SFX
#undef SPMV

/* the public double-precision pieces are the generic ones */
double gt_vec_norm2(const double *v, int64_t n) { return norm2_f64(v, n); }
void gt_gs_sweep(const gt_csr *a, const double *b, double *x, double omega) { gs_sweep_f64(a, b, x, omega); }

/* GMRES and -m amg live in krylov_prec.c: GMRES without a preconditioner,
   amg with the AMG one (its default set-up). */
static gt_status solve_prec_default(const gt_csr *a, const double *b, double *x, const gt_solve_opts *o,
                                    gt_solve_result *res)
{
    memset(res, 0, sizeof *res);
    gt_precond p;
    GT_TRY(gt_precond_create_cpu(a, o->method == GT_SOLVE_AMG ? GT_PRECOND_AMG : GT_PRECOND_NONE, NULL, &p));
    gt_status s = gt_solve_prec_cpu(a, &p, b, x, o, 0, res);
    gt_precond_destroy(&p);
    return s;
}

gt_status gt_solve_cpu(const gt_csr *a, const double *b, double *x, const gt_solve_opts *o,
                       gt_solve_result *res)
{
    if (o->method == GT_SOLVE_GMRES || o->method == GT_SOLVE_AMG) return solve_prec_default(a, b, x, o, res);
    gt_status s = solve_cpu_f64(a, b, x, o, res);
    if (s == GT_OK) gt_solve_honest(o, 8, res);
    return s;
}

gt_status gt_solve_cpu_prec(const gt_csr *a, int prec, const double *b, double *x, const gt_solve_opts *o,
                            gt_solve_result *res)
{
    if (prec != 4) return gt_solve_cpu(a, b, x, o, res);
    memset(res, 0, sizeof *res);
    if (o->method == GT_SOLVE_GMRES || o->method == GT_SOLVE_AMG)
        return gt_fail(GT_ERR_USAGE, "%s runs in double precision only", gt_solve_method_name(o->method));
    GT_TRY(gt_solve_check(a, a->nrows, o->method));
    int64_t n = a->nrows;
    float *bf = malloc((size_t)n * sizeof *bf), *xf = malloc((size_t)n * sizeof *xf);
    double *r = malloc((size_t)n * sizeof *r);
    if (!bf || !xf || !r) {
        free(bf), free(xf), free(r);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    for (int64_t i = 0; i < n; i++) bf[i] = (float)b[i], xf[i] = (float)x[i];
    gt_status s = solve_cpu_f32(a, bf, xf, o, res);
    if (s == GT_OK) {
        /* x back in double; the true residual recomputed in double (as the GPU path does) */
        for (int64_t i = 0; i < n; i++) x[i] = xf[i];
        gt_csr_spmv(a, x, r);
        for (int64_t i = 0; i < n; i++) r[i] = b[i] - r[i];
        double bn = gt_vec_norm2(b, n);
        res->true_relres = gt_vec_norm2(r, n) / (bn > 0 ? bn : 1);
        gt_solve_honest(o, 4, res);
    }
    free(bf), free(xf), free(r);
    return s;
}
