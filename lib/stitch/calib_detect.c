/* Feature detection and description for the calibration (CPU reference):
 * a pyramid of 2x reductions (5x5 binomial, rounded), FAST-9 corners ranked
 * by their Harris response with 3x3 non-maximum suppression and a parabola
 * for the sub-pixel position, a selection spread over levels and an 8x8 grid,
 * the intensity-centroid orientation and steered BRIEF descriptors (256
 * comparisons on the binomially smoothed level). The per-pixel math is
 * calib_math.h, shared with kernels/stitch/calib_detect.cu, so that the GPU
 * finds the same keypoints and descriptors. Rows and keypoints are spread
 * over threads with OpenMP. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/rng.h"
#include "gt_config.h"
#include "stitch/calib.h"

void gt_calib_detect_opts_init(gt_calib_detect_opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_features = 2000;
}

void gt_calib_feat_free(gt_calib_feat *f)
{
    if (!f) return;
    free(f->kp);
    free(f->desc);
    memset(f, 0, sizeof *f);
}

/* ------------------------------------------------------------ tables */

static gt_calib_tables tables;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

uint64_t gt_calib_rng_next(gt_calib_rng *r)
{
    return gt_splitmix64(&r->s);
}

/* a point of the BRIEF sampling (isotropic Gaussian, sigma = 31/5 as in
 * BRIEF's G II), redrawn until it lies in the disk of radius 15 */
static void pattern_point(uint64_t *s, double *x, double *y)
{
    const double PI = 3.14159265358979323846, sigma = 31.0 / 5.0, R = GT_CM_RADIUS;
    for (;;) {
        double u1 = gt_rng_open01(s), u2 = gt_rng_unit(s);
        double r = sigma * sqrt(-2.0 * log(u1));
        *x = r * cos(2 * PI * u2);
        *y = r * sin(2 * PI * u2);
        if ((*x) * (*x) + (*y) * (*y) <= (R - 0.5) * (R - 0.5)) return;
    }
}

static void tables_init(void)
{
    const double PI = 3.14159265358979323846;
    for (int k = 0; k <= GT_CM_ANGLES; k++) {
        double a = 2 * PI * k / GT_CM_ANGLES;
        tables.bx[k] = (int32_t)lround(16384.0 * cos(a));
        tables.by[k] = (int32_t)lround(16384.0 * sin(a));
    }
    uint64_t s = 0x6770757475696c73ull; /* fixed: the pattern is part of the format of a descriptor */
    double px[GT_CM_PAIRS][4];
    for (int i = 0; i < GT_CM_PAIRS; i++) {
        pattern_point(&s, &px[i][0], &px[i][1]);
        pattern_point(&s, &px[i][2], &px[i][3]);
    }
    for (int k = 0; k < GT_CM_ANGLES; k++) {
        double a = 2 * PI * (k + 0.5) / GT_CM_ANGLES, c = cos(a), sn = sin(a);
        for (int i = 0; i < GT_CM_PAIRS; i++)
            for (int q = 0; q < 2; q++) {
                double x = px[i][2 * q], y = px[i][2 * q + 1];
                tables.pat[k][i][2 * q] = (int8_t)lround(c * x - sn * y);
                tables.pat[k][i][2 * q + 1] = (int8_t)lround(sn * x + c * y);
            }
    }
}

const gt_calib_tables *gt_calib_tables_get(void)
{
    pthread_once(&tables_once, tables_init);
    return &tables;
}

/* ------------------------------------------------------------ sizes, threshold */

int gt_calib_levels(int w, int h, int want)
{
    int lim = want > 0 && want < GT_CALIB_MAX_LEVELS ? want : GT_CALIB_MAX_LEVELS;
    int L = 0;
    while (L < lim && (w < h ? w : h) >= 2 * GT_CM_BORDER + 16) {
        L++;
        w = (w + 1) / 2;
        h = (h + 1) / 2;
    }
    return L;
}

