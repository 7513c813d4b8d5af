/* The gsrender --fit job: refine a scene's raw parameters against posed
 * photographs with the reference training's loop (train.py) minus
 * densification: per iteration one training camera (a seeded random
 * permutation per epoch), the SH degree of the schedule, forward, loss
 * (L1 + D-SSIM), backward, Adam on the five parameter groups with the
 * reference's learning rates. On the GPU everything stays on the device
 * (parameters, gradients, Adam moments, the training images uploaded once:
 * as bytes when every value is a multiple of 1/255, as 8-bit photographs
 * without alpha are, else as floats); only the loss sums come back each
 * iteration. The CPU path
 * (--device cpu) is the same loop over gt_gs_backward_cpu, for tests.
 * Held-out views (--test-views, --test-every) are rendered every
 * --eval-every iterations and at the start and end; their PSNR is of the
 * render clamped to [0,1], as the reference's evaluation.
 * With --densify the backward also gathers the densification statistics
 * (on the device on the GPU) and every densification step runs
 * gs_fit_densify.c on the host: the GPU state (parameters, Adam moments,
 * statistics) is downloaded, densified and pruned, and uploaded into
 * arrays and a renderer workspace of the new count. As in the reference,
 * the iteration that densifies takes no Adam step (its parameters are
 * replaced) and the one that resets the opacities takes none for them.
 * With --mcmc (gsplat's MCMCStrategy) the regularisers' gradients join the
 * backward's, the position noise follows every Adam step, and the
 * relocation and growth steps take the same host round trip as
 * densification (after the step, as gsplat). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "common/output.h"
#include "common/progress.h"
#include "common/rng.h"
#include "common/timer.h"
#include "gs/gs_fit.h"
#include "gt_config.h"

#if GT_HAVE_CUDA
#include "kernels/common/cu_runtime.h"
#include "kernels/gs/gs_fit_cuda.h"
#endif

void gt_gs_fit_job_init(gt_gs_fit_job *j)
{
    memset(j, 0, sizeof *j);
    j->iterations = 2000;
    j->sh_degree = -1;
    j->sh_start = -1;
    j->downscale = 1;
    j->lambda = GT_GS_LAMBDA_DSSIM;
    gt_gs_fit_rates_default(&j->rates);
    gt_gs_densify_opts_default(&j->densify);
    gt_gs_params_init(&j->render);
    j->device = GT_DEVICE_AUTO;
}

/* The five parameter groups of r as arrays (pos, log_scale, rot, logit
 * opacity, SH). */
static void groups(const gt_gs_raw *r, float *a[5], size_t len[5])
{
    a[0] = r->pos, len[0] = 3 * r->n;
    a[1] = r->log_scale, len[1] = 3 * r->n;
    a[2] = r->rot, len[2] = 4 * r->n;
    a[3] = r->logit_opacity, len[3] = r->n;
    a[4] = r->sh, len[4] = r->n * (size_t)r->sh_k * 3;
}

static size_t raw_floats(const gt_gs_raw *r)
{
    return r->n * (11 + (size_t)r->sh_k * 3);
}

typedef struct fit_ctx {
    const gt_gs_fit_job *j;
    gt_gs_camera *cams;
    int ncams;
    int *train, ntrain, *test, ntest;
    float **img;
    gt_gs_raw raw;
    int max_deg;
    int sh_start; /* the degree at iteration 1 (j->sh_start, or the scene's) */
    bool gpu;
    int max_w, max_h;
    /* CPU state */
    gt_gs_raw grad, m, v;
    float *rgb, *dl;
    gt_gs_grad_stats stats; /* --densify: host (CPU path) or device (GPU path) arrays */
    uint64_t drng;          /* split children, MCMC's draws of sources */
    int dens_until;
#if GT_HAVE_CUDA
    gt_gs_raw dr, dg, dm, dv;
    float *dimg, *drgb, *ddl, *dtarget; /* dtarget: the view's image as floats (8-bit storage) */
    unsigned char *dimg8;
    size_t *img_off;
    gt_gs_diff *diff;
    gt_gs_cu_loss *loss;
    size_t img_bytes, work_bytes; /* besides the per-Gaussian state and the renderer's workspace */
#endif
    size_t bytes, peak_bytes;
    gt_timings tm;
    gt_timer timer;
} fit_ctx;

/* --timings: each stage timed on its own (GPU events, which wait for the
 * stage: the timed run is slower than an untimed one). */
static void stage_start(fit_ctx *c)
{
    if (c->j->timings) gt_timer_start(&c->timer, c->gpu, NULL);
}

static void stage_stop(fit_ctx *c, const char *name)
{
    if (c->j->timings) gt_timings_add(&c->tm, name, gt_timer_stop(&c->timer));
}

