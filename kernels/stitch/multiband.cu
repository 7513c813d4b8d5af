// Burt-Adelson multi-band blending: separable [1 4 6 4 1]/16 reduce and
// expand (rows, then columns, through shared memory), per-level blend of the
// Laplacian levels with normalised mask-pyramid weights, collapse, store.
// Same operation order as the CPU reference (lib/stitch/stitch.c).
#include <cuda_runtime.h>

#include "kernels/common/cu_check.h"
#include "kernels/stitch/stitch_cu.h"
#include "stitch/stitch_math.h"

namespace {

constexpr int TX = 32, TY = 8;

// Does the tile [X0, X0+TX) x [Y0, Y0+TY) meet box i? Block-uniform: every
// thread of a block gets the same answer, so skipping on it keeps the
// barriers reached by all threads.
__device__ __forceinline__ bool tile_meets(const gt_sk_boxes &b, int i, int X0, int Y0)
{
    return X0 <= b.x1[i] && X0 + TX - 1 >= b.x0[i] && Y0 <= b.y1[i] && Y0 + TY - 1 >= b.y0[i];
}
// reduce: input tile (2*TX+4) x (2*TY+4)
constexpr int RIX = 2 * TX + 4, RIY = 2 * TY + 4;

__global__ void k_reduce(const float *__restrict__ src, int w, int h, float *__restrict__ dst, const gt_sk_boxes box)
{
    __shared__ float in[RIY][RIX];
    __shared__ float hr[RIY][TX];
    int ow = (w + 1) / 2, oh = (h + 1) / 2;
    const float *s = src + (long long)blockIdx.z * w * h;
    float *d = dst + (long long)blockIdx.z * ow * oh;
    int X0 = blockIdx.x * TX, Y0 = blockIdx.y * TY;
    if (!tile_meets(box, blockIdx.z, X0, Y0)) return; // whole block, before any barrier
    int tid = threadIdx.y * TX + threadIdx.x;
    int gx0 = 2 * X0 - 2, gy0 = 2 * Y0 - 2;
    for (int k = tid; k < RIX * RIY; k += TX * TY) {
        int ly = k / RIX, lx = k % RIX;
        int gy = gt_sm_reflect(gy0 + ly, h), gx = gt_sm_reflect(gx0 + lx, w);
        in[ly][lx] = s[(long long)gy * w + gx];
    }
    __syncthreads();
    // rows: output column X0+tx, every loaded row
    for (int ly = threadIdx.y; ly < RIY; ly += TY) {
        int c = 2 * threadIdx.x + 2;
        hr[ly][threadIdx.x] = gt_sm_reduce5(in[ly][c - 2], in[ly][c - 1], in[ly][c], in[ly][c + 1], in[ly][c + 2]);
    }
    __syncthreads();
    int x = X0 + threadIdx.x, y = Y0 + threadIdx.y;
    if (x >= ow || y >= oh) return;
    int r = 2 * threadIdx.y + 2;
    d[(long long)y * ow + x] =
        gt_sm_reduce5(hr[r - 2][threadIdx.x], hr[r - 1][threadIdx.x], hr[r][threadIdx.x], hr[r + 1][threadIdx.x],
                      hr[r + 2][threadIdx.x]);
}

// expand: coarse tile (TX/2+2) x (TY/2+2) around the block's fine tile
constexpr int ECX = TX / 2 + 2, ECY = TY / 2 + 2;

// Expanded value of coarse image c (cw x ch) at the thread's fine pixel; all
// threads of the block must call it (barriers inside).
__device__ float expand_tile(const float *__restrict__ c, int cw, int ch, float (*cin)[ECX], float (*hx)[TX])
{
    int X0 = blockIdx.x * TX, Y0 = blockIdx.y * TY;
    int cx0 = X0 / 2 - 1, cy0 = Y0 / 2 - 1;
    int tid = threadIdx.y * TX + threadIdx.x;
    __syncthreads(); // previous use of the shared tiles is over
    for (int k = tid; k < ECX * ECY; k += TX * TY) {
        int ly = k / ECX, lx = k % ECX;
        cin[ly][lx] = c[(long long)gt_sm_reflect(cy0 + ly, ch) * cw + gt_sm_reflect(cx0 + lx, cw)];
    }
    __syncthreads();
    // rows: fine column X0+tx for each loaded coarse row
    {
        int x = X0 + threadIdx.x;
        int k = (x >> 1) - cx0; // local index of coarse column x>>1
        for (int ly = threadIdx.y; ly < ECY; ly += TY)
            hx[ly][threadIdx.x] = (x & 1) ? gt_sm_expand_odd(cin[ly][k], cin[ly][k + 1])
                                          : gt_sm_expand_even(cin[ly][k - 1], cin[ly][k], cin[ly][k + 1]);
    }
    __syncthreads();
    int y = Y0 + threadIdx.y;
    int k = (y >> 1) - cy0;
    return (y & 1) ? gt_sm_expand_odd(hx[k][threadIdx.x], hx[k + 1][threadIdx.x])
                   : gt_sm_expand_even(hx[k - 1][threadIdx.x], hx[k][threadIdx.x], hx[k + 1][threadIdx.x]);
}

__global__ void k_level(const float *__restrict__ fine_g, const float *__restrict__ coarse,
                        const float *__restrict__ weights, int ncam, float *__restrict__ dst, int w, int h, int cw,
                        int ch, const gt_sk_boxes box)
{
    __shared__ float cin[ECY][ECX];
    __shared__ float hx[ECY][TX];
    int x = blockIdx.x * TX + threadIdx.x, y = blockIdx.y * TY + threadIdx.y;
    bool in = x < w && y < h;
    long long j = (long long)y * w + x, n = (long long)w * h, nc = (long long)cw * ch;
    if (!fine_g) { // collapse: dst += expand(coarse)
        float e = expand_tile(coarse, cw, ch, cin, hx);
        if (in) dst[j] = dst[j] + e;
        return;
    }
    float acc = 0.0f;
    for (int i = 0; i < ncam; i++) {
        // weight i is 0 on the whole tile: the term is fmaf(0, finite, acc) == acc
        if (!tile_meets(box, i, blockIdx.x * TX, blockIdx.y * TY)) continue;
        if (coarse) {
            float e = expand_tile(coarse + nc * i, cw, ch, cin, hx);
            if (in) acc = fmaf(weights[n * i + j], fine_g[n * i + j] - e, acc);
        } else if (in) {
            acc = fmaf(weights[n * i + j], fine_g[n * i + j], acc);
        }
    }
    if (in) dst[j] = acc;
}

__global__ void k_store(const gt_sk_plane pl, const float *__restrict__ src, const uint8_t *__restrict__ owner,
                        uint8_t *__restrict__ out)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= pl.out.w || y >= pl.out.h) return;
    long long j = (long long)y * pl.out.w + x;
    out[pl.out.off + (long long)y * pl.out.pitch + (long long)x * pl.out.step] =
        owner[j] == 255 ? (uint8_t)pl.black : gt_sm_quant(src[j]);
}

