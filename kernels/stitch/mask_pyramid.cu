// Multiband mask pyramids built on the device from the owner map already
// there: level 0 one-hot (owner == camera), each coarser level the reduce of
// the one above (gt_sk_reduce, camera i's output tiles that meet its nonzero
// box; outside that box every value is exactly 0, as the memset left it),
// then levels 1.. normalised over the cameras. The same operations in the
// same order as the CPU plan (lib/stitch/plan.c, mask_pyramids), hence the
// same bits, without moving the plan's pyramids over the bus (about 120 MB
// for four 1080p cameras into a 7040 x 1080 panorama, ~25 ms of a start).
#include <cuda_runtime.h>

#include "kernels/common/cu_check.h"
#include "kernels/stitch/stitch_cu.h"

namespace {

constexpr int BLOCK = 256;

__global__ void k_onehot(const uint8_t *__restrict__ owner, long long n, int ncam, float *__restrict__ m)
{
    long long j = (long long)blockIdx.x * BLOCK + threadIdx.x;
    if (j >= n) return;
    int o = owner[j];
    for (int i = 0; i < ncam; i++) m[n * i + j] = o == i ? 1.0f : 0.0f;
}

// the cameras' weights of one level over their sum, added in camera order
// (zeros add nothing, so the plan's sum over the boxes that hold the sample
// is this sum)
__global__ void k_normalise(float *__restrict__ m, long long n, int ncam)
{
    long long j = (long long)blockIdx.x * BLOCK + threadIdx.x;
    if (j >= n) return;
    float sum = 0.0f;
    for (int i = 0; i < ncam; i++) sum += m[n * i + j];
    for (int i = 0; i < ncam; i++) m[n * i + j] = sum > 0 ? m[n * i + j] / sum : 0.0f;
}

unsigned grid_of(long long n) { return (unsigned)((n + BLOCK - 1) / BLOCK); }

} // namespace

extern "C" gt_status gt_sk_mask_pyramid(const uint8_t *owner, int ncam, int levels, const int *lw, const int *lh,
                                        const size_t *off, const gt_sk_boxes *nonzero, float *m, void *stream)
{
    if (ncam > GT_SK_MAX_CAMS) return gt_fail(GT_ERR_USAGE, "mask pyramid: too many cameras");
    cudaStream_t s = (cudaStream_t)stream;
    long long n0 = (long long)lw[0] * lh[0];
    if (n0 > 0) {
        k_onehot<<<grid_of(n0), BLOCK, 0, s>>>(owner, n0, ncam, m + off[0] * ncam);
        GT_CU_LAUNCH("mask pyramid: level 0");
    }
    for (int k = 1; k < levels; k++)
        GT_TRY(gt_sk_reduce(m + off[k - 1] * ncam, lw[k - 1], lh[k - 1], m + off[k] * ncam, ncam, &nonzero[k],
                            stream));
    for (int k = 1; k < levels; k++) {
        long long nk = (long long)lw[k] * lh[k];
        if (nk == 0) continue;
        k_normalise<<<grid_of(nk), BLOCK, 0, s>>>(m + off[k] * ncam, nk, ncam);
        GT_CU_LAUNCH("mask pyramid: normalise");
    }
    return GT_OK;
}