/* ---- held-out and training views ---- */
static gt_status split_views(fit_ctx *c)
{
    const gt_gs_fit_job *j = c->j;
    bool *held = calloc((size_t)c->ncams, sizeof *held);
    c->train = malloc(sizeof(int) * (size_t)c->ncams);
    c->test = malloc(sizeof(int) * (size_t)c->ncams);
    if (!held || !c->train || !c->test) {
        free(held);
        return gt_fail(GT_ERR_RUNTIME, "out of memory (views)");
    }
    if (j->test_every > 0)
        for (int i = 0; i < c->ncams; i += j->test_every) held[i] = true;
    if (j->test_views) {
        const char *s = j->test_views;
        while (*s) {
            size_t l = strcspn(s, ",");
            char name[160];
            if (l == 0 || l >= sizeof name) {
                free(held);
                return gt_fail(GT_ERR_USAGE, "--test-views '%s': give img_names or indices separated by commas",
                               j->test_views);
            }
            memcpy(name, s, l), name[l] = 0;
            int found = -1;
            for (int i = 0; i < c->ncams && found < 0; i++)
                if (!strcmp(c->cams[i].name, name)) found = i;
            if (found < 0) {
                char *end;
                long k = strtol(name, &end, 10);
                if (*end == 0 && k >= 0 && k < c->ncams) found = (int)k;
            }
            if (found < 0) {
                free(held);
                return gt_fail(GT_ERR_USAGE, "--test-views: no camera '%s' in '%s' (%d cameras)", name,
                               j->cameras, c->ncams);
            }
            held[found] = true;
            s += l + (s[l] == ',');
        }
    }
    for (int i = 0; i < c->ncams; i++) {
        if (held[i]) c->test[c->ntest++] = i;
        else c->train[c->ntrain++] = i;
    }
    free(held);
    if (c->ntrain == 0)
        return gt_fail(GT_ERR_USAGE, "every one of the %d cameras is held out: no view is left to train on",
                       c->ncams);
    return GT_OK;
}

/* ---- device state ---- */
#if GT_HAVE_CUDA
static gt_status dev_raw_alloc(gt_gs_raw *d, const gt_gs_raw *like, const char *what)
{
    memset(d, 0, sizeof *d);
    d->n = like->n, d->sh_degree = like->sh_degree, d->sh_k = like->sh_k;
    float *a[5];
    size_t len[5];
    groups(like, a, len);
    float **dst[5] = {&d->pos, &d->log_scale, &d->rot, &d->logit_opacity, &d->sh};
    for (int k = 0; k < 5; k++) {
        GT_TRY(gt_cu_malloc((void **)dst[k], (len[k] ? len[k] : 1) * sizeof(float), what));
        GT_TRY(gt_cu_memset(*dst[k], 0, (len[k] ? len[k] : 1) * sizeof(float), NULL));
    }
    return GT_OK;
}

static void dev_raw_free(gt_gs_raw *d)
{
    gt_cu_free(d->pos), gt_cu_free(d->log_scale), gt_cu_free(d->rot), gt_cu_free(d->logit_opacity);
    gt_cu_free(d->sh);
    memset(d, 0, sizeof *d);
}

static gt_status dev_raw_copy(gt_gs_raw *dst, const gt_gs_raw *src, bool to_device)
{
    float *a[5], *b[5];
    size_t len[5];
    groups(dst, a, len);
    groups(src, b, len);
    for (int k = 0; k < 5; k++)
        GT_TRY(to_device ? gt_cu_memcpy_h2d(a[k], b[k], len[k] * sizeof(float), NULL)
                         : gt_cu_memcpy_d2h(a[k], b[k], len[k] * sizeof(float), NULL));
    return GT_OK;
}

static gt_status dev_stats_alloc(fit_ctx *c)
{
    if (!c->j->densify.on) return GT_OK;
    size_t b = (c->raw.n ? c->raw.n : 1) * sizeof(float);
    GT_TRY(gt_cu_malloc((void **)&c->stats.grad2d, b, "densification statistics"));
    GT_TRY(gt_cu_malloc((void **)&c->stats.seen, b, "densification statistics"));
    GT_TRY(gt_cu_memset(c->stats.grad2d, 0, b, NULL));
    return gt_cu_memset(c->stats.seen, 0, b, NULL);
}

static void dev_stats_free(fit_ctx *c)
{
    gt_cu_free(c->stats.grad2d), gt_cu_free(c->stats.seen);
    c->stats.grad2d = c->stats.seen = NULL;
}

/* Device bytes of the fit now: parameters, gradients, Adam moments,
 * statistics, images, the renderer's and the loss's workspaces. */
static size_t gpu_bytes(const fit_ctx *c)
{
    size_t params = raw_floats(&c->raw) * sizeof(float);
    size_t stats = c->j->densify.on ? 2 * c->raw.n * sizeof(float) : 0;
    return 4 * params + stats + c->img_bytes + c->work_bytes + gt_gs_diff_bytes(c->diff);
}

