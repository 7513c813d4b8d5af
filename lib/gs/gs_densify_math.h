/* The per-Gaussian math of adaptive density control and of MCMC's
 * relocation, written once for the CPU reference (lib/gs/gs_fit_densify.c)
 * and the GPU (kernels/gs/gs_densify.cu), so that both compute the same
 * new set of Gaussians from the same state:
 *
 *   gs_dens_unit       a uniform number in [0, 1) from (seed, counter): the
 *                      draws are counter based, not sequential, so that each
 *                      thread of the GPU draws what the CPU loop draws
 *   gs_dens_max_axis   a Gaussian's largest axis (exp of its log-scales)
 *   gs_dens_pruned     the prune test (opacity, and with prune_big the size)
 *   gs_dens_child      child `k` (0, 1) of a split: position drawn from the
 *                      parent's own Gaussian, scale / 1.6
 *   gs_mcmc_weight     a live Gaussian's opacity in 2^-32 units, the weight
 *                      of its draws: integer sums are exact in any order, so
 *                      the CPU's running sum and the GPU's scan agree
 *   gs_mcmc_pick       the index a draw lands on in such an inclusive sum
 *   gs_mcmc_share      the opacity and scale factor of N copies of one
 *                      Gaussian (Kheradmand et al. 2024, eq. 9)
 * Floats as the parameters are; the sharing in double as gsplat's. */
#ifndef GT_GS_DENSIFY_MATH_H
#define GT_GS_DENSIFY_MATH_H

#include <math.h>
#include <stdint.h>

#include "common/hostdev.h"
#include "gs/gs_fit_mcmc.h"
#include "gs/gs_grad.h"
#include "gs/gs_math.h"

/* Gaussian si of src -> di of dst, every parameter group (the arrays of
 * gt_gs_raw, host or device alike). */
GT_HD void gs_raw_copy_one(const gt_gs_raw *dst, size_t di, const gt_gs_raw *src, size_t si)
{
    for (int a = 0; a < 3; a++) dst->pos[3 * di + a] = src->pos[3 * si + a];
    for (int a = 0; a < 3; a++) dst->log_scale[3 * di + a] = src->log_scale[3 * si + a];
    for (int a = 0; a < 4; a++) dst->rot[4 * di + a] = src->rot[4 * si + a];
    dst->logit_opacity[di] = src->logit_opacity[si];
    const size_t k3 = (size_t)src->sh_k * 3;
    for (size_t k = 0; k < k3; k++) dst->sh[k3 * di + k] = src->sh[k3 * si + k];
}

/* Gaussian i of x zeroed (Adam moments restarted). */
GT_HD void gs_raw_zero_one(const gt_gs_raw *x, size_t i)
{
    for (int a = 0; a < 3; a++) x->pos[3 * i + a] = 0.0f, x->log_scale[3 * i + a] = 0.0f;
    for (int a = 0; a < 4; a++) x->rot[4 * i + a] = 0.0f;
    x->logit_opacity[i] = 0.0f;
    const size_t k3 = (size_t)x->sh_k * 3;
    for (size_t k = 0; k < k3; k++) x->sh[k3 * i + k] = 0.0f;
}

/* Uniform in [0, 1): 53 bits of draw `counter` of stream `seed`. */
GT_HD double gs_dens_unit(uint64_t seed, uint64_t counter)
{
    return (double)(gs_mcmc_mix(seed + 0x9E3779B97F4A7C15ull * (counter + 1)) >> 11) *
           (1.0 / 9007199254740992.0);
}

GT_HD float gs_dens_max_axis(const float *log_scale)
{
    float a = log_scale[0] > log_scale[1] ? log_scale[0] : log_scale[1];
    return expf(a > log_scale[2] ? a : log_scale[2]);
}

/* Pruned: opacity below min_opacity (or not a number), or with prune_big a
 * largest axis above 0.1 x extent. */
GT_HD int gs_dens_pruned(const float *log_scale, float logit_opacity, float min_opacity, int prune_big,
                         float extent)
{
    float op = gs_sigmoid(logit_opacity);
    if (!(op >= min_opacity)) return 1;
    return prune_big && gs_dens_max_axis(log_scale) > 0.1f * extent;
}

/* The log-scales of a split's children: the parent's scale / (0.8 x 2). */
GT_HD void gs_dens_child_scale(const float *log_scale, float out[3])
{
    for (int a = 0; a < 3; a++) out[a] = logf(expf(log_scale[a]) / (0.8f * 2.0f));
}

/* Child k (0 or 1) of parent `i` split with stream `seed`: its centre is
 * the parent's plus R diag(s) z, z ~ N(0, I) (the reference's
 * torch.normal(0, stds) rotated by the parent's quaternion), its log-scales
 * gs_dens_child_scale's. */
