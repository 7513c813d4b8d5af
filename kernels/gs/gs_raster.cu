// 3D Gaussian Splatting forward rasterizer: preprocess, duplicate with
// (tile, depth) keys, CUB radix sort, tile ranges, per-tile blend, and the
// host side that runs these stages per frame on one stream (gt_gs_cu).
//
// The per-Gaussian and per-pixel math (covariances, EWA projection, conic,
// SH, alpha) is lib/gs/gs_math.h, the same functions the CPU oracle in
// lib/gs/gs_core.c calls; this file only spreads that work over threads,
// with two savings over the reference (diff-gaussian-rasterization):
//  - tile binning by the exact overlap of each tile with the ellipse where
//    alpha >= 1/255 (lib/gs/gs_cull.h, intersected with the reference's
//    bounding square), so a Gaussian is only duplicated into tiles where it
//    can change a pixel;
//  - two sorts instead of the reference's one on 64-bit (tile, depth) keys:
//    the Gaussians by depth (32-bit keys, one entry per Gaussian), then the
//    pairs, written in that order, stably by tile id alone (ceil(log2
//    tiles) bits): the same front-to-back lists for far fewer bytes;
//  - colour and depth travel with position/conic into shared memory (one
//    gather per Gaussian per batch, no per-pixel global loads), and each
//    warp skips the Gaussians its pixel rows cannot see (blend_warp_mask);
//  - the SH coefficients, most of a scene's bytes, as halves by default
//    (gt_gs_cu_create's sh_half; colours within ~2e-4 of the floats' in the
//    tests), and k_preprocess writes a Gaussian's geometry before its SH
//    arrive, so that the 48 coefficients do not share the registers with
//    it (90 -> 75 registers, 2 -> 3 blocks per SM: 0.67 -> 0.47 ms at 6M on
//    the H100 with halves, 0.62 with floats).
//
// Launch shapes:
//  - per-Gaussian stages (k_cov3, k_pack_pos, k_preprocess, k_duplicate) and
//    k_ranges (per pair): 1-D grid-stride loops of 256 threads; the work per
//    item is independent and the loops let a capped grid cover any count
//    (k_duplicate, gs_duplicate.cuh, hands a Gaussian of many tiles to its
//    whole warp).
//  - k_blend: one 16x16 block per 16x16 tile, one thread per pixel, because
//    all pixels of a tile walk the same depth-sorted list: the block stages
//    256 Gaussians at a time in shared memory and stops when every pixel is
//    saturated (__syncthreads_count).
// One file (~690 lines, over the project's ~600): the stages share the
// context struct, and gt_gs_cu_render launches the file-local kernels and
// the k_blend<AUX> template of this translation unit back to back on one
// stream; moving the host half out would need every kernel and both blend
// instantiations declared across files. The differentiable renderer
// (gs_backward.cu) reuses these stages through gt_gs_cu_render.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/cu_check.h"
#include "kernels/common/cu_prim.h"
#include "common/gpu_runtime.h"
#include "kernels/gs/gs_cuda.h"
#include "kernels/gs/gs_duplicate.cuh"
#include "kernels/gs/gs_stages.cuh"
#include "common/half.h"
#include "common/staged_copy.h"
#include "gs/gs_cull.h"
#include "gs/gs_math.h"

static gt_status dev_alloc(void **p, size_t bytes, const char *what)
{
    return gt_cu_malloc(p, bytes ? bytes : 16, what);
}

// ----------------------------------------------------------------- kernels

__global__ void k_cov3(size_t n, const float *__restrict__ scale, const float *__restrict__ rot,
                       float mod, float *__restrict__ cov3)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float S[6];
        gs_cov3(rot + 4 * i, scale + 3 * i, mod, S);
        for (int k = 0; k < 6; k++) cov3[6 * i + k] = S[k];
    }
}

__global__ void k_pack_pos(size_t n, const float *__restrict__ pos, const float *__restrict__ op,
                           float4 *__restrict__ out)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        out[i] = make_float4(pos[3 * i], pos[3 * i + 1], pos[3 * i + 2], op[i]);
}

