/* Private to lib/tps: the dense linear algebra of the CPU fit (linalg.c).
 * Matrices are column-major with leading dimension ld. */
#ifndef GT_TPS_LINALG_H
#define GT_TPS_LINALG_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" { /* tps_wy_sym_factor is called by kernels/tps/tps_qtkq.cu */
#endif

/* Householder QR of X (n x m, ld n, m <= 4), overwritten by the reflectors
 * v_j as full n-vectors (zero above j, v_j[j] = 1); tau (m) and R (m x m)
 * out. */
void tps_house_qr(double *X, size_t n, int m, double *tau, double *R);
/* y <- H y, H = I - tau v v^T, for the nb columns (length n, stride ld) of Y. */
void tps_reflect(double *Y, size_t ld, size_t n, int nb, const double *v, double tau);
/* K <- H K H for the symmetric n x n block K (ld); p: n doubles of scratch. */
void tps_reflect_sym(double *K, size_t ld, size_t n, const double *v, double tau, double *p);
/* K <- Q^T K Q through the compact WY form of Q = H_1 ... H_m (m <= 4):
 * from the reflectors V (n x m, as tps_house_qr leaves them: zero above j,
 * 1 at j), their scales tau and P = K V (n x m), B (n x m) such that
 * Q^T K Q = K - B V^T - V B^T for symmetric K. */
void tps_wy_sym_factor(size_t n, int m, const double *tau, const double *V, const double *P, double *B);
/* In-place Cholesky of the N x N block A (ld): L(i,k) for k <= i is stored
 * at A[k + i*ld] (the upper triangle, read as row-major lower), from the
 * symmetric input. false when A is not positive definite. */
bool tps_cholesky(double *A, size_t ld, size_t N);
/* b <- A^-1 b with A's Cholesky factor from tps_cholesky. */
void tps_chol_solve(const double *A, size_t ld, size_t N, double *b);

#ifdef __cplusplus
}
#endif
#endif
