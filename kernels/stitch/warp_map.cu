// The measurement behind the ray warp's design (gt_stitch_gpu_bench_warp,
// lib/stitch/stitch.h): a rig stitched through rays can warp either by
// computing each sample's camera position in the kernel from the plane's
// per-row and per-column tables (what warp.cu does: a few fused
// multiply-adds and two divisions a sample, 16 bytes of tables per row and
// column) or by reading it from a map computed once (8 bytes per sample and
// camera, read every frame). Both are timed here on the plan's own planes
// and boxes with the same bilinear sampling, so that the figure that chose
// the design can be measured again on any GPU. Not used by the stitcher.
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/stitch/stitch_cu.h"
#include "stitch/stitch.h"
#include "stitch/stitch_math.h"

namespace {

// the map: camera i's (u, v) for every sample of its box
__global__ void k_ray_map(const gt_sk_plane pl, const gt_sk_boxes box, float2 *__restrict__ map)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, i = blockIdx.z;
    if (x < box.x0[i] || x > box.x1[i] || y < box.y0[i] || y > box.y1[i] || x >= pl.out.w || y >= pl.out.h) return;
    int pw = pl.out.w, ph = pl.out.h;
    float u, v;
    gt_sp_map(pl.cam + GT_SP_N * i, pl.tab[x], pl.tab[pw + x], pl.tab[2 * pw + y], pl.tab[2 * pw + ph + y], &u, &v);
    map[(long long)pw * ph * i + (long long)y * pw + x] = make_float2(u, v);
}

// the float warp of multi-band blending, reading the map
__global__ void k_warp_float_map(const gt_sk_plane pl, const uint8_t *__restrict__ in, const float2 *__restrict__ map,
                                 const gt_sk_boxes box, float *__restrict__ dst)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, i = blockIdx.z;
    int X0 = blockIdx.x * blockDim.x, Y0 = blockIdx.y * blockDim.y;
    if (X0 > box.x1[i] || X0 + (int)blockDim.x - 1 < box.x0[i] || Y0 > box.y1[i] ||
        Y0 + (int)blockDim.y - 1 < box.y0[i])
        return;
    if (x >= pl.out.w || y >= pl.out.h) return;
    long long n = (long long)pl.out.w * pl.out.h, j = n * i + (long long)y * pl.out.w + x;
    float2 q = map[j];
    const uint8_t *base = in + (long long)i * pl.in_bytes + pl.in.off;
    float s = gt_sm_bilinear(base, pl.in.pitch, pl.in.step, pl.in.w, pl.in.h, q.x, q.y);
    dst[j] = fmaf(s, pl.gain[i], pl.bias[i]);
}

void kview(const gt_plane_view *v, gt_sk_view *k)
{
    k->off = (long long)v->off;
    k->pitch = v->pitch;
    k->step = v->step;
    k->w = v->w;
    k->h = v->h;
}

} // namespace

