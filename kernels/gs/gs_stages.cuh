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

// The per-Gaussian buffers of g for n Gaussians; the SH buffer only with
// own_sh (floats, or halves with sh_half).
gt_status gs_cu_alloc_scene(gt_gs_cu *g, size_t n, int sh_k, bool own_sh, bool sh_half);
// ... and freed again (the other buffers stay).
void gs_cu_free_scene(gt_gs_cu *g);

#endif
