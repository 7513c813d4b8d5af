/* Smoothed-aggregation algebraic multigrid (Vanek, Mandel & Brezina; the
 * defaults of pyamg, adapted to the GPU): the CPU reference of every set-up
 * stage and of the V-cycle, and the hierarchy they build, exposed for tests.
 *
 *   stage       file               what
 *   strength    amg_strength.c     S: off-diagonal a_ij with |a_ij| >= theta sqrt(|a_ii a_jj|)
 *   aggregate   amg_aggregate.c    parallel MIS-2 on S (MIS-1 below level 0; hashed priorities,
 *                                  synchronous rounds), then every other row joins a neighbouring
 *                                  aggregate
 *   prolong     amg_prolong.c      T (constant near-null space, normalised per aggregate),
 *                                  rho(D^-1 A) by power iteration, P = (I - w D^-1 A) T
 *   galerkin    amg_galerkin.c     A_c = P^T (A P) by two Gustavson SpGEMMs
 *   smoother    amg_smoother.c     Chebyshev (default), l1-Jacobi, multicolour Gauss-Seidel
 *   coarse      amg_coarse.c       dense Cholesky of the coarsest A (LU with pivoting when not SPD)
 *   cycle       amg_cycle.c        one V-cycle from z = 0 (the preconditioner's apply)
 *   driver      amg.c              the levels, the -v summary, gt_amg_precond_cpu
 *
 * Every stage is deterministic and written so that the GPU (kernels/sparse/
 * amg_*.cu) computes the same aggregates exactly and the same numbers up to
 * the order of floating-point sums. The per-element pieces both sides share
 * are the GT_HD functions below. */
#ifndef GT_SPARSE_AMG_H
#define GT_SPARSE_AMG_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hostdev.h"
#include "common/status.h"
#include "sparse/amg_grid.h"
#include "sparse/precond.h"
#include "sparse/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------ shared per-element math */
/* Priority hash of row i for the MIS-2 (a 32-bit finaliser, murmur3). */
GT_HD uint32_t gt_amg_hash(uint32_t i)
{
    i ^= i >> 16, i *= 0x85ebca6bu, i ^= i >> 13, i *= 0xc2b2ae35u, i ^= i >> 16;
    return i;
}
/* MIS states, ordered so that the tuple maximum prefers decided roots. */
enum { GT_AMG_OUT = 0, GT_AMG_UNDECIDED = 1, GT_AMG_IN = 2 };
/* The tuple (state, hash, i) packed so that its order is the integer order. */
GT_HD uint64_t gt_amg_tuple(int state, uint32_t i)
{
    return ((uint64_t)(unsigned)state << 62) | ((uint64_t)(gt_amg_hash(i) & 0x3fffffffu) << 32) | (uint64_t)i;
}
GT_HD int gt_amg_tuple_state(uint64_t t) { return (int)(t >> 62); }
/* Strength of connection: symmetric in i and j. */
GT_HD int gt_amg_strong(double aij, double aii, double ajj, double theta)
{
    return aij != 0 && fabs(aij) >= theta * sqrt(fabs(aii * ajj));
}
/* The strength threshold of level l: theta on level 0, GT_AMG_THETA_FLOOR
   (every coupling but rounding noise counts) below. The Galerkin operators
   of MIS-2 aggregates have many small couplings, which a fixed theta cuts
   into singleton aggregates: theta 0.08 on every level took the 24^3
   Laplacian's level 1 from 1297 rows to 1084 (operator complexity 4.8
   instead of 1.4). The floor is not 0 so that an entry that cancels to 0 in
   one summation order and to 1e-17 in another (CPU and GPU) does not change
   the strength graph, hence the aggregates. It is also the threshold used
   when theta leaves a level without any strong coupling. */