// The SH coefficients of one Gaussian (sh_k of them, 3 colours each) kept as
// IEEE halves, as floats in shl[0..3 (deg+1)^2). vec: sh_k is 16 and the
// rows (96 bytes) 16-byte aligned: the halves the degree needs in uint4
// loads of 8 (6 at degree 3, half the bytes of the float rows).
__device__ __forceinline__ void sh_from_half(const uint16_t *__restrict__ hi, int deg, int vec, float shl[48])
{
    if (vec) {
        const uint4 *h4 = reinterpret_cast<const uint4 *>(hi);
        const int nq = deg >= 3 ? 6 : deg == 2 ? 4 : deg == 1 ? 2 : 1;
#pragma unroll
        for (int q = 0; q < 6; q++) {
            const uint4 v = q < nq ? __ldg(h4 + q) : make_uint4(0u, 0u, 0u, 0u);
            const unsigned int w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const float2 f = __half22float2(*reinterpret_cast<const __half2 *>(&w[k]));
                shl[8 * q + 2 * k] = f.x; // the lower address is the low half
                shl[8 * q + 2 * k + 1] = f.y;
            }
        }
        return;
    }
    const int nc = 3 * (deg + 1) * (deg + 1); // <= 3 sh_k
#pragma unroll
    for (int k = 0; k < 48; k++) // constant indices: shl stays in registers
        shl[k] = k < nc ? __half2float(__ushort_as_half(hi[k])) : 0.0f;
}

__global__ void __launch_bounds__(256) k_preprocess(size_t n, int sh_k, int deg, int sh_vec4, int antialias,
                                                    int exact, Cam cam,
                                                    const float4 *__restrict__ pos_op,
                                                    const float *__restrict__ cov3,
                                                    const float *__restrict__ shs,
                                                    const uint16_t *__restrict__ sh16,
                                                    float2 *__restrict__ xy_out,
                                                    float4 *__restrict__ conic_out,
                                                    float4 *__restrict__ rgbd_out,
                                                    GsDupRec *__restrict__ dup_out,
                                                    uint32_t *__restrict__ touched,
                                                    uint8_t *__restrict__ visible,
                                                    uint32_t *__restrict__ zkey)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        touched[i] = 0;
        visible[i] = 0;
        float4 po = pos_op[i];
        float v[3];
        gs_view(cam.R, cam.t, po.x, po.y, po.z, v);
        const float tz = v[2];
        if (!(tz > GS_NEAR)) continue;
        float cov[3], det0;
        float txtz = v[0] / tz, tytz = v[1] / tz;
        // the 3-D covariance (24 bytes, 8-byte aligned) in three float2 loads
        float c3[6];
        const float2 *c2 = reinterpret_cast<const float2 *>(cov3 + 6 * i);
#pragma unroll
        for (int q = 0; q < 3; q++) {
            const float2 v2 = __ldg(c2 + q);
            c3[2 * q] = v2.x;
            c3[2 * q + 1] = v2.y;
        }
        gs_cov2(cam.R, cam.fx, cam.fy, cam.lim, txtz, tytz, tz, c3, cov);
        float det = gs_filter(cov, &det0);
        if (det == 0.0f) continue;
        float opac = po.w;
        if (antialias) opac *= gs_aa_scale(det0, det);
        // alpha >= 1/255 needs power >= -ln(255 o) (gs_cull.h)
        float tau2 = gs_cull_tau2(opac);
        if (exact && (!(tau2 > 0.0f) || !(det > 0.0f))) continue; // cannot reach alpha 1/255 anywhere
        float conic[3];
        gs_conic(cov[0], cov[1], cov[2], det, conic);
        float radius = gs_radius(cov[0], cov[2], det);
        float px = gs_pixel(cam.fx, txtz, cam.cxp);
        float py = gs_pixel(cam.fy, tytz, cam.cyp);
        int rc[4];
        if (gs_tile_rect(px, py, radius, cam.gx, cam.gy, rc) == 0) continue;
        int x0 = rc[0], y0 = rc[1], x1 = rc[2], y1 = rc[3];
        uint32_t cnt = 0;
        if (exact) {
            for (int r = y0; r < y1; r++) {
                int lo, hi;
                gs_row_span(px, py, cov[0], cov[1], cov[2], det, tau2, r, x0, x1, &lo, &hi);
                cnt += (uint32_t)(hi - lo);
            }
        } else {
            cnt = (uint32_t)((x1 - x0) * (y1 - y0)); // the reference's bounding square
        }
        if (cnt == 0) continue;

        // the geometry first: its registers are free before the SH's 48 arrive
        xy_out[i] = make_float2(px, py);
        conic_out[i] = make_float4(conic[0], conic[1], conic[2], opac);
        GsDupRec rec;
        rec.xy = make_float2(px, py);
        rec.a = cov[0];
        rec.b = cov[1];
        rec.c = cov[2];
        rec.tau2 = tau2;
        rec.rect = make_ushort4((unsigned short)x0, (unsigned short)y0, (unsigned short)x1, (unsigned short)y1);
        dup_out[i] = rec;
        touched[i] = cnt;
        visible[i] = 1;
        zkey[i] = __float_as_uint(tz); // the depth sort's key (k_depth_keys)

        // colour from SH, direction camera -> mean
        float d[3], col[3];
        gs_view_dir(po.x - cam.campos[0], po.y - cam.campos[1], po.z - cam.campos[2], d);
        if (sh16) {
            float shl[48];
            sh_from_half(sh16 + i * (size_t)sh_k * 3, deg, sh_vec4, shl);
            gs_sh_eval(deg, shl, d[0], d[1], d[2], col);
        } else if (sh_vec4) {
            const float *shi = shs + i * (size_t)sh_k * 3;
            // 16 coefficients (192 bytes, 16-byte aligned): the ones the
            // degree needs in float4 loads, a quarter of the load requests of
            // 48 scalar ones strided by 192 bytes across the warp
            float shl[48];
            const float4 *s4 = reinterpret_cast<const float4 *>(shi);
            const int nf4 = deg >= 3 ? 12 : deg == 2 ? 7 : deg == 1 ? 3 : 1;
#pragma unroll
            for (int q = 0; q < 12; q++) {
                float4 v = q < nf4 ? __ldg(s4 + q) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                shl[4 * q] = v.x;
                shl[4 * q + 1] = v.y;
                shl[4 * q + 2] = v.z;
                shl[4 * q + 3] = v.w;
            }
            gs_sh_eval(deg, shl, d[0], d[1], d[2], col);
        } else {
            gs_sh_eval(deg, shs + i * (size_t)sh_k * 3, d[0], d[1], d[2], col);
        }
        rgbd_out[i] = make_float4(col[0], col[1], col[2], tz);
    }
}


