/* The training state of gsrender --fit: the held-out split, and the
 * parameters, gradients, Adam moments, statistics and images on the GPU
 * (everything stays on the device; the training images are uploaded once,
 * as bytes when every value is a multiple of 1/255, as 8-bit photographs
 * without alpha are, else as floats) or on the CPU; made again in the new
 * size when the density control changes the count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"
#include "gs/gs_capture.h"
#include "gs/gs_fit_internal.h"

#if GT_HAVE_CUDA
#include "common/gpu_runtime.h"
#include "kernels/gs/gs_densify_cuda.h"
#endif

size_t gs_fit_count(const fit_ctx *c)
{
#if GT_HAVE_CUDA
    if (c->gpu) return c->dr.n;
#endif
    return c->raw.n;
}

static size_t raw_floats(size_t n, int sh_k)
{
    return n * (11 + (size_t)sh_k * 3);
}

void gs_fit_stage_start(fit_ctx *c)
{
    if (c->j->timings) gt_timer_start(&c->timer, c->gpu, NULL);
}

void gs_fit_stage_stop(fit_ctx *c, const char *name)
{
    if (c->j->timings) gt_timings_add(&c->tm, name, gt_timer_stop(&c->timer));
}

/* ---- held-out and training views ---- */
gt_status gs_fit_split_views(fit_ctx *c)
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
                return gt_fail(GT_ERR_USAGE, "--test-views: no camera '%s' (%d cameras)", name, c->ncams);
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
static gt_status dev_stats_alloc(fit_ctx *c, size_t n)
{
    gt_cu_free(c->stats.grad2d), gt_cu_free(c->stats.seen);
    c->stats.grad2d = c->stats.seen = NULL;
    if (!c->j->densify.on) return GT_OK;
    size_t b = (n ? n : 1) * sizeof(float);
    GT_TRY(gt_cu_malloc((void **)&c->stats.grad2d, b, "densification statistics"));
    GT_TRY(gt_cu_malloc((void **)&c->stats.seen, b, "densification statistics"));
    GT_TRY(gt_cu_memset(c->stats.grad2d, 0, b, NULL));
    return gt_cu_memset(c->stats.seen, 0, b, NULL);
}

/* Device bytes of the fit now: parameters, gradients, Adam moments,
 * statistics, images, the renderer's and the loss's workspaces. */
static size_t gpu_bytes(const fit_ctx *c)
{
    size_t params = raw_floats(c->dr.n, c->dr.sh_k) * sizeof(float);
    size_t stats = c->j->densify.on ? 2 * c->dr.n * sizeof(float) : 0;
    return 4 * params + stats + c->img_bytes + c->work_bytes + gt_gs_diff_bytes(c->diff);
}

/* The training images on the device: 8-bit when every value is k/255. */
static gt_status upload_images(fit_ctx *c, bool *bytes_out)
{
    c->img_off = calloc((size_t)c->ncams + 1, sizeof *c->img_off);
    if (!c->img_off) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    for (int i = 0; i < c->ncams; i++)
        c->img_off[i + 1] = c->img_off[i] + 3 * (size_t)c->cams[i].width * c->cams[i].height;
    size_t total = c->img_off[c->ncams];
    bool bytes = true;
    if (c->img8) { /* loaded as bytes */
        *bytes_out = true;
        c->img_bytes = total;
        GT_TRY(gt_cu_malloc((void **)&c->dimg8, total, "training images (8-bit)"));
        for (int i = 0; i < c->ncams; i++)
            GT_TRY(gt_cu_memcpy_h2d(c->dimg8 + c->img_off[i], c->img8[i], c->img_off[i + 1] - c->img_off[i], NULL));
        return GT_OK;
    }
    for (int i = 0; i < c->ncams && bytes; i++)
        for (size_t k = 0; k < c->img_off[i + 1] - c->img_off[i] && bytes; k++) {
            float v = c->img[i][k] * 255.0f;
            bytes = v == rintf(v) && (float)(rintf(v) / 255.0f) == c->img[i][k];
        }
    *bytes_out = bytes;
    c->img_bytes = total * (bytes ? 1 : sizeof(float));
    if (!bytes) {
        GT_TRY(gt_cu_malloc((void **)&c->dimg, total * sizeof(float), "training images"));
        for (int i = 0; i < c->ncams; i++)
            GT_TRY(gt_cu_memcpy_h2d(c->dimg + c->img_off[i], c->img[i],
                                    (c->img_off[i + 1] - c->img_off[i]) * sizeof(float), NULL));
        return GT_OK;
    }
    GT_TRY(gt_cu_malloc((void **)&c->dimg8, total, "training images (8-bit)"));
    size_t maxpx = 3 * (size_t)c->max_w * c->max_h;
    unsigned char *tmp = malloc(maxpx);
    if (!tmp) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    gt_status st = GT_OK;
    for (int i = 0; i < c->ncams && st == GT_OK; i++) {
        size_t n = c->img_off[i + 1] - c->img_off[i];
        for (size_t k = 0; k < n; k++) tmp[k] = (unsigned char)rintf(c->img[i][k] * 255.0f);
        st = gt_cu_memcpy_h2d(c->dimg8 + c->img_off[i], tmp, n, NULL);
    }
    free(tmp);
    return st;
}

