/* Not a test: views cut from the real equirectangular photograph (testdata/
 * stitch/equirect_rocks.jpg) by rotation-model cameras with known
 * orientations and exposures (stitch_sphere.h), and their evaluation, for
 * the wide-rig CLI tests, scripts/bench/yuvstitch-wide and the demo.
 *
 *   sphere_views make DIR PRESET FORMAT [FRAMES]
 *       PRESET  ci      8 cameras 640x480 looking all around (90 degrees
 *                       each), the photograph at 512x256
 *               pan150  5 portrait cameras 320x480 panning 167 degrees
 *               bench   6 cameras 1920x1080 all around, the photograph whole
 *               bench8  8 cameras 1920x1080 all around (calibration's speed)
 *               demo    6 cameras 640x360 all around, the photograph at 1024
 *       FORMAT  png, y4m (yuv420p) or a raw format (yuyv422, uyvy422,
 *               yuv420p, nv12, yuv422p: DIR/camN.yuv)
 *       writes DIR/camN.*, the true rig DIR/truth.txt (a rig 2, spherical,
 *       the photograph's size, each camera's true gains) and
 *       DIR/source.png (the photograph at the preset's size); video formats
 *       repeat the frame FRAMES times (default 1).
 *   sphere_views eval TRUTH RIG [MAX_DEG [MAX_PX]]
 *       each camera's rotation error (degrees, the angle of R_rig R_truth^T)
 *       and focal length error; when RIG is a full spherical panorama, the
 *       largest distance (in RIG's panorama pixels) between where RIG puts
 *       a panorama pixel's sample and where the photograph has it, over the
 *       pixels a camera sees. Exit 1 above MAX_DEG or MAX_PX.
 *   sphere_views psnr TRUTH PANO.y4m
 *       luma PSNR of the first frame of a full spherical panorama against
 *       the photograph (read at the panorama's size) where a true camera
 *       sees. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define fail_msg(...) (fprintf(stderr, __VA_ARGS__), fputc('\n', stderr), exit(2))
#include "io/yuv.h"
#include "stitch_sphere.h"

static int preset(const char *name, sphere_spec *s, int *down)
{
    if (!strcmp(name, "ci")) {
        sphere_spec_ring(s, 8, 640, 480, 90, 0);
        *down = 4;
    } else if (!strcmp(name, "pan150")) {
        sphere_spec_ring(s, 5, 320, 480, 47, 0);
        for (int i = 0; i < 5; i++) s->yaw[i] = -60 + 30 * i;
        *down = 2;
    } else if (!strcmp(name, "bench")) {
        sphere_spec_ring(s, 6, 1920, 1080, 90, 0);
        *down = 1;
    } else if (!strcmp(name, "bench8")) {
        sphere_spec_ring(s, 8, 1920, 1080, 90, 0);
        *down = 1;
    } else if (!strcmp(name, "demo")) {
        sphere_spec_ring(s, 6, 640, 360, 90, 0);
        *down = 2;
    } else {
        return -1;
    }
    for (int i = 0; i < s->n; i++) s->roll[i] = 0; /* level x axes: horizon straightening recovers the truth's up */
    return 0;
}

