// AMG on the GPU, the coarsest level: A made dense and inverted once at
// set-up by Gauss-Jordan elimination with partial pivoting, in one thread
// block up to 384 rows, above that a launch pair per column over the whole
// GPU (our own kernels: cuSOLVER would be dlopened, ~0.2 s of start-up),
// so that the solve inside every V-cycle is one dense matrix-vector product
// (a warp per row) instead of 2n dependent steps of triangular solves. The
// CPU reference factors instead (Cholesky, LU when not SPD); both solve the
// same system, so they agree to rounding times the coarse condition number.
#include <cuda_runtime.h>

#include "kernels/sparse/amg_cu_impl.cuh"

namespace {

constexpr int GJ = 1024;
constexpr int64_t GJ_ONE_BLOCK = 384; // above: a launch pair per column over the whole GPU

__global__ void k_densify(int64_t n, const int64_t *__restrict__ ptr, const int32_t *__restrict__ col,
                          const double *__restrict__ val, double *__restrict__ m, double *__restrict__ inv)
{
    for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) m[i * n + j] = 0, inv[i * n + j] = i == j;
        __syncthreads();
        if (threadIdx.x == 0)
            for (int64_t p = ptr[i]; p < ptr[i + 1]; p++) m[i * n + col[p]] += val[p];
        __syncthreads();
    }
}

// Step k's pivot of the elimination, by the whole block: the largest |m_ik|
// at or below row k (lowest row on ties) swapped into row k of m and inv,
// row k scaled by 1/m_kk, and f the column's multipliers (0 at k). Returns
// false (and sets *singular) on a zero pivot. m and inv row-major n x n.
__device__ bool gj_pivot_step(int64_t n, int64_t k, double *m, double *inv, double *f, int *singular)
{
    __shared__ double bv[GJ];
    __shared__ int64_t bi[GJ];
    __shared__ double piv;
    double best = -1;
    int64_t bidx = k;
    for (int64_t i = k + threadIdx.x; i < n; i += GJ) {
        double v = fabs(m[i * n + k]);
        if (v > best) best = v, bidx = i;
    }
    // the largest (lowest row on ties) within each warp by shuffles, then
    // over the warps' winners by the first warp: two barriers, not ten
    auto better = [](double o, int64_t oi, double v, int64_t vi) { return o > v || (o == v && oi < vi); };
    for (int o = 16; o > 0; o /= 2) {
        double ov = __shfl_down_sync(0xffffffffu, best, o);
        int64_t oi = __shfl_down_sync(0xffffffffu, bidx, o);
        if (better(ov, oi, best, bidx)) best = ov, bidx = oi;
    }
    if ((threadIdx.x & 31) == 0) bv[threadIdx.x >> 5] = best, bi[threadIdx.x >> 5] = bidx;
    __syncthreads();
    if (threadIdx.x < 32) {
        best = threadIdx.x < GJ / 32 ? bv[threadIdx.x] : -1, bidx = threadIdx.x < GJ / 32 ? bi[threadIdx.x] : n;
        for (int o = 16; o > 0; o /= 2) {
            double ov = __shfl_down_sync(0xffffffffu, best, o);
            int64_t oi = __shfl_down_sync(0xffffffffu, bidx, o);
            if (better(ov, oi, best, bidx)) best = ov, bidx = oi;
        }
        if (threadIdx.x == 0) bv[0] = best, bi[0] = bidx;
    }
    __syncthreads();
    int64_t p = bi[0];
    if (!(bv[0] > 0)) {
        if (threadIdx.x == 0) *singular = 1;
        return false;
    }
    if (p != k)
        for (int64_t j = threadIdx.x; j < n; j += GJ) {
            double t = m[k * n + j];
            m[k * n + j] = m[p * n + j], m[p * n + j] = t;
            t = inv[k * n + j];
            inv[k * n + j] = inv[p * n + j], inv[p * n + j] = t;
        }
    __syncthreads();
    if (threadIdx.x == 0) piv = 1.0 / m[k * n + k];
    __syncthreads();
    for (int64_t j = threadIdx.x; j < n; j += GJ) m[k * n + j] *= piv, inv[k * n + j] *= piv;
    for (int64_t i = threadIdx.x; i < n; i += GJ) f[i] = i == k ? 0 : m[i * n + k];
    return true;
}

