/* The basis's integrals (poisson.h, solve_internal.h): 1D integrals of
 * products of the quadratic B-splines and their derivatives by 3-point
 * Gauss-Legendre quadrature per cell (exact for these piecewise
 * polynomials), the tables of them between two levels, and the 125-point
 * Laplacian stencil of one level. The CUDA path fills its tables with the
 * same functions. */
#include <math.h>
#include <stdlib.h>

#include "common/alloc.h"
#include "poisson/poisson.h"
#include "poisson/pr_bspline.h"
#include "poisson/solve_internal.h"

double gt_pr_integral1d(int df, int64_t i, int a, int dg, int64_t j, int b)
{
    static const double gx[3] = {-0.7745966692414834, 0.0, 0.7745966692414834};
    static const double gw[3] = {5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0};
    double sf = ldexp(1.0, df), sg = ldexp(1.0, dg);
    double h = 1.0 / sf, sum = 0.0;
    for (int k = 0; k < 3; k++) {
        double x0 = (double)(i - 1 + k) * h;
        for (int g = 0; g < 3; g++) {
            double x = x0 + 0.5 * h * (1.0 + gx[g]);
            double tf = x * sf - (double)i - 0.5, tg = x * sg - (double)j - 0.5;
            double fv = a ? sf * gt_pr_dbspline(tf) : gt_pr_bspline(tf);
            double gv = b ? sg * gt_pr_dbspline(tg) : gt_pr_bspline(tg);
            sum += gw[g] * fv * gv;
        }
    }
    return sum * 0.5 * h;
}

/* 1D integrals between a level-df function and the level-dg (dg <= df)
 * functions around its ancestor: they depend only on r = i - 2^(df-dg) j0
 * (the position inside the ancestor cell j0) and the offset k - 2 of the
 * coarse function, so one table of 2^(df-dg) x 5 values serves every node. */
void gt_pr_cross_fill(int df, int dg, int a, int b, double *t)
{
    size_t rows = (size_t)1 << (df - dg);
    for (size_t r = 0; r < rows; r++)
        for (int k = 0; k < 5; k++) t[r * 5 + k] = gt_pr_integral1d(df, (int64_t)r, a, dg, k - 2, b);
}
double *gt_pr_cross_table(int df, int dg, int a, int b)
{
    double *t = gt_malloc_array((size_t)1 << (df - dg), 5 * sizeof(double), "integral table");
    if (t) gt_pr_cross_fill(df, dg, a, b, t);
    return t;
}

void gt_pr_stencil125(int d, double stencil[125])
{
    for (int i = 0; i < 125; i++) {
        int k[3] = {i % 5 - 2, (i / 5) % 5 - 2, i / 25 - 2};
        double M[3], G[3];
        for (int a = 0; a < 3; a++) {
            M[a] = gt_pr_integral1d(d, 0, 0, d, k[a], 0);
            G[a] = gt_pr_integral1d(d, 0, 1, d, k[a], 1);
        }
        stencil[i] = G[0] * M[1] * M[2] + M[0] * G[1] * M[2] + M[0] * M[1] * G[2];
    }
}
