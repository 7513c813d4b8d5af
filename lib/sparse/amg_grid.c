/* AMG on a grid, the CPU reference (amg_grid.h): detecting the grid of a
 * stencil matrix, the trilinear prolongator, the point-by-point Galerkin
 * operator, the Gershgorin bound the smoother uses. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "sparse/amg.h"
#include "sparse/amg_grid.h"

static int add_candidate(gt_amg_grid *out, int k, int64_t nx, int64_t ny, int64_t nz)
{
    for (int q = 0; q < k; q++)
        if (out[q].nx == nx && out[q].ny == ny && out[q].nz == nz) return k;
    out[k] = (gt_amg_grid){nx, ny, nz, {0.5, 0.5, 0.5}};
    return k + 1;
}

int gt_amg_grid_candidates(int64_t n, int64_t d2, int64_t dmax, gt_amg_grid *out)
{
    int k = 0;
    if (n < 2 || dmax < 1) return 0;
    if (d2 == 0) return dmax == 1 ? add_candidate(out, k, n, 1, 1) : 0; /* tridiagonal: 1-D */
    /* nx is d2 (a face neighbour's offset) or d2 + 1 (the 27-point's nx - 1) */
    for (int64_t nx = d2; nx <= d2 + 1; nx++) {
        if (nx < 2 || n % nx) continue;
        if (dmax <= nx + 1) {
            k = add_candidate(out, k, nx, n / nx, 1); /* 2-D */
            continue;
        }
        /* dmax = nx ny + dy nx + dx for the farthest neighbour (dz = 1) */
        static const int d[3] = {0, 1, -1};
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                int64_t nxny = dmax - d[a] * nx - d[b];
                if (nxny < 2 * nx || nxny % nx || n % nxny) continue;
                k = add_candidate(out, k, nx, nxny / nx, n / nxny);
            }
    }
    return k;
}

/* whether every entry of a is a neighbour on g; the slots into *mask */
static bool fits(const gt_csr *a, gt_amg_grid g, uint32_t *mask)
{
    uint32_t m = 0;
    int64_t bad = 0;
#pragma omp parallel for reduction(| : m) reduction(+ : bad) schedule(static) if (a->nnz >= (1 << 18))
    for (int64_t i = 0; i < a->nrows; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            int s;
            if (gt_amg_grid_pair(g, i, a->col[p], &s)) m |= 1u << s;
            else bad++;
        }
    *mask = m;
    return bad == 0;
}

gt_status gt_amg_grid_detect(const gt_csr *a, gt_amg_grid_info *gi)
{
    memset(gi, 0, sizeof *gi);
    int64_t n = a->nrows, d2 = INT64_MAX, dmax = 0;
    if (n != a->ncols || n < 2) return GT_OK;
#pragma omp parallel for reduction(min : d2) reduction(max : dmax) schedule(static) if (a->nnz >= (1 << 18))
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            int64_t o = a->col[p] - i;
            if (o > 1 && o < d2) d2 = o;
            if (o > dmax) dmax = o;
        }
    gt_amg_grid cand[18];
    int nc = gt_amg_grid_candidates(n, d2 == INT64_MAX ? 0 : d2, dmax, cand);
    for (int k = 0; k < nc; k++) {
        uint32_t mask;
        if (!fits(a, cand[k], &mask)) continue;
        gi->g = cand[k], gi->mask = mask;
        break;
    }
    if (gi->g.nx == 0) return GT_OK;
    /* symmetry and the axis sums, from the DIA form */
    int nd;
    int8_t slot[GT_AMG_GRID_SLOTS];
    double *val = NULL;
    GT_TRY(gt_amg_grid_to_dia(a, gi->g, gi->mask, &nd, slot, &val));
    int where[GT_AMG_GRID_SLOTS];
    for (int s = 0; s < GT_AMG_GRID_SLOTS; s++) where[s] = -1;
    for (int k = 0; k < nd; k++) where[slot[k]] = k;
    bool sym = true;
    for (int k = 0; k < nd && sym; k++) {
        int s = slot[k], mk = where[GT_AMG_GRID_SLOTS - 1 - s];
        int64_t off = gt_amg_grid_offset(gi->g, s);
        int64_t nonsym = 0;
#pragma omp parallel for reduction(+ : nonsym) schedule(static) if (n >= (1 << 16))
        for (int64_t i = 0; i < n; i++) {
            double v = val[(int64_t)k * n + i];
            if (v == 0) continue;
            double w = mk < 0 ? 0 : val[(int64_t)mk * n + i + off]; /* v != 0: i + off is inside */
            if (fabs(v - w) > 1e-12 * (fabs(v) + fabs(w))) nonsym++;
        }
        sym = nonsym == 0;
    }
    gi->symmetric = sym;
    for (int k = 0; k < nd; k++) {
        int d = gt_amg_grid_face_axis(slot[k]);
        if (d < 0) continue;
        double sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static) if (n >= (1 << 16))
        for (int64_t i = 0; i < n; i++) sum += fabs(val[(int64_t)k * n + i]);
        gi->axis[d] += sum;
    }
    free(val);
    return GT_OK;
}