// m and inv row-major n x n; f: n scratch; *singular set on a zero pivot
__global__ void __launch_bounds__(GJ) k_gauss_jordan(int64_t n, double *m, double *inv, double *f, int *singular)
{
    for (int64_t k = 0; k < n; k++) {
        if (!gj_pivot_step(n, k, m, inv, f, singular)) return;
        __syncthreads();
        // a warp per row, lanes along the row (coalesced, no index division)
        for (int64_t i = threadIdx.x >> 5; i < n; i += GJ / 32) {
            double fi = f[i];
            if (fi == 0) continue;
            for (int64_t j = k + (threadIdx.x & 31); j < n; j += 32) m[i * n + j] -= fi * m[k * n + j];
            for (int64_t j = threadIdx.x & 31; j < n; j += 32) inv[i * n + j] -= fi * inv[k * n + j];
        }
        __syncthreads();
    }
}

// Larger n: one step of the same elimination as two launches over the
// whole GPU (pivot, swap and scale in one block; the update in a 2-D grid),
// since one block would do all ~1.5 n^3 updates on a single SM.
__global__ void __launch_bounds__(GJ) k_gj_pivot(int64_t n, int64_t k, double *m, double *inv, double *f, int *singular)
{
    if (*singular) return;
    (void)gj_pivot_step(n, k, m, inv, f, singular);
}

__global__ void k_gj_update(int64_t n, int64_t k, double *m, double *inv, const double *f, const int *singular)
{
    if (*singular) return;
    int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    for (int64_t i = blockIdx.y; i < n; i += gridDim.y) {
        double fi = f[i];
        if (fi == 0) continue;
        if (j >= k) m[i * n + j] -= fi * m[k * n + j];
        inv[i * n + j] -= fi * inv[k * n + j];
    }
}

// Small n (the whole matrix in shared memory): in-place Gauss-Jordan with
// the same pivots (largest |m_ik| at or below k, lowest row on ties), the
// row swaps undone as column swaps at the end: every step's work stays in
// shared memory, where the global version above waits on memory at each of
// its barriers (about 10 us a step on 125 rows). m (n x n, row-major) in,
// inv out.
__global__ void __launch_bounds__(GJ) k_gauss_jordan_shared(int64_t n, const double *__restrict__ m,
                                                            double *__restrict__ inv, int *singular)
{
    extern __shared__ double a[];     // n * n
    double *f = a + n * n;            // n: the column's multipliers
    int *perm = (int *)(f + n);       // n: the row swapped into k
    __shared__ double bv[GJ / 32];
    __shared__ int bi[GJ / 32];
    __shared__ int bad;
    for (int64_t q = threadIdx.x; q < n * n; q += GJ) a[q] = m[q];
    if (threadIdx.x == 0) bad = 0;
    __syncthreads();
    for (int k = 0; k < n; k++) {
        double best = -1;
        int bidx = (int)n;
        for (int i = k + threadIdx.x; i < n; i += GJ) {
            double v = fabs(a[(int64_t)i * n + k]);
            if (v > best) best = v, bidx = i;
        }
        for (int o = 16; o > 0; o /= 2) {
            double ov = __shfl_down_sync(0xffffffffu, best, o);
            int oi = __shfl_down_sync(0xffffffffu, bidx, o);
            if (ov > best || (ov == best && oi < bidx)) best = ov, bidx = oi;
        }
        if ((threadIdx.x & 31) == 0) bv[threadIdx.x >> 5] = best, bi[threadIdx.x >> 5] = bidx;
        __syncthreads();
        if (threadIdx.x < 32) {
            best = bv[threadIdx.x], bidx = bi[threadIdx.x];
            for (int o = 16; o > 0; o /= 2) {
                double ov = __shfl_down_sync(0xffffffffu, best, o);
                int oi = __shfl_down_sync(0xffffffffu, bidx, o);
                if (ov > best || (ov == best && oi < bidx)) best = ov, bidx = oi;
            }
            if (threadIdx.x == 0) {
                if (!(best > 0)) bad = 1;
                perm[k] = bidx;
            }
        }
        __syncthreads();
        if (bad) break;
        int p = perm[k];
        if (p != k)
            for (int64_t j = threadIdx.x; j < n; j += GJ) {
                double t = a[(int64_t)k * n + j];
                a[(int64_t)k * n + j] = a[(int64_t)p * n + j], a[(int64_t)p * n + j] = t;
            }
        __syncthreads();
        double piv = 1.0 / a[(int64_t)k * n + k];
        for (int64_t i = threadIdx.x; i < n; i += GJ) f[i] = i == k ? 0 : a[i * n + k];
        __syncthreads();
        for (int64_t j = threadIdx.x; j < n; j += GJ) a[(int64_t)k * n + j] = j == k ? piv : a[(int64_t)k * n + j] * piv;
        __syncthreads();
        for (int64_t q = threadIdx.x; q < n * n; q += GJ) {
            int64_t i = q / n, j = q - i * n;
            if (i == k || f[i] == 0) continue;
            a[q] = (j == k ? 0 : a[q]) - f[i] * a[(int64_t)k * n + j];
        }
        __syncthreads();
    }
    if (bad) {
        if (threadIdx.x == 0) *singular = 1;
        return;
    }
    for (int k = (int)n - 1; k >= 0; k--) {
        int p = perm[k];
        if (p != k)
            for (int64_t i = threadIdx.x; i < n; i += GJ) {
                double t = a[i * n + k];
                a[i * n + k] = a[i * n + p], a[i * n + p] = t;
            }
        __syncthreads();
    }
    for (int64_t q = threadIdx.x; q < n * n; q += GJ) inv[q] = a[q];
}

