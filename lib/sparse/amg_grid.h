/* AMG on a grid: the coarsening of the AMG hierarchy (amg.h) for matrices
 * whose every entry couples a point of an nx x ny x nz grid (row
 * i = x + nx (y + ny z)) with itself or one of its 26 neighbours, as the
 * stencil matrices of finite differences and structured finite elements do
 * (7-, 19-, 27-point in 3-D, 5- and 9-point in 2-D, tridiagonal in 1-D).
 * Instead of strength, aggregation and a smoothed prolongator, the coarse
 * grid is every second point in each dimension (the even coordinates), P is
 * trilinear interpolation, R = P^T, and A_c = R A P is formed point by point
 * as a 27-point stencil (Galerkin, so the operator's coefficients carry
 * over); the levels below keep that form. It is the structured multigrid of
 * Dendy's BoxMG and hypre's PFMG family with operator-independent
 * interpolation, which suits isotropic diffusion-like operators: the choice
 * "auto" (gt_amg_grid_choose) takes it only for symmetric matrices whose
 * couplings along the axes agree within GT_AMG_GRID_ANISO, with the
 * Chebyshev smoother; everything else keeps smoothed aggregation.
 *
 * The stencil of a level is kept as slots: slot s = (dz+1) 9 + (dy+1) 3 +
 * (dx+1) holds the coupling with the neighbour at (dx, dy, dz); slots in
 * increasing order are columns in increasing order. A level's DIA form is
 * `nd` arrays of n values (val[k n + i] for slot slot[k]; 0 where the
 * neighbour is outside the grid). The per-point math below is shared by the
 * CPU reference (amg_grid.c) and the GPU (kernels/sparse/amg_grid*.cu). */
#ifndef GT_SPARSE_AMG_GRID_H
#define GT_SPARSE_AMG_GRID_H

#include <stdbool.h>
#include <stdint.h>

#include "common/hostdev.h"
#include "common/status.h"
#include "sparse/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Grid dimensions of a level (nx == 0: not a grid level) and, per
   dimension, the interpolation weight of its last point when that point is
   odd (gt_amg_grid_interp1; set by gt_amg_grid_end_weights). */
typedef struct gt_amg_grid {
    int64_t nx, ny, nz;
    double wend[3];
} gt_amg_grid;

#define GT_AMG_GRID_SLOTS 27
/* "auto" takes the grid when the largest of the per-axis sums of |a_ij|
   (face neighbours) is at most this times the smallest. */
#define GT_AMG_GRID_ANISO 4.0

/* The Chebyshev smoother's interval on grid levels, times the Gershgorin
   bound of rho(D^-1 A) (an upper bound already, so no margin above it).
   CPU AMG-PCG iterations over a variable-coefficient 7-point, the 7-point
   Laplacian, the tetrahedral mesh (jittered and not), the 27-point, a 2-D
   5-point and an odd-sized 7-point, at 64^3-96^3: [0.1, 1.1] (aggregation's)
   9 8 9 8 8 8 8; [0.15, 1.0] 8 6 7 7 6 6 6; [0.12, 1.0] 8 7 8 7 7 7 7;
   [0.18, 1.0] 8 6 8 6 6 6 6; hi 0.9 with lo 0.1: 17 on the Laplacian. */
#define GT_AMG_GRID_CHEB_LO 0.15
#define GT_AMG_GRID_CHEB_HI 1.0

/* Grid hierarchies stop at min(amg_coarse_size, this) rows: the dense
   inverse of the coarsest level (one block of Gauss-Jordan) costs about 8 us
   a row on the GPU (125 rows: 1.05 ms of a 5.5 ms set-up on the 160^3
   Laplacian), one more grid level some 20 us a V-cycle. */
#define GT_AMG_GRID_COARSE_MAX 64
/* Whether grid level l of n rows is the coarsest under coarse_size. */
GT_HD bool gt_amg_grid_last(int64_t n, int64_t coarse_size)
{
    return n <= (coarse_size < GT_AMG_GRID_COARSE_MAX ? coarse_size : GT_AMG_GRID_COARSE_MAX);
}

