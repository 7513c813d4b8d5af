/* The rotation model's calibration around the bundle adjustment
 * (calib_ba.c): focal lengths from the pairs' homographies, rotations
 * chained along the spanning tree, the reprojection error of the inliers,
 * horizon straightening, and the panorama (projection, extent, size). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stitch/calib.h"
#include "stitch/proj.h"

#define DEG (3.14159265358979323846 / 180.0)

void gt_calib_rot_opts_init(gt_calib_rot_opts *o)
{
    memset(o, 0, sizeof *o);
    o->projection = -1;
    o->ba_iters = 100;
}

/* ------------------------------------------------------------ focal lengths */

/* the better conditioned of two estimates num1/den1, num2/den2 of f^2 */
static int pick(double num1, double den1, double num2, double den2, double *f)
{
    double v1 = den1 != 0 ? num1 / den1 : -1, v2 = den2 != 0 ? num2 / den2 : -1;
    bool ok1 = v1 > 0 && isfinite(v1), ok2 = v2 > 0 && isfinite(v2);
    if (ok1 && ok2) *f = sqrt(fabs(den1) > fabs(den2) ? v1 : v2);
    else if (ok1) *f = sqrt(v1);
    else if (ok2) *f = sqrt(v2);
    else return 0;
    return 1;
}

