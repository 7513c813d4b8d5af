// Stage 5 of the CUDA marching cubes (mc_stages.h): the triangles, in the
// CPU's order (voxels in point order, each its table triangles), with the
// corners' vertex numbers by gt_mcw_corner_vertex: the offset of the corner
// point's word + the popcount of the word's edge masks below the point +
// its axis rank.
//
// Launch shape: one block of 128 threads per 128 consecutive own words.
// Each word lists its non-empty voxels (bit, cube, first triangle) in shared
// memory after a block scan of their counts, with the edge masks and vertex
// bases of its 4 point rows; then the block's triangles are spread over all
// threads (triangle -> voxel by a binary search), so lanes stay busy on
// sparse, uneven occupancy and writes are coalesced. More than kVoxCap
// voxels in a block: several passes. No per-thread arrays indexed at run
// time (nothing in local memory).
#include <cstdint>

#include "kernels/common/cu_check.h"
#include "kernels/mc/mc_stages.h"

namespace {

__constant__ uint8_t c_ntri[256];
constexpr int kTriBytes = 256 * GT_MC_MAXTRI * 3;
__device__ uint8_t d_tri[kTriBytes]; // the triangle table (read through L1)

// exclusive prefix of v over the block (kEmitThreads threads), *total the sum.
// The caller syncs before s_w is used again.
__device__ __forceinline__ unsigned block_scan(unsigned v, unsigned *s_w, unsigned &total)
{
    const unsigned lane = threadIdx.x & 31u, wid = threadIdx.x >> 5;
    unsigned x = v;
#pragma unroll
    for (unsigned d = 1; d < 32; d <<= 1) {
        const unsigned y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d) x += y;
    }
    if (lane == 31u) s_w[wid] = x;
    __syncthreads();
    unsigned off = 0, tot = 0;
#pragma unroll
    for (unsigned q = 0; q < kEmitThreads / 32; q++) {
        const unsigned s = s_w[q];
        if (q < wid) off += s;
        tot += s;
    }
    total = tot;
    return off + x - v;
}

