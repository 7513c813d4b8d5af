/* CPU reference of the preconditioned Krylov solvers (krylov_prec.h): PCG,
 * right-preconditioned BiCGStab and GMRES(m), preconditioned Richardson.
 * Double precision; the preconditioner is a host gt_precond. The GPU twin
 * (kernels/sparse/krylov_prec.cu) follows these loops step for step. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "sparse/krylov_prec.h"
#include "sparse/solve_track.h"

bool gt_solve_method_takes_precond(gt_solve_method m)
{
    return m == GT_SOLVE_PCG || m == GT_SOLVE_BICGSTAB || m == GT_SOLVE_GMRES || m == GT_SOLVE_RICHARDSON ||
           m == GT_SOLVE_AMG;
}

static double dot(const double *a, const double *b, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

static double nrm(const double *v, int64_t n) { return sqrt(dot(v, v, n)); }

/* r = b - A x, returns ||r|| */
static double resid(const gt_csr *a, const double *b, const double *x, double *r)
{
    gt_csr_spmv(a, x, r);
    for (int64_t i = 0; i < a->nrows; i++) r[i] = b[i] - r[i];
    return nrm(r, a->nrows);
}

/* z = M^-1 r; a failure of the preconditioner ends the solve as a breakdown */
static bool prec(const gt_precond *m, const double *r, double *z, gt_solve_result *res, int64_t it)
{
    gt_status s = m->apply(m->ctx, r, z, NULL);
    if (s == GT_OK) return true;
    res->outcome = GT_SOLVE_BREAKDOWN;
    res->iters = it;
    snprintf(res->msg, sizeof res->msg, "the %s preconditioner failed at iteration %lld: %s",
             gt_precond_name(m->kind), (long long)it, gt_errmsg());
    return false;
}

/* Ends the solve at iteration it with outcome oc and the message fmt... */
static void set_stop(gt_solve_result *res, gt_solve_outcome oc, int64_t it, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void set_stop(gt_solve_result *res, gt_solve_outcome oc, int64_t it, const char *fmt, ...)
{
    res->outcome = oc;
    res->iters = it;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->msg, sizeof res->msg, fmt, ap);
    va_end(ap);
}

static void pcg(const gt_csr *a, const gt_precond *m, double *x, const gt_solve_opts *o,
                double bn, double *r, double **w, gt_solve_track *tr, gt_solve_result *res)
{
    int64_t n = a->nrows;
    double *z = w[0], *p = w[1], *q = w[2];
    if (!prec(m, r, z, res, 0)) return;
    memcpy(p, z, (size_t)n * sizeof *p);
    double rz = dot(r, z, n);
    for (int64_t it = 1;; it++) {
        gt_csr_spmv(a, p, q);
        double pq = dot(p, q, n);
        if (!(pq > 0)) {
            if (isnan(pq)) set_stop(res, GT_SOLVE_NAN, it, "p'Ap became NaN at iteration %lld", (long long)it);
            else
                set_stop(res, GT_SOLVE_NOT_SPD, it,
                         "the matrix is not positive definite (p'Ap = %.3g <= 0 at iteration %lld); "
                         "PCG needs an SPD matrix: try --method gmres", pq, (long long)it);
            return;
        }
        double alpha = rz / pq;
        for (int64_t i = 0; i < n; i++) x[i] += alpha * p[i], r[i] -= alpha * q[i];
        if (gt_solve_step_done(o, res, tr, it, nrm(r, n) / bn)) return;
        if (!prec(m, r, z, res, it)) return;
        double rz2 = dot(r, z, n);
        if (!(rz2 > 0)) {
            set_stop(res, GT_SOLVE_NOT_SPD, it,
                     "the preconditioner is not positive definite (r'z = %.3g <= 0 at iteration %lld); "
                     "PCG needs an SPD preconditioner: try --method gmres", rz2, (long long)it);
            return;
        }
        double beta = rz2 / rz;
        rz = rz2;
        for (int64_t i = 0; i < n; i++) p[i] = z[i] + beta * p[i];
    }
}

/* Right-preconditioned BiCGStab (van der Vorst's algorithm on A M^-1,
   x updated with the preconditioned directions). */
