/* Dense linear algebra of the CPU fit (lib/tps/fit.c) and GCV: Householder
 * QR with the reflectors applied to symmetric matrices from both sides, a
 * blocked Cholesky and its solve, and the symmetric eigen solver
 * gt_tps_syev_apply (Householder tridiagonalisation, implicit QL). Column-
 * major throughout; OpenMP on the O(n^2) loops of large problems. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "tps/linalg.h"
#include "tps/tps.h"

/* The reflector H = I - tau v v^T with H x = (beta, 0, ..., 0)^T for x of
 * length len: v[0] = 1 (implied, x[0] is left alone) and v[1..] = x[1..] /
 * (alpha - beta) written over x[1..]. Returns tau; 0 (H = I, beta = x[0])
 * when x[1..] is zero. */
static double reflector(double *x, size_t len, double *beta)
{
    double alpha = x[0], xn = 0.0;
    for (size_t i = 1; i < len; i++) xn = hypot(xn, x[i]);
    if (xn == 0.0) {
        *beta = alpha;
        return 0.0;
    }
    double b = -copysign(hypot(alpha, xn), alpha);
    double s = 1.0 / (alpha - b);
    for (size_t i = 1; i < len; i++) x[i] *= s;
    *beta = b;
    return (b - alpha) / b;
}

void tps_reflect(double *Y, size_t ld, size_t n, int nb, const double *v, double tau)
{
    for (int c = 0; c < nb; c++) {
        double *y = Y + (size_t)c * ld, s = 0.0;
        for (size_t i = 0; i < n; i++) s += v[i] * y[i];
        s *= tau;
        for (size_t i = 0; i < n; i++) y[i] -= s * v[i];
    }
}

void tps_reflect_sym(double *K, size_t ld, size_t n, const double *v, double tau, double *p)
{
    if (tau == 0.0) return;
#pragma omp parallel for schedule(static) if (n > 512)
    for (size_t i = 0; i < n; i++) { /* p = tau K v (K symmetric: row i = column i) */
        const double *col = K + i * ld;
        double s = 0.0;
        for (size_t k = 0; k < n; k++) s += col[k] * v[k];
        p[i] = tau * s;
    }
    double vp = 0.0;
    for (size_t i = 0; i < n; i++) vp += v[i] * p[i];
    double h = 0.5 * tau * vp;
    for (size_t i = 0; i < n; i++) p[i] -= h * v[i];
#pragma omp parallel for schedule(static) if (n > 512)
    for (size_t j = 0; j < n; j++) {
        double *col = K + j * ld;
        double vj = v[j], pj = p[j];
        for (size_t i = 0; i < n; i++) col[i] -= v[i] * pj + p[i] * vj;
    }
}

void tps_house_qr(double *X, size_t n, int m, double *tau, double *R)
{
    memset(R, 0, sizeof(double) * (size_t)m * m);
    for (int j = 0; j < m; j++) {
        double *x = X + (size_t)j * n, beta;
        tau[j] = reflector(x + j, n - (size_t)j, &beta);
        x[j] = 1.0;
        /* H_j to columns j+1.. */
        tps_reflect(X + (size_t)(j + 1) * n + j, n, n - (size_t)j, m - j - 1, x + j, tau[j]);
        for (int i = 0; i < j; i++) R[i + (size_t)j * m] = x[i];
        R[j + (size_t)j * m] = beta;
        for (int i = 0; i < j; i++) x[i] = 0.0; /* v_j as a full n-vector */
    }
}

/* Row i of the Cholesky's trailing update: A[j][i] -= sum_k A[k][i] A[k][j]
 * over the panel's columns k in [kb, kb + nk), for ke <= j <= i. Four dot
 * products share each load of row i's panel, and each sums in SIMD lanes
 * (the reduction is reassociated: the factor agrees with a plain loop to
 * rounding, not bit for bit); compiled twice, for AVX2 with FMA and for the
 * baseline, the one the CPU has chosen when the program loads. ~90 % of the
 * fit's time at n = 1742. */
