// Stage 2 of the CUDA marching cubes (mc_stages.h): per word, its vertices
// (crossed x/y/z edges of its points: XORs of bit words of the row, the next
// column, the +y row and the +z plane, popcounts) and its triangles (table
// counts of its non-empty voxels, found as "some corner in and some out"
// bits, walked with ffs); packed as V | T << 32 when the slab is small.
//
// Launch shape: one thread per word, 256 a block (grid-stride): a word's
// work is a few bit operations on up to 16 loads of 32-bit words, so the
// kernel is bound by those loads, coalesced along the row; the triangle
// counts per case are copied to shared memory once per block.
#include <cstdint>

#include "kernels/common/cu_check.h"
#include "kernels/mc/mc_stages.h"

namespace {

__constant__ uint8_t c_ntri[256];

__global__ void __launch_bounds__(256) k_count(Geo g, const uint32_t *bits, uint64_t nwords, uint64_t *cntV, uint64_t *cntT)
{
    __shared__ uint8_t s_ntri[256];
    for (unsigned q = threadIdx.x; q < 256; q += blockDim.x) s_ntri[q] = c_ntri[q];
    __syncthreads();
    for (uint64_t x = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; x < nwords; x += (uint64_t)gridDim.x * blockDim.x) {
        unsigned nv, nt;
        gt_mcw_word_counts(bits, &g, x, s_ntri, &nv, &nt);
        if (g.packed) {
            cntV[x] = (uint64_t)nv | ((uint64_t)nt << 32);
        } else {
            cntV[x] = nv;
            cntT[x] = nt;
        }
    }
}

} // namespace

gt_status mc_count_table(const gt_mc_table *t)
{
    GT_CU(cudaMemcpyToSymbol(c_ntri, t->ntri, sizeof t->ntri));
    return GT_OK;
}

gt_status mc_count(const Geo &g, const uint32_t *bits, uint64_t nwords, uint64_t *cntV, uint64_t *cntT,
                   cudaStream_t s)
{
    k_count<<<mc_blocks_for(nwords, 256), 256, 0, s>>>(g, bits, nwords, cntV, cntT);
    GT_CU_LAUNCH("k_count");
    return GT_OK;
}
