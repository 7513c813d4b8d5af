// The differentiable rasterizer on the GPU (lib/gs/gs_grad.h): gt_gs_diff.
//
// Forward: k_activate turns the raw parameters (log-scale, unnormalised
// quaternion, logit opacity) into the forward rasterizer's inputs (position
// + opacity, 3-D covariance), then the forward's own stages run
// (gt_gs_cu_render of gs_raster.cu: preprocess, duplicate, sort, ranges,
// blend) with the SH read from the caller's raw array and the blend also
// writing the planar image, the final transmittance and the last
// contributor per pixel. The per-Gaussian projection (xy, conic, opacity,
// colour) and the sorted tile lists stay in the context for the backward.
//
// Backward:
//  - k_blend_back: one 16x16 block per tile, one thread per pixel, the
//    tile's list replayed back to front from the last contributor (batches
//    of 256 Gaussians staged in shared memory as in the forward), the
//    per-pixel terms of gs_blend_grad (lib/gs/gs_math_grad.h). A warp walks
//    only the entries its two pixel rows can see, up to its own last
//    contributor (the forward's blend_warp_mask), so each warp sums
//    its 32 pixels' terms with shuffles and 9 lanes add the 9 sums
//    (2-D mean, conic, opacity, colour) with atomics: per (Gaussian, warp)
//    instead of the reference's per (Gaussian, pixel). Counted with the CPU
//    reference's forward (same contributors) at 1920x1080, view 0 of
//    scripts/bench/gsrender's orbit, scenes of scripts/gen-splats (SH 3,
//    seed 7): 1M Gaussians: 70.8M contributing (pixel, Gaussian) terms, so
//    637M atomics for the reference, and 4.80M (warp, Gaussian) pairs, 43M
//    atomics here (14.8x fewer); 6M Gaussians: 82.6M terms, 743M atomics,
//    against 8.78M pairs, 79M atomics (9.4x fewer). The shuffles cost
//    14 per (warp, Gaussian) pair (warp_sums_acc; 45 as 9 warp sums), and
//    none where a single pixel of the warp contributes: its lane adds its
//    own 9 terms (the same atomics, ~55 fewer instructions for the pair).
//  - k_gauss_back: one thread per Gaussian, gs_gauss_grad (the same code as
//    the CPU reference) from those sums to the raw parameters, added into
//    the caller's gradient arrays.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gs/gs_grad.h"
#include "gs/gs_math_grad.h"
#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/gs/gs_stages.cuh"

#define ACC 9 // per-Gaussian sums: mean x y, conic a b c, opacity, r g b

struct gt_gs_diff {
    gt_gs_cu *cu;
    size_t n, cap; // Gaussians, and how many the per-Gaussian buffers hold
    int sh_degree, sh_k, max_w, max_h;
    void *stream;
    float *T;       // per pixel: final transmittance
    uint32_t *last; // per pixel: list entries up to the last contributor
    float *acc;     // n * ACC
    // the last forward
    bool have_fwd;
    int w, h, gx, gy, sh_deg, antialias, ref;
    float mod, bg[3];
    gs_gcam gcam;
    gt_gs_raw raw; // device pointers
};

__global__ void k_activate(size_t n, const float *__restrict__ pos, const float *__restrict__ ls,
                           const float *__restrict__ rot, const float *__restrict__ logit, float mod,
                           float4 *__restrict__ pos_op, float *__restrict__ cov3)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float q[4], s[3], o, S[6];
        gs_activate(rot + 4 * i, ls + 3 * i, logit[i], q, s, &o);
        gs_cov3(q, s, mod, S);
        for (int k = 0; k < 6; k++) cov3[6 * i + k] = S[k];
        pos_op[i] = make_float4(pos[3 * i], pos[3 * i + 1], pos[3 * i + 2], o);
    }
}

