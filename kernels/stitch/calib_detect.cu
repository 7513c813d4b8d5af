// Feature detection and description for the calibration on the GPU: the
// same function as gt_calib_detect_cpu (lib/stitch/calib_detect.c), with the
// per-pixel and per-keypoint math from stitch/calib_math.h, so the keypoints
// and descriptors are the same bit for bit:
//   per level: reduce (5x5 binomial at even positions), the descriptors'
//   image (two binomial passes), FAST-9 + Harris response per pixel, 3x3
//   non-maximum suppression appending candidates with an atomic counter
//   (their order does not matter: the host's selection sorts them);
//   host: gt_calib_select (the CPU's selection code);
//   per keypoint: orientation bin and the 256 steered comparisons.
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "stitch/calib.h"

namespace {

__constant__ gt_calib_tables c_tab;

struct levels_t {
    int L;
    int w[GT_CALIB_MAX_LEVELS], h[GT_CALIB_MAX_LEVELS];
    const uint8_t *img[GT_CALIB_MAX_LEVELS], *sm[GT_CALIB_MAX_LEVELS];
};

__global__ void k_reduce(const uint8_t *__restrict__ src, int sw, int sh, uint8_t *__restrict__ dst, int dw, int dh)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= dw || y >= dh) return;
    dst[(long long)y * dw + x] = gt_cm_binomial5(src, sw, sw, sh, 2 * x, 2 * y);
}

__global__ void k_blur(const uint8_t *__restrict__ src, int w, int h, uint8_t *__restrict__ dst)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    dst[(long long)y * w + x] = gt_cm_binomial5(src, w, w, h, x, y);
}

// response map: Harris (clamped at 0) where FAST-9 holds inside the border, 0 elsewhere
__global__ void k_score(const uint8_t *__restrict__ img, int w, int h, int t, long long *__restrict__ S)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    const int B = GT_CM_BORDER;
    long long s = 0;
    if (x >= B && y >= B && x < w - B && y < h - B && gt_cm_fast9(img, w, x, y, t)) {
        long long r = gt_cm_harris(img, w, x, y);
        s = r > 0 ? r : 0;
    }
    S[(long long)y * w + x] = s;
}

__global__ void k_nms(const uint8_t *__restrict__ img, const long long *__restrict__ S, int w, int h, int level,
                      gt_calib_cand *__restrict__ out, unsigned int *__restrict__ count, unsigned int cap)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    const int B = GT_CM_BORDER;
    if (x < B || y < B || x >= w - B || y >= h - B) return;
    long long s = S[(long long)y * w + x];
    if (s <= 0) return;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            if (!dx && !dy) continue;
            long long q = S[(long long)(y + dy) * w + x + dx];
            bool after = dy > 0 || (dy == 0 && dx > 0);
            if (q > s || (q == s && !after)) return;
        }
    unsigned int k = atomicAdd(count, 1u);
    if (k >= cap) return;
    double ox = gt_cm_subpixel(gt_cm_harris(img, w, x - 1, y), s, gt_cm_harris(img, w, x + 1, y));
    double oy = gt_cm_subpixel(gt_cm_harris(img, w, x, y - 1), s, gt_cm_harris(img, w, x, y + 1));
    gt_calib_cand c;
    c.x = x, c.y = y, c.level = level, c.pad = 0;
    c.score = s;
    c.fx = (float)(((double)x + ox) * (double)(1 << level));
    c.fy = (float)(((double)y + oy) * (double)(1 << level));
    out[k] = c;
}

__global__ void k_describe(const levels_t lv, gt_calib_kp *__restrict__ kp, int n, uint8_t *__restrict__ desc)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    gt_calib_kp q = kp[k];
    int l = q.level;
    int a = gt_cm_orientation(&c_tab, lv.img[l], lv.w[l], q.lx, q.ly);
    kp[k].angle = a;
    for (int b = 0; b < GT_CALIB_DESC; b++)
        desc[(long long)k * GT_CALIB_DESC + b] = gt_cm_brief_byte(&c_tab, a, b, lv.sm[l], lv.w[l], q.lx, q.ly);
}

struct work_t {
    uint8_t *img[GT_CALIB_MAX_LEVELS], *sm[GT_CALIB_MAX_LEVELS], *tmp;
    long long *S;
    gt_calib_cand *cand;
    unsigned int *count;
    gt_calib_kp *kp;
    uint8_t *desc;
    gt_calib_cand *h_cand;
};

void work_free(work_t *w)
{
    for (int l = 0; l < GT_CALIB_MAX_LEVELS; l++) {
        gt_cu_free(w->img[l]);
        gt_cu_free(w->sm[l]);
    }
    gt_cu_free(w->tmp);
    gt_cu_free(w->S);
    gt_cu_free(w->cand);
    gt_cu_free(w->count);
    gt_cu_free(w->kp);
    gt_cu_free(w->desc);
    free(w->h_cand);
}

dim3 grid2(int w, int h, dim3 b)
{
    return dim3((w + b.x - 1) / b.x, (h + b.y - 1) / b.y);
}

