// The reference training's loss and optimiser on the GPU: L1 + D-SSIM with
// dLoss/dimage (the mathematics of lib/gs/gs_fit_loss.c, in float as the
// reference's PyTorch code), and Adam (lib/gs/gs_fit_adam.c).
//
// The 11x11 Gaussian window is separable: a horizontal then a vertical
// 11-tap pass (zero padding), both inside one kernel per direction of the
// loss, on tiles staged in shared memory (the planes of moments never go
// through global memory):
//  k_ssim_fwd  per pixel the five moments x, y, xx, yy, xy, the SSIM map,
//              the three per-pixel factors G dS/d(mu_x, e_xx, e_xy) (3 planes
//              per channel, the one thing written), and the block sums of S,
//              |x-y|, (x-y)^2 added into three doubles
//  k_ssim_bwd  the window over the 3 factor planes and
//              dL/dx = W(gm) + 2x W(gxx) + y W(gxy) + the L1 part
//  k_mcmc_reg, k_mcmc_noise  the MCMC strategy's regularisers and noise
// Launch shape of the loss: 32x8 threads per block, each block a 32x32 tile
// of one channel (blockIdx.z) with a halo of 5 pixels. k_adam, k_u8:
// grid-stride loops, one thread per element.
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>

#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/gs/gs_fit_cuda.h"
#include "gs/gs_fit.h"
#include "gs/gs_fit_mcmc.h"

#define R (GT_GS_SSIM_WIN / 2)
#define BX 32
#define BY 8

__constant__ float c_win[GT_GS_SSIM_WIN];

// Each evaluation's sums (S, |x-y|, (x-y)^2) go to the next of
// GT_GS_CU_LOSS_RING slots and stay on the device until a fetch, so that a
// training loop need not wait for the GPU every iteration.
struct gt_gs_cu_loss {
    cudaStream_t stream;
    size_t cap;   // pixels
    float *fac;   // 9 planes (3 per channel)
    double *sums; // GT_GS_CU_LOSS_RING x 3
    double *host; // pinned, likewise
    int pending;  // evaluations queued since the last fetch (slots 0..pending-1)
    double n[GT_GS_CU_LOSS_RING], lambda[GT_GS_CU_LOSS_RING]; // values per slot
};

// One block per 32x32 output tile of a channel (blockIdx.z): the tile and
// its halo of R pixels (zero outside the image: the zero padding) staged
// in shared memory, the horizontal pass over the halo's rows into shared
// memory, the vertical pass per output pixel. Both passes keep a short run
// of inputs in registers and slide the window over it: a thread of the
// horizontal pass makes HSEG adjacent outputs of a row from HSEG + 2R
// inputs, one of the vertical pass VSEG adjacent outputs of a column from
// VSEG + 2R (about 23 shared-memory reads a pixel instead of 92 with one
// output a thread; the tile's halo rows 42/32 of its rows instead of 26/16).
// Each output still sums its 11 taps in the order of the CPU reference.
#define OW 32                 // output tile width (= BX)
#define OH 32                 // output tile height (BY x VSEG)
#define VSEG (OH / BY)        // vertical outputs a thread
#define HSEG 8                // horizontal outputs a thread
#define IW (OW + 2 * R)       // staged width
#define IH (OH + 2 * R)       // staged height
#define HITEMS (IH * (OW / HSEG)) // horizontal work items (row, segment)
// Row pitches of the shared arrays, one more than their widths: the
// horizontal pass's lanes (8 rows x 4 segments a warp) then read and write
// distinct banks (with the bare widths its stores hit one bank 8 times).
#define IWP (IW + 1)
#define OWP (OW + 1)

// The staged region of plane src (zero outside the image) into dst[IH][IW] (pitch IWP).
__device__ __forceinline__ void stage(const float *__restrict__ src, int w, int h, int x0, int y0,
                                      float (*dst)[IWP])
{
    for (int i = threadIdx.y * BX + threadIdx.x; i < IH * IW; i += BX * BY) {
        int r = i / IW, q = i % IW, gx = x0 - R + q, gy = y0 - R + r;
        dst[r][q] = (gx >= 0 && gx < w && gy >= 0 && gy < h) ? src[(size_t)gy * w + gx] : 0.0f;
    }
}