GT_HD int gt_amg_grid_slot(int dx, int dy, int dz) { return (dz + 1) * 9 + (dy + 1) * 3 + (dx + 1); }
GT_HD int gt_amg_grid_sdx(int s) { return s % 3 - 1; }
GT_HD int gt_amg_grid_sdy(int s) { return s / 3 % 3 - 1; }
GT_HD int gt_amg_grid_sdz(int s) { return s / 9 - 1; }
/* slot s's offset along dimension d (0 x, 1 y, 2 z) */
GT_HD int gt_amg_grid_sd(int s, int d) { return d == 0 ? gt_amg_grid_sdx(s) : d == 1 ? gt_amg_grid_sdy(s) : gt_amg_grid_sdz(s); }
/* the axis of a face neighbour's slot (one offset nonzero), -1 otherwise */
GT_HD int gt_amg_grid_face_axis(int s)
{
    int ax = gt_amg_grid_sdx(s) != 0, ay = gt_amg_grid_sdy(s) != 0, az = gt_amg_grid_sdz(s) != 0;
    return ax + ay + az != 1 ? -1 : ax ? 0 : ay ? 1 : 2;
}
/* j - i for the neighbour in slot s */
GT_HD int64_t gt_amg_grid_offset(gt_amg_grid g, int s)
{
    return (int64_t)gt_amg_grid_sdx(s) + g.nx * ((int64_t)gt_amg_grid_sdy(s) + g.ny * (int64_t)gt_amg_grid_sdz(s));
}
GT_HD int64_t gt_amg_grid_size(gt_amg_grid g) { return g.nx * g.ny * g.nz; }
/* The coordinates of point i, in 32-bit arithmetic (CSR columns are int32,
   so i and nx ny fit; two divisions, not three in 64 bits). */
GT_HD void gt_amg_grid_xyz(gt_amg_grid g, int64_t i, int64_t *x, int64_t *y, int64_t *z)
{
    uint32_t q = (uint32_t)i / (uint32_t)g.nx;
    *x = (int64_t)((uint32_t)i - q * (uint32_t)g.nx), *y = (int64_t)(q % (uint32_t)g.ny), *z = (int64_t)(q / (uint32_t)g.ny);
}
/* coarse points of a dimension of m fine points: the even coordinates */
GT_HD int64_t gt_amg_grid_coarse1(int64_t m) { return m <= 1 ? 1 : (m + 1) / 2; }
GT_HD gt_amg_grid gt_amg_grid_coarse(gt_amg_grid f)
{
    gt_amg_grid c = {gt_amg_grid_coarse1(f.nx), gt_amg_grid_coarse1(f.ny), gt_amg_grid_coarse1(f.nz), {0.5, 0.5, 0.5}};
    return c;
}
/* The coarse coordinates fine coordinate x (of m, m_c coarse) interpolates
   from (1 or 2) and their weights: x even: x/2 with 1; x odd: (x-1)/2 and
   (x+1)/2 with 1/2 each; the last point of an even dimension has no coarse
   point after it: (x-1)/2 with wend, between 1/2 (linear to a Dirichlet
   boundary's zero) and 1 (the constant, where the operator's row sums
   vanish as at a Neumann boundary), from the operator. */
GT_HD int gt_amg_grid_interp1(int64_t x, int64_t mc, double wend, int64_t c[2], double w[2])
{
    if ((x & 1) == 0) {
        c[0] = x >> 1, w[0] = 1;
        return 1;
    }
    c[0] = (x - 1) >> 1, w[0] = 0.5;
    if (c[0] + 1 < mc) {
        c[1] = c[0] + 1, w[1] = 0.5;
        return 2;
    }
    w[0] = wend;
    return 1;
}
/* The restriction's weight of fine coordinate x (of m) for coarse
   coordinate X (R = P^T): 1 at 2X, 1/2 at 2X +- 1, wend at the odd last
   point. */
