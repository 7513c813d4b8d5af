/* sparsesolve: solve A x = b for a sparse Matrix Market matrix with an
 * iterative method on the GPU (or the CPU reference); sparse format choice,
 * structure report (--info) and SpMV benchmark (--spmv-bench). */
#include <stdio.h>

#include "common/cli.h"
#include "common/device.h"
#include "common/guard.h"
#include "common/log.h"
#include "common/trace.h"
#include "common/status.h"
#include "common/timer.h"
#include "sparse/precond.h"
#include "sparse/sparse.h"

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
            "  -o, --output FILE       write the solution x (Matrix Market array; - = stdout);\n"
            "                          never one of the inputs\n"
            "      --out-format mtx    write Matrix Market even where FILE's extension names\n"
            "                          another format (refused otherwise)\n"
            "  -b, --rhs FILE          right-hand side b (n x 1 array or coordinate)\n"
            "      --x0 FILE           initial guess (default 0)\n"
            "  -m, --method M          cg|pcg|bicgstab|gmres|jacobi|gauss-seidel|richardson|amg\n"
            "                          (default: pcg with a Jacobi preconditioner when A is\n"
            "                          symmetric; otherwise bicgstab, or gmres when --precond\n"
            "                          is given; amg: the AMG V-cycle as the solver)\n"
            "      --precond P         none|jacobi|ic0|ilu0|amg: the preconditioner of pcg,\n"
            "                          bicgstab, gmres and richardson (default: jacobi for pcg,\n"
            "                          none otherwise)\n"
            "      --restart M         GMRES(M) restart length (default 30)\n"
            "      --amg-coarsening C  auto|aggregation|grid: smoothed aggregation, or the grid of a\n"
            "                          stencil matrix (every second point, trilinear P, Galerkin);\n"
            "                          auto: the grid for symmetric isotropic stencils (default)\n"
            "      --amg-theta T       AMG strength threshold (default 0.08)\n"
            "      --amg-levels N      AMG levels at most (default 25)\n"
            "      --amg-coarse N      AMG coarsest size, solved directly (default 300)\n"
            "      --amg-smoother S    chebyshev|l1-jacobi|mcgs (default chebyshev)\n"
            "      --amg-sweeps N      AMG pre- and post-smoothing sweeps (default 1)\n"
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
            "      --reorder R         auto|none|rcm: solve (and --spmv-bench) on the matrix with rows\n"
            "                          and columns in reverse Cuthill-McKee order, x mapped back\n"
            "                          (default auto: none for a solve, which does not repay it; for\n"
            "                          --spmv-bench RCM when x is over 1 MB and fewer than half the\n"
            "                          entries lie within 4096 columns of the diagonal, never for\n"
            "                          DIA; -v says why)\n"
            "      --check-every N     GPU: iterations between convergence checks (default 16;\n"
            "                          1 under --precond amg|ic0|ilu0)\n"
            "\n" GT_COMMON_HELP
            "\n"
            "Exit status: 0 converged; 1 not converged (iteration limit, breakdown, NaN,\n"
            "stagnation, CG on a matrix that is not positive definite, a singular or\n"
            "inconsistent system) or I/O failure;\n"
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
    OPT_CHECK,
    OPT_OUTFMT,
    OPT_REORDER,
    OPT_PRECOND,
    OPT_RESTART,
    OPT_AMG_THETA,
    OPT_AMG_LEVELS,
    OPT_AMG_COARSE,
    OPT_AMG_SMOOTHER,
    OPT_AMG_SWEEPS,
    OPT_AMG_COARSENING
};

typedef struct args {
    gt_common_opts co;
    gt_sparse_job job;
    gt_precond_opts popts;
    const char *apath, *out;
    int info, bench, outfmt;
} args;