// Depth keys for the first sort, over the visible Gaussians idx[0..m) (in
// index order): the view depth's float bits (positive, beyond GS_NEAR, so
// they order as the depths do, sign bit 0), as k_preprocess left them in
// zkey (4 bytes a Gaussian where rgbd's .w would fetch a 32-byte sector).
__global__ void k_depth_keys(size_t m, const uint32_t *__restrict__ zkey, const uint32_t *__restrict__ idx,
                             uint32_t *__restrict__ keys)
{
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < m;
         k += (size_t)gridDim.x * blockDim.x)
        keys[k] = zkey[idx[k]];
}

// Depth keys over every Gaussian, the ones that reach no tile last (31-bit
// keys: 0x7FFFFFFF is above every positive float's bits), and the identity
// order: the depth sort without the compaction, whose count the host would
// have to wait for.
__global__ void k_depth_keys_all(size_t n, const uint32_t *__restrict__ zkey, const uint8_t *__restrict__ visible,
                                 uint32_t *__restrict__ keys, uint32_t *__restrict__ idx)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        keys[i] = visible[i] ? zkey[i] : 0x7FFFFFFFu;
        idx[i] = (uint32_t)i;
    }
}

// ranges[tile] = [first, last+1) of the tile's pairs in the sorted keys.
__global__ void k_ranges(size_t m, uint32_t ntiles, const uint32_t *__restrict__ keys,
                         uint2 *__restrict__ ranges)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < m;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t t = keys[i];
        if (t >= ntiles) continue;
        if (i == 0 || keys[i - 1] != t) ranges[t].x = (uint32_t)i;
        if (i == m - 1 || keys[i + 1] != t) ranges[t].y = (uint32_t)(i + 1);
    }
}

