/* Without CUDA the GPU stitcher is unavailable (the CUDA build implements
 * gt_stitch_gpu_* in kernels/stitch/pipeline.cu). */
#include "gt_config.h"
#include "stitch/stitch.h"

#if !GT_HAVE_CUDA
gt_status gt_stitch_gpu_create(const gt_stitch_plan *plan, gt_stitch_gpu **g)
{
    (void)plan;
    *g = NULL;
    return gt_fail(GT_ERR_GPU, "this build has no CUDA support");
}
gt_status gt_stitch_gpu_prealloc(int ncam, size_t in_bytes, size_t out_bytes, gt_stitch_gpu **pre)
{
    (void)ncam, (void)in_bytes, (void)out_bytes;
    *pre = NULL;
    return gt_fail(GT_ERR_GPU, "this build has no CUDA support");
}
gt_status gt_stitch_gpu_create_from(gt_stitch_gpu *pre, const gt_stitch_plan *plan, gt_stitch_gpu **g)
{
    (void)pre, (void)plan;
    *g = NULL;
    return gt_fail(GT_ERR_GPU, "this build has no CUDA support");
}
void gt_stitch_gpu_prefault(int ncam, size_t in_bytes, size_t out_bytes)
{
    (void)ncam, (void)in_bytes, (void)out_bytes;
}
gt_status gt_stitch_gpu_frame(gt_stitch_gpu *g, const uint8_t *const *in, uint8_t *out)
{
    (void)g, (void)in, (void)out;
    return gt_fail(GT_ERR_GPU, "this build has no CUDA support");
}
uint8_t *gt_stitch_gpu_in_buf(gt_stitch_gpu *g, int slot, int cam)
{
    (void)g, (void)slot, (void)cam;
    return NULL;
}
uint8_t *gt_stitch_gpu_out_buf(gt_stitch_gpu *g, int slot)
{
    (void)g, (void)slot;
    return NULL;
}
gt_status gt_stitch_gpu_submit(gt_stitch_gpu *g, int slot)
{
    (void)g, (void)slot;
    return gt_fail(GT_ERR_GPU, "this build has no CUDA support");
}
gt_status gt_stitch_gpu_wait(gt_stitch_gpu *g, int slot)
{
    (void)g, (void)slot;
    return gt_fail(GT_ERR_GPU, "this build has no CUDA support");
}
void gt_stitch_gpu_set_gains(gt_stitch_gpu *g)
{
    (void)g;
}
void gt_stitch_gpu_stage_ms(gt_stitch_gpu *g, double ms[4], long *frames)
{
    (void)g;
    for (int k = 0; k < 4; k++) ms[k] = 0;
    *frames = 0;
}
gt_status gt_stitch_gpu_masks(gt_stitch_gpu *g, int p, int k, float *out)
{
    (void)g, (void)p, (void)k, (void)out;
    return gt_fail(GT_ERR_GPU, "this build has no CUDA support");
}
void gt_stitch_gpu_destroy(gt_stitch_gpu *g)
{
    (void)g;
}
gt_status gt_stitch_gpu_bench_warp(const gt_stitch_plan *plan, int iters, double ms[2])
{
    (void)plan, (void)iters;
    ms[0] = ms[1] = 0;
    return gt_fail(GT_ERR_GPU, "this build has no CUDA support");
}
#else
typedef int gt_stitch_gpu_c_unused;
#endif
