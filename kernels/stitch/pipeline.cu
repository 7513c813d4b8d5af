// The streaming GPU stitcher behind gt_stitch_gpu_* (lib/stitch/stitch.h):
// plan data resident on the device, two slots of pinned host buffers and
// device frame buffers, three streams (upload, compute, download) chained by
// events so that the upload of frame k+1 and the download of frame k-1 run
// while frame k is computed.
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/stitch/stitch_cu.h"
#include "common/log.h"
#include "common/pin_prefault.h"
#include "common/timer.h"
#include "stitch/stitch.h"

namespace {
enum { EV_UP0, EV_UP1, EV_C0, EV_WARP1, EV_BLEND1, EV_DN0, EV_DN1, EV_COUNT };
}

struct gt_stitch_gpu {
    const gt_stitch_plan *plan;     // NULL while only the slots exist (gt_stitch_gpu_prealloc)
    int ncam;                       // the slots' sizes
    size_t in_bytes, out_bytes;
    gt_sk_plane kp[3];
    uint8_t *d_owner[3];
    float *d_weight[3];
    float *d_mbw[3];                // all levels of one plane, level k at mb_off[p][k] * ncam
    size_t mb_off[3][GT_STITCH_MAX_BANDS], mb_total[3];
    float *d_G[3], *d_B[3];         // multiband scratch per plane (ncam pyramids, one blended pyramid)
    float *d_tab[3], *d_cam[3];     // rays: the planes' tables and camera parameters
    gt_sk_boxes wbox[3][GT_STITCH_MAX_BANDS]; // per level: where camera i's mask weight is nonzero
    gt_sk_boxes gbox[3][GT_STITCH_MAX_BANDS]; // per level: where camera i's Gaussian level is needed
    uint8_t *h_in[GT_STITCH_SLOTS], *h_out[GT_STITCH_SLOTS]; // pinned
    uint8_t *d_in[GT_STITCH_SLOTS], *d_out[GT_STITCH_SLOTS];
    cudaStream_t s_up, s_comp, s_dn;
    cudaEvent_t ev[GT_STITCH_SLOTS][EV_COUNT];
    cudaEvent_t ev_comp_done[GT_STITCH_SLOTS], ev_dn_done[GT_STITCH_SLOTS];
    bool busy[GT_STITCH_SLOTS];
    double stage[4];
    long frames;
};

static gt_status upload(void **dst, const void *src, size_t bytes, const char *what)
{
    GT_TRY(gt_cu_malloc(dst, bytes, what));
    GT_CU(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice));
    return GT_OK;
}

// ncam images of w x h floats where image i is 0 outside box[i] ({x0, y0,
// x1, y1}, x1 < x0: all 0): zeroed on the device, then each box copied
static gt_status upload_boxes(float **dst, const float *src, int w, int h, int ncam, const int (*box)[4],
                              const char *what)
{
    size_t n = (size_t)w * h;
    GT_TRY(gt_cu_malloc((void **)dst, n * ncam * sizeof(float), what));
    GT_CU(cudaMemset(*dst, 0, n * ncam * sizeof(float)));
    for (int i = 0; i < ncam; i++) {
        const int *b = box[i];
        if (b[2] < b[0] || b[3] < b[1]) continue;
        size_t o = n * i + (size_t)b[1] * w + (size_t)b[0];
        GT_CU(cudaMemcpy2D(*dst + o, w * sizeof(float), src + o, w * sizeof(float),
                           (size_t)(b[2] - b[0] + 1) * sizeof(float), (size_t)(b[3] - b[1] + 1),
                           cudaMemcpyHostToDevice));
    }
    return GT_OK;
}

static void to_kview(const gt_plane_view *v, gt_sk_view *k)
{
    k->off = (long long)v->off;
    k->pitch = v->pitch;
    k->step = v->step;
    k->w = v->w;
    k->h = v->h;
}

