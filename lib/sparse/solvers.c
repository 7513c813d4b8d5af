/* CPU reference solvers (double precision): Richardson, weighted Jacobi,
 * sequential Gauss-Seidel, CG, Jacobi-preconditioned CG and BiCGStab. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/sparse.h"

static const char *const method_names[GT_SOLVE_NMETHODS] = {
    "cg", "pcg", "bicgstab", "jacobi", "gauss-seidel", "richardson"};
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
    o->check_every = 16;
    o->stagnation = 0;
}

double gt_vec_norm2(const double *v, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += v[i] * v[i];
    return sqrt(s);
}

static double dot(const double *a, const double *b, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
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
    /* Gershgorin: every eigenvalue lies in a disc centred a_ii with radius R_i,
       so lmin >= lo = min(a_ii - R_i) and (symmetric) lmax <= hi = max(a_ii + R_i).
       lo > 0: tau = 2/(lo + hi), the optimal step for the bounds. Otherwise,
       symmetric with a positive diagonal (SPD candidates such as Laplacians,
       where lo = 0): tau = 1.9/hi < 2/lmax, which converges for SPD matrices.
       Else 1/max row sum. */
    double lo = INFINITY, hi = 0, rowmax = 0;
    bool posdiag = true;
    for (int64_t i = 0; i < a->nrows; i++) {
        double d = 0, r = 0, s = 0;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            s += fabs(a->val[p]);
            if (a->col[p] == i) d = a->val[p];
            else r += fabs(a->val[p]);
        }
        if (d - r < lo) lo = d - r;
        if (d + r > hi) hi = d + r;
        if (s > rowmax) rowmax = s;
        if (!(d > 0)) posdiag = false;
    }
    if (lo > 0 && hi > 0) return 2.0 / (lo + hi);
    if (posdiag && hi > 0) {
        gt_sp_info in;
        if (gt_sp_analyze(a, &in) == GT_OK && in.symmetric) return 1.9 / hi;
    }
    return rowmax > 0 ? 1.0 / rowmax : 1.0;
}

void gt_gs_sweep(const gt_csr *a, const double *b, double *x, double omega)
{
    for (int64_t i = 0; i < a->nrows; i++) {
        double s = b[i], d = 0;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            if (a->col[p] == i) d = a->val[p];
            else s -= a->val[p] * x[a->col[p]];
        }
        x[i] = (1 - omega) * x[i] + omega * s / d;
    }
}

/* Tracks the residual history: stagnation, NaN, callbacks. Returns true when
   the loop should stop (res filled). */
typedef struct {
    double best;
    int64_t best_it, window;
} track;

static bool step_done(const gt_solve_opts *o, gt_solve_result *res, track *t, int64_t it, double rel)
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

