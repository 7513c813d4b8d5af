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
 * clones, children, each in index order (the children of one parent k = 0
 * then 1), the pruned left out. With a cap on the count the candidates with
 * the largest g go first. The draws are counter based (gs_densify_math.h),
 * and every Gaussian's place is a count of those before it, so the GPU
 * (kernels/gs/gs_densify.cu) computes this same set in parallel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "gs/gs_densify_math.h"
#include "gs/gs_fit.h"
#include "gs/gs_fit_mcmc.h"
#include "gs/gs_math.h"

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

gt_status gt_gs_densify_prune(gt_gs_raw *r, gt_gs_raw *m, gt_gs_raw *v, const gt_gs_grad_stats *stats,
                              const gt_gs_densify_opts *o, double extent, bool prune_big, uint64_t seed,
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
        if (g >= (float)o->grad_threshold && isfinite(g)) c[nc].g = g, c[nc].i = (uint32_t)i, nc++;
    }
    size_t budget = SIZE_MAX;
    if (o->max_gaussians) budget = o->max_gaussians > n ? o->max_gaussians - n : 0;
    if (nc > budget) qsort(c, nc, sizeof *c, by_grad_desc);
    size_t take = nc < budget ? nc : budget;
    out->capped = nc - take;
    const float small = (float)(o->percent_dense * extent), fext = (float)extent, minop = (float)o->min_opacity;
    for (size_t k = 0; k < take; k++) {
        size_t i = c[k].i;
        act[i] = gs_dens_max_axis(r->log_scale + 3 * i) <= small ? 1 : 2;
        if (act[i] == 1) out->cloned++;
        else out->split++;
    }
    free(c);
    /* the new count: survivors and clones share their parent's prune test,
     * each child has its own (its scale is smaller) */
    size_t ns = 0, ncl = 0, nk = 0;
    for (size_t i = 0; i < n; i++) {
        bool gone = gs_dens_pruned(r->log_scale + 3 * i, r->logit_opacity[i], minop, prune_big, fext);
        if (act[i] != 2) ns += !gone;
        if (act[i] == 1) ncl += !gone;
        if (act[i] == 2) {
            float cls[3];
            gs_dens_child_scale(r->log_scale + 3 * i, cls);
            nk += 2 * !gs_dens_pruned(cls, r->logit_opacity[i], minop, prune_big, fext);
        }
    }
    size_t total = ns + ncl + nk;
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
    size_t ws = 0, wc = ns, wk = ns + ncl;
    for (size_t i = 0; i < n; i++) {
        bool gone = gs_dens_pruned(r->log_scale + 3 * i, r->logit_opacity[i], minop, prune_big, fext);
        if (act[i] != 2 && !gone) /* survivors keep their moments */
            gs_raw_copy_one(&tr, ws, r, i), gs_raw_copy_one(&tm, ws, m, i), gs_raw_copy_one(&tv, ws, v, i), ws++;
        if (act[i] == 1 && !gone) gs_raw_copy_one(&tr, wc++, r, i); /* clones: moments zero (calloc) */
        if (act[i] == 2)
            for (int k = 0; k < 2; k++) {
                float p[3], ls[3];
                gs_dens_child(r->pos + 3 * i, r->log_scale + 3 * i, r->rot + 4 * i, seed, i, k, p, ls);
                if (gs_dens_pruned(ls, r->logit_opacity[i], minop, prune_big, fext)) continue;
                gs_raw_copy_one(&tr, wk, r, i);
                memcpy(tr.pos + 3 * wk, p, sizeof p);
                memcpy(tr.log_scale + 3 * wk, ls, sizeof ls);
                wk++;
            }
    }
    free(act);
    out->pruned = n + out->cloned + out->split - total;
    gt_gs_raw_free(r), gt_gs_raw_free(m), gt_gs_raw_free(v);
    *r = tr, *m = tm, *v = tv;
    out->n_after = total;
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
 * as gs_mcmc_share says (opacity clamped to [min_opacity, 1)), so that the
 * N of them render about as the one did. Then the count grows by 5 % (at
 * most to cap_max) the same way, the copies appended. Sources and copies
 * start again with zero Adam moments (gsplat: the relocated sources'
 * moments reset, the added ones zero). Draw k of a step lands where
 * gs_mcmc_pick puts it over the integer opacity weights in index order. */
void gt_gs_mcmc_share(double o, int N, double *o_new, double *scale_factor)
{
    gs_mcmc_share(o, N, o_new, scale_factor);
}

uint64_t gt_gs_mcmc_stream(uint64_t seed, int which)
{
    return gs_mcmc_mix(seed + 0x6d636d6372656c6full * (uint64_t)(which + 1));
}