__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// The warp's sums of the ACC per-pixel terms, 14 shuffles instead of 9 x 5:
// terms 0-7 reduced and scattered at once (each exchange halves the terms
// a lane keeps and doubles the lanes its sums cover: 4 + 2 + 1 shuffles,
// then 2 more within groups of 4 lanes), term 8 by a plain warp sum. Lane
// 4k ends with the sum of term k (k < 8), lane 1 with term 8's; *term is
// the lane's term, -1 for the lanes that hold none.
__device__ __forceinline__ float warp_sums_acc(const float v[ACC], int lane, int *term)
{
    const unsigned full = 0xffffffffu;
    const bool up16 = lane & 16, up8 = lane & 8, up4 = lane & 4;
    float a[4], b[2];
#pragma unroll
    for (int i = 0; i < 4; i++) // a[i]: term (up16 ? 4 : 0) + i over lanes {l, l ^ 16}
        a[i] = (up16 ? v[i + 4] : v[i]) + __shfl_xor_sync(full, up16 ? v[i] : v[i + 4], 16);
#pragma unroll
    for (int i = 0; i < 2; i++) // b[i]: term (up16 ? 4 : 0) + (up8 ? 2 : 0) + i
        b[i] = (up8 ? a[i + 2] : a[i]) + __shfl_xor_sync(full, up8 ? a[i] : a[i + 2], 8);
    float c = (up4 ? b[1] : b[0]) + __shfl_xor_sync(full, up4 ? b[0] : b[1], 4); // term (lane >> 2) & 7
    c += __shfl_xor_sync(full, c, 2);
    c += __shfl_xor_sync(full, c, 1);
    const float s8 = warp_sum(v[8]);
    *term = (lane & 3) == 0 ? lane >> 2 : lane == 1 ? 8 : -1;
    return lane == 1 ? s8 : c;
}

__global__ void __launch_bounds__(BLOCK) k_blend_back(int W, int H, int gx, const uint2 *__restrict__ ranges,
                                                      const uint32_t *__restrict__ vals,
                                                      const float2 *__restrict__ xy,
                                                      const float4 *__restrict__ conic_o,
                                                      const float4 *__restrict__ rgbd,
                                                      const float *__restrict__ T_fin,
                                                      const uint32_t *__restrict__ last_c,
                                                      const float *__restrict__ dl, float bg0, float bg1,
                                                      float bg2, int ref, float *__restrict__ acc)
{
    __shared__ uint32_t s_id[BLOCK];
    __shared__ float2 s_xy[BLOCK];
    __shared__ float4 s_co[BLOCK];
    __shared__ float4 s_cd[BLOCK];
    __shared__ uint8_t s_mask[BLOCK];
    __shared__ uint32_t s_max;
    const int tid = threadIdx.y * TILE + threadIdx.x;
    const int lane = tid & 31;
    const uint32_t warp_bit = 1u << (tid >> 5);
    const float tx0 = (float)(blockIdx.x * TILE), ty0 = (float)(blockIdx.y * TILE);
    const int px = blockIdx.x * TILE + threadIdx.x, py = blockIdx.y * TILE + threadIdx.y;
    const bool inside = px < W && py < H;
    const float pxf = (float)px, pyf = (float)py;
    const uint2 range = ranges[blockIdx.y * gx + blockIdx.x];
    const size_t np = (size_t)W * H, pix = (size_t)py * W + px;
    const float T_final = inside ? T_fin[pix] : 1.0f;
    const uint32_t last = inside ? last_c[pix] : 0;
    const float dpix[3] = {inside ? dl[pix] : 0.0f, inside ? dl[np + pix] : 0.0f, inside ? dl[2 * np + pix] : 0.0f};
    const float bg[3] = {bg0, bg1, bg2};
    gs_replay rp;
    gs_replay_init(&rp, T_final, dpix, bg);
    // the warp's last contributor: the entries after it reach none of its pixels
    uint32_t wlast = last;
    for (int o = 16; o > 0; o >>= 1) wlast = max(wlast, __shfl_xor_sync(0xffffffffu, wlast, o));
    if (tid == 0) s_max = 0;
    __syncthreads();
    if (last) atomicMax(&s_max, last);
    __syncthreads();
    const uint32_t end = range.x + s_max;
    for (uint32_t top = end; top > range.x; top -= min((uint32_t)BLOCK, top - range.x)) {
        const int cnt = (int)min((uint32_t)BLOCK, top - range.x);
        __syncthreads(); // the previous batch is consumed
        if (tid < cnt) {
            uint32_t id = vals[top - 1 - tid];
            const float2 g = xy[id];
            const float4 co = conic_o[id];
            s_id[tid] = id;
            s_xy[tid] = g;
            s_co[tid] = co;
            s_cd[tid] = rgbd[id];
            s_mask[tid] = (uint8_t)blend_warp_mask(g, co, tx0, ty0);
        }
        __syncthreads();
        // 32 entries at a time: one ballot gives the warp the entries its
        // rows can see up to its last contributor (the forward skipped the
        // others, blend_warp_mask), walked back to front
        for (int r0 = 0; r0 < cnt; r0 += 32) {
            const int jj = r0 + lane;
            const uint32_t rel_jj = top - 1 - (uint32_t)jj - range.x;
            uint32_t bits = __ballot_sync(0xffffffffu, jj < cnt && rel_jj < wlast && (s_mask[jj] & warp_bit));
            while (bits) {
                const int j = r0 + __ffs((int)bits) - 1;
                bits &= bits - 1u;
                const uint32_t rel = top - 1 - (uint32_t)j - range.x;
                float v[ACC] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
                bool contrib = false;
                if (rel < last) {
                    float2 g = s_xy[j];
                    float4 co = s_co[j];
                    float dx = g.x - pxf, dy = g.y - pyf;
                    float power = gs_power(co.x, co.y, co.z, dx, dy);
                    float G = power > 0.0f ? 0.0f : gs_exp(power), alpha = gs_alpha_of(co.w, G);
                    if (alpha >= GS_ALPHA_MIN) {
                        contrib = true;
                        float4 cd = s_cd[j];
                        const float rgb[3] = {cd.x, cd.y, cd.z};
                        float dl_dalpha = gs_replay_step(&rp, alpha, rgb, &v[6]);
                        gs_blend_grad(co.w, co.x, co.y, co.z, dx, dy, G, dl_dalpha, ref, &v[5], &v[0], &v[2]);
                    }
                }
                const unsigned who = __ballot_sync(0xffffffffu, contrib);
                if (who & (who - 1u)) {
                    // the 9 atomics of a (warp, Gaussian) go out as one instruction
                    int term;
                    const float sum = warp_sums_acc(v, lane, &term);
                    if (term >= 0) atomicAdd(acc + (size_t)s_id[j] * ACC + term, sum);
                } else if (contrib) {
                    // one pixel of the warp: its own 9 terms are the warp's
                    // sums (the reduction's 14 shuffles would add zeros)
                    float *a = acc + (size_t)s_id[j] * ACC;
#pragma unroll
                    for (int k = 0; k < ACC; k++) atomicAdd(a + k, v[k]);
                }
            }
        }
    }
}

