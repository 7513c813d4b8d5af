/* The CPU reference of the differentiable rasterizer (gs_grad.h): raw
 * parameters <-> scene, the forward pass from raw parameters that keeps the
 * per-pixel state (last contributor, final transmittance), and the
 * backward: each pixel replayed back to front into per-Gaussian dL/d(colour,
 * effective opacity, 2-D mean, conic) by gs_math_grad.h's replay (the
 * GPU's), summed per Gaussian in double (tiles in parallel, OpenMP atomics),
 * then the per-Gaussian chain of gs_math_grad.h to the raw parameters. The
 * projection, tile lists and blending are those of gt_gs_render_cpu
 * (gt_gs_preprocess_one, gt_gs_tiles_cpu, gs_math.h), so the image is its
 * image of the activated scene. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "gs/gs_grad.h"
#include "gs/gs_math.h"
#include "gs/gs_math_grad.h"
#include "gs/gs_tiles.h"
#include "gt_config.h"

gt_status gt_gs_raw_alloc(gt_gs_raw *r, size_t n, int sh_degree)
{
    memset(r, 0, sizeof *r);
    if (sh_degree < 0 || sh_degree > 3) return gt_fail(GT_ERR_DATA, "SH degree %d not in 0..3", sh_degree);
    r->n = n;
    r->sh_degree = sh_degree;
    r->sh_k = (sh_degree + 1) * (sh_degree + 1);
    size_t m = n ? n : 1;
    r->pos = gt_calloc(m, 3 * sizeof(float), "Gaussian positions");
    r->log_scale = gt_calloc(m, 3 * sizeof(float), "Gaussian scales");
    r->rot = gt_calloc(m, 4 * sizeof(float), "Gaussian rotations");
    r->logit_opacity = gt_calloc(m, sizeof(float), "Gaussian opacities");
    r->sh = gt_calloc(m, (size_t)r->sh_k * 3 * sizeof(float), "Gaussian SH coefficients");
    if (!r->pos || !r->log_scale || !r->rot || !r->logit_opacity || !r->sh) {
        gt_gs_raw_free(r);
        return GT_ERR_RUNTIME;
    }
    return GT_OK;
}

void gt_gs_raw_free(gt_gs_raw *r)
{
    free(r->pos);
    free(r->log_scale);
    free(r->rot);
    free(r->logit_opacity);
    free(r->sh);
    memset(r, 0, sizeof *r);
}

void gt_gs_raw_groups(const gt_gs_raw *r, float *a[5], size_t len[5])
{
    a[0] = r->pos, len[0] = 3 * r->n;
    a[1] = r->log_scale, len[1] = 3 * r->n;
    a[2] = r->rot, len[2] = 4 * r->n;
    a[3] = r->logit_opacity, len[3] = r->n;
    a[4] = r->sh, len[4] = r->n * (size_t)r->sh_k * 3;
}

void gt_gs_raw_zero(gt_gs_raw *r)
{
    float *a[5];
    size_t len[5];
    gt_gs_raw_groups(r, a, len);
    for (int k = 0; k < 5; k++) memset(a[k], 0, len[k] * sizeof(float));
}

gt_status gt_gs_raw_from_scene(const gt_gs_scene *s, gt_gs_raw *r)
{
    GT_TRY(gt_gs_raw_alloc(r, s->n, s->sh_degree));
    memcpy(r->pos, s->pos, s->n * 3 * sizeof(float));
    memcpy(r->rot, s->rot, s->n * 4 * sizeof(float));
    memcpy(r->sh, s->sh, s->n * (size_t)s->sh_k * 3 * sizeof(float));
    for (size_t i = 0; i < 3 * s->n; i++) r->log_scale[i] = logf(s->scale[i]);
    for (size_t i = 0; i < s->n; i++) {
        /* opacity 0 or 1 would be an infinite logit: the nearest float
         * opacity inside (0, 1) whose logit is finite */
        float o = fminf(fmaxf(s->opacity[i], 1e-7f), 1.0f - 6e-8f);
        r->logit_opacity[i] = logf(o / (1.0f - o));
    }
    return GT_OK;
}