GT_HD double gt_amg_grid_rweight(int64_t x, int64_t X, int64_t m, double wend)
{
    return x == 2 * X ? 1.0 : x == m - 1 && (m & 1) == 0 ? wend : 0.5;
}
/* Entries of coarse row (x, y, z): its in-grid neighbours (slots in order). */
GT_HD int gt_amg_grid_row_len(gt_amg_grid g, int64_t x, int64_t y, int64_t z)
{
    int cx = 1 + (x > 0) + (x + 1 < g.nx), cy = 1 + (y > 0) + (y + 1 < g.ny), cz = 1 + (z > 0) + (z + 1 < g.nz);
    return cx * cy * cz;
}
GT_HD bool gt_amg_grid_inside(gt_amg_grid g, int64_t x, int64_t y, int64_t z)
{
    return x >= 0 && x < g.nx && y >= 0 && y < g.ny && z >= 0 && z < g.nz;
}

/* The part of (R A P)[I, I + offset(s)] that fine point (fx, fy, fz)
   brings to coarse point I = (cx, cy, cz), added into acc[s]: its
   restriction weight wi times its stencil entries a_ij times P[j, J]. A in
   DIA form on grid f (nd slots slot[k], values val[k n + i]);
   c = gt_amg_grid_coarse(f); points outside f add nothing. */
GT_HD void gt_amg_grid_galerkin_fine(gt_amg_grid f, gt_amg_grid c, int nd, const int8_t *slot, const double *val,
                                     int64_t cx, int64_t cy, int64_t cz, int64_t fx, int64_t fy, int64_t fz,
                                     double *acc)
{
    if (!gt_amg_grid_inside(f, fx, fy, fz)) return;
    int64_t n = gt_amg_grid_size(f), i = fx + f.nx * (fy + f.ny * fz);
    double wi = gt_amg_grid_rweight(fx, cx, f.nx, f.wend[0]) *
                (gt_amg_grid_rweight(fy, cy, f.ny, f.wend[1]) * gt_amg_grid_rweight(fz, cz, f.nz, f.wend[2]));
    for (int k = 0; k < nd; k++) {
        double a = val[(int64_t)k * n + i];
        if (a == 0) continue;
        int s = slot[k];
        int64_t jx = fx + gt_amg_grid_sdx(s), jy = fy + gt_amg_grid_sdy(s), jz = fz + gt_amg_grid_sdz(s);
        if (!gt_amg_grid_inside(f, jx, jy, jz)) continue;
        int64_t X[2], Y[2], Z[2];
        double wx[2], wy[2], wz[2];
        int kx = gt_amg_grid_interp1(jx, c.nx, f.wend[0], X, wx), ky = gt_amg_grid_interp1(jy, c.ny, f.wend[1], Y, wy),
            kz = gt_amg_grid_interp1(jz, c.nz, f.wend[2], Z, wz);
        double wa = wi * a;
        for (int az = 0; az < kz; az++)
            for (int ay = 0; ay < ky; ay++)
                for (int ax = 0; ax < kx; ax++)
                    acc[gt_amg_grid_slot((int)(X[ax] - cx), (int)(Y[ay] - cy), (int)(Z[az] - cz))] +=
                        wa * (wx[ax] * wy[ay] * wz[az]);
    }
}
/* The fine points coarse point I restricts from, q = 0..26: (2cx - 1 +
   q % 3, 2cy - 1 + q / 3 % 3, 2cz - 1 + q / 9). acc[s] = (R A P)[I, I +
   offset(s)]: the sum of gt_amg_grid_galerkin_fine over them, q in order. */
GT_HD void gt_amg_grid_galerkin_point(gt_amg_grid f, gt_amg_grid c, int nd, const int8_t *slot, const double *val,
                                      int64_t cx, int64_t cy, int64_t cz, double *acc)
{
    for (int s = 0; s < GT_AMG_GRID_SLOTS; s++) acc[s] = 0;
    for (int q = 0; q < 27; q++)
        gt_amg_grid_galerkin_fine(f, c, nd, slot, val, cx, cy, cz, 2 * cx - 1 + q % 3, 2 * cy - 1 + q / 3 % 3,
                                  2 * cz - 1 + q / 9, acc);
}

/* ------------------------------------------------ CPU reference */
/* What the detection found on a matrix: its grid (g.nx == 0: none), the
   slots its entries use (bit s), whether it is symmetric (a_ij == a_ji to
   1e-12 relative), and the sums of |a_ij| over the face neighbours of each
   axis. */
