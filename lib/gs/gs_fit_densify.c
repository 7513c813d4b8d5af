/* Adaptive density control of the reference training (graphdeco
 * gaussian-splatting, scene/gaussian_model.py: densify_and_clone,
 * densify_and_split, prune_points, reset_opacity; train.py's schedule),
 * on host arrays: the CPU fit calls it on its state, the GPU fit on the
 * state it downloads at a densification step (gs_fit.c).
 *
 * With g the mean over the views that saw a Gaussian of |dL/d(2-D mean)|
 * in normalised device coordinates (gt_gs_grad_stats), and s its largest
 * axis (exp of the log-scales):
 *   clone  g >= threshold and s <= percent_dense x extent: a copy at the
 *          same place (the next steps' gradients pull the two apart);
 *   split  g >= threshold and s >  percent_dense x extent: two children
 *          drawn from the Gaussian itself (N(0, diag(scale)^2) rotated by
 *          its quaternion, around its centre), each with the scale / 1.6,
 *          the parent's rotation, opacity and colour; the parent removed;
 *   prune  opacity < min_opacity, and with prune_big a largest axis above
 *          0.1 x extent (the reference, after its first opacity reset).
 * The reference also prunes Gaussians larger than 20 pixels on screen
 * after the first reset, but it clears its per-Gaussian maximum radius in
 * densification_postfix just before that test, so the test never prunes
 * anything; it is left out here.
 * New Gaussians start with zero Adam moments (the reference's
 * cat_tensors_to_optimizer); the survivors keep theirs. Order: survivors,
 * clones, children. With a cap on the count the candidates with the
 * largest g go first. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/rng.h"
#include "gs/gs_fit.h"
#include "gs/gs_fit_mcmc.h"
#include "gs/gs_math.h"
#include "gs/gs_math_grad.h"

void gt_gs_densify_opts_default(gt_gs_densify_opts *o)
{
    memset(o, 0, sizeof *o);
    o->from_iter = 500;
    o->until_iter = -1;
    o->interval = 100;
    o->grad_threshold = 0.0002;
    o->percent_dense = 0.01;
    o->opacity_reset = 3000;
    o->min_opacity = 0.005;
    o->noise_lr = 5e5;
    o->opacity_reg = 0.01;
    o->scale_reg = 0.01;
}

int gt_gs_densify_until(const gt_gs_densify_opts *o, int iterations)
{
    if (o->until_iter >= 0) return o->until_iter;
    int u = iterations / 2;
    return u < 15000 ? u : 15000;
}

static float max_axis(const float *log_scale)
{
    float a = log_scale[0] > log_scale[1] ? log_scale[0] : log_scale[1];
    return expf(a > log_scale[2] ? a : log_scale[2]);
}


/* Gaussian si of src -> di of dst, every group. */
static void copy_one(gt_gs_raw *dst, size_t di, const gt_gs_raw *src, size_t si)
{
    size_t k3 = (size_t)src->sh_k * 3;
    memcpy(dst->pos + 3 * di, src->pos + 3 * si, 3 * sizeof(float));
    memcpy(dst->log_scale + 3 * di, src->log_scale + 3 * si, 3 * sizeof(float));
    memcpy(dst->rot + 4 * di, src->rot + 4 * si, 4 * sizeof(float));
    dst->logit_opacity[di] = src->logit_opacity[si];
    memcpy(dst->sh + k3 * di, src->sh + k3 * si, k3 * sizeof(float));
}

typedef struct cand {
    float g;
    uint32_t i;
} cand;

static int by_grad_desc(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->g != y->g) return x->g > y->g ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static bool pruned(const gt_gs_raw *r, size_t i, double min_opacity, bool prune_big, double extent)
{
    if (gs_sigmoid(r->logit_opacity[i]) < min_opacity) return true;
    return prune_big && max_axis(r->log_scale + 3 * i) > 0.1 * extent;
}