gt_status gt_gs_raw_to_scene(const gt_gs_raw *r, gt_gs_scene *s)
{
    GT_TRY(gt_gs_scene_alloc(s, r->n, r->sh_degree));
    memcpy(s->pos, r->pos, r->n * 3 * sizeof(float));
    memcpy(s->sh, r->sh, r->n * (size_t)r->sh_k * 3 * sizeof(float));
    for (size_t i = 0; i < r->n; i++)
        gs_activate(r->rot + 4 * i, r->log_scale + 3 * i, r->logit_opacity[i], s->rot + 4 * i, s->scale + 3 * i,
                    &s->opacity[i]);
    return GT_OK;
}

/* What the backward needs of a forward. */
typedef struct fwd_state {
    gt_gs_scene act;       /* activated parameters */
    gt_gs_proj *pr;        /* projection per Gaussian */
    size_t *start;         /* tile lists */
    gt_gs_tile_entry *list;
    int gx, gy, deg;
    uint32_t *last;        /* per pixel: list entries up to the last contributor */
    float *T;              /* per pixel: final transmittance */
} fwd_state;

static void fwd_free(fwd_state *f)
{
    gt_gs_scene_free(&f->act);
    free(f->pr);
    free(f->start);
    free(f->list);
    free(f->last);
    free(f->T);
    memset(f, 0, sizeof *f);
}

static gt_status fwd_run(const gt_gs_raw *r, int sh_deg, const gt_gs_camera *c, const gt_gs_params *p,
                         float *rgb, fwd_state *f)
{
    memset(f, 0, sizeof *f);
    int w = c->width, h = c->height;
    if (r->n > UINT32_MAX) return gt_fail(GT_ERR_DATA, "too many Gaussians (%zu)", r->n);
    if (sh_deg < 0 || sh_deg > r->sh_degree)
        return gt_fail(GT_ERR_RUNTIME, "SH degree %d not in 0..%d", sh_deg, r->sh_degree);
    GT_TRY(gt_gs_raw_to_scene(r, &f->act));
    f->deg = sh_deg;
    f->gx = (w + GS_TILE - 1) / GS_TILE;
    f->gy = (h + GS_TILE - 1) / GS_TILE;
    size_t np = (size_t)w * h;
    f->pr = gt_malloc_array(r->n ? r->n : 1, sizeof *f->pr, "projected Gaussians");
    f->last = gt_malloc_array(np, sizeof *f->last, "per-pixel state");
    f->T = gt_malloc_array(np, sizeof *f->T, "per-pixel state");
    if (!f->pr || !f->last || !f->T) {
        fwd_free(f);
        return GT_ERR_RUNTIME;
    }
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)r->n; i++)
        gt_gs_preprocess_one(&f->act, (size_t)i, c, p, sh_deg, &f->pr[i]);
    gt_status st = gt_gs_tiles_cpu(f->pr, r->n, f->gx, f->gy, &f->start, &f->list);
    if (st != GT_OK) {
        fwd_free(f);
        return st;
    }
    int gx = f->gx;
#pragma omp parallel for schedule(dynamic, 1)
    for (long long t = 0; t < (long long)gx * f->gy; t++) {
        size_t b = f->start[t], e = f->start[t + 1];
        int tx = (int)(t % gx), ty = (int)(t / gx);
        for (int py = ty * GS_TILE; py < ty * GS_TILE + GS_TILE && py < h; py++)
            for (int px = tx * GS_TILE; px < tx * GS_TILE + GS_TILE && px < w; px++) {
                float T = 1.0f, C[3] = {0, 0, 0};
                size_t last = b;
                for (size_t k = b; k < e; k++) {
                    const gt_gs_proj *g = &f->pr[f->list[k].idx];
                    float power = gs_power(g->conic[0], g->conic[1], g->conic[2], g->x - (float)px,
                                           g->y - (float)py);
                    if (power > 0.0f) continue;
                    float alpha = gs_alpha(g->opacity, power);
                    if (alpha < GS_ALPHA_MIN) continue;
                    float test_T = T * (1.0f - alpha);
                    if (test_T < GS_T_MIN) break;
                    float wgt = alpha * T;
                    for (int ch = 0; ch < 3; ch++) C[ch] += g->rgb[ch] * wgt;
                    T = test_T;
                    last = k + 1;
                }
                size_t pix = (size_t)py * w + px;
                f->last[pix] = (uint32_t)(last - b);
                f->T[pix] = T;
                if (rgb)
                    for (int ch = 0; ch < 3; ch++) rgb[(size_t)ch * np + pix] = C[ch] + T * p->bg[ch];
            }
    }
    return GT_OK;
}