static int make(int argc, char **argv)
{
    if (argc < 3) return fprintf(stderr, "make DIR ci|pan150|bench|bench8|demo FORMAT [FRAMES]\n"), 2;
    const char *dir = argv[0], *fmt = argv[2];
    long frames = argc > 3 ? atol(argv[3]) : 1;
    sphere_spec s;
    int down;
    if (preset(argv[1], &s, &down)) return fprintf(stderr, "unknown preset '%s'\n", argv[1]), 2;
    bool png = !strcmp(fmt, "png"), y4m = !strcmp(fmt, "y4m");
    gt_pixfmt pf = GT_PIX_YUV420P;
    if (!png && !y4m && gt_pixfmt_parse("FORMAT", fmt, &pf)) return fprintf(stderr, "%s\n", gt_errmsg()), 2;
    if (mkdir(dir, 0777) && errno != EEXIST) return perror(dir), 1;
    photo_t src;
    sphere_load(down, &src);
    char path[4096];
    gt_stitch_rig truth;
    sphere_truth_rig(&s, sphere_proj(), src.w, src.h, &truth);
    for (int i = 0; i < s.n; i++) { /* the gains that undo the exposures */
        truth.cam[i].gain = (float)(1 / s.gain[i][0]);
        truth.cam[i].gain_u = (float)(1 / s.gain[i][1]);
        truth.cam[i].gain_v = (float)(1 / s.gain[i][2]);
    }
    if (gt_stitch_rig_finish(&truth)) return fprintf(stderr, "%s\n", gt_errmsg()), 1;
    snprintf(path, sizeof path, "%s/truth.txt", dir);
    FILE *t = fopen(path, "w");
    if (!t) return perror(path), 1;
    fprintf(t, "# sphere_views %s: the true rig of the views of equirect_rocks.jpg at %dx%d\n", argv[1], src.w, src.h);
    gt_stitch_rig_write(t, &truth);
    fclose(t);
    /* the photograph as the preset has it */
    size_t n = (size_t)src.w * src.h;
    uint8_t *yuv = malloc(3 * n), *rgb = malloc(3 * n);
    for (int k = 0; k < 3; k++)
        for (size_t j = 0; j < n; j++) yuv[k * n + j] = stitch_q(src.c[k][j]);
    snprintf(path, sizeof path, "%s/source.png", dir);
    if (gt_yuv_to_rgb(yuv, GT_PIX_YUV444P, src.w, src.h, GT_BT601, GT_RANGE_LIMITED, rgb) || gt_png_write(path, src.w, src.h, 3, rgb))
        return fprintf(stderr, "%s\n", gt_errmsg()), 1;
    free(yuv), free(rgb);
    size_t vb = gt_pixfmt_frame_bytes(png ? GT_PIX_YUV444P : pf, s.w, s.h);
    uint8_t *frame = malloc(vb), *vrgb = malloc((size_t)s.w * s.h * 3);
    for (int i = 0; i < s.n; i++) {
        sphere_render(&src, &s, i, png ? GT_PIX_YUV444P : pf, frame);
        gt_status st;
        if (png) {
            snprintf(path, sizeof path, "%s/cam%d.png", dir, i + 1);
            st = gt_yuv_to_rgb(frame, GT_PIX_YUV444P, s.w, s.h, GT_BT601, GT_RANGE_LIMITED, vrgb);
            if (!st) st = gt_png_write(path, s.w, s.h, 3, vrgb);
        } else {
            gt_yuv_writer *wr;
            snprintf(path, sizeof path, "%s/cam%d.%s", dir, i + 1, y4m ? "y4m" : "yuv");
            st = gt_yuv_create(path, y4m, s.w, s.h, pf, 30, 1, &wr);
            for (long k = 0; k < frames && !st; k++) st = gt_yuv_write_frame(wr, frame);
            if (!st) st = gt_yuv_finish(wr, true);
        }
        if (st) return fprintf(stderr, "%s\n", gt_errmsg()), 1;
    }
    free(frame), free(vrgb);
    photo_free(&src);
    printf("%d views %dx%d (%s, %s) of the photograph at %dx%d in %s\n", s.n, s.w, s.h, argv[1], fmt, src.w, src.h, dir);
    gt_stitch_rig_free(&truth);
    return 0;
}

/* the distance between two panorama positions of a full sphere (longitudes wrap) */
static double pano_dist(double X1, double Y1, double X2, double Y2, int W)
{
    double dx = fabs(X1 - X2);
    if (dx > W / 2.0) dx = W - dx;
    return hypot(dx, Y1 - Y2);
}