static gt_status gpu_setup(fit_ctx *c)
{
    size_t nf = raw_floats(&c->raw);
    GT_TRY(dev_raw_alloc(&c->dr, &c->raw, "Gaussian parameters"));
    GT_TRY(dev_raw_alloc(&c->dg, &c->raw, "Gaussian gradients"));
    GT_TRY(dev_raw_alloc(&c->dm, &c->raw, "Adam first moments"));
    GT_TRY(dev_raw_alloc(&c->dv, &c->raw, "Adam second moments"));
    GT_TRY(dev_raw_copy(&c->dr, &c->raw, true));
    c->img_off = calloc((size_t)c->ncams + 1, sizeof *c->img_off);
    if (!c->img_off) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    for (int i = 0; i < c->ncams; i++)
        c->img_off[i + 1] = c->img_off[i] + 3 * (size_t)c->cams[i].width * c->cams[i].height;
    size_t total = c->img_off[c->ncams], maxpx = 3 * (size_t)c->max_w * c->max_h;
    bool bytes = true; /* every value k/255: 8-bit photographs without alpha */
    for (int i = 0; i < c->ncams && bytes; i++)
        for (size_t k = 0; k < c->img_off[i + 1] - c->img_off[i] && bytes; k++) {
            float v = c->img[i][k] * 255.0f;
            bytes = v == rintf(v) && (float)(rintf(v) / 255.0f) == c->img[i][k];
        }
    size_t isz = bytes ? 1 : sizeof(float);
    if (bytes) {
        GT_TRY(gt_cu_malloc((void **)&c->dimg8, total, "training images (8-bit)"));
        GT_TRY(gt_cu_malloc((void **)&c->dtarget, maxpx * sizeof(float), "training image"));
        unsigned char *tmp = malloc(maxpx);
        if (!tmp) return gt_fail(GT_ERR_RUNTIME, "out of memory");
        gt_status st = GT_OK;
        for (int i = 0; i < c->ncams && st == GT_OK; i++) {
            size_t n = c->img_off[i + 1] - c->img_off[i];
            for (size_t k = 0; k < n; k++) tmp[k] = (unsigned char)rintf(c->img[i][k] * 255.0f);
            st = gt_cu_memcpy_h2d(c->dimg8 + c->img_off[i], tmp, n, NULL);
        }
        free(tmp);
        GT_TRY(st);
    } else {
        GT_TRY(gt_cu_malloc((void **)&c->dimg, total * sizeof(float), "training images"));
        for (int i = 0; i < c->ncams; i++)
            GT_TRY(gt_cu_memcpy_h2d(c->dimg + c->img_off[i], c->img[i],
                                    3 * (size_t)c->cams[i].width * c->cams[i].height * sizeof(float), NULL));
    }
    GT_TRY(gt_cu_malloc((void **)&c->drgb, maxpx * sizeof(float), "rendered image"));
    GT_TRY(gt_cu_malloc((void **)&c->ddl, maxpx * sizeof(float), "image gradient"));
    GT_TRY(gt_gs_cu_loss_create(c->max_w, c->max_h, NULL, &c->loss));
    GT_TRY(gt_gs_diff_create(c->raw.n, c->raw.sh_degree, c->max_w, c->max_h, NULL, &c->diff));
    GT_TRY(dev_stats_alloc(c));
    size_t params = nf * sizeof(float);
    c->img_bytes = total * isz;
    c->work_bytes = (bytes ? 3 : 2) * maxpx * sizeof(float) + gt_gs_cu_loss_bytes(c->loss);
    size_t imgs = c->img_bytes, work = c->work_bytes + gt_gs_diff_bytes(c->diff);
    c->bytes = gpu_bytes(c);
    gt_info("GPU memory: %zu Gaussians (SH degree %d): parameters %.1f MB, gradients %.1f MB, Adam moments "
            "%.1f MB, %d training images %.1f MB (%s), renderer and loss workspace %.1f MB; total %.1f MB "
            "(%.0f bytes per Gaussian besides the images and workspace)",
            c->raw.n, c->raw.sh_degree, params / 1e6, params / 1e6, 2 * params / 1e6, c->ncams, imgs / 1e6,
            bytes ? "8-bit" : "float", work / 1e6, c->bytes / 1e6, c->raw.n ? 4.0 * params / c->raw.n : 0.0);
    return GT_OK;
}

static void gpu_free(fit_ctx *c)
{
    dev_raw_free(&c->dr), dev_raw_free(&c->dg), dev_raw_free(&c->dm), dev_raw_free(&c->dv);
    dev_stats_free(c);
    gt_cu_free(c->dimg), gt_cu_free(c->drgb), gt_cu_free(c->ddl), gt_cu_free(c->dimg8), gt_cu_free(c->dtarget);
    free(c->img_off);
    if (c->loss) gt_gs_cu_loss_destroy(c->loss);
    if (c->diff) gt_gs_diff_destroy(c->diff);
}
#endif

static gt_status cpu_stats_alloc(fit_ctx *c)
{
    free(c->stats.grad2d), free(c->stats.seen);
    c->stats.grad2d = gt_calloc(c->raw.n ? c->raw.n : 1, sizeof(float), "densification statistics");
    c->stats.seen = gt_calloc(c->raw.n ? c->raw.n : 1, sizeof(float), "densification statistics");
    return c->stats.grad2d && c->stats.seen ? GT_OK : GT_ERR_RUNTIME;
}

static gt_status cpu_setup(fit_ctx *c)
{
    GT_TRY(gt_gs_raw_alloc(&c->grad, c->raw.n, c->raw.sh_degree));
    GT_TRY(gt_gs_raw_alloc(&c->m, c->raw.n, c->raw.sh_degree));
    GT_TRY(gt_gs_raw_alloc(&c->v, c->raw.n, c->raw.sh_degree));
    size_t maxpx = 3 * (size_t)c->max_w * c->max_h;
    c->rgb = malloc(maxpx * sizeof(float));
    c->dl = malloc(maxpx * sizeof(float));
    if (!c->rgb || !c->dl) return gt_fail(GT_ERR_RUNTIME, "out of memory (render buffers)");
    if (c->j->densify.on) GT_TRY(cpu_stats_alloc(c));
    c->bytes = 4 * raw_floats(&c->raw) * sizeof(float);
    gt_info("memory: %zu Gaussians (SH degree %d): parameters, gradients and Adam moments %.1f MB", c->raw.n,
            c->raw.sh_degree, c->bytes / 1e6);
    return GT_OK;
}