GT_HD void gs_dens_child(const float *pos, const float *log_scale, const float *rot, uint64_t seed, uint64_t i,
                         int k, float out_pos[3], float out_log_scale[3])
{
    float q[4] = {rot[0], rot[1], rot[2], rot[3]}, Rq[9], s[3], z[3];
    gs_quat_normalize(q);
    gs_rotmat(q, Rq);
    for (int a = 0; a < 3; a++) s[a] = expf(log_scale[a]);
    uint64_t c = (i * 2 + (uint64_t)k) * 3;
    for (int a = 0; a < 3; a++) z[a] = gs_mcmc_normal(seed, c + (uint64_t)a) * s[a];
    for (int a = 0; a < 3; a++) out_pos[a] = pos[a] + Rq[3 * a] * z[0] + Rq[3 * a + 1] * z[1] + Rq[3 * a + 2] * z[2];
    gs_dens_child_scale(log_scale, out_log_scale);
}

/* ---- MCMC ---- */
/* A Gaussian's opacity in double: the float sigmoid's expf is within 2 ulp
 * on the GPU, correctly rounded in glibc, and near an opacity of 1 the
 * share's (1 - o)^(1/N) and the logit after it magnify one ulp of o to
 * ~1e-5 (test_gs_densify_gpu); in double both paths agree to the float
 * they round to. */
GT_HD double gs_mcmc_opacity(float logit_opacity)
{
    return 1.0 / (1.0 + exp(-(double)logit_opacity));
}

/* Dead: opacity at most min_opacity, or not a number. */
GT_HD int gs_mcmc_dead(float logit_opacity, float min_opacity)
{
    double op = gs_mcmc_opacity(logit_opacity);
    return !(op > (double)min_opacity);
}

GT_HD uint64_t gs_mcmc_weight(float logit_opacity)
{
    double op = gs_mcmc_opacity(logit_opacity);
    return op > 0.0 ? (uint64_t)(op * 4294967296.0) : 0u;
}

/* Draw `counter` of stream `seed` over the inclusive sums cdf[0..n) of the
 * weights (cdf[n-1] = total > 0): the first index whose sum exceeds
 * floor(u total). */
GT_HD uint64_t gs_mcmc_pick(const uint64_t *cdf, uint64_t n, uint64_t seed, uint64_t counter)
{
    uint64_t total = cdf[n - 1];
    uint64_t t = (uint64_t)(gs_dens_unit(seed, counter) * (double)total);
    if (t >= total) t = total - 1;
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (cdf[mid] > t) hi = mid;
        else lo = mid + 1;
    }
    return lo < n ? lo : n - 1;
}

#define GS_MCMC_NMAX 51

/* One Gaussian of opacity o shared among N copies (N clamped to 1..51, as
 * gsplat): each gets 1 - (1 - o)^(1/N) and its scale times *scale_factor. */
GT_HD void gs_mcmc_share(double o, int N, double *o_new, double *scale_factor)
{
    if (N < 1) N = 1;
    if (N > GS_MCMC_NMAX) N = GS_MCMC_NMAX;
    double on = 1.0 - pow(1.0 - o, 1.0 / N);
    /* sum_{i=1..N} sum_{k=0..i-1} C(i-1, k) (-1)^k on^(k+1) / sqrt(k+1) */
    double sum = 0.0;
    for (int i = 1; i <= N; i++) {
        double c = 1.0; /* C(i-1, k) */
        for (int k = 0; k < i; k++) {
            sum += c * ((k & 1) ? -1.0 : 1.0) * pow(on, k + 1) / sqrt(k + 1.0);
            c = c * (double)(i - 1 - k) / (double)(k + 1);
        }
    }
    *o_new = on;
    *scale_factor = sum > 0 ? o / sum : 1.0;
}

/* A source drawn `times` times (and so copied that often) after the share:
 * its new logit opacity (clamped to [min_opacity, 1) as gsplat, so that
 * no copy is born dead) and the log of its scale factor. */
GT_HD void gs_mcmc_shared(float logit_opacity, uint32_t times, float min_opacity, float *new_logit,
                          float *dlog_scale)
{
    double on, f;
    gs_mcmc_share(gs_mcmc_opacity(logit_opacity), (int)(times > 1000u ? 1000u : times) + 1, &on, &f);
    const double omax = 1.0 - 1.1920928955078125e-07; /* 1 - 2^-23: a finite logit */
    if (on > omax) on = omax;
    if (on < (double)min_opacity) on = (double)min_opacity;
    *new_logit = (float)log(on / (1.0 - on));
    *dlog_scale = (float)log(f);
}

#endif