static int eval(int argc, char **argv)
{
    if (argc < 2) return fprintf(stderr, "eval TRUTH RIG [MAX_DEG [MAX_PX]]\n"), 2;
    double max_deg = argc > 2 ? atof(argv[2]) : 1e30, max_px = argc > 3 ? atof(argv[3]) : 1e30;
    gt_stitch_rig truth, rig;
    if (gt_stitch_rig_load(argv[0], &truth) || gt_stitch_rig_load(argv[1], &rig))
        return fprintf(stderr, "%s\n", gt_errmsg()), 2;
    if (rig.ncam != truth.ncam) return fprintf(stderr, "the rig has %d cameras, the truth %d\n", rig.ncam, truth.ncam), 1;
    double worst = 0;
    for (int i = 0; i < rig.ncam; i++) {
        if (!rig.cam[i].rot) return fprintf(stderr, "camera %d of the rig has no rotation\n", i + 1), 1;
        double Rt[9], E[9];
        gt_mat3_transpose(truth.cam[i].R, Rt);
        gt_stitch_h_mul(rig.cam[i].R, Rt, E);
        double a = gt_rot_angle_deg(E);
        worst = fmax(worst, a);
        printf("camera %d: rotation error %.4f degrees, focal %.3f px (truth %.3f)\n", i + 1, a, rig.cam[i].f,
               truth.cam[i].f);
    }
    double px = 0, sum = 0;
    long cnt = 0;
    bool full = rig.proj.kind == GT_PROJ_SPHERICAL && rig.proj.right - rig.proj.left == 360 && rig.proj.top == 90 &&
                rig.proj.bottom == -90;
    if (full) {
        int W = rig.pano_w, H = rig.pano_h;
        gt_stitch_proj sp = sphere_proj();
        for (int y = 0; y < H; y += 2)
            for (int x = 0; x < W; x += 2)
                for (int i = 0; i < rig.ncam; i++) {
                    double u, v, d[3], X, Y;
                    if (!gt_stitch_rig_to_cam(&rig, i, x, y, &u, &v) || u < 0 || v < 0 || u > rig.cam[i].w - 1 ||
                        v > rig.cam[i].h - 1)
                        continue;
                    gt_cam_ray(&truth.cam[i], u, v, d); /* what the view shows there */
                    gt_proj_pixel(&sp, W, H, d, &X, &Y);
                    double e = pano_dist(X, Y, x, y, W);
                    px = fmax(px, e), sum += e, cnt++;
                }
        printf("panorama %dx%d: the sample each camera gives a pixel lies %.3f px from the pixel's place in the "
               "photograph at most, %.3f px on average (%ld camera pixels)\n", W, H, px, sum / cnt, cnt);
    }
    printf("largest rotation error %.4f degrees\n", worst);
    gt_stitch_rig_free(&truth);
    gt_stitch_rig_free(&rig);
    return worst <= max_deg && px <= max_px ? 0 : 1;
}

static int psnr(int argc, char **argv)
{
    if (argc < 2) return fprintf(stderr, "psnr TRUTH PANO.y4m\n"), 2;
    gt_stitch_rig truth;
    if (gt_stitch_rig_load(argv[0], &truth)) return fprintf(stderr, "%s\n", gt_errmsg()), 2;
    gt_yuv_reader *r;
    if (gt_yuv_open(argv[1], 0, 0, -1, &r)) return fprintf(stderr, "%s\n", gt_errmsg()), 2;
    int W = gt_yuv_width(r), H = gt_yuv_height(r);
    gt_pixfmt f = gt_yuv_pixfmt(r);
    uint8_t *fr = malloc(gt_yuv_frame_bytes(r));
    bool got;
    if (gt_yuv_read_frame(r, fr, &got) || !got) return fprintf(stderr, "no frame in %s\n", argv[1]), 2;
    gt_yuv_close(r);
    /* the photograph at the preset's size, read at the panorama's pixel centres */
    photo_t src;
    sphere_load(2048 / truth.pano_w, &src);
    gt_plane_view pv[3];
    gt_stitch_planes(f, W, H, pv);
    double se = 0;
    long n = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            bool seen = false;
            for (int i = 0; i < truth.ncam && !seen; i++) {
                double X = (x + 0.5) * truth.pano_w / W - 0.5, Y = (y + 0.5) * truth.pano_h / H - 0.5, u, v;
                seen = gt_stitch_rig_to_cam(&truth, i, X, Y, &u, &v) && u >= 0 && v >= 0 && u <= truth.cam[i].w - 1 &&
                       v <= truth.cam[i].h - 1;
            }
            if (!seen) continue;
            double ref = sphere_at(&src, 0, (x + 0.5) * src.w / W - 0.5, (y + 0.5) * src.h / H - 0.5);
            double d = fr[pv[0].off + (size_t)y * pv[0].pitch + (size_t)x * pv[0].step] - ref;
            se += d * d, n++;
        }
    double p = 10 * log10(255.0 * 255.0 / (se / n));
    printf("luma PSNR %.2f dB against the photograph over %ld pixels a camera sees (%.0f %% of the panorama)\n", p, n,
           100.0 * n / ((double)W * H));
    free(fr);
    photo_free(&src);
    gt_stitch_rig_free(&truth);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "make")) return make(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "eval")) return eval(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "psnr")) return psnr(argc - 2, argv + 2);
    fprintf(stderr, "usage: sphere_views make DIR ci|pan150|bench|bench8|demo png|y4m|RAWFMT [FRAMES]\n"
                    "       sphere_views eval TRUTH RIG [MAX_DEG [MAX_PX]]\n"
                    "       sphere_views psnr TRUTH PANO.y4m\n");
    return 2;
}