__global__ void __launch_bounds__(256) k_gauss_back(size_t n, gs_gcam cam, float mod, int antialias, int ref, int deg,
                                                    int sh_k, const uint32_t *__restrict__ touched,
                                                    const float *__restrict__ acc, gt_gs_raw r, gt_gs_raw g,
                                                    float *__restrict__ grad2d, float *__restrict__ seen)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        if (touched[i] == 0) continue; // not in the image: no gradient
        const float *a = acc + i * ACC;
        float dmean[2] = {a[0], a[1]}, dconic[3] = {a[2], a[3], a[4]}, drgb[3] = {a[6], a[7], a[8]};
        if (grad2d) { // densification statistics, as the CPU reference's
            grad2d[i] += hypotf(dmean[0] * 0.5f * cam.w, dmean[1] * 0.5f * cam.h);
            seen[i] += 1.0f;
        }
        size_t shs = (size_t)sh_k * 3 * i;
        gs_gauss_grad(&cam, mod, antialias, ref, deg, r.pos + 3 * i, r.log_scale + 3 * i, r.rot + 4 * i,
                      r.logit_opacity[i], r.sh + shs, dmean, dconic, a[5], drgb, g.pos + 3 * i,
                      g.log_scale + 3 * i, g.rot + 4 * i, g.logit_opacity + i, g.sh + shs);
    }
}

// ----------------------------------------------------------------- host

static gt_status dalloc(void **p, size_t bytes, const char *what)
{
    return gt_cu_malloc(p, bytes ? bytes : 16, what);
}

extern "C" void gt_gs_diff_destroy(gt_gs_diff *d)
{
    if (!d) return;
    if (d->cu) gt_gs_cu_destroy(d->cu); // synchronises the stream
    void *bufs[] = {d->T, d->last, d->acc};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        if (bufs[k]) gt_cu_free(bufs[k]);
    free(d);
}