int gt_calib_focal_from_h(const double H[9], double *fi, double *fj)
{
    const double *h = H;
    int m = 0;
    /* rows of K_j^-1 H K_i orthogonal and of equal length: the first view's f */
    if (pick(-h[2] * h[5], h[0] * h[3] + h[1] * h[4], h[5] * h[5] - h[2] * h[2],
             h[0] * h[0] + h[1] * h[1] - h[3] * h[3] - h[4] * h[4], fi))
        m |= 1;
    /* its columns: the second view's */
    if (pick(-(h[0] * h[1] + h[3] * h[4]), h[6] * h[7], h[0] * h[0] + h[3] * h[3] - h[1] * h[1] - h[4] * h[4],
             h[7] * h[7] - h[6] * h[6], fj))
        m |= 2;
    return m;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* H (pixels) with both views' coordinates centred on (cx, cy) */
static void centred(const double H[9], double cx, double cy, double Hc[9])
{
    double Ti[9] = {1, 0, cx, 0, 1, cy, 0, 0, 1}, Tj[9] = {1, 0, -cx, 0, 1, -cy, 0, 0, 1}, T[9];
    gt_stitch_h_mul(H, Ti, T);
    gt_stitch_h_mul(Tj, T, Hc);
}

gt_status gt_calib_rot_init(gt_calib_pair *pairs, int npairs, int ncam, int w, int h, const gt_calib_chain_opts *co,
                            const gt_calib_rot_opts *o, int ref, gt_calib_cam *cams)
{
    int order[GT_STITCH_MAX_CAMS], via[GT_STITCH_MAX_CAMS];
    GT_TRY(gt_calib_tree(pairs, npairs, ncam, co, ref, order, via));
    double cx = (w - 1) / 2.0, cy = (h - 1) / 2.0, f = o->focal;
    if (!(f > 0)) {
        double est[2 * GT_STITCH_MAX_CAMS * GT_STITCH_MAX_CAMS];
        int n = 0;
        for (int p = 0; p < npairs; p++) {
            if (!pairs[p].used) continue;
            double Hc[9], fi, fj;
            centred(pairs[p].H, cx, cy, Hc);
            int m = gt_calib_focal_from_h(Hc, &fi, &fj);
            if ((m & 1) && fi > 0.1 * w && fi < 50.0 * w) est[n++] = fi;
            if ((m & 2) && fj > 0.1 * w && fj < 50.0 * w) est[n++] = fj;
        }
        qsort(est, (size_t)n, sizeof *est, cmp_double);
        f = n ? (n % 2 ? est[n / 2] : 0.5 * (est[n / 2 - 1] + est[n / 2])) : (double)w;
    }
    for (int i = 0; i < ncam; i++) {
        cams[i].f = f;
        cams[i].k1 = o->k1, cams[i].k2 = o->k2;
        cams[i].dcx = cams[i].dcy = 0;
    }
    const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(cams[ref].R, I, sizeof I);
    double K[9] = {f, 0, 0, 0, f, 0, 0, 0, 1}, Ki[9] = {1 / f, 0, 0, 0, 1 / f, 0, 0, 0, 1};
    for (int k = 1; k < ncam; k++) {
        int to = order[k];
        const gt_calib_pair *q = &pairs[via[to]];
        double Hc[9], T[9], M[9], Rr[9];
        centred(q->H, cx, cy, Hc);
        gt_stitch_h_mul(Hc, K, T);
        gt_stitch_h_mul(Ki, T, M); /* ~ R_j R_i^T */
        double det = M[0] * (M[4] * M[8] - M[5] * M[7]) - M[1] * (M[3] * M[8] - M[5] * M[6]) +
                     M[2] * (M[3] * M[7] - M[4] * M[6]);
        if (det < 0)
            for (int e = 0; e < 9; e++) M[e] = -M[e];
        if (gt_rot_nearest(M, Rr))
            return gt_fail(GT_ERR_DATA, "pair %d-%d: its homography is not a rotation of the camera", q->i + 1, q->j + 1);
        if (to == q->j) {
            gt_stitch_h_mul(Rr, cams[q->i].R, cams[to].R);
        } else {
            double Rt[9];
            gt_mat3_transpose(Rr, Rt);
            gt_stitch_h_mul(Rt, cams[q->j].R, cams[to].R);
        }
    }
    return GT_OK;
}

/* ------------------------------------------------------------ reprojection */

void gt_calib_cam_model(const gt_calib_cam *c, int w, int h, gt_stitch_cam *s)
{
    memset(s, 0, sizeof *s);
    memcpy(s->R, c->R, sizeof s->R);
    s->rot = true;
    s->f = c->f, s->k1 = c->k1, s->k2 = c->k2;
    s->w = w, s->h = h;
    s->cx = (w - 1) / 2.0 + c->dcx, s->cy = (h - 1) / 2.0 + c->dcy;
}

/* pixel distance of b from a's ray seen by camera cb (1e3 when it cannot see it) */
static double reproj_one(const gt_stitch_cam *ca, const gt_stitch_cam *cb, const double *a, const double *b)
{
    double d[3], u, v;
    gt_cam_ray(ca, a[0], a[1], d);
    if (!gt_cam_pixel(cb, d, &u, &v)) return 1e3;
    return hypot(u - b[0], v - b[1]);
}

void gt_calib_reproj(gt_calib_pair *pairs, int npairs, int w, int h, const gt_calib_cam *cams, bool set_pairs,
                     double *rms, double *max, long *n)
{
    double se = 0, mx = 0;
    long cnt = 0;
    for (int p = 0; p < npairs; p++) {
        gt_calib_pair *q = &pairs[p];
        if (!q->used) continue;
        gt_stitch_cam ci, cj;
        gt_calib_cam_model(&cams[q->i], w, h, &ci);
        gt_calib_cam_model(&cams[q->j], w, h, &cj);
        double pse = 0, pmx = 0;
        for (int t = 0; t < q->n; t++) {
            const double *a = q->pa + 2 * t, *b = q->pb + 2 * t;
            double e1 = reproj_one(&ci, &cj, a, b), e2 = reproj_one(&cj, &ci, b, a);
            pse += e1 * e1 + e2 * e2;
            pmx = fmax(pmx, fmax(e1, e2));
        }
        if (set_pairs && q->n) q->rms = sqrt(pse / (2.0 * q->n)), q->max = pmx;
        se += pse, cnt += q->n;
        mx = fmax(mx, pmx);
    }
    if (rms) *rms = cnt ? sqrt(se / (2.0 * cnt)) : 0;
    if (max) *max = mx;
    if (n) *n = cnt;
}

int gt_calib_drop_outliers(gt_calib_pair *pairs, int npairs, int w, int h, const gt_calib_cam *cams, double thresh)
{
    int dropped = 0;
    for (int p = 0; p < npairs; p++) {
        gt_calib_pair *q = &pairs[p];
        if (!q->used) continue;
        gt_stitch_cam ci, cj;
        gt_calib_cam_model(&cams[q->i], w, h, &ci);
        gt_calib_cam_model(&cams[q->j], w, h, &cj);
        int m = 0;
        for (int t = 0; t < q->n; t++) {
            const double *a = q->pa + 2 * t, *b = q->pb + 2 * t;
            if (fmax(reproj_one(&ci, &cj, a, b), reproj_one(&cj, &ci, b, a)) > thresh) continue;
            memmove(q->pa + 2 * m, a, 2 * sizeof(double));
            memmove(q->pb + 2 * m, b, 2 * sizeof(double));
            m++;
        }
        dropped += q->n - m;
        q->n = m;
    }
    return dropped;
}

/* ------------------------------------------------------------ wave correction */

/* eigenvectors of the symmetric 3x3 S (Jacobi), by increasing eigenvalue:
 * columns of V, values in e */
static void eig3(const double S[9], double e[3], double V[9])
{
    double A[9];
    memcpy(A, S, sizeof A);
    for (int k = 0; k < 9; k++) V[k] = k % 4 == 0;
    for (int sweep = 0; sweep < 50; sweep++) {
        double off = fabs(A[1]) + fabs(A[2]) + fabs(A[5]);
        if (off < 1e-300) break;
        for (int p = 0; p < 2; p++)
            for (int q = p + 1; q < 3; q++) {
                double apq = A[3 * p + q];
                if (fabs(apq) < 1e-300) continue;
                double th = (A[3 * q + q] - A[3 * p + p]) / (2 * apq);
                double t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1)), c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < 3; k++) { /* A <- J^T A J */
                    double akp = A[3 * k + p], akq = A[3 * k + q];
                    A[3 * k + p] = c * akp - s * akq;
                    A[3 * k + q] = s * akp + c * akq;
                }
                for (int k = 0; k < 3; k++) {
                    double apk = A[3 * p + k], aqk = A[3 * q + k];
                    A[3 * p + k] = c * apk - s * aqk;
                    A[3 * q + k] = s * apk + c * aqk;
                }
                for (int k = 0; k < 3; k++) {
                    double vkp = V[3 * k + p], vkq = V[3 * k + q];
                    V[3 * k + p] = c * vkp - s * vkq;
                    V[3 * k + q] = s * vkp + c * vkq;
                }
            }
    }
    for (int k = 0; k < 3; k++) e[k] = A[4 * k];
    for (int a = 0; a < 2; a++) /* sort */
        for (int b = a + 1; b < 3; b++)
            if (e[b] < e[a]) {
                double t = e[a];
                e[a] = e[b], e[b] = t;
                for (int k = 0; k < 3; k++) t = V[3 * k + a], V[3 * k + a] = V[3 * k + b], V[3 * k + b] = t;
            }
}