gt_status gt_gs_densify_prune(gt_gs_raw *r, gt_gs_raw *m, gt_gs_raw *v, const gt_gs_grad_stats *stats,
                              const gt_gs_densify_opts *o, double extent, bool prune_big, uint64_t *rng,
                              gt_gs_densify_count *out)
{
    memset(out, 0, sizeof *out);
    size_t n = r->n;
    out->n_before = n;
    if (n > UINT32_MAX) return gt_fail(GT_ERR_DATA, "too many Gaussians to densify (%zu)", n);
    /* 0: kept as is, 1: cloned (kept + a copy), 2: split (two children, the parent removed) */
    unsigned char *act = calloc(n ? n : 1, 1);
    cand *c = malloc((n ? n : 1) * sizeof *c);
    if (!act || !c) {
        free(act), free(c);
        return gt_fail(GT_ERR_RUNTIME, "out of memory (densification of %zu Gaussians)", n);
    }
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) {
        float g = stats->seen[i] > 0 ? stats->grad2d[i] / stats->seen[i] : 0.0f;
        if (g >= o->grad_threshold && isfinite(g)) c[nc].g = g, c[nc].i = (uint32_t)i, nc++;
    }
    size_t budget = SIZE_MAX;
    if (o->max_gaussians) budget = o->max_gaussians > n ? o->max_gaussians - n : 0;
    if (nc > budget) qsort(c, nc, sizeof *c, by_grad_desc);
    size_t take = nc < budget ? nc : budget;
    out->capped = nc - take;
    for (size_t k = 0; k < take; k++) {
        size_t i = c[k].i;
        bool small = max_axis(r->log_scale + 3 * i) <= o->percent_dense * extent;
        act[i] = small ? 1 : 2;
        if (small) out->cloned++;
        else out->split++;
    }
    free(c);
    /* the count before pruning */
    size_t total = n + out->cloned + out->split; /* each split: +2 children -1 parent */
    gt_gs_raw tr, tm, tv;
    gt_status st = gt_gs_raw_alloc(&tr, total, r->sh_degree);
    if (st == GT_OK) st = gt_gs_raw_alloc(&tm, total, r->sh_degree);
    else memset(&tm, 0, sizeof tm);
    if (st == GT_OK) st = gt_gs_raw_alloc(&tv, total, r->sh_degree);
    else memset(&tv, 0, sizeof tv);
    if (st != GT_OK) {
        gt_gs_raw_free(&tr), gt_gs_raw_free(&tm), gt_gs_raw_free(&tv);
        free(act);
        return st;
    }
    size_t w = 0;
    for (size_t i = 0; i < n; i++) /* survivors keep their moments */
        if (act[i] != 2) copy_one(&tr, w, r, i), copy_one(&tm, w, m, i), copy_one(&tv, w, v, i), w++;
    for (size_t i = 0; i < n; i++) /* clones: moments zero (calloc) */
        if (act[i] == 1) copy_one(&tr, w++, r, i);
    for (size_t i = 0; i < n; i++) {
        if (act[i] != 2) continue;
        float q[4], Rq[9], s[3], op;
        gs_activate(r->rot + 4 * i, r->log_scale + 3 * i, r->logit_opacity[i], q, s, &op);
        gs_rotmat(q, Rq);
        for (int child = 0; child < 2; child++) {
            float z[3];
            for (int a = 0; a < 3; a++) z[a] = (float)gt_rng_normal(rng) * s[a];
            copy_one(&tr, w, r, i);
            for (int a = 0; a < 3; a++) {
                tr.pos[3 * w + a] = r->pos[3 * i + a] + Rq[3 * a] * z[0] + Rq[3 * a + 1] * z[1] + Rq[3 * a + 2] * z[2];
                tr.log_scale[3 * w + a] = logf(s[a] / (0.8f * 2.0f));
            }
            w++;
        }
    }
    free(act);
    /* prune over the whole new set, compacting in place */
    size_t keep = 0;
    for (size_t i = 0; i < total; i++) {
        if (pruned(&tr, i, o->min_opacity, prune_big, extent)) continue;
        if (keep != i) copy_one(&tr, keep, &tr, i), copy_one(&tm, keep, &tm, i), copy_one(&tv, keep, &tv, i);
        keep++;
    }
    out->pruned = total - keep;
    tr.n = tm.n = tv.n = keep; /* the arrays stay as allocated; n is what counts */
    gt_gs_raw_free(r), gt_gs_raw_free(m), gt_gs_raw_free(v);
    *r = tr, *m = tm, *v = tv;
    out->n_after = keep;
    return GT_OK;
}

