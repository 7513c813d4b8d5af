/* Preconditioners for the Krylov solvers: M ~ A, of which a solver applies
 * z = M^-1 r once per iteration. One object per kind, built from the CSR
 * matrix either for the CPU path (apply on host vectors) or for the GPU path
 * (apply on device vectors, asynchronously on a stream). Vectors are double
 * in both paths; a preconditioner may work in single precision inside.
 *
 *   kind     CPU reference                 GPU                          file
 *   jacobi   z = D^-1 r                    one kernel                   precond_jacobi.c / .cu
 *   ic0      L L^T = A on A's pattern      level-scheduled solves       ilu0.c / kernels ilu0*.cu
 *   ilu0     L U = A on A's pattern        level-scheduled solves       ilu0.c / kernels ilu0*.cu
 *   amg      smoothed aggregation V-cycle  setup and cycle on the GPU   amg*.c / kernels amg*.cu
 *
 * The solvers that take a preconditioner (krylov_prec.c and its GPU twin):
 * PCG (SPD A and M), BiCGStab and GMRES(m), both right-preconditioned, and
 * preconditioned Richardson x += M^-1 (b - A x) (-m amg is that with AMG). */
#ifndef GT_SPARSE_PRECOND_H
#define GT_SPARSE_PRECOND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "sparse/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    GT_PRECOND_NONE = 0,
    GT_PRECOND_JACOBI,
    GT_PRECOND_IC0,
    GT_PRECOND_ILU0,
    GT_PRECOND_AMG,
    GT_PRECOND_NKINDS
} gt_precond_kind;

/* "none", "jacobi", "ic0", "ilu0", "amg" */
const char *gt_precond_name(gt_precond_kind k);
/* GT_ERR_USAGE naming the option when s is none of the names. */
gt_status gt_precond_parse(const char *opt, const char *s, gt_precond_kind *k);

typedef enum { GT_AMG_SMOOTH_CHEBYSHEV = 0, GT_AMG_SMOOTH_L1JACOBI, GT_AMG_SMOOTH_MCGS } gt_amg_smoother;
/* How AMG coarsens: auto (the grid when the matrix is an isotropic symmetric
   grid stencil, amg_grid.h; else aggregation), smoothed aggregation, or the
   grid (an error when the matrix is not on a grid). */
typedef enum { GT_AMG_COARSEN_AUTO = 0, GT_AMG_COARSEN_AGGREGATION, GT_AMG_COARSEN_GRID } gt_amg_coarsening;

typedef struct gt_precond_opts {
    /* smoothed aggregation AMG */
    double amg_theta;        /* strength of connection: |a_ij| >= theta sqrt(|a_ii a_jj|) (default 0.08) */
    int amg_max_levels;      /* default 25 */
    int64_t amg_coarse_size; /* stop coarsening at or below this many rows (default 300); solved directly */
    gt_amg_smoother amg_smoother; /* default Chebyshev */
    int amg_sweeps;          /* pre- and post-smoothing sweeps (default 1; Chebyshev: polynomial degree 2 per sweep) */
    double amg_omega;        /* prolongator smoothing weight factor (default 4/3, divided by rho(D^-1 A)) */
    gt_amg_coarsening amg_coarsening; /* default auto */
    bool verbose;            /* fill summary with the hierarchy table */
} gt_precond_opts;
void gt_precond_opts_init(gt_precond_opts *o);

typedef struct gt_precond {
    gt_precond_kind kind;
    int64_t n;
    bool on_gpu;   /* apply takes device pointers and a cudaStream_t (as void *) */
    void *ctx;
    /* z = M^-1 r; r and z are distinct arrays of n doubles (host, or device
       when on_gpu: queued on `stream`, no synchronisation). */
    gt_status (*apply)(void *ctx, const double *r, double *z, void *stream);
    void (*destroy)(void *ctx);
    double setup_ms;     /* wall time of the set-up (GPU: synchronised) */
    double complexity;   /* AMG operator complexity (sum of level nnz / nnz of A); 1 otherwise */
    int levels;          /* AMG levels; 1 otherwise */
    char summary[2048];  /* -v text: what was built (AMG: the hierarchy table) */
} gt_precond;

/* What every kind's builder fills once its context is made (CPU and GPU):
 * the kind, size and side, the context and its functions; complexity and
 * levels 1 (AMG sets its own after). */
static inline void gt_precond_set(gt_precond *p, gt_precond_kind kind, int64_t n, bool on_gpu, void *ctx,
                                  gt_status (*apply)(void *, const double *, double *, void *),
                                  void (*destroy)(void *))
{
    p->kind = kind;
    p->n = n;
    p->on_gpu = on_gpu;
    p->ctx = ctx;
    p->apply = apply;
    p->destroy = destroy;
    p->complexity = 1;
    p->levels = 1;
}

/* Build on the CPU (lib/sparse/precond.c dispatches to the kinds). Bad input
 * (zero or negative pivot, NaN) is GT_ERR_DATA with a message naming the row. */
gt_status gt_precond_create_cpu(const gt_csr *a, gt_precond_kind k, const gt_precond_opts *o, gt_precond *p);
void gt_precond_destroy(gt_precond *p);

#ifdef __cplusplus
}
#endif
#endif
