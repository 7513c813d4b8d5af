// C wrappers around CUB device-wide primitives (kernels/common/cu_prim.h).
// Each wrapper asks CUB for its temporary storage size, takes it from the
// arena and runs; n == 0 is handled up front (CUB accepts it, but the
// host-side results need defined values).
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cfloat>
#include <cstdint>

#include "kernels/common/cu_check.h"
#include "kernels/common/cu_prim.h"
#include "common/gpu_runtime.h"

namespace {

gt_arena *arena_or_default(gt_arena *a) { return a ? a : gt_default_arena(); }

// CUB takes int item counts for several algorithms; refuse what does not fit.
gt_status check_n(size_t n, const char *what)
{
    if (n > (size_t)INT32_MAX)
        return gt_fail(GT_ERR_RUNTIME, "%s: %zu items exceed the 2^31-1 limit of one call", what, n);
    return GT_OK;
}

template <typename T, bool Exclusive>
gt_status scan(const T *in, T *out, size_t n, gt_arena *a, void *stream)
{
    if (n == 0) return GT_OK;
    GT_TRY(check_n(n, "scan"));
    cudaStream_t s = (cudaStream_t)stream;
    size_t bytes = 0;
    void *tmp = nullptr;
    if (Exclusive) {
        GT_CU(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, (int)n, s));
        GT_TRY(gt_arena_reserve(arena_or_default(a), bytes, &tmp));
        GT_CU(cub::DeviceScan::ExclusiveSum(tmp, bytes, in, out, (int)n, s));
    } else {
        GT_CU(cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out, (int)n, s));
        GT_TRY(gt_arena_reserve(arena_or_default(a), bytes, &tmp));
        GT_CU(cub::DeviceScan::InclusiveSum(tmp, bytes, in, out, (int)n, s));
    }
    return GT_OK;
}

template <typename K>
gt_status sort_pairs(const K *kin, K *kout, const uint32_t *vin, uint32_t *vout, size_t n,
                     int begin_bit, int end_bit, gt_arena *a, void *stream)
{
    if (n == 0) return GT_OK;
    GT_TRY(check_n(n, "radix sort"));
    if (begin_bit < 0 || end_bit > (int)(8 * sizeof(K)) || begin_bit >= end_bit)
        return gt_fail(GT_ERR_RUNTIME, "radix sort: bad bit range [%d, %d)", begin_bit, end_bit);
    cudaStream_t s = (cudaStream_t)stream;
    size_t bytes = 0;
    void *tmp = nullptr;
    if (vin) {
        GT_CU(cub::DeviceRadixSort::SortPairs(nullptr, bytes, kin, kout, vin, vout, (int)n,
                                              begin_bit, end_bit, s));
        GT_TRY(gt_arena_reserve(arena_or_default(a), bytes, &tmp));
        GT_CU(cub::DeviceRadixSort::SortPairs(tmp, bytes, kin, kout, vin, vout, (int)n, begin_bit,
                                              end_bit, s));
    } else {
        GT_CU(cub::DeviceRadixSort::SortKeys(nullptr, bytes, kin, kout, (int)n, begin_bit, end_bit, s));
        GT_TRY(gt_arena_reserve(arena_or_default(a), bytes, &tmp));
        GT_CU(cub::DeviceRadixSort::SortKeys(tmp, bytes, kin, kout, (int)n, begin_bit, end_bit, s));
    }
    return GT_OK;
}

// Temporary storage plus room for one trailing result value of `extra` bytes,
// aligned to 256 so the result lives in the same arena allocation.
gt_status reserve_with_result(gt_arena *a, size_t bytes, size_t extra, void **tmp, void **res)
{
    size_t off = (bytes + 255) & ~(size_t)255;
    void *p = nullptr;
    GT_TRY(gt_arena_reserve(arena_or_default(a), off + extra, &p));
    *tmp = p;
    *res = (char *)p + off;
    return GT_OK;
}