static gt_status create_impl(gt_gs_diff *d)
{
    gt_gs_cu *cu = (gt_gs_cu *)calloc(1, sizeof *cu);
    if (!cu) return gt_fail(GT_ERR_RUNTIME, "out of memory (GPU context)");
    d->cu = cu;
    cu->n = d->n;
    cu->sh_k = d->sh_k;
    cu->stream = d->stream;
    cu->stream_borrowed = true;
    cu->sort_all = 1; // training: no wait for the visible count
    gt_arena_init(&cu->arena);
    GT_TRY(gs_cu_alloc_scene(cu, d->cap, d->sh_k, false, false));
    size_t np = (size_t)d->max_w * d->max_h;
    GT_TRY(dalloc((void **)&d->T, np * sizeof(float), "final transmittance"));
    GT_TRY(dalloc((void **)&d->last, np * sizeof(uint32_t), "last contributors"));
    GT_TRY(dalloc((void **)&d->acc, d->cap * ACC * sizeof(float), "per-Gaussian gradient sums"));
    return GT_OK;
}

extern "C" gt_status gt_gs_diff_resize(gt_gs_diff *d, size_t n)
{
    if (n > 0xFFFFFFFFull) return gt_fail(GT_ERR_DATA, "too many Gaussians for the GPU path (%zu)", n);
    d->have_fwd = false;
    if (n > d->cap) { // a quarter more than asked, so that growth in steps reallocates seldom
        size_t cap = n + n / 4;
        if (cap > 0xFFFFFFFFull) cap = 0xFFFFFFFFull;
        cudaStreamSynchronize((cudaStream_t)d->stream);
        gs_cu_free_scene(d->cu);
        gt_cu_free(d->acc);
        d->acc = NULL;
        d->cap = 0;
        GT_TRY(gs_cu_alloc_scene(d->cu, cap, d->sh_k, false, false));
        GT_TRY(dalloc((void **)&d->acc, cap * ACC * sizeof(float), "per-Gaussian gradient sums"));
        d->cap = cap;
    }
    d->n = n;
    d->cu->n = n;
    return GT_OK;
}

extern "C" gt_status gt_gs_diff_create(size_t n, int sh_degree, int max_w, int max_h, void *stream,
                                       gt_gs_diff **out)
{
    *out = NULL;
    if (n > 0xFFFFFFFFull) return gt_fail(GT_ERR_DATA, "too many Gaussians for the GPU path (%zu)", n);
    if (sh_degree < 0 || sh_degree > 3) return gt_fail(GT_ERR_DATA, "SH degree %d not in 0..3", sh_degree);
    if (max_w < 1 || max_h < 1 || max_w > GT_GS_MAX_SIZE || max_h > GT_GS_MAX_SIZE)
        return gt_fail(GT_ERR_USAGE, "image size %dx%d not in 1..%d", max_w, max_h, GT_GS_MAX_SIZE);
    gt_gs_diff *d = (gt_gs_diff *)calloc(1, sizeof *d);
    if (!d) return gt_fail(GT_ERR_RUNTIME, "out of memory (GPU context)");
    d->n = d->cap = n;
    d->sh_degree = sh_degree;
    d->sh_k = (sh_degree + 1) * (sh_degree + 1);
    d->max_w = max_w;
    d->max_h = max_h;
    d->stream = stream;
    gt_status s = create_impl(d);
    if (s != GT_OK) {
        gt_gs_diff_destroy(d);
        return s;
    }
    *out = d;
    return GT_OK;
}