void gt_gs_opacity_cap(float *logit_opacity, size_t n, double max_opacity)
{
    float cap = (float)log(max_opacity / (1.0 - max_opacity));
    for (size_t i = 0; i < n; i++)
        if (!(logit_opacity[i] <= cap)) logit_opacity[i] = cap;
}

/* ---- MCMC (Kheradmand et al. 2024; gsplat's MCMCStrategy) ----
 * Relocation: every "dead" Gaussian (opacity <= min_opacity) becomes a copy
 * of a live one drawn with probability proportional to its opacity; a
 * source drawn N-1 times and its N-1 copies share its opacity o and scale s
 * as gt_gs_mcmc_share says, so that the N of them render about as the one
 * did. Then the count grows by 5 % (at most to cap_max) the same way, the
 * copies appended. Sources and copies start again with zero Adam moments
 * (gsplat: the relocated sources' moments reset, the added ones zero). */
#define MCMC_NMAX 51

void gt_gs_mcmc_share(double o, int N, double *o_new, double *scale_factor)
{
    if (N < 1) N = 1;
    if (N > MCMC_NMAX) N = MCMC_NMAX;
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

/* index of the first cdf entry > u (cdf increasing, n entries) */
static size_t draw(const double *cdf, size_t n, double u)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cdf[mid] > u) hi = mid;
        else lo = mid + 1;
    }
    return lo < n ? lo : n - 1;
}

static void zero_one(gt_gs_raw *x, size_t i)
{
    size_t k3 = (size_t)x->sh_k * 3;
    memset(x->pos + 3 * i, 0, 3 * sizeof(float));
    memset(x->log_scale + 3 * i, 0, 3 * sizeof(float));
    memset(x->rot + 4 * i, 0, 4 * sizeof(float));
    x->logit_opacity[i] = 0;
    memset(x->sh + k3 * i, 0, k3 * sizeof(float));
}

/* Draw `count` sources among `cand` (indices, weights their opacities);
 * each drawn source's opacity and scale are shared among itself and its
 * copies; src[k] gets the k-th draw. */
static gt_status draw_sources(gt_gs_raw *r, const uint32_t *cand, size_t ncand, size_t count, uint64_t *rng,
                              uint32_t *src)
{
    double *cdf = malloc((ncand ? ncand : 1) * sizeof *cdf);
    uint32_t *times = calloc(r->n ? r->n : 1, sizeof *times);
    if (!cdf || !times) {
        free(cdf), free(times);
        return gt_fail(GT_ERR_RUNTIME, "out of memory (relocation)");
    }
    double acc = 0;
    for (size_t k = 0; k < ncand; k++) acc += gs_sigmoid(r->logit_opacity[cand[k]]), cdf[k] = acc;
    for (size_t k = 0; k < count; k++) {
        src[k] = cand[draw(cdf, ncand, gt_rng_unit(rng) * acc)];
        times[src[k]]++;
    }
    free(cdf);
    const float omax = 1.0f - 1.1920929e-07f; /* gsplat clamps to 1 - eps */
    for (size_t k = 0; k < count; k++) {
        uint32_t i = src[k];
        if (times[i] == 0) continue; /* already shared */
        double on, f;
        gt_gs_mcmc_share(gs_sigmoid(r->logit_opacity[i]), (int)times[i] + 1, &on, &f);
        float o = (float)on;
        if (o > omax) o = omax;
        r->logit_opacity[i] = logf(o / (1.0f - o));
        for (int a = 0; a < 3; a++) r->log_scale[3 * i + a] += (float)log(f);
        times[i] = 0;
    }
    free(times);
    return GT_OK;
}