// The window over a run of N + 2R values held in registers: out[j] = sum
// over the taps k, in order, of w_k v[j + k], for N adjacent outputs.
template <int N> __device__ __forceinline__ void window_run(const float *v, float *out)
{
#pragma unroll
    for (int j = 0; j < N; j++) {
        float t = 0;
#pragma unroll
        for (int k = 0; k < 2 * R + 1; k++) t += c_win[k] * v[j + k];
        out[j] = t;
    }
}

// The vertical window at VSEG adjacent outputs of column tx from row ty0
// of a horizontal pass's plane, the column's VSEG + 2R values read once.
__device__ __forceinline__ void window_col(const float (*plane)[OWP], int ty0, int tx, float out[VSEG])
{
    float col[VSEG + 2 * R];
#pragma unroll
    for (int k = 0; k < VSEG + 2 * R; k++) col[k] = plane[ty0 + k][tx];
    window_run<VSEG>(col, out);
}

// The loss's forward: per pixel the five moments, the SSIM map, the three
// factors G dS/d(mu_x, e_xx, e_xy) (fac, when given) and the block sums of
// S, |x-y|, (x-y)^2 added into three doubles (one atomic per block and
// sum: 8 warps' partials through shared memory first).
__global__ void __launch_bounds__(BX * BY) k_ssim_fwd(const float *__restrict__ x, const float *__restrict__ y,
                                                      int w, int h, float *__restrict__ fac, float G, double *sums)
{
    __shared__ float sx[IH][IWP], sy[IH][IWP];
    __shared__ float hs[5][IH][OWP];
    __shared__ float part[BY][3];
    const int c = blockIdx.z, x0 = blockIdx.x * OW, y0 = blockIdx.y * OH;
    const size_t np = (size_t)w * h;
    const int tid = threadIdx.y * BX + threadIdx.x;
    stage(x + c * np, w, h, x0, y0, sx);
    stage(y + c * np, w, h, x0, y0, sy);
    __syncthreads();
    for (int it = tid; it < HITEMS; it += BX * BY) {
        const int r = it / (OW / HSEG), q0 = (it % (OW / HSEG)) * HSEG;
        float a[HSEG + 2 * R], b[HSEG + 2 * R];
#pragma unroll
        for (int k = 0; k < HSEG + 2 * R; k++) a[k] = sx[r][q0 + k], b[k] = sy[r][q0 + k];
#pragma unroll
        for (int j = 0; j < HSEG; j++) {
            float s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0;
#pragma unroll
            for (int k = 0; k < 2 * R + 1; k++) {
                float u = a[j + k], v = b[j + k], g = c_win[k];
                s0 += g * u;
                s1 += g * v;
                s2 += g * u * u;
                s3 += g * v * v;
                s4 += g * u * v;
            }
            hs[0][r][q0 + j] = s0, hs[1][r][q0 + j] = s1, hs[2][r][q0 + j] = s2, hs[3][r][q0 + j] = s3,
            hs[4][r][q0 + j] = s4;
        }
    }
    __syncthreads();
    float S = 0, ad = 0, sq = 0;
    const int tx = threadIdx.x, ty0 = threadIdx.y * VSEG, px = x0 + tx;
    float m[5][VSEG];
#pragma unroll
    for (int q = 0; q < 5; q++) window_col(hs[q], ty0, tx, m[q]);
#pragma unroll
    for (int j = 0; j < VSEG; j++) {
        const int ty = ty0 + j, py = y0 + ty;
        if (px >= w || py >= h) continue;
        const float C1 = (float)GT_GS_SSIM_C1, C2 = (float)GT_GS_SSIM_C2;
        float m1 = m[0][j], m2 = m[1][j];
        float A1 = 2 * m1 * m2 + C1, A2 = 2 * (m[4][j] - m1 * m2) + C2;
        float B1 = m1 * m1 + m2 * m2 + C1, B2 = (m[2][j] - m1 * m1) + (m[3][j] - m2 * m2) + C2;
        float inv = 1.0f / (B1 * B2);
        float Sp = A1 * A2 * inv;
        S += Sp;
        size_t o = (size_t)py * w + px;
        if (fac) {
            fac[(c * 3 + 0) * np + o] = G * (2 * m2 * (A2 - A1) - 2 * m1 * Sp * (B2 - B1)) * inv;
            fac[(c * 3 + 1) * np + o] = G * (-Sp / B2);
            fac[(c * 3 + 2) * np + o] = G * (2 * A1 * inv);
        }
        float d = sx[ty + R][tx + R] - sy[ty + R][tx + R];
        ad += fabsf(d);
        sq += d * d;
    }
    // block sums (256 threads): warp shuffles, the 8 warps' partials in
    // shared memory, then one atomic per block and sum (the three doubles
    // every block of the image adds into are one address each)
    for (int off = 16; off > 0; off >>= 1) {
        S += __shfl_down_sync(0xffffffffu, S, off);
        ad += __shfl_down_sync(0xffffffffu, ad, off);
        sq += __shfl_down_sync(0xffffffffu, sq, off);
    }
    if ((tid & 31) == 0) part[tid >> 5][0] = S, part[tid >> 5][1] = ad, part[tid >> 5][2] = sq;
    __syncthreads();
    if (tid < 3) {
        double t = 0;
        for (int k = 0; k < BY; k++) t += (double)part[k][tid];
        atomicAdd(&sums[tid], t);
    }
}