static void bicgstab(const gt_csr *a, const gt_precond *m, double *x, const gt_solve_opts *o, double bn,
                     double *r, double **w, gt_solve_track *tr, gt_solve_result *res)
{
    int64_t n = a->nrows;
    double *rh = w[0], *p = w[1], *v = w[2], *s = w[3], *t = w[4], *ph = w[5], *sh = w[6];
    memcpy(rh, r, (size_t)n * sizeof *r);
    memset(p, 0, (size_t)n * sizeof *p);
    memset(v, 0, (size_t)n * sizeof *v);
    double rho = 1, alpha = 1, om = 1, rr = dot(rh, rh, n);
    for (int64_t it = 1;; it++) {
        /* rho = 0, r0'v = 0 or a near-zero t's (gt_bicg_tiny, solve_track.h) are breakdowns */
        double rho2 = dot(rh, r, n);
        if (rho2 == 0) {
            set_stop(res, GT_SOLVE_BREAKDOWN, it,
                     "BiCGStab breakdown at iteration %lld (rho = r0'r = 0: r is orthogonal to r0; residual %.3g)",
                     (long long)it, sqrt(rr) / bn);
            return;
        }
        double beta = (rho2 / rho) * (alpha / om);
        rho = rho2;
        for (int64_t i = 0; i < n; i++) p[i] = r[i] + beta * (p[i] - om * v[i]);
        if (!prec(m, p, ph, res, it)) return;
        gt_csr_spmv(a, ph, v);
        double rv = dot(rh, v, n);
        if (rv == 0) {
            set_stop(res, GT_SOLVE_BREAKDOWN, it, "BiCGStab breakdown at iteration %lld (r0'v = 0; residual %.3g)",
                     (long long)it, sqrt(rr) / bn);
            return;
        }
        alpha = rho / rv;
        for (int64_t i = 0; i < n; i++) s[i] = r[i] - alpha * v[i];
        double ss = dot(s, s, n), sn = sqrt(ss) / bn;
        if (sn <= o->tol) {
            for (int64_t i = 0; i < n; i++) x[i] += alpha * ph[i];
            gt_solve_step_done(o, res, tr, it, sn);
            return;
        }
        if (!prec(m, s, sh, res, it)) return;
        gt_csr_spmv(a, sh, t);
        double ts = dot(t, s, n), tt = dot(t, t, n);
        if (gt_bicg_tiny(ts, tt, ss, GT_BICG_TINY)) {
            for (int64_t i = 0; i < n; i++) x[i] += alpha * ph[i];
            set_stop(res, GT_SOLVE_BREAKDOWN, it,
                     "BiCGStab breakdown at iteration %lld (omega = t's/t't ~ 0: A M^-1 s is orthogonal to s to "
                     "rounding; residual %.3g): try --method gmres", (long long)it, sn);
            res->relres = sn;
            return;
        }
        om = ts / tt;
        for (int64_t i = 0; i < n; i++) x[i] += alpha * ph[i] + om * sh[i], r[i] = s[i] - om * t[i];
        rr = dot(r, r, n);
        if (gt_solve_step_done(o, res, tr, it, sqrt(rr) / bn)) return;
    }
}

/* Preconditioned Richardson x += tau M^-1 (b - A x), tau = o->tau or 1. */
static void richardson(const gt_csr *a, const gt_precond *m, const double *b, double *x, const gt_solve_opts *o,
                       double bn, double *r, double **w, gt_solve_track *tr, gt_solve_result *res)
{
    int64_t n = a->nrows;
    double *z = w[0];
    double tau = o->tau > 0 ? o->tau : 1.0;
    res->tau = tau;
    for (int64_t it = 1;; it++) {
        if (!prec(m, r, z, res, it)) return;
        for (int64_t i = 0; i < n; i++) x[i] += tau * z[i];
        double rn = resid(a, b, x, r);
        if (gt_solve_step_done(o, res, tr, it, rn / bn)) return;
    }
}

/* krylov_prec.h */
void gt_gmres_givens(double *h, int ld, int j, double *cs, double *sn, double *g)
{
    double *c = h + (size_t)j * ld;
    for (int i = 0; i < j; i++) {
        double t = cs[i] * c[i] + sn[i] * c[i + 1];
        c[i + 1] = -sn[i] * c[i] + cs[i] * c[i + 1];
        c[i] = t;
    }
    double d = hypot(c[j], c[j + 1]);
    cs[j] = d > 0 ? c[j] / d : 1.0;
    sn[j] = d > 0 ? c[j + 1] / d : 0.0;
    c[j] = d;
    c[j + 1] = 0;
    g[j + 1] = -sn[j] * g[j];
    g[j] = cs[j] * g[j];
}

/* y = R^-1 g for the k x k upper triangle of h; a (numerically) zero
   diagonal (below 1e-12 of the largest) gets y = 0 there, the least-squares
   choice of a singular R. */
void gt_gmres_back_solve(const double *h, int ld, int k, const double *g, double *y)
{
    double hmax = 0;
    for (int j = 0; j < k; j++) hmax = fmax(hmax, fabs(h[(size_t)j * ld + j]));
    for (int i = k - 1; i >= 0; i--) {
        double s = g[i];
        for (int j = i + 1; j < k; j++) s -= h[(size_t)j * ld + i] * y[j];
        double d = h[(size_t)i * ld + i];
        y[i] = fabs(d) > 1e-12 * hmax ? s / d : 0.0;
    }
}

