/* lib/gs dispatch: the CUDA renderer (kernels/gs) behind gt_gs_gpu, or the
 * CPU reference. */
#include <stdlib.h>
#include <string.h>

#include "common/device.h"
#include "gs/gs.h"
#include "io/yuv.h"
#include "gt_config.h"

#if GT_HAVE_CUDA
#include "common/gpu_runtime.h"
#include "kernels/gs/gs_cuda.h"
#include "kernels/gs/gs_output.h"
#endif

struct gt_gs_gpu {
    const gt_gs_scene *scene;
    gt_gs_params params;
#if GT_HAVE_CUDA
    gt_gs_cu *cu;
    gt_gs_cu_yuv *yuv; /* Y4M output on the GPU (gt_gs_gpu_yuv_start) */
#endif
    size_t last_pairs;
};

gt_status gt_gs_gpu_create(const gt_gs_scene *s, const gt_gs_params *p, gt_gs_gpu **out)
{
    *out = NULL;
#if GT_HAVE_CUDA
    gt_gs_gpu *g = calloc(1, sizeof *g);
    if (!g) return gt_fail(GT_ERR_RUNTIME, "out of memory (renderer)");
    g->scene = s;
    g->params = *p;
    gt_status st = gt_gs_cu_create(s->n, s->sh_k, s->pos, s->scale, s->rot, s->opacity, s->sh,
                                   p->scale_modifier, p->antialias ? 1 : 0, p->square_binning ? 0 : 1,
                                   p->sh_half ? 1 : 0, &g->cu);
    if (st != GT_OK) {
        free(g);
        /* the scene is uploaded whole; only a bigger GPU or the CPU helps */
        if (gt_gpu_oom(st))
            gt_gpu_oom_hint("the scene's %zu Gaussians (SH degree %d) must fit on the GPU at once: use a GPU "
                            "with more free memory, or --device cpu", s->n, s->sh_degree);
        return st;
    }
    *out = g;
    return GT_OK;
#else
    (void)s;
    (void)p;
    return gt_fail(GT_ERR_GPU, "gsrender was built without CUDA");
#endif
}

#if GT_HAVE_CUDA
/* render c on the device; the host outputs that are not NULL are downloaded */
static gt_status cu_render(gt_gs_gpu *g, const gt_gs_camera *c, float *rgb, float *alpha, float *depth,
                           uint8_t *rgba8, gt_timings *tm)
{
    int deg = gt_gs_effective_degree(g->scene, &g->params);
    gt_status st = gt_gs_cu_render(g->cu, c, deg, g->params.bg, rgb, alpha, depth, rgba8, tm, &g->last_pairs);
    /* beyond the scene, a view needs its image buffers and its Gaussian/tile
     * pairs, both growing with the image area; frames render one at a time */
    if (gt_gpu_oom(st))
        gt_gpu_oom_hint("a %dx%d view needs memory for its pixels and Gaussian/tile pairs: a smaller --size "
                        "needs less (frames render one at a time), or --device cpu", c->width, c->height);
    return st;
}
#endif

gt_status gt_gs_gpu_render(gt_gs_gpu *g, const gt_gs_camera *c, gt_gs_image *out, int what,
                           gt_timings *tm)
{
    if (out->w != c->width || out->h != c->height)
        return gt_fail(GT_ERR_RUNTIME, "render target %dx%d does not match the camera's %dx%d", out->w,
                       out->h, c->width, c->height);
#if GT_HAVE_CUDA
    gt_gs_cu_keep_rgb(g->cu, 0);
    return cu_render(g, c, (what & GT_GS_OUT_FLOAT) ? out->rgb : NULL, (what & GT_GS_OUT_AUX) ? out->alpha : NULL,
                     (what & GT_GS_OUT_AUX) ? out->depth : NULL, (what & GT_GS_OUT_RGBA8) ? out->rgba8 : NULL, tm);
#else
    (void)g;
    (void)what;
    (void)tm;
    return gt_fail(GT_ERR_GPU, "gsrender was built without CUDA");
#endif
}

#if GT_HAVE_CUDA
gt_status gt_gs_yuv_planes_of(int fmt, int w, int h, int matrix, int range, gt_gs_yuv_planes *p)
{
    gt_yuv_colour c;
    GT_TRY(gt_yuv_colour_of((gt_pixfmt)fmt, w, h, (gt_yuv_matrix)matrix, (gt_yuv_range)range, &c));
    p->kr = c.kr, p->kg = c.kg, p->kb = c.kb, p->yo = c.yo, p->ys = c.ys, p->cs = c.cs;
    for (int k = 0; k < 3; k++) p->off[k] = c.off[k], p->stride[k] = c.stride[k], p->step[k] = c.step[k];
    p->bytes = c.bytes;
    p->w = w, p->h = h, p->sx = c.sx, p->sy = c.sy;
    return GT_OK;
}
#endif