// The loss's backward: the window over the three factor planes (W^T = W),
// dL/dx = W(gm) + 2x W(gxx) + y W(gxy) + the L1 part.
__global__ void __launch_bounds__(BX * BY) k_ssim_bwd(const float *__restrict__ x, const float *__restrict__ y,
                                                      int w, int h, const float *__restrict__ fac, float gl1,
                                                      float *__restrict__ dl_dx)
{
    __shared__ float sf[3][IH][IWP];
    __shared__ float hs[3][IH][OWP];
    const int c = blockIdx.z, x0 = blockIdx.x * OW, y0 = blockIdx.y * OH;
    const size_t np = (size_t)w * h;
    const int tid = threadIdx.y * BX + threadIdx.x;
    for (int q = 0; q < 3; q++) stage(fac + (c * 3 + q) * np, w, h, x0, y0, sf[q]);
    __syncthreads();
    for (int it = tid; it < HITEMS; it += BX * BY) {
        const int r = it / (OW / HSEG), q0 = (it % (OW / HSEG)) * HSEG;
#pragma unroll
        for (int q = 0; q < 3; q++) {
            float a[HSEG + 2 * R], o[HSEG];
#pragma unroll
            for (int k = 0; k < HSEG + 2 * R; k++) a[k] = sf[q][r][q0 + k];
            window_run<HSEG>(a, o);
#pragma unroll
            for (int j = 0; j < HSEG; j++) hs[q][r][q0 + j] = o[j];
        }
    }
    __syncthreads();
    const int tx = threadIdx.x, ty0 = threadIdx.y * VSEG, px = x0 + tx;
    float s[3][VSEG];
#pragma unroll
    for (int q = 0; q < 3; q++) window_col(hs[q], ty0, tx, s[q]);
#pragma unroll
    for (int j = 0; j < VSEG; j++) {
        const int py = y0 + ty0 + j;
        if (px >= w || py >= h) continue;
        size_t i = c * np + (size_t)py * w + px;
        float xi = x[i], yi = y[i], d = xi - yi;
        float sg = d > 0 ? 1.0f : d < 0 ? -1.0f : 0.0f;
        dl_dx[i] = s[0][j] + 2 * xi * s[1][j] + yi * s[2][j] + gl1 * sg;
    }
}

__global__ void k_adam(float *p, const float *g, float *m, float *v, size_t n, float lr, float lr_rest,
                       int period, float bc1, float bc2s)
{
    const float b1 = (float)GT_GS_ADAM_BETA1, b2 = (float)GT_GS_ADAM_BETA2;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float gi = g[i];
        float mi = b1 * m[i] + (1 - b1) * gi;
        float vi = b2 * v[i] + (1 - b2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        float a = (period > 0 && (int)(i % (size_t)period) >= 3) ? lr_rest : lr;
        p[i] -= a / bc1 * mi / (sqrtf(vi) / bc2s + (float)GT_GS_ADAM_EPS);
    }
}

// MCMC: the regularisers' gradients and the position noise, one thread per
// Gaussian (lib/gs/gs_fit_mcmc.h, the CPU's code)
__global__ void k_mcmc_reg(size_t n, const float *__restrict__ ls, const float *__restrict__ lo, float opr,
                           float scr, float inv_n, float *g_lo, float *g_ls)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        gs_mcmc_reg_grad(ls + 3 * i, lo[i], opr, scr, inv_n, g_lo + i, g_ls + 3 * i);
}