// One 16x16 block per tile, one thread per pixel; Gaussians in batches of
// 256 through shared memory, front to back, stopping when every pixel of the
// tile is saturated. A warp skips the Gaussians its two pixel rows cannot
// see (blend_warp_mask). AUX: the depth image or the last contributor is
// wanted (else neither is accumulated: fewer instructions per pixel and
// Gaussian, the loop's whole cost).
template <bool AUX>
__global__ void __launch_bounds__(BLOCK) k_blend(int W, int H, int gx, const uint2 *__restrict__ ranges,
                                                 const uint32_t *__restrict__ vals,
                                                 const float2 *__restrict__ xy,
                                                 const float4 *__restrict__ conic_o,
                                                 const float4 *__restrict__ rgbd, float bg0,
                                                 float bg1, float bg2, float *__restrict__ out_rgb,
                                                 float *__restrict__ out_alpha,
                                                 float *__restrict__ out_depth,
                                                 uchar4 *__restrict__ out8, float *__restrict__ out_planar,
                                                 float *__restrict__ out_T, uint32_t *__restrict__ out_last)
{
    __shared__ float2 s_xy[BLOCK];
    __shared__ float4 s_co[BLOCK];
    __shared__ float4 s_cd[BLOCK];
    __shared__ uint8_t s_mask[BLOCK];
    const int tid = threadIdx.y * TILE + threadIdx.x;
    const uint32_t warp_bit = 1u << (tid >> 5);
    const int lane = tid & 31;
    const float tx0 = (float)(blockIdx.x * TILE), ty0 = (float)(blockIdx.y * TILE);
    const int px = blockIdx.x * TILE + threadIdx.x, py = blockIdx.y * TILE + threadIdx.y;
    const bool inside = px < W && py < H;
    bool done = !inside;
    const float pxf = (float)px, pyf = (float)py;
    const uint2 range = ranges[blockIdx.y * gx + blockIdx.x];
    float T = 1.0f, C0 = 0.0f, C1 = 0.0f, C2 = 0.0f, D = 0.0f;
    uint32_t last = 0; // list entries up to the last contributor (the backward's replay)
    for (uint32_t base = range.x; base < range.y; base += BLOCK) {
        if (__syncthreads_count(done) == BLOCK) break;
        uint32_t k = base + tid;
        if (k < range.y) {
            uint32_t id = vals[k];
            const float2 g = xy[id];
            const float4 co = conic_o[id];
            s_xy[tid] = g;
            s_co[tid] = co;
            s_cd[tid] = rgbd[id];
            s_mask[tid] = (uint8_t)blend_warp_mask(g, co, tx0, ty0);
        }
        __syncthreads();
        int cnt = (int)min((uint32_t)BLOCK, range.y - base);
        // 32 entries at a time: one ballot gives the warp the entries its
        // rows can see (the same bits in every lane), and the lanes walk
        // only those, in list order
        for (int r0 = 0; r0 < cnt; r0 += 32) {
            const int jj = r0 + lane;
            uint32_t bits = __ballot_sync(0xFFFFFFFFu, jj < cnt && (s_mask[jj] & warp_bit));
            while (bits && !done) {
                const int j = r0 + __ffs((int)bits) - 1;
                bits &= bits - 1u;
                float2 g = s_xy[j];
                float4 co = s_co[j];
                float power = gs_power(co.x, co.y, co.z, g.x - pxf, g.y - pyf);
                if (power > 0.0f) continue;
                float alpha = gs_alpha(co.w, power);
                if (alpha < GS_ALPHA_MIN) continue;
                float test_T = T * (1.0f - alpha);
                if (test_T < GS_T_MIN) {
                    done = true;
                    continue;
                }
                float4 cd = s_cd[j];
                float wgt = alpha * T;
                C0 += cd.x * wgt;
                C1 += cd.y * wgt;
                C2 += cd.z * wgt;
                if (AUX) {
                    D += cd.w * wgt;
                    last = base + (uint32_t)j + 1 - range.x;
                }
                T = test_T;
            }
        }
    }
    if (!inside) return;
    size_t pix = (size_t)py * W + px;
    float r = C0 + T * bg0, gg = C1 + T * bg1, b = C2 + T * bg2;
    if (out_rgb) {
        out_rgb[3 * pix] = r;
        out_rgb[3 * pix + 1] = gg;
        out_rgb[3 * pix + 2] = b;
    }
    if (out_alpha) out_alpha[pix] = 1.0f - T;
    if (out_depth) out_depth[pix] = D;
    if (out8) out8[pix] = make_uchar4(gs_to8(r), gs_to8(gg), gs_to8(b), gs_to8(1.0f - T));
    if (out_planar) {
        size_t np = (size_t)W * H;
        out_planar[pix] = r;
        out_planar[np + pix] = gg;
        out_planar[2 * np + pix] = b;
    }
    if (out_T) out_T[pix] = T;
    if (out_last) out_last[pix] = last;
}

// ----------------------------------------------------------------- host

// The per-Gaussian buffers of gs_cu_alloc_scene, freed (the SH only when
// they are the context's own).
void gs_cu_free_scene(gt_gs_cu *g)
{
    if (g->sh_borrowed) g->sh = NULL;
    void **bufs[] = {(void **)&g->pos_op,   (void **)&g->cov3,    (void **)&g->sh,       (void **)&g->sh16,
                     (void **)&g->xy,       (void **)&g->conic_o, (void **)&g->rgbd,     (void **)&g->dup,
                     (void **)&g->touched,  (void **)&g->offsets, (void **)&g->dkeys_in, (void **)&g->dkeys_out,
                     (void **)&g->order_in, (void **)&g->order_out, (void **)&g->visible};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++) {
        if (*bufs[k]) gt_cu_free(*bufs[k]);
        *bufs[k] = NULL;
    }
}