// ---- multiband footprints
// Camera i contributes fmaf(w_i, L_i, acc) to the blended level; where w_i is
// exactly 0 that is acc itself (up to the sign of a zero, which quantises the
// same), so camera i's Laplacian is only needed inside W_l (bounding box of
// w_i != 0 at level l), and its Gaussian level l only inside
//   NG_l = W_l  U  expand-support(W_{l-1})  U  reduce-support(NG_{l+1}).
// Supports, for an output range [a, b] (per axis, separable):
//   reduce (5 taps at 2x-2..2x+2, reflect-101): inputs [2a-2, 2b+2];
//   expand (coarse (x>>1)-1..(x>>1)+1, reflect-101): coarse [(a>>1)-1, (b>>1)+1];
// reflect-101 maps an index just outside [0, n) back inside the same hull
// (n >= 4 for every reduce input; levels of 8 or fewer samples along an axis
// are taken whole to stay clear of repeated reflections). Values the kernels
// compute outside these boxes (tiles that straddle a border) read stale but
// finite data (the buffers are zeroed once) and are only ever multiplied by
// a zero weight.
namespace {
struct ibox {
    int x0, y0, x1, y1;
};
bool box_empty(const ibox &b) { return b.x0 > b.x1 || b.y0 > b.y1; }
ibox box_union(const ibox &a, const ibox &b)
{
    if (box_empty(a)) return b;
    if (box_empty(b)) return a;
    ibox r = {a.x0 < b.x0 ? a.x0 : b.x0, a.y0 < b.y0 ? a.y0 : b.y0, a.x1 > b.x1 ? a.x1 : b.x1,
              a.y1 > b.y1 ? a.y1 : b.y1};
    return r;
}
ibox box_clamp(ibox b, int w, int h)
{
    if (box_empty(b)) return b;
    if (b.x0 < 0 || w <= 8) b.x0 = 0;
    if (b.y0 < 0 || h <= 8) b.y0 = 0;
    if (b.x1 > w - 1 || w <= 8) b.x1 = w - 1;
    if (b.y1 > h - 1 || h <= 8) b.y1 = h - 1;
    return b;
}
void set_box(gt_sk_boxes *s, int i, const ibox &b)
{
    s->x0[i] = b.x0;
    s->y0[i] = b.y0;
    s->x1[i] = b.x1;
    s->y1[i] = b.y1;
}
} // namespace

static void multiband_boxes(const gt_stitch_plane *pl, int N, gt_sk_boxes *wbox, gt_sk_boxes *gbox)
{
    int L = pl->levels;
    memset(wbox, 0, sizeof *wbox * GT_STITCH_MAX_BANDS);
    memset(gbox, 0, sizeof *gbox * GT_STITCH_MAX_BANDS);
    for (int i = 0; i < N; i++) {
        ibox W[GT_STITCH_MAX_BANDS], NG[GT_STITCH_MAX_BANDS];
        for (int l = 0; l < L; l++) {
            const int *b = pl->mbbox[l][i];
            W[l] = ibox{b[0], b[1], b[2], b[3]};
        }
        for (int l = L - 1; l >= 0; l--) {
            int w = pl->lw[l], h = pl->lh[l];
            NG[l] = box_clamp(W[l], w, h);
            if (l >= 1 && !box_empty(W[l - 1])) {
                ibox e = {(W[l - 1].x0 >> 1) - 1, (W[l - 1].y0 >> 1) - 1, (W[l - 1].x1 >> 1) + 1,
                          (W[l - 1].y1 >> 1) + 1};
                NG[l] = box_union(NG[l], box_clamp(e, w, h));
            }
            if (l + 1 < L && !box_empty(NG[l + 1])) {
                const ibox &c = NG[l + 1];
                ibox r = {2 * c.x0 - 2, 2 * c.y0 - 2, 2 * c.x1 + 2, 2 * c.y1 + 2};
                NG[l] = box_union(NG[l], box_clamp(r, w, h));
            }
        }
        for (int l = 0; l < L; l++) {
            set_box(&wbox[l], i, W[l]);
            set_box(&gbox[l], i, NG[l]);
        }
    }
}

extern "C" void gt_stitch_gpu_prefault(int ncam, size_t in_bytes, size_t out_bytes)
{
    for (int s = 0; s < GT_STITCH_SLOTS; s++) { // the pinned blocks of create_slots
        gt_pin_prefault(in_bytes * ncam);
        gt_pin_prefault(out_bytes);
    }
}

