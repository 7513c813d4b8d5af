// Perspective warp + direct/feather blending (planar and packed 4:2:2), and
// the float warp feeding multi-band blending. The per-sample arithmetic
// (homography or ray mapping, bilinear sample, gain, quantisation) is
// stitch/stitch_math.h and stitch/stitch_proj.h, shared with the CPU
// reference (lib/stitch/stitch.c). Rigs stitched through rays (cylindrical,
// spherical, distorted lenses) compute the mapping in the kernel from the
// plane's per-row and per-column tables (a few fused multiply-adds and two
// divisions a sample) rather than reading a per-sample map.
//
// Launch shapes: one thread per output sample in 32 x 8 blocks (a warp
// spans 32 consecutive samples of a row: coalesced stores, and neighbouring
// threads read neighbouring source pixels, which the homography keeps
// close); the packed 4:2:2 kernel takes one 4-byte macro-pixel (2 luma, 1 U,
// 1 V) per thread in 64 x 4 blocks so that each thread stores one aligned
// uchar4; the float warp adds the camera as grid z.
#include <cuda_runtime.h>

#include "kernels/common/cu_check.h"
#include "kernels/stitch/stitch_cu.h"
#include "stitch/stitch_math.h"

namespace {

// Camera i's sample at output sample (x, y): through its homography, or
// (RAY) through the plane's ray tables and its camera parameters; the
// homography instantiations are the kernels as they were before rays.
template <bool RAY>
__device__ __forceinline__ float sample(const gt_sk_plane &pl, const uint8_t *in, int i, int x, int y)
{
    const uint8_t *base = in + (long long)i * pl.in_bytes + pl.in.off;
    if (RAY)
        return gt_sm_sample_ray(pl.cam + GT_SP_N * i, pl.tab, pl.out.w, pl.out.h, base, pl.in.pitch, pl.in.step,
                                pl.in.w, pl.in.h, pl.gain + i, pl.bias + i, x, y);
    return gt_sm_sample(pl.P[i], base, pl.in.pitch, pl.in.step, pl.in.w, pl.in.h, pl.gain + i, pl.bias + i, (float)x,
                        (float)y);
}

// one output sample of plane pl at (x, y), index j in the plane's owner/weight maps
template <bool RAY>
__device__ __forceinline__ uint8_t blend_one(const gt_sk_plane &pl, const uint8_t *in, const uint8_t *owner,
                                             const float *weight, int x, int y)
{
    long long j = (long long)y * pl.out.w + x;
    if (!weight) {
        int i = owner[j];
        return i == 255 ? (uint8_t)pl.black : gt_sm_quant(sample<RAY>(pl, in, i, x, y));
    }
    long long n = (long long)pl.out.w * pl.out.h;
    float acc = 0.0f;
    int any = 0;
    for (int i = 0; i < pl.ncam; i++) {
        float w = weight[n * i + j];
        if (w > 0.0f) {
            acc = fmaf(w, sample<RAY>(pl, in, i, x, y), acc);
            any = 1;
        }
    }
    return any ? gt_sm_quant(acc) : (uint8_t)pl.black;
}

template <bool RAY>
__global__ void k_warp_blend_plane(const gt_sk_plane pl, const uint8_t *__restrict__ in,
                                   const uint8_t *__restrict__ owner, const float *__restrict__ weight,
                                   uint8_t *__restrict__ out)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= pl.out.w || y >= pl.out.h) return;
    out[pl.out.off + (long long)y * pl.out.pitch + (long long)x * pl.out.step] =
        blend_one<RAY>(pl, in, owner, weight, x, y);
}

struct packed_args {
    gt_sk_plane pl[3];
    const uint8_t *owner[3];
    const float *weight[3];
};