gt_status detect(const uint8_t *y, int w, int h, int pitch, const gt_calib_detect_opts *o, gt_calib_feat *f,
                 work_t *W)
{
    const gt_calib_tables *T = gt_calib_tables_get();
    GT_CU(cudaMemcpyToSymbol(c_tab, T, sizeof *T));
    levels_t lv;
    memset(&lv, 0, sizeof lv);
    lv.L = gt_calib_levels(w, h, o->levels);
    if (lv.L == 0)
        return gt_fail(GT_ERR_DATA, "image %dx%d is too small for features (at least %d pixels a side)", w, h,
                       2 * GT_CM_BORDER + 16);
    int t = o->fast_threshold > 0 ? o->fast_threshold : gt_calib_fast_threshold(y, w, h, pitch);
    dim3 b(32, 8);
    size_t cap = 0;
    for (int l = 0; l < lv.L; l++) {
        lv.w[l] = l ? (lv.w[l - 1] + 1) / 2 : w;
        lv.h[l] = l ? (lv.h[l - 1] + 1) / 2 : h;
        size_t n = (size_t)lv.w[l] * lv.h[l];
        cap += n / 4 + 16; // 3x3 maxima with the tie rule are at most one in four pixels
        GT_TRY(gt_cu_malloc((void **)&W->img[l], n, "feature pyramid"));
        GT_TRY(gt_cu_malloc((void **)&W->sm[l], n, "feature pyramid"));
        lv.img[l] = W->img[l];
        lv.sm[l] = W->sm[l];
    }
    GT_TRY(gt_cu_malloc((void **)&W->tmp, (size_t)w * h, "feature pyramid"));
    GT_TRY(gt_cu_malloc((void **)&W->S, (size_t)w * h * sizeof(long long), "corner responses"));
    GT_TRY(gt_cu_malloc((void **)&W->cand, cap * sizeof(gt_calib_cand), "corner candidates"));
    GT_TRY(gt_cu_malloc((void **)&W->count, sizeof(unsigned int), "corner count"));
    GT_CU(cudaMemset(W->count, 0, sizeof(unsigned int)));
    GT_CU(cudaMemcpy2D(W->img[0], w, y, pitch, w, h, cudaMemcpyHostToDevice));
    for (int l = 0; l < lv.L; l++) {
        int lw = lv.w[l], lh = lv.h[l];
        if (l) {
            k_reduce<<<grid2(lw, lh, b), b>>>(W->img[l - 1], lv.w[l - 1], lv.h[l - 1], W->img[l], lw, lh);
            GT_CU_LAUNCH("calib reduce");
        }
        k_blur<<<grid2(lw, lh, b), b>>>(W->img[l], lw, lh, W->tmp);
        GT_CU_LAUNCH("calib blur");
        k_blur<<<grid2(lw, lh, b), b>>>(W->tmp, lw, lh, W->sm[l]);
        GT_CU_LAUNCH("calib blur");
        k_score<<<grid2(lw, lh, b), b>>>(W->img[l], lw, lh, t, W->S);
        GT_CU_LAUNCH("calib score");
        k_nms<<<grid2(lw, lh, b), b>>>(W->img[l], W->S, lw, lh, l, W->cand, W->count, (unsigned int)cap);
        GT_CU_LAUNCH("calib nms");
    }
    unsigned int count;
    GT_CU(cudaMemcpy(&count, W->count, sizeof count, cudaMemcpyDeviceToHost));
    if (count > cap) return gt_fail(GT_ERR_RUNTIME, "corner candidates overflow (%u > %zu)", count, cap);
    W->h_cand = (gt_calib_cand *)malloc(((size_t)count + 1) * sizeof(gt_calib_cand));
    int maxf = o->max_features > 0 ? o->max_features : 2000;
    f->kp = (gt_calib_kp *)malloc((size_t)maxf * sizeof(gt_calib_kp));
    f->desc = (uint8_t *)malloc((size_t)maxf * GT_CALIB_DESC);
    if (!W->h_cand || !f->kp || !f->desc) return gt_fail(GT_ERR_RUNTIME, "out of memory (keypoints)");
    GT_CU(cudaMemcpy(W->h_cand, W->cand, (size_t)count * sizeof(gt_calib_cand), cudaMemcpyDeviceToHost));
    f->n = gt_calib_select(W->h_cand, (int)count, lv.L, lv.w, lv.h, maxf, f->kp);
    if (f->n < 0) return gt_fail(GT_ERR_RUNTIME, "out of memory (keypoint selection)");
    if (f->n == 0) return GT_OK;
    GT_TRY(gt_cu_malloc((void **)&W->kp, (size_t)f->n * sizeof(gt_calib_kp), "keypoints"));
    GT_TRY(gt_cu_malloc((void **)&W->desc, (size_t)f->n * GT_CALIB_DESC, "descriptors"));
    GT_CU(cudaMemcpy(W->kp, f->kp, (size_t)f->n * sizeof(gt_calib_kp), cudaMemcpyHostToDevice));
    k_describe<<<(f->n + 127) / 128, 128>>>(lv, W->kp, f->n, W->desc);
    GT_CU_LAUNCH("calib describe");
    GT_CU(cudaMemcpy(f->kp, W->kp, (size_t)f->n * sizeof(gt_calib_kp), cudaMemcpyDeviceToHost));
    GT_CU(cudaMemcpy(f->desc, W->desc, (size_t)f->n * GT_CALIB_DESC, cudaMemcpyDeviceToHost));
    return GT_OK;
}

} // namespace

extern "C" gt_status gt_calib_detect_gpu(const uint8_t *y, int w, int h, int pitch, const gt_calib_detect_opts *o,
                                         gt_calib_feat *f)
{
    memset(f, 0, sizeof *f);
    work_t W;
    memset(&W, 0, sizeof W);
    gt_status st = detect(y, w, h, pitch, o, f, &W);
    work_free(&W);
    if (st) gt_calib_feat_free(f);
    return st;
}