template <typename T>
gt_status select_flagged(const T *in, const uint8_t *flags, T *out, size_t n, size_t *count,
                         gt_arena *a, void *stream)
{
    *count = 0;
    if (n == 0) return GT_OK;
    GT_TRY(check_n(n, "select"));
    cudaStream_t s = (cudaStream_t)stream;
    size_t bytes = 0;
    void *tmp, *res;
    GT_CU(cub::DeviceSelect::Flagged(nullptr, bytes, in, flags, out, (int *)nullptr, (int)n, s));
    GT_TRY(reserve_with_result(a, bytes, sizeof(int), &tmp, &res));
    GT_CU(cub::DeviceSelect::Flagged(tmp, bytes, in, flags, out, (int *)res, (int)n, s));
    int h = 0;
    GT_CU(cudaMemcpyAsync(&h, res, sizeof h, cudaMemcpyDeviceToHost, s));
    GT_CU(cudaStreamSynchronize(s));
    *count = (size_t)h;
    return GT_OK;
}

template <typename InIt, typename R, typename Op>
gt_status reduce(InIt in, size_t n, R *out, R init, Op op, gt_arena *a, void *stream)
{
    *out = init;
    if (n == 0) return GT_OK;
    GT_TRY(check_n(n, "reduce"));
    cudaStream_t s = (cudaStream_t)stream;
    size_t bytes = 0;
    void *tmp, *res;
    GT_CU(cub::DeviceReduce::Reduce(nullptr, bytes, in, (R *)nullptr, (int)n, op, init, s));
    GT_TRY(reserve_with_result(a, bytes, sizeof(R), &tmp, &res));
    GT_CU(cub::DeviceReduce::Reduce(tmp, bytes, in, (R *)res, (int)n, op, init, s));
    GT_CU(cudaMemcpyAsync(out, res, sizeof(R), cudaMemcpyDeviceToHost, s));
    GT_CU(cudaStreamSynchronize(s));
    return GT_OK;
}

template <typename T>
gt_status rle(const T *in, T *uniq, uint32_t *counts, size_t n, size_t *runs, gt_arena *a,
              void *stream)
{
    *runs = 0;
    if (n == 0) return GT_OK;
    GT_TRY(check_n(n, "run-length encode"));
    cudaStream_t s = (cudaStream_t)stream;
    size_t bytes = 0;
    void *tmp, *res;
    GT_CU(cub::DeviceRunLengthEncode::Encode(nullptr, bytes, in, uniq, counts, (int *)nullptr,
                                             (int)n, s));
    GT_TRY(reserve_with_result(a, bytes, sizeof(int), &tmp, &res));
    GT_CU(cub::DeviceRunLengthEncode::Encode(tmp, bytes, in, uniq, counts, (int *)res, (int)n, s));
    int h = 0;
    GT_CU(cudaMemcpyAsync(&h, res, sizeof h, cudaMemcpyDeviceToHost, s));
    GT_CU(cudaStreamSynchronize(s));
    *runs = (size_t)h;
    return GT_OK;
}

struct SumOp {
    template <typename T>
    __host__ __device__ T operator()(const T &x, const T &y) const { return x + y; }
};
struct MinOp {
    __host__ __device__ float operator()(float x, float y) const { return y < x ? y : x; }
};
struct MaxOp {
    __host__ __device__ float operator()(float x, float y) const { return y > x ? y : x; }
};

// Converts elements on the fly so sums accumulate in a wider type.
template <typename From, typename To>
struct Widen {
    __host__ __device__ To operator()(const From &x) const { return (To)x; }
};

} // namespace