// The plan-free part: pinned and device frame buffers, events and streams.
static gt_status create_slots(gt_stitch_gpu *g, int N, size_t in_bytes, size_t out_bytes)
{
    g->ncam = N;
    g->in_bytes = in_bytes;
    g->out_bytes = out_bytes;
    double t0 = gt_now_ms();
    for (int s = 0; s < GT_STITCH_SLOTS; s++) {
        GT_TRY(gt_cu_pinned_alloc((void **)&g->h_in[s], in_bytes * N, "input frames"));
        GT_TRY(gt_cu_pinned_alloc((void **)&g->h_out[s], out_bytes, "output frame"));
        GT_TRY(gt_cu_malloc((void **)&g->d_in[s], in_bytes * N, "input frames"));
        GT_TRY(gt_cu_malloc((void **)&g->d_out[s], out_bytes, "output frame"));
        for (int e = 0; e < EV_COUNT; e++) GT_CU(cudaEventCreate(&g->ev[s][e]));
        GT_CU(cudaEventCreateWithFlags(&g->ev_comp_done[s], cudaEventDisableTiming));
        GT_CU(cudaEventCreateWithFlags(&g->ev_dn_done[s], cudaEventDisableTiming));
    }
    GT_CU(cudaStreamCreateWithFlags(&g->s_up, cudaStreamNonBlocking));
    GT_CU(cudaStreamCreateWithFlags(&g->s_comp, cudaStreamNonBlocking));
    GT_CU(cudaStreamCreateWithFlags(&g->s_dn, cudaStreamNonBlocking));
    gt_info("GPU setup: %d slots (pinned, device) %.1f ms", GT_STITCH_SLOTS, gt_now_ms() - t0);
    return GT_OK;
}

// The plan's part: owner maps, weights, mask pyramids, multiband scratch.
static gt_status create_plan(const gt_stitch_plan *plan, gt_stitch_gpu *g)
{
    int N = plan->ncam;
    g->plan = plan;
    double t0 = gt_now_ms();
    for (int p = 0; p < 3; p++) {
        const gt_stitch_plane *pl = &plan->plane[p];
        gt_sk_plane *k = &g->kp[p];
        to_kview(&pl->in, &k->in);
        to_kview(&pl->out, &k->out);
        k->ncam = N;
        k->in_bytes = (long long)plan->in_bytes;
        memcpy(k->P, pl->P, sizeof k->P);
        k->ray = pl->ray;
        if (pl->ray) {
            GT_TRY(upload((void **)&g->d_tab[p], pl->tab, 2 * ((size_t)pl->out.w + pl->out.h) * sizeof(float),
                          "projection tables"));
            GT_TRY(upload((void **)&g->d_cam[p], pl->cam, sizeof pl->cam, "camera parameters"));
            k->tab = g->d_tab[p];
            k->cam = g->d_cam[p];
        }
        memcpy(k->gain, pl->gain, sizeof k->gain);
        memcpy(k->bias, pl->bias, sizeof k->bias);
        k->black = pl->black;
        size_t n = (size_t)pl->out.w * pl->out.h;
        GT_TRY(upload((void **)&g->d_owner[p], pl->owner, n, "owner map"));
        if (plan->blend == GT_BLEND_FEATHER)
            GT_TRY(upload_boxes(&g->d_weight[p], pl->weight, pl->out.w, pl->out.h, N, pl->wbox, "feather weights"));
        if (plan->blend == GT_BLEND_MULTIBAND) {
            size_t t = 0;
            for (int l = 0; l < pl->levels; l++) {
                g->mb_off[p][l] = t;
                t += (size_t)pl->lw[l] * pl->lh[l];
            }
            g->mb_total[p] = t;
            multiband_boxes(pl, N, g->wbox[p], g->gbox[p]);
            // built here from the owner map (mask_pyramid.cu), the plan's
            // host pyramids' bits without their transfer
            GT_TRY(gt_cu_malloc((void **)&g->d_mbw[p], t * N * sizeof(float), "mask pyramid"));
            GT_CU(cudaMemset(g->d_mbw[p], 0, t * N * sizeof(float)));
            GT_TRY(gt_sk_mask_pyramid(g->d_owner[p], N, pl->levels, pl->lw, pl->lh, g->mb_off[p], g->wbox[p],
                                      g->d_mbw[p], NULL));
        }
    }
    double t1 = gt_now_ms();
    if (plan->blend == GT_BLEND_MULTIBAND) {
        for (int p = 0; p < 3; p++) {
            GT_TRY(gt_cu_malloc((void **)&g->d_G[p], g->mb_total[p] * N * sizeof(float), "multiband pyramids"));
            GT_TRY(gt_cu_malloc((void **)&g->d_B[p], g->mb_total[p] * sizeof(float), "multiband pyramid"));
            // the footprint restriction relies on finite data everywhere in G
            GT_CU(cudaMemset(g->d_G[p], 0, g->mb_total[p] * N * sizeof(float)));
        }
        GT_CU(cudaDeviceSynchronize()); // the memsets are done before any work on the non-blocking streams
    }
    gt_info("GPU setup: plan upload and mask pyramids %.1f ms, multiband buffers %.1f ms", t1 - t0,
            gt_now_ms() - t1);
    return GT_OK;
}

