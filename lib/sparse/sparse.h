/* Sparse matrices: the COO, CSR, ELL, DIA and HYB storage formats, their
 * conversions, SpMV (CPU reference in double and single precision), structure
 * analysis with the automatic format choice, and the iterative solvers
 * (Richardson, weighted Jacobi, Gauss-Seidel, CG, Jacobi-PCG, BiCGStab).
 *
 * Layouts follow Bell & Garland (2008) and the lecture notes:
 *  - COO: row, col, val per nonzero, sorted by (row, col).
 *  - CSR: ptr[nrows+1] (64-bit), col and val per nonzero.
 *  - ELL: width M = longest row; col/val are nrows x M stored column-major
 *    (entry k of row i at k*nrows + i); padding has col -1 and val 0.
 *  - DIA: ndiag offsets (col - row), ascending; val is nrows x ndiag
 *    column-major (diagonal d of row i at d*nrows + i holds A[i][i+off[d]]);
 *    positions outside the matrix hold 0.
 *  - HYB: an ELL part of width K (Bell & Garland's choice) plus a COO part
 *    with the entries beyond K in each row.
 * Indices are 0-based, int32 (matrix dimensions < 2^31); nonzero counts and
 * positions are int64/size_t. */
#ifndef GT_SPARSE_H
#define GT_SPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/device.h"
#include "common/status.h"
#include "common/timer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { GT_SP_COO = 0, GT_SP_CSR, GT_SP_ELL, GT_SP_DIA, GT_SP_HYB, GT_SP_NFORMATS } gt_sp_format;
const char *gt_sp_format_name(gt_sp_format f); /* "coo", ... */

typedef struct gt_coo {
    int64_t nrows, ncols, nnz;
    int32_t *row, *col;
    double *val;
} gt_coo;

typedef struct gt_csr {
    int64_t nrows, ncols, nnz;
    int64_t *ptr;
    int32_t *col;
    double *val;
} gt_csr;

typedef struct gt_ell {
    int64_t nrows, ncols, width;
    int32_t *col; /* width*nrows, column-major, -1 = padding */
    double *val;  /* width*nrows, column-major, 0 = padding */
} gt_ell;

typedef struct gt_dia {
    int64_t nrows, ncols, ndiag;
    int32_t *offsets; /* ndiag, ascending */
    double *val;      /* ndiag*nrows, column-major */
} gt_dia;

typedef struct gt_hyb {
    gt_ell ell;
    gt_coo coo;
} gt_hyb;

/* Build CSR from COO triplets (any order; duplicates summed; explicit zeros
 * kept). Checks indices against the dimensions (GT_ERR_DATA). */
gt_status gt_csr_from_triplets(int64_t nrows, int64_t ncols, int64_t nnz, const int32_t *row,
                               const int32_t *col, const double *val, gt_csr *out);
gt_status gt_csr_from_dense(int64_t nrows, int64_t ncols, const double *rowmajor, gt_csr *out);
void gt_csr_free(gt_csr *a);
void gt_coo_free(gt_coo *a);
void gt_ell_free(gt_ell *a);
void gt_dia_free(gt_dia *a);
void gt_hyb_free(gt_hyb *a);

gt_status gt_csr_to_coo(const gt_csr *a, gt_coo *out);
gt_status gt_coo_to_csr(const gt_coo *a, gt_csr *out); /* a sorted by row */
gt_status gt_csr_to_ell(const gt_csr *a, gt_ell *out);
/* Fails (GT_ERR_RUNTIME) when the padded size would exceed max_bytes (0: no limit). */
gt_status gt_csr_to_dia(const gt_csr *a, size_t max_bytes, gt_dia *out);
/* width < 0: Bell & Garland's choice (gt_hyb_width). */
gt_status gt_csr_to_hyb(const gt_csr *a, int64_t width, gt_hyb *out);
gt_status gt_ell_to_csr(const gt_ell *a, gt_csr *out);
gt_status gt_dia_to_csr(const gt_dia *a, gt_csr *out);
gt_status gt_hyb_to_csr(const gt_hyb *a, gt_csr *out);

/* Bell & Garland's HYB width: the largest K such that at least
 * max(4096, nrows/3) rows have K or more entries (the ELL part is then at
 * least a third full); 0 for tiny matrices. */
int64_t gt_hyb_width(const gt_csr *a);

/* y = A x, CPU reference. Single precision: values and x rounded to float,
 * float accumulation, in the same order as double. */