static gt_status gpu_setup(fit_ctx *c)
{
    GT_TRY(gt_gs_cu_raw_alloc(&c->dr, c->raw.n, c->raw.sh_degree, "Gaussian parameters"));
    GT_TRY(gt_gs_cu_raw_alloc(&c->dg, c->raw.n, c->raw.sh_degree, "Gaussian gradients"));
    GT_TRY(gt_gs_cu_raw_alloc(&c->dm, c->raw.n, c->raw.sh_degree, "Adam first moments"));
    GT_TRY(gt_gs_cu_raw_alloc(&c->dv, c->raw.n, c->raw.sh_degree, "Adam second moments"));
    GT_TRY(gt_gs_cu_raw_copy(&c->dr, &c->raw, 0, NULL));
    bool bytes = false;
    GT_TRY(upload_images(c, &bytes));
    size_t maxpx = 3 * (size_t)c->max_w * c->max_h;
    if (bytes) GT_TRY(gt_cu_malloc((void **)&c->dtarget, maxpx * sizeof(float), "training image"));
    GT_TRY(gt_cu_malloc((void **)&c->drgb, maxpx * sizeof(float), "rendered image"));
    GT_TRY(gt_cu_malloc((void **)&c->ddl, maxpx * sizeof(float), "image gradient"));
    GT_TRY(gt_gs_cu_loss_create(c->max_w, c->max_h, NULL, &c->loss));
    GT_TRY(gt_gs_diff_create(c->raw.n, c->raw.sh_degree, c->max_w, c->max_h, NULL, &c->diff));
    GT_TRY(dev_stats_alloc(c, c->raw.n));
    /* the images live on the device now; the host's floats are not needed */
    gt_gs_fit_images_free(c->img, c->ncams);
    c->img = NULL;
    gt_gs_capture_images_free((void **)c->img8, c->ncams);
    c->img8 = NULL;
    size_t params = raw_floats(c->raw.n, c->raw.sh_k) * sizeof(float);
    c->work_bytes = (bytes ? 3 : 2) * maxpx * sizeof(float) + gt_gs_cu_loss_bytes(c->loss);
    size_t work = c->work_bytes + gt_gs_diff_bytes(c->diff);
    c->bytes = gpu_bytes(c);
    gt_info("GPU memory: %zu Gaussians (SH degree %d): parameters %.1f MB, gradients %.1f MB, Adam moments "
            "%.1f MB, %d training images %.1f MB (%s), renderer and loss workspace %.1f MB; total %.1f MB "
            "(%.0f bytes per Gaussian besides the images and workspace)",
            c->raw.n, c->raw.sh_degree, params / 1e6, params / 1e6, 2 * params / 1e6, c->ncams,
            c->img_bytes / 1e6, bytes ? "8-bit" : "float", work / 1e6, c->bytes / 1e6,
            c->raw.n ? 4.0 * params / c->raw.n : 0.0);
    return GT_OK;
}

