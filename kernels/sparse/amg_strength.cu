// AMG set-up on the GPU, stage 1 (twin of lib/sparse/amg_strength.c): the
// inverse diagonal (the first bad row found by an atomic minimum) and the
// strength graph by count, scan and fill, a thread per row; the test per
// entry is gt_amg_strong, the CPU's expression. Also the device CSR helpers
// of the AMG files.
#include <cuda_runtime.h>

#include "kernels/common/cu_prim.h"
#include "kernels/sparse/amg_cu_impl.cuh"

void amg_dcsr_free(amg_dcsr *a)
{
    if (!a->borrowed) gt_cu_free(a->ptr), gt_cu_free(a->col), gt_cu_free(a->val);
    *a = amg_dcsr{};
}

gt_status amg_dcsr_alloc(amg_dcsr *a, int64_t n, int64_t m, int64_t nnz, bool vals, const char *what)
{
    *a = amg_dcsr{};
    a->n = n, a->m = m, a->nnz = nnz;
    GT_TRY(gt_cu_malloc((void **)&a->ptr, (size_t)(n + 1) * 8, what));
    GT_TRY(gt_cu_malloc((void **)&a->col, (size_t)(nnz ? nnz : 1) * 4, what));
    if (vals) GT_TRY(gt_cu_malloc((void **)&a->val, (size_t)(nnz ? nnz : 1) * 8, what));
    return GT_OK;
}

gt_status amg_rows_to_ptr(int64_t *ptr, int64_t n, cudaStream_t st, int64_t *nnz)
{
    GT_CU(cudaMemsetAsync(ptr, 0, 8, st));
    GT_TRY(gt_cu_scan_inclusive_u64((const uint64_t *)ptr + 1, (uint64_t *)ptr + 1, (size_t)n, nullptr, st));
    GT_CU(cudaMemcpyAsync(nnz, ptr + n, 8, cudaMemcpyDeviceToHost, st));
    GT_CU(cudaStreamSynchronize(st));
    return GT_OK;
}

namespace {

constexpr int B = 256;

__global__ void k_dinv(int64_t n, const int64_t *__restrict__ ptr, const int32_t *__restrict__ col,
                       const double *__restrict__ val, double *__restrict__ dinv, unsigned long long *bad)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) {
        double d = 0;
        for (int64_t p = ptr[i]; p < ptr[i + 1]; p++)
            if (col[p] == i) d += val[p];
        if (d == 0 || !isfinite(d)) atomicMin(bad, (unsigned long long)i);
        dinv[i] = 1.0 / d;
    }
}

template <bool FILL>
__global__ void k_strength(int64_t n, const int64_t *__restrict__ ptr, const int32_t *__restrict__ col,
                           const double *__restrict__ val, const double *__restrict__ dinv, double theta,
                           int64_t *__restrict__ sptr, int32_t *__restrict__ scol)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) {
        double di = 1.0 / dinv[i];
        int64_t c = FILL ? sptr[i] : 0;
        for (int64_t p = ptr[i]; p < ptr[i + 1]; p++) {
            int32_t j = col[p];
            if (j != i && gt_amg_strong(val[p], di, 1.0 / dinv[j], theta)) {
                if (FILL) scol[c] = j;
                c++;
            }
        }
        if (!FILL) sptr[i + 1] = c;
    }
}

} // namespace

gt_status amg_cu_dinv(const amg_dcsr *a, double *dinv, int64_t *scratch, cudaStream_t st)
{
    GT_CU(cudaMemsetAsync(scratch, 0xff, 8, st));
    k_dinv<<<gt_grid((size_t)a->n, B), B, 0, st>>>(a->n, a->ptr, a->col, a->val, dinv, (unsigned long long *)scratch);
    GT_CU_LAUNCH("k_dinv");
    return amg_cu_diag_check(scratch, st);
}

gt_status amg_cu_diag_check(int64_t *scratch, cudaStream_t st)
{
    unsigned long long bad = 0;
    GT_CU(cudaMemcpyAsync(&bad, scratch, 8, cudaMemcpyDeviceToHost, st));
    GT_CU(cudaStreamSynchronize(st));
    if (bad != ~0ull) return gt_fail(GT_ERR_DATA, "amg: zero, missing or non-finite diagonal in row %llu", bad + 1);
    return GT_OK;
}

gt_status amg_cu_strength(const amg_dcsr *a, const double *dinv, double theta, amg_dcsr *s, cudaStream_t st)
{
    *s = amg_dcsr{};
    s->n = s->m = a->n;
    GT_TRY(gt_cu_malloc((void **)&s->ptr, (size_t)(a->n + 1) * 8, "amg strength rows"));
    k_strength<false><<<gt_grid((size_t)a->n, B), B, 0, st>>>(a->n, a->ptr, a->col, a->val, dinv, theta, s->ptr, nullptr);
    GT_CU_LAUNCH("k_strength");
    GT_TRY(amg_rows_to_ptr(s->ptr, a->n, st, &s->nnz));
    GT_TRY(gt_cu_malloc((void **)&s->col, (size_t)(s->nnz ? s->nnz : 1) * 4, "amg strength columns"));
    k_strength<true><<<gt_grid((size_t)a->n, B), B, 0, st>>>(a->n, a->ptr, a->col, a->val, dinv, theta, s->ptr, s->col);
    GT_CU_LAUNCH("k_strength");
    return GT_OK;
}