extern "C" gt_status gt_stitch_gpu_masks(gt_stitch_gpu *g, int p, int k, float *out)
{
    if (!g->plan || g->plan->blend != GT_BLEND_MULTIBAND || p < 0 || p > 2 || k < 0 ||
        k >= g->plan->plane[p].levels)
        return gt_fail(GT_ERR_USAGE, "no multiband mask level %d of plane %d", k, p);
    const gt_stitch_plane *pl = &g->plan->plane[p];
    size_t n = (size_t)pl->lw[k] * pl->lh[k] * g->ncam;
    GT_CU(cudaMemcpy(out, g->d_mbw[p] + g->mb_off[p][k] * g->ncam, n * sizeof(float), cudaMemcpyDeviceToHost));
    return GT_OK;
}

extern "C" void gt_stitch_gpu_destroy(gt_stitch_gpu *g)
{
    if (!g) return;
    if (g->s_up) cudaStreamSynchronize(g->s_up);
    if (g->s_comp) cudaStreamSynchronize(g->s_comp);
    if (g->s_dn) cudaStreamSynchronize(g->s_dn);
    for (int p = 0; p < 3; p++) {
        gt_cu_free(g->d_owner[p]);
        gt_cu_free(g->d_weight[p]);
        gt_cu_free(g->d_mbw[p]);
        gt_cu_free(g->d_G[p]);
        gt_cu_free(g->d_B[p]);
        gt_cu_free(g->d_tab[p]);
        gt_cu_free(g->d_cam[p]);
    }
    for (int s = 0; s < GT_STITCH_SLOTS; s++) {
        gt_cu_pinned_free(g->h_in[s]);
        gt_cu_pinned_free(g->h_out[s]);
        gt_cu_free(g->d_in[s]);
        gt_cu_free(g->d_out[s]);
        for (int e = 0; e < EV_COUNT; e++)
            if (g->ev[s][e]) cudaEventDestroy(g->ev[s][e]);
        if (g->ev_comp_done[s]) cudaEventDestroy(g->ev_comp_done[s]);
        if (g->ev_dn_done[s]) cudaEventDestroy(g->ev_dn_done[s]);
    }
    if (g->s_up) cudaStreamDestroy(g->s_up);
    if (g->s_comp) cudaStreamDestroy(g->s_comp);
    if (g->s_dn) cudaStreamDestroy(g->s_dn);
    free(g);
}

extern "C" gt_status gt_stitch_gpu_prealloc(int ncam, size_t in_bytes, size_t out_bytes, gt_stitch_gpu **out)
{
    *out = NULL;
    if (ncam < 1 || ncam > GT_SK_MAX_CAMS) return gt_fail(GT_ERR_USAGE, "too many cameras");
    gt_stitch_gpu *g = (gt_stitch_gpu *)calloc(1, sizeof *g);
    if (!g) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    gt_status st = create_slots(g, ncam, in_bytes, out_bytes);
    if (st) {
        gt_stitch_gpu_destroy(g);
        return st;
    }
    *out = g;
    return GT_OK;
}

extern "C" gt_status gt_stitch_gpu_create_from(gt_stitch_gpu *pre, const gt_stitch_plan *plan, gt_stitch_gpu **out)
{
    *out = NULL;
    if (pre->plan || pre->ncam != plan->ncam || pre->in_bytes != plan->in_bytes || pre->out_bytes != plan->out_bytes) {
        gt_stitch_gpu_destroy(pre);
        return gt_fail(GT_ERR_USAGE, "gt_stitch_gpu_create_from: the buffers do not fit the plan");
    }
    gt_status st = create_plan(plan, pre);
    if (st) {
        gt_stitch_gpu_destroy(pre);
        return st;
    }
    *out = pre;
    return GT_OK;
}