/* ---- one training step and one evaluation ---- */
/* One iteration on view cam. stats: gather the densification statistics;
 * no_step: the parameter groups (bit k: group k of groups()) that take no
 * Adam step this iteration. */
static gt_status train_step(fit_ctx *c, int cam, int deg, int it, double extent, bool stats, unsigned no_step,
                            gt_gs_loss *out, double *psnr)
{
    const gt_gs_fit_job *j = c->j;
    const gt_gs_camera *cm = &c->cams[cam];
    size_t n3 = 3 * (size_t)cm->width * cm->height;
    double lr[5] = {gt_gs_fit_pos_lr(&j->rates, it, j->rates.pos_steps, extent), j->rates.scale, j->rates.rot,
                    j->rates.opacity, j->rates.sh_dc};
    const double rest_lr = gt_gs_fit_rest_lr(&j->rates);
    int period = c->raw.sh_k * 3;
    if (c->gpu) {
#if GT_HAVE_CUDA
        float *a[5], *g[5], *m[5], *v[5];
        size_t len[5];
        groups(&c->dr, a, len), groups(&c->dg, g, len), groups(&c->dm, m, len), groups(&c->dv, v, len);
        stage_start(c);
        for (int k = 0; k < 5; k++) GT_TRY(gt_cu_memset(g[k], 0, len[k] * sizeof(float), NULL));
        GT_TRY(gt_gs_diff_forward(c->diff, &c->dr, deg, cm, &j->render, c->drgb));
        stage_stop(c, "forward");
        stage_start(c);
        const float *target = c->dimg ? c->dimg + c->img_off[cam] : c->dtarget;
        if (!c->dimg) GT_TRY(gt_gs_cu_u8_to_float(c->dimg8 + c->img_off[cam], c->dtarget, n3, NULL));
        GT_TRY(gt_gs_cu_loss_eval(c->loss, c->drgb, target, cm->width, cm->height, j->lambda, c->ddl));
        stage_stop(c, "loss");
        stage_start(c);
        GT_TRY(gt_gs_diff_backward(c->diff, c->ddl, &c->dg, stats ? &c->stats : NULL));
        if (j->densify.mcmc)
            GT_TRY(gt_gs_cu_mcmc_reg(&c->dr, j->densify.opacity_reg, j->densify.scale_reg, &c->dg, NULL));
        stage_stop(c, "backward");
        stage_start(c);
        for (int k = 0; k < 5; k++)
            if (!(no_step >> k & 1))
                GT_TRY(gt_gs_cu_adam(a[k], g[k], m[k], v[k], len[k], lr[k], rest_lr, k == 4 ? period : 0, it, NULL));
        stage_stop(c, "adam");
        double sse;
        GT_TRY(gt_gs_cu_loss_fetch(c->loss, &out->loss, &out->l1, &out->ssim, &sse));
        *psnr = sse > 0 ? 10.0 * log10((double)n3 / sse) : INFINITY;
        return GT_OK;
#endif
    }
    float *a[5], *g[5], *m[5], *v[5];
    size_t len[5];
    groups(&c->raw, a, len), groups(&c->grad, g, len), groups(&c->m, m, len), groups(&c->v, v, len);
    stage_start(c);
    gt_gs_raw_zero(&c->grad);
    GT_TRY(gt_gs_forward_cpu(&c->raw, deg, cm, &j->render, c->rgb));
    stage_stop(c, "forward");
    stage_start(c);
    GT_TRY(gt_gs_loss_cpu(c->rgb, c->img[cam], cm->width, cm->height, j->lambda, out, c->dl));
    *psnr = gt_gs_psnr(c->rgb, c->img[cam], n3);
    stage_stop(c, "loss");
    stage_start(c); /* the CPU backward renders the view again */
    GT_TRY(gt_gs_backward_cpu(&c->raw, deg, cm, &j->render, c->dl, NULL, &c->grad, stats ? &c->stats : NULL));
    if (j->densify.mcmc) gt_gs_mcmc_reg_cpu(&c->raw, j->densify.opacity_reg, j->densify.scale_reg, &c->grad);
    stage_stop(c, "backward");
    stage_start(c);
    for (int k = 0; k < 5; k++)
        if (!(no_step >> k & 1))
            gt_gs_adam_cpu(a[k], g[k], m[k], v[k], len[k], lr[k], rest_lr, k == 4 ? period : 0, it);
    stage_stop(c, "adam");
    return GT_OK;
}

/* ---- adaptive density control ---- */
#if GT_HAVE_CUDA
/* The GPU state of the new count: arrays, statistics and the renderer's
 * workspace made again, parameters and moments uploaded. */