static gt_status gpu_resized(fit_ctx *c)
{
    size_t n = c->dr.n;
    gt_gs_cu_raw_free(&c->dg);
    GT_TRY(gt_gs_cu_raw_alloc(&c->dg, n, c->dr.sh_degree, "Gaussian gradients"));
    GT_TRY(dev_stats_alloc(c, n));
    GT_TRY(gt_gs_diff_resize(c->diff, n));
    c->bytes = gpu_bytes(c);
    return GT_OK;
}

static void gpu_free(fit_ctx *c)
{
    gt_gs_cu_raw_free(&c->dr), gt_gs_cu_raw_free(&c->dg), gt_gs_cu_raw_free(&c->dm), gt_gs_cu_raw_free(&c->dv);
    gt_cu_free(c->stats.grad2d), gt_cu_free(c->stats.seen);
    c->stats.grad2d = c->stats.seen = NULL;
    gt_cu_free(c->dimg), gt_cu_free(c->drgb), gt_cu_free(c->ddl), gt_cu_free(c->dimg8), gt_cu_free(c->dtarget);
    free(c->img_off);
    if (c->loss) gt_gs_cu_loss_destroy(c->loss);
    if (c->diff) gt_gs_diff_destroy(c->diff);
}
#endif

/* ---- host state ---- */
static gt_status cpu_stats_alloc(fit_ctx *c)
{
    free(c->stats.grad2d), free(c->stats.seen);
    c->stats.grad2d = c->stats.seen = NULL;
    if (!c->j->densify.on) return GT_OK;
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
    c->dl = malloc(maxpx * sizeof(float));
    if (!c->dl) return gt_fail(GT_ERR_RUNTIME, "out of memory (render buffers)");
    GT_TRY(cpu_stats_alloc(c));
    c->bytes = 4 * raw_floats(c->raw.n, c->raw.sh_k) * sizeof(float);
    gt_info("memory: %zu Gaussians (SH degree %d): parameters, gradients and Adam moments %.1f MB", c->raw.n,
            c->raw.sh_degree, c->bytes / 1e6);
    return GT_OK;
}

gt_status gs_fit_setup(fit_ctx *c)
{
    size_t maxpx = 3 * (size_t)c->max_w * c->max_h;
    c->rgb = malloc(maxpx * sizeof(float));
    if (!c->rgb) return gt_fail(GT_ERR_RUNTIME, "out of memory (render buffer)");
#if GT_HAVE_CUDA
    if (c->gpu) GT_TRY(gpu_setup(c));
    else
#endif
        GT_TRY(cpu_setup(c));
    c->peak_bytes = c->bytes;
    return GT_OK;
}

gt_status gs_fit_resized(fit_ctx *c)
{
#if GT_HAVE_CUDA
    if (c->gpu) GT_TRY(gpu_resized(c));
    else
#endif
    {
        gt_gs_raw_free(&c->grad);
        GT_TRY(gt_gs_raw_alloc(&c->grad, c->raw.n, c->raw.sh_degree));
        GT_TRY(cpu_stats_alloc(c));
        c->bytes = 4 * raw_floats(c->raw.n, c->raw.sh_k) * sizeof(float);
    }
    if (c->bytes > c->peak_bytes) c->peak_bytes = c->bytes;
    return GT_OK;
}

gt_status gs_fit_download(fit_ctx *c)
{
#if GT_HAVE_CUDA
    if (c->gpu) {
        if (c->raw.n != c->dr.n) {
            gt_gs_raw_free(&c->raw);
            GT_TRY(gt_gs_raw_alloc(&c->raw, c->dr.n, c->dr.sh_degree));
        }
        return gt_gs_cu_raw_copy(&c->raw, &c->dr, 1, NULL);
    }
#endif
    (void)c; /* the CPU path trains c->raw itself */
    return GT_OK;
}

void gs_fit_release(fit_ctx *c)
{
#if GT_HAVE_CUDA
    if (c->gpu) gpu_free(c);
#endif
    gt_gs_raw_free(&c->grad), gt_gs_raw_free(&c->m), gt_gs_raw_free(&c->v), gt_gs_raw_free(&c->raw);
    if (!c->gpu) free(c->stats.grad2d), free(c->stats.seen);
    free(c->rgb), free(c->dl);
    gt_gs_fit_images_free(c->img, c->ncams);
    gt_gs_capture_images_free((void **)c->img8, c->ncams);
    free(c->cams), free(c->train), free(c->test);
}
