/* 3DGS: scene memory, cameras, per-Gaussian preprocess and the CPU
 * reference renderer (the reference rasterizer's forward pass), written with
 * the per-element math of gs_math.h that the CUDA rasterizer uses too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "gs/gs.h"
#include "gs/gs_math.h"
#include "gs/gs_tiles.h"

const float gt_gs_sh_c2[5] = {GS_SH_C2_0, GS_SH_C2_1, GS_SH_C2_2, GS_SH_C2_3, GS_SH_C2_4};
const float gt_gs_sh_c3[7] = {GS_SH_C3_0, GS_SH_C3_1, GS_SH_C3_2, GS_SH_C3_3,
                              GS_SH_C3_4, GS_SH_C3_5, GS_SH_C3_6};

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
    p->sh_half = true;
    p->ref_grad = false;
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

void gt_gs_image_to_rgba8(gt_gs_image *im)
{
    size_t np = (size_t)im->w * im->h;
    for (size_t i = 0; i < np; i++) {
        for (int c = 0; c < 3; c++) im->rgba8[4 * i + c] = gs_to8(im->rgb[3 * i + c]);
        im->rgba8[4 * i + 3] = gs_to8(im->alpha[i]);
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
    c->cx = 0.5f * (float)w;
    c->cy = 0.5f * (float)h;
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
    c->cx = 0.5f * (float)w;
    c->cy = 0.5f * (float)h;
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

/* Solve the symmetric 3x3 system A x = b (Cramer); false when A is nearly
 * singular relative to its size. */
