/* The iterations of gsrender --fit: the reference training's loop
 * (train.py): per iteration one training camera (a seeded random
 * permutation per epoch), the SH degree of the schedule, forward, loss
 * (L1 + D-SSIM), backward, Adam on the five parameter groups with the
 * reference's learning rates; with --densify the reference's adaptive
 * density control, with --mcmc gsplat's MCMCStrategy.
 * On the GPU nothing leaves the device within an iteration but the count
 * of Gaussian/tile pairs the renderer sizes its sort with: the loss sums of
 * the iterations are fetched 16 at a time (the log, the progress bar and
 * the check for a non-finite loss follow them), and the density control
 * runs on the device (kernels/gs/gs_densify.cu). As in the reference, the
 * iteration that densifies takes no Adam step (its parameters are
 * replaced) and the one that resets the opacities takes none for them;
 * MCMC's relocation and growth follow the step, as gsplat's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/progress.h"
#include "common/rng.h"
#include "gs/gs_fit_internal.h"

#if GT_HAVE_CUDA
#include "common/gpu_runtime.h"
#include "kernels/gs/gs_densify_cuda.h"
#endif

/* Loss sums fetched from the GPU every this many iterations. */
#define FETCH_EVERY 16

/* ---- the loss of an iteration, once known ---- */
/* Its log row; test_psnr: the held-out PSNR evaluated after it (NAN: none). */
static gt_status account(fit_ctx *c, const fit_pending *p, double test_psnr)
{
    const gt_gs_fit_job *j = c->j;
    const gt_gs_loss *l = &p->loss;
    if (!isfinite(l->loss))
        return gt_fail(GT_ERR_RUNTIME, "iteration %d: the loss is not finite (view '%s')", p->it,
                       c->cams[p->cam].name);
    if (p->it <= c->span) c->sfirst += l->loss, c->nfirst++;
    if (p->it > j->iterations - c->span) c->slast += l->loss, c->nlast++;
    c->ema = isnan(c->ema) ? l->loss : 0.4 * l->loss + 0.6 * c->ema; /* the reference's progress smoothing */
    c->last_psnr = p->psnr;
    if (c->log && c->log->fp) {
        fprintf(c->log->fp, "%d,%.7f,%.7f,%.7f,%.4f,%.3f,", p->it, l->loss, l->l1, l->ssim, p->psnr, p->seconds);
        if (!isnan(test_psnr)) fprintf(c->log->fp, "%.4f", test_psnr);
        fprintf(c->log->fp, ",%zu\n", p->gaussians);
    }
    return GT_OK;
}

/* The iterations not yet logged: their losses fetched from the GPU, then
 * accounted, but for the last one when `hold` (an evaluation follows it:
 * its row waits for the held-out PSNR, account_held). */
static gt_status drain(fit_ctx *c, bool hold)
{
#if GT_HAVE_CUDA
    if (c->gpu && gt_gs_cu_loss_pending(c->loss) > 0) {
        gt_gs_cu_loss_value v[GT_GS_CU_LOSS_RING];
        int k = 0;
        GT_TRY(gt_gs_cu_loss_fetch_all(c->loss, v, &k));
        for (int q = 0, p = 0; q < k && p < c->npend; p++) {
            if (c->pend[p].known) continue;
            c->pend[p].loss = (gt_gs_loss){v[q].loss, v[q].l1, v[q].ssim};
            c->pend[p].psnr = v[q].sse > 0 ? 10.0 * log10(v[q].n / v[q].sse) : INFINITY;
            c->pend[p].known = true;
            q++;
        }
    }
#endif
    int upto = hold ? c->npend - 1 : c->npend;
    for (int p = 0; p < upto; p++) GT_TRY(account(c, &c->pend[p], NAN));
    if (upto > 0 && upto < c->npend) c->pend[0] = c->pend[upto];
    c->npend -= upto > 0 ? upto : 0;
    return GT_OK;
}

static gt_status account_held(fit_ctx *c, double test_psnr)
{
    if (c->npend == 0) return GT_OK;
    gt_status st = account(c, &c->pend[0], test_psnr);
    c->npend = 0;
    return st;
}

