// AMG on the GPU, the driver (twin of lib/sparse/amg.c): the levels built
// stage by stage on the device (amg_strength/aggregate/prolong/galerkin/
// coarse.cu), stopping where the CPU stops, the preconditioner object whose
// apply queues one V-cycle (amg_cycle.cu), the download of the hierarchy for
// tests, and the host-data entry points of lib/sparse/amg.h (gt_amg_gpu_run,
// gt_amg_gpu_pcg) for the GPU test and the benchmark.
#include <cuda_runtime.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <new>
#include <vector>

#include "common/timer.h"
#include "kernels/sparse/amg_cu.h"
#include "kernels/sparse/amg_cu_impl.cuh"

namespace {

void hier_free(amg_dhier *h)
{
    if (!h) return;
    if (h->lev)
        for (int l = 0; l < h->opts.amg_max_levels; l++) {
            amg_dlevel *L = &h->lev[l];
            amg_dcsr_free(&L->a), amg_dcsr_free(&L->p), amg_dcsr_free(&L->r);
            gt_cu_free(L->agg), gt_cu_free(L->dinv), gt_cu_free(L->l1inv), gt_cu_free(L->colour_rows), gt_cu_free(L->dia);
            free(L->colour_ptr_h);
        }
    delete[] h->lev;
    gt_cu_free(h->work);
    if (h->graph) cudaGraphExecDestroy(h->graph);
    gt_cu_free(h->cinv), gt_cu_free(h->scratch_i64);
    if (h->st) cudaStreamDestroy(h->st);
    delete h;
}

gt_status dcsr_download(const amg_dcsr *d, gt_csr *a)
{
    memset(a, 0, sizeof *a);
    a->nrows = d->n, a->ncols = d->m, a->nnz = d->nnz;
    a->ptr = (int64_t *)malloc((size_t)(d->n + 1) * 8);
    a->col = (int32_t *)malloc((size_t)(d->nnz ? d->nnz : 1) * 4);
    a->val = (double *)malloc((size_t)(d->nnz ? d->nnz : 1) * 8);
    if (!a->ptr || !a->col || !a->val) return gt_csr_free(a), gt_fail(GT_ERR_RUNTIME, "out of memory");
    GT_CU(cudaMemcpy(a->ptr, d->ptr, (size_t)(d->n + 1) * 8, cudaMemcpyDeviceToHost));
    GT_CU(cudaMemcpy(a->col, d->col, (size_t)d->nnz * 4, cudaMemcpyDeviceToHost));
    GT_CU(cudaMemcpy(a->val, d->val, (size_t)d->nnz * 8, cudaMemcpyDeviceToHost));
    return GT_OK;
}

// stage timing: the stream synchronised at each boundary
struct stage_clock {
    cudaStream_t st;
    double t;
    double *ms;
    gt_status mark(gt_amg_stage s)
    {
        GT_CU(cudaStreamSynchronize(st));
        double now = gt_now_ms();
        ms[s] += now - t;
        t = now;
        return GT_OK;
    }
};

gt_status coarsen(amg_dhier *h, int l, stage_clock *clk, bool *stop)
{
    amg_dlevel *L = &h->lev[l];
    cudaStream_t st = h->st;
    int64_t n = L->a.n;
    double theta = gt_amg_level_theta(h->opts.amg_theta, l);
    GT_TRY(gt_cu_malloc((void **)&L->agg, (size_t)n * 4, "amg aggregates"));
    for (;;) {
        amg_dcsr s;
        GT_TRY(amg_cu_strength(&L->a, L->dinv, theta, &s, st));
        GT_TRY(clk->mark(GT_AMG_ST_STRENGTH));
        gt_status e = amg_cu_aggregate(&s, gt_amg_level_dist(l), L->agg, &L->nagg, h->scratch_i64, st);
        amg_dcsr_free(&s);
        GT_TRY(e);
        GT_TRY(clk->mark(GT_AMG_ST_AGGREGATE));
        if (L->nagg < n || theta <= GT_AMG_THETA_FLOOR) break;
        theta = GT_AMG_THETA_FLOOR;
    }
    if (L->nagg >= n || L->nagg == 0) {
        gt_cu_free(L->agg), L->agg = nullptr, L->nagg = 0;
        *stop = true;
        return GT_OK;
    }
    GT_TRY(amg_cu_rho(&L->a, L->dinv, &L->rho, st));
    double w = L->rho > 0 ? h->opts.amg_omega / L->rho : 0;
    GT_TRY(amg_cu_prolong(&L->a, L->dinv, L->agg, L->nagg, w, &L->p, st));
    GT_TRY(amg_cu_transpose(&L->p, &L->r, st));
    GT_TRY(clk->mark(GT_AMG_ST_PROLONG));
    amg_dcsr ap;
    GT_TRY(amg_cu_spgemm(&L->a, &L->p, &ap, st));
    gt_status e = amg_cu_spgemm(&L->r, &ap, &h->lev[l + 1].a, st);
    amg_dcsr_free(&ap);
    GT_TRY(e);
    GT_TRY(clk->mark(GT_AMG_ST_GALERKIN));
    *stop = false;
    return GT_OK;
}

gt_status setup(amg_dhier *h, const gt_spd *d, const gt_csr *host)
{
    cudaStream_t st = h->st;
    stage_clock clk{st, gt_now_ms(), h->stage_ms};
    GT_TRY(gt_cu_malloc((void **)&h->scratch_i64, 32, "amg counters"));
    amg_dcsr *a0 = &h->lev[0].a;
    a0->n = d->nrows, a0->m = d->ncols, a0->nnz = d->nnz;
    a0->ptr = d->ptr, a0->col = d->col, a0->val = (double *)d->val, a0->borrowed = true;
    h->nlevels = 1;
    bool grid = false;
    if (h->opts.amg_coarsening != GT_AMG_COARSEN_AGGREGATION) {
        gt_amg_grid_info gi;
        GT_TRY(amg_cu_grid_detect(&h->lev[0], &gi, st));
        GT_TRY(gt_amg_grid_verdict(&gi, &h->opts, &grid));
        if (!grid) {
            gt_cu_free(h->lev[0].dia);
            h->lev[0].dia = nullptr, h->lev[0].nd = 0, h->lev[0].g = gt_amg_grid{};
        }
        GT_TRY(clk.mark(GT_AMG_ST_STRENGTH));
    }
    for (int l = 0;; l++) {
        amg_dlevel *L = &h->lev[l];
        int64_t n = L->a.n;
        GT_TRY(gt_cu_malloc((void **)&L->dinv, (size_t)n * 8, "amg diagonal"));
        gt_status s = l > 0 && L->g.nx ? amg_cu_grid_dinv(L, L->dinv, h->scratch_i64, st)
                                       : amg_cu_dinv(&L->a, L->dinv, h->scratch_i64, st);
        if (s != GT_OK && l > 0) gt_errmsg_prefix("amg level %d", l);
        GT_TRY(s);
        GT_TRY(clk.mark(GT_AMG_ST_STRENGTH));
        L->vw = amg_cu_vec_width(&L->a);
        if (l + 1 >= h->opts.amg_max_levels || n <= h->opts.amg_coarse_size) {
            if (!grid || gt_amg_grid_last(n, h->opts.amg_coarse_size) || l + 1 >= h->opts.amg_max_levels) break;
        }
        if (grid) { // amg_grid.h: stops where the grid no longer shrinks
            if (gt_amg_grid_size(gt_amg_grid_coarse(L->g)) >= n) break;
            h->nlevels = l + 2;
            GT_TRY(amg_cu_grid_coarsen(L, &h->lev[l + 1], st));
            GT_TRY(clk.mark(GT_AMG_ST_GALERKIN));
            continue;
        }
        bool stop = false;
        h->nlevels = l + 2;
        s = coarsen(h, l, &clk, &stop);
        if (stop) h->nlevels = l + 1;
        GT_TRY(s);
        if (stop) break;
    }
    // the cycle's work vectors of every level in one allocation
    size_t total = 0;
    for (int l = 0; l < h->nlevels; l++) total += 5 * (size_t)h->lev[l].a.n;
    GT_TRY(gt_cu_malloc((void **)&h->work, total * 8, "amg work vectors"));
    double *w = h->work;
    for (int l = 0; l < h->nlevels; l++) {
        amg_dlevel *L = &h->lev[l];
        size_t n = (size_t)L->a.n;
        double **v[5] = {&L->x, &L->b, &L->t, &L->sr, &L->sd};
        for (int k = 0; k < 5; k++) *v[k] = w, w += n;
        if (l < h->nlevels - 1 && h->opts.amg_smoother != GT_AMG_SMOOTH_CHEBYSHEV) {
            gt_csr ha{};
            bool own = h->opts.amg_smoother == GT_AMG_SMOOTH_MCGS && (l > 0 || !host);
            if (own) GT_TRY(dcsr_download(&L->a, &ha));
            gt_status s = amg_cu_smoother_setup(L, own ? &ha : host, h->opts.amg_smoother, st);
            gt_csr_free(&ha);
            GT_TRY(s);
        }
    }
    GT_TRY(clk.mark(GT_AMG_ST_SMOOTHER));
    amg_dlevel *C = &h->lev[h->nlevels - 1];
    if (!C->a.ptr) GT_TRY(amg_cu_grid_csr(C, &C->a, st)); // a coarsest grid level
    h->nc = C->a.n;
    GT_TRY(amg_cu_coarse_inverse(&C->a, &h->cinv, st));
    GT_TRY(clk.mark(GT_AMG_ST_COARSE));
    return GT_OK;
}

// The V-cycle is some 10-15 small kernels a level; replaying it as a CUDA
// graph saves their launch overhead, but capturing and instantiating it
// costs more than a few cycles do, and AMG-PCG often converges in 6-12. So
// the first GRAPH_AFTER applies to the same (r, z, stream) launch directly,
// the next one captures, and the graph is replayed while they stay the
// same. Direct launches also on the legacy default stream, inside a capture
// the caller runs, or when capture fails (the error is cleared and direct
// launches are used from then on).
constexpr int GRAPH_AFTER = 12;
gt_status amg_apply(void *ctx, const double *r, double *z, void *stream)
{
    amg_dhier *h = (amg_dhier *)ctx;
    cudaStream_t st = (cudaStream_t)stream;
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (h->graph_off || !st || cudaStreamIsCapturing(st, &cs) != cudaSuccess || cs != cudaStreamCaptureStatusNone) {
        cudaGetLastError();
        return amg_cu_vcycle(h, r, z, st);
    }
    if (!h->graph || h->graph_r != r || h->graph_z != z || h->graph_st != st) {
        if (h->seen_r == r && h->seen_z == z && h->seen_st == st) h->seen_uses++;
        else h->seen_r = r, h->seen_z = z, h->seen_st = st, h->seen_uses = 1;
        if (h->seen_uses <= GRAPH_AFTER) return amg_cu_vcycle(h, r, z, st);
        if (h->graph) cudaGraphExecDestroy(h->graph), h->graph = nullptr;
        cudaGraph_t g = nullptr;
        cudaError_t e = cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal);
        if (e == cudaSuccess) {
            gt_status s = amg_cu_vcycle(h, r, z, st);
            e = cudaStreamEndCapture(st, &g);
            if (s != GT_OK && e == cudaSuccess) e = cudaErrorUnknown;
        }
        if (e == cudaSuccess) e = cudaGraphInstantiate(&h->graph, g, 0);
        if (g) cudaGraphDestroy(g);
        if (e != cudaSuccess) {
            cudaGetLastError();
            h->graph = nullptr, h->graph_off = true;
            return amg_cu_vcycle(h, r, z, st);
        }
        h->graph_r = r, h->graph_z = z, h->graph_st = st;
    }
    GT_CU(cudaGraphLaunch(h->graph, st));
    return GT_OK;
}