static void normalize3(double v[3])
{
    double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (n > 0)
        for (int k = 0; k < 3; k++) v[k] /= n;
}

void gt_calib_wave(gt_calib_cam *cams, int ncam, int ref)
{
    double S[9] = {0}, up[3] = {0};
    for (int i = 0; i < ncam; i++) {
        const double *x = cams[i].R; /* the camera's x axis in the panorama frame: R's first row */
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) S[3 * r + c] += x[r] * x[c];
        for (int k = 0; k < 3; k++) up[k] -= cams[i].R[3 + k]; /* -y: the camera's up */
    }
    double e[3], V[9], u[3];
    eig3(S, e, V);
    if (e[1] > 0.05 * e[2]) { /* the x axes span a plane: its normal */
        for (int k = 0; k < 3; k++) u[k] = V[3 * k];
    } else { /* nearly one x axis (a column of cameras): the cameras' up, kept perpendicular to it */
        double a = 0;
        for (int k = 0; k < 3; k++) a += up[k] * V[3 * k + 2];
        for (int k = 0; k < 3; k++) u[k] = up[k] - a * V[3 * k + 2];
    }
    normalize3(u);
    if (u[0] * up[0] + u[1] * up[1] + u[2] * up[2] < 0)
        for (int k = 0; k < 3; k++) u[k] = -u[k];
    /* the reference's optical axis (R's third row), made level */
    double z[3];
    memcpy(z, cams[ref].R + 6, sizeof z);
    double a = z[0] * u[0] + z[1] * u[1] + z[2] * u[2];
    for (int k = 0; k < 3; k++) z[k] -= a * u[k];
    if (sqrt(z[0] * z[0] + z[1] * z[1] + z[2] * z[2]) < 1e-6) { /* it looks straight up or down: its up instead */
        memcpy(z, cams[ref].R + 3, sizeof z);
        a = z[0] * u[0] + z[1] * u[1] + z[2] * u[2];
        for (int k = 0; k < 3; k++) z[k] -= a * u[k];
    }
    normalize3(z);
    double y[3] = {-u[0], -u[1], -u[2]}, x[3] = {y[1] * z[2] - y[2] * z[1], y[2] * z[0] - y[0] * z[2], y[0] * z[1] - y[1] * z[0]};
    double W[9] = {x[0], x[1], x[2], y[0], y[1], y[2], z[0], z[1], z[2]}, Wt[9];
    gt_mat3_transpose(W, Wt);
    for (int i = 0; i < ncam; i++) {
        double R[9];
        gt_stitch_h_mul(cams[i].R, Wt, R);
        memcpy(cams[i].R, R, sizeof R);
    }
}