/* ---- one training step ---- */
/* One iteration on view cam. stats: gather the densification statistics;
 * no_step: the parameter groups (bit k: group k of gt_gs_raw_groups) that
 * take no Adam step this iteration. */
static gt_status train_step(fit_ctx *c, int cam, int deg, int it, bool stats, unsigned no_step)
{
    const gt_gs_fit_job *j = c->j;
    const gt_gs_camera *cm = &c->cams[cam];
    size_t n3 = 3 * (size_t)cm->width * cm->height;
    double lr[5] = {gt_gs_fit_pos_lr(&j->rates, it, j->rates.pos_steps, c->extent), j->rates.scale, j->rates.rot,
                    j->rates.opacity, j->rates.sh_dc};
    const double rest_lr = gt_gs_fit_rest_lr(&j->rates);
    fit_pending *pe = &c->pend[c->npend++];
    *pe = (fit_pending){it, cam, 0, (gt_now_ms() - c->t0) / 1000.0, false, {0, 0, 0}, NAN};
    if (c->gpu) {
#if GT_HAVE_CUDA
        int period = c->dr.sh_k * 3;
        float *a[5], *g[5], *m[5], *v[5];
        size_t len[5];
        gt_gs_raw_groups(&c->dr, a, len), gt_gs_raw_groups(&c->dg, g, len);
        gt_gs_raw_groups(&c->dm, m, len), gt_gs_raw_groups(&c->dv, v, len);
        gs_fit_stage_start(c);
        for (int k = 0; k < 5; k++) GT_TRY(gt_cu_memset(g[k], 0, len[k] * sizeof(float), NULL));
        GT_TRY(gt_gs_diff_forward(c->diff, &c->dr, deg, cm, &j->render, c->drgb));
        gs_fit_stage_stop(c, "forward");
        gs_fit_stage_start(c);
        const float *target = c->dimg ? c->dimg + c->img_off[cam] : c->dtarget;
        if (!c->dimg) GT_TRY(gt_gs_cu_u8_to_float(c->dimg8 + c->img_off[cam], c->dtarget, n3, NULL));
        GT_TRY(gt_gs_cu_loss_eval(c->loss, c->drgb, target, cm->width, cm->height, j->lambda, c->ddl));
        gs_fit_stage_stop(c, "loss");
        gs_fit_stage_start(c);
        GT_TRY(gt_gs_diff_backward(c->diff, c->ddl, &c->dg, stats ? &c->stats : NULL));
        if (j->densify.mcmc)
            GT_TRY(gt_gs_cu_mcmc_reg(&c->dr, j->densify.opacity_reg, j->densify.scale_reg, &c->dg, NULL));
        gs_fit_stage_stop(c, "backward");
        gs_fit_stage_start(c);
        for (int k = 0; k < 5; k++)
            if (!(no_step >> k & 1))
                GT_TRY(gt_gs_cu_adam(a[k], g[k], m[k], v[k], len[k], lr[k], rest_lr, k == 4 ? period : 0, it, NULL));
        gs_fit_stage_stop(c, "adam");
        return GT_OK;
#endif
    }
    int period = c->raw.sh_k * 3;
    float *a[5], *g[5], *m[5], *v[5];
    size_t len[5];
    gt_gs_raw_groups(&c->raw, a, len), gt_gs_raw_groups(&c->grad, g, len);
    gt_gs_raw_groups(&c->m, m, len), gt_gs_raw_groups(&c->v, v, len);
    gs_fit_stage_start(c);
    gt_gs_raw_zero(&c->grad);
    GT_TRY(gt_gs_forward_cpu(&c->raw, deg, cm, &j->render, c->rgb));
    gs_fit_stage_stop(c, "forward");
    gs_fit_stage_start(c);
    GT_TRY(gt_gs_loss_cpu(c->rgb, c->img[cam], cm->width, cm->height, j->lambda, &pe->loss, c->dl));
    pe->psnr = gt_gs_psnr(c->rgb, c->img[cam], n3);
    pe->known = true;
    gs_fit_stage_stop(c, "loss");
    gs_fit_stage_start(c); /* the CPU backward renders the view again */
    GT_TRY(gt_gs_backward_cpu(&c->raw, deg, cm, &j->render, c->dl, NULL, &c->grad, stats ? &c->stats : NULL));
    if (j->densify.mcmc) gt_gs_mcmc_reg_cpu(&c->raw, j->densify.opacity_reg, j->densify.scale_reg, &c->grad);
    gs_fit_stage_stop(c, "backward");
    gs_fit_stage_start(c);
    for (int k = 0; k < 5; k++)
        if (!(no_step >> k & 1))
            gt_gs_adam_cpu(a[k], g[k], m[k], v[k], len[k], lr[k], rest_lr, k == 4 ? period : 0, it);
    gs_fit_stage_stop(c, "adam");
    return GT_OK;
}

