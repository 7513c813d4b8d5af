// AMG set-up on the GPU, stage 3 (twin of lib/sparse/amg_prolong.c): the
// power estimate of rho(D^-1 A) (SpMV, block partial sums, one finishing
// block, the scaling: no host round trip until the end), the smoothed
// prolongator P = (I - w D^-1 A) T (short rows: a thread per row runs the
// CPU's loop; long rows: A T by the Galerkin stage's hash product, a warp
// per row, then one pass that scales it and adds T), and the transpose
// R = P^T (column counts, scan, atomic scatter).
// R's rows are left unsorted: its users (the hash SpGEMM and the SpMV) do
// not need the order, and an insertion sort of rows of ~100 entries (a
// column of P in 3-D) by a thread each would be the slowest step here.
#include <cuda_runtime.h>

#include "kernels/common/cu_prim.h"
#include "kernels/sparse/amg_cu_impl.cuh"

namespace {

constexpr int B = 256;
constexpr unsigned PG = 512; // blocks of the partial sums
// Up to this mean row length P is formed by a thread per row (7-point
// Laplacian's level 0, 7 a row: 0.7 ms against 6 ms for the hash product
// with a warp per row), above it by the hash product (level 1, 33 a row:
// 0.9 ms against 1.7; level 2, 132 a row: 0.2 ms against 4.0; ncu, H200).
constexpr int64_t ROW_THREAD_MAX = 16;

__global__ void k_start(int64_t n, double *v)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) {
        uint32_t h = (uint32_t)i * 2654435761u; // gt_power_start (lib/sparse/power.c)
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        v[i] = (double)(h >> 8) / 16777216.0 - 0.5;
    }
}

__global__ void k_dots(int64_t n, const double *__restrict__ v, const double *__restrict__ y,
                       const double *__restrict__ dinv, double *__restrict__ part)
{
    __shared__ double sh[3][B];
    double a = 0, b = 0, c = 0;
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) {
        double vi = v[i], yi = y[i], di = dinv[i];
        a += vi * yi, b += vi * vi / di, c += di * yi * yi;
    }
    sh[0][threadIdx.x] = a, sh[1][threadIdx.x] = b, sh[2][threadIdx.x] = c;
    __syncthreads();
    for (int s = B / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            for (int k = 0; k < 3; k++) sh[k][threadIdx.x] += sh[k][threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x < 3) part[(size_t)threadIdx.x * gridDim.x + blockIdx.x] = sh[threadIdx.x][0];
}

// out: [0] lam, [1] scale, [2] stopped; one block of B threads sums the
// g partial sums of each kind (a single thread took 50 us a call)
__global__ void k_fin(const double *part, unsigned g, double *out)
{
    __shared__ double sh[3][B];
    if (out[2] != 0) return;
    double s[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++)
        for (unsigned b = threadIdx.x; b < g; b += B) s[k] += part[(size_t)k * g + b];
    for (int k = 0; k < 3; k++) sh[k][threadIdx.x] = s[k];
    __syncthreads();
    for (int h = B / 2; h > 0; h /= 2) {
        if (threadIdx.x < h)
            for (int k = 0; k < 3; k++) sh[k][threadIdx.x] += sh[k][threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x != 0) return;
    out[0] = sh[1][0] > 0 ? sh[0][0] / sh[1][0] : 0;
    if (!(sh[2][0] > 0) || !isfinite(sh[2][0])) out[2] = 1, out[1] = 0;
    else out[1] = 1.0 / sqrt(sh[2][0]);
}

__global__ void k_scale(int64_t n, const double *__restrict__ y, const double *__restrict__ dinv, double *__restrict__ v,
                        const double *out)
{
    if (out[2] != 0) return;
    double s = out[1];
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) v[i] = y[i] * dinv[i] * s;
}

__global__ void k_agg_size(int64_t n, const int32_t *__restrict__ agg, unsigned *cnt)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) atomicAdd(cnt + agg[i], 1u);
}

__global__ void k_agg_scale(int64_t m, const unsigned *__restrict__ cnt, double *__restrict__ sc)
{
    for (int64_t k = (int64_t)blockIdx.x * B + threadIdx.x; k < m; k += (int64_t)gridDim.x * B)
        sc[k] = 1.0 / sqrt((double)cnt[k]);
}

// P row by row, a thread each, the CPU's loop (gt_amg_prolong_row, amg.h):
// quadratic in the row's length, so only for short rows (ROW_THREAD_MAX
// entries a row on average)
template <bool FILL>
__global__ void k_prolong(int64_t n, const int64_t *__restrict__ ptr, const int32_t *__restrict__ col,
                          const double *__restrict__ val, const double *__restrict__ dinv,
                          const int32_t *__restrict__ agg, const double *__restrict__ sc, double w,
                          int64_t *__restrict__ pptr, int32_t *__restrict__ pcol, double *__restrict__ pval)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) {
        if (!FILL) pptr[i + 1] = gt_amg_prolong_row_len(col, ptr[i], ptr[i + 1], agg, agg[i]);
        else gt_amg_prolong_row(col, val, ptr[i], ptr[i + 1], agg, sc, agg[i], -w * dinv[i], pcol + pptr[i], pval + pptr[i]);
    }
}

