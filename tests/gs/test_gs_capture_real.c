/* The capture reader on a real capture, when it is there (else exit 77):
 * shared/data/captures/plush (97 photographs, a PINHOLE camera, .bin) and
 * its distorted/ original (OPENCV) from which COLMAP's image_undistorter
 * made it. Checks that gsrender's own undistortion picks COLMAP's camera
 * (the size and principal point of plush/sparse/0's) and makes COLMAP's
 * images (PSNR against plush/images/, which went through JPEG once more),
 * and prints the counts and the times of reading the model, loading the
 * photographs and making the initial Gaussians.
 *
 * The capture: $GT_CAPTURE_PLUSH, else shared/data/captures/plush beside
 * or inside the source tree, else /work/shared/data/captures/plush. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/timer.h"
#include "gs/gs_capture.h"

static int failures;
#define CHECK(cond, ...)                                                                                    \
    do {                                                                                                    \
        if (!(cond)) {                                                                                      \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                     \
            printf(__VA_ARGS__);                                                                            \
            printf("\n");                                                                                   \
            failures++;                                                                                     \
        }                                                                                                   \
    } while (0)

static bool is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static const char *find_plush(void)
{
    static char p[1024];
    const char *e = getenv("GT_CAPTURE_PLUSH");
    if (e) return is_dir(e) ? e : NULL;
    const char *src = getenv("GT_SOURCE_DIR");
    const char *rel[2] = {"../shared/data/captures/plush", "shared/data/captures/plush"};
    for (int k = 0; src && k < 2; k++) {
        snprintf(p, sizeof p, "%s/%s", src, rel[k]);
        if (is_dir(p)) return p;
    }
    snprintf(p, sizeof p, "/work/shared/data/captures/plush");
    return is_dir(p) ? p : NULL;
}

static gt_status open_timed(const char *dir, int r, gt_gs_capture *cap)
{
    gt_gs_capture_opts o;
    gt_gs_capture_opts_init(&o);
    o.resolution = r;
    double t0 = gt_now_ms();
    gt_status st = gt_gs_capture_open(dir, &o, cap);
    if (st != GT_OK) {
        printf("FAIL %s: %s\n", dir, gt_errmsg());
        failures++;
        return st;
    }
    const gt_gs_capture_lens *L = &cap->lenses[0];
    printf("%s (-r %d): model read in %.1f ms: %d views (%d train, %d held out), %zu points; camera %u %s "
           "%dx%d -> pinhole %dx%d f %.6f %.6f c %.4f %.4f; views %dx%d\n",
           dir, r, gt_now_ms() - t0, cap->nviews, cap->ntrain, cap->ntest, cap->model.points.n, L->camera_id,
           gt_colmap_model_name(L->model), L->width, L->height, L->pinhole.width, L->pinhole.height, L->pinhole.fx,
           L->pinhole.fy, L->pinhole.cx, L->pinhole.cy, cap->views[0].cam.width, cap->views[0].cam.height);
    return GT_OK;
}

static void **load_timed(const gt_gs_capture *cap, gt_gs_pixfmt fmt)
{
    const float bg[3] = {0, 0, 0};
    void **img = NULL;
    double t0 = gt_now_ms();
    gt_status st = gt_gs_capture_load_images(cap, bg, fmt, &img);
    double ms = gt_now_ms() - t0;
    CHECK(st == GT_OK, "loading %s: %s", cap->dir, gt_errmsg());
    if (st == GT_OK)
        printf("%s: %d photographs loaded as %s in %.0f ms (%.1f ms each)\n", cap->dir, cap->nviews,
               fmt == GT_GS_PIX_U8 ? "bytes" : "floats", ms, ms / cap->nviews);
    return img;
}

/* Every 8th view as floats, one after the other (the -r 2 path). */
static void load_some(const gt_gs_capture *cap)
{
    const float bg[3] = {0, 0, 0};
    const gt_gs_camera *c = &cap->views[0].cam;
    float *f = malloc(sizeof(float) * 3 * (size_t)c->width * c->height);
    double t0 = gt_now_ms();
    int n = 0;
    for (int i = 0; i < cap->nviews; i += 8, n++) {
        gt_status st = gt_gs_capture_load_view(cap, i, bg, GT_GS_PIX_F32, f);
        CHECK(st == GT_OK, "view %d: %s", i, gt_errmsg());
    }
    printf("%s: %d photographs loaded one by one as floats at %dx%d, %.1f ms each\n", cap->dir, n, c->width,
           c->height, (gt_now_ms() - t0) / n);
    free(f);
}

