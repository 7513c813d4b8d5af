/* 3DGS: scene memory, cameras, SH evaluation, per-Gaussian preprocess and
 * the CPU reference renderer (the reference rasterizer's forward pass). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "gs/gs.h"

const float gt_gs_sh_c2[5] = {1.0925484305920792f, -1.0925484305920792f, 0.31539156525252005f,
                              -1.0925484305920792f, 0.5462742152960396f};
const float gt_gs_sh_c3[7] = {-0.5900435899266435f, 2.890611442640554f, -0.4570457994644658f,
                              0.3731763325901154f, -0.4570457994644658f, 1.445305721320277f,
                              -0.5900435899266435f};

gt_status gt_gs_scene_alloc(gt_gs_scene *s, size_t n, int sh_degree)
{
    memset(s, 0, sizeof *s);
    if (sh_degree < 0 || sh_degree > 3) return gt_fail(GT_ERR_DATA, "SH degree %d not in 0..3", sh_degree);
    s->n = n;
    s->sh_degree = sh_degree;
    s->sh_k = (sh_degree + 1) * (sh_degree + 1);
    size_t m = n ? n : 1;
    s->pos = gt_malloc_array(m, 3 * sizeof(float), "Gaussian positions");
    s->scale = gt_malloc_array(m, 3 * sizeof(float), "Gaussian scales");
    s->rot = gt_malloc_array(m, 4 * sizeof(float), "Gaussian rotations");
    s->opacity = gt_malloc_array(m, sizeof(float), "Gaussian opacities");
    s->sh = gt_malloc_array(m, (size_t)s->sh_k * 3 * sizeof(float), "Gaussian SH coefficients");
    if (!s->pos || !s->scale || !s->rot || !s->opacity || !s->sh) {
        gt_gs_scene_free(s);
        return GT_ERR_RUNTIME;
    }
    return GT_OK;
}

void gt_gs_scene_free(gt_gs_scene *s)
{
    free(s->pos);
    free(s->scale);
    free(s->rot);
    free(s->opacity);
    free(s->sh);
    memset(s, 0, sizeof *s);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Robust to the far floaters and background Gaussians of trained scenes:
 * the per-axis median of (a sample of) the positions, and the 75th
 * percentile of the distances to it. */
void gt_gs_scene_bounds(const gt_gs_scene *s, float centre[3], float *extent)
{
    centre[0] = centre[1] = centre[2] = 0.0f;
    *extent = 1.0f;
    if (s->n == 0) return;
    size_t step = s->n > 200000 ? s->n / 200000 : 1, m = (s->n + step - 1) / step;
    float *v = malloc(m * sizeof *v);
    if (!v) return;
    for (int k = 0; k < 3; k++) {
        for (size_t j = 0; j < m; j++) v[j] = s->pos[3 * (j * step) + k];
        qsort(v, m, sizeof *v, cmp_float);
        centre[k] = v[m / 2];
    }
    for (size_t j = 0; j < m; j++) {
        const float *p = s->pos + 3 * (j * step);
        float dx = p[0] - centre[0], dy = p[1] - centre[1], dz = p[2] - centre[2];
        v[j] = sqrtf(dx * dx + dy * dy + dz * dz);
    }
    qsort(v, m, sizeof *v, cmp_float);
    float e = v[(m * 3) / 4];
    *extent = e > 0.0f && isfinite(e) ? e : 1.0f;
    free(v);
}

void gt_gs_params_init(gt_gs_params *p)
{
    p->bg[0] = p->bg[1] = p->bg[2] = 0.0f;
    p->sh_degree = -1;
    p->scale_modifier = 1.0f;
    p->antialias = false;
    p->square_binning = false;
}

gt_status gt_gs_image_alloc(gt_gs_image *im, int w, int h)
{
    memset(im, 0, sizeof *im);
    if (w < 1 || h < 1 || w > GT_GS_MAX_SIZE || h > GT_GS_MAX_SIZE)
        return gt_fail(GT_ERR_USAGE, "image size %dx%d not in 1..%d", w, h, GT_GS_MAX_SIZE);
    im->w = w;
    im->h = h;
    size_t np = (size_t)w * (size_t)h;
    im->rgb = gt_malloc_array(np, 3 * sizeof(float), "image");
    im->alpha = gt_malloc_array(np, sizeof(float), "alpha image");
    im->depth = gt_malloc_array(np, sizeof(float), "depth image");
    im->rgba8 = gt_malloc_array(np, 4, "8-bit image");
    if (!im->rgb || !im->alpha || !im->depth || !im->rgba8) {
        gt_gs_image_free(im);
        return GT_ERR_RUNTIME;
    }
    return GT_OK;
}