gt_status gt_gs_forward_cpu(const gt_gs_raw *r, int sh_deg, const gt_gs_camera *c, const gt_gs_params *p,
                            float *rgb)
{
    fwd_state f;
    GT_TRY(fwd_run(r, sh_deg, c, p, rgb, &f));
    fwd_free(&f);
    return GT_OK;
}

/* Per-Gaussian sums of the pixel replay, in double. */
typedef struct pix_grads {
    double *rgb;   /* 3n */
    double *op;    /* n: effective opacity */
    double *mean;  /* 2n */
    double *conic; /* 3n */
} pix_grads;

/* Pixel (px, py) of tile list [b, b + last) replayed back to front
 * (gs_replay_step), its terms added to the Gaussians' sums. */
static void pixel_backward(const fwd_state *f, const gt_gs_params *p, size_t b, uint32_t last, int px, int py,
                           float T_final, const float dpix[3], pix_grads *pg)
{
    gs_replay rp;
    gs_replay_init(&rp, T_final, dpix, p->bg);
    for (size_t k = b + last; k-- > b;) {
        uint32_t i = f->list[k].idx;
        const gt_gs_proj *g = &f->pr[i];
        float dx = g->x - (float)px, dy = g->y - (float)py;
        float power = gs_power(g->conic[0], g->conic[1], g->conic[2], dx, dy);
        if (power > 0.0f) continue;
        float G = gs_exp(power), alpha = gs_alpha_of(g->opacity, G);
        if (alpha < GS_ALPHA_MIN) continue;
        float drgb[3];
        float dl_dalpha = gs_replay_step(&rp, alpha, g->rgb, drgb);
        float dop = 0, dmean[2] = {0, 0}, dconic[3] = {0, 0, 0};
        gs_blend_grad(g->opacity, g->conic[0], g->conic[1], g->conic[2], dx, dy, G, dl_dalpha, p->ref_grad, &dop,
                      dmean, dconic);
        for (int ch = 0; ch < 3; ch++) {
#pragma omp atomic
            pg->rgb[3 * i + ch] += drgb[ch];
        }
#pragma omp atomic
        pg->op[i] += dop;
#pragma omp atomic
        pg->mean[2 * i] += dmean[0];
#pragma omp atomic
        pg->mean[2 * i + 1] += dmean[1];
        for (int q = 0; q < 3; q++) {
#pragma omp atomic
            pg->conic[3 * i + q] += dconic[q];
        }
    }
}

