/* The marching cubes case table, derived from a face rule instead of copied.
 *
 * For each of the 256 corner classifications:
 * 1. On each of the cube's six faces, the crossed face edges (0, 2 or 4) are
 *    joined by segments. With 4 crossings (the "in" corners diagonal, the
 *    ambiguous face) each "in" corner is cut off by its own segment: the in
 *    corners are separated, the out region connects across the face. The
 *    choice depends only on the face's four corners, so the two cubes sharing
 *    a face always draw the same segments on it: no cracks.
 * 2. Each segment is oriented so that, with the face's outward normal n and
 *    u = minus the gradient of the bilinear in/out indicator at the segment's
 *    middle (pointing from in to out), it runs along u x n. Then the boundary
 *    of the surface patch inside the cube is traversed counter-clockwise seen
 *    from the out side, and the cube across the face traverses the same
 *    segment the other way (n flips): orientations agree.
 * 3. Every crossed cube edge lies on two faces, so it has exactly one incoming
 *    and one outgoing segment: the segments form closed loops. Each loop is a
 *    disk, triangulated (keeping the loop's orientation) by a dynamic
 *    programme that never uses a diagonal joining two vertices on the same
 *    cube face, since the cube across that face might use it too and the edge
 *    would then be in four triangles.
 * Interior edges of a loop's triangulation are in two triangles of the loop;
 * loop sides are in one triangle here and one in the neighbour cube: the mesh
 * is closed and manifold away from the volume border. tests/mc checks this by
 * counting edge uses on random volumes. */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "mc/mc.h"
#include "mc/mc_math.h"

static gt_mc_table g_table;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* edge e -> start corner offsets and axis (the numbering of mc_math.h) */
static void edge_geom(int e, int off[3], int *axis)
{
    unsigned o[3];
    gt_mc_edge_start(e, axis, &o[0], &o[1], &o[2]);
    for (int a = 0; a < 3; a++) off[a] = (int)o[a];
}

static int edge_of(const int p[3], int axis)
{
    int u = axis == 0 ? 1 : 0, v = axis == 2 ? 1 : 2;
    return axis * 4 + p[u] + 2 * p[v];
}

static int corner_of(const int p[3]) { return p[0] + 2 * p[1] + 4 * p[2]; }

/* does edge e lie on face (axis a, side s)? */
static bool edge_on_face(int e, int a, int s)
{
    int off[3], ax;
    edge_geom(e, off, &ax);
    return ax != a && off[a] == s;
}

static bool share_face(int e1, int e2)
{
    for (int a = 0; a < 3; a++)
        for (int s = 0; s < 2; s++)
            if (edge_on_face(e1, a, s) && edge_on_face(e2, a, s)) return true;
    return false;
}

/* triangulate polygon L[0..k) (k <= 12) without diagonals between vertices on
 * one face; DP over sub-polygons [i, j]. ok[i][j]: sub-polygon i..j can be
 * triangulated using chord (i, j). */
static int triangulate(const int *L, int k, uint8_t *out)
{
    static const int K = 12;
    bool can[12][12];
    int pick[12][12];
    bool diag_ok[12][12];
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) {
            bool side = (j == (i + 1) % k) || (i == (j + 1) % k);
            diag_ok[i][j] = side || (i != j && !share_face(L[i], L[j]));
        }
    (void)K;
    for (int len = 1; len < k; len++)
        for (int i = 0; i + len < k; i++) {
            int j = i + len;
            pick[i][j] = -1;
            if (len == 1) {
                can[i][j] = true;
                continue;
            }
            can[i][j] = false;
            if (!diag_ok[i][j]) continue;
            for (int m = i + 1; m < j; m++)
                if (can[i][m] && can[m][j] && diag_ok[i][m] && diag_ok[m][j]) {
                    can[i][j] = true;
                    pick[i][j] = m;
                    break;
                }
        }
    int nt = 0;
    if (!can[0][k - 1]) { /* fan fallback (counted as a bad case) */
        for (int m = 1; m + 1 < k; m++) {
            out[3 * nt] = (uint8_t)L[0];
            out[3 * nt + 1] = (uint8_t)L[m];
            out[3 * nt + 2] = (uint8_t)L[m + 1];
            nt++;
        }
        return -nt;
    }
    int stack[24][2], sp = 0;
    stack[sp][0] = 0;
    stack[sp][1] = k - 1;
    sp++;
    while (sp > 0) {
        sp--;
        int i = stack[sp][0], j = stack[sp][1];
        if (j - i < 2) continue;
        int m = pick[i][j];
        out[3 * nt] = (uint8_t)L[i];
        out[3 * nt + 1] = (uint8_t)L[m];
        out[3 * nt + 2] = (uint8_t)L[j];
        nt++;
        stack[sp][0] = i; stack[sp][1] = m; sp++;
        stack[sp][0] = m; stack[sp][1] = j; sp++;
    }
    return nt;
}