void gt_gs_image_free(gt_gs_image *im)
{
    free(im->rgb);
    free(im->alpha);
    free(im->depth);
    free(im->rgba8);
    memset(im, 0, sizeof *im);
}

static uint8_t to8(float v)
{
    v = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
    return (uint8_t)(v * 255.0f + 0.5f);
}

void gt_gs_image_to_rgba8(gt_gs_image *im)
{
    size_t np = (size_t)im->w * im->h;
    for (size_t i = 0; i < np; i++) {
        for (int c = 0; c < 3; c++) im->rgba8[4 * i + c] = to8(im->rgb[3 * i + c]);
        im->rgba8[4 * i + 3] = to8(im->alpha[i]);
    }
}

/* ------------------------------------------------------------ cameras */

void gt_gs_camera_from_c2w(gt_gs_camera *c, int w, int h, float fx, float fy, const double pos[3],
                           const double rot[9])
{
    memset(c, 0, sizeof *c);
    c->width = w;
    c->height = h;
    c->fx = fx;
    c->fy = fy;
    /* world->camera rotation = (camera->world)^T; t = -R^T pos */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) c->R[3 * i + j] = (float)rot[3 * j + i];
    for (int i = 0; i < 3; i++) {
        double acc = 0;
        for (int j = 0; j < 3; j++) acc += rot[3 * j + i] * pos[j];
        c->t[i] = (float)-acc;
        c->campos[i] = (float)pos[i];
    }
}

static void cross3(const double a[3], const double b[3], double o[3])
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

