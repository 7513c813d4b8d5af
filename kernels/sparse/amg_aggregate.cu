// AMG set-up on the GPU, stage 2 (twin of lib/sparse/amg_aggregate.c): the
// MIS-2 (or MIS-1) by synchronous rounds, each three kernels over the rows
// (tuples, max over S, max over S again for distance 2 with the state update), the roots numbered
// by a scan in row order, then the join rounds, each reading the previous
// round's aggregates, then singletons for any rows left. Same rules, same
// order of neighbours as the CPU, hence the same aggregates exactly. The
// host reads one counter per round (the loop's end).
#include <cuda_runtime.h>

#include "kernels/common/cu_prim.h"
#include "kernels/sparse/amg_cu_impl.cuh"

namespace {

constexpr int B = 256;

__global__ void k_tuples(int64_t n, const uint8_t *__restrict__ state, uint64_t *__restrict__ t)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B)
        t[i] = gt_amg_tuple(state[i], (uint32_t)i);
}

__global__ void k_max1(int64_t n, const int64_t *__restrict__ ptr, const int32_t *__restrict__ col,
                       const uint64_t *__restrict__ t, uint64_t *__restrict__ m1)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) {
        uint64_t m = t[i];
        for (int64_t p = ptr[i]; p < ptr[i + 1]; p++) {
            uint64_t v = t[col[p]];
            m = v > m ? v : m;
        }
        m1[i] = m;
    }
}

__global__ void k_max2(int64_t n, const int64_t *__restrict__ ptr, const int32_t *__restrict__ col,
                       const uint64_t *__restrict__ t, const uint64_t *__restrict__ m1, uint8_t *__restrict__ state,
                       int dist, unsigned long long *und)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) {
        if (state[i] != GT_AMG_UNDECIDED) continue;
        uint64_t m = m1[i];
        if (dist == 2)
            for (int64_t p = ptr[i]; p < ptr[i + 1]; p++) {
                uint64_t v = m1[col[p]];
                m = v > m ? v : m;
            }
        if (m == t[i]) state[i] = GT_AMG_IN;
        else if (gt_amg_tuple_state(m) == GT_AMG_IN) state[i] = GT_AMG_OUT;
        else atomicAdd(und, 1ull);
    }
}

__global__ void k_root_flags(int64_t n, const uint8_t *__restrict__ state, uint32_t *__restrict__ f)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B)
        f[i] = state[i] == GT_AMG_IN;
}

// f holds the exclusive scan of the root flags
__global__ void k_root_ids(int64_t n, const uint8_t *__restrict__ state, const uint32_t *__restrict__ f,
                           int32_t *__restrict__ agg)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B)
        agg[i] = state[i] == GT_AMG_IN ? (int32_t)f[i] : -1;
}

// cnt[0] joined, cnt[1] left
__global__ void k_join(int64_t n, const int64_t *__restrict__ ptr, const int32_t *__restrict__ col,
                       const int32_t *__restrict__ prev, int32_t *__restrict__ agg, unsigned long long *cnt)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) {
        if (prev[i] >= 0) continue;
        int32_t g = -1;
        for (int64_t p = ptr[i]; p < ptr[i + 1]; p++)
            if (prev[col[p]] >= 0) {
                g = prev[col[p]];
                break;
            }
        agg[i] = g;
        if (g >= 0) atomicAdd(cnt, 1ull);
        else atomicAdd(cnt + 1, 1ull);
    }
}

__global__ void k_left_flags(int64_t n, const int32_t *__restrict__ agg, uint32_t *__restrict__ f)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) f[i] = agg[i] < 0;
}

__global__ void k_left_ids(int64_t n, int64_t base, const uint32_t *__restrict__ f, int32_t *__restrict__ agg)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B)
        if (agg[i] < 0) agg[i] = (int32_t)(base + f[i]);
}

