/* gen_problem: write a test problem of lib/sparse/problems.h or laplace.h
 * as a Matrix Market file, for the benchmarks and the CLI tests
 * (scripts/gen/sparse-problems calls it). Not installed.
 *
 *   gen_problem convdiff N PECLET OUT.mtx     3-D upwind convection-diffusion, N^3
 *   gen_problem convdiff2d N PECLET OUT.mtx   the same in 2-D, N^2
 *   gen_problem recirc N PECLET OUT.mtx       3-D upwind convection-diffusion in the
 *                                             recirculating flow (GT_FLOW_RECIRC), N^3
 *   gen_problem recirc2d N PECLET OUT.mtx     the same in 2-D, N^2
 *   gen_problem diag N PECLET OUT.mtx         3-D upwind convection-diffusion along the
 *                                             cube's diagonal (GT_FLOW_DIAGONAL), N^3
 *   gen_problem diag2d N PECLET OUT.mtx       the same in 2-D, N^2
 *   gen_problem aniso N EPS THETA OUT.mtx     2-D rotated anisotropic diffusion, N^2
 *   gen_problem neumann NX NY OUT.mtx         singular pure-Neumann 5-point Laplacian
 *   gen_problem lap7 N OUT.mtx                7-point Dirichlet Laplacian, N^3 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/log.h"
#include "io/mtx.h"
#include "sparse/laplace.h"
#include "sparse/problems.h"
#include "sparse/sparse.h"

static int usage(void)
{
    fprintf(stderr, "usage: gen_problem convdiff|convdiff2d|recirc|recirc2d|diag|diag2d N PECLET OUT | aniso N EPS THETA OUT | "
                    "neumann NX NY OUT | lap7 N OUT\n");
    return 2;
}

int main(int argc, char **argv)
{
    gt_set_progname("gen_problem");
    if (argc < 4) return usage();
    const char *kind = argv[1], *out = argv[argc - 1];
    gt_csr a;
    gt_status s;
    long n = 0, ny = 0;
    double p1 = 0, p2 = 0;
    char comment[160];
    if (!strcmp(kind, "convdiff") && argc == 5) {
        s = gt_parse_long("N", argv[2], 1, 1290, &n);
        if (s == GT_OK) s = gt_parse_double("PECLET", argv[3], 0, 1e9, &p1);
        if (s == GT_OK) s = gt_convdiff3d(n, p1, &a);
        snprintf(comment, sizeof comment, "3-D convection-diffusion, upwind, %ld^3, Peclet %g", n, p1);
    } else if ((!strcmp(kind, "recirc") || !strcmp(kind, "recirc2d") || !strcmp(kind, "convdiff2d") ||
                !strcmp(kind, "diag") || !strcmp(kind, "diag2d")) &&
               argc == 5) {
        int dim = strcmp(kind, "recirc") && strcmp(kind, "diag") ? 2 : 3;
        gt_flow fl = !strncmp(kind, "recirc", 6) ? GT_FLOW_RECIRC
                     : !strncmp(kind, "diag", 4) ? GT_FLOW_DIAGONAL
                                                 : GT_FLOW_UNIFORM;
        s = gt_parse_long("N", argv[2], 1, dim == 3 ? 1290 : 46340, &n);
        if (s == GT_OK) s = gt_parse_double("PECLET", argv[3], 0, 1e9, &p1);
        if (s == GT_OK) s = gt_convdiff(dim, n, p1, fl, &a);
        snprintf(comment, sizeof comment, "%d-D convection-diffusion, upwind, %s flow, %ld^%d, Peclet %g", dim,
                 fl == GT_FLOW_RECIRC ? "recirculating" : fl == GT_FLOW_DIAGONAL ? "diagonal" : "uniform", n, dim, p1);
    } else if (!strcmp(kind, "aniso") && argc == 6) {
        s = gt_parse_long("N", argv[2], 1, 46340, &n);
        if (s == GT_OK) s = gt_parse_double("EPS", argv[3], 1e-12, 1, &p1);
        if (s == GT_OK) s = gt_parse_double("THETA", argv[4], -360, 360, &p2);
        if (s == GT_OK) s = gt_rotated_aniso2d(n, p1, p2, &a);
        snprintf(comment, sizeof comment, "2-D rotated anisotropic diffusion, %ld^2, eps %g, theta %g deg", n, p1, p2);
    } else if (!strcmp(kind, "neumann") && argc == 5) {
        s = gt_parse_long("NX", argv[2], 1, 46340, &n);
        if (s == GT_OK) s = gt_parse_long("NY", argv[3], 1, 46340, &ny);
        if (s == GT_OK) s = gt_neumann_laplacian2d(n, ny, &a);
        snprintf(comment, sizeof comment, "2-D pure-Neumann Laplacian %ldx%ld (singular)", n, ny);
    } else if (!strcmp(kind, "lap7") && argc == 4) {
        s = gt_parse_long("N", argv[2], 1, 1290, &n);
        if (s == GT_OK) s = gt_laplacian(7, n, n, n, &a);
        snprintf(comment, sizeof comment, "7-point Laplacian %ld^3", n);
    } else {
        return usage();
    }
    if (s != GT_OK) return gt_report(s);
    gt_coo c;
    s = gt_csr_to_coo(&a, &c);
    if (s == GT_OK) {
        s = gt_mtx_write_coo(out, c.nrows, c.ncols, c.nnz, c.row, c.col, c.val, comment);
        gt_coo_free(&c);
    }
    gt_csr_free(&a);
    return gt_report(s);
}