gt_status gt_gs_gpu_yuv_start(gt_gs_gpu *g, int w, int h, int fmt, int matrix, int range)
{
#if GT_HAVE_CUDA
    gt_gs_cu_yuv_destroy(g->yuv);
    g->yuv = NULL;
    gt_gs_yuv_planes planes;
    GT_TRY(gt_gs_yuv_planes_of(fmt, w, h, matrix, range, &planes));
    gt_status st = gt_gs_cu_yuv_create(&planes, &g->yuv);
    /* two converted frames on the device and two pinned for the download */
    if (gt_gpu_oom(st))
        gt_gpu_oom_hint("a %dx%d view needs memory for its pixels and Gaussian/tile pairs, and the Y4M output "
                        "two frames on the GPU and two in pinned memory: a smaller --size needs less, or "
                        "--device cpu", w, h);
    return st;
#else
    (void)g, (void)w, (void)h, (void)fmt, (void)matrix, (void)range;
    return gt_fail(GT_ERR_GPU, "gsrender was built without CUDA");
#endif
}

gt_status gt_gs_gpu_render_yuv(gt_gs_gpu *g, const gt_gs_camera *c, int slot, gt_timings *tm)
{
#if GT_HAVE_CUDA
    if (!g->yuv) return gt_fail(GT_ERR_RUNTIME, "gt_gs_gpu_render_yuv before gt_gs_gpu_yuv_start");
    gt_gs_cu_keep_rgb(g->cu, 1);
    gt_status st = cu_render(g, c, NULL, NULL, NULL, NULL, tm);
    gt_gs_cu_keep_rgb(g->cu, 0);
    GT_TRY(st);
    return gt_gs_cu_yuv_submit(g->yuv, gt_gs_cu_device_rgb(g->cu), gt_gs_cu_stream(g->cu), slot, tm);
#else
    (void)g, (void)c, (void)slot, (void)tm;
    return gt_fail(GT_ERR_GPU, "gsrender was built without CUDA");
#endif
}

gt_status gt_gs_gpu_yuv_frame(gt_gs_gpu *g, int slot, const uint8_t **frame, double *download_ms)
{
#if GT_HAVE_CUDA
    if (!g->yuv) return gt_fail(GT_ERR_RUNTIME, "gt_gs_gpu_yuv_frame before gt_gs_gpu_yuv_start");
    return gt_gs_cu_yuv_wait(g->yuv, slot, frame, download_ms);
#else
    (void)g, (void)slot, (void)frame, (void)download_ms;
    return gt_fail(GT_ERR_GPU, "gsrender was built without CUDA");
#endif
}

size_t gt_gs_gpu_last_pairs(const gt_gs_gpu *g)
{
    return g ? g->last_pairs : 0;
}

size_t gt_gs_gpu_peak_bytes(void)
{
#if GT_HAVE_CUDA
    return gt_cu_peak_bytes();
#else
    return 0;
#endif
}

void gt_gs_gpu_destroy(gt_gs_gpu *g)
{
    if (!g) return;
#if GT_HAVE_CUDA
    gt_gs_cu_yuv_destroy(g->yuv); /* waits for its downloads */
    gt_gs_cu_destroy(g->cu);
#endif
    free(g);
}

gt_status gt_gs_render(bool use_gpu, const gt_gs_scene *s, const gt_gs_camera *c,
                       const gt_gs_params *p, gt_gs_image *out, gt_timings *tm)
{
    if (!use_gpu) {
        gt_timer t;
        gt_timer_start(&t, false, NULL);
        gt_status st = gt_gs_render_cpu(s, c, p, out);
        if (tm) gt_timings_add(tm, "render (cpu)", gt_timer_stop(&t));
        return st;
    }
    gt_gs_gpu *g;
    GT_TRY(gt_gs_gpu_create(s, p, &g));
    gt_status st = gt_gs_gpu_render(g, c, out, GT_GS_OUT_FLOAT | GT_GS_OUT_AUX | GT_GS_OUT_RGBA8, tm);
    gt_gs_gpu_destroy(g);
    return st;
}