static gt_status gpu_resize(fit_ctx *c, const gt_gs_raw *hm, const gt_gs_raw *hv)
{
    dev_raw_free(&c->dr), dev_raw_free(&c->dg), dev_raw_free(&c->dm), dev_raw_free(&c->dv);
    dev_stats_free(c);
    gt_gs_diff_destroy(c->diff);
    c->diff = NULL;
    GT_TRY(dev_raw_alloc(&c->dr, &c->raw, "Gaussian parameters"));
    GT_TRY(dev_raw_alloc(&c->dg, &c->raw, "Gaussian gradients"));
    GT_TRY(dev_raw_alloc(&c->dm, &c->raw, "Adam first moments"));
    GT_TRY(dev_raw_alloc(&c->dv, &c->raw, "Adam second moments"));
    GT_TRY(dev_raw_copy(&c->dr, &c->raw, true));
    GT_TRY(dev_raw_copy(&c->dm, hm, true));
    GT_TRY(dev_raw_copy(&c->dv, hv, true));
    GT_TRY(dev_stats_alloc(c));
    return gt_gs_diff_create(c->raw.n, c->raw.sh_degree, c->max_w, c->max_h, NULL, &c->diff);
}
#endif

static gt_status densify(fit_ctx *c, int it, double extent)
{
    const gt_gs_densify_opts *o = &c->j->densify;
    bool prune_big = o->opacity_reset > 0 && it > o->opacity_reset;
    gt_gs_densify_count dc;
    if (c->gpu) {
#if GT_HAVE_CUDA
        size_t n = c->raw.n;
        gt_gs_raw hm, hv;
        gt_gs_grad_stats hs = {NULL, NULL};
        if (!o->mcmc) {
            hs.grad2d = gt_malloc_array(n ? n : 1, sizeof(float), "densification statistics");
            hs.seen = gt_malloc_array(n ? n : 1, sizeof(float), "densification statistics");
        }
        gt_status st = gt_gs_raw_alloc(&hm, n, c->raw.sh_degree);
        if (st == GT_OK) st = gt_gs_raw_alloc(&hv, n, c->raw.sh_degree);
        else memset(&hv, 0, sizeof hv);
        if (st == GT_OK && !o->mcmc && (!hs.grad2d || !hs.seen)) st = GT_ERR_RUNTIME;
        if (st == GT_OK) st = dev_raw_copy(&c->raw, &c->dr, false);
        if (st == GT_OK) st = dev_raw_copy(&hm, &c->dm, false);
        if (st == GT_OK) st = dev_raw_copy(&hv, &c->dv, false);
        if (st == GT_OK && !o->mcmc) st = gt_cu_memcpy_d2h(hs.grad2d, c->stats.grad2d, n * sizeof(float), NULL);
        if (st == GT_OK && !o->mcmc) st = gt_cu_memcpy_d2h(hs.seen, c->stats.seen, n * sizeof(float), NULL);
        if (st == GT_OK)
            st = o->mcmc ? gt_gs_mcmc_relocate(&c->raw, &hm, &hv, o, &c->drng, &dc)
                         : gt_gs_densify_prune(&c->raw, &hm, &hv, &hs, o, extent, prune_big, &c->drng, &dc);
        if (st == GT_OK) st = gpu_resize(c, &hm, &hv);
        gt_gs_raw_free(&hm), gt_gs_raw_free(&hv);
        free(hs.grad2d), free(hs.seen);
        GT_TRY(st);
        c->bytes = gpu_bytes(c);
#endif
    } else {
        GT_TRY(o->mcmc ? gt_gs_mcmc_relocate(&c->raw, &c->m, &c->v, o, &c->drng, &dc)
                       : gt_gs_densify_prune(&c->raw, &c->m, &c->v, &c->stats, o, extent, prune_big, &c->drng, &dc));
        gt_gs_raw_free(&c->grad);
        GT_TRY(gt_gs_raw_alloc(&c->grad, c->raw.n, c->raw.sh_degree));
        if (!o->mcmc) GT_TRY(cpu_stats_alloc(c));
        c->bytes = 4 * raw_floats(&c->raw) * sizeof(float);
    }
    if (c->bytes > c->peak_bytes) c->peak_bytes = c->bytes;
    if (dc.n_after == 0)
        return gt_fail(GT_ERR_RUNTIME,
                       "iteration %d: the densification pruned every Gaussian (all opacities below --min-opacity "
                       "%g): nothing left to fit",
                       it, o->min_opacity);
    if (o->mcmc)
        gt_info("iteration %d: MCMC: %zu relocated, %zu added: %zu -> %zu Gaussians", it, dc.relocated, dc.added,
                dc.n_before, dc.n_after);
    else
        gt_info("iteration %d: densified: %zu cloned, %zu split, %zu pruned%s: %zu -> %zu Gaussians", it,
                dc.cloned, dc.split, dc.pruned, dc.capped ? " (--max-gaussians reached)" : "", dc.n_before,
                dc.n_after);
    return GT_OK;
}

/* MCMC's position noise after the step (gsplat: noise_lr times the position
 * learning rate). */
static gt_status mcmc_noise(fit_ctx *c, int it, double extent)
{
    const gt_gs_fit_job *j = c->j;
    double scaler = j->densify.noise_lr * gt_gs_fit_pos_lr(&j->rates, it, j->rates.pos_steps, extent);
    uint64_t seed = j->seed ^ 0x6d636d632d6e6full;
    stage_start(c);
    if (c->gpu) {
#if GT_HAVE_CUDA
        GT_TRY(gt_gs_cu_mcmc_noise(&c->dr, scaler, seed, (uint64_t)it, NULL));
#endif
    } else {
        gt_gs_mcmc_noise_cpu(&c->raw, scaler, seed, (uint64_t)it);
    }
    stage_stop(c, "mcmc noise");
    return GT_OK;
}