void amg_destroy(void *ctx)
{
    hier_free((amg_dhier *)ctx);
}

// the level table through the CPU's formatter (sizes only)
void summary(const amg_dhier *h, char *buf, size_t len)
{
    gt_amg t{};
    std::vector<gt_amg_level> lv((size_t)h->nlevels);
    for (int l = 0; l < h->nlevels; l++)
        lv[(size_t)l].a.nrows = h->lev[l].a.n, lv[(size_t)l].a.ncols = h->lev[l].a.m, lv[(size_t)l].a.nnz = h->lev[l].a.nnz,
        lv[(size_t)l].grid = h->lev[l].g;
    t.nlevels = h->nlevels, t.lev = lv.data(), t.opts = h->opts, t.coarse_inverse = true;
    memcpy(t.stage_ms, h->stage_ms, sizeof t.stage_ms);
    t.setup_ms = h->setup_ms;
    gt_amg_summary(&t, "gpu", buf, len);
}

} // namespace

extern "C" gt_status gt_cu_amg_create(const gt_spd *d, const gt_csr *host, const gt_precond_opts *o, gt_precond *p)
{
    if (d->prec != 8 || !d->ptr) return gt_fail(GT_ERR_RUNTIME, "amg: the GPU set-up needs the double CSR matrix");
    if (d->nrows != d->ncols || d->nrows == 0)
        return gt_fail(GT_ERR_DATA, "amg: the matrix must be square and not empty (%lld x %lld)", (long long)d->nrows,
                       (long long)d->ncols);
    double t0 = gt_now_ms();
    amg_dhier *h = new (std::nothrow) amg_dhier();
    if (!h) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    h->opts = *o;
    if (h->opts.amg_max_levels < 1) h->opts.amg_max_levels = 1;
    if (h->opts.amg_sweeps < 1) h->opts.amg_sweeps = 1;
    h->lev = new (std::nothrow) amg_dlevel[(size_t)h->opts.amg_max_levels]();
    cudaError_t e = h->lev ? cudaStreamCreateWithFlags(&h->st, cudaStreamNonBlocking) : cudaErrorMemoryAllocation;
    gt_status s = e == cudaSuccess ? GT_OK : gt_cu_status_from(e, "cudaStreamCreate", __FILE__, __LINE__);
    if (s == GT_OK) s = setup(h, d, host);
    if (s != GT_OK) {
        cudaStreamSynchronize(h->st);
        hier_free(h);
        return s;
    }
    h->setup_ms = gt_now_ms() - t0;
    memset(p, 0, sizeof *p);
    gt_precond_set(p, GT_PRECOND_AMG, d->nrows, true, h, amg_apply, amg_destroy);
    p->setup_ms = h->setup_ms;
    double nnz = 0;
    for (int l = 0; l < h->nlevels; l++) nnz += (double)h->lev[l].a.nnz;
    p->complexity = nnz / (double)h->lev[0].a.nnz;
    p->levels = h->nlevels;
    if (o->verbose) summary(h, p->summary, sizeof p->summary);
    return GT_OK;
}

