// Adaptive density control (clone, split, prune), MCMC's relocation and
// growth, and the opacity reset, on device arrays: the functions of
// lib/gs/gs_fit_densify.c, with the per-Gaussian math of
// lib/gs/gs_densify_math.h, so that the Gaussians never leave the GPU.
//
// Densify and prune: k_dens_grad averages the statistics and flags the
// candidates (with a cap on the count, the candidates sorted by gradient,
// descending, stably, and the first ones taken); k_dens_act decides per
// Gaussian (clone, split or keep) and counts what it leaves in each of the
// three runs of the new set (survivors, clones, children); three exclusive
// scans give every output its place, as the CPU's running counts do; one
// small download sizes the new arrays; k_dens_place writes them.
// MCMC: the dead and live are compacted, the live opacities' integer
// weights scanned (uint64: exact in any order, the CPU's running sum), each
// draw binary-searches them (gs_mcmc_pick), atomics count the draws per
// source, one thread per drawn source shares its opacity and scale, and the
// dead become copies; growth draws over all, appends copies in new arrays.
// Launch shapes: one thread per Gaussian or per draw, 1-D grid-stride loops
// of 256 threads (independent items).
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/cu_check.h"
#include "kernels/common/cu_prim.h"
#include "common/gpu_runtime.h"
#include "kernels/gs/gs_densify_cuda.h"
#include "gs/gs_densify_math.h"

#define FOR_EACH(i, n) \
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)

// ----------------------------------------------------------------- raw arrays

extern "C" void gt_gs_cu_raw_free(gt_gs_raw *d)
{
    gt_cu_free(d->pos), gt_cu_free(d->log_scale), gt_cu_free(d->rot), gt_cu_free(d->logit_opacity);
    gt_cu_free(d->sh);
    memset(d, 0, sizeof *d);
}

extern "C" gt_status gt_gs_cu_raw_alloc(gt_gs_raw *d, size_t n, int sh_degree, const char *what)
{
    memset(d, 0, sizeof *d);
    d->n = n, d->sh_degree = sh_degree, d->sh_k = (sh_degree + 1) * (sh_degree + 1);
    float *a[5];
    size_t len[5];
    gt_gs_raw_groups(d, a, len);
    float **dst[5] = {&d->pos, &d->log_scale, &d->rot, &d->logit_opacity, &d->sh};
    for (int k = 0; k < 5; k++) {
        size_t b = (len[k] ? len[k] : 1) * sizeof(float);
        gt_status st = gt_cu_malloc((void **)dst[k], b, what);
        if (st == GT_OK) st = gt_cu_memset(*dst[k], 0, b, NULL);
        if (st != GT_OK) {
            gt_gs_cu_raw_free(d);
            return st;
        }
    }
    return GT_OK;
}

extern "C" gt_status gt_gs_cu_raw_copy(gt_gs_raw *dst, const gt_gs_raw *src, int kind, void *stream)
{
    gt_gs_raw lim = *src;
    if (dst->n < lim.n) lim.n = dst->n;
    float *a[5], *b[5];
    size_t len[5];
    gt_gs_raw dl = *dst;
    dl.n = lim.n;
    gt_gs_raw_groups(&dl, a, len);
    gt_gs_raw_groups(&lim, b, len);
    const cudaMemcpyKind k = kind == 0 ? cudaMemcpyHostToDevice : kind == 1 ? cudaMemcpyDeviceToHost
                                                                            : cudaMemcpyDeviceToDevice;
    for (int g = 0; g < 5; g++)
        if (len[g]) GT_CU(cudaMemcpyAsync(a[g], b[g], len[g] * sizeof(float), k, (cudaStream_t)stream));
    if (kind == 1) GT_CU(cudaStreamSynchronize((cudaStream_t)stream));
    return GT_OK;
}

// ----------------------------------------------------------------- per Gaussian

// ----------------------------------------------------------------- densify and prune

