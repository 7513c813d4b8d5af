// SpMV kernels for every format, float and double.
#include <cuda_runtime.h>

#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/sparse/csr_row.cuh"
#include "kernels/sparse/sparse_cu.h"

namespace {

constexpr int BLOCK = 256;
constexpr int COO_ITEMS = 8;    // rounds of 32 nonzeros per warp in the COO kernel
constexpr int MERGE_ITEMS = 8;  // merge items per thread in merge-path CSR

template <typename T>
__global__ void k_csr_scalar(int64_t n, const int64_t *__restrict__ ptr, const int32_t *__restrict__ col,
                             const T *__restrict__ val, const T *__restrict__ x, T *__restrict__ y)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T s = 0;
    for (int64_t p = ptr[i], e = ptr[i + 1]; p < e; p++) s += val[p] * __ldg(x + col[p]);
    y[i] = s;
}

// CSR vector: a subwarp of V lanes per row (csr_row.cuh: two entries per
// lane in flight, streaming loads of the matrix, x through __ldg).
template <typename T, int V>
__global__ void __launch_bounds__(BLOCK) k_csr_vector(int64_t n, const int64_t *__restrict__ ptr,
                                                      const int32_t *__restrict__ col, const T *__restrict__ val,
                                                      const T *__restrict__ x, T *__restrict__ y)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t i = t / V;
    int lane = (int)(t % V);
    // every thread of a subwarp has the same i: the whole subwarp returns or stays
    if (i >= n) return;
    T s = gt_csr_row::row_sum<T, V>(col, val, x, __ldg(ptr + i), __ldg(ptr + i + 1), lane);
    if (lane == 0) y[i] = s;
}

template <typename T>
__global__ void k_ell(int64_t n, int64_t width, const int32_t *__restrict__ col, const T *__restrict__ val,
                      const T *__restrict__ x, T *__restrict__ y, int accumulate)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T s = 0;
    for (int64_t k = 0; k < width; k++) {
        size_t p = (size_t)k * (size_t)n + (size_t)i;
        int32_t c = col[p];
        if (c >= 0) s += val[p] * __ldg(x + c);
    }
    y[i] = accumulate ? y[i] + s : s;
}

template <typename T>
__global__ void k_dia(int64_t n, int64_t ncols, int64_t ndiag, const int32_t *__restrict__ off,
                      const T *__restrict__ val, const T *__restrict__ x, T *__restrict__ y)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T s = 0;
    for (int64_t d = 0; d < ndiag; d++) {
        int64_t j = i + __ldg(off + d);
        if (j >= 0 && j < ncols) s += val[(size_t)d * (size_t)n + (size_t)i] * __ldg(x + j);
    }
    y[i] = s;
}

// COO, segmented reduction: warp w takes the chunk of 32 * COO_ITEMS
// consecutive nonzeros (sorted by row) and reads it in COO_ITEMS rounds of 32
// (row, col, val each one coalesced load per round). Each round runs an
// inclusive segmented scan of val * x[col] keyed by row over the warp
// (shuffles); a row run ending inside the round is complete there, the run
// reaching lane 31 is carried into the next round. A complete row is stored
// directly when it lies wholly inside the chunk; only the chunk's first row
// (it may have begun in the previous chunk) and its last row (it may go on in
// the next) are added atomically: at most two atomics per chunk.
template <typename T>
__global__ void k_coo(int64_t nnz, const int32_t *__restrict__ row, const int32_t *__restrict__ col,
                      const T *__restrict__ val, const T *__restrict__ x, T *__restrict__ y, int accumulate)
{
    const int lane = threadIdx.x & 31;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int64_t cs = warp * (32 * COO_ITEMS);
    if (cs >= nnz) return; // whole warps leave together
    int64_t ce = cs + 32 * COO_ITEMS;
    if (ce > nnz) ce = nnz;
    const int32_t first = __ldg(row + cs);
    auto put = [&](int32_t r, T v, bool shared) {
        if (shared) atomicAdd(y + r, v);
        else y[r] = accumulate ? y[r] + v : v;
    };
    int32_t carry_row = -1;
    T carry = 0;
#pragma unroll 4
    for (int k = 0; k < COO_ITEMS; k++) {
        int64_t p = cs + (int64_t)k * 32 + lane;
        if (cs + (int64_t)k * 32 >= ce) break; // uniform over the warp
        bool active = p < ce;
        int32_t key = active ? __ldg(row + p) : -1;
        T v = active ? __ldg(val + p) * __ldg(x + __ldg(col + p)) : (T)0;
        // the carried row: continued by this round's first run, or complete
        int32_t key0 = __shfl_sync(0xffffffffu, key, 0);
        if (carry_row >= 0 && key0 != carry_row && lane == 0) put(carry_row, carry, carry_row == first);
        for (int o = 1; o < 32; o *= 2) {
            T ov = __shfl_up_sync(0xffffffffu, v, o);
            int32_t ok = __shfl_up_sync(0xffffffffu, key, o);
            if (lane >= o && ok == key) v += ov;
        }
        if (carry_row >= 0 && key == carry_row) v += carry;
        int32_t nkey = __shfl_down_sync(0xffffffffu, key, 1);
        bool last_of_chunk = p == ce - 1;
        bool run_end = active && (lane == 31 || last_of_chunk || nkey != key);
        bool to_carry = lane == 31 && active && !last_of_chunk;
        if (run_end && !to_carry) put(key, v, key == first || last_of_chunk);
        carry_row = __shfl_sync(0xffffffffu, to_carry ? key : -1, 31);
        carry = __shfl_sync(0xffffffffu, v, 31);
    }
}

