/* Evaluating a thin-plate spline: the kernel U, the CPU reference over
 * many points and the dispatch to CUDA (kernels/tps/tps_apply.cu). */
#include <math.h>

#include "common/timer.h"
#include "gt_config.h"
#include "tps/tps.h"

#if GT_HAVE_CUDA
#include "kernels/tps/tps_cuda.h"
#endif

const char *gt_tps_kernel_name(gt_tps_kernel k) { return k == GT_TPS_R ? "r" : "r2logr"; }

double gt_tps_u(gt_tps_kernel k, double r2)
{
    if (k == GT_TPS_R) return -sqrt(r2);
    return r2 > 0.0 ? 0.5 * r2 * log(r2) : 0.0;
}

void gt_tps_eval_cpu(const gt_tps *t, const double *p, size_t npts, double *out)
{
#pragma omp parallel for schedule(static) if (npts * t->n > 100000)
    for (size_t q = 0; q < npts; q++) {
        double x = p[3 * q], y = p[3 * q + 1], z = p[3 * q + 2];
        double f[3];
        for (int c = 0; c < 3; c++)
            f[c] = t->a[0][c] + t->a[1][c] * x + t->a[2][c] * y + t->a[3][c] * z;
        for (size_t k = 0; k < t->n; k++) {
            const double *ck = t->c + 3 * k;
            double dx = x - ck[0], dy = y - ck[1], dz = z - ck[2];
            double u = gt_tps_u(t->kernel, dx * dx + dy * dy + dz * dz);
            f[0] += t->w[3 * k] * u;
            f[1] += t->w[3 * k + 1] * u;
            f[2] += t->w[3 * k + 2] * u;
        }
        out[3 * q] = f[0];
        out[3 * q + 1] = f[1];
        out[3 * q + 2] = f[2];
    }
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
    GT_TRY(gt_tps_cuda_init(tm));
    return gt_tps_cuda_eval((int)t->kernel, t->n, t->c, t->w, &t->a[0][0], p, npts, out, tm);
#else
    (void)tm;
    return gt_fail(GT_ERR_GPU, "this build has no CUDA support; use --device cpu");
#endif
}
