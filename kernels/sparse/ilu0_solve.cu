// The two triangular solves of the IC(0) / ILU(0) preconditioner on the
// GPU, over the factors in one CSR on A's pattern (sparse/ilu0.h):
//   forward  y_i = (r_i - sum_{j<i} f_ij y_j) / ld_i   (ld_i = 1 for ILU(0))
//   backward z_i = (y_i - sum_{j>i} f_ij z_j) / f_ii   (in place over y = z)
// A subwarp of W lanes per row; the lanes stride over the row's entries and
// the sum ends in a shuffle reduction.
//
// Sync-free (Liu et al. 2016): one launch per solve with a subwarp for
// every row; each subwarp takes the next row in dependency order (ascending
// forward, descending backward) from an atomic counter, waits on the ready
// flags of the rows it reads, and publishes its own after a memory fence.
// Rows are handed out in order to subwarps that are already running, so
// every row waited for belongs to a resident subwarp: no deadlock. Flags
// hold the epoch of the apply that finished them (one tiny kernel per apply
// advances the epoch and clears the counters: capturable in a CUDA graph,
// no clearing of the flags).
// Level-scheduled: one launch per level with the rows of that level, all
// of them captured once into a CUDA graph (prepare) so that an apply costs
// one graph launch and two vector copies.
#include <cuda_runtime.h>

#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/sparse/ilu0.cuh"

