/* Benchmark of the GPU AMG (not a test): set-up per stage, one V-cycle
 * (mean of 20), and AMG-PCG to 1e-8 (set-up + solve) on the 7-point
 * Laplacian n^3 or a Matrix Market file, with the CPU reference's set-up and
 * iterations beside it when asked.
 *
 *   bench_amg [n | A.mtx] [--smoother chebyshev|l1-jacobi|mcgs] [--theta t]
  *             [--sweeps k] [--coarse m] [--coarsening auto|aggregation|grid] [--cpu] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/timer.h"
#include "sparse/amg.h"
#include "sparse/laplace.h"
#include "sparse/sparse.h"
#include "sparse/sparse_gpu.h"
#include "amg_testmesh.h"

static double dot(const double *x, const double *y, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

/* PCG with the CPU preconditioner, x from 0 */
static void cpu_pcg(const gt_csr *a, const gt_precond *pc, const double *b, double *x, double tol, int maxit, int *iters,
                    double *relres)
{
    int64_t n = a->nrows;
    double *r = malloc((size_t)n * 8), *z = malloc((size_t)n * 8), *p = malloc((size_t)n * 8), *q = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) x[i] = 0, r[i] = b[i];
    double bn = sqrt(dot(b, b, n)), rr = bn * bn;
    pc->apply(pc->ctx, r, z, NULL);
    memcpy(p, z, (size_t)n * 8);
    double rz = dot(r, z, n);
    int it = 0;
    while (it < maxit) {
        gt_csr_spmv(a, p, q);
        double alpha = rz / dot(p, q, n);
        for (int64_t i = 0; i < n; i++) x[i] += alpha * p[i], r[i] -= alpha * q[i];
        it++;
        rr = dot(r, r, n);
        if (sqrt(rr) <= tol * bn) break;
        pc->apply(pc->ctx, r, z, NULL);
        double rz2 = dot(r, z, n);
        for (int64_t i = 0; i < n; i++) p[i] = z[i] + rz2 / rz * p[i];
        rz = rz2;
    }
    *iters = it, *relres = sqrt(rr) / bn;
    free(r), free(z), free(p), free(q);
}