// a failed call: the status, then the clean-up
#define BCU(call)                                                                                                  \
    do {                                                                                                           \
        cudaError_t e_ = (call);                                                                                   \
        if (e_ != cudaSuccess) {                                                                                   \
            st = gt_fail(GT_ERR_GPU, "%s: %s", #call, cudaGetErrorString(e_));                                     \
            goto done;                                                                                             \
        }                                                                                                          \
    } while (0)

extern "C" gt_status gt_stitch_gpu_bench_warp(const gt_stitch_plan *plan, int iters, double ms[2])
{
    if (!plan->plane[0].ray || plan->blend != GT_BLEND_MULTIBAND)
        return gt_fail(GT_ERR_USAGE, "the warp benchmark needs a multiband plan of a rig stitched through rays");
    int N = plan->ncam;
    gt_status st = GT_OK;
    uint8_t *d_in = NULL;
    float *d_tab[3] = {NULL, NULL, NULL}, *d_cam[3] = {NULL, NULL, NULL}, *d_dst = NULL;
    float2 *d_map[3] = {NULL, NULL, NULL};
    gt_sk_plane kp[3];
    gt_sk_boxes bx[3];
    cudaEvent_t e0 = NULL, e1 = NULL;
    size_t nmax = 0, inb = plan->in_bytes * N;
    uint8_t *h = (uint8_t *)malloc(inb);
    if (!h) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    for (size_t k = 0; k < inb; k++) h[k] = (uint8_t)((k * 2654435761u) >> 24);
    if ((st = gt_cu_malloc((void **)&d_in, inb, "bench inputs"))) goto done;
    BCU(cudaMemcpy(d_in, h, inb, cudaMemcpyHostToDevice));
    for (int p = 0; p < 3; p++) {
        const gt_stitch_plane *pl = &plan->plane[p];
        memset(&kp[p], 0, sizeof kp[p]);
        kview(&pl->in, &kp[p].in);
        kview(&pl->out, &kp[p].out);
        kp[p].ncam = N;
        kp[p].in_bytes = (long long)plan->in_bytes;
        kp[p].ray = 1;
        memcpy(kp[p].gain, pl->gain, sizeof kp[p].gain);
        memcpy(kp[p].bias, pl->bias, sizeof kp[p].bias);
        size_t tb = 2 * ((size_t)pl->out.w + pl->out.h) * sizeof(float), n = (size_t)pl->out.w * pl->out.h;
        nmax = n > nmax ? n : nmax;
        if ((st = gt_cu_malloc((void **)&d_tab[p], tb, "tables")) ||
            (st = gt_cu_malloc((void **)&d_cam[p], sizeof pl->cam, "cameras")) ||
            (st = gt_cu_malloc((void **)&d_map[p], n * N * sizeof(float2), "map")))
            goto done;
        BCU(cudaMemcpy(d_tab[p], pl->tab, tb, cudaMemcpyHostToDevice));
        BCU(cudaMemcpy(d_cam[p], pl->cam, sizeof pl->cam, cudaMemcpyHostToDevice));
        kp[p].tab = d_tab[p];
        kp[p].cam = d_cam[p];
        for (int i = 0; i < N; i++) { /* where the camera's level 0 is needed: its owner box, grown */
            const int *b = pl->mbbox[0][i];
            bx[p].x0[i] = b[0] - 8, bx[p].y0[i] = b[1] - 8, bx[p].x1[i] = b[2] + 8, bx[p].y1[i] = b[3] + 8;
        }
        dim3 bl(32, 8), gr((pl->out.w + 31) / 32, (pl->out.h + 7) / 8, N);
        BCU(cudaMemset(d_map[p], 0, n * N * sizeof(float2)));
        k_ray_map<<<gr, bl>>>(kp[p], bx[p], d_map[p]);
    }
    if ((st = gt_cu_malloc((void **)&d_dst, nmax * N * sizeof(float), "bench levels"))) goto done;
    BCU(cudaDeviceSynchronize());
    BCU(cudaEventCreate(&e0));
    BCU(cudaEventCreate(&e1));
    for (int variant = 0; variant < 2; variant++) {
        for (int rep = 0; rep < 2; rep++) { /* the first round warms up */
            BCU(cudaEventRecord(e0));
            for (int it = 0; it < iters; it++)
                for (int p = 0; p < 3; p++) {
                    const gt_stitch_plane *pl = &plan->plane[p];
                    dim3 bl(32, 8), gr((pl->out.w + 31) / 32, (pl->out.h + 7) / 8, N);
                    if (variant == 0) st = gt_sk_warp_float(&kp[p], d_in, &bx[p], d_dst, NULL);
                    else k_warp_float_map<<<gr, bl>>>(kp[p], d_in, d_map[p], bx[p], d_dst);
                    if (st) goto done;
                }
            BCU(cudaEventRecord(e1));
            BCU(cudaEventSynchronize(e1));
            float t;
            BCU(cudaEventElapsedTime(&t, e0, e1));
            ms[variant] = t / iters;
        }
    }
    BCU(cudaGetLastError());
done:
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    for (int p = 0; p < 3; p++) gt_cu_free(d_tab[p]), gt_cu_free(d_cam[p]), gt_cu_free(d_map[p]);
    gt_cu_free(d_in);
    gt_cu_free(d_dst);
    free(h);
    return st;
}
