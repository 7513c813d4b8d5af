#include "common/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "gt_config.h"
#if GT_HAVE_CUDA
#include "kernels/common/cu_prim.h"
#include "kernels/common/cu_runtime.h"
#endif

const char *gt_device_name(gt_device_kind k)
{
    switch (k) {
    case GT_DEVICE_AUTO: return "auto";
    case GT_DEVICE_CUDA: return "cuda";
    case GT_DEVICE_CPU: return "cpu";
    }
    return "?";
}

int gt_gpu_count(char *why, size_t why_len)
{
    const char *env = getenv("GT_NO_GPU");
    if (env && *env && strcmp(env, "0") != 0) {
        if (why) snprintf(why, why_len, "GT_NO_GPU is set");
        return 0;
    }
#if GT_HAVE_CUDA
    return gt_cu_device_count(why, why_len);
#else
    if (why) snprintf(why, why_len, "this build has no CUDA support");
    return 0;
#endif
}

gt_status gt_device_choose(gt_device_kind requested, int gpu, gt_device_kind *chosen)
{
    if (requested == GT_DEVICE_CPU) {
        *chosen = GT_DEVICE_CPU;
        return GT_OK;
    }
    char why[256] = "";
    int n = gt_gpu_count(why, sizeof why);
    if (n == 0) {
        if (requested == GT_DEVICE_CUDA)
            return gt_fail(GT_ERR_GPU, "--device cuda: no CUDA GPU is available (%s)", why);
        gt_notice("no CUDA GPU available (%s); computing on the CPU", why);
        *chosen = GT_DEVICE_CPU;
        return GT_OK;
    }
    if (gpu < 0 || gpu >= n)
        return gt_fail(GT_ERR_GPU, "--gpu %d: no such GPU (this machine has %d, numbered 0..%d)",
                       gpu, n, n - 1);
#if GT_HAVE_CUDA
    GT_TRY(gt_cu_set_device(gpu));
    /* registered after the CUDA runtime's own exit handler, so it runs first */
    static int registered;
    if (!registered) {
        registered = 1;
        atexit(gt_device_shutdown);
    }
#endif
    *chosen = GT_DEVICE_CUDA;
    return GT_OK;
}

void gt_device_prepare(gt_device_kind requested, int gpu)
{
    if (requested == GT_DEVICE_CPU) return;
#if GT_HAVE_CUDA
    int n = gt_gpu_count(NULL, 0);
    if (gpu >= 0 && gpu < n) (void)gt_cu_set_device(gpu); /* errors: gt_device_choose reports them */
#else
    (void)gpu;
#endif
}

gt_status gt_gpu_mem_info(size_t *free_bytes, size_t *total_bytes)
{
#if GT_HAVE_CUDA
    return gt_cu_mem_info(free_bytes, total_bytes);
#else
    *free_bytes = *total_bytes = 0;
    return gt_fail(GT_ERR_GPU, "this build has no CUDA support");
#endif
}

void gt_gpu_describe(char *buf, size_t len)
{
    if (!len) return;
    buf[0] = 0;
#if GT_HAVE_CUDA
    gt_cu_device_name(buf, len);
#endif
}

void gt_device_shutdown(void)
{
#if GT_HAVE_CUDA
    gt_arena *a = gt_default_arena();
    if (a->ptr) gt_arena_release(a);
#endif
}