// T as a CSR matrix: one entry per row, T[i][agg[i]] = sc[agg[i]] (its
// columns are agg itself)
__global__ void k_tentative(int64_t n, const int32_t *__restrict__ agg, const double *__restrict__ sc,
                            int64_t *__restrict__ tptr, double *__restrict__ tval)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i <= n; i += (int64_t)gridDim.x * B) {
        tptr[i] = i;
        if (i < n) tval[i] = sc[agg[i]];
    }
}

// P = T - w D^-1 (A T) in place over A T's rows, whose columns include
// agg[i] (A's diagonal is stored: dinv checked it)
__global__ void k_smooth(int64_t n, const int64_t *__restrict__ pptr, const int32_t *__restrict__ pcol,
                         double *__restrict__ pval, const double *__restrict__ dinv, const int32_t *__restrict__ agg,
                         const double *__restrict__ sc, double w)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) {
        double f = -w * dinv[i];
        int32_t gi = agg[i];
        for (int64_t q = pptr[i]; q < pptr[i + 1]; q++) pval[q] = f * pval[q] + (pcol[q] == gi ? sc[gi] : 0.0);
    }
}

__global__ void k_col_count(int64_t nnz, const int32_t *__restrict__ col, unsigned long long *tcnt)
{
    for (int64_t p = (int64_t)blockIdx.x * B + threadIdx.x; p < nnz; p += (int64_t)gridDim.x * B)
        atomicAdd(tcnt + col[p] + 1, 1ull);
}

__global__ void k_scatter(int64_t n, const int64_t *__restrict__ ptr, const int32_t *__restrict__ col,
                          const double *__restrict__ val, unsigned long long *cur, int32_t *__restrict__ tcol,
                          double *__restrict__ tval)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B)
        for (int64_t p = ptr[i]; p < ptr[i + 1]; p++) {
            unsigned long long q = atomicAdd(cur + col[p], 1ull);
            tcol[q] = (int32_t)i, tval[q] = val[p];
        }
}

} // namespace

gt_status amg_cu_rho(const amg_dcsr *a, const double *dinv, double *rho, cudaStream_t st)
{
    int64_t n = a->n;
    double *v = nullptr, *y = nullptr, *part = nullptr;
    gt_status s = gt_cu_malloc((void **)&v, (size_t)n * 8, "amg power vector");
    if (s == GT_OK) s = gt_cu_malloc((void **)&y, (size_t)n * 8, "amg power vector");
    if (s == GT_OK) s = gt_cu_malloc((void **)&part, (3 * PG + 3) * 8, "amg power sums");
    if (s == GT_OK) {
        double *out = part + 3 * PG;
        unsigned g = gt_grid((size_t)n, B, PG);
        cudaMemsetAsync(out, 0, 24, st);
        k_start<<<gt_grid((size_t)n, B), B, 0, st>>>(n, v);
        int vw = amg_cu_vec_width(a);
        for (int k = 0; k < GT_AMG_POWER_ITERS; k++) {
            amg_cu_spmv(a, vw, v, y, 1.0, 0.0, nullptr, st);
            k_dots<<<g, B, 0, st>>>(n, v, y, dinv, part);
            k_fin<<<1, B, 0, st>>>(part, g, out);
            k_scale<<<gt_grid((size_t)n, B), B, 0, st>>>(n, y, dinv, v, out);
        }
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) s = gt_cu_status_from(e, "amg power kernels", __FILE__, __LINE__);
        if (s == GT_OK) {
            e = cudaMemcpyAsync(rho, out, 8, cudaMemcpyDeviceToHost, st);
            if (e == cudaSuccess) e = cudaStreamSynchronize(st);
            if (e != cudaSuccess) s = gt_cu_status_from(e, "cudaMemcpyAsync", __FILE__, __LINE__);
        }
    }
    gt_cu_free(v), gt_cu_free(y), gt_cu_free(part);
    return s;
}