int gt_calib_fast_threshold(const uint8_t *y, int w, int h, int pitch)
{
    long hist[256] = {0};
    int sy = h > 512 ? h / 512 : 1, sx = w > 512 ? w / 512 : 1; /* a subsample is plenty */
    long n = 0;
    for (int r = 0; r < h; r += sy)
        for (int c = 0; c < w; c += sx) {
            hist[y[(size_t)r * pitch + c]]++;
            n++;
        }
    long acc = 0;
    int p5 = -1, p95 = 255;
    for (int v = 0; v < 256; v++) {
        acc += hist[v];
        if (p5 < 0 && acc * 20 >= n) p5 = v;
        if (acc * 20 >= 19 * n) {
            p95 = v;
            break;
        }
    }
    int t = (int)((p95 - p5) * 4 / 100);
    return t < 3 ? 3 : t > 20 ? 20 : t;
}

/* ------------------------------------------------------------ selection */

static int cand_cmp(const void *pa, const void *pb)
{
    const gt_calib_cand *a = pa, *b = pb;
    if (a->level != b->level) return a->level < b->level ? -1 : 1;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    if (a->y != b->y) return a->y < b->y ? -1 : 1;
    return (a->x > b->x) - (a->x < b->x);
}

int gt_calib_select(gt_calib_cand *c, int n, int levels, const int *lw, const int *lh, int max_features,
                    gt_calib_kp *kp)
{
    enum { G = 8 };
    qsort(c, (size_t)n, sizeof *c, cand_cmp);
    double fsum = 0;
    for (int l = 0; l < levels; l++) fsum += ldexp(1.0, -l);
    int remaining = max_features, out = 0, start = 0;
    unsigned char *taken = calloc((size_t)n + 1, 1);
    if (!taken) return -1;
    for (int l = 0; l < levels && remaining > 0; l++) {
        int end = start;
        while (end < n && c[end].level == l) end++;
        int share = l == levels - 1 ? remaining : (int)(remaining * ldexp(1.0, -l) / fsum);
        fsum -= ldexp(1.0, -l);
        int cap = (2 * share + G * G - 1) / (G * G), cell[G * G] = {0}, got = 0;
        if (cap < 1) cap = 1;
        for (int pass = 0; pass < 2 && got < share; pass++)
            for (int k = start; k < end && got < share; k++) {
                if (taken[k]) continue;
                int ci = (int)((long)c[k].y * G / lh[l]) * G + (int)((long)c[k].x * G / lw[l]);
                if (pass == 0 && cell[ci] >= cap) continue;
                cell[ci]++;
                taken[k] = 1;
                gt_calib_kp *p = &kp[out++];
                memset(p, 0, sizeof *p);
                p->x = c[k].fx;
                p->y = c[k].fy;
                p->lx = c[k].x;
                p->ly = c[k].y;
                p->score = c[k].score;
                p->level = l;
                got++;
            }
        remaining -= got;
        start = end;
    }
    free(taken);
    return out;
}

/* ------------------------------------------------------------ CPU path */

typedef struct {
    int L;
    int w[GT_CALIB_MAX_LEVELS], h[GT_CALIB_MAX_LEVELS];
    uint8_t *img[GT_CALIB_MAX_LEVELS], *sm[GT_CALIB_MAX_LEVELS];
} pyr_t;

static void pyr_free(pyr_t *p)
{
    for (int l = 0; l < GT_CALIB_MAX_LEVELS; l++) {
        free(p->img[l]);
        free(p->sm[l]);
    }
}