static void build_case(int c, gt_mc_table *t)
{
    int next[12], prev_count[12];
    for (int e = 0; e < 12; e++) next[e] = -1, prev_count[e] = 0;
    for (int a = 0; a < 3; a++) {
        int u = a == 0 ? 1 : 0, v = a == 2 ? 1 : 2;
        for (int s = 0; s < 2; s++) {
            /* face corners in cyclic order (u,v) = (0,0),(1,0),(1,1),(0,1) */
            static const int cu[4] = {0, 1, 1, 0}, cv[4] = {0, 0, 1, 1};
            int in[4], fe[4];
            for (int q = 0; q < 4; q++) {
                int p[3];
                p[a] = s; p[u] = cu[q]; p[v] = cv[q];
                in[q] = (c >> corner_of(p)) & 1;
            }
            /* face edge q joins corner q and corner q+1 */
            for (int q = 0; q < 4; q++) {
                int p[3], q1 = (q + 1) & 3, ax;
                p[a] = s;
                p[u] = cu[q] < cu[q1] ? cu[q] : cu[q1];
                p[v] = cv[q] < cv[q1] ? cv[q] : cv[q1];
                ax = cu[q] != cu[q1] ? u : v;
                fe[q] = edge_of(p, ax);
            }
            int segs[2][2], ns = 0;
            int crossed[4], nc = 0;
            for (int q = 0; q < 4; q++)
                if (in[q] != in[(q + 1) & 3]) crossed[nc++] = q;
            if (nc == 2) {
                segs[0][0] = fe[crossed[0]];
                segs[0][1] = fe[crossed[1]];
                ns = 1;
            } else if (nc == 4) {
                /* separate the in corners: corner q touches face edges q-1 and q */
                for (int q = 0; q < 4; q++)
                    if (in[q]) {
                        segs[ns][0] = fe[(q + 3) & 3];
                        segs[ns][1] = fe[q];
                        ns++;
                    }
            }
            for (int k = 0; k < ns; k++) {
                /* midpoints of the two edges in (u,v) face coordinates */
                double P[2][2];
                for (int w = 0; w < 2; w++) {
                    int off[3], ax;
                    edge_geom(segs[k][w], off, &ax);
                    P[w][0] = ax == u ? 0.5 : off[u];
                    P[w][1] = ax == v ? 0.5 : off[v];
                }
                double mu = 0.5 * (P[0][0] + P[1][0]), mv = 0.5 * (P[0][1] + P[1][1]);
                /* bilinear indicator f = sum in_q * w_q(u,v); its gradient */
                double gu = 0, gv = 0;
                for (int q = 0; q < 4; q++) {
                    double wu = cu[q] ? 1.0 : -1.0, wv = cv[q] ? 1.0 : -1.0;
                    double fu = cu[q] ? mu : 1 - mu, fv = cv[q] ? mv : 1 - mv;
                    gu += in[q] * wu * fv;
                    gv += in[q] * fu * wv;
                }
                /* 3D vectors: uvec = -grad (in->out), n = outward face normal */
                double U[3] = {0, 0, 0}, N[3] = {0, 0, 0}, T[3], D[3] = {0, 0, 0};
                U[u] = -gu; U[v] = -gv;
                N[a] = s ? 1.0 : -1.0;
                T[0] = U[1] * N[2] - U[2] * N[1];
                T[1] = U[2] * N[0] - U[0] * N[2];
                T[2] = U[0] * N[1] - U[1] * N[0];
                D[u] = P[1][0] - P[0][0];
                D[v] = P[1][1] - P[0][1];
                double dot = D[0] * T[0] + D[1] * T[1] + D[2] * T[2];
                int from = segs[k][0], to = segs[k][1];
                if (dot < 0) from = segs[k][1], to = segs[k][0];
                next[from] = to; /* each edge has one outgoing segment (checked below) */
                prev_count[to]++;
            }
        }
    }
    /* loops */
    bool used[12] = {false};
    int nt = 0;
    bool bad = false;
    for (int e0 = 0; e0 < 12; e0++) {
        if (next[e0] < 0 || used[e0]) continue;
        int L[12], k = 0, e = e0;
        while (!used[e] && k < 12) {
            used[e] = true;
            L[k++] = e;
            e = next[e];
            if (e < 0) break;
        }
        if (e != e0 || k < 3) { bad = true; continue; }
        int r = triangulate(L, k, &t->tri[c][3 * nt]);
        if (r < 0) bad = true, r = -r;
        nt += r;
    }
    for (int e = 0; e < 12; e++)
        if ((next[e] >= 0) != (prev_count[e] == 1) || prev_count[e] > 1) bad = true;
    t->ntri[c] = (uint8_t)nt;
    if (bad) t->bad_cases++;
}

static void build_all(void)
{
    memset(&g_table, 0, sizeof g_table);
    for (int c = 0; c < 256; c++) build_case(c, &g_table);
}

const gt_mc_table *gt_mc_table_get(void)
{
    pthread_once(&g_once, build_all);
    return &g_table;
}