static void gmres(const gt_csr *a, const gt_precond *m, const double *b, double *x, const gt_solve_opts *o,
                  int mr, double bn, double *r, double **w, double *V, gt_solve_track *tr, gt_solve_result *res)
{
    int64_t n = a->nrows;
    int ld = mr + 1;
    double *z = w[0], *u = w[1], *wv = w[2];
    double *h = calloc((size_t)ld * (size_t)mr, sizeof *h), *cs = calloc((size_t)ld, sizeof *cs),
           *sn = calloc((size_t)ld, sizeof *sn), *g = calloc((size_t)ld, sizeof *g),
           *y = calloc((size_t)ld, sizeof *y);
    if (!h || !cs || !sn || !g || !y) {
        set_stop(res, GT_SOLVE_BREAKDOWN, 0, "out of memory for GMRES's Hessenberg matrix");
        goto out;
    }
    int64_t it = 0;
    double beta = nrm(r, n), prev = INFINITY;
    for (;;) {
        /* r = b - A x, beta = ||r|| (true residual) at the start of each cycle */
        if (beta / bn <= o->tol) {
            res->outcome = GT_SOLVE_CONVERGED;
            res->relres = beta / bn;
            break;
        }
        if (it > 0 && beta >= prev * (1 - 1e-9)) {
            set_stop(res, GT_SOLVE_STAGNATION, it,
                     "stagnation: a GMRES restart cycle ending at iteration %lld did not reduce the residual "
                     "(%.3g)", (long long)it, beta / bn);
            break;
        }
        if (it >= o->maxiter) {
            set_stop(res, GT_SOLVE_MAXITER, it, "not converged after %lld iterations (residual %.3g > tol %.3g)",
                     (long long)it, beta / bn, o->tol);
            break;
        }
        prev = beta;
        for (int64_t i = 0; i < n; i++) V[i] = r[i] / beta;
        memset(g, 0, (size_t)ld * sizeof *g);
        g[0] = beta;
        int k = 0;
        bool stop = false, happy = false;
        for (int j = 0; j < mr; j++) {
            double *vj = V + (size_t)j * (size_t)n, *vn = V + (size_t)(j + 1) * (size_t)n;
            if (!prec(m, vj, z, res, it)) {
                stop = true;
                break;
            }
            gt_csr_spmv(a, z, wv);
            double w0 = nrm(wv, n);
            double *hc = h + (size_t)j * ld;
            for (int i = 0; i <= j; i++) { /* modified Gram-Schmidt */
                const double *vi = V + (size_t)i * (size_t)n;
                double hij = dot(wv, vi, n);
                for (int64_t q = 0; q < n; q++) wv[q] -= hij * vi[q];
                hc[i] = hij;
            }
            double hn = nrm(wv, n);
            hc[j + 1] = hn;
            gt_gmres_givens(h, ld, j, cs, sn, g);
            k = j + 1;
            it++;
            happy = !(hn > 1e-14 * w0);
            if (gt_solve_step_done(o, res, tr, it, fabs(g[j + 1]) / bn)) {
                stop = true;
                break;
            }
            if (happy) break;
            for (int64_t q = 0; q < n; q++) vn[q] = wv[q] / hn;
        }
        if (res->outcome == GT_SOLVE_NAN) break;
        if (k > 0) {
            /* x += M^-1 (V y) */
            gt_gmres_back_solve(h, ld, k, g, y);
            memset(u, 0, (size_t)n * sizeof *u);
            for (int j = 0; j < k; j++) {
                const double *vj = V + (size_t)j * (size_t)n;
                for (int64_t q = 0; q < n; q++) u[q] += y[j] * vj[q];
            }
            if (!prec(m, u, z, res, it)) break;
            for (int64_t q = 0; q < n; q++) x[q] += z[q];
        }
        beta = resid(a, b, x, r);
        if (k > 0 && !(beta <= prev)) {
            /* the least-squares update made the true residual worse: a nearly
               singular Hessenberg matrix amplified rounding (a singular A). Keep
               the x of the cycle's start; the next pass reports stagnation. */
            for (int64_t q = 0; q < n; q++) x[q] -= z[q];
            beta = resid(a, b, x, r);
        }
        if (stop && res->outcome != GT_SOLVE_CONVERGED) break; /* limit, stagnation, failure */
        /* an invariant Krylov space whose least-squares residual is above tol:
           b has a part outside the range of A M^-1 */
        if (happy && k > 0 && fabs(g[k]) / bn > o->tol && beta / bn > o->tol) {
            set_stop(res, GT_SOLVE_BREAKDOWN, it,
                     "GMRES breakdown at iteration %lld: the Krylov space is invariant but the residual is "
                     "%.3g, above tol: A is singular and b is not in its range (an inconsistent system)",
                     (long long)it, beta / bn);
            break;
        }
        /* converged by the estimate: the next pass checks the true residual */
    }
    res->relres = beta / bn;
out:
    free(h), free(cs), free(sn), free(g), free(y);
}