int main(int argc, char **argv)
{
    const char *src = "160";
    gt_precond_opts o;
    gt_precond_opts_init(&o);
    int cpu = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--smoother") && i + 1 < argc) {
            const char *s = argv[++i];
            o.amg_smoother = !strcmp(s, "l1-jacobi") ? GT_AMG_SMOOTH_L1JACOBI : !strcmp(s, "mcgs") ? GT_AMG_SMOOTH_MCGS
                                                                                                  : GT_AMG_SMOOTH_CHEBYSHEV;
        } else if (!strcmp(argv[i], "--theta") && i + 1 < argc) o.amg_theta = atof(argv[++i]);
        else if (!strcmp(argv[i], "--sweeps") && i + 1 < argc) o.amg_sweeps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--omega") && i + 1 < argc) o.amg_omega = atof(argv[++i]);
        else if (!strcmp(argv[i], "--coarse") && i + 1 < argc) o.amg_coarse_size = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--coarsening") && i + 1 < argc) {
            const char *c = argv[++i];
            o.amg_coarsening = !strcmp(c, "grid") ? GT_AMG_COARSEN_GRID
                               : !strcmp(c, "aggregation") ? GT_AMG_COARSEN_AGGREGATION : GT_AMG_COARSEN_AUTO;
        } else if (!strcmp(argv[i], "--cpu")) cpu = 1;
        else src = argv[i];
    }
    gt_csr a;
    gt_sparse_matrix m = {0};
    char *end = NULL;
    long nx = strtol(src, &end, 10);
    if (!strncmp(src, "tet", 3) && atol(src + 3) > 2) {
        if (gt_test_tet_laplacian(atol(src + 3), &a) != GT_OK) return fprintf(stderr, "bench_amg: %s\n", gt_errmsg()), 1;
    } else if (end && *end == 0 && nx > 0) {
        if (gt_laplacian(7, nx, nx, nx, &a) != GT_OK) return fprintf(stderr, "bench_amg: %s\n", gt_errmsg()), 1;
    } else {
        if (gt_sparse_load(src, NULL, &m) != GT_OK) return fprintf(stderr, "bench_amg: %s\n", gt_errmsg()), 1;
        a = m.a;
    }
    int64_t n = a.nrows;
    printf("matrix %s: %lld rows, %lld nonzeros\n", src, (long long)n, (long long)a.nnz);
    double *r = malloc((size_t)n * 8), *z = malloc((size_t)n * 8), *b = malloc((size_t)n * 8), *x = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) x[i] = 1, r[i] = gt_power_start(i);
    gt_csr_spmv(&a, x, b);
    gt_amg_gpu_result res;
    /* a first run warms up the context and the kernels */
    int rc = 0;
    if (gt_amg_gpu_run(&a, &o, NULL, r, z, 2, &res) != GT_OK || gt_amg_gpu_run(&a, &o, NULL, r, z, 20, &res) != GT_OK) {
        fprintf(stderr, "bench_amg: %s\n", gt_errmsg());
        rc = 4;
    } else {
        printf("%s", res.summary);
        printf("gpu set-up %.2f ms, V-cycle %.3f ms\n", res.setup_ms, res.vcycle_ms);
        if (gt_amg_gpu_pcg(&a, &o, b, x, 1e-8, 200, &res) != GT_OK) {
            fprintf(stderr, "bench_amg: %s\n", gt_errmsg());
            rc = 4;
        } else
            printf("gpu AMG-PCG: %d iterations to %.2e, set-up %.2f ms + solve %.2f ms = %.2f ms (%.3f ms/iteration)\n",
                   res.pcg_iters, res.pcg_relres, res.setup_ms, res.pcg_ms, res.setup_ms + res.pcg_ms,
                   res.pcg_iters ? res.pcg_ms / res.pcg_iters : 0.0);
    }
    /* the library's solvers as sparsesolve runs them (gt_solve_gpu_prec with
       the AMG preconditioner, gt_solve_gpu's fused Jacobi-PCG; DIA SpMV), each
       run twice in this process and the second timed: time to solution is the
       set-up plus the whole solve call (vectors, upload, iterations, x back) */
    if (rc == 0) {
        gt_solve_opts so;
        gt_solve_opts_init(&so);
        so.method = GT_SOLVE_PCG;
        so.tol = 1e-8;
        gt_solve_result sr;
        gt_precond info;
        double ms = 0, jms = 0;
        gt_status s = GT_OK;
        for (int k = 0; k < 2 && s == GT_OK; k++) {
            memset(x, 0, (size_t)n * 8);
            s = gt_solve_gpu_prec(&a, GT_SP_DIA, GT_PRECOND_AMG, &o, b, x, &so, 0, &sr, &info, &ms);
        }
        if (s == GT_OK)
            printf("library AMG-PCG: %lld iterations, true relres %.2e, set-up %.2f ms + solve %.2f ms (loop %.2f) = "
                   "%.2f ms\n", (long long)sr.iters, sr.true_relres, info.setup_ms, ms, sr.loop_ms,
                   info.setup_ms + ms);
        gt_solve_result jr;
        for (int k = 0; k < 2 && s == GT_OK; k++) {
            memset(x, 0, (size_t)n * 8);
            s = gt_solve_gpu(&a, GT_SP_DIA, 8, b, x, &so, &jr, &jms);
        }
        if (s == GT_OK)
            printf("library Jacobi-PCG: %lld iterations, true relres %.2e, solve %.2f ms (loop %.2f); AMG over Jacobi: "
                   "%.2fx (set-up + loop against loop), %.2fx (set-up + solve call against solve call)\n",
                   (long long)jr.iters, jr.true_relres, jms, jr.loop_ms, jr.loop_ms / (info.setup_ms + sr.loop_ms),
                   jms / (info.setup_ms + ms));
        if (s != GT_OK) fprintf(stderr, "bench_amg: %s\n", gt_errmsg()), rc = 4;
    }
    if (cpu) {
        gt_precond pc;
        o.verbose = true;
        if (gt_amg_precond_cpu(&a, &o, &pc) != GT_OK) return fprintf(stderr, "bench_amg: %s\n", gt_errmsg()), 3;
        double t0 = gt_now_ms();
        pc.apply(pc.ctx, r, z, NULL);
        printf("%scpu V-cycle %.2f ms\n", pc.summary, gt_now_ms() - t0);
        int it = 0;
        double relres = 0;
        t0 = gt_now_ms();
        cpu_pcg(&a, &pc, b, x, 1e-8, 200, &it, &relres);
        printf("cpu AMG-PCG: %d iterations to %.2e, set-up %.2f ms + solve %.2f ms\n", it, relres, pc.setup_ms,
               gt_now_ms() - t0);
        pc.destroy(pc.ctx);
    }
    free(r), free(z), free(b), free(x);
    if (m.path || m.a.ptr) gt_sparse_matrix_free(&m);
    else gt_csr_free(&a);
    return rc;
}
