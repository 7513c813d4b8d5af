/* The stages of the CUDA marching cubes (C++ only), shared by the driver
 * (mc_extract.cu) and the files that hold each stage's kernel:
 *   mc_bits.cu   1. the volume packed to one "in" bit per point;
 *   mc_count.cu  2. per word, its vertices and triangles;
 *                3. (the driver) exclusive scans of both -> word offsets;
 *   mc_verts.cu  4. the vertices (position, normal);
 *   mc_tris.cu   5. the triangles.
 * The index logic is mc_words.h's, the per-vertex math mc_math.h's. A
 * kernel can only be launched from its own file (no relocatable device
 * code), so each stage file exports a launcher on the slab's stream; the
 * case table lives in each file's own constant/global memory, uploaded
 * from the one host table (gt_mc_table_get) by the driver's create. */
#ifndef GT_KERNELS_MC_STAGES_H
#define GT_KERNELS_MC_STAGES_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "common/status.h"
#include "kernels/mc/mc_words.h"
#include "mc/mc.h"

typedef gt_mcw_geo Geo;

constexpr int kSeg = GT_MCW_SEG;  // columns per warp of the bits kernel
constexpr int kEmitThreads = 128; // threads (and words) per block of the vertex and triangle kernels
constexpr int kVoxCap = 2048;     // voxels listed per pass of the triangle kernel (a block has at most 4096)

// blocks for n items of per_block each (grid-stride beyond 2^20 blocks)
static inline unsigned mc_blocks_for(uint64_t n, uint64_t per_block)
{
    const uint64_t b = (n + per_block - 1) / per_block;
    return b == 0 ? 1u : b > (1u << 20) ? (1u << 20) : (unsigned)b;
}

gt_status mc_bits(const Geo &g, uint64_t nrows, uint64_t nsegs, bool vec, uint32_t *bits, cudaStream_t s);
gt_status mc_count_table(const gt_mc_table *t);
gt_status mc_count(const Geo &g, const uint32_t *bits, uint64_t nwords, uint64_t *cntV, uint64_t *cntT,
                   cudaStream_t s);
gt_status mc_verts(const Geo &g, const uint32_t *bits, uint64_t nown, const uint64_t *offV, float *xyz, float *nrm,
                   cudaStream_t s);
gt_status mc_tris_table(const gt_mc_table *t);
gt_status mc_tris(const Geo &g, const uint32_t *bits, uint64_t nown, const uint64_t *offV, const uint64_t *offT,
                  uint64_t vbase, int32_t *tris, cudaStream_t s);

#endif
