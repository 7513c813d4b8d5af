/* The CPU solvers, generic in REAL (double or float), included twice by
 * solvers.c with REAL, SFX(name) and SPMV defined. Vectors and the matrix
 * product in REAL; dot products and scalars in double (as on the GPU). */

static double SFX(dot)(const REAL *a, const REAL *b, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (double)a[i] * (double)b[i];
    return s;
}

static double SFX(norm2)(const REAL *v, int64_t n)
{
    return sqrt(SFX(dot)(v, v, n));
}

static void SFX(gs_sweep)(const gt_csr *a, const REAL *b, REAL *x, double omega)
{
    const REAL w = (REAL)omega;
    for (int64_t i = 0; i < a->nrows; i++) {
        REAL s = b[i], d = 0;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            if (a->col[p] == i) d = (REAL)a->val[p];
            else s -= (REAL)a->val[p] * x[a->col[p]];
        }
        x[i] = (1 - w) * x[i] + w * s / d;
    }
}

static gt_status SFX(solve_cpu)(const gt_csr *a, const REAL *b, REAL *x, const gt_solve_opts *o,
                                gt_solve_result *res)
{
    memset(res, 0, sizeof *res);
    GT_TRY(gt_solve_check(a, a->nrows, o->method));
    int64_t n = a->nrows;
    REAL *r = calloc((size_t)n, sizeof *r), *p = calloc((size_t)n, sizeof *p),
         *q = calloc((size_t)n, sizeof *q), *z = calloc((size_t)n, sizeof *z),
         *s = calloc((size_t)n, sizeof *s), *t = calloc((size_t)n, sizeof *t),
         *dinv = calloc((size_t)n, sizeof *dinv);
    if (!r || !p || !q || !z || !s || !t || !dinv) {
        free(r), free(p), free(q), free(z), free(s), free(t), free(dinv);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = a->ptr[i]; k < a->ptr[i + 1]; k++)
            if (a->col[k] == i && a->val[k] != 0) dinv[i] = (REAL)(1.0 / a->val[k]);
    double bn = SFX(norm2)(b, n);
    if (bn == 0) bn = 1; /* b = 0: absolute residual */
    track tr = {INFINITY, 0, o->stagnation > 0 ? o->stagnation : 1000};
    SPMV(a, x, q);
    for (int64_t i = 0; i < n; i++) r[i] = b[i] - q[i];
    double rel = SFX(norm2)(r, n) / bn;
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
                for (int64_t i = 0; i < n; i++) x[i] += (REAL)tau * r[i];
            else
                for (int64_t i = 0; i < n; i++) x[i] += (REAL)o->omega * dinv[i] * r[i];
            SPMV(a, x, q);
            for (int64_t i = 0; i < n; i++) r[i] = b[i] - q[i];
            if (step_done(o, res, &tr, it, SFX(norm2)(r, n) / bn)) break;
        }
        if (o->method == GT_SOLVE_JACOBI) res->tau = 0;
        break;
    }
    case GT_SOLVE_GS:
        for (int64_t it = 1;; it++) {
            SFX(gs_sweep)(a, b, x, o->omega);
            SPMV(a, x, q);
            for (int64_t i = 0; i < n; i++) r[i] = b[i] - q[i];
            if (step_done(o, res, &tr, it, SFX(norm2)(r, n) / bn)) break;
        }
        break;
    case GT_SOLVE_CG:
    case GT_SOLVE_PCG: {
        bool pre = o->method == GT_SOLVE_PCG;
        for (int64_t i = 0; i < n; i++) z[i] = pre ? dinv[i] * r[i] : r[i], p[i] = z[i];
        double rz = SFX(dot)(r, z, n);
        for (int64_t it = 1;; it++) {
            SPMV(a, p, q);
            double pq = SFX(dot)(p, q, n);
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
            for (int64_t i = 0; i < n; i++) x[i] += (REAL)alpha * p[i], r[i] -= (REAL)alpha * q[i];
            for (int64_t i = 0; i < n; i++) z[i] = pre ? dinv[i] * r[i] : r[i];
            double rz2 = SFX(dot)(r, z, n);
            if (step_done(o, res, &tr, it, SFX(norm2)(r, n) / bn)) break;
            double beta = rz2 / rz;
            rz = rz2;
            for (int64_t i = 0; i < n; i++) p[i] = z[i] + (REAL)beta * p[i];
        }
        break;
    }
    case GT_SOLVE_BICGSTAB: {
        /* unpreconditioned BiCGStab (van der Vorst); r0hat = r0 kept in t.
           rho = 0, r0'v = 0 or a near-zero t's (gt_bicg_tiny, solve_track.h)
           end the solve as a breakdown */
        const double tiny = sizeof(REAL) == 4 ? GT_BICG_TINY_F32 : GT_BICG_TINY;
        REAL *rh = t;
        memcpy(rh, r, (size_t)n * sizeof *r);
        double rho = 1, alpha = 1, w = 1, rr = SFX(dot)(rh, rh, n);
        memset(p, 0, (size_t)n * sizeof *p);
        memset(z, 0, (size_t)n * sizeof *z); /* z = v */
        REAL *v = z, *tt = dinv;             /* reuse dinv as t vector (not needed) */
        for (int64_t it = 1;; it++) {
            double rho2 = SFX(dot)(rh, r, n);
            if (rho2 == 0) {
                res->outcome = GT_SOLVE_BREAKDOWN;
                res->iters = it;
                snprintf(res->msg, sizeof res->msg,
                         "BiCGStab breakdown at iteration %lld (rho = r0'r = 0: r is orthogonal to r0; "
                         "residual %.3g)", (long long)it, sqrt(rr) / bn);
                break;
            }
            double beta = (rho2 / rho) * (alpha / w);
            rho = rho2;
            for (int64_t i = 0; i < n; i++) p[i] = r[i] + (REAL)beta * (p[i] - (REAL)w * v[i]);
            SPMV(a, p, v);
            double rv = SFX(dot)(rh, v, n);
            if (rv == 0) {
                res->outcome = GT_SOLVE_BREAKDOWN;
                res->iters = it;
                snprintf(res->msg, sizeof res->msg, "BiCGStab breakdown at iteration %lld (r0'v = 0; residual %.3g)",
                         (long long)it, sqrt(rr) / bn);
                break;
            }
            alpha = rho / rv;
            for (int64_t i = 0; i < n; i++) s[i] = r[i] - (REAL)alpha * v[i];
            double ss = SFX(dot)(s, s, n), sn = sqrt(ss) / bn;
            if (sn <= o->tol) {
                for (int64_t i = 0; i < n; i++) x[i] += (REAL)alpha * p[i];
                step_done(o, res, &tr, it, sn);
                break;
            }
            SPMV(a, s, tt);
            double ts = SFX(dot)(tt, s, n), tt2 = SFX(dot)(tt, tt, n);
            if (gt_bicg_tiny(ts, tt2, ss, tiny)) {
                /* the minimal-residual step makes no progress: A s is orthogonal to s */
                for (int64_t i = 0; i < n; i++) x[i] += (REAL)alpha * p[i];
                res->outcome = GT_SOLVE_BREAKDOWN;
                res->iters = it;
                res->relres = sn;
                snprintf(res->msg, sizeof res->msg,
                         "BiCGStab breakdown at iteration %lld (omega = t's/t't ~ 0: A s is orthogonal to s to "
                         "rounding; residual %.3g): try --method gmres or a preconditioner", (long long)it, sn);
                break;
            }
            w = ts / tt2;
            for (int64_t i = 0; i < n; i++) x[i] += (REAL)alpha * p[i] + (REAL)w * s[i], r[i] = s[i] - (REAL)w * tt[i];
            rr = SFX(dot)(r, r, n);
            if (step_done(o, res, &tr, it, sqrt(rr) / bn)) break;
        }
        break;
    }
    default:
        break;
    }
done:
    SPMV(a, x, q);
    for (int64_t i = 0; i < n; i++) r[i] = b[i] - q[i];
    res->true_relres = SFX(norm2)(r, n) / bn;
    free(r), free(p), free(q), free(z), free(s), free(t), free(dinv);
    return GT_OK;
}