static void update_row(double *A, size_t ld, size_t i, size_t kb, size_t nk, size_t ke)
{
    double *ri = A + i * ld;
    const double *pi = ri + kb;
    size_t j = ke;
    for (; j + 3 <= i; j += 4) {
        const double *p0 = A + j * ld + kb, *p1 = p0 + ld, *p2 = p1 + ld, *p3 = p2 + ld;
        double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
#pragma omp simd reduction(+ : t0, t1, t2, t3)
        for (size_t k = 0; k < nk; k++) {
            const double x = pi[k];
            t0 += x * p0[k];
            t1 += x * p1[k];
            t2 += x * p2[k];
            t3 += x * p3[k];
        }
        ri[j] -= t0;
        ri[j + 1] -= t1;
        ri[j + 2] -= t2;
        ri[j + 3] -= t3;
    }
    for (; j <= i; j++) {
        const double *pj = A + j * ld + kb;
        double t = 0.0;
#pragma omp simd reduction(+ : t)
        for (size_t k = 0; k < nk; k++) t += pi[k] * pj[k];
        ri[j] -= t;
    }
}

/* The trailing update after the panel [kb, ke), a separate loop from the
 * panel: row i's update reads the panel of rows j <= i. */
static void trailing_update(double *A, size_t ld, size_t N, size_t kb, size_t ke)
{
#pragma omp parallel for schedule(dynamic, 16) if (N - ke > 256)
    for (size_t i = ke; i < N; i++) update_row(A, ld, i, kb, ke - kb, ke);
}

bool tps_cholesky(double *A, size_t ld, size_t N)
{
    /* blocked right-looking: every inner product runs over contiguous row
     * pieces of length <= NB */
    enum { NB = 64 };
    for (size_t kb = 0; kb < N; kb += NB) {
        size_t ke = kb + NB < N ? kb + NB : N;
        for (size_t j = kb; j < ke; j++) { /* diagonal block */
            double *rj = A + j * ld;
            double s = rj[j];
            for (size_t k = kb; k < j; k++) s -= rj[k] * rj[k];
            if (!(s > 0.0)) return false;
            rj[j] = sqrt(s);
            for (size_t i = j + 1; i < ke; i++) {
                double *ri = A + i * ld, t = ri[j];
                for (size_t k = kb; k < j; k++) t -= ri[k] * rj[k];
                ri[j] = t / rj[j];
            }
        }
        /* panel below the diagonal block, then the trailing update */
#pragma omp parallel for schedule(dynamic, 16) if (N - ke > 512)
        for (size_t i = ke; i < N; i++) {
            double *ri = A + i * ld;
            for (size_t j = kb; j < ke; j++) {
                const double *rj = A + j * ld;
                double t = ri[j];
                for (size_t k = kb; k < j; k++) t -= ri[k] * rj[k];
                ri[j] = t / rj[j];
            }
        }
        trailing_update(A, ld, N, kb, ke);
    }
    return true;
}

void tps_chol_solve(const double *A, size_t ld, size_t N, double *b)
{
    for (size_t i = 0; i < N; i++) { /* L y = b */
        const double *ri = A + i * ld;
        double t = b[i];
        for (size_t k = 0; k < i; k++) t -= ri[k] * b[k];
        b[i] = t / ri[i];
    }
    for (size_t i = N; i-- > 0;) { /* L^T x = y */
        const double *ri = A + i * ld;
        b[i] /= ri[i];
        double xi = b[i];
        for (size_t k = 0; k < i; k++) b[k] -= ri[k] * xi;
    }
}