__global__ void k_mcmc_noise(size_t n, float *pos, const float *__restrict__ ls, const float *__restrict__ rot,
                             const float *__restrict__ lo, float scaler, uint64_t seed, uint64_t step)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float d[3];
        gs_mcmc_noise(ls + 3 * i, rot + 4 * i, lo[i], scaler, seed, step, i, d);
        for (int a = 0; a < 3; a++) pos[3 * i + a] += d[a];
    }
}

extern "C" gt_status gt_gs_cu_mcmc_reg(const gt_gs_raw *r, double opacity_reg, double scale_reg, gt_gs_raw *g,
                                       void *stream)
{
    if (r->n == 0) return GT_OK;
    k_mcmc_reg<<<gt_grid(r->n, 256, 65536), 256, 0, (cudaStream_t)stream>>>(
        r->n, r->log_scale, r->logit_opacity, (float)opacity_reg, (float)scale_reg, 1.0f / (float)r->n,
        g->logit_opacity, g->log_scale);
    GT_CU_LAUNCH("k_mcmc_reg");
    return GT_OK;
}

extern "C" gt_status gt_gs_cu_mcmc_noise(gt_gs_raw *r, double scaler, uint64_t seed, uint64_t step, void *stream)
{
    if (r->n == 0) return GT_OK;
    k_mcmc_noise<<<gt_grid(r->n, 256, 65536), 256, 0, (cudaStream_t)stream>>>(
        r->n, r->pos, r->log_scale, r->rot, r->logit_opacity, (float)scaler, seed, step);
    GT_CU_LAUNCH("k_mcmc_noise");
    return GT_OK;
}

__global__ void k_clamp01(float *x, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] = fminf(1.0f, fmaxf(0.0f, x[i]));
}

extern "C" gt_status gt_gs_cu_clamp01(float *x, size_t n, void *stream)
{
    if (n == 0) return GT_OK;
    k_clamp01<<<gt_grid(n, 256, 65536), 256, 0, (cudaStream_t)stream>>>(x, n);
    GT_CU_LAUNCH("k_clamp01");
    return GT_OK;
}

__global__ void k_u8(const unsigned char *src, float *dst, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = src[i] * (1.0f / 255.0f);
}

extern "C" gt_status gt_gs_cu_u8_to_float(const unsigned char *src, float *dst, size_t n, void *stream)
{
    if (n == 0) return GT_OK;
    k_u8<<<gt_grid(n, 256, 65536), 256, 0, (cudaStream_t)stream>>>(src, dst, n);
    GT_CU_LAUNCH("k_u8");
    return GT_OK;
}

extern "C" gt_status gt_gs_cu_loss_create(int max_w, int max_h, void *stream, gt_gs_cu_loss **out)
{
    *out = NULL;
    gt_gs_cu_loss *L = (gt_gs_cu_loss *)calloc(1, sizeof *L);
    if (!L) return gt_fail(GT_ERR_RUNTIME, "out of memory (loss workspace)");
    L->stream = (cudaStream_t)stream;
    L->cap = (size_t)max_w * max_h;
    float win[GT_GS_SSIM_WIN];
    gt_gs_ssim_window(win);
    gt_status st = gt_cu_malloc((void **)&L->fac, L->cap * 9 * sizeof(float), "SSIM gradient");
    if (st == GT_OK) st = gt_cu_malloc((void **)&L->sums, GT_GS_CU_LOSS_RING * 3 * sizeof(double), "loss sums");
    if (st == GT_OK)
        st = gt_cu_pinned_alloc((void **)&L->host, GT_GS_CU_LOSS_RING * 3 * sizeof(double), "loss sums (host)");
    if (st == GT_OK)
        st = gt_cu_status_from(cudaMemcpyToSymbol(c_win, win, sizeof win), "cudaMemcpyToSymbol", __FILE__,
                               __LINE__);
    if (st != GT_OK) {
        gt_gs_cu_loss_destroy(L);
        return st;
    }
    *out = L;
    return GT_OK;
}

extern "C" size_t gt_gs_cu_loss_bytes(const gt_gs_cu_loss *L)
{
    return L ? L->cap * 9 * sizeof(float) + GT_GS_CU_LOSS_RING * 3 * sizeof(double) : 0;
}

