/* Shared helpers of the tps tests. */
#ifndef TPS_TESTUTIL_H
#define TPS_TESTUTIL_H

#include <math.h>
#include <stdlib.h>

#include "gt_test.h"
#include "tps/tps.h"

static inline double *rand_points(gt_rng *r, size_t n, double lo, double hi, bool planar)
{
    double *p = malloc(n * 3 * sizeof(double));
    for (size_t i = 0; i < 3 * n; i++) p[i] = gt_rng_range(r, lo, hi);
    if (planar)
        for (size_t i = 0; i < n; i++) p[3 * i + 2] = 0.0;
    return p;
}

/* targets: a smooth nonlinear deformation of src plus noise of given sigma */
static inline double *deform(gt_rng *r, const double *src, size_t n, double sigma)
{
    double *y = malloc(n * 3 * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        const double *p = src + 3 * i;
        y[3 * i] = p[0] + 0.1 * sin(3 * p[1]) + 0.05 * p[2] * p[2];
        y[3 * i + 1] = 1.1 * p[1] + 0.1 * cos(2 * p[0] + p[2]);
        y[3 * i + 2] = p[2] + 0.08 * p[0] * p[1];
        for (int c = 0; c < 3; c++) {
            /* Box-Muller */
            double u1 = gt_rng_uniform(r), u2 = gt_rng_uniform(r);
            if (u1 < 1e-300) u1 = 1e-300;
            y[3 * i + c] += sigma * sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
        }
    }
    return y;
}

static inline double max_abs(const double *v, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs(v[i]));
    return m;
}
static inline double max_diff(const double *a, const double *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

#endif