gt_status gt_tps_syev_apply(double *S, size_t ld, size_t m, double *d, double *b, int nb)
{
    double *e = gt_calloc(m + 1, sizeof(double), "eigen solver");
    double *v = gt_malloc_array(m + 1, sizeof(double), "eigen solver");
    double *p = gt_malloc_array(m + 1, sizeof(double), "eigen solver");
    if (!e || !v || !p) {
        free(e); free(v); free(p);
        return GT_ERR_RUNTIME;
    }
    /* Householder tridiagonalisation: for column k, reflect rows k+1.. */
    for (size_t k = 0; k + 2 < m; k++) {
        size_t len = m - k - 1;
        double *x = S + (k + 1) + k * ld, beta;
        double tau = reflector(x, len, &beta);
        if (tau == 0.0) continue; /* already tridiagonal here */
        v[0] = 1.0;
        for (size_t i = 1; i < len; i++) v[i] = x[i];
        x[0] = beta;
        for (size_t i = 1; i < len; i++) x[i] = 0.0;
        S[k + (k + 1) * ld] = beta;
        /* trailing block T = S[k+1.., k+1..]: T <- H T H (lower+upper kept); b <- H b */
        tps_reflect_sym(S + (k + 1) + (k + 1) * ld, ld, len, v, tau, p);
        tps_reflect(b + k + 1, m, len, nb, v, tau);
    }
    for (size_t i = 0; i < m; i++) {
        d[i] = S[i + i * ld];
        e[i] = i + 1 < m ? S[(i + 1) + i * ld] : 0.0;
    }
    /* implicit QL with Wilkinson-style shift; rotations applied to b's rows */
    for (long l = 0; l < (long)m; l++) {
        int iter = 0;
        long mm;
        do {
            for (mm = l; mm < (long)m - 1; mm++) {
                double dd = fabs(d[mm]) + fabs(d[mm + 1]);
                if (fabs(e[mm]) <= DBL_EPSILON * dd) break;
            }
            if (mm != l) {
                if (iter++ == 100) {
                    free(e); free(v); free(p);
                    return gt_fail(GT_ERR_RUNTIME, "the GCV eigen solver did not converge");
                }
                double g = (d[l + 1] - d[l]) / (2.0 * e[l]);
                double r = hypot(g, 1.0);
                g = d[mm] - d[l] + e[l] / (g + copysign(r, g));
                double s = 1.0, c = 1.0, pp = 0.0;
                long i;
                for (i = mm - 1; i >= l; i--) {
                    double f = s * e[i], bb = c * e[i];
                    e[i + 1] = (r = hypot(f, g));
                    if (r == 0.0) {
                        d[i + 1] -= pp;
                        e[mm] = 0.0;
                        break;
                    }
                    s = f / r;
                    c = g / r;
                    g = d[i + 1] - pp;
                    r = (d[i] - g) * s + 2.0 * c * bb;
                    d[i + 1] = g + (pp = s * r);
                    g = c * r - bb;
                    for (int q = 0; q < nb; q++) {
                        double *y = b + (size_t)q * m;
                        double t = y[i + 1];
                        y[i + 1] = s * y[i] + c * t;
                        y[i] = c * y[i] - s * t;
                    }
                }
                if (r == 0.0 && i >= l) continue;
                d[l] -= pp;
                e[l] = g;
                e[mm] = 0.0;
            }
        } while (mm != l);
    }
    free(e); free(v); free(p);
    return GT_OK;
}

/* The compact WY form of Q = H_1 ... H_m = I - V T V^T (T upper triangular,
 * LAPACK's larft, forward and columnwise) turns K <- Q^T K Q for symmetric K
 * into one symmetric rank-2m update: with P = K V and M = T^T (V^T P) T,
 *   Q^T K Q = K - P T V^T - V T^T P^T + V M V^T = K - B V^T - V B^T,
 *   B = P T - V M / 2.
 * The GPU fit (kernels/tps/tps_qtkq.cu) forms P and the update on the device
 * and B here. */
void tps_wy_sym_factor(size_t n, int m, const double *tau, const double *V, const double *P, double *B)
{
    double G[4][4] = {{0}}, C[4][4] = {{0}}, T[4][4] = {{0}}, CT[4][4] = {{0}}, M[4][4] = {{0}};
    for (int a = 0; a < m; a++)
        for (int b = 0; b < m; b++) {
            double g = 0.0, c = 0.0;
            for (size_t r = 0; r < n; r++) {
                g += V[r + a * n] * V[r + b * n];
                c += V[r + a * n] * P[r + b * n];
            }
            G[a][b] = g, C[a][b] = c;
        }
    /* T[i][i] = tau_i, T[0:i, i] = -tau_i T[0:i, 0:i] V[:, 0:i]^T v_i */
    for (int i = 0; i < m; i++) {
        T[i][i] = tau[i];
        for (int r = 0; r < i; r++) {
            double x = 0.0;
            for (int s = r; s < i; s++) x += T[r][s] * G[s][i];
            T[r][i] = -tau[i] * x;
        }
    }
    for (int a = 0; a < m; a++)
        for (int b = 0; b < m; b++) {
            double x = 0.0;
            for (int s = 0; s < m; s++) x += C[a][s] * T[s][b];
            CT[a][b] = x;
        }
    for (int a = 0; a < m; a++)
        for (int b = 0; b < m; b++) {
            double x = 0.0;
            for (int s = 0; s < m; s++) x += T[s][a] * CT[s][b];
            M[a][b] = x;
        }
    for (size_t r = 0; r < n; r++)
        for (int b = 0; b < m; b++) {
            double x = 0.0;
            for (int s = 0; s < m; s++) x += P[r + s * n] * T[s][b] - 0.5 * V[r + s * n] * M[s][b];
            B[r + b * n] = x;
        }
}