extern "C" void gt_gs_cu_destroy(gt_gs_cu *g)
{
    if (!g) return;
    if (g->stream) cudaStreamSynchronize((cudaStream_t)g->stream);
    gs_cu_free_scene(g);
    void *bufs[] = {g->keys_in, g->keys_out, g->vals_in, g->vals_out, g->ranges,
                    g->d_rgb,   g->d_alpha,  g->d_depth, g->d_rgba8};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        if (bufs[k]) gt_cu_free(bufs[k]);
    gt_cu_pinned_free(g->h_rgba8);
    gt_arena_release(&g->arena);
    if (g->stream && !g->stream_borrowed) gt_cu_stream_destroy(g->stream);
    free(g);
}

// The per-Gaussian buffers of a context for n Gaussians (the SH only with
// own_sh, as halves with sh_half; the differentiable renderer of
// gs_backward.cu borrows its caller's floats).
gt_status gs_cu_alloc_scene(gt_gs_cu *g, size_t n, int sh_k, bool own_sh, bool sh_half)
{
    size_t m = n ? n : 1;
    GT_TRY(dev_alloc((void **)&g->pos_op, m * sizeof(float4), "Gaussian positions"));
    GT_TRY(dev_alloc((void **)&g->cov3, m * 6 * sizeof(float), "3-D covariances"));
    if (own_sh && sh_half)
        GT_TRY(dev_alloc((void **)&g->sh16, m * (size_t)sh_k * 3 * sizeof(uint16_t), "SH coefficients"));
    else if (own_sh)
        GT_TRY(dev_alloc((void **)&g->sh, m * (size_t)sh_k * 3 * sizeof(float), "SH coefficients"));
    g->sh_borrowed = !own_sh;
    GT_TRY(dev_alloc((void **)&g->xy, m * sizeof(float2), "projected means"));
    GT_TRY(dev_alloc((void **)&g->conic_o, m * sizeof(float4), "conics"));
    GT_TRY(dev_alloc((void **)&g->rgbd, m * sizeof(float4), "colours"));
    GT_TRY(dev_alloc((void **)&g->dup, m * sizeof(GsDupRec), "tile tests"));
    GT_TRY(dev_alloc((void **)&g->touched, m * sizeof(uint32_t), "tile counts"));
    GT_TRY(dev_alloc((void **)&g->visible, m, "visibility flags"));
    GT_TRY(dev_alloc((void **)&g->offsets, m * sizeof(uint32_t), "tile offsets"));
    GT_TRY(dev_alloc((void **)&g->dkeys_in, m * sizeof(uint32_t), "depth keys"));
    GT_TRY(dev_alloc((void **)&g->dkeys_out, m * sizeof(uint32_t), "depth keys"));
    GT_TRY(dev_alloc((void **)&g->order_in, m * sizeof(uint32_t), "depth order"));
    GT_TRY(dev_alloc((void **)&g->order_out, m * sizeof(uint32_t), "depth order"));
    return GT_OK;
}

static gt_status create_impl(gt_gs_cu *g, size_t n, int sh_k, const float *pos, const float *scale,
                             const float *rot, const float *opacity, const float *sh, float mod, bool sh_half)
{
    GT_TRY(gt_cu_stream_create(&g->stream));
    GT_TRY(gs_cu_alloc_scene(g, n, sh_k, true, sh_half));
    if (n == 0) return GT_OK;
    cudaStream_t st = (cudaStream_t)g->stream;
    // staging: scale and rot go through the buffers that preprocess reuses
    float *d_tmp = NULL, *d_tmp2 = NULL;
    GT_TRY(dev_alloc((void **)&d_tmp, n * 4 * sizeof(float), "upload staging"));
    gt_status s = dev_alloc((void **)&d_tmp2, n * 3 * sizeof(float), "upload staging");
    if (s == GT_OK) s = gt_cu_memcpy_h2d(d_tmp, pos, n * 3 * sizeof(float), st);
    if (s == GT_OK) s = gt_cu_memcpy_h2d(d_tmp2, opacity, n * sizeof(float), st);
    if (s == GT_OK) {
        k_pack_pos<<<gt_grid(n, 256), 256, 0, st>>>(n, d_tmp, d_tmp2, g->pos_op);
        s = gt_cu_status_from(cudaGetLastError(), "k_pack_pos", __FILE__, __LINE__);
    }
    if (s == GT_OK) s = gt_cu_memcpy_h2d(d_tmp, rot, n * 4 * sizeof(float), st);
    if (s == GT_OK) s = gt_cu_memcpy_h2d(d_tmp2, scale, n * 3 * sizeof(float), st);
    if (s == GT_OK) {
        k_cov3<<<gt_grid(n, 256), 256, 0, st>>>(n, d_tmp2, d_tmp, mod, g->cov3);
        s = gt_cu_status_from(cudaGetLastError(), "k_cov3", __FILE__, __LINE__);
    }
    // the SH are most of the scene (192 of 236 MB at degree 3): pinned
    // staging, converted to halves by the staging threads with sh_half
    if (s == GT_OK && sh_half) s = gt_staged_upload_f16(g->sh16, sh, n * (size_t)sh_k * 3, g->stream);
    else if (s == GT_OK) s = gt_staged_upload(g->sh, sh, n * (size_t)sh_k * 3 * sizeof(float), g->stream);
    if (s == GT_OK) s = gt_cu_stream_sync(g->stream);
    if (d_tmp) gt_cu_free(d_tmp);
    if (d_tmp2) gt_cu_free(d_tmp2);
    return s;
}

