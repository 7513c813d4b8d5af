// Stage 1 of the CUDA marching cubes (mc_stages.h): the volume is read once
// (coalesced, float4 when X % 4 == 0) and packed to one "in" bit per point
// (v >= iso; NaN is out): 1/32 of the volume's bytes, planes [z0,
// min(z1+2, Z)), laid out as mc_words.h says.
//
// Launch shape: one warp per (row, 512-column segment), 8 warps a block.
// A segment is 16 words: the float4 path has lane l read 4 consecutive
// columns of each 128-column quarter and assembles the words' nibbles with
// three xor shuffles; the scalar path ballots 16 rounds of 32 columns. Both
// keep the loads coalesced and write whole words (no atomics).
#include <cstdint>

#include "kernels/common/cu_check.h"
#include "kernels/mc/mc_stages.h"

namespace {

// bits[((k - z0) * Y + j) * W + w], bit b = point (32w + b, j, k) is in; 0
// past the row's end. One warp per (row, 512-column segment).
template <bool VEC>
__global__ void __launch_bounds__(256) k_bits(Geo g, uint64_t nrows, uint32_t *bits)
{
    const unsigned lane = threadIdx.x & 31u;
    const uint64_t nseg = (uint64_t)((g.X + kSeg - 1) / kSeg);
    const uint64_t items = nrows * nseg;
    const uint64_t warps = (uint64_t)gridDim.x * (blockDim.x >> 5);
    for (uint64_t it = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; it < items; it += warps) {
        uint64_t r, sg, pl, jj;
        gt_mcw_divmod(&g, it, nseg, &r, &sg);
        gt_mcw_divmod(&g, r, (uint64_t)g.Y, &pl, &jj);
        const int64_t s0 = (int64_t)sg * kSeg;
        const int64_t j = (int64_t)jj, k = g.z0 + (int64_t)pl;
        const float *row = g.vol + ((k - g.zb) * g.Y + j) * g.X;
        uint32_t *out = bits + r * (uint64_t)g.W + (uint64_t)(s0 / 32);
        const int64_t wleft = g.W - s0 / 32; // words of this row from the segment on
        if (VEC) {
            // lane l holds columns s0 + 128u + 4l .. +3 (X % 4 == 0: all or none valid)
            float4 f[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const int64_t i = s0 + 128 * u + 4 * (int64_t)lane;
                f[u] = i < g.X ? __ldg(reinterpret_cast<const float4 *>(row + i)) : make_float4(0.f, 0.f, 0.f, 0.f);
                if (i >= g.X) f[u].x = f[u].y = f[u].z = f[u].w = __int_as_float(0x7fc00000); // NaN: out
            }
#pragma unroll
            for (int u = 0; u < 4; u++) {
                uint32_t v = (f[u].x >= g.isof ? 1u : 0u) | (f[u].y >= g.isof ? 2u : 0u) | (f[u].z >= g.isof ? 4u : 0u) |
                             (f[u].w >= g.isof ? 8u : 0u);
                v <<= 4 * (lane & 7u);
                v |= __shfl_xor_sync(0xffffffffu, v, 1);
                v |= __shfl_xor_sync(0xffffffffu, v, 2);
                v |= __shfl_xor_sync(0xffffffffu, v, 4);
                const int64_t wd = 4 * u + (lane >> 3);
                if ((lane & 7u) == 0 && wd < wleft) out[wd] = v;
            }
        } else {
            float f[16];
#pragma unroll
            for (int u = 0; u < 16; u++) {
                const int64_t i = s0 + 32 * u + (int64_t)lane;
                f[u] = i < g.X ? __ldg(row + i) : __int_as_float(0x7fc00000);
            }
            uint32_t mine = 0;
#pragma unroll
            for (int u = 0; u < 16; u++) {
                const uint32_t b = __ballot_sync(0xffffffffu, f[u] >= g.isof);
                if (lane == (unsigned)u) mine = b;
            }
            if ((int64_t)lane < 16 && (int64_t)lane < wleft) out[lane] = mine;
        }
    }
}

} // namespace

gt_status mc_bits(const Geo &g, uint64_t nrows, uint64_t nsegs, bool vec, uint32_t *bits, cudaStream_t s)
{
    if (vec) k_bits<true><<<mc_blocks_for(nsegs, 8), 256, 0, s>>>(g, nrows, bits);
    else k_bits<false><<<mc_blocks_for(nsegs, 8), 256, 0, s>>>(g, nrows, bits);
    GT_CU_LAUNCH("k_bits");
    return GT_OK;
}