// g = the mean screen gradient; a candidate reaches the threshold. key: the
// descending sort's key of g (g >= 0: its bits inverted order descending).
__global__ void k_dens_grad(size_t n, const float *__restrict__ grad2d, const float *__restrict__ seen, float thr,
                            uint8_t *__restrict__ cand, uint32_t *__restrict__ key)
{
    FOR_EACH(i, n)
    {
        float g = seen[i] > 0 ? grad2d[i] / seen[i] : 0.0f;
        cand[i] = g >= thr && isfinite(g);
        key[i] = ~__float_as_uint(g);
    }
}

__global__ void k_gather_u32(size_t m, const uint32_t *__restrict__ idx, const uint32_t *__restrict__ src,
                             uint32_t *__restrict__ out)
{
    FOR_EACH(k, m) out[k] = src[idx[k]];
}

// the first `take` of the sorted candidates are taken
__global__ void k_dens_take(size_t m, size_t take, const uint32_t *__restrict__ sorted_idx, uint8_t *__restrict__ cand)
{
    FOR_EACH(k, m) cand[sorted_idx[k]] = k < take;
}

// act: 0 keep, 1 clone, 2 split; what each Gaussian leaves in the three runs
// of the new set; tallies[0], [1]: candidates cloned and split.
__global__ void k_dens_act(size_t n, gt_gs_raw r, const uint8_t *__restrict__ taken, float small, float minop,
                           int prune_big, float ext, uint8_t *__restrict__ act, uint32_t *__restrict__ cs,
                           uint32_t *__restrict__ cc, uint32_t *__restrict__ ck, unsigned int *tallies)
{
    FOR_EACH(i, n)
    {
        const float *ls = r.log_scale + 3 * i;
        int a = taken[i] ? (gs_dens_max_axis(ls) <= small ? 1 : 2) : 0;
        act[i] = (uint8_t)a;
        int gone = gs_dens_pruned(ls, r.logit_opacity[i], minop, prune_big, ext);
        cs[i] = a != 2 && !gone;
        cc[i] = a == 1 && !gone;
        uint32_t kids = 0;
        if (a == 2) {
            float cls[3];
            gs_dens_child_scale(ls, cls);
            kids = 2u * !gs_dens_pruned(cls, r.logit_opacity[i], minop, prune_big, ext);
        }
        ck[i] = kids;
        if (a) atomicAdd(&tallies[a - 1], 1u);
    }
}

// totals[0..2]: the runs' lengths (last offset + last count)
__global__ void k_dens_totals(size_t n, const uint32_t *cs, const uint32_t *os, const uint32_t *cc,
                              const uint32_t *oc, const uint32_t *ck, const uint32_t *ok, unsigned int *totals)
{
    if (n == 0) return;
    totals[2] = os[n - 1] + cs[n - 1];
    totals[3] = oc[n - 1] + cc[n - 1];
    totals[4] = ok[n - 1] + ck[n - 1];
}

__global__ void k_dens_place(size_t n, gt_gs_raw r, gt_gs_raw m, gt_gs_raw v, const uint8_t *__restrict__ act,
                             const uint32_t *__restrict__ cs, const uint32_t *__restrict__ os,
                             const uint32_t *__restrict__ cc, const uint32_t *__restrict__ oc,
                             const uint32_t *__restrict__ ok, size_t S, size_t C, uint64_t seed, float minop,
                             int prune_big, float ext, gt_gs_raw tr, gt_gs_raw tm, gt_gs_raw tv)
{
    FOR_EACH(i, n)
    {
        if (cs[i]) { // survivors keep their moments
            gs_raw_copy_one(&tr, os[i], &r, i);
            gs_raw_copy_one(&tm, os[i], &m, i);
            gs_raw_copy_one(&tv, os[i], &v, i);
        }
        if (cc[i]) gs_raw_copy_one(&tr, S + oc[i], &r, i); // clones: moments zero (the allocation's)
        if (act[i] == 2) {
            size_t w = S + C + ok[i];
            for (int k = 0; k < 2; k++) {
                float p[3], ls[3];
                gs_dens_child(r.pos + 3 * i, r.log_scale + 3 * i, r.rot + 4 * i, seed, i, k, p, ls);
                if (gs_dens_pruned(ls, r.logit_opacity[i], minop, prune_big, ext)) continue;
                gs_raw_copy_one(&tr, w, &r, i);
                for (int a = 0; a < 3; a++) tr.pos[3 * w + a] = p[a], tr.log_scale[3 * w + a] = ls[a];
                w++;
            }
        }
    }
}