extern "C" gt_status gt_gs_cu_create(size_t n, int sh_k, const float *pos, const float *scale,
                                     const float *rot, const float *opacity, const float *sh,
                                     float scale_modifier, int antialias, int exact_binning, int sh_half,
                                     gt_gs_cu **out)
{
    *out = NULL;
    if (n > 0xFFFFFFFFull) return gt_fail(GT_ERR_DATA, "too many Gaussians for the GPU path (%zu)", n);
    gt_gs_cu *g = (gt_gs_cu *)calloc(1, sizeof *g);
    if (!g) return gt_fail(GT_ERR_RUNTIME, "out of memory (GPU context)");
    g->n = n;
    g->sh_k = sh_k;
    g->antialias = antialias;
    g->exact = exact_binning;
    gt_arena_init(&g->arena);
    gt_status s = create_impl(g, n, sh_k, pos, scale, rot, opacity, sh, scale_modifier, sh_half != 0);
    if (s != GT_OK) {
        gt_gs_cu_destroy(g);
        return s;
    }
    *out = g;
    return GT_OK;
}

static void stage_end(gt_timer *t, gt_timings *tm, const char *name)
{
    double ms = gt_timer_stop(t);
    if (tm) gt_timings_add(tm, name, ms);
}

extern "C" gt_status gt_gs_cu_render(gt_gs_cu *g, const gt_gs_camera *c, int sh_deg, const float bg[3],
                                     float *rgb, float *alpha, float *depth, uint8_t *rgba8,
                                     gt_timings *tm, size_t *pairs)
{
    cudaStream_t st = (cudaStream_t)g->stream;
    Cam cam;
    memcpy(cam.R, c->R, sizeof cam.R);
    memcpy(cam.t, c->t, sizeof cam.t);
    memcpy(cam.campos, c->campos, sizeof cam.campos);
    cam.W = c->width;
    cam.H = c->height;
    cam.fx = c->fx;
    cam.fy = c->fy;
    gs_frustum_lims((float)c->width, (float)c->height, c->fx, c->fy, c->cx, c->cy, cam.lim);
    cam.cxp = c->cx - 0.5f;
    cam.cyp = c->cy - 0.5f;
    cam.gx = (c->width + TILE - 1) / TILE;
    cam.gy = (c->height + TILE - 1) / TILE;
    const uint32_t ntiles = (uint32_t)cam.gx * (uint32_t)cam.gy;
    const size_t npix = (size_t)c->width * c->height;
    const bool timed = tm != NULL;
    gt_timer t;

    // image-sized buffers (grow only)
    if (ntiles > g->tile_cap) {
        if (g->ranges) gt_cu_free(g->ranges);
        g->ranges = NULL;
        g->tile_cap = 0;
        GT_TRY(dev_alloc((void **)&g->ranges, ntiles * sizeof(uint2), "tile ranges"));
        g->tile_cap = ntiles;
    }
    if (npix > g->pix_cap) {
        void **bufs[] = {(void **)&g->d_rgb, (void **)&g->d_alpha, (void **)&g->d_depth,
                         (void **)&g->d_rgba8};
        for (int k = 0; k < 4; k++)
            if (*bufs[k]) {
                gt_cu_free(*bufs[k]);
                *bufs[k] = NULL;
            }
        g->pix_cap = 0;
        GT_TRY(dev_alloc((void **)&g->d_rgb, npix * 3 * sizeof(float), "image"));
        GT_TRY(dev_alloc((void **)&g->d_alpha, npix * sizeof(float), "alpha image"));
        GT_TRY(dev_alloc((void **)&g->d_depth, npix * sizeof(float), "depth image"));
        GT_TRY(dev_alloc((void **)&g->d_rgba8, npix * sizeof(uchar4), "8-bit image"));
        g->pix_cap = npix;
    }

    // preprocess
    if (timed) gt_timer_start(&t, true, g->stream);
    size_t n = g->n;
    if (n) {
        const uintptr_t sh_addr = g->sh16 ? (uintptr_t)g->sh16 : (uintptr_t)g->sh;
        const int vec4 = g->sh_k == 16 && (sh_addr & 15) == 0;
        k_preprocess<<<gt_grid(n, 256), 256, 0, st>>>(n, g->sh_k, sh_deg, vec4, g->antialias, g->exact, cam,
                                                        g->pos_op, g->cov3, g->sh, g->sh16, g->xy, g->conic_o, g->rgbd,
                                                        g->dup, g->touched, g->visible, g->dkeys_out);
        GT_CU_LAUNCH("k_preprocess");
    }
    if (timed) stage_end(&t, tm, "preprocess");

    // depth order: the visible Gaussians (those that reach a tile; the
    // others sort no keys) sorted once by depth (31-bit keys), so
    // that the pairs can be written in depth order and sorted by tile alone
    // (a few key bits) instead of on (tile << 32 | depth) as the reference
    // does: the same lists, far fewer bytes through the sort. The compaction
    // keeps index order, and the sort is stable: equal depths stay in index
    // order, as in the reference's sort.
    // Small scenes and the training's renders (sort_all) sort every
    // Gaussian instead, the invisible last: no wait for the compaction's
    // count, and for a few thousand Gaussians less work than compacting.
    if (timed) gt_timer_start(&t, true, g->stream);
    size_t m = 0;
    if (n && (g->sort_all || n <= GS_SORT_ALL_MAX)) {
        k_depth_keys_all<<<gt_grid(n, 256), 256, 0, st>>>(n, g->dkeys_out, g->visible, g->dkeys_in, g->order_in);
        GT_CU_LAUNCH("k_depth_keys_all");
        GT_TRY(gt_cu_sort_pairs_u32(g->dkeys_in, g->dkeys_out, g->order_in, g->order_out, n, 0, 31, &g->arena,
                                    g->stream));
        m = n;
    } else if (n) {
        GT_TRY(gt_cu_select_flagged_index(g->visible, g->order_in, n, &m, &g->arena, g->stream));
        if (m) {
            // dkeys_out holds the keys by Gaussian (k_preprocess) until the sort writes it
            k_depth_keys<<<gt_grid(m, 256), 256, 0, st>>>(m, g->dkeys_out, g->order_in, g->dkeys_in);
            GT_CU_LAUNCH("k_depth_keys");
            GT_TRY(gt_cu_sort_pairs_u32(g->dkeys_in, g->dkeys_out, g->order_in, g->order_out, m, 0, 31, &g->arena,
                                        g->stream));
        }
    }
    if (timed) stage_end(&t, tm, "depth sort");

    // duplicate: offsets by an exclusive scan of the tile counts in depth
    // order (gathered into dkeys_in, free after the sort)
    if (timed) gt_timer_start(&t, true, g->stream);
    size_t total = 0;
    uint32_t *counts = g->dkeys_in;
    if (m) {
        k_gather_counts<<<gt_grid(m, 256), 256, 0, st>>>(m, g->order_out, g->touched, counts);
        GT_CU_LAUNCH("k_gather_counts");
        GT_TRY(gt_cu_scan_exclusive_u32(counts, g->offsets, m, &g->arena, g->stream));
        uint32_t last[2];
        GT_CU(cudaMemcpyAsync(&last[0], g->offsets + m - 1, sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
        GT_CU(cudaMemcpyAsync(&last[1], counts + m - 1, sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
        GT_CU(cudaStreamSynchronize(st));
        total = (size_t)last[0] + last[1];
        if (total > 0xFFFFFFFFull)
            return gt_fail(GT_ERR_GPU, "too many Gaussian/tile pairs (%zu) for one frame", total);
    }
    if (total > g->pair_cap) {
        void **bufs[] = {(void **)&g->keys_in, (void **)&g->keys_out, (void **)&g->vals_in,
                         (void **)&g->vals_out};
        for (int k = 0; k < 4; k++)
            if (*bufs[k]) {
                gt_cu_free(*bufs[k]);
                *bufs[k] = NULL;
            }
        g->pair_cap = 0;
        size_t cap = total + total / 8; // headroom for the next frames of an orbit
        GT_TRY(dev_alloc((void **)&g->keys_in, cap * sizeof(uint32_t), "sort keys"));
        GT_TRY(dev_alloc((void **)&g->keys_out, cap * sizeof(uint32_t), "sort keys"));
        GT_TRY(dev_alloc((void **)&g->vals_in, cap * sizeof(uint32_t), "sort values"));
        GT_TRY(dev_alloc((void **)&g->vals_out, cap * sizeof(uint32_t), "sort values"));
        g->pair_cap = cap;
    }
    if (total) {
        k_duplicate<<<gt_grid(m, 256), 256, 0, st>>>(m, cam.gx, ntiles, g->exact, g->order_out, counts, g->dup,
                                                       g->offsets, g->keys_in, g->vals_in);
        GT_CU_LAUNCH("k_duplicate");
    }
    if (timed) stage_end(&t, tm, "duplicate");

    // stable sort on the bits of tile ids 0..ntiles (the sentinel included):
    // each tile's pairs keep their depth order
    if (timed) gt_timer_start(&t, true, g->stream);
    int tbits = 0;
    while (tbits < 32 && ((uint64_t)1 << tbits) <= (uint64_t)ntiles) tbits++;
    if (total)
        GT_TRY(gt_cu_sort_pairs_u32(g->keys_in, g->keys_out, g->vals_in, g->vals_out, total, 0, tbits, &g->arena,
                                    g->stream));
    if (timed) stage_end(&t, tm, "sort");

    if (timed) gt_timer_start(&t, true, g->stream);
    GT_CU(cudaMemsetAsync(g->ranges, 0, ntiles * sizeof(uint2), st));
    if (total) {
        k_ranges<<<gt_grid(total, 256), 256, 0, st>>>(total, ntiles, g->keys_out, g->ranges);
        GT_CU_LAUNCH("k_ranges");
    }
    if (timed) stage_end(&t, tm, "ranges");

    if (timed) gt_timer_start(&t, true, g->stream);
    dim3 grid((unsigned)cam.gx, (unsigned)cam.gy), block(TILE, TILE);
    if (depth || g->state_last)
        k_blend<true><<<grid, block, 0, st>>>(c->width, c->height, cam.gx, g->ranges, g->vals_out, g->xy, g->conic_o,
                                              g->rgbd, bg[0], bg[1], bg[2], (rgb || g->keep_rgb) ? g->d_rgb : NULL,
                                              (alpha || depth) ? g->d_alpha : NULL, depth ? g->d_depth : NULL,
                                              rgba8 ? g->d_rgba8 : NULL, g->state_rgb, g->state_T, g->state_last);
    else
        k_blend<false><<<grid, block, 0, st>>>(c->width, c->height, cam.gx, g->ranges, g->vals_out, g->xy,
                                               g->conic_o, g->rgbd, bg[0], bg[1], bg[2],
                                               (rgb || g->keep_rgb) ? g->d_rgb : NULL, alpha ? g->d_alpha : NULL,
                                               NULL, rgba8 ? g->d_rgba8 : NULL, g->state_rgb, g->state_T, NULL);
    GT_CU_LAUNCH("k_blend");
    if (timed) stage_end(&t, tm, "blend");

    g->last_pairs = total;
    if (pairs) *pairs = total;
    if (g->keep_rgb && !rgb && !alpha && !depth && !rgba8) return GT_OK; // image on the device, work queued
    if (timed) gt_timer_start(&t, true, g->stream);
    if (rgb) GT_TRY(gt_cu_memcpy_d2h(rgb, g->d_rgb, npix * 3 * sizeof(float), g->stream));
    if (alpha) GT_TRY(gt_cu_memcpy_d2h(alpha, g->d_alpha, npix * sizeof(float), g->stream));
    if (depth) GT_TRY(gt_cu_memcpy_d2h(depth, g->d_depth, npix * sizeof(float), g->stream));
    // the 8-bit image (what PNGs are written from) through a pinned buffer
    // kept for the next frames: a download into fresh pageable memory took
    // 5.6-7.5 ms for a 1080p view, the pinned one and a threaded copy out
    // much less
    if (rgba8 && npix * 4 > g->h_rgba8_cap) {
        gt_cu_pinned_free(g->h_rgba8);
        g->h_rgba8 = NULL;
        g->h_rgba8_cap = 0;
        GT_TRY(gt_cu_pinned_alloc((void **)&g->h_rgba8, npix * 4, "8-bit image download"));
        g->h_rgba8_cap = npix * 4;
    }
    if (rgba8) GT_TRY(gt_cu_memcpy_d2h(g->h_rgba8, g->d_rgba8, npix * 4, g->stream));
    GT_CU(cudaStreamSynchronize(st));
    if (rgba8) gt_par_memcpy(rgba8, g->h_rgba8, npix * 4);
    if (timed) stage_end(&t, tm, "download");
    return GT_OK;
}

extern "C" void gt_gs_cu_keep_rgb(gt_gs_cu *g, int on)
{
    g->keep_rgb = on;
}

extern "C" const float *gt_gs_cu_device_rgb(const gt_gs_cu *g)
{
    return g->d_rgb;
}

extern "C" void *gt_gs_cu_stream(const gt_gs_cu *g)
{
    return g->stream;
}