#define GT_AMG_THETA_FLOOR 1e-8
/* The aggregation distance of level l: MIS-2 on level 0, MIS-1 below. The
   Galerkin operators hold 30-120 entries a row, where distance-2
   neighbourhoods are huge: MIS-2 took the tetrahedral mesh's level 1 from
   8251 rows to 75 (ratio 110; MIS-1: 348) and PCG needed 20 iterations
   instead of 18 (tet45, 85k rows; 64^3 Laplacian 11 instead of 10). MIS-1
   on level 0 too cost operator complexity 3.1-3.5 for 17 and 9. */
GT_HD int gt_amg_level_dist(int level) { return level == 0 ? 2 : 1; }
GT_HD double gt_amg_level_theta(double theta, int level) { return level == 0 ? theta : GT_AMG_THETA_FLOOR; }
/* The largest coarsest level factored densely (8192^2 doubles: 512 MiB). */
#define GT_AMG_MAX_DENSE 8192
/* Chebyshev bounds of the smoother from the estimate of rho(D^-1 A). The
   lower bound: with pyamg's rho/30 a degree-2 polynomial damps the upper
   part of the spectrum only by 0.8 and the V-cycle reduced the error by
   0.61 per cycle (24^3 Laplacian, 14 PCG iterations on 40^3, MIS-2 on
   every level); rho/10 gives 0.37 (10 PCG iterations); 0.2-0.4 were no
   better, nor on the tetrahedral mesh (tet45: 0.05 19, 0.1 20, 0.2 22, 0.3
   23 iterations). */
#define GT_AMG_CHEB_LO 0.1
#define GT_AMG_CHEB_HI 1.1
/* Power iterations for rho(D^-1 A) (from gt_power_start; the Rayleigh
   quotient of the symmetric D^-1/2 A D^-1/2). */
#define GT_AMG_POWER_ITERS 15
/* Row i of the smoothed prolongator P = (I - w D^-1 A) T, from row [b, e) of
   A (col, val) and the aggregates agg with their scales sc (T[j][agg[j]] =
   sc[agg[j]]); f = -w / a_ii, gi = agg[i]. The row's entries are the
   distinct aggregates of i and of its columns: gt_amg_prolong_row_len counts
   them; gt_amg_prolong_row writes them into pcol/pval (the row's start),
   the value of aggregate g the sum in column order of f a_iq sc[g] over the
   columns q in g (plus sc[gi] for g = gi), sorted by column. Quadratic in
   the row's length: the CPU's loop, and the GPU's for short rows. */
GT_HD int64_t gt_amg_prolong_row_len(const int32_t *col, int64_t b, int64_t e, const int32_t *agg, int32_t gi)
{
    int64_t c = 1;
    for (int64_t q = b; q < e; q++) {
        int32_t g = agg[col[q]];
        bool seen = g == gi;
        for (int64_t q2 = b; q2 < q && !seen; q2++) seen = agg[col[q2]] == g;
        c += !seen;
    }
    return c;
}
GT_HD void gt_amg_prolong_row(const int32_t *col, const double *val, int64_t b, int64_t e, const int32_t *agg,
                              const double *sc, int32_t gi, double f, int32_t *pcol, double *pval)
{
    double s = sc[gi];
    for (int64_t q = b; q < e; q++)
        if (agg[col[q]] == gi) s += f * val[q] * sc[gi];
    pcol[0] = gi, pval[0] = s;
    int64_t k = 1;
    for (int64_t q = b; q < e; q++) {
        int32_t g = agg[col[q]];
        bool seen = g == gi;
        for (int64_t q2 = b; q2 < q && !seen; q2++) seen = agg[col[q2]] == g;
        if (seen) continue;
        double v = 0;
        for (int64_t q2 = q; q2 < e; q2++)
            if (agg[col[q2]] == g) v += f * val[q2] * sc[g];
        pcol[k] = g, pval[k++] = v;
    }
    for (int64_t x = 1; x < k; x++) { /* insertion sort by column */
        int32_t cc = pcol[x];
        double vv = pval[x];
        int64_t y = x;
        for (; y > 0 && pcol[y - 1] > cc; y--) pcol[y] = pcol[y - 1], pval[y] = pval[y - 1];
        pcol[y] = cc, pval[y] = vv;
    }
}