extern "C" {

gt_status gt_cu_scan_exclusive_u32(const uint32_t *in, uint32_t *out, size_t n, gt_arena *a, void *s)
{ return scan<uint32_t, true>(in, out, n, a, s); }
gt_status gt_cu_scan_inclusive_u32(const uint32_t *in, uint32_t *out, size_t n, gt_arena *a, void *s)
{ return scan<uint32_t, false>(in, out, n, a, s); }
gt_status gt_cu_scan_exclusive_u64(const uint64_t *in, uint64_t *out, size_t n, gt_arena *a, void *s)
{ return scan<uint64_t, true>(in, out, n, a, s); }
gt_status gt_cu_scan_inclusive_u64(const uint64_t *in, uint64_t *out, size_t n, gt_arena *a, void *s)
{ return scan<uint64_t, false>(in, out, n, a, s); }

gt_status gt_cu_sort_pairs_u32(const uint32_t *ki, uint32_t *ko, const uint32_t *vi, uint32_t *vo,
                               size_t n, int b0, int b1, gt_arena *a, void *s)
{ return sort_pairs<uint32_t>(ki, ko, vi, vo, n, b0, b1, a, s); }
gt_status gt_cu_sort_pairs_u64(const uint64_t *ki, uint64_t *ko, const uint32_t *vi, uint32_t *vo,
                               size_t n, int b0, int b1, gt_arena *a, void *s)
{ return sort_pairs<uint64_t>(ki, ko, vi, vo, n, b0, b1, a, s); }

gt_status gt_cu_select_flagged_u32(const uint32_t *in, const uint8_t *f, uint32_t *out, size_t n,
                                   size_t *count, gt_arena *a, void *s)
{ return select_flagged<uint32_t>(in, f, out, n, count, a, s); }
gt_status gt_cu_select_flagged_u64(const uint64_t *in, const uint8_t *f, uint64_t *out, size_t n,
                                   size_t *count, gt_arena *a, void *s)
{ return select_flagged<uint64_t>(in, f, out, n, count, a, s); }

gt_status gt_cu_select_flagged_index(const uint8_t *flags, uint32_t *out, size_t n, size_t *count,
                                     gt_arena *a, void *s)
{
    GT_TRY(check_n(n, "select"));
    thrust::counting_iterator<uint32_t> it(0);
    *count = 0;
    if (n == 0) return GT_OK;
    cudaStream_t st = (cudaStream_t)s;
    size_t bytes = 0;
    void *tmp, *res;
    GT_CU(cub::DeviceSelect::Flagged(nullptr, bytes, it, flags, out, (int *)nullptr, (int)n, st));
    GT_TRY(reserve_with_result(a, bytes, sizeof(int), &tmp, &res));
    GT_CU(cub::DeviceSelect::Flagged(tmp, bytes, it, flags, out, (int *)res, (int)n, st));
    int h = 0;
    GT_CU(cudaMemcpyAsync(&h, res, sizeof h, cudaMemcpyDeviceToHost, st));
    GT_CU(cudaStreamSynchronize(st));
    *count = (size_t)h;
    return GT_OK;
}

gt_status gt_cu_reduce_sum_f32(const float *in, size_t n, double *out, gt_arena *a, void *s)
{
    auto it = thrust::make_transform_iterator(in, Widen<float, double>{});
    return reduce(it, n, out, 0.0, SumOp{}, a, s);
}
gt_status gt_cu_reduce_sum_f64(const double *in, size_t n, double *out, gt_arena *a, void *s)
{ return reduce(in, n, out, 0.0, SumOp{}, a, s); }
gt_status gt_cu_reduce_sum_u32(const uint32_t *in, size_t n, uint64_t *out, gt_arena *a, void *s)
{
    auto it = thrust::make_transform_iterator(in, Widen<uint32_t, uint64_t>{});
    return reduce(it, n, out, (uint64_t)0, SumOp{}, a, s);
}
gt_status gt_cu_reduce_min_f32(const float *in, size_t n, float *out, gt_arena *a, void *s)
{ return reduce(in, n, out, FLT_MAX * 2.0f, MinOp{}, a, s); }
gt_status gt_cu_reduce_max_f32(const float *in, size_t n, float *out, gt_arena *a, void *s)
{ return reduce(in, n, out, -FLT_MAX * 2.0f, MaxOp{}, a, s); }

gt_status gt_cu_rle_u32(const uint32_t *in, uint32_t *u, uint32_t *c, size_t n, size_t *runs,
                        gt_arena *a, void *s)
{ return rle<uint32_t>(in, u, c, n, runs, a, s); }
gt_status gt_cu_rle_u64(const uint64_t *in, uint64_t *u, uint32_t *c, size_t n, size_t *runs,
                        gt_arena *a, void *s)
{ return rle<uint64_t>(in, u, c, n, runs, a, s); }

} // extern "C"
