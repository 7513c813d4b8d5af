// Power iteration on the device (the GPU twin of lib/sparse/power.c):
// y = A v (or A^T (A v)) with the CSR SpMV, lam = v.y / v.v, v = y / |y|,
// from the same start vector as the CPU; deterministic block-ordered sums.
#include <cuda_runtime.h>

#include <math.h>
#include <vector>

#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/sparse/sparse_cu.h"

namespace {

constexpr int PB = 256;
constexpr unsigned PG = 1024; // blocks of the partial sums

// out: [0] lam, [1] 1/|y|, [2] stopped (|y| = 0 or not finite)
template <typename T>
__global__ void k_pw_dots(int64_t n, const T *v, const T *y, double *part)
{
    __shared__ double sh[3][PB];
    double a = 0, b = 0, c = 0;
    for (int64_t i = (int64_t)blockIdx.x * PB + threadIdx.x; i < n; i += (int64_t)gridDim.x * PB) {
        double vi = (double)v[i], yi = (double)y[i];
        a += vi * yi, b += yi * yi, c += vi * vi;
    }
    sh[0][threadIdx.x] = a, sh[1][threadIdx.x] = b, sh[2][threadIdx.x] = c;
    __syncthreads();
    for (int s = PB / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            for (int k = 0; k < 3; k++) sh[k][threadIdx.x] += sh[k][threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x < 3) part[(size_t)threadIdx.x * gridDim.x + blockIdx.x] = sh[threadIdx.x][0];
}

__global__ void k_pw_fin(const double *part, unsigned g, double *out)
{
    if (threadIdx.x != 0 || out[2] != 0) return;
    double s[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++)
        for (unsigned b = 0; b < g; b++) s[k] += part[(size_t)k * g + b];
    out[0] = s[2] > 0 ? s[0] / s[2] : 0;
    if (!(s[1] > 0) || !isfinite(s[1])) out[2] = 1, out[1] = 0;
    else out[1] = 1.0 / sqrt(s[1]);
}

template <typename T>
__global__ void k_pw_scale(int64_t n, const T *y, T *v, const double *out)
{
    if (out[2] != 0) return;
    T s = (T)out[1];
    for (int64_t i = (int64_t)blockIdx.x * PB + threadIdx.x; i < n; i += (int64_t)gridDim.x * PB) v[i] = y[i] * s;
}

template <typename T>
gt_status power(const gt_spd *a, const gt_spd *at, int iters, double *est)
{
    int64_t n = a->ncols, m = a->nrows;
    std::vector<T> hv((size_t)n);
    for (int64_t i = 0; i < n; i++) hv[(size_t)i] = (T)gt_power_start(i);
    void *v = nullptr, *w = nullptr, *y = nullptr, *part = nullptr, *out = nullptr;
    gt_status s = GT_OK;
    auto cleanup = [&]() {
        for (void *p : {v, w, y, part, out})
            if (p) gt_cu_free(p);
    };
    size_t vb = (size_t)(n ? n : 1) * sizeof(T), wb = (size_t)(m ? m : 1) * sizeof(T);
    if (s == GT_OK) s = gt_cu_malloc(&v, vb, "power vectors");
    if (s == GT_OK) s = gt_cu_malloc(&w, wb, "power vectors");
    if (s == GT_OK && at) s = gt_cu_malloc(&y, vb, "power vectors");
    if (s == GT_OK) s = gt_cu_malloc(&part, PG * 3 * sizeof(double), "power sums");
    if (s == GT_OK) s = gt_cu_malloc(&out, 3 * sizeof(double), "power sums");
    if (s == GT_OK) s = gt_cu_memcpy_h2d(v, hv.data(), (size_t)n * sizeof(T), nullptr);
    if (s == GT_OK) s = gt_cu_memset(out, 0, 3 * sizeof(double), nullptr);
    unsigned g = gt_grid((size_t)n, PB, PG);
    for (int k = 0; s == GT_OK && k < iters; k++) {
        s = gt_cu_spmv(a, GT_SPMV_CSR_SCALAR, v, w, nullptr);
        const T *yy = (const T *)w;
        if (s == GT_OK && at) s = gt_cu_spmv(at, GT_SPMV_CSR_SCALAR, w, y, nullptr), yy = (const T *)y;
        if (s != GT_OK) break;
        k_pw_dots<T><<<g, PB>>>(n, (const T *)v, yy, (double *)part);
        k_pw_fin<<<1, 32>>>((const double *)part, g, (double *)out);
        k_pw_scale<T><<<g, PB>>>(n, yy, (T *)v, (const double *)out);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) s = gt_fail(GT_ERR_GPU, "power iteration: %s", cudaGetErrorString(e));
    }
    double h[3] = {0, 0, 0};
    if (s == GT_OK) s = gt_cu_memcpy_d2h(h, out, sizeof h, nullptr);
    if (s == GT_OK) s = gt_cu_sync();
    if (s == GT_OK) *est = h[0];
    cleanup();
    return s;
}

} // namespace

extern "C" gt_status gt_cu_power(const gt_spd *a, const gt_spd *at, int iters, double *est)
{
    if (at && at->prec != a->prec) return gt_fail(GT_ERR_RUNTIME, "power iteration: mixed precisions");
    if (a->prec == 4) return power<float>(a, at, iters, est);
    return power<double>(a, at, iters, est);
}