bool gt_amg_grid_choose(const gt_amg_grid_info *gi, int smoother)
{
    if (gi->g.nx == 0 || !gi->symmetric || smoother != GT_AMG_SMOOTH_CHEBYSHEV) return false;
    const int64_t dim[3] = {gi->g.nx, gi->g.ny, gi->g.nz};
    double lo = INFINITY, hi = 0;
    for (int d = 0; d < 3; d++) {
        if (dim[d] < 2) continue;
        lo = fmin(lo, gi->axis[d]), hi = fmax(hi, gi->axis[d]);
    }
    return hi > 0 && lo > 0 && hi <= GT_AMG_GRID_ANISO * lo;
}

gt_status gt_amg_grid_to_dia(const gt_csr *a, gt_amg_grid g, uint32_t mask, int *nd, int8_t slot[GT_AMG_GRID_SLOTS],
                             double **val)
{
    int where[GT_AMG_GRID_SLOTS], k = 0;
    for (int s = 0; s < GT_AMG_GRID_SLOTS; s++) {
        where[s] = -1;
        if (mask >> s & 1) where[s] = k, slot[k++] = (int8_t)s;
    }
    int64_t n = a->nrows;
    double *v = gt_calloc((size_t)(k ? k : 1) * (size_t)n, 8, "amg grid stencil");
    if (!v) return GT_ERR_RUNTIME;
#pragma omp parallel for schedule(static) if (a->nnz >= (1 << 18))
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            int s;
            if (gt_amg_grid_pair(g, i, a->col[p], &s) && where[s] >= 0) v[(int64_t)where[s] * n + i] += a->val[p];
        }
    *nd = k, *val = v;
    return GT_OK;
}

gt_status gt_amg_grid_galerkin(const gt_csr *a, gt_amg_grid f, uint32_t mask, gt_csr *ac)
{
    memset(ac, 0, sizeof *ac);
    int nd;
    int8_t slot[GT_AMG_GRID_SLOTS];
    double *val = NULL;
    GT_TRY(gt_amg_grid_to_dia(a, f, mask, &nd, slot, &val));
    gt_amg_grid c = gt_amg_grid_coarse(f);
    int64_t nc = gt_amg_grid_size(c);
    ac->nrows = ac->ncols = nc;
    ac->ptr = gt_malloc_array((size_t)nc + 1, 8, "amg coarse rows");
    if (!ac->ptr) return free(val), GT_ERR_RUNTIME;
    ac->ptr[0] = 0;
    for (int64_t I = 0; I < nc; I++) {
        int64_t x, y, z;
        gt_amg_grid_xyz(c, I, &x, &y, &z);
        ac->ptr[I + 1] = ac->ptr[I] + gt_amg_grid_row_len(c, x, y, z);
    }
    ac->nnz = ac->ptr[nc];
    ac->col = gt_malloc_array((size_t)ac->nnz, 4, "amg coarse columns");
    ac->val = gt_malloc_array((size_t)ac->nnz, 8, "amg coarse values");
    if (!ac->col || !ac->val) return free(val), gt_csr_free(ac), GT_ERR_RUNTIME;
#pragma omp parallel for schedule(static) if (nc >= 4096)
    for (int64_t I = 0; I < nc; I++) {
        int64_t x, y, z;
        gt_amg_grid_xyz(c, I, &x, &y, &z);
        double acc[GT_AMG_GRID_SLOTS];
        gt_amg_grid_galerkin_point(f, c, nd, slot, val, x, y, z, acc);
        int64_t q = ac->ptr[I];
        for (int s = 0; s < GT_AMG_GRID_SLOTS; s++) {
            int dx = gt_amg_grid_sdx(s), dy = gt_amg_grid_sdy(s), dz = gt_amg_grid_sdz(s);
            if (!gt_amg_grid_inside(c, x + dx, y + dy, z + dz)) continue;
            ac->col[q] = (int32_t)(I + gt_amg_grid_offset(c, s));
            ac->val[q++] = acc[s];
        }
    }
    free(val);
    return GT_OK;
}