/* ---- density control ---- */
static gt_status densify(fit_ctx *c, int it)
{
    const gt_gs_densify_opts *o = &c->j->densify;
    bool prune_big = o->opacity_reset > 0 && it > o->opacity_reset;
    uint64_t seed = c->j->seed ^ 0xde5e1f1ed5eedull ^ ((uint64_t)it << 20);
    gt_gs_densify_count dc;
    if (c->gpu) {
#if GT_HAVE_CUDA
        GT_TRY(o->mcmc ? gt_gs_cu_mcmc_relocate(&c->dr, &c->dm, &c->dv, o, seed, &dc, NULL)
                       : gt_gs_cu_densify_prune(&c->dr, &c->dm, &c->dv, &c->stats, o, c->extent, prune_big, seed,
                                                &dc, NULL));
#endif
    } else {
        GT_TRY(o->mcmc ? gt_gs_mcmc_relocate(&c->raw, &c->m, &c->v, o, seed, &dc)
                       : gt_gs_densify_prune(&c->raw, &c->m, &c->v, &c->stats, o, c->extent, prune_big, seed, &dc));
    }
    GT_TRY(gs_fit_resized(c));
    if (dc.n_after == 0)
        return gt_fail(GT_ERR_RUNTIME,
                       "iteration %d: the densification pruned every Gaussian (all opacities below --min-opacity "
                       "%g): nothing left to fit",
                       it, o->min_opacity);
    if (o->mcmc)
        gt_info("iteration %d: MCMC: %zu relocated, %zu added: %zu -> %zu Gaussians", it, dc.relocated, dc.added,
                dc.n_before, dc.n_after);
    else
        gt_info("iteration %d: densified: %zu cloned, %zu split, %zu pruned%s: %zu -> %zu Gaussians", it,
                dc.cloned, dc.split, dc.pruned, dc.capped ? " (--max-gaussians reached)" : "", dc.n_before,
                dc.n_after);
    return GT_OK;
}

/* MCMC's position noise after the step (gsplat: noise_lr times the position
 * learning rate). */
static gt_status mcmc_noise(fit_ctx *c, int it)
{
    const gt_gs_fit_job *j = c->j;
    double scaler = j->densify.noise_lr * gt_gs_fit_pos_lr(&j->rates, it, j->rates.pos_steps, c->extent);
    uint64_t seed = j->seed ^ 0x6d636d632d6e6full;
    gs_fit_stage_start(c);
    if (c->gpu) {
#if GT_HAVE_CUDA
        GT_TRY(gt_gs_cu_mcmc_noise(&c->dr, scaler, seed, (uint64_t)it, NULL));
#endif
    } else {
        gt_gs_mcmc_noise_cpu(&c->raw, scaler, seed, (uint64_t)it);
    }
    gs_fit_stage_stop(c, "mcmc noise");
    return GT_OK;
}

/* The reference's reset_opacity: opacities capped at 0.01, their Adam
 * moments zeroed. */
static gt_status reset_opacity(fit_ctx *c, int it)
{
    size_t n = gs_fit_count(c);
    if (c->gpu) {
#if GT_HAVE_CUDA
        GT_TRY(gt_gs_cu_opacity_cap(c->dr.logit_opacity, c->dm.logit_opacity, c->dv.logit_opacity, n, 0.01, NULL));
#endif
    } else {
        gt_gs_opacity_cap(c->raw.logit_opacity, n, 0.01);
        memset(c->m.logit_opacity, 0, n * sizeof(float));
        memset(c->v.logit_opacity, 0, n * sizeof(float));
    }
    gt_info("iteration %d: opacities reset to at most 0.01 (%zu Gaussians)", it, n);
    return GT_OK;
}