struct bufs {
    uint8_t *state = nullptr;
    uint64_t *t = nullptr, *m1 = nullptr;
    uint32_t *f = nullptr;
    int32_t *prev = nullptr;
    ~bufs() { gt_cu_free(state), gt_cu_free(t), gt_cu_free(m1), gt_cu_free(f), gt_cu_free(prev); }
};

} // namespace

gt_status amg_cu_aggregate(const amg_dcsr *s, int dist, int32_t *agg, int64_t *nagg, int64_t *scratch, cudaStream_t st)
{
    int64_t n = s->n;
    size_t nn = (size_t)(n ? n : 1);
    unsigned g = gt_grid(nn, B);
    bufs w;
    GT_TRY(gt_cu_malloc((void **)&w.state, nn, "amg mis states"));
    GT_TRY(gt_cu_malloc((void **)&w.t, nn * 8, "amg mis tuples"));
    GT_TRY(gt_cu_malloc((void **)&w.m1, nn * 8, "amg mis maxima"));
    GT_TRY(gt_cu_malloc((void **)&w.f, (nn + 1) * 4, "amg aggregate flags"));
    GT_TRY(gt_cu_malloc((void **)&w.prev, nn * 4, "amg aggregates"));
    unsigned long long *cnt = (unsigned long long *)scratch; // scratch holds 2 counters
    GT_CU(cudaMemsetAsync(w.state, GT_AMG_UNDECIDED, nn, st));
    unsigned long long h[2] = {1, 0};
    for (int r = 0; h[0] > 0; r++) {
        if (r > 1000) return gt_fail(GT_ERR_RUNTIME, "amg: the MIS-2 did not finish in 1000 rounds");
        GT_CU(cudaMemsetAsync(cnt, 0, 8, st));
        k_tuples<<<g, B, 0, st>>>(n, w.state, w.t);
        k_max1<<<g, B, 0, st>>>(n, s->ptr, s->col, w.t, w.m1);
        k_max2<<<g, B, 0, st>>>(n, s->ptr, s->col, w.t, w.m1, w.state, dist, cnt);
        GT_CU_LAUNCH("k_max2");
        GT_CU(cudaMemcpyAsync(h, cnt, 8, cudaMemcpyDeviceToHost, st));
        GT_CU(cudaStreamSynchronize(st));
    }
    GT_CU(cudaMemsetAsync(w.f + n, 0, 4, st));
    k_root_flags<<<g, B, 0, st>>>(n, w.state, w.f);
    GT_CU_LAUNCH("k_root_flags");
    GT_TRY(gt_cu_scan_exclusive_u32(w.f, w.f, (size_t)n + 1, nullptr, st));
    k_root_ids<<<g, B, 0, st>>>(n, w.state, w.f, agg);
    GT_CU_LAUNCH("k_root_ids");
    uint32_t na32 = 0;
    GT_CU(cudaMemcpyAsync(&na32, w.f + n, 4, cudaMemcpyDeviceToHost, st));
    for (;;) {
        GT_CU(cudaMemcpyAsync(w.prev, agg, nn * 4, cudaMemcpyDeviceToDevice, st));
        GT_CU(cudaMemsetAsync(cnt, 0, 16, st));
        k_join<<<g, B, 0, st>>>(n, s->ptr, s->col, w.prev, agg, cnt);
        GT_CU_LAUNCH("k_join");
        GT_CU(cudaMemcpyAsync(h, cnt, 16, cudaMemcpyDeviceToHost, st));
        GT_CU(cudaStreamSynchronize(st));
        if (h[1] == 0 || h[0] == 0) break;
    }
    int64_t na = na32;
    if (h[1] > 0) {
        k_left_flags<<<g, B, 0, st>>>(n, agg, w.f);
        GT_TRY(gt_cu_scan_exclusive_u32(w.f, w.f, (size_t)n, nullptr, st));
        k_left_ids<<<g, B, 0, st>>>(n, na, w.f, agg);
        GT_CU_LAUNCH("k_left_ids");
        na += (int64_t)h[1];
    }
    GT_CU(cudaStreamSynchronize(st));
    *nagg = na;
    return GT_OK;
}
