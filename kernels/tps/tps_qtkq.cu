// The lower triangle of Q^T K Q for the fit's QR X = Q R (m <= 4 Householder
// reflectors V and their scales tau, from tps_house_qr on the host), K's
// entries U(|c_i - c_j|) computed where they are used: K is written once
// (its lower triangle, the only part the Cholesky, the affine rows and
// GCV's syevd read) and never read, instead of built, read twice and
// rewritten (n = 20000 on an H200: 7.4 -> 5.6 ms, the same numbers).
//
// Q = H_1 ... H_m = I - V T V^T (compact WY: V unit lower trapezoidal, T
// upper triangular as LAPACK's larft forms it). K is symmetric; with
// P = K V and M = T^T (V^T P) T (symmetric),
//   Q^T K Q = K - P T V^T - V T^T P^T + V M V^T = K - B V^T - V B^T,
//   B = P T - V M / 2.
// Pass 1 (tps_kv): P = K V; row j of P is column j of K against V, so
// each block forms whole columns of K (four at a time, lib/tps's tps_u_at,
// as the CPU's kernel matrix) against V from L2. On the host, O(n m^2):
// B (lib/tps/linalg.c, tps_wy_sym_factor, whose CPU test checks it against
// the reflectors applied one by one). Pass 2 (tps_sym_rank): K = U - B V^T
// - V B^T on and below the diagonal, threads along K's columns.
#include <cuda_runtime.h>

#include <cstdlib>

#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/tps/tps_cuda.h"
#include "tps/linalg.h"
#include "tps/tps_math.h"

namespace {

constexpr int KV_COLS = 4;     // columns of K per block of tps_kv
constexpr int KV_THREADS = 256;

template <int M>
__global__ void tps_kv(int kernel, size_t n, const double *__restrict__ pts, const double *__restrict__ V,
                       double *__restrict__ P)
{
    __shared__ double part[KV_THREADS / 32][KV_COLS * M];
    for (size_t j0 = (size_t)blockIdx.x * KV_COLS; j0 < n; j0 += (size_t)gridDim.x * KV_COLS) {
        double s[KV_COLS][M], cj[KV_COLS][3];
#pragma unroll
        for (int q = 0; q < KV_COLS; q++)
#pragma unroll
            for (int d = 0; d < 3; d++) cj[q][d] = j0 + q < n ? pts[3 * (j0 + q) + d] : 0.0;
#pragma unroll
        for (int q = 0; q < KV_COLS; q++)
#pragma unroll
            for (int c = 0; c < M; c++) s[q][c] = 0.0;
        for (size_t i = threadIdx.x; i < n; i += KV_THREADS) {
            double v[M];
#pragma unroll
            for (int c = 0; c < M; c++) v[c] = V[i + c * n];
#pragma unroll
            for (int q = 0; q < KV_COLS; q++) {
                if (j0 + q >= n) break;
                const double k = tps_u_at(kernel, pts[3 * i], pts[3 * i + 1], pts[3 * i + 2], cj[q][0], cj[q][1], cj[q][2]);
#pragma unroll
                for (int c = 0; c < M; c++) s[q][c] += k * v[c];
            }
        }
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
        for (int q = 0; q < KV_COLS; q++)
#pragma unroll
            for (int c = 0; c < M; c++) {
                double x = s[q][c];
                for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
                if (lane == 0) part[warp][q * M + c] = x;
            }
        __syncthreads();
        if (threadIdx.x < KV_COLS * M) {
            double x = 0.0;
            for (int w = 0; w < KV_THREADS / 32; w++) x += part[w][threadIdx.x];
            const int q = threadIdx.x / M, c = threadIdx.x % M;
            if (j0 + q < n) P[j0 + q + c * n] = x;
        }
        __syncthreads();
    }
}

// K[i + j n] = U(|c_i - c_j|) - sum_c B[i, c] V[j, c] + V[i, c] B[j, c] for
// j <= i; x over i, grid-stride over j (a thread stops at its diagonal)
template <int M>
__global__ void tps_sym_rank(int kernel, size_t n, const double *__restrict__ c, const double *__restrict__ B,
                             const double *__restrict__ V, double *__restrict__ K)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    double bi[M], vi[M];
#pragma unroll
    for (int q = 0; q < M; q++) bi[q] = B[i + q * n], vi[q] = V[i + q * n];
    const double xi = c[3 * i], yi = c[3 * i + 1], zi = c[3 * i + 2];
    for (size_t j = blockIdx.y * (size_t)blockDim.y + threadIdx.y; j <= i; j += (size_t)gridDim.y * blockDim.y) {
        double s = 0.0;
#pragma unroll
        for (int q = 0; q < M; q++) s += bi[q] * V[j + q * n] + vi[q] * B[j + q * n];
        K[i + j * n] = tps_u_at(kernel, xi, yi, zi, c[3 * j], c[3 * j + 1], c[3 * j + 2]) - s;
    }
}