/* The reference's reset_opacity: opacities capped at 0.01, their Adam
 * moments zeroed. */
static gt_status reset_opacity(fit_ctx *c, int it)
{
    size_t n = c->raw.n;
    if (c->gpu) {
#if GT_HAVE_CUDA
        GT_TRY(gt_cu_memcpy_d2h(c->raw.logit_opacity, c->dr.logit_opacity, n * sizeof(float), NULL));
        gt_gs_opacity_cap(c->raw.logit_opacity, n, 0.01);
        GT_TRY(gt_cu_memcpy_h2d(c->dr.logit_opacity, c->raw.logit_opacity, n * sizeof(float), NULL));
        GT_TRY(gt_cu_memset(c->dm.logit_opacity, 0, n * sizeof(float), NULL));
        GT_TRY(gt_cu_memset(c->dv.logit_opacity, 0, n * sizeof(float), NULL));
#endif
    } else {
        gt_gs_opacity_cap(c->raw.logit_opacity, n, 0.01);
        memset(c->m.logit_opacity, 0, n * sizeof(float));
        memset(c->v.logit_opacity, 0, n * sizeof(float));
    }
    gt_info("iteration %d: opacities reset to at most 0.01 (%zu Gaussians)", it, n);
    return GT_OK;
}

/* Mean PSNR of the held-out views (renders clamped to [0,1]). */
static gt_status evaluate(fit_ctx *c, int deg, double *mean)
{
    double s = 0;
    for (int t = 0; t < c->ntest; t++) {
        int cam = c->test[t];
        const gt_gs_camera *cm = &c->cams[cam];
        size_t n3 = 3 * (size_t)cm->width * cm->height;
        if (c->gpu) {
#if GT_HAVE_CUDA
            GT_TRY(gt_gs_diff_forward(c->diff, &c->dr, deg, cm, &c->j->render, c->drgb));
            GT_TRY(gt_cu_memcpy_d2h(c->rgb, c->drgb, n3 * sizeof(float), NULL));
#endif
        } else {
            GT_TRY(gt_gs_forward_cpu(&c->raw, deg, cm, &c->j->render, c->rgb));
        }
        for (size_t i = 0; i < n3; i++) c->rgb[i] = fminf(1.0f, fmaxf(0.0f, c->rgb[i]));
        s += gt_gs_psnr(c->rgb, c->img[cam], n3);
    }
    *mean = c->ntest ? s / c->ntest : NAN;
    return GT_OK;
}

static void shuffle(int *a, int n, uint64_t *rng)
{
    for (int i = n - 1; i > 0; i--) {
        int k = (int)(gt_splitmix64(rng) % (uint64_t)(i + 1));
        int t = a[i];
        a[i] = a[k], a[k] = t;
    }
}

