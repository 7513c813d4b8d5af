// The reference training's loss and optimiser on the GPU: L1 + D-SSIM with
// dLoss/dimage (the mathematics of lib/gs/gs_fit_loss.c, in float as the
// reference's PyTorch code), and Adam (lib/gs/gs_fit_adam.c).
//
// The 11x11 Gaussian window is separable, so each convolution is a
// horizontal then a vertical 11-tap pass (zero padding):
//  k_fwd_h   the five products x, y, xx, yy, xy of a pixel's row neighbours,
//            horizontal pass -> 5 planes per channel
//  k_fwd_v   vertical pass -> the moments, the SSIM map, the three
//            per-pixel factors G dS/d(mu_x, e_xx, e_xy) -> 3 planes, and the
//            block sums of S, |x-y|, (x-y)^2 added into three doubles
//  k_bwd_h   horizontal pass of the 3 factor planes
//  k_bwd_v   vertical pass and dL/dx = W(gm) + 2x W(gxx) + y W(gxy) + L1 part
//  k_mcmc_reg, k_mcmc_noise  the MCMC strategy's regularisers and noise
// Launch shape: 32x8 threads per block over (x, y), blockIdx.z the channel;
// the taps are read from global memory (neighbouring threads share them
// through L1).  k_adam, k_u8: grid-stride loops, one thread per element.
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
    float *fwd;   // 15 planes (5 per channel)
    float *fac;   // 9 planes (3 per channel)
    double *sums; // GT_GS_CU_LOSS_RING x 3
    double *host; // pinned, likewise
    int pending;  // evaluations queued since the last fetch (slots 0..pending-1)
    double n[GT_GS_CU_LOSS_RING], lambda[GT_GS_CU_LOSS_RING]; // values per slot
};

__global__ void k_fwd_h(const float *__restrict__ x, const float *__restrict__ y, int w, int h,
                        float *__restrict__ out)
{
    int px = blockIdx.x * BX + threadIdx.x, py = blockIdx.y * BY + threadIdx.y, c = blockIdx.z;
    if (px >= w || py >= h) return;
    size_t np = (size_t)w * h, row = c * np + (size_t)py * w;
    float s[5] = {0, 0, 0, 0, 0};
    for (int k = -R; k <= R; k++) {
        int xx = px + k;
        if (xx < 0 || xx >= w) continue;
        float a = x[row + xx], b = y[row + xx], g = c_win[k + R];
        s[0] += g * a;
        s[1] += g * b;
        s[2] += g * a * a;
        s[3] += g * b * b;
        s[4] += g * a * b;
    }
    size_t o = (size_t)py * w + px;
    for (int q = 0; q < 5; q++) out[(c * 5 + q) * np + o] = s[q];
}

__global__ void k_fwd_v(const float *__restrict__ x, const float *__restrict__ y, int w, int h,
                        const float *__restrict__ in, float *__restrict__ fac, float G, double *sums)
{
    int px = blockIdx.x * BX + threadIdx.x, py = blockIdx.y * BY + threadIdx.y, c = blockIdx.z;
    size_t np = (size_t)w * h;
    float S = 0, ad = 0, sq = 0;
    if (px < w && py < h) {
        float m[5] = {0, 0, 0, 0, 0};
        for (int k = -R; k <= R; k++) {
            int yy = py + k;
            if (yy < 0 || yy >= h) continue;
            float g = c_win[k + R];
            size_t o = (size_t)yy * w + px;
            for (int q = 0; q < 5; q++) m[q] += g * in[(c * 5 + q) * np + o];
        }
        const float C1 = (float)GT_GS_SSIM_C1, C2 = (float)GT_GS_SSIM_C2;
        float m1 = m[0], m2 = m[1];
        float A1 = 2 * m1 * m2 + C1, A2 = 2 * (m[4] - m1 * m2) + C2;
        float B1 = m1 * m1 + m2 * m2 + C1, B2 = (m[2] - m1 * m1) + (m[3] - m2 * m2) + C2;
        float inv = 1.0f / (B1 * B2);
        S = A1 * A2 * inv;
        size_t o = (size_t)py * w + px, i = c * np + o;
        if (fac) {
            fac[(c * 3 + 0) * np + o] = G * (2 * m2 * (A2 - A1) - 2 * m1 * S * (B2 - B1)) * inv;
            fac[(c * 3 + 1) * np + o] = G * (-S / B2);
            fac[(c * 3 + 2) * np + o] = G * (2 * A1 * inv);
        }
        float d = x[i] - y[i];
        ad = fabsf(d);
        sq = d * d;
    }
    // block sums (256 threads): warp shuffles, then one atomic per warp
    for (int off = 16; off > 0; off >>= 1) {
        S += __shfl_down_sync(0xffffffffu, S, off);
        ad += __shfl_down_sync(0xffffffffu, ad, off);
        sq += __shfl_down_sync(0xffffffffu, sq, off);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&sums[0], (double)S);
        atomicAdd(&sums[1], (double)ad);
        atomicAdd(&sums[2], (double)sq);
    }
}

