/* The per-Gaussian math of the MCMC densification strategy (Kheradmand et
 * al. 2024, "3D Gaussian Splatting as Markov Chain Monte Carlo"; gsplat's
 * MCMCStrategy) written once for the CPU fit (lib/gs/gs_fit.c) and the GPU's
 * (kernels/gs/gs_fit.cu):
 *
 *   gs_mcmc_normal   a standard normal from (seed, counter): a counter-based
 *                    hash (splitmix64 finaliser) and Box-Muller, so that the
 *                    two paths draw the same noise for the same Gaussian
 *   gs_mcmc_noise    the position noise of one Gaussian: eps ~ N(0, I) times
 *                    sigmoid(100 (1 - opacity - 0.995)) times scaler, mapped
 *                    by its 3-D covariance Sigma = R diag(s)^2 R^T (gsplat's
 *                    inject_noise_to_position: near-transparent Gaussians
 *                    wander, opaque ones stay)
 *   gs_mcmc_reg_grad the gradients of the regularisers opacity_reg x
 *                    mean(opacity) + scale_reg x mean(scale) (means over the
 *                    n opacities and the 3n scales) for one Gaussian */
#ifndef GT_GS_FIT_MCMC_H
#define GT_GS_FIT_MCMC_H

#include <math.h>
#include <stdint.h>

#include "common/hostdev.h"

#include "gs/gs_math.h"

GT_HD uint64_t gs_mcmc_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Standard normal number `counter` of the stream `seed`. */
GT_HD float gs_mcmc_normal(uint64_t seed, uint64_t counter)
{
    uint64_t a = gs_mcmc_mix(seed + 0x9E3779B97F4A7C15ull * (2 * counter + 1));
    uint64_t b = gs_mcmc_mix(seed + 0x9E3779B97F4A7C15ull * (2 * counter + 2));
    double u1 = ((double)(a >> 11) + 0.5) * (1.0 / 9007199254740992.0);
    double u2 = (double)(b >> 11) * (1.0 / 9007199254740992.0);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2));
}

/* Noise added to the position of Gaussian i at step `step`: pos += out. */
GT_HD void gs_mcmc_noise(const float *log_scale, const float *rot, float logit_opacity, float scaler,
                         uint64_t seed, uint64_t step, uint64_t i, float out[3])
{
    float op = 1.0f / (1.0f + expf(-logit_opacity));
    float gate = 1.0f / (1.0f + expf(-100.0f * ((1.0f - op) - 0.995f)));
    float q[4] = {rot[0], rot[1], rot[2], rot[3]};
    gs_quat_normalize(q);
    float s[3] = {expf(log_scale[0]), expf(log_scale[1]), expf(log_scale[2])}, S[6];
    gs_cov3(q, s, 1.0f, S);
    uint64_t c = (step * 0x100000000ull + i) * 3;
    float e[3];
    for (int k = 0; k < 3; k++) e[k] = gs_mcmc_normal(seed, c + k) * gate * scaler;
    out[0] = S[0] * e[0] + S[1] * e[1] + S[2] * e[2];
    out[1] = S[1] * e[0] + S[3] * e[1] + S[4] * e[2];
    out[2] = S[2] * e[0] + S[4] * e[1] + S[5] * e[2];
}

/* d/d(logit opacity) and d/d(log scale k) of opacity_reg mean(sigmoid) +
 * scale_reg mean(exp) over n Gaussians, added to g_logit, g_log_scale[3]. */
GT_HD void gs_mcmc_reg_grad(const float *log_scale, float logit_opacity, float opacity_reg, float scale_reg,
                            float inv_n, float *g_logit, float *g_log_scale)
{
    float op = 1.0f / (1.0f + expf(-logit_opacity));
    *g_logit += opacity_reg * op * (1.0f - op) * inv_n;
    for (int k = 0; k < 3; k++) g_log_scale[k] += scale_reg * expf(log_scale[k]) * (inv_n / 3.0f);
}

#endif