template <int M>
gt_status launch_kv(int kernel, size_t n, const double *c, const double *V, double *P)
{
    size_t blocks = (n + KV_COLS - 1) / KV_COLS;
    tps_kv<M><<<(unsigned)(blocks < 1u << 30 ? blocks : 1u << 30), KV_THREADS>>>(kernel, n, c, V, P);
    GT_CU_LAUNCH("tps_kv");
    return GT_OK;
}

template <int M>
gt_status launch_rank(int kernel, size_t n, const double *c, const double *B, const double *V, double *K)
{
    dim3 blk(128, 4);
    size_t gy = (n + 3) / 4;
    dim3 grd((unsigned)((n + 127) / 128), (unsigned)(gy > 65535 ? 65535 : gy));
    tps_sym_rank<M><<<grd, blk>>>(kernel, n, c, B, V, K);
    GT_CU_LAUNCH("tps_sym_rank");
    return GT_OK;
}

} // namespace

extern "C" gt_status gt_tps_cuda_qtkq(int kernel, size_t n, const double *c, int m, const double *V,
                                      const double *tau, const double *dV, double *K, double *scratch)
{
    if (m < 1 || m > 4) return gt_fail(GT_ERR_GPU, "Q^T K Q: %d reflectors (1 to 4 expected)", m);
    const size_t nm = n * (size_t)m;
    double *h = (double *)malloc(2 * nm * sizeof(double));
    if (!h) return gt_fail(GT_ERR_RUNTIME, "out of host memory for Q^T K Q (%zu bytes)", 2 * nm * sizeof(double));
    double *hP = h, *hB = h + nm, *dP = scratch, *dB = scratch + nm;
    gt_status st = GT_OK;
#define CHK(x) do { st = (x); if (st != GT_OK) goto done; } while (0)
    switch (m) {
    case 1: CHK(launch_kv<1>(kernel, n, c, dV, dP)); break;
    case 2: CHK(launch_kv<2>(kernel, n, c, dV, dP)); break;
    case 3: CHK(launch_kv<3>(kernel, n, c, dV, dP)); break;
    default: CHK(launch_kv<4>(kernel, n, c, dV, dP)); break;
    }
    CHK(gt_cu_memcpy_d2h(hP, dP, nm * sizeof(double), nullptr));
    tps_wy_sym_factor(n, m, tau, V, hP, hB);
    CHK(gt_cu_memcpy_h2d(dB, hB, nm * sizeof(double), nullptr));
    switch (m) {
    case 1: CHK(launch_rank<1>(kernel, n, c, dB, dV, K)); break;
    case 2: CHK(launch_rank<2>(kernel, n, c, dB, dV, K)); break;
    case 3: CHK(launch_rank<3>(kernel, n, c, dB, dV, K)); break;
    default: CHK(launch_rank<4>(kernel, n, c, dB, dV, K)); break;
    }
done:
#undef CHK
    free(h);
    return st;
}