void gt_csr_spmv(const gt_csr *a, const double *x, double *y);
void gt_coo_spmv(const gt_coo *a, const double *x, double *y);
void gt_ell_spmv(const gt_ell *a, const double *x, double *y);
void gt_dia_spmv(const gt_dia *a, const double *x, double *y);
void gt_hyb_spmv(const gt_hyb *a, const double *x, double *y);
void gt_csr_spmv_f32(const gt_csr *a, const float *x, float *y);
void gt_coo_spmv_f32(const gt_coo *a, const float *x, float *y);
void gt_ell_spmv_f32(const gt_ell *a, const float *x, float *y);
void gt_dia_spmv_f32(const gt_dia *a, const float *x, float *y);
void gt_hyb_spmv_f32(const gt_hyb *a, const float *x, float *y);

/* ---------------------------------------------------------------- analysis */
typedef struct gt_sp_info {
    int64_t nrows, ncols, nnz;
    bool symmetric;          /* structurally and numerically (|a_ij - a_ji| <= 1e-12 |a|) */
    bool diag_dominant;      /* strictly row diagonally dominant */
    bool positive_diagonal;
    int64_t zero_diag_row;   /* first row with a zero or missing diagonal, -1 if none */
    int64_t row_min, row_max;
    double row_mean, row_std;
    int64_t empty_rows;
    int64_t ndiag;           /* distinct diagonals holding nonzeros */
    int64_t hyb_width;       /* Bell & Garland K */
    int64_t hyb_coo_nnz;     /* entries beyond K */
    size_t bytes[GT_SP_NFORMATS][2]; /* [format][0 single, 1 double] */
} gt_sp_info;

gt_status gt_sp_analyze(const gt_csr *a, gt_sp_info *info);
/* The same, told whether A is symmetric by construction (a Matrix Market
 * file declared symmetric, mirrored on read): then the entry-by-entry
 * symmetric check is skipped. */
gt_status gt_sp_analyze_sym(const gt_csr *a, bool known_symmetric, gt_sp_info *info);
/* Bytes a format needs (indices + values), prec 4 or 8. */
size_t gt_sp_format_bytes(const gt_sp_info *info, gt_sp_format f, int prec);

/* The automatic choice: DIA when few diagonals hold the nonzeros with little
 * padding (DIA bytes <= 1.2x ELL bytes and padding fill >= 2/3), ELL when row
 * lengths are even (ELL fill >= 2/3), HYB when a regular part exists and the
 * COO remainder is small, CSR otherwise. `why` gets one sentence. */
gt_sp_format gt_sp_choose_format(const gt_sp_info *info, char *why, size_t why_len);

/* The --info table. */
void gt_sp_print_info(const gt_sp_info *info, FILE *f);

/* Greedy colouring of the symmetrised graph of A (rows adjacent when a_ij or
 * a_ji != 0). colour[i] in [0, *ncolours). Rows of one colour do not couple. */
gt_status gt_sp_colour(const gt_csr *a, int32_t *colour, int32_t *ncolours);

/* ---------------------------------------------------------------- solvers */
typedef enum {
    GT_SOLVE_CG = 0,
    GT_SOLVE_PCG,
    GT_SOLVE_BICGSTAB,
    GT_SOLVE_JACOBI,
    GT_SOLVE_GS,
    GT_SOLVE_RICHARDSON,
    GT_SOLVE_GMRES,     /* GMRES(m), right-preconditioned (lib/sparse/krylov_prec.h) */
    GT_SOLVE_AMG,       /* preconditioned Richardson with the AMG V-cycle as M */
    GT_SOLVE_NMETHODS
} gt_solve_method;
const char *gt_solve_method_name(gt_solve_method m); /* "cg", "pcg", ..., "gauss-seidel", "gmres", "amg" */

typedef enum {
    GT_SOLVE_CONVERGED = 0,
    GT_SOLVE_MAXITER,
    GT_SOLVE_BREAKDOWN,
    GT_SOLVE_NAN,
    GT_SOLVE_STAGNATION,
    GT_SOLVE_NOT_SPD
} gt_solve_outcome;

typedef struct gt_solve_opts {
    gt_solve_method method;
    double tol;        /* relative residual ||b - A x|| / ||b|| */
    int64_t maxiter;
    double omega;      /* Jacobi / Gauss-Seidel relaxation (default 1; Jacobi 2/3 is typical) */
    double tau;        /* Richardson step; <= 0: estimated */
    int check_every;   /* GPU: iterations between host convergence checks; 0:
                          16, or 1 under a preconditioner whose apply costs far
                          more than a check (AMG, IC0, ILU0: the iterations
                          queued past convergence would each run it) */
    int cg_kernels;    /* GPU CG/PCG: 0 (default) split for CSR/ELL, fused for DIA; 1 fused (one
                          kernel, neighbours' p formed on the fly); 2 classic two kernels; 3 split
                          (p stored: an update kernel and a product kernel, krylov_cg.cu) */
    int64_t stagnation; /* iterations without a 1e-3 relative improvement of the best residual: stagnation (0 = 1000) */
    /* Called with the relative residual of each iteration (may be NULL). */
    void (*on_iter)(void *ctx, int64_t it, double relres);
    void *ctx;
} gt_solve_opts;