// threads of the COO kernel: a warp per chunk of 32 * COO_ITEMS nonzeros
inline size_t coo_threads(int64_t nnz)
{
    return (((size_t)nnz + 32 * COO_ITEMS - 1) / (32 * COO_ITEMS)) * 32;
}

// Merge-path CSR: thread t consumes MERGE_ITEMS items of the merge of row ends
// and nonzero indices; rows it finishes are stored, its unfinished last row
// becomes a carry fixed up by a second kernel.
__device__ inline void merge_search(int64_t diag, const int64_t *__restrict__ row_end, int64_t nrows,
                                    int64_t nnz, int64_t *xi, int64_t *yi)
{
    int64_t lo = diag - nnz > 0 ? diag - nnz : 0;
    int64_t hi = diag < nrows ? diag : nrows;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (row_end[mid] <= diag - mid - 1) lo = mid + 1;
        else hi = mid;
    }
    *xi = lo;
    *yi = diag - lo;
}

template <typename T>
__global__ void k_csr_merge(int64_t nrows, int64_t nnz, int64_t nthreads, const int64_t *__restrict__ ptr,
                            const int32_t *__restrict__ col, const T *__restrict__ val,
                            const T *__restrict__ x, T *__restrict__ y, int64_t *carry_row, T *carry_val)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nthreads) return;
    int64_t total = nrows + nnz;
    int64_t d0 = t * MERGE_ITEMS, d1 = d0 + MERGE_ITEMS;
    if (d0 > total) d0 = total;
    if (d1 > total) d1 = total;
    int64_t r, k, r1, k1;
    const int64_t *row_end = ptr + 1;
    merge_search(d0, row_end, nrows, nnz, &r, &k);
    merge_search(d1, row_end, nrows, nnz, &r1, &k1);
    T s = 0;
    for (; r < r1; r++) {
        for (int64_t e = row_end[r]; k < e; k++) s += val[k] * __ldg(x + col[k]);
        y[r] = s;
        s = 0;
    }
    for (; k < k1; k++) s += val[k] * __ldg(x + col[k]);
    carry_row[t] = r1; // r1 < nrows when a row is unfinished
    carry_val[t] = s;
}

template <typename T>
__global__ void k_merge_fixup(int64_t nthreads, int64_t nrows, const int64_t *carry_row, const T *carry_val,
                              T *y)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nthreads) return;
    int64_t r = carry_row[t];
    T v = carry_val[t];
    if (r < nrows && v != (T)0) atomicAdd(y + r, v);
}