void gt_amg_grid_end_weights(const gt_csr *a, gt_amg_grid *f)
{
    const int64_t dim[3] = {f->nx, f->ny, f->nz};
    for (int d = 0; d < 3; d++) {
        f->wend[d] = 0.5;
        if (dim[d] < 2 || dim[d] & 1) continue;
        double tw = 0, dl = 0;
#pragma omp parallel for reduction(+ : tw, dl) schedule(static) if (a->nnz >= (1 << 18))
        for (int64_t i = 0; i < a->nrows; i++) {
            int64_t c[3];
            gt_amg_grid_xyz(*f, i, &c[0], &c[1], &c[2]);
            if (c[d] != dim[d] - 1) continue;
            for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
                int s;
                if (!gt_amg_grid_pair(*f, i, a->col[p], &s)) continue;
                int o = gt_amg_grid_sd(s, d);
                if (o == -1) tw += fabs(a->val[p]);
                else if (o == 0) dl += a->col[p] == i ? a->val[p] : -fabs(a->val[p]);
            }
        }
        f->wend[d] = gt_amg_grid_wend(tw, dl);
    }
}

gt_status gt_amg_grid_prolong(gt_amg_grid f, gt_csr *p)
{
    memset(p, 0, sizeof *p);
    gt_amg_grid c = gt_amg_grid_coarse(f);
    int64_t n = gt_amg_grid_size(f), nc = gt_amg_grid_size(c);
    p->nrows = n, p->ncols = nc;
    p->ptr = gt_malloc_array((size_t)n + 1, 8, "amg grid prolongator rows");
    p->col = gt_malloc_array((size_t)n * 8, 4, "amg grid prolongator columns");
    p->val = gt_malloc_array((size_t)n * 8, 8, "amg grid prolongator values");
    if (!p->ptr || !p->col || !p->val) return gt_csr_free(p), GT_ERR_RUNTIME;
    int64_t q = 0;
    p->ptr[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t x, y, z;
        gt_amg_grid_xyz(f, i, &x, &y, &z);
        int64_t X[2], Y[2], Z[2];
        double wx[2], wy[2], wz[2];
        int kx = gt_amg_grid_interp1(x, c.nx, f.wend[0], X, wx), ky = gt_amg_grid_interp1(y, c.ny, f.wend[1], Y, wy),
            kz = gt_amg_grid_interp1(z, c.nz, f.wend[2], Z, wz);
        for (int az = 0; az < kz; az++)
            for (int ay = 0; ay < ky; ay++)
                for (int ax = 0; ax < kx; ax++) {
                    p->col[q] = (int32_t)(X[ax] + c.nx * (Y[ay] + c.ny * Z[az]));
                    p->val[q++] = wx[ax] * wy[ay] * wz[az];
                }
        p->ptr[i + 1] = q;
    }
    p->nnz = q;
    return GT_OK;
}

double gt_amg_grid_rho(const gt_csr *a, const double *dinv)
{
    double m = 0;
#pragma omp parallel for reduction(max : m) schedule(static) if (a->nnz >= (1 << 18))
    for (int64_t i = 0; i < a->nrows; i++) {
        double s = 0;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) s += fabs(a->val[p]);
        s *= fabs(dinv[i]);
        if (s > m) m = s;
    }
    return m;
}