gt_status gt_gs_backward_cpu(const gt_gs_raw *r, int sh_deg, const gt_gs_camera *c, const gt_gs_params *p,
                             const float *dl_drgb, float *rgb, gt_gs_raw *grad, gt_gs_grad_stats *stats)
{
    if (grad->n != r->n || grad->sh_k != r->sh_k)
        return gt_fail(GT_ERR_RUNTIME, "gradient arrays (%zu Gaussians, %d SH) do not match the scene's (%zu, %d)",
                       grad->n, grad->sh_k, r->n, r->sh_k);
    fwd_state f;
    GT_TRY(fwd_run(r, sh_deg, c, p, rgb, &f));
    size_t n = r->n, m = n ? n : 1;
    pix_grads pg;
    pg.rgb = gt_calloc(m, 3 * sizeof(double), "gradients");
    pg.op = gt_calloc(m, sizeof(double), "gradients");
    pg.mean = gt_calloc(m, 2 * sizeof(double), "gradients");
    pg.conic = gt_calloc(m, 3 * sizeof(double), "gradients");
    if (!pg.rgb || !pg.op || !pg.mean || !pg.conic) {
        free(pg.rgb);
        free(pg.op);
        free(pg.mean);
        free(pg.conic);
        fwd_free(&f);
        return GT_ERR_RUNTIME;
    }
    int w = c->width, h = c->height;
    size_t np = (size_t)w * h;
    /* tiles in parallel; a Gaussian's sums are shared by the tiles it
     * covers (atomic adds, in double) */
#pragma omp parallel for schedule(dynamic, 1)
    for (int t = 0; t < f.gx * f.gy; t++) {
        int tx = t % f.gx, ty = t / f.gx;
        for (int py = ty * GS_TILE; py < ty * GS_TILE + GS_TILE && py < h; py++)
            for (int px = tx * GS_TILE; px < tx * GS_TILE + GS_TILE && px < w; px++) {
                size_t pix = (size_t)py * w + px;
                float dpix[3] = {dl_drgb[pix], dl_drgb[np + pix], dl_drgb[2 * np + pix]};
                pixel_backward(&f, p, f.start[t], f.last[pix], px, py, f.T[pix], dpix, &pg);
            }
    }
    gs_gcam gc = gs_gcam_of(c);
#pragma omp parallel for schedule(static)
    for (long long ii = 0; ii < (long long)n; ii++) {
        size_t i = (size_t)ii;
        if (f.pr[i].radius == 0) continue;
        float dmean[2] = {(float)pg.mean[2 * i], (float)pg.mean[2 * i + 1]};
        if (stats) {
            stats->grad2d[i] += hypotf(dmean[0] * 0.5f * w, dmean[1] * 0.5f * h);
            stats->seen[i] += 1.0f;
        }
        float dconic[3] = {(float)pg.conic[3 * i], (float)pg.conic[3 * i + 1], (float)pg.conic[3 * i + 2]};
        float drgb[3] = {(float)pg.rgb[3 * i], (float)pg.rgb[3 * i + 1], (float)pg.rgb[3 * i + 2]};
        size_t shs = (size_t)r->sh_k * 3 * i;
        gs_gauss_grad(&gc, p->scale_modifier, p->antialias, p->ref_grad, sh_deg, r->pos + 3 * i, r->log_scale + 3 * i,
                      r->rot + 4 * i, r->logit_opacity[i], r->sh + shs, dmean, dconic, (float)pg.op[i], drgb,
                      grad->pos + 3 * i, grad->log_scale + 3 * i, grad->rot + 4 * i, grad->logit_opacity + i,
                      grad->sh + shs);
    }
    free(pg.rgb);
    free(pg.op);
    free(pg.mean);
    free(pg.conic);
    fwd_free(&f);
    return GT_OK;
}

#if !GT_HAVE_CUDA
/* Without CUDA the GPU workspace reports that it is missing
 * (kernels/gs/gs_backward.cu implements it). */
gt_status gt_gs_diff_create(size_t n, int sh_degree, int max_w, int max_h, void *stream, gt_gs_diff **d)
{
    (void)n, (void)sh_degree, (void)max_w, (void)max_h, (void)stream;
    *d = NULL;
    return gt_fail(GT_ERR_GPU, "built without CUDA: no GPU backward pass");
}

gt_status gt_gs_diff_forward(gt_gs_diff *d, const gt_gs_raw *dev_r, int sh_deg, const gt_gs_camera *c,
                             const gt_gs_params *p, float *dev_rgb)
{
    (void)d, (void)dev_r, (void)sh_deg, (void)c, (void)p, (void)dev_rgb;
    return gt_fail(GT_ERR_GPU, "built without CUDA: no GPU backward pass");
}

gt_status gt_gs_diff_backward(gt_gs_diff *d, const float *dev_dl_drgb, gt_gs_raw *dev_grad,
                              gt_gs_grad_stats *dev_stats)
{
    (void)d, (void)dev_dl_drgb, (void)dev_grad, (void)dev_stats;
    return gt_fail(GT_ERR_GPU, "built without CUDA: no GPU backward pass");
}

size_t gt_gs_diff_bytes(const gt_gs_diff *d)
{
    (void)d;
    return 0;
}

void gt_gs_diff_destroy(gt_gs_diff *d)
{
    (void)d;
}
#endif
