/* Camera views of a real photograph with known homographies, for the
 * calibration's CLI tests, its benchmark and the demo (not a test itself):
 *
 *   calib_views make DIR [ci|bench|demo] [png|jpg|y4m|yuv] [FRAMES]
 *       writes DIR/cam1.EXT ... and DIR/truth.txt (per camera: H from the
 *       camera to the photograph, and the Y, U, V factors applied to it).
 *       ci: 4 x 256x192 (calib_views.h's CI rig), bench: 4 x 1920x1080 in a
 *       2x2 grid (7.6 times the photograph's resolution), demo: 4 x 480x270
 *       in a row (4.7 times). y4m/yuv (yuv420p) carry FRAMES
 *       frames (default 1) in which, for the demo, camera 3's exposure
 *       drifts (for --gain-update).
 *   calib_views eval TRUTH RIG [MAX_ERROR [GAIN_TOL [REF]]]
 *       mean corner reprojection error of RIG in its reference camera's view
 *       (camera REF; default: the camera whose H is a translation, else
 *       the middle one, calibration's default) and the gains against the
 *       truth; exit 1 when above MAX_ERROR px or GAIN_TOL (relative). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define fail_msg(...) (fprintf(stderr, __VA_ARGS__), fputc('\n', stderr), exit(2))
#include "calib_views.h"
#include "io/yuv.h"

static void preset(const char *name, cv_spec *s)
{
    if (!strcmp(name, "bench")) {
        cv_spec_ci(s, 1920, 1080);
        s->f0 = 330, s->f = 2500;
        const double yaw[4] = {-14, 14, -14, 14}, pitch[4] = {-9, -9, 9, 9}, roll[4] = {0, 8, -5, 3};
        for (int i = 0; i < 4; i++) s->yaw[i] = yaw[i], s->pitch[i] = pitch[i], s->roll[i] = roll[i];
    } else if (!strcmp(name, "demo")) {
        cv_spec_ci(s, 480, 270);
        s->photo = "scene_chelsea.jpg";
        s->f0 = 285, s->f = 1350;
        const double yaw[4] = {-18, -6, 6, 18}, pitch[4] = {0, 1, -1, 0}, roll[4] = {0, 4, -3, 2};
        const double g[4][3] = {{0.9, 1, 1}, {1.0, 0.95, 1.05}, {0.55, 1.08, 0.95}, {0.75, 1, 1}};
        for (int i = 0; i < 4; i++) {
            s->yaw[i] = yaw[i], s->pitch[i] = pitch[i], s->roll[i] = roll[i];
            memcpy(s->gain[i], g[i], sizeof g[i]);
        }
        s->jpeg = 0;
    } else {
        cv_spec_ci(s, 256, 192);
    }
}

static int make(int argc, char **argv)
{
    if (argc < 1) return fprintf(stderr, "make DIR [ci|bench|demo] [png|jpg|y4m|yuv] [FRAMES]\n"), 2;
    const char *dir = argv[0], *pre = argc > 1 ? argv[1] : "ci", *fmt = argc > 2 ? argv[2] : "png";
    long frames = argc > 3 ? atol(argv[3]) : 1;
    cv_spec s;
    preset(pre, &s);
    if (mkdir(dir, 0777) && errno != EEXIST) return perror(dir), 1;
    photo_t ph;
    photo_load(s.photo, &ph);
    if (cv_margin(&s, ph.w, ph.h) < 1) return fprintf(stderr, "views leave the photograph\n"), 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/truth.txt", dir);
    FILE *t = fopen(path, "w");
    if (!t) return perror(path), 1;
    fprintf(t, "# calib_views %s: camera -> photograph homographies and the factors applied\nscene %s %d %d\nview %d %d\n",
            pre, s.photo, ph.w, ph.h, s.w, s.h);
    for (int i = 0; i < s.n; i++) {
        double H[9];
        cv_h(&s, ph.w, ph.h, i, H);
        fprintf(t, "camera %d\nH", i + 1);
        for (int k = 0; k < 9; k++) fprintf(t, " %.17g", H[k]);
        fprintf(t, "\ngains %.9g %.9g %.9g\n", s.gain[i][0], s.gain[i][1], s.gain[i][2]);
    }
    fclose(t);
    bool video = !strcmp(fmt, "y4m") || !strcmp(fmt, "yuv");
    size_t np = (size_t)s.w * s.h;
    uint8_t *rgb = malloc(3 * np), *f420 = malloc(np * 3 / 2);
    gt_yuv_writer *wr[CV_MAX] = {0};
    for (int i = 0; i < s.n && video; i++) {
        snprintf(path, sizeof path, "%s/cam%d.%s", dir, i + 1, fmt);
        if (gt_yuv_create(path, !strcmp(fmt, "y4m"), s.w, s.h, GT_PIX_YUV420P, 25, 1, &wr[i]))
            return fprintf(stderr, "%s\n", gt_errmsg()), 1;
    }
    for (long k = 0; k < (video ? frames : 1); k++) {
        cv_spec one = s;
        one.seed = s.seed + 1000 * (uint64_t)k;
        /* the demo's auto-exposure: camera 3 brightens over the clip */
        if (!strcmp(pre, "demo") && frames > 1) one.gain[2][0] *= 1 + 0.6 * k / (frames - 1);
        uint8_t *fr[CV_MAX] = {0};
        if (cv_render(&one, &ph, fr)) return fprintf(stderr, "rendering failed\n"), 1;
        for (int i = 0; i < s.n; i++) {
            gt_status st;
            if (video) {
                st = gt_yuv_convert(fr[i], GT_PIX_YUV444P, f420, GT_PIX_YUV420P, s.w, s.h);
                if (!st) st = gt_yuv_write_frame(wr[i], f420);
            } else {
                snprintf(path, sizeof path, "%s/cam%d.%s", dir, i + 1, fmt);
                st = gt_yuv_to_rgb(fr[i], GT_PIX_YUV444P, s.w, s.h, GT_BT601, GT_RANGE_LIMITED, rgb);
                if (!st) st = !strcmp(fmt, "jpg") ? gt_jpeg_write(path, s.w, s.h, 3, rgb, 92) : gt_png_write(path, s.w, s.h, 3, rgb);
            }
            free(fr[i]);
            if (st) return fprintf(stderr, "%s\n", gt_errmsg()), 1;
        }
    }
    for (int i = 0; i < s.n && video; i++)
        if (gt_yuv_finish(wr[i], true)) return fprintf(stderr, "%s\n", gt_errmsg()), 1;
    free(rgb), free(f420);
    photo_free(&ph);
    printf("%d views %dx%d (%s) in %s\n", s.n, s.w, s.h, pre, dir);
    return 0;
}