typedef struct gt_amg_grid_info {
    gt_amg_grid g;
    uint32_t mask;
    bool symmetric;
    double axis[3];
} gt_amg_grid_info;

/* The grids a matrix of n rows can be on, from its smallest entry offset
   j - i above 1 (d2; 0: none) and its largest (dmax): at most 18 into out,
   most likely first (face neighbours' offsets, then the 27-point's).
   Every candidate still has to pass gt_amg_grid_fits. */
int gt_amg_grid_candidates(int64_t n, int64_t d2, int64_t dmax, gt_amg_grid *out);
/* Whether the coordinates of i and j on g differ by at most 1 in each
   dimension (the pair is a grid neighbour); its slot into *s. */
GT_HD bool gt_amg_grid_pair(gt_amg_grid g, int64_t i, int64_t j, int *s)
{
    int64_t xi, yi, zi, xj, yj, zj;
    gt_amg_grid_xyz(g, i, &xi, &yi, &zi);
    gt_amg_grid_xyz(g, j, &xj, &yj, &zj);
    int64_t dx = xj - xi, dy = yj - yi, dz = zj - zi;
    if (dx < -1 || dx > 1 || dy < -1 || dy > 1 || dz < -1 || dz > 1) return false;
    *s = gt_amg_grid_slot((int)dx, (int)dy, (int)dz);
    return true;
}
/* Detect the grid of a (square); gi->g.nx == 0 when none fits. */
gt_status gt_amg_grid_detect(const gt_csr *a, gt_amg_grid_info *gi);
/* "auto": the grid hierarchy for what the detection found under these
   options (symmetric, isotropic within GT_AMG_GRID_ANISO, Chebyshev). */
bool gt_amg_grid_choose(const gt_amg_grid_info *gi, int smoother);
/* The coarsening of a under o: *grid when the grid hierarchy is taken (auto
   by gt_amg_grid_choose; grid: an error when a is not on a grid or the
   smoother is not Chebyshev); gi what the detection found (amg.c). */
struct gt_precond_opts;
/* The same from a detection already made (the GPU's). */
gt_status gt_amg_grid_verdict(const gt_amg_grid_info *gi, const struct gt_precond_opts *o, bool *grid);
gt_status gt_amg_grid_decide(const gt_csr *a, const struct gt_precond_opts *o, gt_amg_grid_info *gi, bool *grid);
/* DIA form of a on g with the slots of mask: *nd arrays, slot[k], *val
   (nd * n doubles, caller frees). */
gt_status gt_amg_grid_to_dia(const gt_csr *a, gt_amg_grid g, uint32_t mask, int *nd, int8_t slot[GT_AMG_GRID_SLOTS],
                             double **val);
/* A_c = R A P on the coarse grid of f (27-point CSR, rows' in-grid
   neighbours in slot order, coupling values that cancel kept as 0). */
gt_status gt_amg_grid_galerkin(const gt_csr *a, gt_amg_grid f, uint32_t mask, gt_csr *ac);
/* The end weights of f's even dimensions from a (on f): the stencil
   collapsed onto the dimension over its last face, sum |a_ij| towards the
   point before / (sum a_ii - sum |a_ij| within the face), within [1/2, 1];
   1/2 on an odd or single-point dimension. */
void gt_amg_grid_end_weights(const gt_csr *a, gt_amg_grid *f);
/* The end weight from the face sums (shared with the GPU). */
GT_HD double gt_amg_grid_wend(double towards, double diag_less_face)
{
    double w = diag_less_face > 0 ? towards / diag_less_face : 1.0;
    return w < 0.5 ? 0.5 : w > 1.0 ? 1.0 : w;
}
/* P (n_f x n_c): trilinear interpolation from the coarse grid of f. */
gt_status gt_amg_grid_prolong(gt_amg_grid f, gt_csr *p);
/* The Gershgorin bound of rho(D^-1 A), max_i |dinv_i| sum_j |a_ij| (the
   row's entries in order): the Chebyshev smoother's upper bound on grid
   levels (cheaper than power iterations, and never below rho). */
double gt_amg_grid_rho(const gt_csr *a, const double *dinv);

#ifdef __cplusplus
}
#endif
#endif