typedef struct gt_solve_result {
    gt_solve_outcome outcome;
    int64_t iters;
    double relres;      /* the solver's own (recurrence) relative residual */
    double true_relres; /* ||b - A x|| / ||b|| recomputed from x */
    double tau;         /* Richardson step used */
    int ncolours;       /* multicolour Gauss-Seidel */
    double loop_ms;     /* GPU: wall time of the iteration loop only (for ms/iteration) */
    char msg[256];      /* why it stopped, when not converged */
} gt_solve_result;

void gt_solve_opts_init(gt_solve_opts *o);

/* Checks common to all paths: square, sizes, zero diagonals for the methods
 * that divide by it (message names the 1-based row). GT_ERR_DATA on failure. */
gt_status gt_solve_check(const gt_csr *a, int64_t nb, gt_solve_method m);

/* Richardson's tau from the Gershgorin bounds: 2/(lmax + lmin) when all
 * Gershgorin discs lie right of 0; 1.9/lmax for symmetric matrices with a
 * positive diagonal whose discs touch 0; else 1/max row sum |a_ij|. */
double gt_richardson_tau(const gt_csr *a);

/* Power iteration (lib/sparse/power.c): GT_POWER_ITERS steps of v <- B v / |B v|
 * from the start vector gt_power_start(i), B = A (at NULL; A symmetric) or
 * A^T A (at = A^T); *est = the last Rayleigh quotient v.Bv / v.v: for
 * symmetric B a lower bound of lambda_max(B) that approaches it. */
#define GT_POWER_ITERS 100
#define GT_POWER_SAFETY 1.05
double gt_power_start(int64_t i);
gt_status gt_csr_transpose(const gt_csr *a, gt_csr *out);
gt_status gt_power_estimate(const gt_csr *a, const gt_csr *at, int iters, double *est);
/* Richardson's tau from the Gershgorin bounds tightened by a power estimate
 * est (symmetric: of lambda_max; else of sigma_max^2; <= 0: none): the upper
 * bound is min(Gershgorin, GT_POWER_SAFETY * estimate of lambda_max or
 * sigma_max), then the rules of gt_richardson_tau. */
double gt_richardson_tau_bound(const gt_csr *a, bool symmetric, double est);
/* The default when --tau is omitted: the power estimate on the CPU, then
 * gt_richardson_tau_bound. */
gt_status gt_richardson_tau_power(const gt_csr *a, double *tau);

/* CPU reference solver, double precision. x holds x0 on entry. Returns GT_OK
 * whatever the outcome (res->outcome says it); errors only for bad input. */
gt_status gt_solve_cpu(const gt_csr *a, const double *b, double *x, const gt_solve_opts *o,
                       gt_solve_result *res);

/* The same in precision prec (8 double, 4 single: matrix values and vectors
 * rounded to float, float SpMV and vector updates, dot products and scalars
 * in double, as on the GPU). true_relres recomputed in double. */
gt_status gt_solve_cpu_prec(const gt_csr *a, int prec, const double *b, double *x, const gt_solve_opts *o,
                            gt_solve_result *res);

/* Sequential Gauss-Seidel sweep order (the CPU reference): one forward sweep. */
void gt_gs_sweep(const gt_csr *a, const double *b, double *x, double omega);

double gt_vec_norm2(const double *v, int64_t n);

/* ---------------------------------------------------------------- jobs
 * What the sparsesolve program does, for any C program: load a Matrix
 * Market matrix once (CSR and its analysis), then benchmark SpMV and/or
 * solve A x = b with the program's choices, report lines on stderr (through
 * common/log.h, named after gt_progname()), progress bar, timings and
 * atomic output. For example, solve and write x, then print the timings:
 *
 *     #include "common/log.h"             // gt_report
 *     #include "sparse/sparse.h"
 *     ...
 *     gt_timings tm;
 *     gt_timings_init(&tm);
 *     gt_sparse_matrix m;
 *     gt_status s = gt_sparse_load("A.mtx", &tm, &m);
 *     if (s != GT_OK) return gt_report(s);
 *     gt_sparse_job job;
 *     gt_sparse_job_init(&job);           // pcg/bicgstab, auto format, double, auto device
 *     job.rhs = "b.mtx";                  // NULL: b = A*1
 *     job.output = "x.mtx";
 *     job.solve.tol = 1e-10;
 *     gt_sparse_result res;
 *     s = gt_sparse_solve(&m, &job, &tm, &res);
 *     int rc = gt_report(s);              // 1 when it did not converge
 *     if (res.solved) gt_timings_print(&tm, stderr, "solve");
 *     gt_sparse_matrix_free(&m);
 *     return rc; */