static int eval(int argc, char **argv)
{
    if (argc < 2) return fprintf(stderr, "eval TRUTH RIG [MAX_ERROR [GAIN_TOL]]\n"), 2;
    double max_err = argc > 2 ? atof(argv[2]) : 1e30, tol = argc > 3 ? atof(argv[3]) : 1e30;
    FILE *t = fopen(argv[0], "r");
    if (!t) return perror(argv[0]), 2;
    char scene[256];
    int pw, ph, w, h, n = 0;
    double H[CV_MAX][9], g[CV_MAX][3];
    char line[4096];
    while (fgets(line, sizeof line, t)) {
        if (sscanf(line, "scene %255s %d %d", scene, &pw, &ph) == 3) continue;
        if (sscanf(line, "view %d %d", &w, &h) == 2) continue;
        if (!strncmp(line, "camera", 6)) n++;
        if (n > 0 && n <= CV_MAX && line[0] == 'H')
            sscanf(line + 1, "%lf %lf %lf %lf %lf %lf %lf %lf %lf", &H[n - 1][0], &H[n - 1][1], &H[n - 1][2], &H[n - 1][3],
                   &H[n - 1][4], &H[n - 1][5], &H[n - 1][6], &H[n - 1][7], &H[n - 1][8]);
        if (n > 0 && n <= CV_MAX && !strncmp(line, "gains", 5))
            sscanf(line + 5, "%lf %lf %lf", &g[n - 1][0], &g[n - 1][1], &g[n - 1][2]);
    }
    fclose(t);
    gt_stitch_rig rig;
    if (gt_stitch_rig_load(argv[1], &rig)) return fprintf(stderr, "%s\n", gt_errmsg()), 2;
    if (rig.ncam != n) return fprintf(stderr, "the rig has %d cameras, the truth %d\n", rig.ncam, n), 1;
    /* the reference: given, else (rig 1) the camera whose H is a pure
     * translation, (rig 2) the middle one, calibration's default */
    int ref = argc > 4 ? atoi(argv[4]) - 1 : rig.version >= 2 ? (n - 1) / 2 : -1;
    for (int i = 0; i < n && ref < 0; i++) {
        const double *R = rig.cam[i].H;
        if (fabs(R[0] - 1) < 1e-9 && fabs(R[1]) < 1e-9 && fabs(R[3]) < 1e-9 && fabs(R[4] - 1) < 1e-9 && fabs(R[6]) < 1e-12 &&
            fabs(R[7]) < 1e-12)
            ref = i;
    }
    if (ref < 0) ref = (n - 1) / 2; /* a plane of the rotation model: calibration's default reference */
    double Tinv[9], sum = 0, worst = 0;
    gt_stitch_h_invert(H[ref], Tinv);
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (i == ref) continue;
        double T[9];
        gt_stitch_h_mul(Tinv, H[i], T);
        double cx[4] = {0, w - 1.0, w - 1.0, 0}, cy[4] = {0, 0, h - 1.0, h - 1.0};
        for (int k = 0; k < 4; k++) {
            double a[2] = {cx[k], cy[k]}, b[2], d = T[6] * a[0] + T[7] * a[1] + T[8];
            b[0] = (T[0] * a[0] + T[1] * a[1] + T[2]) / d;
            b[1] = (T[3] * a[0] + T[4] * a[1] + T[5]) / d;
            /* the rig's: camera i -> panorama -> the reference camera (either model) */
            double X, Y, u, v, e = 1e9;
            if (gt_stitch_rig_to_pano(&rig, i, a[0], a[1], &X, &Y) && gt_stitch_rig_to_cam(&rig, ref, X, Y, &u, &v))
                e = hypot(u - b[0], v - b[1]);
            sum += e, m++;
            worst = fmax(worst, e);
        }
    }
    double err = sum / m, gworst = 0;
    printf("reference camera %d: mean corner reprojection error %.3f px, worst corner %.3f px\n", ref + 1, err, worst);
    for (int i = 0; i < n; i++) {
        const gt_stitch_cam *c = &rig.cam[i];
        double est[3] = {c->gain, c->gain_u, c->gain_v};
        printf("camera %d gains", i + 1);
        for (int p = 0; p < 3; p++) {
            double truth = g[ref][p] / g[i][p];
            printf(" %c %.4f (truth %.4f)", "YUV"[p], est[p], truth);
            gworst = fmax(gworst, fabs(est[p] / truth - 1));
        }
        printf("\n");
    }
    gt_stitch_rig_free(&rig);
    return err <= max_err && gworst <= tol ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "make")) return make(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "eval")) return eval(argc - 2, argv + 2);
    fprintf(stderr, "usage: calib_views make DIR [ci|bench|demo] [png|jpg|y4m|yuv] [FRAMES]\n"
                    "       calib_views eval TRUTH RIG [MAX_ERROR [GAIN_TOL [REF]]]\n");
    return 2;
}