__global__ void k_bwd_h(const float *__restrict__ fac, int w, int h, float *__restrict__ out)
{
    int px = blockIdx.x * BX + threadIdx.x, py = blockIdx.y * BY + threadIdx.y, c = blockIdx.z;
    if (px >= w || py >= h) return;
    size_t np = (size_t)w * h, row = (size_t)py * w;
    float s[3] = {0, 0, 0};
    for (int k = -R; k <= R; k++) {
        int xx = px + k;
        if (xx < 0 || xx >= w) continue;
        float g = c_win[k + R];
        for (int q = 0; q < 3; q++) s[q] += g * fac[(c * 3 + q) * np + row + xx];
    }
    for (int q = 0; q < 3; q++) out[(c * 3 + q) * np + row + px] = s[q];
}

__global__ void k_bwd_v(const float *__restrict__ x, const float *__restrict__ y, int w, int h,
                        const float *__restrict__ in, float gl1, float *__restrict__ dl_dx)
{
    int px = blockIdx.x * BX + threadIdx.x, py = blockIdx.y * BY + threadIdx.y, c = blockIdx.z;
    if (px >= w || py >= h) return;
    size_t np = (size_t)w * h;
    float s[3] = {0, 0, 0};
    for (int k = -R; k <= R; k++) {
        int yy = py + k;
        if (yy < 0 || yy >= h) continue;
        float g = c_win[k + R];
        for (int q = 0; q < 3; q++) s[q] += g * in[(c * 3 + q) * np + (size_t)yy * w + px];
    }
    size_t i = c * np + (size_t)py * w + px;
    float d = x[i] - y[i];
    float sg = d > 0 ? 1.0f : d < 0 ? -1.0f : 0.0f;
    dl_dx[i] = s[0] + 2 * x[i] * s[1] + y[i] * s[2] + gl1 * sg;
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
    gt_status st = gt_cu_malloc((void **)&L->fwd, L->cap * 15 * sizeof(float), "SSIM moments");
    if (st == GT_OK) st = gt_cu_malloc((void **)&L->fac, L->cap * 9 * sizeof(float), "SSIM gradient");
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
    return L ? L->cap * 24 * sizeof(float) + GT_GS_CU_LOSS_RING * 3 * sizeof(double) : 0;
}

extern "C" void gt_gs_cu_loss_destroy(gt_gs_cu_loss *L)
{
    if (!L) return;
    gt_cu_free(L->fwd);
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
    dim3 blk(BX, BY), grd((w + BX - 1) / BX, (h + BY - 1) / BY, 3);
    k_fwd_h<<<grd, blk, 0, L->stream>>>(x, y, w, h, L->fwd);
    GT_CU_LAUNCH("k_fwd_h");
    k_fwd_v<<<grd, blk, 0, L->stream>>>(x, y, w, h, L->fwd, dl_dx ? L->fac : NULL,
                                        (float)(-lambda / (double)n), sums);
    GT_CU_LAUNCH("k_fwd_v");
    if (dl_dx) {
        k_bwd_h<<<grd, blk, 0, L->stream>>>(L->fac, w, h, L->fwd);
        GT_CU_LAUNCH("k_bwd_h");
        k_bwd_v<<<grd, blk, 0, L->stream>>>(x, y, w, h, L->fwd, (float)((1.0 - lambda) / (double)n), dl_dx);
        GT_CU_LAUNCH("k_bwd_v");
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
