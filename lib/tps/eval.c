/* Evaluating a thin-plate spline: the CPU reference over many points
 * (tps_eval_point of tps_math.h, the function the CUDA kernel in
 * kernels/tps/tps_apply.cu computes too) and the dispatch. */
#include "common/timer.h"
#include "gt_config.h"
#include "tps/tps.h"
#include "tps/tps_math.h"

_Static_assert(GT_TPS_R2LOGR == TPS_KERNEL_R2LOGR && GT_TPS_R == TPS_KERNEL_R,
               "tps.h and tps_math.h disagree on the kernel codes");

#if GT_HAVE_CUDA
#include "kernels/tps/tps_cuda.h"
#endif

const char *gt_tps_kernel_name(gt_tps_kernel k) { return k == GT_TPS_R ? "r" : "r2logr"; }

double gt_tps_u(gt_tps_kernel k, double r2)
{
    return tps_u((int)k, r2);
}

void gt_tps_eval_cpu(const gt_tps *t, const double *p, size_t npts, double *out)
{
#pragma omp parallel for schedule(static) if (npts * t->n > 100000)
    for (size_t q = 0; q < npts; q++)
        tps_eval_point((int)t->kernel, t->n, t->c, t->w, &t->a[0][0], p[3 * q], p[3 * q + 1], p[3 * q + 2],
                       out + 3 * q);
}

gt_status gt_tps_eval(const gt_tps *t, const double *p, size_t npts, double *out,
                      gt_device_kind device, gt_timings *tm)
{
    if (device == GT_DEVICE_CPU) {
        double t0 = gt_now_ms();
        gt_tps_eval_cpu(t, p, npts, out);
        if (tm) gt_timings_add(tm, "evaluate", gt_now_ms() - t0);
        return GT_OK;
    }
#if GT_HAVE_CUDA
    /* no gt_tps_cuda_init: evaluating needs neither cuBLAS nor cuSOLVER */
    return gt_tps_cuda_eval((int)t->kernel, t->n, t->c, t->w, &t->a[0][0], p, npts, out, tm);
#else
    (void)tm;
    return gt_fail(GT_ERR_GPU, "this build has no CUDA support; use --device cpu");
#endif
}
