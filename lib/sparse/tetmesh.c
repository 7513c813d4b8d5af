/* P1 finite-element Laplacian on a structured tetrahedral mesh of the unit
 * cube (gt_tetmesh_laplacian in laplace.h): (n+2)^3 nodes, each cube split
 * into the 6 Kuhn tetrahedra along its main diagonal (conforming), interior
 * nodes jittered, Dirichlet boundary nodes eliminated, the n^3 unknowns
 * numbered in a random order, as a mesh generator's output often is. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/laplace.h"

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double unit(uint64_t *s) { return (double)(splitmix(s) >> 11) * (1.0 / 9007199254740992.0); }

/* slot of the neighbour offset (dx, dy, dz) in {-1,0,1}^3 */
static int slot(int dx, int dy, int dz) { return (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1); }

/* The Kuhn edges: offsets whose nonzero components are all +1 or all -1
 * (axis, face and body diagonals of one sign): 14 neighbours and the node. */
static int kuhn_edge(int dx, int dy, int dz)
{
    int pos = (dx > 0) + (dy > 0) + (dz > 0), neg = (dx < 0) + (dy < 0) + (dz < 0);
    return pos == 0 || neg == 0;
}

gt_status gt_tetmesh_laplacian(int64_t n, double jitter, uint64_t seed, bool permute, gt_csr *out)
{
    memset(out, 0, sizeof *out);
    int64_t m = n + 2; /* nodes per axis */
    if (n < 1 || n > 1200 || n * n * n > INT32_MAX || !(jitter >= 0 && jitter < 0.25))
        return gt_fail(GT_ERR_USAGE, "tet mesh of %lld^3 unknowns with jitter %g out of range (1..1200, [0, 0.25))",
                       (long long)n, jitter);
    int64_t N = n * n * n, M = m * m * m;
    double h = 1.0 / (double)(m - 1);
    double *xyz = malloc((size_t)M * 3 * sizeof *xyz);
    double *slots = calloc((size_t)N * 27, sizeof *slots); /* row (grid order) x neighbour slot */
    int32_t *perm = malloc((size_t)N * sizeof *perm);
    if (!xyz || !slots || !perm) {
        free(xyz), free(slots), free(perm);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    uint64_t rs = seed;
    for (int64_t z = 0; z < m; z++)
        for (int64_t y = 0; y < m; y++)
            for (int64_t x = 0; x < m; x++) {
                double *p = xyz + 3 * ((z * m + y) * m + x);
                bool in = x > 0 && x < m - 1 && y > 0 && y < m - 1 && z > 0 && z < m - 1;
                p[0] = (double)x * h, p[1] = (double)y * h, p[2] = (double)z * h;
                if (in)
                    for (int k = 0; k < 3; k++) p[k] += (2 * unit(&rs) - 1) * jitter * h;
            }
    /* the 6 Kuhn tets of a cube: 0, e_a, e_a + e_b, e_a + e_b + e_c for each order (a, b, c) */
    static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int64_t cz = 0; cz < m - 1; cz++)
        for (int64_t cy = 0; cy < m - 1; cy++)
            for (int64_t cx = 0; cx < m - 1; cx++)
                for (int t = 0; t < 6; t++) {
                    int64_t g[4][3]; /* grid coordinates of the 4 vertices */
                    int c[3] = {0, 0, 0};
                    for (int v = 0; v < 4; v++) {
                        if (v > 0) c[orders[t][v - 1]] = 1;
                        g[v][0] = cx + c[0], g[v][1] = cy + c[1], g[v][2] = cz + c[2];
                    }
                    double P[4][3];
                    for (int v = 0; v < 4; v++)
                        memcpy(P[v], xyz + 3 * ((g[v][2] * m + g[v][1]) * m + g[v][0]), sizeof P[v]);
                    /* gradients of the barycentric functions: rows of inverse(J)^T */
                    double J[3][3];
                    for (int r = 0; r < 3; r++)
                        for (int k = 0; k < 3; k++) J[r][k] = P[r + 1][k] - P[0][k];
                    double det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
                                 J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
                                 J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
                    /* grad lambda_{r+1} = (row r of inverse(J)^T... ) via cofactors */
                    double G[4][3];
                    for (int r = 0; r < 3; r++) {
                        int r1 = (r + 1) % 3, r2 = (r + 2) % 3;
                        /* cross of the other two edge vectors, / det */
                        G[r + 1][0] = (J[r1][1] * J[r2][2] - J[r1][2] * J[r2][1]) / det;
                        G[r + 1][1] = (J[r1][2] * J[r2][0] - J[r1][0] * J[r2][2]) / det;
                        G[r + 1][2] = (J[r1][0] * J[r2][1] - J[r1][1] * J[r2][0]) / det;
                    }
                    for (int k = 0; k < 3; k++) G[0][k] = -(G[1][k] + G[2][k] + G[3][k]);
                    double vol = fabs(det) / 6.0;
                    for (int a = 0; a < 4; a++) {
                        int64_t ax = g[a][0] - 1, ay = g[a][1] - 1, az = g[a][2] - 1;
                        if (ax < 0 || ax >= n || ay < 0 || ay >= n || az < 0 || az >= n) continue;
                        int64_t row = (az * n + ay) * n + ax;
                        for (int b = 0; b < 4; b++) {
                            int64_t bx = g[b][0] - 1, by = g[b][1] - 1, bz = g[b][2] - 1;
                            if (bx < 0 || bx >= n || by < 0 || by >= n || bz < 0 || bz >= n) continue;
                            double k = vol * (G[a][0] * G[b][0] + G[a][1] * G[b][1] + G[a][2] * G[b][2]);
                            slots[row * 27 + slot((int)(bx - ax), (int)(by - ay), (int)(bz - az))] += k;
                        }
                    }
                }
    free(xyz);
    /* new number of grid unknown i: perm[i] (Fisher-Yates) or i */
    for (int64_t i = 0; i < N; i++) perm[i] = (int32_t)i;
    if (permute)
        for (int64_t i = N - 1; i > 0; i--) {
            int64_t j = (int64_t)(splitmix(&rs) % (uint64_t)(i + 1));
            int32_t t = perm[i];
            perm[i] = perm[j], perm[j] = t;
        }
    /* triplets of the Kuhn-edge slots of interior neighbours, in the new numbering */
    size_t cap = (size_t)N * 15;
    int32_t *ri = malloc(cap * sizeof *ri), *ci = malloc(cap * sizeof *ci);
    double *vi = malloc(cap * sizeof *vi);
    gt_status s = GT_OK;
    if (!ri || !ci || !vi) s = gt_fail(GT_ERR_RUNTIME, "out of memory");
    int64_t nnz = 0;
    for (int64_t z = 0; s == GT_OK && z < n; z++)
        for (int64_t y = 0; y < n; y++)
            for (int64_t x = 0; x < n; x++) {
                int64_t row = (z * n + y) * n + x;
                for (int dz = -1; dz <= 1; dz++)
                    for (int dy = -1; dy <= 1; dy++)
                        for (int dx = -1; dx <= 1; dx++) {
                            int64_t X = x + dx, Y = y + dy, Z = z + dz;
                            if (!kuhn_edge(dx, dy, dz) || X < 0 || X >= n || Y < 0 || Y >= n || Z < 0 || Z >= n)
                                continue;
                            ri[nnz] = perm[row];
                            ci[nnz] = perm[(Z * n + Y) * n + X];
                            vi[nnz] = slots[row * 27 + slot(dx, dy, dz)];
                            nnz++;
                        }
            }
    free(slots), free(perm);
    if (s == GT_OK) s = gt_csr_from_triplets(N, N, nnz, ri, ci, vi, out);
    free(ri), free(ci), free(vi);
    return s;
}