/* Options into *a; returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, args *a)
{
    gt_common_opts_init(&a->co);
    gt_sparse_job_init(&a->job);
    gt_precond_opts_init(&a->popts);
    a->job.precond_opts = &a->popts;
    a->out = NULL, a->info = 0, a->bench = 0, a->outfmt = -1;
    gt_sparse_job *job = &a->job;
    static const char *const methods[] = {"cg",           "pcg",        "bicgstab", "jacobi",
                                          "gauss-seidel", "richardson", "gmres",    "amg"};
    static const char *const smoothers[] = {"chebyshev", "l1-jacobi", "mcgs"};
    static const char *const coarsenings[] = {"auto", "aggregation", "grid"};
    static const char *const formats[] = {"auto", "coo", "csr", "ell", "dia", "hyb"};
    static const char *const precs[] = {"single", "double"};
    static const char *const outfmts[] = {"mtx"};
    static const char *const reorders[] = {"auto", "none", "rcm"}; /* gt_reorder_kind order */
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'},   {"rhs", required_argument, 0, 'b'},
        {"x0", required_argument, 0, OPT_X0},    {"method", required_argument, 0, 'm'},
        {"tol", required_argument, 0, OPT_TOL},  {"maxiter", required_argument, 0, OPT_MAXITER},
        {"omega", required_argument, 0, OPT_OMEGA}, {"tau", required_argument, 0, OPT_TAU},
        {"precision", required_argument, 0, OPT_PRECISION}, {"format", required_argument, 0, OPT_FORMAT},
        {"info", no_argument, 0, OPT_INFO},      {"spmv-bench", required_argument, 0, OPT_BENCH},
        {"history", required_argument, 0, OPT_HISTORY}, {"check-every", required_argument, 0, OPT_CHECK},
        {"out-format", required_argument, 0, OPT_OUTFMT}, {"reorder", required_argument, 0, OPT_REORDER},
        {"precond", required_argument, 0, OPT_PRECOND}, {"restart", required_argument, 0, OPT_RESTART},
        {"amg-theta", required_argument, 0, OPT_AMG_THETA}, {"amg-levels", required_argument, 0, OPT_AMG_LEVELS},
        {"amg-coarse", required_argument, 0, OPT_AMG_COARSE},
        {"amg-smoother", required_argument, 0, OPT_AMG_SMOOTHER},
        {"amg-sweeps", required_argument, 0, OPT_AMG_SWEEPS},
        {"amg-coarsening", required_argument, 0, OPT_AMG_COARSENING},
        GT_COMMON_LONGOPTS,                      {0, 0, 0, 0}};
    int opt;
    gt_status s = GT_OK;
    while ((opt = getopt_long(argc, argv, "o:b:m:" GT_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        long lv;
        int iv;
        switch (opt) {
        case 'o': s = gt_parse_path_once("-o", optarg, &a->out); break;
        case 'b': s = gt_parse_path_once("-b", optarg, &job->rhs); break;
        case OPT_X0: s = gt_parse_path_once("--x0", optarg, &job->x0); break;
        case 'm': s = gt_parse_enum("--method", optarg, methods, 8, &job->method); break;
        case OPT_PRECOND: {
            gt_precond_kind pk;
            s = gt_precond_parse("--precond", optarg, &pk);
            job->precond = (int)pk;
            break;
        }
        case OPT_RESTART: s = gt_parse_int("--restart", optarg, 1, 1000, &job->restart); break;
        case OPT_AMG_THETA: s = gt_parse_double("--amg-theta", optarg, 0.0, 1.0, &a->popts.amg_theta); break;
        case OPT_AMG_LEVELS: s = gt_parse_int("--amg-levels", optarg, 1, 100, &a->popts.amg_max_levels); break;
        case OPT_AMG_COARSE:
            s = gt_parse_long("--amg-coarse", optarg, 1, 1000000L, &lv);
            a->popts.amg_coarse_size = lv;
            break;
        case OPT_AMG_SMOOTHER:
            s = gt_parse_enum("--amg-smoother", optarg, smoothers, 3, &iv);
            a->popts.amg_smoother = (gt_amg_smoother)iv;
            break;
        case OPT_AMG_SWEEPS: s = gt_parse_int("--amg-sweeps", optarg, 1, 10, &a->popts.amg_sweeps); break;
        case OPT_AMG_COARSENING:
            s = gt_parse_enum("--amg-coarsening", optarg, coarsenings, 3, &iv);
            a->popts.amg_coarsening = (gt_amg_coarsening)iv;
            break;
        case OPT_TOL: s = gt_parse_double("--tol", optarg, 1e-300, 1.0, &job->solve.tol); break;
        case OPT_MAXITER:
            s = gt_parse_long("--maxiter", optarg, 1, 1000000000L, &lv);
            job->solve.maxiter = lv;
            break;
        case OPT_OMEGA: s = gt_parse_double("--omega", optarg, 1e-6, 1.999999, &job->solve.omega); break;
        case OPT_TAU: s = gt_parse_double("--tau", optarg, 1e-300, 1e300, &job->solve.tau); break;
        case OPT_PRECISION:
            s = gt_parse_enum("--precision", optarg, precs, 2, &iv);
            job->prec = iv == 0 ? 4 : 8;
            break;
        case OPT_FORMAT:
            s = gt_parse_enum("--format", optarg, formats, 6, &iv);
            job->format = iv - 1; /* auto: -1 */
            break;
        case OPT_INFO: a->info = 1; break;
        case OPT_BENCH: s = gt_parse_int("--spmv-bench", optarg, 1, 1000000, &a->bench); break;
        case OPT_HISTORY: s = gt_parse_path_once("--history", optarg, &job->history); break;
        case OPT_REORDER: s = gt_parse_enum("--reorder", optarg, reorders, 3, &job->reorder); break;
        case OPT_OUTFMT: s = gt_parse_enum("--out-format", optarg, outfmts, 1, &a->outfmt); break;
        case OPT_CHECK: s = gt_parse_int("--check-every", optarg, 1, 64, &job->solve.check_every); break;
        case 'h': usage(stdout); return 0;
        case '?': return gt_report(gt_usage_error("try 'sparsesolve --help'"));
        default: {
            gt_cli_result r = gt_common_option(&a->co, opt, optarg);
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
    if (!a->out && !a->info && !a->bench)
        return gt_report(gt_usage_error("missing -o FILE for the solution (or --info / --spmv-bench)"));
    a->apath = argv[optind];
    a->popts.verbose = gt_verbosity() >= 1;
    gt_guard g;
    gt_guard_init(&g);
    gt_guard_input(&g, a->apath, "the matrix");
    gt_guard_input(&g, job->rhs, "-b");
    gt_guard_input(&g, job->x0, "--x0");
    gt_guard_output(&g, a->out, "-o", a->outfmt < 0 ? "mtx" : NULL, "--out-format");
    gt_guard_output(&g, job->history, "--history", "text", NULL);
    s = gt_guard_check(&g);
    gt_guard_free(&g);
    return s != GT_OK ? gt_report(s) : -1;
}

int main(int argc, char **argv)
{
    gt_set_progname("sparsesolve");
    gt_trace("main entry");
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;

    gt_timings tm;
    gt_timings_init(&tm);
    gt_sparse_matrix m;
    /* the CUDA start overlaps reading the matrix, where a job will run */
    gt_device_prep prep;
    gt_device_prepare_start(&prep, a.bench || a.out ? a.co.device : GT_DEVICE_CPU, a.co.gpu, NULL);
    gt_status s = gt_sparse_load(a.apath, &tm, &m);
    gt_trace("input read");
    if (s != GT_OK) {
        gt_device_prepare_join(&prep);
        return gt_report(s);
    }
    if (a.info) gt_sp_print_info(&m.info, stdout);
    if (a.bench || a.out) {
        /* chosen once for both jobs, so that the auto fallback is said once */
        a.job.gpu = a.co.gpu;
        s = gt_device_prepare_finish(&prep, &a.job.device);
        if (s == GT_OK && a.bench) s = gt_sparse_spmv_bench(&m, &a.job, a.bench, stdout);
    }
    gt_device_prepare_join(&prep);
    if (s != GT_OK || !a.out) {
        /* --info alone: the read and analyze stages */
        if (s == GT_OK && a.co.timings) gt_timings_print(&tm, stderr, "sparsesolve");
        gt_sparse_matrix_free(&m);
        return gt_report(s);
    }
    a.job.output = a.out;
    gt_sparse_result res;
    s = gt_sparse_solve(&m, &a.job, &tm, &res);
    rc = gt_report(s);
    if (a.co.timings && res.solved) gt_timings_print(&tm, stderr, "sparsesolve");
    gt_sparse_matrix_free(&m);
    return rc;
}