/* ------------------------------------------------ the hierarchy */
typedef enum {
    GT_AMG_ST_STRENGTH = 0,
    GT_AMG_ST_AGGREGATE,
    GT_AMG_ST_PROLONG,
    GT_AMG_ST_GALERKIN,
    GT_AMG_ST_SMOOTHER,
    GT_AMG_ST_COARSE,
    GT_AMG_NSTAGES
} gt_amg_stage;
const char *gt_amg_stage_name(gt_amg_stage s); /* "strength", ... */

typedef struct gt_amg_level {
    gt_csr a;        /* A_l */
    gt_csr p, r;     /* P_l (n_l x n_{l+1}) and R_l = P_l^T; empty on the coarsest */
    gt_amg_grid grid; /* the level's grid (amg_grid.h); nx 0 under aggregation */
    int32_t *agg;    /* aggregate of each row (n_l); NULL on the coarsest and on grid levels */
    int64_t nagg;
    double *dinv;    /* 1 / a_ii */
    double rho;      /* estimate of rho(D^-1 A) */
    double *l1inv;   /* l1-Jacobi: 1 / sum_j |a_ij| (NULL unless that smoother) */
    int32_t *colour_rows; /* multicolour Gauss-Seidel: rows by colour (NULL unless that smoother) */
    int64_t *colour_ptr;  /* ncolours + 1 offsets into colour_rows */
    int32_t ncolours;
    double *x, *b, *t, *sr, *sd; /* cycle and smoother work vectors (n_l each) */
} gt_amg_level;

typedef struct gt_amg {
    int nlevels;
    gt_amg_level *lev;
    gt_precond_opts opts;
    /* coarsest level: dense factor, row-major nc x nc; Cholesky L (lower)
       or LU with the row permutation piv (NULL for Cholesky) */
    int64_t nc;
    double *cfact;
    int32_t *cpiv;
    bool coarse_inverse; /* the GPU hierarchy: the coarsest level is a dense inverse */
    double stage_ms[GT_AMG_NSTAGES];
    double setup_ms;
} gt_amg;

/* ------------------------------------------------ the stages (CPU reference) */
/* 1/a_ii; GT_ERR_DATA naming the (1-based) row of a zero, missing or
   non-finite diagonal. */
gt_status gt_amg_dinv(const gt_csr *a, double *dinv);
/* S: the strong off-diagonal entries of a (values a_ij), sorted rows. */
gt_status gt_amg_strength(const gt_csr *a, double theta, gt_csr *s);
/* MIS-dist aggregation (dist 2 or 1) of the graph of s (n rows): agg[i] in
   [0, *nagg), the aggregates numbered by their roots in row order. *rounds
   (may be NULL): the MIS rounds it took. */
gt_status gt_amg_aggregate(const gt_csr *s, int dist, int32_t *agg, int64_t *nagg, int *rounds);
/* T: T[i][agg[i]] = 1/sqrt(|aggregate|). */
gt_status gt_amg_tentative(int64_t n, const int32_t *agg, int64_t nagg, gt_csr *t);
/* rho(D^-1 A) estimate (GT_AMG_POWER_ITERS steps). */
double gt_amg_rho(const gt_csr *a, const double *dinv);
/* P = (I - w D^-1 A) T with T from agg (w = omega / rho): row i holds the
   aggregates of row i's columns, sorted. */
gt_status gt_amg_prolong(const gt_csr *a, const double *dinv, const int32_t *agg, int64_t nagg, double w,
                         gt_csr *p);
/* C = A B (Gustavson, sorted rows, structural zeros kept). */
gt_status gt_amg_spgemm(const gt_csr *a, const gt_csr *b, gt_csr *c);
/* A_c = R (A P) with R = P^T. */
gt_status gt_amg_galerkin(const gt_csr *a, const gt_csr *p, const gt_csr *r, gt_csr *ac);
/* The smoother's data of a level (l1 norms, colours). */
gt_status gt_amg_smoother_setup(gt_amg_level *l, gt_amg_smoother kind);
/* `sweeps` sweeps on A x = b; x_zero: x is 0 on entry (saves a product);
   post: the adjoint order (Gauss-Seidel colours reversed) for a symmetric cycle. */
