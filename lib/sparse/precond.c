/* The preconditioner framework of lib/sparse/precond.h: names, option
 * defaults, the CPU dispatch to the kinds and the common destroy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/timer.h"
#include "sparse/amg.h"
#include "sparse/ilu0.h"
#include "sparse/precond.h"
#include "sparse/precond_kinds.h"

static const char *const names[GT_PRECOND_NKINDS] = {"none", "jacobi", "ic0", "ilu0", "amg"};

const char *gt_precond_name(gt_precond_kind k)
{
    return (k >= 0 && k < GT_PRECOND_NKINDS) ? names[k] : "?";
}

gt_status gt_precond_parse(const char *opt, const char *s, gt_precond_kind *k)
{
    int iv = 0;
    GT_TRY(gt_parse_enum(opt, s, names, GT_PRECOND_NKINDS, &iv));
    *k = (gt_precond_kind)iv;
    return GT_OK;
}

void gt_precond_opts_init(gt_precond_opts *o)
{
    memset(o, 0, sizeof *o);
    o->amg_theta = 0.08;
    o->amg_max_levels = 25;
    o->amg_coarse_size = 300;
    o->amg_smoother = GT_AMG_SMOOTH_CHEBYSHEV;
    o->amg_sweeps = 1;
    o->amg_omega = 4.0 / 3.0;
    o->amg_coarsening = GT_AMG_COARSEN_AUTO;
    o->verbose = false;
}

/* z = r: the identity, for "none", so that the solvers need no special case
   (ctx: the row count) */
static gt_status none_apply(void *ctx, const double *r, double *z, void *stream)
{
    (void)stream;
    memcpy(z, r, (size_t)*(const int64_t *)ctx * sizeof *z);
    return GT_OK;
}

/* Fills the fields every kind shares before the kind's own set-up. */
void gt_precond_init_fields(gt_precond *p, gt_precond_kind k, int64_t n, bool on_gpu)
{
    memset(p, 0, sizeof *p);
    p->kind = k;
    p->n = n;
    p->on_gpu = on_gpu;
    p->complexity = 1.0;
    p->levels = 1;
}

gt_status gt_precond_unavailable(gt_precond_kind k, const char *where)
{
    return gt_fail(GT_ERR_USAGE, "the %s preconditioner is not available %sin this build", gt_precond_name(k),
                   where);
}

gt_status gt_precond_create_cpu(const gt_csr *a, gt_precond_kind k, const gt_precond_opts *o, gt_precond *p)
{
    gt_precond_opts def;
    if (!o) {
        gt_precond_opts_init(&def);
        o = &def;
    }
    gt_precond_init_fields(p, k, a->nrows, false);
    if (a->nrows != a->ncols)
        return gt_fail(GT_ERR_DATA, "a preconditioner needs a square matrix (%lldx%lld)", (long long)a->nrows,
                       (long long)a->ncols);
    double t0 = gt_now_ms();
    gt_status s;
    switch (k) {
    case GT_PRECOND_NONE:
        p->ctx = malloc(sizeof(int64_t));
        if (!p->ctx) return gt_fail(GT_ERR_RUNTIME, "out of memory");
        *(int64_t *)p->ctx = a->nrows;
        p->apply = none_apply;
        p->destroy = free;
        snprintf(p->summary, sizeof p->summary, "no preconditioner");
        s = GT_OK;
        break;
    case GT_PRECOND_JACOBI: s = gt_precond_jacobi_cpu(a, p); break;
    case GT_PRECOND_IC0:
    case GT_PRECOND_ILU0: s = gt_precond_ilu0_cpu(a, k == GT_PRECOND_IC0, p); break;
    case GT_PRECOND_AMG: s = gt_amg_precond_cpu(a, o, p); break;
    default: s = gt_precond_unavailable(k, "on the CPU "); break;
    }
    if (s != GT_OK) {
        gt_precond_destroy(p);
        return s;
    }
    p->setup_ms = gt_now_ms() - t0;
    return GT_OK;
}

void gt_precond_destroy(gt_precond *p)
{
    if (p->destroy && p->ctx) p->destroy(p->ctx);
    p->ctx = NULL;
    p->destroy = NULL;
    p->apply = NULL;
}
