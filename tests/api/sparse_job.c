/* The sparsesolve jobs as an outside C program uses them (built against the
 * installed libcore by run-api-tests.sh): load a real matrix, solve with the
 * default choices, and check what was written against A and b; then a solve
 * that stops at its iteration limit must fail and write nothing. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/timer.h"
#include "io/mtx.h"
#include "sparse/sparse.h"

#include "api_test.h"


static long count_history_lines(const char *path, double *last)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[256];
    long n = 0;
    while (fgets(line, sizeof line, f)) {
        long it;
        double r;
        if (line[0] == '#') continue;
        if (sscanf(line, "%ld %lf", &it, &r) != 2 || it != n + 1) {
            fclose(f);
            return -1;
        }
        *last = r, n++;
    }
    fclose(f);
    return n;
}

static bool has_stage(const gt_timings *tm, const char *name)
{
    for (int i = 0; i < tm->n; i++)
        if (strcmp(tm->stage[i].name, name) == 0) return tm->stage[i].count == 1;
    return false;
}

int main(void)
{
    gt_set_progname("sparse_job");
    const char *apath = api_testdata("sparse/poisson4009_sub1000.mtx");
    if (!api_begin("sparse_job", apath)) return 1;
    const char *xpath = api_tmp("x.mtx"), *hpath = api_tmp("history.txt"), *x3path = api_tmp("x3.mtx");

    gt_timings tm;
    gt_timings_init(&tm);
    gt_sparse_matrix m;
    gt_status s = gt_sparse_load(apath, &tm, &m);
    if (s != GT_OK) {
        gt_report(s);
        api_fails++;
        return api_end("sparse_job");
    }
    CHECK(m.a.nrows == 1000 && m.a.ncols == 1000, "%lld x %lld", (long long)m.a.nrows, (long long)m.a.ncols);
    CHECK(m.info.symmetric, "the file's matrix is symmetric");

    /* defaults: pcg (A is symmetric), b = A*1, tol 1e-8 */
    gt_sparse_job job;
    gt_sparse_job_init(&job);
    job.output = xpath;
    job.history = hpath;
    job.progress = false;
    gt_sparse_result res;
    s = gt_sparse_solve(&m, &job, &tm, &res);
    CHECK(s == GT_OK, "solve: %s", gt_errmsg());
    CHECK(res.solved && res.solve.outcome == GT_SOLVE_CONVERGED, "outcome %d", (int)res.solve.outcome);
    CHECK(res.method == GT_SOLVE_PCG, "automatic method %s", gt_solve_method_name(res.method));
    CHECK(res.exact && isfinite(res.err_max), "no rhs: compared with all ones");
    CHECK(res.solve.iters > 1, "%lld iterations", (long long)res.solve.iters);
    CHECK(has_stage(&tm, "read") && has_stage(&tm, "analyze") && has_stage(&tm, "solve") && has_stage(&tm, "write"),
          "timings: %d stages", tm.n);

    /* x as written: ||A*1 - A x|| / ||A*1|| as reported, and near the tolerance
     * (the solver stops on its recurrence residual, the true one may be a
     * little larger) */
    double *x = NULL;
    int64_t nx = 0;
    s = gt_mtx_read_vector(xpath, &x, &nx);
    CHECK(s == GT_OK && nx == 1000, "x.mtx: %s (%lld entries)", gt_errmsg(), (long long)nx);
    if (s == GT_OK && nx == 1000) {
        double *one = malloc(1000 * sizeof *one), *b = malloc(1000 * sizeof *b), *ax = malloc(1000 * sizeof *ax);
        for (int i = 0; i < 1000; i++) one[i] = 1.0;
        gt_csr_spmv(&m.a, one, b);
        gt_csr_spmv(&m.a, x, ax);
        double r2 = 0, b2 = 0;
        for (int i = 0; i < 1000; i++) r2 += (b[i] - ax[i]) * (b[i] - ax[i]), b2 += b[i] * b[i];
        double rel = sqrt(r2 / b2);
        CHECK(rel <= 2e-8, "true relative residual of x.mtx %.3e", rel);
        CHECK(fabs(rel - res.solve.true_relres) <= 1e-3 * res.solve.true_relres + 1e-15,
              "residual %.6e, reported %.6e", rel, res.solve.true_relres);
        free(one), free(b), free(ax);
    }
    free(x);

    /* one history line per iteration, the last one below the tolerance */
    double last = INFINITY;
    long nh = count_history_lines(hpath, &last);
    CHECK(nh == res.solve.iters, "%ld history lines for %lld iterations", nh, (long long)res.solve.iters);
    CHECK(last <= 1e-8, "last residual %.3e", last);

    /* Jacobi with 3 iterations cannot converge: GT_ERR_RUNTIME, nothing written */
    gt_sparse_job_init(&job);
    job.method = GT_SOLVE_JACOBI;
    job.solve.maxiter = 3;
    job.output = x3path;
    job.progress = false;
    s = gt_sparse_solve(&m, &job, NULL, &res);
    CHECK(s == GT_ERR_RUNTIME, "status %d", (int)s);
    CHECK(res.solved && res.solve.outcome == GT_SOLVE_MAXITER && res.solve.iters == 3, "outcome %d after %lld",
          (int)res.solve.outcome, (long long)res.solve.iters);
    CHECK(!api_exists(x3path), "x3.mtx written although the solve failed");

    gt_sparse_matrix_free(&m);
    return api_end("sparse_job");
}