static gt_status pyr_build(const uint8_t *y, int w, int h, int pitch, int L, pyr_t *p)
{
    memset(p, 0, sizeof *p);
    p->L = L;
    for (int l = 0; l < L; l++) {
        p->w[l] = l ? (p->w[l - 1] + 1) / 2 : w;
        p->h[l] = l ? (p->h[l - 1] + 1) / 2 : h;
        size_t n = (size_t)p->w[l] * p->h[l];
        p->img[l] = gt_malloc(n, "feature pyramid");
        p->sm[l] = gt_malloc(n, "feature pyramid");
        if (!p->img[l] || !p->sm[l]) {
            pyr_free(p);
            return GT_ERR_RUNTIME;
        }
        int lw = p->w[l], lh = p->h[l];
        uint8_t *d = p->img[l];
        if (l == 0) {
            for (int r = 0; r < h; r++) memcpy(d + (size_t)r * w, y + (size_t)r * pitch, (size_t)w);
        } else {
            const uint8_t *s = p->img[l - 1];
            int sw = p->w[l - 1], sh = p->h[l - 1];
#pragma omp parallel for schedule(static)
            for (int r = 0; r < lh; r++)
                for (int c = 0; c < lw; c++) d[(size_t)r * lw + c] = gt_cm_binomial5(s, sw, sw, sh, 2 * c, 2 * r);
        }
        /* the descriptors' image: two binomial passes (sigma ~1.4), the
         * second through the pyramid buffer of the next level, not yet built */
        uint8_t *sm = p->sm[l], *tmp = gt_malloc(n, "feature pyramid");
        if (!tmp) {
            pyr_free(p);
            return GT_ERR_RUNTIME;
        }
#pragma omp parallel for schedule(static)
        for (int r = 0; r < lh; r++)
            for (int c = 0; c < lw; c++) tmp[(size_t)r * lw + c] = gt_cm_binomial5(d, lw, lw, lh, c, r);
#pragma omp parallel for schedule(static)
        for (int r = 0; r < lh; r++)
            for (int c = 0; c < lw; c++) sm[(size_t)r * lw + c] = gt_cm_binomial5(tmp, lw, lw, lh, c, r);
        free(tmp);
    }
    return GT_OK;
}

/* candidates of level l: FAST-9 corners with a positive Harris response
 * that are 3x3 maxima (ties to the first in raster order) */
static gt_status level_candidates(const pyr_t *p, int l, int t, gt_calib_cand **out, int *nout)
{
    int w = p->w[l], h = p->h[l], B = GT_CM_BORDER;
    const uint8_t *img = p->img[l];
    *out = NULL;
    *nout = 0;
    if (w <= 2 * B || h <= 2 * B) return GT_OK;
    int64_t *S = gt_calloc((size_t)w * h, sizeof(int64_t), "corner responses");
    if (!S) return GT_ERR_RUNTIME;
#pragma omp parallel for schedule(dynamic, 8)
    for (int y = B; y < h - B; y++)
        for (int x = B; x < w - B; x++)
            if (gt_cm_fast9(img, w, x, y, t)) {
                int64_t r = gt_cm_harris(img, w, x, y);
                S[(size_t)y * w + x] = r > 0 ? r : 0;
            }
    /* rows in parallel into per-row counts, then a second pass that writes */
    int *cnt = gt_calloc((size_t)h + 1, sizeof(int), "corner counts");
    if (!cnt) {
        free(S);
        return GT_ERR_RUNTIME;
    }
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            int tot = 0;
            for (int y = 0; y < h; y++) {
                int c = cnt[y];
                cnt[y] = tot;
                tot += c;
            }
            cnt[h] = tot;
            *out = gt_malloc_array((size_t)tot + 1, sizeof(gt_calib_cand), "corner candidates");
            if (!*out) {
                free(S), free(cnt);
                return GT_ERR_RUNTIME;
            }
            *nout = tot;
        }