static void shuffle(int *a, int n, uint64_t *rng)
{
    for (int i = n - 1; i > 0; i--) {
        int k = (int)(gt_splitmix64(rng) % (uint64_t)(i + 1));
        int t = a[i];
        a[i] = a[k], a[k] = t;
    }
}

static void announce(fit_ctx *c)
{
    const gt_gs_fit_job *j = c->j;
    gt_info("%d training views, %d held out; scene extent (cameras) %.4g: position learning rate %.3g -> %.3g",
            c->ntrain, c->ntest, c->extent, gt_gs_fit_pos_lr(&j->rates, 0, j->rates.pos_steps, c->extent),
            gt_gs_fit_pos_lr(&j->rates, j->iterations, j->rates.pos_steps, c->extent));
    if (c->max_deg > 0)
        gt_info("SH degree %d at the first iteration (%s), one more every 1000 iterations up to %d", c->sh_start,
                j->sh_start < 0 ? "the scene's" : j->scene || j->cameras ? "--sh-start" : "training from points",
                c->max_deg);
    const gt_gs_densify_opts *o = &j->densify;
    if (o->on || o->mcmc) {
        long first = ((long)o->from_iter / o->interval + 1) * o->interval; /* the first step's iteration */
        if (first >= c->dens_until)
            gt_warn("%s: no step falls in the window: the first would be at iteration %ld, the window ends before "
                    "%d (--densify-until-iter)",
                    o->mcmc ? "--mcmc" : "--densify", first, c->dens_until);
    }
    if (o->mcmc)
        gt_info("MCMC: relocation and 5%% growth (up to %zu Gaussians) every %d iterations after %d and before %d; "
                "position noise x %.3g, opacity regulariser %.3g, scale regulariser %.3g",
                o->max_gaussians ? o->max_gaussians : (size_t)GT_GS_MCMC_CAP, o->interval, o->from_iter,
                c->dens_until, o->noise_lr, o->opacity_reg, o->scale_reg);
    if (o->on)
        gt_info("densification every %d iterations after %d and before %d (gradient threshold %.3g, "
                "percent dense %.3g of extent %.4g)%s; opacity reset every %d",
                o->interval, o->from_iter, c->dens_until, o->grad_threshold, o->percent_dense, c->extent,
                o->max_gaussians ? ", count capped" : "", o->opacity_reset);
}

static bool evaluation_due(const fit_ctx *c, int it)
{
    const gt_gs_fit_job *j = c->j;
    if (!c->ntest) return false;
    return it == j->iterations || (j->eval_every > 0 && it % j->eval_every == 0) ||
           gs_fit_in_list(j->eval_at, j->n_eval_at, it);
}