static gt_status train(fit_ctx *c, gt_out *log, gt_gs_fit_result *res)
{
    const gt_gs_fit_job *j = c->j;
    double extent = 1.0;
    {
        gt_gs_camera *tc = malloc(sizeof *tc * (size_t)c->ntrain);
        if (!tc) return gt_fail(GT_ERR_RUNTIME, "out of memory");
        for (int i = 0; i < c->ntrain; i++) tc[i] = c->cams[c->train[i]];
        extent = gt_gs_cameras_extent(tc, c->ntrain);
        free(tc);
    }
    gt_info("%d training views, %d held out; scene extent (cameras) %.4g: position learning rate %.3g -> %.3g",
            c->ntrain, c->ntest, extent, gt_gs_fit_pos_lr(&j->rates, 0, j->rates.pos_steps, extent),
            gt_gs_fit_pos_lr(&j->rates, j->iterations, j->rates.pos_steps, extent));
    if (c->max_deg > 0)
        gt_info("SH degree %d at the first iteration (%s), one more every 1000 iterations up to %d", c->sh_start,
                j->sh_start >= 0 ? "--sh-start" : "the scene's, as the reference refines a PLY", c->max_deg);
    c->dens_until = gt_gs_densify_until(&j->densify, j->iterations);
    if (j->densify.on || j->densify.mcmc) {
        const gt_gs_densify_opts *o = &j->densify;
        long first = ((long)o->from_iter / o->interval + 1) * o->interval; /* the first step's iteration */
        if (first >= c->dens_until)
            gt_warn("%s: no step falls in the window: the first would be at iteration %ld, the window ends before "
                    "%d (--densify-until-iter; default half of --iterations)",
                    o->mcmc ? "--mcmc" : "--densify", first, c->dens_until);
    }
    c->drng = j->seed ^ 0xde5e1f1ed5eedull;
    if (j->densify.mcmc)
        gt_info("MCMC: relocation and 5%% growth (up to %zu Gaussians) every %d iterations after %d and before %d; "
                "position noise x %.3g, opacity regulariser %.3g, scale regulariser %.3g",
                j->densify.max_gaussians ? j->densify.max_gaussians : (size_t)GT_GS_MCMC_CAP, j->densify.interval,
                j->densify.from_iter, c->dens_until, j->densify.noise_lr, j->densify.opacity_reg,
                j->densify.scale_reg);
    if (j->densify.on)
        gt_info("densification every %d iterations after %d and before %d (gradient threshold %.3g, "
                "percent dense %.3g of extent %.4g)%s; opacity reset every %d",
                j->densify.interval, j->densify.from_iter, c->dens_until, j->densify.grad_threshold,
                j->densify.percent_dense, extent, j->densify.max_gaussians ? ", count capped" : "",
                j->densify.opacity_reset);
    int *order = malloc(sizeof(int) * (size_t)c->ntrain);
    if (!order) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    uint64_t rng = j->seed ^ 0x5eed5eedull;
    int next = c->ntrain;
    double t0 = gt_now_ms();
    gt_status st = evaluate(c, gt_gs_fit_sh_degree(1000 * c->sh_start, c->max_deg), &res->psnr_test_start);
    if (st == GT_OK && c->ntest) gt_notice("iteration 0: held-out PSNR %.2f dB (%d view(s))", res->psnr_test_start, c->ntest);
    if (log && log->fp) fprintf(log->fp, "iteration,loss,l1,ssim,psnr,seconds,test_psnr,gaussians\n");
    if (log && log->fp && c->ntest)
        fprintf(log->fp, "0,,,,,0.000,%.4f,%zu\n", res->psnr_test_start, c->raw.n);
    gt_progress pg;
    gt_progress_start(&pg, "fit", j->iterations);
    int span = j->iterations / 10 > 0 ? j->iterations / 10 : 1, nfirst = 0, nlast = 0;
    double sfirst = 0, slast = 0, ema = NAN;
    for (int it = 1; it <= j->iterations && st == GT_OK; it++) {
        if (next >= c->ntrain) {
            for (int i = 0; i < c->ntrain; i++) order[i] = c->train[i];
            shuffle(order, c->ntrain, &rng);
            next = 0;
        }
        int cam = order[next++], deg = gt_gs_fit_sh_degree(it + 1000 * c->sh_start, c->max_deg);
        const gt_gs_densify_opts *dop = &j->densify;
        /* the reference's "iteration < densify_until_iter"; MCMC: gsplat's refine_stop_iter */
        bool dens_window = (dop->on || dop->mcmc) && it < c->dens_until;
        bool dens = dens_window && it > dop->from_iter && dop->interval > 0 && it % dop->interval == 0;
        /* the reference also resets once at densify_from_iter on a white background */
        bool white = j->render.bg[0] == 1.0f && j->render.bg[1] == 1.0f && j->render.bg[2] == 1.0f;
        bool reset = dop->on && dens_window &&
                     ((dop->opacity_reset > 0 && it % dop->opacity_reset == 0) || (white && it == dop->from_iter));
        gt_gs_loss l;
        double psnr = NAN;
        /* the reference's densification replaces the parameters before its
         * optimizer step (none that iteration); gsplat's MCMC steps first */
        unsigned no_step = dop->on ? (dens ? 0x1fu : reset ? 1u << 3 : 0u) : 0u;
        st = train_step(c, cam, deg, it, extent, dop->on && dens_window, no_step, &l, &psnr);
        if (st == GT_OK && dens) {
            stage_start(c);
            st = densify(c, it, extent);
            stage_stop(c, "densify");
        }
        if (st == GT_OK && reset) st = reset_opacity(c, it);
        if (st == GT_OK && dop->mcmc) st = mcmc_noise(c, it, extent);
        if (st != GT_OK) break;
        if (!isfinite(l.loss)) {
            st = gt_fail(GT_ERR_RUNTIME, "iteration %d: the loss is not finite (view '%s')", it, c->cams[cam].name);
            break;
        }
        if (it <= span) sfirst += l.loss, nfirst++;
        if (it > j->iterations - span) slast += l.loss, nlast++;
        ema = isnan(ema) ? l.loss : 0.4 * l.loss + 0.6 * ema; /* the reference's progress smoothing */
        double sec = (gt_now_ms() - t0) / 1000.0, tp = NAN;
        bool ev = c->ntest && (it == j->iterations || (j->eval_every > 0 && it % j->eval_every == 0));
        if (ev) {
            stage_start(c);
            st = evaluate(c, deg, &tp);
            stage_stop(c, "evaluate");
            if (st != GT_OK) break;
            gt_progress_end(&pg);
            gt_notice("iteration %d: held-out PSNR %.2f dB (%d view(s)), training loss %.5f", it, tp, c->ntest, ema);
            gt_progress_start(&pg, "fit", j->iterations);
            if (it == j->iterations) res->psnr_test_end = tp;
        }
        if (log && log->fp) {
            fprintf(log->fp, "%d,%.7f,%.7f,%.7f,%.4f,%.3f,", it, l.loss, l.l1, l.ssim, psnr, sec);
            if (ev) fprintf(log->fp, "%.4f", tp);
            fprintf(log->fp, ",%zu\n", c->raw.n);
        }
        char extra[96];
        if (dop->on || dop->mcmc)
            snprintf(extra, sizeof extra, "loss %.5f  psnr %.2f dB  %zu Gaussians", ema, psnr, c->raw.n);
        else
            snprintf(extra, sizeof extra, "loss %.5f  psnr %.2f dB", ema, psnr);
        gt_progress_update(&pg, it, extra);
    }
    gt_progress_end(&pg);
    free(order);
    res->iterations = j->iterations;
    res->first_loss = nfirst ? sfirst / nfirst : NAN;
    res->last_loss = nlast ? slast / nlast : NAN;
    res->seconds = (gt_now_ms() - t0) / 1000.0;
    return st;
}

