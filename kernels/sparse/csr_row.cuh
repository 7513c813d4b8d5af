// The CSR row product of a subwarp (C++/CUDA only), shared by the CSR
// vector SpMV (spmv.cu) and the CSR path of the split Jacobi-PCG
// (krylov_cg.cu): V lanes (2..32, a power of two) take one row; lane l reads
// entries ptr[i] + l, + V, ... two at a time (both loads in flight before the
// products), column indices and values with streaming loads (__ldcs: read
// once, evict first, so that L1 and L2 keep x) and x through the read-only
// path (__ldg); the lanes' sums are added by shuffles. No shared memory.
// The width comes from the mean row length (csr_sub_width): the power of two
// at or above half the mean, so that a row takes about two rounds.
#ifndef GT_KERNELS_SPARSE_CSR_ROW_CUH
#define GT_KERNELS_SPARSE_CSR_ROW_CUH

#include <cuda_runtime.h>
#include <stdint.h>

namespace gt_csr_row {

inline int csr_sub_width(double mean_row)
{
    int v = 2;
    while (v < 32 && 2 * v < mean_row) v *= 2;
    return v;
}

// The mask of this lane's subwarp of V lanes within its warp.
template <int V>
__device__ __forceinline__ unsigned sub_mask()
{
    return V == 32 ? 0xffffffffu : (((1u << V) - 1u) << ((threadIdx.x & 31) / V * V));
}

// sum_p val[p] * x[col[p]] over row [s, e) for lane `lane` of V; every lane of
// the subwarp gets the row's sum. All V lanes must call it (same s, e).
template <typename T, int V>
__device__ __forceinline__ T row_sum(const int32_t *__restrict__ col, const T *__restrict__ val,
                                     const T *__restrict__ x, int64_t s, int64_t e, int lane)
{
    T acc = 0;
    int64_t p = s + lane;
    for (; p + V < e; p += 2 * V) {
        int32_t c0 = __ldcs(col + p), c1 = __ldcs(col + p + V);
        T v0 = __ldcs(val + p), v1 = __ldcs(val + p + V);
        T x0 = __ldg(x + c0), x1 = __ldg(x + c1);
        acc += v0 * x0;
        acc += v1 * x1;
    }
    if (p < e) acc += __ldcs(val + p) * __ldg(x + __ldcs(col + p));
    const unsigned m = sub_mask<V>();
#pragma unroll
    for (int o = V / 2; o > 0; o /= 2) acc += __shfl_xor_sync(m, acc, o, V);
    return acc;
}

// The same with the value at column j given by xf(j) (the fused CG forms
// p_k at each neighbour from the previous vectors).
template <typename T, int V, typename XF>
__device__ __forceinline__ T row_sum_f(const int32_t *__restrict__ col, const T *__restrict__ val, int64_t s,
                                       int64_t e, int lane, XF xf)
{
    T acc = 0;
    int64_t p = s + lane;
    for (; p + V < e; p += 2 * V) {
        int32_t c0 = __ldcs(col + p), c1 = __ldcs(col + p + V);
        T v0 = __ldcs(val + p), v1 = __ldcs(val + p + V);
        T x0 = xf(c0), x1 = xf(c1);
        acc += v0 * x0;
        acc += v1 * x1;
    }
    if (p < e) acc += __ldcs(val + p) * xf(__ldcs(col + p));
    const unsigned m = sub_mask<V>();
#pragma unroll
    for (int o = V / 2; o > 0; o /= 2) acc += __shfl_xor_sync(m, acc, o, V);
    return acc;
}

} // namespace gt_csr_row

#endif