// Temporary device arrays of one step, freed together.
typedef struct scratch {
    void *p[12];
    int np;
} scratch;

static gt_status take(scratch *s, void **ptr, size_t bytes)
{
    GT_TRY(gt_cu_malloc(ptr, bytes ? bytes : 16, "densification workspace"));
    s->p[s->np++] = *ptr;
    return GT_OK;
}

static void scratch_free(scratch *s)
{
    for (int k = 0; k < s->np; k++) gt_cu_free(s->p[k]);
    s->np = 0;
}

static gt_status densify_impl(scratch *sc, gt_gs_raw *r, gt_gs_raw *m, gt_gs_raw *v, const gt_gs_grad_stats *stats,
                              const gt_gs_densify_opts *o, double extent, bool prune_big, uint64_t seed,
                              gt_gs_densify_count *out, cudaStream_t st)
{
    const size_t n = r->n;
    uint8_t *cand, *act;
    uint32_t *key, *cs, *cc, *ck, *os, *oc, *okk;
    unsigned int *tallies, host[5];
    GT_TRY(take(sc, (void **)&cand, n));
    GT_TRY(take(sc, (void **)&act, n));
    GT_TRY(take(sc, (void **)&key, n * sizeof(uint32_t)));
    GT_TRY(take(sc, (void **)&cs, n * sizeof(uint32_t)));
    GT_TRY(take(sc, (void **)&cc, n * sizeof(uint32_t)));
    GT_TRY(take(sc, (void **)&ck, n * sizeof(uint32_t)));
    GT_TRY(take(sc, (void **)&os, n * sizeof(uint32_t)));
    GT_TRY(take(sc, (void **)&oc, n * sizeof(uint32_t)));
    GT_TRY(take(sc, (void **)&okk, n * sizeof(uint32_t)));
    GT_TRY(take(sc, (void **)&tallies, 5 * sizeof(unsigned int)));
    GT_CU(cudaMemsetAsync(tallies, 0, 5 * sizeof(unsigned int), st));
    k_dens_grad<<<gt_grid(n, 256), 256, 0, st>>>(n, stats->grad2d, stats->seen, (float)o->grad_threshold, cand, key);
    GT_CU_LAUNCH("k_dens_grad");
    if (o->max_gaussians) { // the candidates with the largest gradients first
        size_t budget = o->max_gaussians > n ? o->max_gaussians - n : 0, nc = 0;
        GT_TRY(gt_cu_select_flagged_index(cand, os, n, &nc, NULL, st));
        if (nc > budget) {
            k_gather_u32<<<gt_grid(nc, 256), 256, 0, st>>>(nc, os, key, cs);
            GT_CU_LAUNCH("k_gather_u32");
            GT_TRY(gt_cu_sort_pairs_u32(cs, cc, os, oc, nc, 0, 32, NULL, st));
            k_dens_take<<<gt_grid(nc, 256), 256, 0, st>>>(nc, budget, oc, cand);
            GT_CU_LAUNCH("k_dens_take");
            out->capped = nc - budget;
        }
    }
    const float fext = (float)extent, minop = (float)o->min_opacity;
    k_dens_act<<<gt_grid(n, 256), 256, 0, st>>>(n, *r, cand, (float)(o->percent_dense * extent), minop, prune_big,
                                                fext, act, cs, cc, ck, tallies);
    GT_CU_LAUNCH("k_dens_act");
    GT_TRY(gt_cu_scan_exclusive_u32(cs, os, n, NULL, st));
    GT_TRY(gt_cu_scan_exclusive_u32(cc, oc, n, NULL, st));
    GT_TRY(gt_cu_scan_exclusive_u32(ck, okk, n, NULL, st));
    k_dens_totals<<<1, 1, 0, st>>>(n, cs, os, cc, oc, ck, okk, tallies);
    GT_CU_LAUNCH("k_dens_totals");
    GT_CU(cudaMemcpyAsync(host, tallies, sizeof host, cudaMemcpyDeviceToHost, st));
    GT_CU(cudaStreamSynchronize(st));
    out->cloned = host[0], out->split = host[1];
    const size_t S = host[2], C = host[3], K = host[4], total = S + C + K;
    gt_gs_raw tr, tm, tv;
    GT_TRY(gt_gs_cu_raw_alloc(&tr, total, r->sh_degree, "Gaussian parameters (densified)"));
    gt_status s = gt_gs_cu_raw_alloc(&tm, total, r->sh_degree, "Adam first moments (densified)");
    if (s == GT_OK) {
        s = gt_gs_cu_raw_alloc(&tv, total, r->sh_degree, "Adam second moments (densified)");
        if (s != GT_OK) gt_gs_cu_raw_free(&tm);
    }
    if (s != GT_OK) {
        gt_gs_cu_raw_free(&tr);
        return s;
    }
    k_dens_place<<<gt_grid(n, 256), 256, 0, st>>>(n, *r, *m, *v, act, cs, os, cc, oc, okk, S, C, seed, minop,
                                                  prune_big, fext, tr, tm, tv);
    s = gt_cu_status_from(cudaGetLastError(), "k_dens_place", __FILE__, __LINE__);
    if (s != GT_OK) {
        gt_gs_cu_raw_free(&tr), gt_gs_cu_raw_free(&tm), gt_gs_cu_raw_free(&tv);
        return s;
    }
    gt_gs_cu_raw_free(r), gt_gs_cu_raw_free(m), gt_gs_cu_raw_free(v);
    *r = tr, *m = tm, *v = tv;
    out->pruned = n + out->cloned + out->split - total;
    out->n_after = total;
    return GT_OK;
}