gt_status gt_solve_cpu(const gt_csr *a, const double *b, double *x, const gt_solve_opts *o,
                       gt_solve_result *res)
{
    memset(res, 0, sizeof *res);
    GT_TRY(gt_solve_check(a, a->nrows, o->method));
    int64_t n = a->nrows;
    double *r = calloc((size_t)n, sizeof *r), *p = calloc((size_t)n, sizeof *p),
           *q = calloc((size_t)n, sizeof *q), *z = calloc((size_t)n, sizeof *z),
           *s = calloc((size_t)n, sizeof *s), *t = calloc((size_t)n, sizeof *t),
           *dinv = calloc((size_t)n, sizeof *dinv);
    if (!r || !p || !q || !z || !s || !t || !dinv) {
        free(r), free(p), free(q), free(z), free(s), free(t), free(dinv);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = a->ptr[i]; k < a->ptr[i + 1]; k++)
            if (a->col[k] == i && a->val[k] != 0) dinv[i] = 1.0 / a->val[k];
    double bn = gt_vec_norm2(b, n);
    if (bn == 0) bn = 1; /* b = 0: absolute residual */
    track tr = {INFINITY, 0, o->stagnation > 0 ? o->stagnation : 1000};
    gt_csr_spmv(a, x, q);
    for (int64_t i = 0; i < n; i++) r[i] = b[i] - q[i];
    double rel = gt_vec_norm2(r, n) / bn;
    res->relres = rel;
    if (rel <= o->tol) {
        res->outcome = GT_SOLVE_CONVERGED;
        goto done;
    }
    switch (o->method) {
    case GT_SOLVE_RICHARDSON:
    case GT_SOLVE_JACOBI: {
        double tau = o->tau;
        if (o->method == GT_SOLVE_RICHARDSON && !(tau > 0)) {
            gt_status ts = gt_richardson_tau_power(a, &tau);
            if (ts != GT_OK) {
                free(r), free(p), free(q), free(z), free(s), free(t), free(dinv);
                return ts;
            }
        }
        res->tau = tau;
        for (int64_t it = 1;; it++) {
            /* r = b - A x holds for the current x */
            if (o->method == GT_SOLVE_RICHARDSON)
                for (int64_t i = 0; i < n; i++) x[i] += tau * r[i];
            else
                for (int64_t i = 0; i < n; i++) x[i] += o->omega * dinv[i] * r[i];
            gt_csr_spmv(a, x, q);
            for (int64_t i = 0; i < n; i++) r[i] = b[i] - q[i];
            if (step_done(o, res, &tr, it, gt_vec_norm2(r, n) / bn)) break;
        }
        if (o->method == GT_SOLVE_JACOBI) res->tau = 0;
        break;
    }
    case GT_SOLVE_GS:
        for (int64_t it = 1;; it++) {
            gt_gs_sweep(a, b, x, o->omega);
            gt_csr_spmv(a, x, q);
            for (int64_t i = 0; i < n; i++) r[i] = b[i] - q[i];
            if (step_done(o, res, &tr, it, gt_vec_norm2(r, n) / bn)) break;
        }
        break;
    case GT_SOLVE_CG:
    case GT_SOLVE_PCG: {
        bool pre = o->method == GT_SOLVE_PCG;
        for (int64_t i = 0; i < n; i++) z[i] = pre ? dinv[i] * r[i] : r[i], p[i] = z[i];
        double rz = dot(r, z, n);
        for (int64_t it = 1;; it++) {
            gt_csr_spmv(a, p, q);
            double pq = dot(p, q, n);
            if (!(pq > 0)) {
                if (isnan(pq)) {
                    res->outcome = GT_SOLVE_NAN;
                    snprintf(res->msg, sizeof res->msg, "p'Ap became NaN at iteration %lld", (long long)it);
                } else {
                    res->outcome = GT_SOLVE_NOT_SPD;
                    snprintf(res->msg, sizeof res->msg,
                             "the matrix is not positive definite (p'Ap = %.3g <= 0 at iteration %lld); "
                             "CG needs an SPD matrix: try --method bicgstab", pq, (long long)it);
                }
                res->iters = it;
                break;
            }
            double alpha = rz / pq;
            for (int64_t i = 0; i < n; i++) x[i] += alpha * p[i], r[i] -= alpha * q[i];
            for (int64_t i = 0; i < n; i++) z[i] = pre ? dinv[i] * r[i] : r[i];
            double rz2 = dot(r, z, n);
            if (step_done(o, res, &tr, it, gt_vec_norm2(r, n) / bn)) break;
            double beta = rz2 / rz;
            rz = rz2;
            for (int64_t i = 0; i < n; i++) p[i] = z[i] + beta * p[i];
        }
        break;
    }
    case GT_SOLVE_BICGSTAB: {
        /* unpreconditioned BiCGStab (van der Vorst); r0hat = r0 kept in t */
        double *rh = t;
        memcpy(rh, r, (size_t)n * sizeof *r);
        double rho = 1, alpha = 1, w = 1;
        memset(p, 0, (size_t)n * sizeof *p);
        memset(z, 0, (size_t)n * sizeof *z); /* z = v */
        double *v = z, *tt = dinv;             /* reuse dinv as t vector (not needed) */
        for (int64_t it = 1;; it++) {
            double rho2 = dot(rh, r, n);
            if (rho2 == 0 || w == 0) {
                res->outcome = GT_SOLVE_BREAKDOWN;
                res->iters = it;
                snprintf(res->msg, sizeof res->msg,
                         "BiCGStab breakdown at iteration %lld (%s = 0)", (long long)it,
                         rho2 == 0 ? "rho" : "omega");
                break;
            }
            double beta = (rho2 / rho) * (alpha / w);
            rho = rho2;
            for (int64_t i = 0; i < n; i++) p[i] = r[i] + beta * (p[i] - w * v[i]);
            gt_csr_spmv(a, p, v);
            double rv = dot(rh, v, n);
            if (rv == 0) {
                res->outcome = GT_SOLVE_BREAKDOWN;
                res->iters = it;
                snprintf(res->msg, sizeof res->msg, "BiCGStab breakdown at iteration %lld (r0'v = 0)",
                         (long long)it);
                break;
            }
            alpha = rho / rv;
            for (int64_t i = 0; i < n; i++) s[i] = r[i] - alpha * v[i];
            double sn = gt_vec_norm2(s, n) / bn;
            if (sn <= o->tol) {
                for (int64_t i = 0; i < n; i++) x[i] += alpha * p[i];
                step_done(o, res, &tr, it, sn);
                break;
            }
            gt_csr_spmv(a, s, tt);
            double ts = dot(tt, s, n), tt2 = dot(tt, tt, n);
            w = tt2 > 0 ? ts / tt2 : 0;
            for (int64_t i = 0; i < n; i++) x[i] += alpha * p[i] + w * s[i], r[i] = s[i] - w * tt[i];
            if (step_done(o, res, &tr, it, gt_vec_norm2(r, n) / bn)) break;
        }
        break;
    }
    default:
        break;
    }
done:
    gt_csr_spmv(a, x, q);
    for (int64_t i = 0; i < n; i++) r[i] = b[i] - q[i];
    res->true_relres = gt_vec_norm2(r, n) / bn;
    free(r), free(p), free(q), free(z), free(s), free(t), free(dinv);
    return GT_OK;
}
