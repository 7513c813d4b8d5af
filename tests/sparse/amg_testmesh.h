/* An unstructured SPD test matrix for the AMG tests and benchmark
 * (header-only): the P1 finite-element Laplacian of the unit cube cut into
 * nc^3 cells of 6 tetrahedra (Kuhn), interior nodes jittered by up to h/4,
 * Dirichlet boundary (boundary nodes dropped): (nc-1)^3 rows, ~15 entries a
 * row, some positive off-diagonals (obtuse tetrahedra). */
#ifndef AMG_TESTMESH_H
#define AMG_TESTMESH_H

#include <math.h>
#include <stdlib.h>

#include "sparse/sparse.h"

/* P1 Laplacian on the jittered Kuhn tetrahedral mesh of the unit cube
   (N cells a side, 6 tetrahedra a cell, interior nodes only). */
static inline gt_status gt_test_tet_laplacian(int64_t nc, gt_csr *out)
{
    int64_t np = nc + 1, nin = nc - 1;
    double h = 1.0 / (double)nc;
    double *xyz = malloc((size_t)(np * np * np) * 3 * 8);
    size_t cap = (size_t)(nc * nc * nc) * 6 * 16;
    int32_t *ri = malloc(cap * 4), *ci = malloc(cap * 4);
    double *v = malloc(cap * 8);
    if (!xyz || !ri || !ci || !v) return free(xyz), free(ri), free(ci), free(v), gt_fail(GT_ERR_RUNTIME, "out of memory");
    for (int64_t k = 0; k < np; k++)
        for (int64_t j = 0; j < np; j++)
            for (int64_t i = 0; i < np; i++) {
                int64_t id = (k * np + j) * np + i;
                int64_t c[3] = {i, j, k};
                for (int d = 0; d < 3; d++) {
                    double jit = (c[d] == 0 || c[d] == nc) ? 0 : 0.25 * h * 2 * gt_power_start(id * 3 + d);
                    xyz[id * 3 + d] = (double)c[d] * h + jit;
                }
            }
    /* the 6 tetrahedra of a cell: the paths from corner 0 to corner 7 */
    static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    size_t k2 = 0;
    for (int64_t ck = 0; ck < nc; ck++)
        for (int64_t cj = 0; cj < nc; cj++)
            for (int64_t cix = 0; cix < nc; cix++)
                for (int t = 0; t < 6; t++) {
                    int64_t c[3] = {cix, cj, ck}, node[4];
                    for (int q = 0; q < 4; q++) {
                        node[q] = (c[2] * np + c[1]) * np + c[0];
                        if (q < 3) c[perm[t][q]]++;
                    }
                    /* gradients of the barycentric functions: rows of J^-T */
                    double J[3][3], G[4][3], det;
                    for (int d = 0; d < 3; d++)
                        for (int q = 0; q < 3; q++) J[d][q] = xyz[node[q + 1] * 3 + d] - xyz[node[0] * 3 + d];
                    det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) - J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
                          J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
                    double inv[3][3]; /* inverse of J, inv[q][d] */
                    inv[0][0] = (J[1][1] * J[2][2] - J[1][2] * J[2][1]) / det;
                    inv[0][1] = (J[0][2] * J[2][1] - J[0][1] * J[2][2]) / det;
                    inv[0][2] = (J[0][1] * J[1][2] - J[0][2] * J[1][1]) / det;
                    inv[1][0] = (J[1][2] * J[2][0] - J[1][0] * J[2][2]) / det;
                    inv[1][1] = (J[0][0] * J[2][2] - J[0][2] * J[2][0]) / det;
                    inv[1][2] = (J[0][2] * J[1][0] - J[0][0] * J[1][2]) / det;
                    inv[2][0] = (J[1][0] * J[2][1] - J[1][1] * J[2][0]) / det;
                    inv[2][1] = (J[0][1] * J[2][0] - J[0][0] * J[2][1]) / det;
                    inv[2][2] = (J[0][0] * J[1][1] - J[0][1] * J[1][0]) / det;
                    for (int d = 0; d < 3; d++) {
                        G[0][d] = 0;
                        for (int q = 0; q < 3; q++) G[q + 1][d] = inv[q][d], G[0][d] -= inv[q][d];
                    }
                    double vol = fabs(det) / 6;
                    for (int p = 0; p < 4; p++)
                        for (int q = 0; q < 4; q++) {
                            int64_t a = node[p], b = node[q];
                            int64_t ai = a % np, aj = a / np % np, ak = a / (np * np);
                            int64_t bi = b % np, bj = b / np % np, bk = b / (np * np);
                            if (ai == 0 || ai == nc || aj == 0 || aj == nc || ak == 0 || ak == nc) continue;
                            if (bi == 0 || bi == nc || bj == 0 || bj == nc || bk == 0 || bk == nc) continue;
                            ri[k2] = (int32_t)(((ak - 1) * nin + aj - 1) * nin + ai - 1);
                            ci[k2] = (int32_t)(((bk - 1) * nin + bj - 1) * nin + bi - 1);
                            v[k2++] = vol * (G[p][0] * G[q][0] + G[p][1] * G[q][1] + G[p][2] * G[q][2]) / h; /* O(1) values */
                        }
                }
    gt_status s = gt_csr_from_triplets(nin * nin * nin, nin * nin * nin, (int64_t)k2, ri, ci, v, out);
    free(xyz), free(ri), free(ci), free(v);
    return s;
}

#endif