gt_status gt_gs_fit_run(const gt_gs_fit_job *j, gt_gs_fit_result *res_out)
{
    gt_gs_fit_result res;
    memset(&res, 0, sizeof res);
    res.psnr_test_start = res.psnr_test_end = NAN;
    if (!j->scene || !j->images || !j->cameras || !j->output)
        return gt_fail(GT_ERR_USAGE, "--fit needs IMAGES, --cameras, a SCENE and -o OUT");
    if (j->iterations < 1) return gt_fail(GT_ERR_USAGE, "--iterations must be at least 1");
    fit_ctx c;
    memset(&c, 0, sizeof c);
    c.j = j;
    gt_timings_init(&c.tm);
    gt_gs_scene s;
    memset(&s, 0, sizeof s);
    gt_out log;
    memset(&log, 0, sizeof log);
    gt_status st = gt_gs_cameras_read(j->cameras, &c.cams, &c.ncams);
    if (st == GT_OK) st = split_views(&c);
    if (st == GT_OK) st = gt_gs_scene_read(j->scene, &s);
    if (st == GT_OK) st = gt_gs_fit_images_read(j->images, c.cams, c.ncams, j->render.bg, j->downscale, &c.img);
    if (st == GT_OK) st = gt_gs_raw_from_scene(&s, &c.raw);
    gt_gs_scene_free(&s);
    if (st == GT_OK) {
        c.max_deg = c.raw.sh_degree;
        if (j->sh_degree >= 0 && j->sh_degree < c.max_deg) c.max_deg = j->sh_degree;
        c.sh_start = j->sh_start >= 0 ? j->sh_start : c.max_deg;
        for (int i = 0; i < c.ncams; i++) {
            if (c.cams[i].width > c.max_w) c.max_w = c.cams[i].width;
            if (c.cams[i].height > c.max_h) c.max_h = c.cams[i].height;
        }
        gt_device_kind dev = GT_DEVICE_CPU;
        st = gt_device_choose(j->device, j->gpu, &dev);
        c.gpu = dev == GT_DEVICE_CUDA;
#if !GT_HAVE_CUDA
        c.gpu = false;
#endif
    }
    if (st == GT_OK) {
        size_t maxpx = 3 * (size_t)c.max_w * c.max_h;
        c.rgb = malloc(maxpx * sizeof(float));
        if (!c.rgb) st = gt_fail(GT_ERR_RUNTIME, "out of memory (render buffer)");
    }
    if (st == GT_OK) {
#if GT_HAVE_CUDA
        if (c.gpu) st = gpu_setup(&c);
        else
#endif
        {
            free(c.rgb);
            c.rgb = NULL;
            st = cpu_setup(&c);
        }
    }
    if (st == GT_OK && j->log) st = gt_out_open(&log, j->log);
    res.gaussians_start = c.raw.n;
    c.peak_bytes = c.bytes;
    if (st == GT_OK) st = train(&c, j->log ? &log : NULL, &res);
    res.gaussians_end = c.raw.n;
#if GT_HAVE_CUDA
    if (st == GT_OK && c.gpu) st = dev_raw_copy(&c.raw, &c.dr, false);
#endif
    if (st == GT_OK) st = gt_gs_raw_write_ply(j->output, &c.raw);
    if (st == GT_OK && j->log) st = gt_out_commit(&log);
    else gt_out_abort(&log);
    if (st == GT_OK)
        gt_info("%d iterations in %.2f s (%.2f ms each): loss %.5f -> %.5f (means of the first and last tenth)",
                res.iterations, res.seconds, 1000 * res.seconds / res.iterations, res.first_loss, res.last_loss);
    if (st == GT_OK && c.ntest)
        gt_info("held-out PSNR %.2f -> %.2f dB", res.psnr_test_start, res.psnr_test_end);
    if (st == GT_OK && j->timings)
        gt_timings_print(&c.tm, stderr, c.gpu ? "gsrender --fit timings (GPU)" : "gsrender --fit timings (CPU)");
    res.device_bytes = c.peak_bytes;
    if (st == GT_OK && (j->densify.on || j->densify.mcmc))
        gt_info("Gaussians: %zu -> %zu (densification); peak memory counted %.1f MB", res.gaussians_start,
                res.gaussians_end, c.peak_bytes / 1e6);
#if GT_HAVE_CUDA
    if (c.gpu) gpu_free(&c);
#endif
    gt_gs_raw_free(&c.grad), gt_gs_raw_free(&c.m), gt_gs_raw_free(&c.v), gt_gs_raw_free(&c.raw);
    if (!c.gpu) free(c.stats.grad2d), free(c.stats.seen);
    free(c.rgb), free(c.dl);
    gt_gs_fit_images_free(c.img, c.ncams);
    free(c.cams), free(c.train), free(c.test);
    if (res_out) *res_out = res;
    return st;
}