gt_status gs_fit_train(fit_ctx *c)
{
    const gt_gs_fit_job *j = c->j;
    gt_gs_fit_result *res = c->res;
    {
        gt_gs_camera *tc = malloc(sizeof *tc * (size_t)c->ntrain);
        if (!tc) return gt_fail(GT_ERR_RUNTIME, "out of memory");
        for (int i = 0; i < c->ntrain; i++) tc[i] = c->cams[c->train[i]];
        c->extent = gt_gs_cameras_extent(tc, c->ntrain);
        free(tc);
    }
    c->dens_until = gt_gs_densify_until(&j->densify, j->iterations);
    announce(c);
    int *order = malloc(sizeof(int) * (size_t)c->ntrain);
    if (!order) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    uint64_t rng = j->seed ^ 0x5eed5eedull;
    int next = c->ntrain;
    c->t0 = gt_now_ms();
    c->span = j->iterations / 10 > 0 ? j->iterations / 10 : 1;
    c->ema = NAN;
    c->last_psnr = NAN;
    if (c->log && c->log->fp) fprintf(c->log->fp, "iteration,loss,l1,ssim,psnr,seconds,test_psnr,gaussians\n");
    double ssim0;
    gt_status st = c->ntest ? gs_fit_evaluate(c, 0, gt_gs_fit_sh_degree(1000 * c->sh_start, c->max_deg),
                                              &res->psnr_test_start, &ssim0)
                            : GT_OK;
    if (st == GT_OK && c->ntest) {
        gt_notice("iteration 0: held-out PSNR %.2f dB, SSIM %.4f (%d view(s))", res->psnr_test_start, ssim0, c->ntest);
        if (c->log && c->log->fp) fprintf(c->log->fp, "0,,,,,0.000,%.4f,%zu\n", res->psnr_test_start, c->raw.n);
    }
    gt_progress pg;
    gt_progress_start(&pg, "fit", j->iterations);
    const gt_gs_densify_opts *dop = &j->densify;
    /* the reference also resets once at densify_from_iter on a white background */
    const bool white = j->render.bg[0] == 1.0f && j->render.bg[1] == 1.0f && j->render.bg[2] == 1.0f;
    for (int it = 1; it <= j->iterations && st == GT_OK; it++) {
        if (next >= c->ntrain) {
            for (int i = 0; i < c->ntrain; i++) order[i] = c->train[i];
            shuffle(order, c->ntrain, &rng);
            next = 0;
        }
        int cam = order[next++], deg = gt_gs_fit_sh_degree(it + 1000 * c->sh_start, c->max_deg);
        /* the reference's "iteration < densify_until_iter"; MCMC: gsplat's refine_stop_iter */
        bool dens_window = (dop->on || dop->mcmc) && it < c->dens_until;
        bool dens = dens_window && it > dop->from_iter && dop->interval > 0 && it % dop->interval == 0;
        bool reset = dop->on && dens_window &&
                     ((dop->opacity_reset > 0 && it % dop->opacity_reset == 0) || (white && it == dop->from_iter));
        /* the reference's densification replaces the parameters before its
         * optimizer step (none that iteration); gsplat's MCMC steps first */
        unsigned no_step = dop->on ? (dens ? 0x1fu : reset ? 1u << 3 : 0u) : 0u;
        st = train_step(c, cam, deg, it, dop->on && dens_window, no_step);
        if (st == GT_OK && dens) {
            gs_fit_stage_start(c);
            st = densify(c, it);
            gs_fit_stage_stop(c, "densify");
        }
        if (st == GT_OK && reset) st = reset_opacity(c, it);
        if (st == GT_OK && dop->mcmc) st = mcmc_noise(c, it);
        if (st == GT_OK) c->pend[c->npend - 1].gaussians = gs_fit_count(c); /* after the density control */
        bool ev = evaluation_due(c, it), save = gs_fit_in_list(j->save_at, j->n_save_at, it);
        if (st == GT_OK && (c->npend >= FETCH_EVERY || ev || save || it == j->iterations)) st = drain(c, ev);
        if (st != GT_OK) break;
        if (ev) {
            double tp, ts;
            gs_fit_stage_start(c);
            st = gs_fit_evaluate(c, it, deg, &tp, &ts);
            gs_fit_stage_stop(c, "evaluate");
            if (st != GT_OK) break;
            st = account_held(c, tp); /* this iteration's loss, before it is shown */
            if (st != GT_OK) break;
            gt_progress_end(&pg);
            gt_notice("iteration %d: held-out PSNR %.2f dB, SSIM %.4f (%d view(s)), training loss %.5f, %zu Gaussians",
                      it, tp, ts, c->ntest, c->ema, gs_fit_count(c));
            gt_progress_start(&pg, "fit", j->iterations);
            if (it == j->iterations) res->psnr_test_end = tp, res->ssim_test_end = ts;
        }
        if (st == GT_OK && save) st = gs_fit_save_at(c, it);
        char extra[96];
        snprintf(extra, sizeof extra, "loss %.5f  psnr %.2f dB  %zu Gaussians", c->ema, c->last_psnr, gs_fit_count(c));
        gt_progress_update(&pg, it, extra);
    }
    if (st == GT_OK) st = drain(c, false);
    gt_progress_end(&pg);
    free(order);
    res->iterations = j->iterations;
    res->first_loss = c->nfirst ? c->sfirst / c->nfirst : NAN;
    res->last_loss = c->nlast ? c->slast / c->nlast : NAN;
    res->seconds = (gt_now_ms() - c->t0) / 1000.0;
    return st;
}