// one thread per macro-pixel (2 luma + 1 U + 1 V): 4-byte coalesced store
template <bool RAY>
__global__ void k_warp_blend_packed(const packed_args a, int uyvy, const uint8_t *__restrict__ in,
                                    uint8_t *__restrict__ out)
{
    int mx = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (mx >= a.pl[1].out.w || y >= a.pl[1].out.h) return;
    uint8_t y0 = blend_one<RAY>(a.pl[0], in, a.owner[0], a.weight[0], 2 * mx, y);
    uint8_t y1 = blend_one<RAY>(a.pl[0], in, a.owner[0], a.weight[0], 2 * mx + 1, y);
    uint8_t u = blend_one<RAY>(a.pl[1], in, a.owner[1], a.weight[1], mx, y);
    uint8_t v = blend_one<RAY>(a.pl[2], in, a.owner[2], a.weight[2], mx, y);
    uchar4 q = uyvy ? make_uchar4(u, y0, v, y1) : make_uchar4(y0, u, y1, v);
    reinterpret_cast<uchar4 *>(out + (long long)y * a.pl[0].out.pitch)[mx] = q;
}

template <bool RAY>
__global__ void k_warp_float(const gt_sk_plane pl, const uint8_t *__restrict__ in, const gt_sk_boxes box,
                             float *__restrict__ dst)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    int i = blockIdx.z;
    // blocks whose tile misses camera i's box leave dst untouched (no barriers here)
    int X0 = blockIdx.x * blockDim.x, Y0 = blockIdx.y * blockDim.y;
    if (X0 > box.x1[i] || X0 + (int)blockDim.x - 1 < box.x0[i] || Y0 > box.y1[i] ||
        Y0 + (int)blockDim.y - 1 < box.y0[i])
        return;
    if (x >= pl.out.w || y >= pl.out.h) return;
    long long n = (long long)pl.out.w * pl.out.h;
    dst[n * i + (long long)y * pl.out.w + x] = sample<RAY>(pl, in, i, x, y);
}

} // namespace

extern "C" gt_status gt_sk_warp_blend_plane(const gt_sk_plane *pl, const uint8_t *in, const uint8_t *owner,
                                            const float *weight, uint8_t *out, void *stream)
{
    dim3 b(32, 8), g((pl->out.w + 31) / 32, (pl->out.h + 7) / 8);
    if (pl->ray) k_warp_blend_plane<true><<<g, b, 0, (cudaStream_t)stream>>>(*pl, in, owner, weight, out);
    else k_warp_blend_plane<false><<<g, b, 0, (cudaStream_t)stream>>>(*pl, in, owner, weight, out);
    GT_CU_LAUNCH("warp_blend_plane");
    return GT_OK;
}

extern "C" gt_status gt_sk_warp_blend_packed(const gt_sk_plane pl[3], int uyvy, const uint8_t *in,
                                             const uint8_t *const owner[3], const float *const weight[3],
                                             uint8_t *out, void *stream)
{
    packed_args a;
    for (int p = 0; p < 3; p++) {
        a.pl[p] = pl[p];
        a.owner[p] = owner[p];
        a.weight[p] = weight[p];
    }
    dim3 b(64, 4), g((pl[1].out.w + 63) / 64, (pl[1].out.h + 3) / 4);
    if (pl[0].ray) k_warp_blend_packed<true><<<g, b, 0, (cudaStream_t)stream>>>(a, uyvy, in, out);
    else k_warp_blend_packed<false><<<g, b, 0, (cudaStream_t)stream>>>(a, uyvy, in, out);
    GT_CU_LAUNCH("warp_blend_packed");
    return GT_OK;
}

extern "C" gt_status gt_sk_warp_float(const gt_sk_plane *pl, const uint8_t *in, const gt_sk_boxes *boxes,
                                      float *dst, void *stream)
{
    gt_sk_boxes all;
    if (!boxes) {
        for (int i = 0; i < GT_SK_MAX_CAMS; i++) {
            all.x0[i] = all.y0[i] = 0;
            all.x1[i] = all.y1[i] = 1 << 30;
        }
        boxes = &all;
    }
    dim3 b(32, 8), g((pl->out.w + 31) / 32, (pl->out.h + 7) / 8, pl->ncam);
    if (pl->ray) k_warp_float<true><<<g, b, 0, (cudaStream_t)stream>>>(*pl, in, *boxes, dst);
    else k_warp_float<false><<<g, b, 0, (cudaStream_t)stream>>>(*pl, in, *boxes, dst);
    GT_CU_LAUNCH("warp_float");
    return GT_OK;
}