__global__ void k_dense_mv(int64_t n, const double *__restrict__ a, const double *__restrict__ x, double *__restrict__ y)
{
    int lane = threadIdx.x & 31;
    for (int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < n;
         i += ((int64_t)gridDim.x * blockDim.x) >> 5) {
        double s = 0;
        for (int64_t j = lane; j < n; j += 32) s += a[i * n + j] * x[j];
        for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0) y[i] = s;
    }
}

} // namespace

gt_status amg_cu_coarse_inverse(const amg_dcsr *a, double **inv, cudaStream_t st)
{
    int64_t n = a->n;
    *inv = nullptr;
    if (n > GT_AMG_MAX_DENSE)
        return gt_fail(GT_ERR_DATA, "amg: coarsening stopped at %lld rows, too many for the dense coarse solve (at most %d)",
                       (long long)n, GT_AMG_MAX_DENSE);
    double *m = nullptr, *f = nullptr;
    int *sing = nullptr;
    gt_status s = gt_cu_malloc((void **)&m, (size_t)(n * n) * 8, "amg coarse matrix");
    if (s == GT_OK) s = gt_cu_malloc((void **)inv, (size_t)(n * n) * 8, "amg coarse inverse");
    if (s == GT_OK) s = gt_cu_malloc((void **)&f, (size_t)n * 8 + 8, "amg coarse scratch");
    if (s == GT_OK) s = gt_cu_malloc((void **)&sing, 4, "amg coarse flag");
    int hs = 0;
    if (s == GT_OK) {
        cudaMemsetAsync(sing, 0, 4, st);
        k_densify<<<(unsigned)(n < 4096 ? n : 4096), 128, 0, st>>>(n, a->ptr, a->col, a->val, m, *inv);
        size_t shb = (size_t)n * (size_t)n * 8 + (size_t)n * 12;
        int dev = 0, optin = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
        if (shb + 1024 <= (size_t)optin &&
            cudaFuncSetAttribute(k_gauss_jordan_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shb) ==
                cudaSuccess)
            k_gauss_jordan_shared<<<1, GJ, shb, st>>>(n, m, *inv, sing);
        else if (n <= GJ_ONE_BLOCK)
            k_gauss_jordan<<<1, GJ, 0, st>>>(n, m, *inv, f, sing);
        else {
            dim3 grid((unsigned)((n + 127) / 128), (unsigned)(n < 1024 ? n : 1024));
            for (int64_t k = 0; k < n; k++) {
                k_gj_pivot<<<1, GJ, 0, st>>>(n, k, m, *inv, f, sing);
                k_gj_update<<<grid, 128, 0, st>>>(n, k, m, *inv, f, sing);
            }
        }
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaMemcpyAsync(&hs, sing, 4, cudaMemcpyDeviceToHost, st);
        if (e == cudaSuccess) e = cudaStreamSynchronize(st);
        if (e != cudaSuccess) s = gt_cu_status_from(e, "k_gauss_jordan", __FILE__, __LINE__);
    }
    if (s == GT_OK && hs) s = gt_fail(GT_ERR_DATA, "amg: the coarsest operator (%lld rows) is singular", (long long)n);
    gt_cu_free(m), gt_cu_free(f), gt_cu_free(sing);
    if (s != GT_OK) gt_cu_free(*inv), *inv = nullptr;
    return s;
}

void amg_cu_coarse_apply(int64_t n, const double *inv, const double *b, double *x, cudaStream_t st)
{
    k_dense_mv<<<gt_grid((size_t)n * 32, 256), 256, 0, st>>>(n, inv, b, x);
}