/* Draw `count` sources among `cand` (indices; weights their opacities,
 * gs_mcmc_weight) with stream `stream`; each drawn source's opacity and
 * scale are shared among itself and its copies; src[k] gets draw k. */
static gt_status draw_sources(gt_gs_raw *r, const uint32_t *cand, size_t ncand, size_t count, uint64_t stream,
                              float min_opacity, uint32_t *src)
{
    uint64_t *cdf = malloc((ncand ? ncand : 1) * sizeof *cdf);
    uint32_t *times = calloc(r->n ? r->n : 1, sizeof *times);
    if (!cdf || !times) {
        free(cdf), free(times);
        return gt_fail(GT_ERR_RUNTIME, "out of memory (relocation)");
    }
    uint64_t acc = 0;
    for (size_t k = 0; k < ncand; k++) acc += gs_mcmc_weight(r->logit_opacity[cand[k]]), cdf[k] = acc;
    for (size_t k = 0; k < count && acc > 0; k++) {
        src[k] = cand[gs_mcmc_pick(cdf, ncand, stream, k)];
        times[src[k]]++;
    }
    if (acc == 0) /* every candidate fully transparent: keep them in order */
        for (size_t k = 0; k < count; k++) src[k] = cand[k % ncand], times[src[k]]++;
    free(cdf);
    for (size_t k = 0; k < count; k++) {
        uint32_t i = src[k];
        if (times[i] == 0) continue; /* already shared */
        float nl, dls;
        gs_mcmc_shared(r->logit_opacity[i], times[i], min_opacity, &nl, &dls);
        r->logit_opacity[i] = nl;
        for (int a = 0; a < 3; a++) r->log_scale[3 * i + a] += dls;
        times[i] = 0;
    }
    free(times);
    return GT_OK;
}

static gt_status grow(gt_gs_raw *x, size_t n_new)
{
    gt_gs_raw t;
    GT_TRY(gt_gs_raw_alloc(&t, n_new, x->sh_degree));
    for (size_t i = 0; i < x->n; i++) gs_raw_copy_one(&t, i, x, i);
    gt_gs_raw_free(x);
    *x = t;
    return GT_OK;
}

size_t gt_gs_mcmc_target(size_t n, const gt_gs_densify_opts *o)
{
    size_t target = (size_t)(1.05 * (double)n), cap = o->max_gaussians ? o->max_gaussians : GT_GS_MCMC_CAP;
    if (target > cap) target = cap;
    return target > n ? target : n;
}

gt_status gt_gs_mcmc_relocate(gt_gs_raw *r, gt_gs_raw *m, gt_gs_raw *v, const gt_gs_densify_opts *o, uint64_t seed,
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
    const float minop = (float)o->min_opacity;
    size_t nd = 0, nl = 0;
    for (size_t i = 0; i < n; i++) {
        if (gs_mcmc_dead(r->logit_opacity[i], minop)) dead[nd++] = (uint32_t)i;
        else live[nl++] = (uint32_t)i;
    }
    gt_status st = GT_OK;
    if (nd && nl) {
        uint32_t *src = malloc(nd * sizeof *src);
        st = src ? draw_sources(r, live, nl, nd, gt_gs_mcmc_stream(seed, 0), minop, src)
                 : gt_fail(GT_ERR_RUNTIME, "out of memory (relocation)");
        for (size_t k = 0; st == GT_OK && k < nd; k++) {
            gs_raw_copy_one(r, dead[k], r, src[k]);
            gs_raw_zero_one(m, dead[k]), gs_raw_zero_one(v, dead[k]);
            gs_raw_zero_one(m, src[k]), gs_raw_zero_one(v, src[k]);
        }
        free(src);
        out->relocated = nd;
    }
    free(dead);
    /* growth: 5 % more, at most cap_max, drawn among all by opacity */
    size_t target = gt_gs_mcmc_target(n, o);
    if (st == GT_OK && target > n && n > 0) {
        size_t add = target - n;
        for (size_t i = 0; i < n; i++) live[i] = (uint32_t)i;
        uint32_t *src = malloc(add * sizeof *src);
        st = src ? draw_sources(r, live, n, add, gt_gs_mcmc_stream(seed, 1), minop, src)
                 : gt_fail(GT_ERR_RUNTIME, "out of memory (growth)");
        if (st == GT_OK) st = grow(r, target);
        if (st == GT_OK) st = grow(m, target);
        if (st == GT_OK) st = grow(v, target);
        for (size_t k = 0; st == GT_OK && k < add; k++) gs_raw_copy_one(r, n + k, r, src[k]);
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