void gt_solve_prec_honest(const gt_solve_opts *o, gt_solve_result *res)
{
    if (res->outcome == GT_SOLVE_CONVERGED && !(res->true_relres <= 10 * o->tol)) {
        res->outcome = GT_SOLVE_BREAKDOWN;
        snprintf(res->msg, sizeof res->msg,
                 "the solver's residual reached %.3g but the true residual is %.3g, above tol %.3g: the "
                 "system may be singular or inconsistent, or too ill-conditioned for this tolerance",
                 res->relres, res->true_relres, o->tol);
    } else if (res->outcome == GT_SOLVE_STAGNATION || res->outcome == GT_SOLVE_BREAKDOWN) {
        size_t l = strlen(res->msg);
        if (!strstr(res->msg, "singular") && l + 60 < sizeof res->msg)
            snprintf(res->msg + l, sizeof res->msg - l, "; is the system singular or inconsistent?");
    }
}

void gt_solve_honest(const gt_solve_opts *o, int prec, gt_solve_result *res)
{
    if (res->outcome != GT_SOLVE_CONVERGED) return;
    gt_solve_prec_honest(o, res);
    size_t l = strlen(res->msg);
    if (res->outcome != GT_SOLVE_CONVERGED && prec == 4 && l + 70 < sizeof res->msg)
        snprintf(res->msg + l, sizeof res->msg - l, " (single precision: try --precision double or a larger --tol)");
}

gt_status gt_solve_prec_cpu(const gt_csr *a, const gt_precond *m, const double *b, double *x,
                            const gt_solve_opts *o, int restart, gt_solve_result *res)
{
    memset(res, 0, sizeof *res);
    GT_TRY(gt_solve_check(a, a->nrows, o->method));
    if (!gt_solve_method_takes_precond(o->method))
        return gt_fail(GT_ERR_USAGE, "%s takes no preconditioner", gt_solve_method_name(o->method));
    if (m->on_gpu || m->n != a->nrows)
        return gt_fail(GT_ERR_USAGE, "the preconditioner does not fit this CPU solve");
    int64_t n = a->nrows;
    int mr = restart > 0 ? restart : GT_GMRES_RESTART;
    if (o->method == GT_SOLVE_GMRES && mr > n) mr = (int)n;
    enum { NW = 7 };
    double *w[NW] = {0}, *r = malloc((size_t)n * sizeof *r), *V = NULL;
    bool ok = r != NULL;
    for (int k = 0; k < NW; k++) ok = ok && (w[k] = calloc((size_t)n, sizeof *w[k])) != NULL;
    if (ok && o->method == GT_SOLVE_GMRES) ok = (V = malloc((size_t)(mr + 1) * (size_t)n * sizeof *V)) != NULL;
    if (!ok) {
        for (int k = 0; k < NW; k++) free(w[k]);
        free(r), free(V);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    double bn = gt_vec_norm2(b, n);
    if (bn == 0) bn = 1; /* b = 0: absolute residual */
    gt_solve_track tr = {INFINITY, 0, o->stagnation > 0 ? o->stagnation : 1000};
    double rel = resid(a, b, x, r) / bn;
    res->relres = rel;
    if (rel <= o->tol) res->outcome = GT_SOLVE_CONVERGED;
    else if (!isfinite(rel)) {
        res->outcome = GT_SOLVE_NAN;
        snprintf(res->msg, sizeof res->msg, "the initial residual is NaN/Inf");
    } else
        switch (o->method) {
        case GT_SOLVE_PCG: pcg(a, m, x, o, bn, r, w, &tr, res); break;
        case GT_SOLVE_BICGSTAB: bicgstab(a, m, x, o, bn, r, w, &tr, res); break;
        case GT_SOLVE_GMRES: gmres(a, m, b, x, o, mr, bn, r, w, V, &tr, res); break;
        default: richardson(a, m, b, x, o, bn, r, w, &tr, res); break;
        }
    res->true_relres = resid(a, b, x, r) / bn;
    gt_solve_prec_honest(o, res);
    for (int k = 0; k < NW; k++) free(w[k]);
    free(r), free(V);
    return GT_OK;
}
