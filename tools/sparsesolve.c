/* sparsesolve: solve A x = b for a sparse Matrix Market matrix with an
 * iterative method on the GPU (or the CPU reference); sparse format choice,
 * structure report (--info) and SpMV benchmark (--spmv-bench). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/device.h"
#include "common/log.h"
#include "common/output.h"
#include "common/progress.h"
#include "common/status.h"
#include "common/timer.h"
#include "io/mtx.h"
#include "sparse/sparse.h"
#include "sparse/sparse_gpu.h"

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: sparsesolve [options] A.mtx [-b b.mtx] [--x0 x0.mtx] -o x.mtx\n"
            "       sparsesolve --info A.mtx\n"
            "       sparsesolve --spmv-bench N A.mtx\n"
            "Solve A x = b with an iterative method; A is a square sparse matrix in\n"
            "Matrix Market format. Without -b, b = A*1 (the exact solution is all ones)\n"
            "and the error of x is reported too.\n"
            "\n"
            "Options:\n"
            "  -o, --output FILE       write the solution x (Matrix Market array; - = stdout)\n"
            "  -b, --rhs FILE          right-hand side b (n x 1 array or coordinate)\n"
            "      --x0 FILE           initial guess (default 0)\n"
            "  -m, --method M          cg|pcg|bicgstab|jacobi|gauss-seidel|richardson\n"
            "                          (default: pcg with a Jacobi preconditioner when A is\n"
            "                          symmetric, bicgstab otherwise)\n"
            "      --tol T             relative residual ||b-Ax||/||b|| to reach (default 1e-8)\n"
            "      --maxiter N         iteration limit (default 10000)\n"
            "      --omega W           relaxation for jacobi / gauss-seidel, (0,2) (default 1)\n"
            "      --tau T             Richardson step (default: lmax from 100 power iterations on A,\n"
            "                          or sigma_max on A^T A when A is not symmetric, x1.05, capped\n"
            "                          by Gershgorin; then 2/(lmin+lmax), 1.9/lmax when symmetric and\n"
            "                          the discs reach 0, else 1/lmax)\n"
            "      --precision P       double|single (arithmetic of the solver, GPU or CPU; default double)\n"
            "      --format F          auto|coo|csr|ell|dia|hyb (default auto: DIA for few\n"
            "                          well-filled diagonals, ELL for even rows, HYB with the\n"
            "                          Bell & Garland width for mostly even rows, CSR otherwise;\n"
            "                          -v says why). The GPU solvers run COO and HYB as CSR.\n"
            "      --info              print size, nnz, symmetry, row lengths, diagonals and\n"
            "                          the bytes of each format (single and double), then exit\n"
            "                          unless -o is given\n"
            "      --spmv-bench N      time N SpMVs with every kernel (ms, GB/s, GFLOP/s),\n"
            "                          then exit unless -o is given\n"
            "      --history FILE      write 'iteration relative-residual' lines\n"
            "      --check-every N     GPU: iterations between convergence checks (default 16)\n"
            "\n" GT_COMMON_HELP
            "\n"
            "Exit status: 0 converged; 1 not converged (iteration limit, breakdown, NaN,\n"
            "stagnation, CG on a matrix that is not positive definite) or I/O failure;\n"
            "2 usage; 3 bad input (not square, wrong b length, zero diagonal, empty);\n"
            "4 GPU unavailable.\n");
}

enum {
    OPT_X0 = GT_OPT_TOOL_BASE,
    OPT_TOL,
    OPT_MAXITER,
    OPT_OMEGA,
    OPT_TAU,
    OPT_PRECISION,
    OPT_FORMAT,
    OPT_INFO,
    OPT_BENCH,
    OPT_HISTORY,
    OPT_CHECK
};

typedef struct {
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

static gt_status read_matrix(const char *path, gt_csr *a, bool *file_symmetric)
{
    gt_mtx m;
    memset(&m, 0, sizeof m);
    GT_TRY(gt_mtx_read(path, &m));
    gt_status s;
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
        s = gt_csr_from_triplets(m.nrows, m.ncols, m.nnz, m.row, m.col, m.val, a);
    }
    *file_symmetric = m.symmetry == GT_MTX_SYMMETRIC;
    gt_mtx_free(&m);
    if (s != GT_OK) gt_errmsg_prefix("%s", gt_in_name(path));
    return s;
}

static gt_status write_history(const char *path, const hist_ctx *h)
{
    gt_out o;
    GT_TRY(gt_out_open(&o, path));
    fprintf(o.fp, "# iteration relative_residual\n");
    for (int64_t k = 0; k < h->n; k++) fprintf(o.fp, "%lld %.17g\n", (long long)k + 1, h->h[k]);
    return gt_out_commit(&o);
}

static int run_bench(const gt_csr *a, const gt_sp_info *info, int reps, int prec, gt_device_kind dev)
{
    printf("SpMV benchmark: %lld x %lld, nnz %lld, %s precision, %d repetitions (%s)\n",
           (long long)a->nrows, (long long)a->ncols, (long long)a->nnz, prec == 8 ? "double" : "single", reps,
           dev == GT_DEVICE_CUDA ? "cuda" : "cpu");
    printf("%-11s %10s %12s %10s %10s %11s\n", "kernel", "ms", "bytes", "GB/s", "GFLOP/s", "convert ms");
    for (int k = 0; k < GT_SPMV_K_N; k++) {
        gt_spmv_kind kind = (gt_spmv_kind)k;
        if (dev == GT_DEVICE_CUDA) {
            gt_spmv_bench b;
            gt_status s = gt_spmv_gpu_bench(a, kind, prec, reps, &b);
            if (s == GT_ERR_GPU) return gt_report(s);
            if (s != GT_OK) {
                printf("%-11s %s\n", gt_spmv_kind_name(kind), gt_errmsg());
                continue;
            }
            printf("%-11s %10.4f %12zu %10.1f %10.2f %11.3f\n", gt_spmv_kind_name(kind), b.ms, b.bytes, b.gbs,
                   b.gflops, b.convert_ms);
        } else {
            /* CPU reference: one kernel per format */
            if (kind == GT_SPMV_K_CSR_VECTOR || kind == GT_SPMV_K_CSR_MERGE) continue;
            gt_sp_format f = gt_spmv_kind_format(kind);
            double *x = malloc((size_t)(a->ncols + 1) * 8), *y = malloc((size_t)(a->nrows + 1) * 8);
            for (int64_t j = 0; j < a->ncols; j++) x[j] = 1.0;
            gt_coo c = {0};
            gt_ell e = {0};
            gt_dia d = {0};
            gt_hyb h = {0};
            gt_status s = GT_OK;
            if (f == GT_SP_COO) s = gt_csr_to_coo(a, &c);
            if (f == GT_SP_ELL) s = gt_csr_to_ell(a, &e);
            if (f == GT_SP_DIA) s = gt_csr_to_dia(a, info->bytes[GT_SP_CSR][1] * 20 + (64u << 20), &d);
            if (f == GT_SP_HYB) s = gt_csr_to_hyb(a, -1, &h);
            if (s != GT_OK) {
                printf("%-11s %s\n", gt_spmv_kind_name(kind), gt_errmsg());
                free(x), free(y);
                continue;
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
            size_t bytes = info->bytes[f][1] + (size_t)(a->nrows + a->ncols) * 8;
            printf("%-11s %10.4f %12zu %10.1f %10.2f %11s\n", gt_sp_format_name(f), ms, bytes,
                   bytes / (ms * 1e6), 2.0 * (double)a->nnz / (ms * 1e6), "-");
            gt_coo_free(&c), gt_ell_free(&e), gt_dia_free(&d), gt_hyb_free(&h);
            free(x), free(y);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    gt_set_progname("sparsesolve");
    gt_common_opts co;
    gt_common_opts_init(&co);
    gt_solve_opts so;
    gt_solve_opts_init(&so);
    const char *out = NULL, *bpath = NULL, *x0path = NULL, *histpath = NULL;
    int method = -1, prec = 8, format = 0, info = 0, bench = 0;
    static const char *const methods[] = {"cg", "pcg", "bicgstab", "jacobi", "gauss-seidel", "richardson"};
    static const char *const formats[] = {"auto", "coo", "csr", "ell", "dia", "hyb"};
    static const char *const precs[] = {"single", "double"};
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'},   {"rhs", required_argument, 0, 'b'},
        {"x0", required_argument, 0, OPT_X0},    {"method", required_argument, 0, 'm'},
        {"tol", required_argument, 0, OPT_TOL},  {"maxiter", required_argument, 0, OPT_MAXITER},
        {"omega", required_argument, 0, OPT_OMEGA}, {"tau", required_argument, 0, OPT_TAU},
        {"precision", required_argument, 0, OPT_PRECISION}, {"format", required_argument, 0, OPT_FORMAT},
        {"info", no_argument, 0, OPT_INFO},      {"spmv-bench", required_argument, 0, OPT_BENCH},
        {"history", required_argument, 0, OPT_HISTORY}, {"check-every", required_argument, 0, OPT_CHECK},
        GT_COMMON_LONGOPTS,                      {0, 0, 0, 0}};
    int opt;
    gt_status s = GT_OK;
    while ((opt = getopt_long(argc, argv, "o:b:m:" GT_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        long lv;
        int iv;
        switch (opt) {
        case 'o': out = optarg; break;
        case 'b': bpath = optarg; break;
        case OPT_X0: x0path = optarg; break;
        case 'm': s = gt_parse_enum("--method", optarg, methods, 6, &method); break;
        case OPT_TOL: s = gt_parse_double("--tol", optarg, 1e-300, 1.0, &so.tol); break;
        case OPT_MAXITER:
            s = gt_parse_long("--maxiter", optarg, 1, 1000000000L, &lv);
            so.maxiter = lv;
            break;
        case OPT_OMEGA: s = gt_parse_double("--omega", optarg, 1e-6, 1.999999, &so.omega); break;
        case OPT_TAU: s = gt_parse_double("--tau", optarg, 1e-300, 1e300, &so.tau); break;
        case OPT_PRECISION:
            s = gt_parse_enum("--precision", optarg, precs, 2, &iv);
            prec = iv == 0 ? 4 : 8;
            break;
        case OPT_FORMAT: s = gt_parse_enum("--format", optarg, formats, 6, &format); break;
        case OPT_INFO: info = 1; break;
        case OPT_BENCH: s = gt_parse_int("--spmv-bench", optarg, 1, 1000000, &bench); break;
        case OPT_HISTORY: histpath = optarg; break;
        case OPT_CHECK: s = gt_parse_int("--check-every", optarg, 1, 64, &so.check_every); break;
        case 'h': usage(stdout); return 0;
        case '?': return gt_report(gt_usage_error("try 'sparsesolve --help'"));
        default: {
            gt_cli_result r = gt_common_option(&co, opt, optarg);
            if (r == GT_CLI_EXIT_OK) return 0;
            if (r == GT_CLI_ERROR) return gt_report(GT_ERR_USAGE);
            if (r == GT_CLI_NOT_COMMON) return gt_report(gt_usage_error("unhandled option"));
        }
        }
        if (s != GT_OK) return gt_report(s);
    }
    if (optind >= argc) return gt_report(gt_usage_error("missing the matrix file A.mtx (try --help)"));
    if (optind != argc - 1)
        return gt_report(gt_usage_error("one matrix file expected, got %d operands", argc - optind));
    if (!out && !info && !bench)
        return gt_report(gt_usage_error("missing -o FILE for the solution (or --info / --spmv-bench)"));
    const char *apath = argv[optind];

    gt_timings tm;
    gt_timings_init(&tm);
    double t0 = gt_now_ms();
    gt_csr a;
    bool file_sym = false;
    s = read_matrix(apath, &a, &file_sym);
    if (s != GT_OK) return gt_report(s);
    gt_timings_add(&tm, "read", gt_now_ms() - t0);
    if (a.nrows == 0 || a.ncols == 0 || a.nnz == 0) {
        s = gt_fail(GT_ERR_DATA, "%s: the matrix is empty (%lldx%lld, %lld nonzeros)", gt_in_name(apath),
                    (long long)a.nrows, (long long)a.ncols, (long long)a.nnz);
        gt_csr_free(&a);
        return gt_report(s);
    }
    t0 = gt_now_ms();
    gt_sp_info in;
    s = gt_sp_analyze(&a, &in);
    if (s != GT_OK) return gt_report(s);
    gt_timings_add(&tm, "analyze", gt_now_ms() - t0);
    if (info) gt_sp_print_info(&in, stdout);

    gt_device_kind dev;
    if (bench || out) {
        s = gt_device_choose(co.device, co.gpu, &dev);
        if (s != GT_OK) return gt_report(s);
    }
    if (bench) {
        int rc = run_bench(&a, &in, bench, prec, dev);
        if (rc || !out) {
            gt_csr_free(&a);
            return rc;
        }
    }
    if (!out) {
        gt_csr_free(&a);
        return 0;
    }

    /* method and format */
    so.method = method >= 0 ? (gt_solve_method)method : (in.symmetric ? GT_SOLVE_PCG : GT_SOLVE_BICGSTAB);
    if (method < 0)
        gt_info("method %s: the matrix is %s", gt_solve_method_name(so.method),
                in.symmetric ? "symmetric (Jacobi-preconditioned CG)" : "not symmetric (BiCGStab)");
    gt_sp_format fmt;
    char why[256];
    if (format == 0) {
        fmt = gt_sp_choose_format(&in, why, sizeof why);
        gt_info("format %s: %s", gt_sp_format_name(fmt), why);
    } else {
        fmt = (gt_sp_format)(format - 1);
    }

    /* b, x0 */
    int64_t n = a.nrows;
    double *b = NULL, *x = NULL;
    int64_t nb = n;
    bool exact = bpath == NULL;
    if (bpath) {
        s = gt_mtx_read_vector(bpath, &b, &nb);
        if (s != GT_OK) return gt_report(s);
    }
    s = gt_solve_check(&a, nb, so.method);
    if (s != GT_OK) {
        gt_errmsg_prefix("%s", gt_in_name(apath));
        return gt_report(s);
    }
    if (!b) {
        double *one = malloc((size_t)n * 8);
        b = malloc((size_t)n * 8);
        if (!one || !b) return gt_report(gt_fail(GT_ERR_RUNTIME, "out of memory"));
        for (int64_t i = 0; i < n; i++) one[i] = 1.0;
        gt_csr_spmv(&a, one, b);
        free(one);
    }
    if (x0path) {
        int64_t nx = 0;
        s = gt_mtx_read_vector(x0path, &x, &nx);
        if (s != GT_OK) return gt_report(s);
        if (nx != n)
            return gt_report(gt_fail(GT_ERR_DATA, "%s: x0 has %lld entries but the matrix has %lld rows",
                                     gt_in_name(x0path), (long long)nx, (long long)n));
    } else {
        x = calloc((size_t)n, sizeof *x);
        if (!x) return gt_report(gt_fail(GT_ERR_RUNTIME, "out of memory"));
    }

    hist_ctx hc = {0};
    gt_progress prog;
    bool show = gt_progress_enabled();
    if (show) {
        gt_progress_start(&prog, gt_solve_method_name(so.method), 0);
        hc.prog = &prog;
    }
    so.on_iter = on_iter, so.ctx = &hc;
    gt_solve_result res;
    double ms = 0;
    t0 = gt_now_ms();
    if (dev == GT_DEVICE_CUDA) {
        s = gt_solve_gpu(&a, fmt, prec, b, x, &so, &res, &ms);
    } else {
        s = gt_solve_cpu_prec(&a, prec, b, x, &so, &res);
        ms = gt_now_ms() - t0;
    }
    if (show) gt_progress_end(&prog);
    if (s != GT_OK) return gt_report(s);
    gt_timings_add(&tm, "solve", ms);
    if (histpath) {
        s = write_history(histpath, &hc);
        if (s != GT_OK) return gt_report(s);
    }
    const char *fmt_used = dev == GT_DEVICE_CUDA
                               ? (so.method == GT_SOLVE_GS ? "csr"
                                  : (fmt == GT_SP_DIA || fmt == GT_SP_ELL) ? gt_sp_format_name(fmt) : "csr")
                               : "csr";
    gt_notice("%s (%s, %s, %s): %s after %lld iterations, true relative residual %.3e, %.3f ms (%.4f ms/iter)",
              gt_solve_method_name(so.method), fmt_used, prec == 8 ? "double" : "single",
              gt_device_name(dev), res.outcome == GT_SOLVE_CONVERGED ? "converged" : "stopped",
              (long long)res.iters, res.true_relres, ms, res.iters ? ms / (double)res.iters : 0.0);
    if (so.method == GT_SOLVE_RICHARDSON) gt_info("Richardson tau %.6g", res.tau);
    if (so.method == GT_SOLVE_GS && res.ncolours) gt_info("multicolour Gauss-Seidel: %d colours", res.ncolours);
    if (exact) {
        double emax = 0, e2 = 0;
        for (int64_t i = 0; i < n; i++) {
            double e = fabs(x[i] - 1.0);
            if (e > emax || isnan(e)) emax = e;
            e2 += e * e;
        }
        gt_notice("error against the exact solution (all ones): max %.3e, rms %.3e", emax, sqrt(e2 / (double)n));
    }
    int rc = 0;
    if (res.outcome != GT_SOLVE_CONVERGED) {
        rc = gt_report(gt_fail(GT_ERR_RUNTIME, "%s", res.msg));
    } else {
        char comment[200];
        snprintf(comment, sizeof comment, "sparsesolve %s: %lld iterations, relative residual %.3e",
                 gt_solve_method_name(so.method), (long long)res.iters, res.true_relres);
        t0 = gt_now_ms();
        s = gt_mtx_write_vector(out, x, n, comment);
        if (s != GT_OK) rc = gt_report(s);
        gt_timings_add(&tm, "write", gt_now_ms() - t0);
    }
    if (co.timings) gt_timings_print(&tm, stderr, "sparsesolve");
    free(hc.h), free(b), free(x), gt_csr_free(&a);
    return rc;
}