namespace gt_ilu {
namespace {

__global__ void k_begin(Sync *s)
{
    s->epoch++;
    s->next[0] = s->next[1] = 0;
}

template <int W>
__device__ __forceinline__ unsigned sub_mask()
{
    if constexpr (W == 32) return 0xffffffffu;
    else return ((1u << W) - 1u) << ((threadIdx.x & 31) & ~(W - 1));
}

template <int W>
__device__ __forceinline__ double sub_sum(double s, unsigned mask)
{
#pragma unroll
    for (int off = W / 2; off > 0; off >>= 1) s += __shfl_down_sync(mask, s, off, W);
    return s;
}

template <int W, bool UP>
__global__ void __launch_bounds__(BLOCK) k_syncfree(int64_t n, const int64_t *__restrict__ ptr,
                                                     const int32_t *__restrict__ col,
                                                     const double *__restrict__ val,
                                                     const int64_t *__restrict__ diag, bool unit,
                                                     const double *__restrict__ r, double *z, int *ready, Sync *sync)
{
    const int lane = threadIdx.x & (W - 1);
    const unsigned mask = sub_mask<W>();
    const int epoch = *(volatile int *)&sync->epoch;
    unsigned t = 0;
    if (lane == 0) t = atomicAdd(&sync->next[UP ? 1 : 0], 1u);
    t = __shfl_sync(mask, t, 0, W);
    if ((int64_t)t >= n) return;
    const int64_t i = UP ? n - 1 - (int64_t)t : (int64_t)t;
    const int64_t b = UP ? diag[i] + 1 : ptr[i], e = UP ? ptr[i + 1] : diag[i];
    double s = 0;
    for (int64_t p = b + lane; p < e; p += W) {
        const int32_t j = col[p];
        const volatile int *f = ready + j;
        while (*f != epoch) {
        }
        __threadfence();
        s += val[p] * __ldcg(z + j);
    }
    s = sub_sum<W>(s, mask);
    if (lane == 0) {
        double x = (UP ? __ldcg(z + i) : r[i]) - s;
        if (!unit) x /= val[diag[i]];
        __stcg(z + i, x);
        __threadfence();
        *(volatile int *)(ready + i) = epoch;
    }
}

template <int W, bool UP>
__global__ void __launch_bounds__(BLOCK) k_level(int64_t cnt, const int32_t *__restrict__ rows,
                                                  const int64_t *__restrict__ ptr, const int32_t *__restrict__ col,
                                                  const double *__restrict__ val, const int64_t *__restrict__ diag,
                                                  bool unit, const double *__restrict__ r, double *z)
{
    const int lane = threadIdx.x & (W - 1);
    const int64_t t = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / W;
    if (t >= cnt) return;
    const unsigned mask = sub_mask<W>();
    const int64_t i = rows[t];
    const int64_t b = UP ? diag[i] + 1 : ptr[i], e = UP ? ptr[i + 1] : diag[i];
    double s = 0;
    for (int64_t p = b + lane; p < e; p += W) s += val[p] * z[col[p]];
    s = sub_sum<W>(s, mask);
    if (lane == 0) {
        double x = (UP ? z[i] : r[i]) - s;
        if (!unit) x /= val[diag[i]];
        z[i] = x;
    }
}

template <int W>
gt_status run(Ctx *c, const double *r, double *z, cudaStream_t st)
{
    const int rows_per_block = BLOCK / W;
    if (c->o.solve == GT_ILU_SOLVE_SYNCFREE) {
        unsigned g = gt_grid((size_t)c->n, (unsigned)rows_per_block, 0x7fffffffu);
        k_begin<<<1, 1, 0, st>>>(c->sync);
        GT_CU_LAUNCH("ilu0 begin");
        k_syncfree<W, false><<<g, BLOCK, 0, st>>>(c->n, c->ptr, c->col, c->val, c->diag, !c->ic, r, z, c->ready,
                                                  c->sync);
        GT_CU_LAUNCH("ilu0 forward");
        k_syncfree<W, true><<<g, BLOCK, 0, st>>>(c->n, c->ptr, c->col, c->val, c->diag, false, nullptr, z,
                                                 c->ready + c->n, c->sync);
        GT_CU_LAUNCH("ilu0 backward");
        return GT_OK;
    }
    for (int u = 0; u < 2; u++)
        for (int64_t l = 0; l < c->nlev[u]; l++) {
            int64_t b = c->lptr[u][l], cnt = c->lptr[u][l + 1] - b;
            unsigned g = gt_grid((size_t)cnt, (unsigned)rows_per_block, 0x7fffffffu);
            if (u == 0)
                k_level<W, false><<<g, BLOCK, 0, st>>>(cnt, c->lrows[0] + b, c->ptr, c->col, c->val, c->diag, !c->ic,
                                                       r, z);
            else
                k_level<W, true><<<g, BLOCK, 0, st>>>(cnt, c->lrows[1] + b, c->ptr, c->col, c->val, c->diag, false,
                                                      nullptr, z);
            GT_CU_LAUNCH("ilu0 level solve");
        }
    return GT_OK;
}

gt_status launch(Ctx *c, const double *r, double *z, cudaStream_t st)
{
    switch (c->width) {
    case 2: return run<2>(c, r, z, st);
    case 4: return run<4>(c, r, z, st);
    case 8: return run<8>(c, r, z, st);
    case 16: return run<16>(c, r, z, st);
    default: return run<32>(c, r, z, st);
    }
}

} // namespace

gt_status prepare(Ctx *c)
{
    if (c->o.solve != GT_ILU_SOLVE_LEVELS) return GT_OK;
    size_t vb = (size_t)c->n * sizeof(double) + 8;
    GT_TRY(gt_cu_malloc((void **)&c->rbuf, vb, "ILU(0) solve vectors"));
    GT_TRY(gt_cu_malloc((void **)&c->zbuf, vb, "ILU(0) solve vectors"));
    cudaStream_t s;
    GT_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t g = nullptr;
    gt_status st = gt_cu_status_from(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal),
                                     "cudaStreamBeginCapture", __FILE__, __LINE__);
    if (st == GT_OK) {
        gt_status ls = launch(c, c->rbuf, c->zbuf, s);
        cudaError_t e = cudaStreamEndCapture(s, &g);
        st = ls != GT_OK ? ls : gt_cu_status_from(e, "cudaStreamEndCapture", __FILE__, __LINE__);
    }
    if (st == GT_OK)
        st = gt_cu_status_from(cudaGraphInstantiate(&c->exec, g, 0), "cudaGraphInstantiate", __FILE__, __LINE__);
    if (g) cudaGraphDestroy(g);
    cudaStreamDestroy(s);
    return st;
}

gt_status solve(Ctx *c, const double *r, double *z, cudaStream_t st)
{
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    GT_CU(cudaStreamIsCapturing(st, &cs));
    if (!c->exec || cs != cudaStreamCaptureStatusNone) return launch(c, r, z, st);
    size_t vb = (size_t)c->n * sizeof(double);
    GT_CU(cudaMemcpyAsync(c->rbuf, r, vb, cudaMemcpyDeviceToDevice, st));
    GT_CU(cudaGraphLaunch(c->exec, st));
    GT_CU(cudaMemcpyAsync(z, c->zbuf, vb, cudaMemcpyDeviceToDevice, st));
    return GT_OK;
}

} // namespace gt_ilu