#pragma omp parallel for schedule(dynamic, 8)
        for (int y = B; y < h - B; y++) {
            int k = pass ? cnt[y] : 0;
            for (int x = B; x < w - B; x++) {
                int64_t s = S[(size_t)y * w + x];
                if (s <= 0) continue;
                int keep = 1;
                for (int dy = -1; dy <= 1 && keep; dy++)
                    for (int dx = -1; dx <= 1; dx++) {
                        if (!dx && !dy) continue;
                        int64_t q = S[(size_t)(y + dy) * w + x + dx];
                        int after = dy > 0 || (dy == 0 && dx > 0);
                        if (q > s || (q == s && !after)) {
                            keep = 0;
                            break;
                        }
                    }
                if (!keep) continue;
                if (pass == 0) {
                    k++;
                    continue;
                }
                gt_calib_cand *c = &(*out)[k++];
                double ox = gt_cm_subpixel(gt_cm_harris(img, w, x - 1, y), s, gt_cm_harris(img, w, x + 1, y));
                double oy = gt_cm_subpixel(gt_cm_harris(img, w, x, y - 1), s, gt_cm_harris(img, w, x, y + 1));
                c->x = x, c->y = y, c->level = l, c->pad = 0;
                c->score = s;
                c->fx = (float)(((double)x + ox) * (double)(1 << l));
                c->fy = (float)(((double)y + oy) * (double)(1 << l));
            }
            if (pass == 0) cnt[y] = k;
        }
    }
    free(S);
    free(cnt);
    return GT_OK;
}

gt_status gt_calib_detect_cpu(const uint8_t *y, int w, int h, int pitch, const gt_calib_detect_opts *o,
                              gt_calib_feat *f)
{
    memset(f, 0, sizeof *f);
    const gt_calib_tables *T = gt_calib_tables_get();
    int L = gt_calib_levels(w, h, o->levels);
    if (L == 0) return gt_fail(GT_ERR_DATA, "image %dx%d is too small for features (at least %d pixels a side)", w, h,
                               2 * GT_CM_BORDER + 16);
    int t = o->fast_threshold > 0 ? o->fast_threshold : gt_calib_fast_threshold(y, w, h, pitch);
    pyr_t p;
    GT_TRY(pyr_build(y, w, h, pitch, L, &p));
    gt_calib_cand *all = NULL;
    int nall = 0;
    gt_status st = GT_OK;
    for (int l = 0; l < L && !st; l++) {
        gt_calib_cand *c;
        int n;
        if ((st = level_candidates(&p, l, t, &c, &n))) break;
        gt_calib_cand *m = realloc(all, ((size_t)nall + n + 1) * sizeof *all);
        if (!m) {
            free(c);
            st = gt_fail(GT_ERR_RUNTIME, "out of memory (corner candidates)");
            break;
        }
        all = m;
        if (n) memcpy(all + nall, c, (size_t)n * sizeof *c);
        nall += n;
        free(c);
    }
    if (!st) {
        int maxf = o->max_features > 0 ? o->max_features : 2000;
        f->kp = gt_malloc_array((size_t)maxf, sizeof *f->kp, "keypoints");
        f->desc = gt_malloc_array((size_t)maxf, GT_CALIB_DESC, "descriptors");
        if (!f->kp || !f->desc) st = GT_ERR_RUNTIME;
        if (!st) {
            f->n = gt_calib_select(all, nall, L, p.w, p.h, maxf, f->kp);
            if (f->n < 0) st = gt_fail(GT_ERR_RUNTIME, "out of memory (keypoint selection)");
        }
    }
    if (!st) {
#pragma omp parallel for schedule(static)
        for (int k = 0; k < f->n; k++) {
            gt_calib_kp *q = &f->kp[k];
            int l = q->level;
            q->angle = gt_cm_orientation(T, p.img[l], p.w[l], q->lx, q->ly);
            for (int b = 0; b < GT_CALIB_DESC; b++)
                f->desc[(size_t)k * GT_CALIB_DESC + b] = gt_cm_brief_byte(T, q->angle, b, p.sm[l], p.w[l], q->lx, q->ly);
        }
    }
    free(all);
    pyr_free(&p);
    if (st) gt_calib_feat_free(f);
    return st;
}

#if !GT_HAVE_CUDA
gt_status gt_calib_detect_gpu(const uint8_t *y, int w, int h, int pitch, const gt_calib_detect_opts *o,
                              gt_calib_feat *f)
{
    (void)y, (void)w, (void)h, (void)pitch, (void)o;
    memset(f, 0, sizeof *f);
    return gt_fail(GT_ERR_GPU, "this build has no CUDA support");
}
#endif