extern "C" gt_status gt_gs_cu_densify_prune(gt_gs_raw *r, gt_gs_raw *m, gt_gs_raw *v, const gt_gs_grad_stats *stats,
                                            const gt_gs_densify_opts *o, double extent, bool prune_big, uint64_t seed,
                                            gt_gs_densify_count *out, void *stream)
{
    memset(out, 0, sizeof *out);
    out->n_before = out->n_after = r->n;
    if (r->n > UINT32_MAX) return gt_fail(GT_ERR_DATA, "too many Gaussians to densify (%zu)", r->n);
    if (r->n == 0) return GT_OK;
    scratch sc;
    sc.np = 0;
    gt_status s = densify_impl(&sc, r, m, v, stats, o, extent, prune_big, seed, out, (cudaStream_t)stream);
    scratch_free(&sc);
    return s;
}

// ----------------------------------------------------------------- MCMC

__global__ void k_mcmc_flags(size_t n, const float *__restrict__ logit, float minop, uint8_t *__restrict__ dead,
                             uint8_t *__restrict__ live)
{
    FOR_EACH(i, n)
    {
        int d = gs_mcmc_dead(logit[i], minop);
        dead[i] = (uint8_t)d;
        live[i] = (uint8_t)!d;
    }
}

// w[k] = the weight of Gaussian idx[k] (idx NULL: k itself)
__global__ void k_mcmc_weights(size_t m, const uint32_t *__restrict__ idx, const float *__restrict__ logit,
                               uint64_t *__restrict__ w)
{
    FOR_EACH(k, m) w[k] = gs_mcmc_weight(logit[idx ? idx[k] : k]);
}

// draw k lands on cand[pick] (cand NULL: the pick itself); times counts
// the draws per source. All weights zero: the candidates in order, as the CPU.
__global__ void k_mcmc_draw(size_t count, const uint64_t *__restrict__ cdf, size_t ncand,
                            const uint32_t *__restrict__ cand, uint64_t stream, uint32_t *__restrict__ src,
                            unsigned int *__restrict__ times)
{
    FOR_EACH(k, count)
    {
        uint64_t j = cdf[ncand - 1] > 0 ? gs_mcmc_pick(cdf, ncand, stream, k) : k % ncand;
        uint32_t s = cand ? cand[j] : (uint32_t)j;
        src[k] = s;
        atomicAdd(&times[s], 1u);
    }
}