static gt_status grow(gt_gs_raw *x, size_t n_new)
{
    gt_gs_raw t;
    GT_TRY(gt_gs_raw_alloc(&t, n_new, x->sh_degree));
    for (size_t i = 0; i < x->n; i++) copy_one(&t, i, x, i);
    gt_gs_raw_free(x);
    *x = t;
    return GT_OK;
}

gt_status gt_gs_mcmc_relocate(gt_gs_raw *r, gt_gs_raw *m, gt_gs_raw *v, const gt_gs_densify_opts *o, uint64_t *rng,
                              gt_gs_densify_count *out)
{
    memset(out, 0, sizeof *out);
    size_t n = r->n;
    out->n_before = n;
    if (n > UINT32_MAX) return gt_fail(GT_ERR_DATA, "too many Gaussians to relocate (%zu)", n);
    uint32_t *dead = malloc((n ? n : 1) * sizeof *dead), *live = malloc((n ? n : 1) * sizeof *live);
    if (!dead || !live) {
        free(dead), free(live);
        return gt_fail(GT_ERR_RUNTIME, "out of memory (relocation)");
    }
    size_t nd = 0, nl = 0;
    for (size_t i = 0; i < n; i++) {
        float op = gs_sigmoid(r->logit_opacity[i]);
        if (op <= o->min_opacity || !(op == op)) dead[nd++] = (uint32_t)i;
        else live[nl++] = (uint32_t)i;
    }
    gt_status st = GT_OK;
    if (nd && nl) {
        uint32_t *src = malloc(nd * sizeof *src);
        st = src ? draw_sources(r, live, nl, nd, rng, src) : gt_fail(GT_ERR_RUNTIME, "out of memory (relocation)");
        for (size_t k = 0; st == GT_OK && k < nd; k++) {
            copy_one(r, dead[k], r, src[k]);
            zero_one(m, dead[k]), zero_one(v, dead[k]);
            zero_one(m, src[k]), zero_one(v, src[k]);
        }
        free(src);
        out->relocated = nd;
    }
    free(dead);
    /* growth: 5 % more, at most cap_max, drawn among all by opacity */
    size_t target = (size_t)(1.05 * (double)n), cap = o->max_gaussians ? o->max_gaussians : GT_GS_MCMC_CAP;
    if (target > cap) target = cap;
    if (st == GT_OK && target > n && n > 0) {
        size_t add = target - n;
        for (size_t i = 0; i < n; i++) live[i] = (uint32_t)i;
        uint32_t *src = malloc(add * sizeof *src);
        st = src ? draw_sources(r, live, n, add, rng, src) : gt_fail(GT_ERR_RUNTIME, "out of memory (growth)");
        if (st == GT_OK) st = grow(r, target);
        if (st == GT_OK) st = grow(m, target);
        if (st == GT_OK) st = grow(v, target);
        for (size_t k = 0; st == GT_OK && k < add; k++) copy_one(r, n + k, r, src[k]);
        free(src);
        if (st == GT_OK) out->added = add;
    }
    free(live);
    out->n_after = r->n;
    return st;
}

void gt_gs_mcmc_reg_cpu(const gt_gs_raw *r, double opacity_reg, double scale_reg, gt_gs_raw *g)
{
    float inv_n = r->n ? 1.0f / (float)r->n : 0.0f;
    for (size_t i = 0; i < r->n; i++)
        gs_mcmc_reg_grad(r->log_scale + 3 * i, r->logit_opacity[i], (float)opacity_reg, (float)scale_reg, inv_n,
                         g->logit_opacity + i, g->log_scale + 3 * i);
}

void gt_gs_mcmc_noise_cpu(gt_gs_raw *r, double scaler, uint64_t seed, uint64_t step)
{
    for (size_t i = 0; i < r->n; i++) {
        float d[3];
        gs_mcmc_noise(r->log_scale + 3 * i, r->rot + 4 * i, r->logit_opacity[i], (float)scaler, seed, step, i, d);
        for (int a = 0; a < 3; a++) r->pos[3 * i + a] += d[a];
    }
}