__global__ void __launch_bounds__(kEmitThreads) k_tris(Geo g, const uint32_t *bits, uint64_t nown, const uint64_t *offV,
                                                        const uint64_t *offT, uint64_t vbase, int32_t *tris)
{
    __shared__ uint8_t s_ntri[256];
    __shared__ uint32_t s_m[12][kEmitThreads];  // edge masks of the word's point rows q = dy + 2*dz: xe, ye, ze at 3q
    __shared__ uint32_t s_base[8][kEmitThreads]; // vertex number of row q's first point (2q) and of its next word's (2q+1)
    __shared__ uint32_t s_mn[kEmitThreads];      // the next words' first points' 3-bit edge masks, row q at bit 3q
    __shared__ uint32_t s_vox[kVoxCap];          // listed voxel: word << 13 | bit << 8 | cube
    __shared__ uint16_t s_vt[kVoxCap + 1];       // its first triangle (block-local, < 128*32*12); [n] = the pass's end
    __shared__ unsigned s_w[kEmitThreads / 32];
    for (unsigned q = threadIdx.x; q < 256; q += blockDim.x) s_ntri[q] = c_ntri[q];
    __syncthreads();
    const unsigned tid = threadIdx.x;
    for (uint64_t w0 = (uint64_t)blockIdx.x * kEmitThreads; w0 < nown; w0 += (uint64_t)gridDim.x * kEmitThreads) {
        const uint64_t w1 = w0 + kEmitThreads < nown ? w0 + kEmitThreads : nown;
        const uint64_t tb0 = gt_mcw_offt(&g, offV, offT, w0), ntb = gt_mcw_offt(&g, offV, offT, w1) - tb0;
        if (ntb == 0) continue; // block-uniform
        const uint64_t x = w0 + tid;
        int64_t w = 0, j = 0, k = 0;
        if (x < w1) gt_mcw_coords(&g, x, &w, &j, &k);
        gt_mcw_vrows vr;
#pragma unroll
        for (int q = 0; q < 4; q++) vr.c[q] = vr.cn[q] = 0;
        uint32_t ne = 0;
        if (x < w1 && gt_mcw_is_voxrow(&g, j, k)) {
            vr = gt_mcw_voxel_rows(bits, &g, j, k, w);
            ne = gt_mcw_nonempty(&g, &vr, w);
        }
        if (ne) gt_mcw_corner_rows(bits, &g, offV, vbase, x, w, j, k, &s_m[0][tid], &s_base[0][tid], &s_mn[tid], kEmitThreads);
        unsigned nvox;
        const unsigned v0 = block_scan((unsigned)__popc(ne), s_w, nvox); // synced: the word data is visible
        const uint32_t t0 = ne ? (uint32_t)(gt_mcw_offt(&g, offV, offT, x) - tb0) : 0u;
        // every thread has read the scan's partials before any listing store:
        // racecheck saw the partials' reads and the first pass's stores at one
        // shared address (a WAR hazard without this barrier)
        __syncthreads();
        for (unsigned lo = 0; lo < nvox; lo += kVoxCap) { // block-uniform; one pass unless > kVoxCap voxels
            const unsigned n = nvox - lo < (unsigned)kVoxCap ? nvox - lo : (unsigned)kVoxCap;
            // list voxels [lo, lo + n); the first triangle of voxel lo + kVoxCap ends the pass
            uint32_t m = ne, t = t0;
            for (unsigned v = v0; m; v++) {
                const unsigned b = (unsigned)(__ffs(m) - 1);
                m &= m - 1u;
                const unsigned cube = gt_mcw_cube(&vr, b);
                if (v >= lo && v < lo + kVoxCap) {
                    s_vox[v - lo] = (tid << 13) | (b << 8) | cube;
                    s_vt[v - lo] = (uint16_t)t;
                } else if (v == lo + kVoxCap) {
                    s_vt[kVoxCap] = (uint16_t)t;
                }
                t += s_ntri[cube];
            }
            if (tid == 0 && lo + kVoxCap >= nvox) s_vt[n] = (uint16_t)ntb;
            __syncthreads();
            const unsigned T1 = s_vt[n];
            for (unsigned t2 = s_vt[0] + tid; t2 < T1; t2 += kEmitThreads) {
                // the voxel: the last a < n with s_vt[a] <= t2 (skips voxels without triangles)
                unsigned a = 0, len = n;
                while (len > 1) {
                    const unsigned h = len >> 1;
                    if (s_vt[a + h] <= t2) a += h, len -= h;
                    else len = h;
                }
                const uint32_t e = s_vox[a];
                const unsigned q = e >> 13, b = (e >> 8) & 31u, cube = e & 255u;
                const uint8_t *ct = d_tri + cube * (GT_MC_MAXTRI * 3) + 3 * (t2 - s_vt[a]);
                int32_t idx[3];
#pragma unroll
                for (int c = 0; c < 3; c++)
                    idx[c] = (int32_t)gt_mcw_corner_vertex(&s_m[0][q], &s_base[0][q], &s_mn[q], kEmitThreads,
                                                           __ldg(ct + c), b);
                int32_t *out = tris + 3 * (tb0 + t2);
                out[0] = idx[0];
                out[1] = g.reverse ? idx[2] : idx[1];
                out[2] = g.reverse ? idx[1] : idx[2];
            }
            __syncthreads(); // the list is reused by the next pass
        }
        __syncthreads(); // the word data is reused by the next block
    }
}

} // namespace

gt_status mc_tris_table(const gt_mc_table *t)
{
    GT_CU(cudaMemcpyToSymbol(c_ntri, t->ntri, sizeof t->ntri));
    static_assert(sizeof t->tri == kTriBytes, "table size");
    GT_CU(cudaMemcpyToSymbol(d_tri, t->tri, sizeof t->tri));
    return GT_OK;
}

gt_status mc_tris(const Geo &g, const uint32_t *bits, uint64_t nown, const uint64_t *offV, const uint64_t *offT,
                  uint64_t vbase, int32_t *tris, cudaStream_t s)
{
    k_tris<<<mc_blocks_for(nown, kEmitThreads), kEmitThreads, 0, s>>>(g, bits, nown, offV, offT, vbase, tris);
    GT_CU_LAUNCH("k_tris");
    return GT_OK;
}