namespace {

// P by a thread per row (short rows)
gt_status prolong_rows(const amg_dcsr *a, const double *dinv, const int32_t *agg, const double *sc, double w,
                       amg_dcsr *p, cudaStream_t st)
{
    int64_t n = a->n;
    GT_TRY(gt_cu_malloc((void **)&p->ptr, (size_t)(n + 1) * 8, "amg prolongator rows"));
    k_prolong<false><<<gt_grid((size_t)n, B), B, 0, st>>>(n, a->ptr, a->col, a->val, dinv, agg, sc, w, p->ptr, nullptr,
                                                          nullptr);
    GT_CU_LAUNCH("k_prolong");
    GT_TRY(amg_rows_to_ptr(p->ptr, n, st, &p->nnz));
    GT_TRY(gt_cu_malloc((void **)&p->col, (size_t)(p->nnz ? p->nnz : 1) * 4, "amg prolongator columns"));
    GT_TRY(gt_cu_malloc((void **)&p->val, (size_t)(p->nnz ? p->nnz : 1) * 8, "amg prolongator values"));
    k_prolong<true><<<gt_grid((size_t)n, B), B, 0, st>>>(n, a->ptr, a->col, a->val, dinv, agg, sc, w, p->ptr, p->col,
                                                         p->val);
    GT_CU_LAUNCH("k_prolong");
    return GT_OK;
}

// P = T - w D^-1 (A T) by the hash product (long rows)
gt_status prolong_product(const amg_dcsr *a, const double *dinv, const int32_t *agg, int64_t nagg, const double *sc,
                          double w, amg_dcsr *p, cudaStream_t st)
{
    int64_t n = a->n;
    amg_dcsr t{};
    t.n = n, t.m = nagg, t.nnz = n;
    t.col = (int32_t *)agg;
    gt_status s = gt_cu_malloc((void **)&t.ptr, (size_t)(n + 1) * 8, "amg tentative prolongator");
    if (s == GT_OK) s = gt_cu_malloc((void **)&t.val, (size_t)(n ? n : 1) * 8, "amg tentative prolongator");
    if (s == GT_OK) {
        k_tentative<<<gt_grid((size_t)n + 1, B), B, 0, st>>>(n, agg, sc, t.ptr, t.val);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) s = gt_cu_status_from(e, "k_tentative", __FILE__, __LINE__);
    }
    if (s == GT_OK) s = amg_cu_spgemm(a, &t, p, st); // A T, rows sorted
    if (s == GT_OK) {
        k_smooth<<<gt_grid((size_t)n, B), B, 0, st>>>(n, p->ptr, p->col, p->val, dinv, agg, sc, w);
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaStreamSynchronize(st); // T is freed next
        if (e != cudaSuccess) s = gt_cu_status_from(e, "k_smooth", __FILE__, __LINE__);
    }
    gt_cu_free(t.ptr), gt_cu_free(t.val);
    return s;
}

} // namespace

gt_status amg_cu_prolong(const amg_dcsr *a, const double *dinv, const int32_t *agg, int64_t nagg, double w,
                         amg_dcsr *p, cudaStream_t st)
{
    int64_t n = a->n;
    unsigned *cnt = nullptr;
    double *sc = nullptr;
    *p = amg_dcsr{};
    p->n = n, p->m = nagg;
    gt_status s = gt_cu_malloc((void **)&cnt, (size_t)nagg * 4, "amg aggregate sizes");
    if (s == GT_OK) s = gt_cu_malloc((void **)&sc, (size_t)nagg * 8, "amg aggregate scales");
    if (s == GT_OK) {
        cudaMemsetAsync(cnt, 0, (size_t)nagg * 4, st);
        k_agg_size<<<gt_grid((size_t)n, B), B, 0, st>>>(n, agg, cnt);
        k_agg_scale<<<gt_grid((size_t)nagg, B), B, 0, st>>>(nagg, cnt, sc);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) s = gt_cu_status_from(e, "k_agg_scale", __FILE__, __LINE__);
    }
    if (s == GT_OK)
        s = a->nnz <= ROW_THREAD_MAX * n ? prolong_rows(a, dinv, agg, sc, w, p, st)
                                         : prolong_product(a, dinv, agg, nagg, sc, w, p, st);
    if (s == GT_OK) {
        cudaError_t e = cudaStreamSynchronize(st); // sc and cnt are freed next
        if (e != cudaSuccess) s = gt_cu_status_from(e, "amg prolongator", __FILE__, __LINE__);
    }
    gt_cu_free(cnt), gt_cu_free(sc);
    if (s != GT_OK) amg_dcsr_free(p);
    return s;
}

gt_status amg_cu_transpose(const amg_dcsr *a, amg_dcsr *t, cudaStream_t st)
{
    GT_TRY(amg_dcsr_alloc(t, a->m, a->n, a->nnz, true, "amg restriction"));
    unsigned long long *cur = nullptr;
    GT_TRY(gt_cu_malloc((void **)&cur, (size_t)(a->m + 1) * 8, "amg transpose cursors"));
    GT_CU(cudaMemsetAsync(t->ptr, 0, (size_t)(a->m + 1) * 8, st));
    k_col_count<<<gt_grid((size_t)a->nnz, B), B, 0, st>>>(a->nnz, a->col, (unsigned long long *)t->ptr);
    GT_CU_LAUNCH("k_col_count");
    int64_t nnz = 0;
    gt_status s = amg_rows_to_ptr(t->ptr, a->m, st, &nnz);
    if (s == GT_OK) {
        cudaMemcpyAsync(cur, t->ptr, (size_t)a->m * 8, cudaMemcpyDeviceToDevice, st);
        k_scatter<<<gt_grid((size_t)a->n, B), B, 0, st>>>(a->n, a->ptr, a->col, a->val, cur, t->col, t->val);
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaStreamSynchronize(st);
        if (e != cudaSuccess) s = gt_cu_status_from(e, "k_scatter", __FILE__, __LINE__);
    }
    gt_cu_free(cur);
    return s;
}