// one thread per drawn source (the first to take its count) shares it
__global__ void k_mcmc_share(size_t count, const uint32_t *__restrict__ src, unsigned int *__restrict__ times,
                             float *__restrict__ logit, float *__restrict__ log_scale, float minop)
{
    FOR_EACH(k, count)
    {
        uint32_t i = src[k];
        unsigned int t = atomicExch(&times[i], 0u);
        if (t == 0) continue;
        float nl, dls;
        gs_mcmc_shared(logit[i], t, minop, &nl, &dls);
        logit[i] = nl;
        for (int a = 0; a < 3; a++) log_scale[3 * i + a] += dls;
    }
}

// relocation: dead[k] becomes a copy of src[k]; both restart their moments.
// growth (dead NULL): Gaussian base + k becomes a copy of src[k].
__global__ void k_mcmc_copy(size_t count, const uint32_t *__restrict__ dead, size_t base,
                            const uint32_t *__restrict__ src, gt_gs_raw r, gt_gs_raw m, gt_gs_raw v)
{
    FOR_EACH(k, count)
    {
        size_t d = dead ? dead[k] : base + k;
        gs_raw_copy_one(&r, d, &r, src[k]);
        if (dead) {
            gs_raw_zero_one(&m, d), gs_raw_zero_one(&v, d);
            gs_raw_zero_one(&m, src[k]), gs_raw_zero_one(&v, src[k]);
        }
    }
}

// Draw `count` sources among cand (ncand of them; NULL: all of r) and share
// them; src gets the draws.
static gt_status draw_sources(scratch *sc, gt_gs_raw *r, const uint32_t *cand, size_t ncand, size_t count,
                              uint64_t stream, float minop, uint32_t *src, cudaStream_t st)
{
    uint64_t *cdf;
    unsigned int *times;
    GT_TRY(take(sc, (void **)&cdf, ncand * sizeof(uint64_t)));
    GT_TRY(take(sc, (void **)&times, r->n * sizeof(unsigned int)));
    GT_CU(cudaMemsetAsync(times, 0, r->n * sizeof(unsigned int), st));
    k_mcmc_weights<<<gt_grid(ncand, 256), 256, 0, st>>>(ncand, cand, r->logit_opacity, cdf);
    GT_CU_LAUNCH("k_mcmc_weights");
    GT_TRY(gt_cu_scan_inclusive_u64(cdf, cdf, ncand, NULL, st));
    k_mcmc_draw<<<gt_grid(count, 256), 256, 0, st>>>(count, cdf, ncand, cand, stream, src, times);
    GT_CU_LAUNCH("k_mcmc_draw");
    k_mcmc_share<<<gt_grid(count, 256), 256, 0, st>>>(count, src, times, r->logit_opacity, r->log_scale, minop);
    GT_CU_LAUNCH("k_mcmc_share");
    return GT_OK;
}