extern "C" gt_status gt_stitch_gpu_create(const gt_stitch_plan *plan, gt_stitch_gpu **out)
{
    *out = NULL;
    if (plan->ncam > GT_SK_MAX_CAMS) return gt_fail(GT_ERR_USAGE, "too many cameras");
    gt_stitch_gpu *pre;
    GT_TRY(gt_stitch_gpu_prealloc(plan->ncam, plan->in_bytes, plan->out_bytes, &pre));
    return gt_stitch_gpu_create_from(pre, plan, out);
}

extern "C" uint8_t *gt_stitch_gpu_in_buf(gt_stitch_gpu *g, int slot, int cam)
{
    return g->h_in[slot] + (size_t)cam * g->in_bytes;
}
extern "C" uint8_t *gt_stitch_gpu_out_buf(gt_stitch_gpu *g, int slot)
{
    return g->h_out[slot];
}

static gt_status compute(gt_stitch_gpu *g, const uint8_t *din, uint8_t *dout, cudaEvent_t ev_warp_done)
{
    const gt_stitch_plan *plan = g->plan;
    cudaStream_t s = g->s_comp;
    bool packed = plan->fmt == GT_PIX_YUYV422 || plan->fmt == GT_PIX_UYVY422;
    if (plan->blend != GT_BLEND_MULTIBAND) {
        // warp and blend are one fused pass: the blend stage reads 0
        GT_CU(cudaEventRecord(ev_warp_done, s));
        if (packed) {
            const uint8_t *ow[3] = {g->d_owner[0], g->d_owner[1], g->d_owner[2]};
            const float *wt[3] = {g->d_weight[0], g->d_weight[1], g->d_weight[2]};
            return gt_sk_warp_blend_packed(g->kp, plan->fmt == GT_PIX_UYVY422, din, ow, wt, dout, s);
        }
        for (int p = 0; p < 3; p++)
            GT_TRY(gt_sk_warp_blend_plane(&g->kp[p], din, g->d_owner[p], g->d_weight[p], dout, s));
        return GT_OK;
    }
    int N = plan->ncam;
    // warp all planes of all cameras first (the warp stage), then blend
    for (int p = 0; p < 3; p++) GT_TRY(gt_sk_warp_float(&g->kp[p], din, &g->gbox[p][0], g->d_G[p], s));
    GT_CU(cudaEventRecord(ev_warp_done, s));
    for (int p = 0; p < 3; p++) {
        const gt_stitch_plane *pl = &plan->plane[p];
        float *G = g->d_G[p], *B = g->d_B[p];
        int L = pl->levels;
        const size_t *off = g->mb_off[p];
        for (int l = 1; l < L; l++)
            GT_TRY(gt_sk_reduce(G + off[l - 1] * N, pl->lw[l - 1], pl->lh[l - 1], G + off[l] * N, N,
                                &g->gbox[p][l], s));
        for (int l = 0; l < L; l++) {
            const float *coarse = l + 1 < L ? G + off[l + 1] * N : NULL;
            GT_TRY(gt_sk_level(G + off[l] * N, coarse, g->d_mbw[p] + off[l] * N, N, B + off[l], pl->lw[l], pl->lh[l],
                               l + 1 < L ? pl->lw[l + 1] : 0, l + 1 < L ? pl->lh[l + 1] : 0, &g->wbox[p][l], s));
        }
        for (int l = L - 2; l >= 0; l--)
            GT_TRY(gt_sk_level(NULL, B + off[l + 1], NULL, N, B + off[l], pl->lw[l], pl->lh[l], pl->lw[l + 1],
                               pl->lh[l + 1], NULL, s));
        GT_TRY(gt_sk_store(&g->kp[p], B, g->d_owner[p], dout, s));
    }
    return GT_OK;
}

