/* The reference training's optimiser on the CPU (the oracle of the Adam
 * kernel in kernels/gs/gs_fit.cu) and its schedules: per-group learning
 * rates (arguments/__init__.py OptimizationParams), the exponential decay of
 * the position rate (utils/general_utils.py get_expon_lr_func), the SH degree
 * schedule (train.py: one more every 1000 iterations) and the scene extent
 * that scales the position rate (scene/dataset_readers.py getNerfppNorm). */
#include <math.h>

#include "gs/gs_fit.h"

void gt_gs_fit_rates_default(gt_gs_fit_rates *r)
{
    r->pos_init = 0.00016;
    r->pos_final = 0.0000016;
    r->pos_steps = 30000;
    r->sh_dc = 0.0025;
    r->sh_rest = 0; /* sh_dc / 20 */
    r->opacity = 0.025; /* 0.05 before the reference's 2024 update */
    r->scale = 0.005;
    r->rot = 0.001;
}

double gt_gs_fit_rest_lr(const gt_gs_fit_rates *r)
{
    return r->sh_rest > 0 ? r->sh_rest : r->sh_dc / 20.0;
}

double gt_gs_fit_pos_lr(const gt_gs_fit_rates *r, int step, int max_steps, double extent)
{
    double a = r->pos_init * extent, b = r->pos_final * extent;
    if (step < 0 || (a == 0 && b == 0)) return 0.0;
    double t = max_steps > 0 ? (double)step / max_steps : 1.0;
    if (t < 0) t = 0;
    if (t > 1) t = 1;
    return exp(log(a) * (1.0 - t) + log(b) * t);
}

int gt_gs_fit_sh_degree(int iter, int max_deg)
{
    int d = iter / 1000;
    return d < max_deg ? d : max_deg;
}

double gt_gs_cameras_extent(const gt_gs_camera *c, int n)
{
    double mean[3] = {0, 0, 0}, far = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) mean[k] += c[i].campos[k] / (double)n;
    for (int i = 0; i < n; i++) {
        double d2 = 0;
        for (int k = 0; k < 3; k++) d2 += (c[i].campos[k] - mean[k]) * (c[i].campos[k] - mean[k]);
        if (sqrt(d2) > far) far = sqrt(d2);
    }
    return far > 0 ? 1.1 * far : 1.0;
}

void gt_gs_adam_cpu(float *p, const float *g, float *m, float *v, size_t n, double lr, double lr_rest,
                    int period, int t)
{
    const double b1 = GT_GS_ADAM_BETA1, b2 = GT_GS_ADAM_BETA2;
    double bc1 = 1.0 - pow(b1, t), bc2s = sqrt(1.0 - pow(b2, t));
    for (size_t i = 0; i < n; i++) {
        float mi = (float)(b1 * m[i] + (1.0 - b1) * g[i]);
        float vi = (float)(b2 * v[i] + (1.0 - b2) * (double)g[i] * g[i]);
        m[i] = mi;
        v[i] = vi;
        double a = (period > 0 && (int)(i % (size_t)period) >= 3) ? lr_rest : lr;
        p[i] -= (float)(a / bc1 * mi / (sqrt((double)vi) / bc2s + GT_GS_ADAM_EPS));
    }
}