void gt_amg_smooth(const gt_amg_level *l, gt_amg_smoother kind, int sweeps, const double *b, double *x,
                   bool x_zero, bool post);
/* Dense factor of the coarsest A (Cholesky, else LU with partial pivoting;
   GT_ERR_DATA when singular). */
gt_status gt_amg_coarse_factor(const gt_csr *a, double **fact, int32_t **piv);
void gt_amg_coarse_solve(int64_t n, const double *fact, const int32_t *piv, const double *b, double *x);
/* z = one V-cycle on r from z = 0. */
void gt_amg_vcycle(const gt_amg *h, const double *r, double *z);

/* ------------------------------------------------ driver */
/* Options: gt_precond_opts_init's defaults (precond.h). A small
   amg_coarse_size costs nothing in iterations and saves the dense work on
   the coarsest level (n^3): 64^3 Laplacian, CPU: coarse 2000 stops at 1801
   rows (3 levels, set-up 1154 ms of which coarse 482), coarse 300 at 4
   levels (set-up 510 ms, coarse 0.02); 10 PCG iterations both. */
/* Build the hierarchy on the CPU (A square with a nonzero diagonal). */
gt_status gt_amg_setup(const gt_csr *a, const gt_precond_opts *o, gt_amg *h);
void gt_amg_free(gt_amg *h);
/* Operator and grid complexity. */
double gt_amg_operator_complexity(const gt_amg *h);
double gt_amg_grid_complexity(const gt_amg *h);
/* The -v table (levels, rows, nnz, nnz/row, complexities, stage times) into buf. */
void gt_amg_summary(const gt_amg *h, const char *where, char *buf, size_t len);

/* The AMG preconditioner on the CPU: p->apply = one V-cycle from z = 0;
   p->ctx is a gt_amg (see gt_amg_precond_hierarchy). */
gt_status gt_amg_precond_cpu(const gt_csr *a, const gt_precond_opts *o, gt_precond *p);
const gt_amg *gt_amg_precond_hierarchy(const gt_precond *p);

/* ------------------------------------------------ GPU from host data
 * (lib/sparse/amg_gpu.c over kernels/sparse/amg_*.cu; GT_ERR_GPU without
 * CUDA), for tests and benchmarks. */
typedef struct gt_amg_gpu_result {
    double setup_ms;                  /* gt_cu_amg_create, synchronised */
    double stage_ms[GT_AMG_NSTAGES];
    double vcycle_ms;                 /* mean of `reps` V-cycles (CUDA events) */
    double graph_diff;                /* max |last of the reps - the direct V-cycle| (gt_amg_gpu_run, reps > 0) */
    int pcg_iters;                    /* gt_amg_gpu_pcg */
    double pcg_ms, pcg_relres;
    char summary[2048];
} gt_amg_gpu_result;
/* Build the hierarchy on the GPU, download it into h (may be NULL; levels'
   a, p, r, agg, dinv, rho), apply one V-cycle to r into z (both may be NULL)
   and time reps more (reps 0: none; z then holds the last one's output,
   and res->graph_diff its largest difference from the first's). */
gt_status gt_amg_gpu_run(const gt_csr *a, const gt_precond_opts *o, gt_amg *h, const double *r, double *z, int reps,
                         gt_amg_gpu_result *res);
/* AMG-PCG on the GPU (a plain PCG loop with a host sync per iteration, for
   the benchmark; the real solver is sp-krylov's): x from 0. */
gt_status gt_amg_gpu_pcg(const gt_csr *a, const gt_precond_opts *o, const double *b, double *x, double tol, int maxit,
                         gt_amg_gpu_result *res);

#ifdef __cplusplus
}
#endif
#endif