extern "C" void gt_gs_cu_loss_destroy(gt_gs_cu_loss *L)
{
    if (!L) return;
    gt_cu_free(L->fac);
    gt_cu_free(L->sums);
    gt_cu_pinned_free(L->host);
    free(L);
}

extern "C" gt_status gt_gs_cu_loss_eval(gt_gs_cu_loss *L, const float *x, const float *y, int w, int h,
                                        double lambda, float *dl_dx)
{
    if ((size_t)w * h > L->cap)
        return gt_fail(GT_ERR_RUNTIME, "loss of a %dx%d image in a workspace of %zu pixels", w, h, L->cap);
    if (L->pending >= GT_GS_CU_LOSS_RING)
        return gt_fail(GT_ERR_RUNTIME, "%d loss evaluations queued without a fetch", L->pending);
    size_t n = 3 * (size_t)w * h;
    double *sums = L->sums + 3 * L->pending;
    L->n[L->pending] = (double)n, L->lambda[L->pending] = lambda;
    L->pending++;
    GT_CU(cudaMemsetAsync(sums, 0, 3 * sizeof(double), L->stream));
    dim3 blk(BX, BY), grd((w + OW - 1) / OW, (h + OH - 1) / OH, 3);
    k_ssim_fwd<<<grd, blk, 0, L->stream>>>(x, y, w, h, dl_dx ? L->fac : NULL, (float)(-lambda / (double)n), sums);
    GT_CU_LAUNCH("k_ssim_fwd");
    if (dl_dx) {
        k_ssim_bwd<<<grd, blk, 0, L->stream>>>(x, y, w, h, L->fac, (float)((1.0 - lambda) / (double)n), dl_dx);
        GT_CU_LAUNCH("k_ssim_bwd");
    }
    return GT_OK;
}

extern "C" int gt_gs_cu_loss_pending(const gt_gs_cu_loss *L)
{
    return L->pending;
}

extern "C" gt_status gt_gs_cu_loss_fetch_all(gt_gs_cu_loss *L, gt_gs_cu_loss_value *out, int *count)
{
    int k = L->pending;
    *count = k;
    if (k == 0) return GT_OK;
    L->pending = 0;
    GT_CU(cudaMemcpyAsync(L->host, L->sums, (size_t)k * 3 * sizeof(double), cudaMemcpyDeviceToHost, L->stream));
    GT_CU(cudaStreamSynchronize(L->stream));
    for (int q = 0; q < k; q++) {
        const double *h = L->host + 3 * q;
        double s = h[0] / L->n[q], a = h[1] / L->n[q];
        out[q].ssim = s;
        out[q].l1 = a;
        out[q].loss = (1.0 - L->lambda[q]) * a + L->lambda[q] * (1.0 - s);
        out[q].sse = h[2];
        out[q].n = L->n[q];
    }
    return GT_OK;
}

extern "C" gt_status gt_gs_cu_loss_fetch(gt_gs_cu_loss *L, double *loss, double *l1, double *ssim, double *sse)
{
    gt_gs_cu_loss_value v[GT_GS_CU_LOSS_RING];
    int k = 0;
    GT_TRY(gt_gs_cu_loss_fetch_all(L, v, &k));
    if (k == 0) return gt_fail(GT_ERR_RUNTIME, "no loss evaluation to fetch");
    if (ssim) *ssim = v[k - 1].ssim;
    if (l1) *l1 = v[k - 1].l1;
    if (loss) *loss = v[k - 1].loss;
    if (sse) *sse = v[k - 1].sse;
    return GT_OK;
}

extern "C" gt_status gt_gs_cu_adam(float *p, const float *g, float *m, float *v, size_t n, double lr,
                                   double lr_rest, int period, int t, void *stream)
{
    if (n == 0) return GT_OK;
    float bc1 = (float)(1.0 - pow(GT_GS_ADAM_BETA1, t)), bc2s = (float)sqrt(1.0 - pow(GT_GS_ADAM_BETA2, t));
    k_adam<<<gt_grid(n, 256, 65536), 256, 0, (cudaStream_t)stream>>>(p, g, m, v, n, (float)lr, (float)lr_rest,
                                                                     period, bc1, bc2s);
    GT_CU_LAUNCH("k_adam");
    return GT_OK;
}
