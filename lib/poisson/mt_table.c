/* The tables of the extraction's marching tetrahedra, shared by the CPU
 * reference (extract.c) and the CUDA path (kernels/poisson/pr_extract.cu), so
 * that both cut a cell and orient its triangles by one rule.
 *
 * Local corner c of a cell has bits x = c & 1, y = (c >> 1) & 1,
 * z = (c >> 2) & 1. The 6 tetrahedra of the Kuhn split share the main
 * diagonal 0-7; every edge of them joins corners a and b with a a subset of b,
 * so it is named by its lower corner a and its direction mask b ^ a. */
#include "poisson/poisson.h"

const uint8_t gt_pr_kuhn_tet[6][4] = {{0, 1, 3, 7}, {0, 1, 5, 7}, {0, 2, 3, 7},
                                      {0, 2, 6, 7}, {0, 4, 5, 7}, {0, 4, 6, 7}};

/* the 19 edges (a, mask) with a & mask == 0, a ascending, then mask */
const uint8_t gt_pr_cell_edge[19] = {
    GT_PR_LEDGE(0, 1), GT_PR_LEDGE(0, 2), GT_PR_LEDGE(0, 3), GT_PR_LEDGE(0, 4), GT_PR_LEDGE(0, 5),
    GT_PR_LEDGE(0, 6), GT_PR_LEDGE(0, 7), GT_PR_LEDGE(1, 2), GT_PR_LEDGE(1, 4), GT_PR_LEDGE(1, 6),
    GT_PR_LEDGE(2, 1), GT_PR_LEDGE(2, 4), GT_PR_LEDGE(2, 5), GT_PR_LEDGE(3, 4), GT_PR_LEDGE(4, 1),
    GT_PR_LEDGE(4, 2), GT_PR_LEDGE(4, 3), GT_PR_LEDGE(5, 2), GT_PR_LEDGE(6, 1)};

static uint8_t ledge(int ca, int cb) { return (uint8_t)GT_PR_LEDGE(ca & cb, ca ^ cb); }

void gt_pr_mt_table(gt_pr_mt_case tab[6][16])
{
    for (int t = 0; t < 6; t++)
        for (int m = 0; m < 16; m++) {
            gt_pr_mt_case *c = &tab[t][m];
            c->ntri = 0;
            for (int i = 0; i < 6; i++) c->v[i / 3][i % 3] = 0;
            const uint8_t *T = gt_pr_kuhn_tet[t];
            int A[4], B[4], na = 0, nb = 0; /* inside, outside local corners */
            for (int k = 0; k < 4; k++) {
                if ((m >> k) & 1) A[na++] = T[k]; else B[nb++] = T[k];
            }
            if (na == 0 || na == 4) continue;
            int e[4][2], ne = 0;
            if (na == 1) { for (int k = 0; k < 3; k++) { e[ne][0] = A[0]; e[ne][1] = B[k]; ne++; } }
            else if (na == 3) { for (int k = 0; k < 3; k++) { e[ne][0] = A[k]; e[ne][1] = B[0]; ne++; } }
            else {
                e[0][0] = A[0]; e[0][1] = B[0];
                e[1][0] = A[0]; e[1][1] = B[1];
                e[2][0] = A[1]; e[2][1] = B[1];
                e[3][0] = A[1]; e[3][1] = B[0];
                ne = 4;
            }
            double mid[4][3];
            uint8_t vid[4];
            for (int k = 0; k < ne; k++) {
                for (int a = 0; a < 3; a++) mid[k][a] = 0.5 * (((e[k][0] >> a) & 1) + ((e[k][1] >> a) & 1));
                vid[k] = ledge(e[k][0], e[k][1]);
            }
            /* orientation: normal towards the outside (increasing chi) */
            double cin[3] = {0, 0, 0}, cout[3] = {0, 0, 0};
            for (int k = 0; k < na; k++)
                for (int a = 0; a < 3; a++) cin[a] += ((A[k] >> a) & 1) / (double)na;
            for (int k = 0; k < nb; k++)
                for (int a = 0; a < 3; a++) cout[a] += ((B[k] >> a) & 1) / (double)nb;
            double u1[3], u2[3], nrm[3];
            for (int a = 0; a < 3; a++) { u1[a] = mid[1][a] - mid[0][a]; u2[a] = mid[2][a] - mid[0][a]; }
            nrm[0] = u1[1] * u2[2] - u1[2] * u2[1];
            nrm[1] = u1[2] * u2[0] - u1[0] * u2[2];
            nrm[2] = u1[0] * u2[1] - u1[1] * u2[0];
            double dot = 0;
            for (int a = 0; a < 3; a++) dot += nrm[a] * (cout[a] - cin[a]);
            int flip = dot < 0;
            c->v[0][0] = vid[0];
            c->v[0][1] = flip ? vid[2] : vid[1];
            c->v[0][2] = flip ? vid[1] : vid[2];
            c->ntri = 1;
            if (ne == 4) {
                c->v[1][0] = vid[0];
                c->v[1][1] = flip ? vid[3] : vid[2];
                c->v[1][2] = flip ? vid[2] : vid[3];
                c->ntri = 2;
            }
        }
}

size_t gt_pr_extract_cell_cap(size_t nfine) { return 16 * nfine + ((size_t)1 << 20); }
