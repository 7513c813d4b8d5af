// The duplicate stage of the forward rasterizer (included by gs_raster.cu
// alone, whose gt_gs_cu_render launches these): the tile counts gathered in
// depth order for the scan of the pair offsets, and the (tile, Gaussian)
// pairs written at those offsets.
#ifndef GT_KERNELS_GS_DUPLICATE_CUH
#define GT_KERNELS_GS_DUPLICATE_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "gs/gs_cull.h"
#include "gs/gs_math.h"
#include "kernels/gs/gs_stages.cuh"

// A Gaussian with more pairs than this is written by its whole warp.
#define GS_DUP_COOP 32

// cnt[k] = touched[order[k]]: the tile counts in depth order, to scan.
__global__ void k_gather_counts(size_t n, const uint32_t *__restrict__ order, const uint32_t *__restrict__ touched,
                                uint32_t *__restrict__ cnt)
{
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n;
         k += (size_t)gridDim.x * blockDim.x)
        cnt[k] = touched[order[k]];
}

// The pairs of Gaussian i (tile rect r, row spans of gs_row_span when
// exact) at positions [0, cnt) of keys/vals: row by row, left to right,
// never more than cnt; positions the rows do not fill (the two passes
// disagreed) get the sentinel tile ntiles. One thread.
__device__ __forceinline__ void dup_one(const GsDupRec &d, uint32_t i, uint32_t cnt, int gx, uint32_t ntiles,
                                        int exact, uint32_t *__restrict__ keys, uint32_t *__restrict__ vals)
{
    const float det = gs_det2(d.a, d.b, d.c);
    const ushort4 r = d.rect;
    uint32_t w = 0;
    for (int ty = r.y; ty < r.w && w < cnt; ty++) {
        int lo = r.x, hi = r.z;
        if (exact) gs_row_span(d.xy.x, d.xy.y, d.a, d.b, d.c, det, d.tau2, ty, r.x, r.z, &lo, &hi);
        for (int tx = lo; tx < hi && w < cnt; tx++, w++) {
            keys[w] = (uint32_t)ty * (uint32_t)gx + (uint32_t)tx;
            vals[w] = i;
        }
    }
    for (; w < cnt; w++) {
        keys[w] = ntiles;
        vals[w] = i;
    }
}

// The same pairs, at the same positions, written by the 32 lanes of a warp
// together (every lane calls it with the same arguments): 32 rows at a time,
// each lane one row's span, a warp scan of the span lengths for the rows'
// first positions, then the rows one after another with the lanes across
// their tiles. A Gaussian as wide as the image (8,160 tiles at 1080p) costs
// its warp ~300 steps of coalesced stores instead of one thread 8,160.
__device__ __forceinline__ void dup_warp(const GsDupRec &d, uint32_t i, uint32_t cnt, int gx, uint32_t ntiles,
                                         int exact, int lane, uint32_t *__restrict__ keys,
                                         uint32_t *__restrict__ vals)
{
    const unsigned full = 0xffffffffu;
    const float det = gs_det2(d.a, d.b, d.c);
    const ushort4 r = d.rect;
    uint32_t w = 0; // positions taken by the rows before the chunk
    for (int ty0 = r.y; ty0 < r.w && w < cnt; ty0 += 32) {
        const int ty = ty0 + lane;
        int lo = r.x, hi = r.x;
        if (ty < r.w) {
            hi = r.z;
            if (exact) gs_row_span(d.xy.x, d.xy.y, d.a, d.b, d.c, det, d.tau2, ty, r.x, r.z, &lo, &hi);
        }
        const uint32_t len = (uint32_t)(hi - lo);
        uint32_t inc = len;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const uint32_t t = __shfl_up_sync(full, inc, o);
            if (lane >= o) inc += t;
        }
        const uint32_t first = w + inc - len;
        const int rows = min(32, (int)r.w - ty0);
        for (int q = 0; q < rows; q++) {
            const uint32_t rlen = __shfl_sync(full, len, q), rfirst = __shfl_sync(full, first, q);
            const uint32_t rlo = (uint32_t)__shfl_sync(full, lo, q), row = (uint32_t)(ty0 + q) * (uint32_t)gx;
            for (uint32_t x = (uint32_t)lane; x < rlen && rfirst + x < cnt; x += 32) {
                keys[rfirst + x] = row + rlo + x;
                vals[rfirst + x] = i;
            }
        }
        w += __shfl_sync(full, inc, 31);
    }
    for (uint32_t p = min(w, cnt) + (uint32_t)lane; p < cnt; p += 32) {
        keys[p] = ntiles;
        vals[p] = i;
    }
}

// Writes the (tile, index) pairs of the k-th Gaussian in depth order at its
// offset, so that all pairs stand in depth order and the stable sort by
// tile that follows leaves each tile's list front to back: the order of
// the reference's one sort on (tile << 32 | depth) keys, ties (equal
// depths) by index in both. The spans are recomputed exactly as in
// k_preprocess; as a guard, never more than touched pairs are written, and
// missing ones (which would mean the two passes disagreed) are filled with
// the sentinel tile `ntiles`, which sorts last and belongs to no tile.
// A lane writes its own Gaussian when it has at most GS_DUP_COOP pairs;
// the larger ones of the warp's 32 are then written by the whole warp, one
// after another (dup_warp), so that one Gaussian covering the image does
// not hold the stage for thousands of serial steps (a few such Gaussians
// made the stage 0.36 ms of a 0.74 ms 1080p frame of 10k Gaussians). The
// loop keeps a warp's lanes together (blockDim a multiple of 32).
__global__ void __launch_bounds__(256) k_duplicate(size_t n, int gx, uint32_t ntiles, int exact,
                                                   const uint32_t *__restrict__ order,
                                                   const uint32_t *__restrict__ counts,
                                                   const GsDupRec *__restrict__ dup,
                                                   const uint32_t *__restrict__ offsets,
                                                   uint32_t *__restrict__ keys,
                                                   uint32_t *__restrict__ vals)
{
    const int lane = threadIdx.x & 31;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t base = blockIdx.x * (size_t)blockDim.x + (threadIdx.x & ~31u); base < n; base += stride) {
        const size_t k = base + (size_t)lane;
        const uint32_t cnt = k < n ? counts[k] : 0;
        const bool big = cnt > GS_DUP_COOP;
        if (cnt && !big) {
            const uint32_t i = order[k];
            const size_t off = offsets[k];
            dup_one(dup[i], i, cnt, gx, ntiles, exact, keys + off, vals + off);
        }
        for (unsigned bigs = __ballot_sync(0xffffffffu, big); bigs; bigs &= bigs - 1u) {
            const size_t kb = base + (size_t)(__ffs((int)bigs) - 1);
            const uint32_t i = order[kb];
            const size_t off = offsets[kb];
            dup_warp(dup[i], i, counts[kb], gx, ntiles, exact, lane, keys + off, vals + off);
        }
    }
}

#endif