extern "C" gt_status gt_gs_diff_forward(gt_gs_diff *d, const gt_gs_raw *r, int sh_deg, const gt_gs_camera *c,
                                        const gt_gs_params *p, float *dev_rgb)
{
    d->have_fwd = false;
    if (r->n != d->n || r->sh_k != d->sh_k)
        return gt_fail(GT_ERR_RUNTIME, "scene of %zu Gaussians (SH degree %d) given to a workspace for %zu (%d)",
                       r->n, r->sh_degree, d->n, d->sh_degree);
    if (sh_deg < 0 || sh_deg > d->sh_degree)
        return gt_fail(GT_ERR_RUNTIME, "SH degree %d not in 0..%d", sh_deg, d->sh_degree);
    if (c->width > d->max_w || c->height > d->max_h || c->width < 1 || c->height < 1)
        return gt_fail(GT_ERR_RUNTIME, "view %dx%d larger than the workspace's %dx%d", c->width, c->height,
                       d->max_w, d->max_h);
    gt_gs_cu *cu = d->cu;
    cudaStream_t st = (cudaStream_t)d->stream;
    if (d->n) {
        k_activate<<<gt_grid(d->n, 256), 256, 0, st>>>(d->n, r->pos, r->log_scale, r->rot, r->logit_opacity,
                                                         p->scale_modifier, cu->pos_op, cu->cov3);
        GT_CU_LAUNCH("k_activate");
    }
    cu->sh = r->sh;
    cu->antialias = p->antialias ? 1 : 0;
    cu->exact = p->square_binning ? 0 : 1;
    cu->state_rgb = dev_rgb;
    cu->state_T = d->T;
    cu->state_last = d->last;
    size_t pairs;
    GT_TRY(gt_gs_cu_render(cu, c, sh_deg, p->bg, NULL, NULL, NULL, NULL, NULL, &pairs));
    d->w = c->width;
    d->h = c->height;
    d->gx = (c->width + TILE - 1) / TILE;
    d->gy = (c->height + TILE - 1) / TILE;
    d->sh_deg = sh_deg;
    d->antialias = cu->antialias;
    d->ref = p->ref_grad ? 1 : 0;
    d->mod = p->scale_modifier;
    memcpy(d->bg, p->bg, sizeof d->bg);
    d->gcam = gs_gcam_of(c);
    d->raw = *r;
    d->have_fwd = true;
    return GT_OK;
}

extern "C" gt_status gt_gs_diff_backward(gt_gs_diff *d, const float *dev_dl_drgb, gt_gs_raw *g,
                                         gt_gs_grad_stats *stats)
{
    if (!d->have_fwd) return gt_fail(GT_ERR_RUNTIME, "gt_gs_diff_backward without a forward");
    if (g->n != d->n || g->sh_k != d->sh_k)
        return gt_fail(GT_ERR_RUNTIME, "gradient arrays (%zu Gaussians, %d SH) do not match the scene's (%zu, %d)",
                       g->n, g->sh_k, d->n, d->sh_k);
    if (d->n == 0) return GT_OK;
    gt_gs_cu *cu = d->cu;
    cudaStream_t st = (cudaStream_t)d->stream;
    GT_CU(cudaMemsetAsync(d->acc, 0, d->n * ACC * sizeof(float), st));
    dim3 grid((unsigned)d->gx, (unsigned)d->gy), block(TILE, TILE);
    k_blend_back<<<grid, block, 0, st>>>(d->w, d->h, d->gx, cu->ranges, cu->vals_out, cu->xy, cu->conic_o, cu->rgbd,
                                         d->T, d->last, dev_dl_drgb, d->bg[0], d->bg[1], d->bg[2], d->ref,
                                         d->acc);
    GT_CU_LAUNCH("k_blend_back");
    k_gauss_back<<<gt_grid(d->n, 256), 256, 0, st>>>(d->n, d->gcam, d->mod, d->antialias, d->ref, d->sh_deg, d->sh_k,
                                                       cu->touched, d->acc, d->raw, *g,
                                                       stats ? stats->grad2d : NULL, stats ? stats->seen : NULL);
    GT_CU_LAUNCH("k_gauss_back");
    return GT_OK;
}

extern "C" size_t gt_gs_diff_bytes(const gt_gs_diff *d)
{
    if (!d) return 0;
    const gt_gs_cu *cu = d->cu;
    size_t m = d->cap ? d->cap : 1, np = (size_t)d->max_w * d->max_h;
    size_t b = m * (sizeof(float4) + 6 * sizeof(float) + sizeof(float2) + 3 * sizeof(float4) + sizeof(ushort4) +
                    2 * sizeof(uint32_t) + ACC * sizeof(float));
    b += np * (sizeof(float) + sizeof(uint32_t));
    b += cu->pair_cap * 2 * (sizeof(uint64_t) + sizeof(uint32_t));
    b += cu->tile_cap * sizeof(uint2) + cu->pix_cap * (5 * sizeof(float) + sizeof(uchar4));
    return b;
}