extern "C" gt_status gt_stitch_gpu_submit(gt_stitch_gpu *g, int slot)
{
    const gt_stitch_plan *plan = g->plan;
    size_t inb = plan->in_bytes * plan->ncam;
    cudaEvent_t *ev = g->ev[slot];
    // upload: d_in[slot] is free once the last compute that read it is done
    if (g->busy[slot]) return gt_fail(GT_ERR_RUNTIME, "stitch slot %d submitted twice", slot);
    GT_CU(cudaStreamWaitEvent(g->s_up, g->ev_comp_done[slot], 0));
    GT_CU(cudaEventRecord(ev[EV_UP0], g->s_up));
    GT_CU(cudaMemcpyAsync(g->d_in[slot], g->h_in[slot], inb, cudaMemcpyHostToDevice, g->s_up));
    GT_CU(cudaEventRecord(ev[EV_UP1], g->s_up));
    // compute: after the upload, and after the previous download of d_out[slot]
    GT_CU(cudaStreamWaitEvent(g->s_comp, ev[EV_UP1], 0));
    GT_CU(cudaStreamWaitEvent(g->s_comp, g->ev_dn_done[slot], 0));
    GT_CU(cudaEventRecord(ev[EV_C0], g->s_comp));
    GT_TRY(compute(g, g->d_in[slot], g->d_out[slot], ev[EV_WARP1]));
    GT_CU(cudaEventRecord(ev[EV_BLEND1], g->s_comp));
    GT_CU(cudaEventRecord(g->ev_comp_done[slot], g->s_comp));
    // download
    GT_CU(cudaStreamWaitEvent(g->s_dn, g->ev_comp_done[slot], 0));
    GT_CU(cudaEventRecord(ev[EV_DN0], g->s_dn));
    GT_CU(cudaMemcpyAsync(g->h_out[slot], g->d_out[slot], plan->out_bytes, cudaMemcpyDeviceToHost, g->s_dn));
    GT_CU(cudaEventRecord(ev[EV_DN1], g->s_dn));
    GT_CU(cudaEventRecord(g->ev_dn_done[slot], g->s_dn));
    g->busy[slot] = true;
    return GT_OK;
}

extern "C" gt_status gt_stitch_gpu_wait(gt_stitch_gpu *g, int slot)
{
    if (!g->busy[slot]) return GT_OK;
    cudaEvent_t *ev = g->ev[slot];
    GT_CU(cudaEventSynchronize(ev[EV_DN1]));
    g->busy[slot] = false;
    float t[4];
    GT_CU(cudaEventElapsedTime(&t[0], ev[EV_UP0], ev[EV_UP1]));
    GT_CU(cudaEventElapsedTime(&t[1], ev[EV_C0], ev[EV_WARP1]));
    GT_CU(cudaEventElapsedTime(&t[2], ev[EV_WARP1], ev[EV_BLEND1]));
    GT_CU(cudaEventElapsedTime(&t[3], ev[EV_DN0], ev[EV_DN1]));
    for (int k = 0; k < 4; k++) g->stage[k] += t[k];
    g->frames++;
    return GT_OK;
}

// the kernels take the planes by value at launch: frames submitted after
// this call use the new gains
extern "C" void gt_stitch_gpu_set_gains(gt_stitch_gpu *g)
{
    for (int p = 0; p < 3; p++) {
        memcpy(g->kp[p].gain, g->plan->plane[p].gain, sizeof g->kp[p].gain);
        memcpy(g->kp[p].bias, g->plan->plane[p].bias, sizeof g->kp[p].bias);
    }
}

extern "C" void gt_stitch_gpu_stage_ms(gt_stitch_gpu *g, double ms[4], long *frames)
{
    for (int k = 0; k < 4; k++) ms[k] = g->frames ? g->stage[k] / g->frames : 0.0;
    *frames = g->frames;
}

extern "C" gt_status gt_stitch_gpu_frame(gt_stitch_gpu *g, const uint8_t *const *in, uint8_t *out)
{
    const gt_stitch_plan *plan = g->plan;
    GT_TRY(gt_stitch_gpu_wait(g, 0));
    for (int i = 0; i < plan->ncam; i++) memcpy(gt_stitch_gpu_in_buf(g, 0, i), in[i], plan->in_bytes);
    GT_TRY(gt_stitch_gpu_submit(g, 0));
    GT_TRY(gt_stitch_gpu_wait(g, 0));
    memcpy(out, g->h_out[0], plan->out_bytes);
    return GT_OK;
}
