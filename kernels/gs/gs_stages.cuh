// What the forward rasterizer (gs_raster.cu) shares with the differentiable
// renderer (gs_backward.cu): the context with its per-Gaussian, per-pair and
// per-image buffers, and the camera as the kernels take it. The
// differentiable renderer fills pos_op and cov3 from raw parameters, points
// sh at its caller's coefficients, sets the state_* outputs and then runs
// the forward's stages through gt_gs_cu_render.
#ifndef GT_KERNELS_GS_STAGES_CUH
#define GT_KERNELS_GS_STAGES_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels/common/cu_prim.h"
#include "kernels/gs/gs_cuda.h"
#include "gs/gs_const.h"

#define TILE GS_TILE
// Scenes of at most this many Gaussians are depth-sorted whole, the ones
// that reach no tile keyed last, instead of compacted first (which makes
// the host wait for the count).
#define GS_SORT_ALL_MAX 65536
#define BLOCK (TILE * TILE)

// What the duplicate reads of a Gaussian, in one 32-byte sector (it reads
// them in depth order, one Gaussian here and one there): the projected mean,
// the 2-D covariance a b c and 2 ln(255 o) (+margin) of its exact tile test,
// its tile rect x0 y0 x1 y1 (exclusive).
struct __align__(32) GsDupRec {
    float2 xy;
    float a, b, c, tau2;
    ushort4 rect;
};

struct gt_gs_cu {
    size_t n;
    int sh_k;
    int antialias;
    int exact;        // ellipse/tile binning (else the reference's bounding square)
    int sort_all;     // depth-sort every Gaussian, no compaction (see GS_SORT_ALL_MAX)
    void *stream;
    bool stream_borrowed; // not destroyed with the context
    gt_arena arena;
    // scene
    float4 *pos_op;   // x y z opacity
    float *cov3;      // n*6: xx xy xz yy yz zz
    float *sh;        // n*sh_k*3 (NULL when the scene keeps them in sh16)
    uint16_t *sh16;   // n*sh_k*3 IEEE halves (gt_gs_cu_create with sh_half), else NULL
    bool sh_borrowed; // sh belongs to the caller (not freed)
    // per Gaussian, per frame
    float2 *xy;
    float4 *conic_o;  // a b c opacity
    float4 *rgbd;     // r g b depth
    GsDupRec *dup;    // the duplicate's tile test and rect
    uint32_t *touched;
    uint8_t *visible;  // touched != 0, the flags of the depth sort's compaction
    uint32_t *offsets;
    uint32_t *dkeys_in, *dkeys_out; // depth keys (dkeys_in: then the counts in depth order)
    uint32_t *order_in, *order_out; // indices of the visible Gaussians, order_out in depth order
    // per pair
    size_t pair_cap;
    uint32_t *keys_in, *keys_out;   // tile ids
    uint32_t *vals_in, *vals_out;
    size_t last_pairs;
    // per image
    size_t tile_cap, pix_cap;
    uint2 *ranges;
    float *d_rgb, *d_alpha, *d_depth;
    uchar4 *d_rgba8;
    uint8_t *h_rgba8;     // pinned staging of the 8-bit image's download (h_rgba8_cap bytes)
    size_t h_rgba8_cap;
    int keep_rgb;     // write d_rgb even when it is not downloaded (gs_output.cu reads it)
    // optional device outputs of the blend (NULL: not written): planar rgb,
    // final transmittance, list entries up to the last contributor
    float *state_rgb, *state_T;
    uint32_t *state_last;
};

struct Cam {
    float R[9], t[3], campos[3];
    float fx, fy, lim[4], cxp, cyp; // lim: gs_frustum_lims; cxp: the principal point - 0.5
    int W, H, gx, gy;
};

// Used by the forward blend (gs_raster.cu) and its replay in the backward
// (gs_backward.cu): both skip the same (warp, Gaussian) pairs, so the
// backward replays exactly the contributions the forward blended.
// Which of the tile's 8 warps (warp w: pixel rows 2w and 2w+1 of the tile,
// all 16 columns) a Gaussian can reach with alpha >= GS_ALPHA_MIN: bit w of
// the result. alpha = min(0.99, o e^power) >= 1/255 needs
// d^T Q d <= 2 ln(255 o) for the pixel offset d and the conic Q = [a b; b c],
// an ellipse whose half extents are sqrt(2 ln(255 o) Sigma_xx) and
// sqrt(2 ln(255 o) Sigma_yy) with Sigma = Q^-1. The extents are widened by 2 %
// and 0.05 pixel, beyond the rounding of the per-pixel test (its power and
// __expf are good to ~1e-6 relative), so a warp that skips a Gaussian has no
// pixel the test would have let through: the image is the same, the warp
// just does not evaluate e^power 32 times for nothing (most Gaussians of a
// large scene cover a few rows of a tile). The one place rounding could
// still differ: an opacity within ~1e-6 of 1/255, whose ellipse shrinks to
// nothing; a pixel there gets alpha 1/255 or not by rounding either way
// (under one 8-bit step).
__device__ __forceinline__ uint32_t blend_warp_mask(float2 g, float4 co, float tx0, float ty0)
{
    const float o = co.w;
    if (!(o * 255.0f >= 0.999f)) return 0u; // alpha < 1/255 at every pixel
    const float t = 2.0f * logf(fmaxf(255.0f * o, 1.0f));
    const float det = co.x * co.z - co.y * co.y;
    const float hx = sqrtf(t * co.z / det) * 1.02f + 0.05f, hy = sqrtf(t * co.x / det) * 1.02f + 0.05f;
    if (!(det > 0.0f) || !(hx < 1e30f) || !(hy < 1e30f)) return 0xFFu; // degenerate: no skipping
    if (g.x + hx < tx0 || g.x - hx > tx0 + (float)(TILE - 1)) return 0u;
    // rows 2w, 2w+1 meet [y - hy, y + hy] for (y - hy - ty0 - 1) / 2 <= w <= (y + hy - ty0) / 2
    const float wlo = ceilf((g.y - hy - ty0 - 1.0f) * 0.5f), whi = floorf((g.y + hy - ty0) * 0.5f);
    const int lo = (int)fmaxf(wlo, 0.0f), hi = (int)fminf(whi, (float)(BLOCK / 32 - 1));
    if (lo > hi) return 0u;
    return ((2u << hi) - 1u) & ~((1u << lo) - 1u);
}

// The per-Gaussian buffers of g for n Gaussians; the SH buffer only with
// own_sh (floats, or halves with sh_half).
gt_status gs_cu_alloc_scene(gt_gs_cu *g, size_t n, int sh_k, bool own_sh, bool sh_half);
// ... and freed again (the other buffers stay).
void gs_cu_free_scene(gt_gs_cu *g);

#endif