int main(void)
{
    const char *plush = find_plush();
    if (!plush) {
        printf("SKIP: no capture shared/data/captures/plush (set GT_CAPTURE_PLUSH)\n");
        return 77;
    }
    char distorted[1100];
    snprintf(distorted, sizeof distorted, "%s/distorted", plush);
    gt_gs_capture a, b;
    if (open_timed(plush, 1, &a) != GT_OK) return 1;
    CHECK(a.nviews == 97 && a.ntest == 13 && a.model.points.n == 12569, "counts %d %d %zu", a.nviews, a.ntest,
          a.model.points.n);
    CHECK(!a.lenses[0].distorted, "plush is PINHOLE");
    void **ia = load_timed(&a, GT_GS_PIX_U8);
    gt_gs_raw r;
    double t0 = gt_now_ms();
    const gt_gs_init_opts ref = GT_GS_INIT_REFERENCE;
    gt_status st = gt_gs_capture_init(&a, 3, &ref, &r);
    CHECK(st == GT_OK, "init: %s", gt_errmsg());
    if (st == GT_OK) {
        double ms = gt_now_ms() - t0, mean = 0;
        for (size_t i = 0; i < r.n; i++) mean += r.log_scale[3 * i];
        printf("initial Gaussians: %zu in %.1f ms, mean log scale %.4f\n", r.n, ms, mean / (double)r.n);
        gt_gs_raw_free(&r);
    }
    if (!is_dir(distorted)) {
        printf("no %s: the undistortion checks are skipped\n", distorted);
    } else if (open_timed(distorted, 1, &b) == GT_OK) {
        /* COLMAP made plush's PINHOLE camera from this OPENCV one */
        const gt_gs_pinhole *p = &b.lenses[0].pinhole, *q = &a.lenses[0].pinhole;
        CHECK(b.lenses[0].distorted && b.lenses[0].model == GT_COLMAP_OPENCV, "distorted/ is OPENCV");
        CHECK(p->width == q->width && p->height == q->height, "undistorted size %dx%d, COLMAP's %dx%d", p->width,
              p->height, q->width, q->height);
        CHECK(fabs(p->cx - q->cx) < 1e-9 && fabs(p->cy - q->cy) < 1e-9 && p->fx == q->fx && p->fy == q->fy,
              "undistorted camera f %g %g c %g %g, COLMAP's f %g %g c %g %g", p->fx, p->fy, p->cx, p->cy, q->fx,
              q->fy, q->cx, q->cy);
        CHECK(a.nviews == b.nviews, "views %d, %d", a.nviews, b.nviews);
        void **ib = load_timed(&b, GT_GS_PIX_U8);
        double worst = 1e9, sum = 0;
        int n = 0;
        for (int i = 0; ia && ib && i < a.nviews && i < b.nviews; i++) {
            const gt_gs_camera *ca = &a.views[i].cam, *cb = &b.views[i].cam;
            CHECK(!strcmp(ca->name, cb->name), "view %d: %s, %s", i, ca->name, cb->name);
            for (int k = 0; k < 9; k++) CHECK(fabsf(ca->R[k] - cb->R[k]) < 1e-6f, "view %d: R differs", i);
            for (int k = 0; k < 3; k++) CHECK(fabsf(ca->t[k] - cb->t[k]) < 1e-6f, "view %d: t differs", i);
            if (ca->width != cb->width || ca->height != cb->height) continue;
            /* interior pixels (2 from the border), against COLMAP's JPEG */
            const uint8_t *x = ia[i], *y = ib[i];
            int w = ca->width, h = ca->height;
            double se = 0;
            long m = 0;
            for (int c = 0; c < 3; c++)
                for (int yy = 2; yy < h - 2; yy++)
                    for (int xx = 2; xx < w - 2; xx++) {
                        double d = (double)x[((size_t)c * h + yy) * w + xx] - y[((size_t)c * h + yy) * w + xx];
                        se += d * d, m++;
                    }
            double psnr = 10 * log10(255.0 * 255.0 / (se / m));
            worst = fmin(worst, psnr), sum += psnr, n++;
        }
        if (n) printf("undistorted photographs against COLMAP's: PSNR mean %.2f dB, lowest %.2f dB (%d views)\n",
                      sum / n, worst, n);
        CHECK(n == a.nviews && worst > 38, "PSNR against COLMAP's undistorted images: lowest %.2f dB", worst);
        gt_gs_capture_images_free(ib, b.nviews);
        gt_gs_capture_free(&b);
        if (open_timed(distorted, 2, &b) == GT_OK) {
            CHECK(b.views[0].cam.width == 491 && b.views[0].cam.height == 366, "-r 2: %dx%d",
                  b.views[0].cam.width, b.views[0].cam.height);
            load_some(&b);
            gt_gs_capture_free(&b);
        }
    }
    gt_gs_capture_images_free(ia, a.nviews);
    gt_gs_capture_free(&a);
    if (open_timed(plush, 2, &a) == GT_OK) {
        CHECK(a.views[0].cam.width == 491 && a.views[0].cam.height == 366, "-r 2: %dx%d (982/2, 733/2 rounded to even)",
              a.views[0].cam.width, a.views[0].cam.height);
        load_some(&a);
        gt_gs_capture_free(&a);
    }
    printf("%s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