extern "C" void gt_cu_amg_stage_ms(const gt_precond *p, double *ms)
{
    memcpy(ms, ((const amg_dhier *)p->ctx)->stage_ms, sizeof(double) * GT_AMG_NSTAGES);
}

extern "C" gt_status gt_cu_amg_download(const gt_precond *p, gt_amg *out)
{
    const amg_dhier *h = (const amg_dhier *)p->ctx;
    memset(out, 0, sizeof *out);
    out->lev = (gt_amg_level *)calloc((size_t)h->nlevels, sizeof *out->lev);
    if (!out->lev) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    out->nlevels = h->nlevels, out->opts = h->opts, out->nc = h->nc, out->coarse_inverse = true;
    memcpy(out->stage_ms, h->stage_ms, sizeof out->stage_ms);
    out->setup_ms = h->setup_ms;
    gt_status s = GT_OK;
    for (int l = 0; l < h->nlevels && s == GT_OK; l++) {
        const amg_dlevel *L = &h->lev[l];
        gt_amg_level *o = &out->lev[l];
        if (L->a.ptr) s = dcsr_download(&L->a, &o->a);
        else { // a grid level below the finest: its CSR form made for the copy
            amg_dcsr t{};
            s = amg_cu_grid_csr(L, &t, h->st);
            cudaError_t e = cudaStreamSynchronize(h->st);
            if (s == GT_OK && e != cudaSuccess) s = gt_cu_status_from(e, "cudaStreamSynchronize", __FILE__, __LINE__);
            if (s == GT_OK) s = dcsr_download(&t, &o->a);
            amg_dcsr_free(&t);
        }
        o->rho = L->rho, o->nagg = L->nagg, o->grid = L->g;
        o->dinv = (double *)malloc((size_t)L->a.n * 8);
        if (s == GT_OK && !o->dinv) s = gt_fail(GT_ERR_RUNTIME, "out of memory");
        if (s == GT_OK) {
            cudaError_t e = cudaMemcpy(o->dinv, L->dinv, (size_t)L->a.n * 8, cudaMemcpyDeviceToHost);
            if (e != cudaSuccess) s = gt_cu_status_from(e, "cudaMemcpy", __FILE__, __LINE__);
        }
        if (s == GT_OK && l < h->nlevels - 1 && !L->g.nx) { // grid levels: no P, R, aggregates
            s = dcsr_download(&L->p, &o->p);
            if (s == GT_OK) s = dcsr_download(&L->r, &o->r);
            o->agg = (int32_t *)malloc((size_t)L->a.n * 4);
            if (s == GT_OK && !o->agg) s = gt_fail(GT_ERR_RUNTIME, "out of memory");
            if (s == GT_OK) {
                cudaError_t e = cudaMemcpy(o->agg, L->agg, (size_t)L->a.n * 4, cudaMemcpyDeviceToHost);
                if (e != cudaSuccess) s = gt_cu_status_from(e, "cudaMemcpy", __FILE__, __LINE__);
            }
        }
    }
    if (s != GT_OK) gt_amg_free(out);
    return s;
}