static double norm3(const double a[3])
{
    return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

gt_status gt_gs_camera_lookat(gt_gs_camera *c, const double eye[3], const double target[3],
                              const double up[3], double fovy_deg, int w, int h)
{
    if (w < 1 || h < 1 || w > GT_GS_MAX_SIZE || h > GT_GS_MAX_SIZE)
        return gt_fail(GT_ERR_USAGE, "image size %dx%d not in 1..%d", w, h, GT_GS_MAX_SIZE);
    if (!(fovy_deg > 0 && fovy_deg < 180))
        return gt_fail(GT_ERR_USAGE, "--fovy %g not in (0, 180) degrees", fovy_deg);
    double f[3] = {target[0] - eye[0], target[1] - eye[1], target[2] - eye[2]};
    double fl = norm3(f);
    double scale = fmax(fmax(norm3(eye), norm3(target)), 1.0);
    if (!(fl > 1e-9 * scale)) return gt_fail(GT_ERR_USAGE, "camera eye and target are the same point");
    for (int k = 0; k < 3; k++) f[k] /= fl;
    double u[3] = {up[0], up[1], up[2]};
    double ul = norm3(u);
    if (!(ul > 0)) return gt_fail(GT_ERR_USAGE, "camera up vector is zero");
    double r[3];
    cross3(f, u, r);
    double rl = norm3(r);
    if (!(rl > 1e-6 * ul))
        return gt_fail(GT_ERR_USAGE, "camera up vector is parallel to the viewing direction");
    for (int k = 0; k < 3; k++) r[k] /= rl;
    double d[3];
    cross3(f, r, d); /* y points down in the image */
    memset(c, 0, sizeof *c);
    c->width = w;
    c->height = h;
    c->fy = (float)(h / (2.0 * tan(fovy_deg * M_PI / 360.0)));
    c->fx = c->fy;
    const double *rows[3] = {r, d, f};
    for (int i = 0; i < 3; i++) {
        double acc = 0;
        for (int j = 0; j < 3; j++) {
            c->R[3 * i + j] = (float)rows[i][j];
            acc += rows[i][j] * eye[j];
        }
        c->t[i] = (float)-acc;
        c->campos[i] = (float)eye[i];
    }
    return GT_OK;
}

gt_status gt_gs_camera_orbit(gt_gs_camera *c, const double centre[3], const double up[3],
                             double radius, double elev_deg, int i, int n, double fovy_deg, int w,
                             int h)
{
    double u[3] = {up[0], up[1], up[2]};
    double ul = norm3(u);
    if (!(ul > 0)) return gt_fail(GT_ERR_USAGE, "orbit up vector is zero");
    if (!(radius > 0)) return gt_fail(GT_ERR_USAGE, "orbit radius %g must be > 0", radius);
    if (!(elev_deg > -90 && elev_deg < 90))
        return gt_fail(GT_ERR_USAGE, "orbit elevation %g not in (-90, 90) degrees", elev_deg);
    for (int k = 0; k < 3; k++) u[k] /= ul;
    /* e1: the axis least aligned with up, made orthogonal to it */
    double a[3] = {0, 0, 0};
    int m = 0;
    for (int k = 1; k < 3; k++)
        if (fabs(u[k]) < fabs(u[m])) m = k;
    a[m] = 1;
    double e2[3], e1[3];
    cross3(u, a, e2);
    double l2 = norm3(e2);
    for (int k = 0; k < 3; k++) e2[k] /= l2;
    cross3(e2, u, e1);
    double th = 2.0 * M_PI * (double)i / (double)(n > 0 ? n : 1);
    double el = elev_deg * M_PI / 180.0;
    double eye[3];
    for (int k = 0; k < 3; k++)
        eye[k] = centre[k] + radius * (cos(el) * (cos(th) * e1[k] + sin(th) * e2[k]) + sin(el) * u[k]);
    return gt_gs_camera_lookat(c, eye, centre, u, fovy_deg, w, h);
}

/* ------------------------------------------------------------ SH, preprocess */

void gt_gs_sh_eval(int deg, const float *sh, const float dir[3], float rgb[3])
{
    for (int ch = 0; ch < 3; ch++) {
        const float *s = sh + ch;
        float r = GT_GS_SH_C0 * s[0];
        if (deg > 0) {
            float x = dir[0], y = dir[1], z = dir[2];
            r = r - GT_GS_SH_C1 * y * s[3] + GT_GS_SH_C1 * z * s[6] - GT_GS_SH_C1 * x * s[9];
            if (deg > 1) {
                float xx = x * x, yy = y * y, zz = z * z, xy = x * y, yz = y * z, xz = x * z;
                r = r + gt_gs_sh_c2[0] * xy * s[12] + gt_gs_sh_c2[1] * yz * s[15] +
                    gt_gs_sh_c2[2] * (2.0f * zz - xx - yy) * s[18] + gt_gs_sh_c2[3] * xz * s[21] +
                    gt_gs_sh_c2[4] * (xx - yy) * s[24];
                if (deg > 2) {
                    r = r + gt_gs_sh_c3[0] * y * (3.0f * xx - yy) * s[27] +
                        gt_gs_sh_c3[1] * xy * z * s[30] +
                        gt_gs_sh_c3[2] * y * (4.0f * zz - xx - yy) * s[33] +
                        gt_gs_sh_c3[3] * z * (2.0f * zz - 3.0f * xx - 3.0f * yy) * s[36] +
                        gt_gs_sh_c3[4] * x * (4.0f * zz - xx - yy) * s[39] +
                        gt_gs_sh_c3[5] * z * (xx - yy) * s[42] +
                        gt_gs_sh_c3[6] * x * (xx - 3.0f * yy) * s[45];
                }
            }
        }
        r += 0.5f;
        rgb[ch] = r > 0.0f ? r : 0.0f;
    }
}

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void gt_gs_preprocess_one(const gt_gs_scene *s, size_t i, const gt_gs_camera *c,
                          const gt_gs_params *p, int sh_deg, gt_gs_proj *o)
{
    memset(o, 0, sizeof *o);
    const float *m = s->pos + 3 * i;
    const float *R = c->R;
    float tx = R[0] * m[0] + R[1] * m[1] + R[2] * m[2] + c->t[0];
    float ty = R[3] * m[0] + R[4] * m[1] + R[5] * m[2] + c->t[1];
    float tz = R[6] * m[0] + R[7] * m[1] + R[8] * m[2] + c->t[2];
    if (!(tz > GT_GS_NEAR)) return;

    /* 3-D covariance: Sigma = Rq diag(s^2) Rq^T */
    const float *q = s->rot + 4 * i;
    float qr = q[0], qx = q[1], qy = q[2], qz = q[3];
    float Rq[9] = {1.f - 2.f * (qy * qy + qz * qz), 2.f * (qx * qy - qr * qz), 2.f * (qx * qz + qr * qy),
                   2.f * (qx * qy + qr * qz), 1.f - 2.f * (qx * qx + qz * qz), 2.f * (qy * qz - qr * qx),
                   2.f * (qx * qz - qr * qy), 2.f * (qy * qz + qr * qx), 1.f - 2.f * (qx * qx + qy * qy)};
    float sc[3];
    for (int k = 0; k < 3; k++) {
        float v = p->scale_modifier * s->scale[3 * i + k];
        sc[k] = v * v;
    }
    float S[6]; /* xx xy xz yy yz zz */
    {
        int idx = 0;
        for (int a = 0; a < 3; a++)
            for (int b = a; b < 3; b++) {
                S[idx++] = Rq[3 * a] * sc[0] * Rq[3 * b] + Rq[3 * a + 1] * sc[1] * Rq[3 * b + 1] +
                           Rq[3 * a + 2] * sc[2] * Rq[3 * b + 2];
            }
    }
    /* 2-D covariance with the clamped Jacobian */
    float W = (float)c->width, H = (float)c->height;
    float tanx = W / (2.0f * c->fx), tany = H / (2.0f * c->fy);
    float limx = 1.3f * tanx, limy = 1.3f * tany;
    float txtz = tx / tz, tytz = ty / tz;
    float cx = fminf(limx, fmaxf(-limx, txtz)) * tz;
    float cy = fminf(limy, fmaxf(-limy, tytz)) * tz;
    float j00 = c->fx / tz, j02 = -(c->fx * cx) / (tz * tz);
    float j11 = c->fy / tz, j12 = -(c->fy * cy) / (tz * tz);
    /* T = J W (2x3) */
    float T0[3], T1[3];
    for (int k = 0; k < 3; k++) {
        T0[k] = j00 * R[k] + j02 * R[6 + k];
        T1[k] = j11 * R[3 + k] + j12 * R[6 + k];
    }
    float Sm[9] = {S[0], S[1], S[2], S[1], S[3], S[4], S[2], S[4], S[5]};
    float u0[3], u1[3];
    for (int k = 0; k < 3; k++) {
        u0[k] = Sm[3 * k] * T0[0] + Sm[3 * k + 1] * T0[1] + Sm[3 * k + 2] * T0[2];
        u1[k] = Sm[3 * k] * T1[0] + Sm[3 * k + 1] * T1[1] + Sm[3 * k + 2] * T1[2];
    }
    float ca = T0[0] * u0[0] + T0[1] * u0[1] + T0[2] * u0[2];
    float cb = T0[0] * u1[0] + T0[1] * u1[1] + T0[2] * u1[2];
    float cc = T1[0] * u1[0] + T1[1] * u1[1] + T1[2] * u1[2];
    float det0 = ca * cc - cb * cb;
    ca += 0.3f;
    cc += 0.3f;
    float det = ca * cc - cb * cb;
    if (det == 0.0f) return;
    float opac = s->opacity[i];
    if (p->antialias) opac *= sqrtf(fmaxf(0.0f, det0 / det));
    float dinv = 1.0f / det;
    float mid = 0.5f * (ca + cc);
    float disc = sqrtf(fmaxf(0.1f, mid * mid - det));
    float l1 = mid + disc, l2 = mid - disc;
    float radius = ceilf(3.0f * sqrtf(fmaxf(l1, l2)));
    float px = c->fx * txtz + 0.5f * (W - 1.0f);
    float py = c->fy * tytz + 0.5f * (H - 1.0f);
    int gx = (c->width + GT_GS_TILE - 1) / GT_GS_TILE, gy = (c->height + GT_GS_TILE - 1) / GT_GS_TILE;
    int x0 = clampi((int)((px - radius) / GT_GS_TILE), 0, gx);
    int y0 = clampi((int)((py - radius) / GT_GS_TILE), 0, gy);
    int x1 = clampi((int)((px + radius + GT_GS_TILE - 1) / GT_GS_TILE), 0, gx);
    int y1 = clampi((int)((py + radius + GT_GS_TILE - 1) / GT_GS_TILE), 0, gy);
    if ((x1 - x0) * (y1 - y0) == 0) return;

    float dir[3] = {m[0] - c->campos[0], m[1] - c->campos[1], m[2] - c->campos[2]};
    float dl = sqrtf(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
    for (int k = 0; k < 3; k++) dir[k] /= dl;
    gt_gs_sh_eval(sh_deg, s->sh + i * (size_t)s->sh_k * 3, dir, o->rgb);
    o->x = px;
    o->y = py;
    o->depth = tz;
    o->conic[0] = cc * dinv;
    o->conic[1] = -cb * dinv;
    o->conic[2] = ca * dinv;
    o->opacity = opac;
    o->radius = (int)radius;
    o->rect[0] = x0;
    o->rect[1] = y0;
    o->rect[2] = x1;
    o->rect[3] = y1;
}

/* ------------------------------------------------------------ CPU renderer */

typedef struct {
    float depth;
    uint32_t idx;
} depth_idx;

static int cmp_depth_idx(const void *a, const void *b)
{
    const depth_idx *x = a, *y = b;
    if (x->depth < y->depth) return -1;
    if (x->depth > y->depth) return 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

int gt_gs_effective_degree(const gt_gs_scene *s, const gt_gs_params *p)
{
    int d = s->sh_degree;
    if (p->sh_degree >= 0 && p->sh_degree < d) d = p->sh_degree;
    return d;
}

gt_status gt_gs_render_cpu(const gt_gs_scene *s, const gt_gs_camera *c, const gt_gs_params *p,
                           gt_gs_image *out)
{
    int w = c->width, h = c->height;
    if (out->w != w || out->h != h)
        return gt_fail(GT_ERR_RUNTIME, "render target %dx%d does not match the camera's %dx%d", out->w,
                       out->h, w, h);
    if (s->n > UINT32_MAX) return gt_fail(GT_ERR_DATA, "too many Gaussians (%zu)", s->n);
    int deg = gt_gs_effective_degree(s, p);
    int gx = (w + GT_GS_TILE - 1) / GT_GS_TILE, gy = (h + GT_GS_TILE - 1) / GT_GS_TILE;
    size_t ntiles = (size_t)gx * gy;
    gt_gs_proj *pr = gt_malloc_array(s->n ? s->n : 1, sizeof *pr, "projected Gaussians");
    size_t *start = gt_calloc(ntiles + 1, sizeof(size_t), "tile lists");
    if (!pr || !start) {
        free(pr);
        free(start);
        return GT_ERR_RUNTIME;
    }
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)s->n; i++) gt_gs_preprocess_one(s, (size_t)i, c, p, deg, &pr[i]);
    for (size_t i = 0; i < s->n; i++) {
        if (pr[i].radius == 0) continue;
        for (int ty = pr[i].rect[1]; ty < pr[i].rect[3]; ty++)
            for (int tx = pr[i].rect[0]; tx < pr[i].rect[2]; tx++) start[(size_t)ty * gx + tx + 1]++;
    }
    for (size_t t = 0; t < ntiles; t++) start[t + 1] += start[t];
    size_t total = start[ntiles];
    depth_idx *list = gt_malloc_array(total ? total : 1, sizeof *list, "tile lists");
    size_t *fill = gt_malloc_array(ntiles, sizeof(size_t), "tile lists");
    if (!list || !fill) {
        free(pr);
        free(start);
        free(list);
        free(fill);
        return GT_ERR_RUNTIME;
    }
    memcpy(fill, start, ntiles * sizeof(size_t));
    for (size_t i = 0; i < s->n; i++) {
        if (pr[i].radius == 0) continue;
        for (int ty = pr[i].rect[1]; ty < pr[i].rect[3]; ty++)
            for (int tx = pr[i].rect[0]; tx < pr[i].rect[2]; tx++) {
                depth_idx *e = &list[fill[(size_t)ty * gx + tx]++];
                e->depth = pr[i].depth;
                e->idx = (uint32_t)i;
            }
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (long long t = 0; t < (long long)ntiles; t++) {
        size_t b = start[t], e = start[t + 1];
        qsort(list + b, e - b, sizeof *list, cmp_depth_idx);
        int tx = (int)(t % gx), ty = (int)(t / gx);
        for (int py = ty * GT_GS_TILE; py < ty * GT_GS_TILE + GT_GS_TILE && py < h; py++)
            for (int px = tx * GT_GS_TILE; px < tx * GT_GS_TILE + GT_GS_TILE && px < w; px++) {
                float T = 1.0f, C[3] = {0, 0, 0}, D = 0;
                for (size_t k = b; k < e; k++) {
                    const gt_gs_proj *g = &pr[list[k].idx];
                    float dx = g->x - (float)px, dy = g->y - (float)py;
                    float power = -0.5f * (g->conic[0] * dx * dx + g->conic[2] * dy * dy) -
                                  g->conic[1] * dx * dy;
                    if (power > 0.0f) continue;
                    float alpha = fminf(0.99f, g->opacity * expf(power));
                    if (alpha < 1.0f / 255.0f) continue;
                    float test_T = T * (1.0f - alpha);
                    if (test_T < 0.0001f) break;
                    float wgt = alpha * T;
                    for (int ch = 0; ch < 3; ch++) C[ch] += g->rgb[ch] * wgt;
                    D += g->depth * wgt;
                    T = test_T;
                }
                size_t pix = (size_t)py * w + px;
                for (int ch = 0; ch < 3; ch++) out->rgb[3 * pix + ch] = C[ch] + T * p->bg[ch];
                out->alpha[pix] = 1.0f - T;
                out->depth[pix] = D;
            }
    }
    free(pr);
    free(start);
    free(list);
    free(fill);
    gt_gs_image_to_rgba8(out);
    return GT_OK;
}