static gt_status relocate_impl(scratch *sc, gt_gs_raw *r, gt_gs_raw *m, gt_gs_raw *v, const gt_gs_densify_opts *o,
                               uint64_t seed, gt_gs_densify_count *out, cudaStream_t st)
{
    const size_t n = r->n;
    const float minop = (float)o->min_opacity;
    uint8_t *fd, *fl;
    uint32_t *dead, *live, *src;
    GT_TRY(take(sc, (void **)&fd, n));
    GT_TRY(take(sc, (void **)&fl, n));
    GT_TRY(take(sc, (void **)&dead, n * sizeof(uint32_t)));
    GT_TRY(take(sc, (void **)&live, n * sizeof(uint32_t)));
    k_mcmc_flags<<<gt_grid(n, 256), 256, 0, st>>>(n, r->logit_opacity, minop, fd, fl);
    GT_CU_LAUNCH("k_mcmc_flags");
    size_t nd = 0, nl = 0;
    GT_TRY(gt_cu_select_flagged_index(fd, dead, n, &nd, NULL, st));
    GT_TRY(gt_cu_select_flagged_index(fl, live, n, &nl, NULL, st));
    if (nd && nl) {
        GT_TRY(take(sc, (void **)&src, nd * sizeof(uint32_t)));
        GT_TRY(draw_sources(sc, r, live, nl, nd, gt_gs_mcmc_stream(seed, 0), minop, src, st));
        k_mcmc_copy<<<gt_grid(nd, 256), 256, 0, st>>>(nd, dead, 0, src, *r, *m, *v);
        GT_CU_LAUNCH("k_mcmc_copy");
        out->relocated = nd;
    }
    size_t target = gt_gs_mcmc_target(n, o);
    if (target > n) {
        size_t add = target - n;
        GT_TRY(take(sc, (void **)&src, add * sizeof(uint32_t)));
        GT_TRY(draw_sources(sc, r, NULL, n, add, gt_gs_mcmc_stream(seed, 1), minop, src, st));
        gt_gs_raw t[3];
        gt_gs_raw *old[3] = {r, m, v};
        const char *what[3] = {"Gaussian parameters (grown)", "Adam first moments (grown)",
                               "Adam second moments (grown)"};
        int made = 0;
        gt_status s = GT_OK;
        for (; made < 3 && s == GT_OK; made++) {
            s = gt_gs_cu_raw_alloc(&t[made], target, r->sh_degree, what[made]);
            if (s == GT_OK) s = gt_gs_cu_raw_copy(&t[made], old[made], 2, st);
            else break;
        }
        if (s == GT_OK) {
            k_mcmc_copy<<<gt_grid(add, 256), 256, 0, st>>>(add, NULL, n, src, t[0], t[1], t[2]);
            s = gt_cu_status_from(cudaGetLastError(), "k_mcmc_copy", __FILE__, __LINE__);
        }
        if (s != GT_OK) {
            for (int k = 0; k < made && k < 3; k++) gt_gs_cu_raw_free(&t[k]);
            return s;
        }
        for (int k = 0; k < 3; k++) {
            gt_gs_cu_raw_free(old[k]);
            *old[k] = t[k];
        }
        out->added = add;
    }
    out->n_after = r->n;
    return GT_OK;
}

extern "C" gt_status gt_gs_cu_mcmc_relocate(gt_gs_raw *r, gt_gs_raw *m, gt_gs_raw *v, const gt_gs_densify_opts *o,
                                            uint64_t seed, gt_gs_densify_count *out, void *stream)
{
    memset(out, 0, sizeof *out);
    out->n_before = out->n_after = r->n;
    if (r->n > UINT32_MAX) return gt_fail(GT_ERR_DATA, "too many Gaussians to relocate (%zu)", r->n);
    if (r->n == 0) return GT_OK;
    scratch sc;
    sc.np = 0;
    gt_status s = relocate_impl(&sc, r, m, v, o, seed, out, (cudaStream_t)stream);
    scratch_free(&sc);
    return s;
}

// ----------------------------------------------------------------- opacity reset

__global__ void k_opacity_cap(size_t n, float cap, float *__restrict__ logit, float *__restrict__ m,
                              float *__restrict__ v)
{
    FOR_EACH(i, n)
    {
        if (!(logit[i] <= cap)) logit[i] = cap;
        m[i] = 0.0f;
        v[i] = 0.0f;
    }
}

extern "C" gt_status gt_gs_cu_opacity_cap(float *logit_opacity, float *m, float *v, size_t n, double max_opacity,
                                          void *stream)
{
    if (n == 0) return GT_OK;
    float cap = (float)log(max_opacity / (1.0 - max_opacity)); // gt_gs_opacity_cap's
    k_opacity_cap<<<gt_grid(n, 256), 256, 0, (cudaStream_t)stream>>>(n, cap, logit_opacity, m, v);
    GT_CU_LAUNCH("k_opacity_cap");
    return GT_OK;
}