typedef struct gt_sparse_matrix {
    gt_csr a;
    gt_sp_info info; /* gt_sp_analyze(a) */
    char *path;      /* the file it came from, for messages */
} gt_sparse_matrix;

/* Read `path` ("-": stdin; coordinate or array) into CSR and analyse it;
 * stages "read" and "analyze" are added to tm (may be NULL). An empty matrix
 * is GT_ERR_DATA. Free with gt_sparse_matrix_free. */
gt_status gt_sparse_load(const char *path, gt_timings *tm, gt_sparse_matrix *m);
void gt_sparse_matrix_free(gt_sparse_matrix *m);

typedef struct gt_sparse_job {
    const char *rhs;          /* b (Matrix Market vector); NULL (default): b = A*1, and x is
                                 compared with the exact solution, all ones */
    const char *x0;           /* initial guess; NULL (default): 0 */
    const char *output;       /* x (Matrix Market array; "-": stdout), written atomically when the
                                 solve converges; NULL: not written */
    const char *history;      /* NULL or a file of 'iteration relative-residual' lines */
    int method;               /* a gt_solve_method, or -1 (default): pcg when A is symmetric,
                                 else bicgstab, or gmres when a preconditioner is asked for */
    int precond;              /* a gt_precond_kind (sparse/precond.h), or -1 (default): jacobi with
                                 pcg (the fused GPU path), amg with -m amg, none otherwise */
    int restart;              /* GMRES(m): m (default 0: 30) */
    struct gt_precond_opts *precond_opts; /* AMG options; NULL (default): gt_precond_opts_init's */
    int format;               /* a gt_sp_format, or -1 (default): gt_sp_choose_format */
    int prec;                 /* 8 (default) double, 4 single */
    gt_solve_opts solve;      /* tol, maxiter, omega, tau, check_every, ... (gt_solve_opts_init);
                                 method, on_iter and ctx are set by the job */
    gt_device_kind device;    /* default auto; resolved with gt_device_choose */
    int gpu;                  /* default 0 */
    bool progress;            /* default true: a bar where gt_progress_enabled() */
    int reorder;              /* a gt_reorder_kind (sparse/reorder.h): 0 auto (default: RCM when
                                 the locality measure says it pays, -v says why), 1 none, 2 rcm;
                                 the solver runs on P A P^T, x is mapped back (stage "reorder") */
} gt_sparse_job;
void gt_sparse_job_init(gt_sparse_job *job);

typedef struct gt_sparse_result {
    bool solved;               /* the solver ran to an outcome (below) and it was reported; false
                                  when the job stopped before: bad b or x0, GPU failure, history file */
    gt_solve_method method;    /* as run */
    int precond;               /* the gt_precond_kind as run, -1 for the methods without one
                                  (cg, jacobi, gauss-seidel, richardson, bicgstab) */
    double setup_ms;           /* the preconditioner's set-up (0 for the fused Jacobi-PCG) */
    gt_sp_format format;       /* the format chosen */
    const char *format_run;    /* the format the solver ran in ("csr", "dia", "ell") */
    gt_device_kind device;     /* GT_DEVICE_CPU or GT_DEVICE_CUDA */
    int prec;
    gt_solve_result solve;     /* outcome, iterations, residuals, Richardson tau, colours */
    double solve_ms;
    bool exact;                /* no rhs: err_max and err_rms are |x - 1| */
    double err_max, err_rms;   /* NaN when not exact */
    bool reordered;            /* the solver ran on the RCM-permuted matrix */
} gt_sparse_result;

/* Solve A x = b as the job says: b and x0 read and checked against A
 * (GT_ERR_DATA), the solver on the job's device (stage "solve" in tm, may be
 * NULL) with a progress bar, the history file, the report lines (-v adds the
 * automatic choices), then x written (stage "write"). A solve that does not
 * converge is GT_ERR_RUNTIME (its reason in gt_errmsg()) and writes no x.
 * res->solved says whether it got as far as the report. */
gt_status gt_sparse_solve(const gt_sparse_matrix *m, const gt_sparse_job *job, gt_timings *tm,
                          gt_sparse_result *res);

/* reps SpMVs y = A x with every GPU kernel in precision job->prec (when
 * job->device resolves to CUDA), or with the CPU reference of each format
 * (double); a table
 * on `out`: kernel, ms, bytes, GB/s, GFLOP/s, conversion ms. A kernel whose
 * format does not fit is a row with the reason; a GPU failure is returned. */
gt_status gt_sparse_spmv_bench(const gt_sparse_matrix *m, const gt_sparse_job *job, int reps, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