gt_sk_boxes boxes_or_all(const gt_sk_boxes *b)
{
    if (b) return *b;
    gt_sk_boxes a;
    for (int i = 0; i < GT_SK_MAX_CAMS; i++) {
        a.x0[i] = a.y0[i] = 0;
        a.x1[i] = a.y1[i] = 1 << 30;
    }
    return a;
}

} // namespace

extern "C" gt_status gt_sk_reduce(const float *src, int w, int h, float *dst, int count, const gt_sk_boxes *boxes,
                                  void *stream)
{
    if (count > GT_SK_MAX_CAMS) return gt_fail(GT_ERR_USAGE, "reduce: too many images");
    int ow = (w + 1) / 2, oh = (h + 1) / 2;
    dim3 b(TX, TY), g((ow + TX - 1) / TX, (oh + TY - 1) / TY, count);
    k_reduce<<<g, b, 0, (cudaStream_t)stream>>>(src, w, h, dst, boxes_or_all(boxes));
    GT_CU_LAUNCH("reduce");
    return GT_OK;
}

extern "C" gt_status gt_sk_level(const float *fine_g, const float *coarse, const float *weights, int ncam, float *dst,
                                 int w, int h, int cw, int ch, const gt_sk_boxes *boxes, void *stream)
{
    if (ncam > GT_SK_MAX_CAMS) return gt_fail(GT_ERR_USAGE, "level: too many cameras");
    dim3 b(TX, TY), g((w + TX - 1) / TX, (h + TY - 1) / TY);
    k_level<<<g, b, 0, (cudaStream_t)stream>>>(fine_g, coarse, weights, ncam, dst, w, h, cw, ch,
                                               boxes_or_all(boxes));
    GT_CU_LAUNCH("level");
    return GT_OK;
}

extern "C" gt_status gt_sk_store(const gt_sk_plane *pl, const float *src, const uint8_t *owner, uint8_t *out,
                                 void *stream)
{
    dim3 b(32, 8), g((pl->out.w + 31) / 32, (pl->out.h + 7) / 8);
    k_store<<<g, b, 0, (cudaStream_t)stream>>>(*pl, src, owner, out);
    GT_CU_LAUNCH("store");
    return GT_OK;
}