static bool solve3(const double A[9], const double b[3], double x[3])
{
    double c0 = A[4] * A[8] - A[5] * A[7], c1 = A[5] * A[6] - A[3] * A[8], c2 = A[3] * A[7] - A[4] * A[6];
    double det = A[0] * c0 + A[1] * c1 + A[2] * c2, tr = A[0] + A[4] + A[8];
    if (!(tr > 0) || !(fabs(det) > 0.02 * (tr / 3) * (tr / 3) * (tr / 3))) return false;
    double inv[9] = {c0, A[2] * A[7] - A[1] * A[8], A[1] * A[5] - A[2] * A[4],
                     c1, A[0] * A[8] - A[2] * A[6], A[2] * A[3] - A[0] * A[5],
                     c2, A[1] * A[6] - A[0] * A[7], A[0] * A[4] - A[1] * A[3]};
    for (int i = 0; i < 3; i++) x[i] = (inv[3 * i] * b[0] + inv[3 * i + 1] * b[1] + inv[3 * i + 2] * b[2]) / det;
    return true;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bool gt_gs_cameras_orbit(const gt_gs_camera *c, int n, const double up[3], double centre[3], double *radius,
                         double *elev_deg, double *fovy_deg)
{
    if (n < 2) return false;
    /* sum_i (I - d_i d_i^T) (x - p_i) = 0, d_i the i-th optical axis (the
     * third row of R: camera z in world), p_i its centre */
    double A[9] = {0}, b[3] = {0}, x[3];
    for (int i = 0; i < n; i++) {
        const float *d = c[i].R + 6;
        for (int r = 0; r < 3; r++)
            for (int q = 0; q < 3; q++) {
                double m = (r == q) - (double)d[r] * d[q];
                A[3 * r + q] += m;
                b[r] += m * c[i].campos[q];
            }
    }
    if (!solve3(A, b, x)) return false;
    double *dist = malloc(sizeof *dist * (size_t)n), *el = malloc(sizeof *el * (size_t)n);
    if (!dist || !el) {
        free(dist), free(el);
        return false;
    }
    for (int i = 0; i < n; i++) {
        double v[3] = {c[i].campos[0] - x[0], c[i].campos[1] - x[1], c[i].campos[2] - x[2]};
        dist[i] = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        double h = v[0] * up[0] + v[1] * up[1] + v[2] * up[2];
        el[i] = dist[i] > 0 ? asin(fmax(-1.0, fmin(1.0, h / dist[i]))) * 180.0 / M_PI : 0.0;
    }
    qsort(dist, (size_t)n, sizeof *dist, cmp_double);
    qsort(el, (size_t)n, sizeof *el, cmp_double);
    memcpy(centre, x, sizeof x);
    *radius = dist[n / 2];
    *elev_deg = fmax(-89.9, fmin(89.9, el[n / 2]));
    *fovy_deg = 2.0 * atan(c[0].height / (2.0 * c[0].fy)) * 180.0 / M_PI;
    free(dist), free(el);
    return *radius > 0;
}

/* ------------------------------------------------------------ SH, preprocess */

void gt_gs_sh_eval(int deg, const float *sh, const float dir[3], float rgb[3])
{
    gs_sh_eval(deg, sh, dir[0], dir[1], dir[2], rgb);
}

/* The reference's preprocessCUDA for one Gaussian, step by step (the
 * kernel k_preprocess runs the same steps, with the 3-D covariance computed
 * once per scene). */
void gt_gs_preprocess_one(const gt_gs_scene *s, size_t i, const gt_gs_camera *c,
                          const gt_gs_params *p, int sh_deg, gt_gs_proj *o)
{
    memset(o, 0, sizeof *o);
    const float *m = s->pos + 3 * i;
    float v[3];
    gs_view(c->R, c->t, m[0], m[1], m[2], v);
    if (!(v[2] > GS_NEAR)) return;
    float S[6], cov[3], det0;
    gs_cov3(s->rot + 4 * i, s->scale + 3 * i, p->scale_modifier, S);
    float txtz = v[0] / v[2], tytz = v[1] / v[2], lim[4];
    gs_frustum_lims((float)c->width, (float)c->height, c->fx, c->fy, c->cx, c->cy, lim);
    gs_cov2(c->R, c->fx, c->fy, lim, txtz, tytz, v[2], S, cov);
    float det = gs_filter(cov, &det0);
    if (det == 0.0f) return;
    float opac = s->opacity[i];
    if (p->antialias) opac *= gs_aa_scale(det0, det);
    float radius = gs_radius(cov[0], cov[2], det);
    float px = gs_pixel(c->fx, txtz, c->cx - 0.5f);
    float py = gs_pixel(c->fy, tytz, c->cy - 0.5f);
    int gx = (c->width + GS_TILE - 1) / GS_TILE, gy = (c->height + GS_TILE - 1) / GS_TILE, rect[4];
    if (gs_tile_rect(px, py, radius, gx, gy, rect) == 0) return;
    float dir[3];
    gs_view_dir(m[0] - c->campos[0], m[1] - c->campos[1], m[2] - c->campos[2], dir);
    gs_sh_eval(sh_deg, s->sh + i * (size_t)s->sh_k * 3, dir[0], dir[1], dir[2], o->rgb);
    o->x = px;
    o->y = py;
    o->depth = v[2];
    gs_conic(cov[0], cov[1], cov[2], det, o->conic);
    o->opacity = opac;
    o->radius = (int)radius;
    memcpy(o->rect, rect, sizeof rect);
}

/* ------------------------------------------------------------ CPU renderer */

static int cmp_depth_idx(const void *a, const void *b)
{
    const gt_gs_tile_entry *x = a, *y = b;
    if (x->depth < y->depth) return -1;
    if (x->depth > y->depth) return 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

gt_status gt_gs_tiles_cpu(const gt_gs_proj *pr, size_t n, int gx, int gy, size_t **start_out,
                          gt_gs_tile_entry **list_out)
{
    size_t ntiles = (size_t)gx * gy;
    *start_out = NULL;
    *list_out = NULL;
    size_t *start = gt_calloc(ntiles + 1, sizeof(size_t), "tile lists");
    if (!start) return GT_ERR_RUNTIME;
    for (size_t i = 0; i < n; i++) {
        if (pr[i].radius == 0) continue;
        for (int ty = pr[i].rect[1]; ty < pr[i].rect[3]; ty++)
            for (int tx = pr[i].rect[0]; tx < pr[i].rect[2]; tx++) start[(size_t)ty * gx + tx + 1]++;
    }
    for (size_t t = 0; t < ntiles; t++) start[t + 1] += start[t];
    size_t total = start[ntiles];
    gt_gs_tile_entry *list = gt_malloc_array(total ? total : 1, sizeof *list, "tile lists");
    size_t *fill = gt_malloc_array(ntiles, sizeof(size_t), "tile lists");
    if (!list || !fill) {
        free(start);
        free(list);
        free(fill);
        return GT_ERR_RUNTIME;
    }
    memcpy(fill, start, ntiles * sizeof(size_t));
    for (size_t i = 0; i < n; i++) {
        if (pr[i].radius == 0) continue;
        for (int ty = pr[i].rect[1]; ty < pr[i].rect[3]; ty++)
            for (int tx = pr[i].rect[0]; tx < pr[i].rect[2]; tx++) {
                gt_gs_tile_entry *e = &list[fill[(size_t)ty * gx + tx]++];
                e->depth = pr[i].depth;
                e->idx = (uint32_t)i;
            }
    }
    free(fill);
#pragma omp parallel for schedule(dynamic, 1)
    for (long long t = 0; t < (long long)ntiles; t++)
        qsort(list + start[t], start[t + 1] - start[t], sizeof *list, cmp_depth_idx);
    *start_out = start;
    *list_out = list;
    return GT_OK;
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
    if (!pr) return GT_ERR_RUNTIME;
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < (long long)s->n; i++) gt_gs_preprocess_one(s, (size_t)i, c, p, deg, &pr[i]);
    size_t *start;
    gt_gs_tile_entry *list;
    gt_status st = gt_gs_tiles_cpu(pr, s->n, gx, gy, &start, &list);
    if (st != GT_OK) {
        free(pr);
        return st;
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (long long t = 0; t < (long long)ntiles; t++) {
        size_t b = start[t], e = start[t + 1];
        int tx = (int)(t % gx), ty = (int)(t / gx);
        for (int py = ty * GT_GS_TILE; py < ty * GT_GS_TILE + GT_GS_TILE && py < h; py++)
            for (int px = tx * GT_GS_TILE; px < tx * GT_GS_TILE + GT_GS_TILE && px < w; px++) {
                float T = 1.0f, C[3] = {0, 0, 0}, D = 0;
                for (size_t k = b; k < e; k++) {
                    const gt_gs_proj *g = &pr[list[k].idx];
                    float power = gs_power(g->conic[0], g->conic[1], g->conic[2], g->x - (float)px,
                                           g->y - (float)py);
                    if (power > 0.0f) continue;
                    float alpha = gs_alpha(g->opacity, power);
                    if (alpha < GS_ALPHA_MIN) continue;
                    float test_T = T * (1.0f - alpha);
                    if (test_T < GS_T_MIN) break;
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
    gt_gs_image_to_rgba8(out);
    return GT_OK;
}
