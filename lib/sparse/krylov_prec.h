/* Krylov solvers with a preconditioner object (lib/sparse/precond.h): PCG
 * (SPD A and M), right-preconditioned BiCGStab, right-preconditioned GMRES(m)
 * (modified Gram-Schmidt Arnoldi, Givens rotations) and preconditioned
 * Richardson x += M^-1 (b - A x) (GT_SOLVE_RICHARDSON or GT_SOLVE_AMG), on
 * the CPU (krylov_prec.c, the reference) and the GPU (kernels/sparse/
 * krylov_prec.cu). Same stopping rules and gt_solve_result as gt_solve_cpu. */
#ifndef GT_SPARSE_KRYLOV_PREC_H
#define GT_SPARSE_KRYLOV_PREC_H

#include <stdbool.h>

#include "sparse/precond.h"
#include "sparse/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GT_GMRES_RESTART 30 /* default m of GMRES(m) */

/* The methods that take a preconditioner object. */
bool gt_solve_method_takes_precond(gt_solve_method m);

/* Solve A x = b with o->method and the host preconditioner m (m->on_gpu
 * false). x holds x0 on entry. restart: GMRES's m (<= 0: GT_GMRES_RESTART).
 * Returns GT_OK whatever the outcome; res->outcome and res->msg say it. An
 * outcome is "converged" only when the true residual ||b - A x|| / ||b||,
 * recomputed from x, is within 10 tol; GMRES restarts until the true
 * residual itself is within tol. A breakdown that leaves the residual above
 * tol (GMRES's invariant Krylov space, BiCGStab's rho = 0, a preconditioner
 * that fails in apply) is GT_SOLVE_BREAKDOWN with a message that names a
 * singular or inconsistent system as the likely cause. */
gt_status gt_solve_prec_cpu(const gt_csr *a, const gt_precond *m, const double *b, double *x,
                            const gt_solve_opts *o, int restart, gt_solve_result *res);

/* The check after a solve, shared with the GPU path: given res->relres, the
 * outcome and true_relres, demote a "converged" whose true residual is above
 * 10 tol to GT_SOLVE_BREAKDOWN with a message. */
void gt_solve_prec_honest(const gt_solve_opts *o, gt_solve_result *res);

/* The same check for the solvers without a preconditioner object (solvers.c
 * and the fused GPU kernels, prec 4 or 8), whose stopping test reads the
 * recurrence residual: a "converged" whose true residual (in double) is above
 * 10 tol becomes GT_SOLVE_BREAKDOWN with a message (naming single precision
 * when prec is 4); other outcomes are left as they are. */
void gt_solve_honest(const gt_solve_opts *o, int prec, gt_solve_result *res);

/* GMRES's small host work, shared by the CPU solver and the GPU one (which
 * keeps the Hessenberg matrix on the host): gt_gmres_givens applies the old
 * rotations to column j of h (column-major, leading dimension ld) and a new
 * one that zeroes h[j+1][j], g getting the new residual in g[j+1];
 * gt_gmres_back_solve solves the leading k x k triangle for y (a pivot
 * below 1e-12 of the largest gives 0). */
void gt_gmres_givens(double *h, int ld, int j, double *cs, double *sn, double *g);
void gt_gmres_back_solve(const double *h, int ld, int k, const double *g, double *y);

#ifdef __cplusplus
}
#endif
#endif