template <typename T>
gt_status spmv(const gt_spd *d, gt_spmv_kernel k, const T *x, T *y, cudaStream_t st)
{
    int64_t n = d->nrows;
    if (n == 0) return GT_OK;
    unsigned g = gt_grid((size_t)n, BLOCK, 0x7fffffffu);
    switch (k) {
    case GT_SPMV_CSR_SCALAR:
        k_csr_scalar<T><<<g, BLOCK, 0, st>>>(n, d->ptr, d->col, (const T *)d->val, x, y);
        break;
    case GT_SPMV_CSR_VECTOR: {
        unsigned gv = gt_grid((size_t)n * (size_t)d->csr_vec_width, BLOCK, 0x7fffffffu);
        switch (d->csr_vec_width) {
        case 2: k_csr_vector<T, 2><<<gv, BLOCK, 0, st>>>(n, d->ptr, d->col, (const T *)d->val, x, y); break;
        case 4: k_csr_vector<T, 4><<<gv, BLOCK, 0, st>>>(n, d->ptr, d->col, (const T *)d->val, x, y); break;
        case 8: k_csr_vector<T, 8><<<gv, BLOCK, 0, st>>>(n, d->ptr, d->col, (const T *)d->val, x, y); break;
        case 16: k_csr_vector<T, 16><<<gv, BLOCK, 0, st>>>(n, d->ptr, d->col, (const T *)d->val, x, y); break;
        default: k_csr_vector<T, 32><<<gv, BLOCK, 0, st>>>(n, d->ptr, d->col, (const T *)d->val, x, y); break;
        }
        break;
    }
    case GT_SPMV_CSR_MERGE: {
        if (!d->carry_row) return gt_fail(GT_ERR_GPU, "merge-path CSR: scratch not allocated");
        unsigned gm = gt_grid((size_t)d->merge_threads, BLOCK, 0x7fffffffu);
        k_csr_merge<T><<<gm, BLOCK, 0, st>>>(n, d->nnz, d->merge_threads, d->ptr, d->col, (const T *)d->val, x,
                                             y, d->carry_row, (T *)d->carry_val);
        GT_CU_LAUNCH("csr merge");
        k_merge_fixup<T><<<gm, BLOCK, 0, st>>>(d->merge_threads, n, d->carry_row, (const T *)d->carry_val, y);
        break;
    }
    case GT_SPMV_ELL:
    case GT_SPMV_HYB:
        if (!d->has_ell || (k == GT_SPMV_HYB) != (d->hyb != 0))
            return gt_fail(GT_ERR_GPU, "SpMV: %s format not converted", k == GT_SPMV_ELL ? "ELL" : "HYB");
        k_ell<T><<<g, BLOCK, 0, st>>>(n, d->ewidth, d->ecol, (const T *)d->eval, x, y, 0);
        if (k == GT_SPMV_HYB && d->cnnz > 0) {
            GT_CU_LAUNCH("ell");
            unsigned gc = gt_grid(coo_threads(d->cnnz), BLOCK, 0x7fffffffu);
            k_coo<T><<<gc, BLOCK, 0, st>>>(d->cnnz, d->crow, d->ccol, (const T *)d->cval, x, y, 1);
        }
        break;
    case GT_SPMV_DIA:
        if (!d->has_dia) return gt_fail(GT_ERR_GPU, "SpMV: DIA format not converted");
        k_dia<T><<<g, BLOCK, 0, st>>>(n, d->ncols, d->ndiag, d->doff, (const T *)d->dval, x, y);
        break;
    case GT_SPMV_COO: {
        if (!d->has_coo || d->hyb) return gt_fail(GT_ERR_GPU, "SpMV: COO format not converted");
        GT_CU(cudaMemsetAsync(y, 0, (size_t)n * sizeof(T), st));
        if (d->cnnz == 0) return GT_OK;
        unsigned gc = gt_grid(coo_threads(d->cnnz), BLOCK, 0x7fffffffu);
        k_coo<T><<<gc, BLOCK, 0, st>>>(d->cnnz, d->crow, d->ccol, (const T *)d->cval, x, y, 0);
        break;
    }
    default:
        return gt_fail(GT_ERR_GPU, "SpMV: unknown kernel %d", (int)k);
    }
    GT_CU_LAUNCH("spmv");
    return GT_OK;
}

} // namespace

extern "C" gt_status gt_cu_spmv(const gt_spd *d, gt_spmv_kernel k, const void *x, void *y, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    if (d->prec == 4) return spmv<float>(d, k, (const float *)x, (float *)y, st);
    return spmv<double>(d, k, (const double *)x, (double *)y, st);
}

extern "C" size_t gt_cu_spmv_bytes(const gt_spd *d, gt_spmv_kernel k)
{
    size_t v = (size_t)d->prec, n = (size_t)d->nrows, m = (size_t)d->ncols, z = (size_t)d->nnz;
    size_t vec = (n + m) * v; // x read once, y written once (the floor)
    switch (k) {
    case GT_SPMV_COO: return z * (8 + v) + vec + n * v; // memset of y
    case GT_SPMV_CSR_SCALAR:
    case GT_SPMV_CSR_VECTOR: return (n + 1) * 8 + z * (4 + v) + vec;
    case GT_SPMV_CSR_MERGE: return (n + 1) * 8 + z * (4 + v) + vec;
    case GT_SPMV_ELL: return (size_t)d->ewidth * n * (4 + v) + vec;
    case GT_SPMV_DIA: return (size_t)d->ndiag * (4 + n * v) + vec;
    case GT_SPMV_HYB: return (size_t)d->ewidth * n * (4 + v) + (size_t)d->cnnz * (8 + v) + vec;
    default: return 0;
    }
}
