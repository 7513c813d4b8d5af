// Stage 4 of the CUDA marching cubes (mc_stages.h): the vertices, in
// edge-id order, at the offsets of stage 3's scan; position and normal by
// mc_math.h (the CPU's gt_mc_vertex).
//
// Launch shape: one block of 128 threads per 128 consecutive own words.
// Phase A, one thread per word: the word's edge masks and first vertex
// number go to shared memory. Phase B spreads the block's vertices, a
// contiguous range of the output, over all threads: vertex -> word by a
// binary search of the word offsets, -> point and axis (gt_mcw_vertex_at),
// so every lane does useful work however unevenly the words are occupied,
// and consecutive lanes write consecutive vertices.
#include <cstdint>

#include "kernels/common/cu_check.h"
#include "kernels/mc/mc_stages.h"

namespace {

template <bool NRM>
__global__ void __launch_bounds__(kEmitThreads) k_verts(Geo g, const uint32_t *bits, uint64_t nown, const uint64_t *offV,
                                                         float *xyz, float *nrm)
{
    __shared__ uint32_t s_m[3][kEmitThreads];     // the words' edge masks xe, ye, ze
    __shared__ uint32_t s_vo[kEmitThreads + 1];   // block-local number of each word's first vertex; [128] = all
    const unsigned tid = threadIdx.x;
    for (uint64_t w0 = (uint64_t)blockIdx.x * kEmitThreads; w0 < nown; w0 += (uint64_t)gridDim.x * kEmitThreads) {
        const uint64_t w1 = w0 + kEmitThreads < nown ? w0 + kEmitThreads : nown;
        const uint64_t vb0 = gt_mcw_offv(&g, offV, w0), nvb = gt_mcw_offv(&g, offV, w1) - vb0;
        if (nvb == 0) continue; // block-uniform
        const uint64_t x = w0 + tid;
        uint32_t xe = 0, ye = 0, ze = 0, vo = (uint32_t)nvb; // words past the end: no vertices
        if (x < w1) {
            int64_t w, j, k;
            gt_mcw_coords(&g, x, &w, &j, &k);
            const gt_mcw_prow pr = gt_mcw_point_row(bits, &g, j, k, w);
            xe = pr.xe;
            ye = pr.ye;
            ze = pr.ze;
            vo = (uint32_t)(gt_mcw_offv(&g, offV, x) - vb0);
        }
        s_m[0][tid] = xe;
        s_m[1][tid] = ye;
        s_m[2][tid] = ze;
        s_vo[tid] = vo;
        if (tid == 0) s_vo[kEmitThreads] = (uint32_t)nvb;
        __syncthreads();
        for (uint32_t v = tid; v < (uint32_t)nvb; v += kEmitThreads) {
            // the word: the last q with s_vo[q] <= v (s_vo[0] = 0)
            unsigned q = 0, len = kEmitThreads;
            while (len > 1) {
                const unsigned h = len >> 1;
                if (s_vo[q + h] <= v) q += h, len -= h;
                else len = h;
            }
            // the point b of the word and the axis a of its edge
            unsigned b;
            int a;
            gt_mcw_vertex_at(s_m[0][q], s_m[1][q], s_m[2][q], v - s_vo[q], &b, &a);
            int64_t w, j, k;
            gt_mcw_coords(&g, w0 + q, &w, &j, &k);
            const int64_t i = 32 * w + b;
            const float f0 = gt_mc_at(g.vol, g.X, g.Y, g.zb, i, j, k);
            const float f1 = gt_mc_at(g.vol, g.X, g.Y, g.zb, i + (a == 0), j + (a == 1), k + (a == 2));
            gt_mc_vertex(g.vol, g.X, g.Y, g.Z, g.zb, g.origin, g.dir, g.dinv, g.nsign, g.iso, i, j, k, a, f0, f1,
                         xyz + 3 * (vb0 + v), NRM ? nrm + 3 * (vb0 + v) : nullptr);
        }
        __syncthreads(); // the shared arrays are reused by the next block
    }
}

} // namespace

gt_status mc_verts(const Geo &g, const uint32_t *bits, uint64_t nown, const uint64_t *offV, float *xyz, float *nrm,
                   cudaStream_t s)
{
    if (nrm) k_verts<true><<<mc_blocks_for(nown, kEmitThreads), kEmitThreads, 0, s>>>(g, bits, nown, offV, xyz, nrm);
    else k_verts<false><<<mc_blocks_for(nown, kEmitThreads), kEmitThreads, 0, s>>>(g, bits, nown, offV, xyz, nullptr);
    GT_CU_LAUNCH("k_verts");
    return GT_OK;
}
