/* The yuvstitch jobs through libcore's public API, as an outside C program
 * uses them (compiled against the installed headers and library through
 * pkg-config by tests/api/run-api-tests.sh): a 2-camera rig streamed with
 * gt_stitch_stream (every frame equal to the CPU reference stitch of the
 * same frames, within the 1 per sample the GPU may differ by; a slice of the
 * streams equal to the same frames of the whole run; a start past the end
 * and an output that is an input refused without a file), and
 * gt_stitch_calibrate on two views cut from testdata/stitch/photo_chelsea.png
 * through known homographies (the rig it writes maps camera 2 into camera 1
 * within 0.2 px of the truth where they overlap, gains about 1). Exit 0:
 * passed; 1: failed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/image.h"
#include "io/yuv.h"
#include "stitch/calib.h"
#include "stitch/stitch.h"

#include "api_test.h"

#define CW 160 /* camera frames: yuv420p, CW x CH, NF frames */
#define CH 120
#define NF 6

static const char *rig_text = "panorama 288 128\n"
                              "camera\nH 1 0 0 0 1 4 0 0 1\n"
                              "camera\nH 0.98 0.03 124 -0.01 1.0 6 0.0001 0 1\ngain 1.1\n";

/* Frame f of camera c: a pattern that moves from frame to frame. */
static void make_frame(int c, int f, uint8_t *buf)
{
    uint8_t *y = buf, *u = buf + CW * CH, *v = u + CW * CH / 4;
    for (int i = 0; i < CH; i++)
        for (int j = 0; j < CW; j++)
            y[i * CW + j] = (uint8_t)(16 + (j * 3 + i * (c + 2) + f * 11 + (i / 8) * (j / 8) % 7 * 9) % 220);
    for (int i = 0; i < CH / 2 * CW / 2; i++) {
        u[i] = (uint8_t)(40 + (i * 7 + f * 5 + c * 30) % 180);
        v[i] = (uint8_t)(40 + (i * 3 + f * 13 + c * 50) % 180);
    }
}

static bool write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(data, 1, n, f) == n;
    if (f) ok = fclose(f) == 0 && ok;
    CHECK(ok, "cannot write %s", path);
    return ok;
}

/* All frames of a stream (raw yuv420p of w x h, or Y4M) into one buffer. */
static uint8_t *read_frames(const char *path, int w, int h, long *n, size_t *fb)
{
    gt_yuv_reader *r;
    *n = 0;
    gt_status st = gt_yuv_open(path, w, h, GT_PIX_YUV420P, &r);
    CHECK(st == GT_OK, "open %s: %s", path, gt_errmsg());
    if (st != GT_OK) return NULL;
    CHECK(gt_yuv_width(r) == w && gt_yuv_height(r) == h, "%s is %dx%d, want %dx%d", path, gt_yuv_width(r),
          gt_yuv_height(r), w, h);
    *fb = gt_yuv_frame_bytes(r);
    uint8_t *all = malloc(*fb * (NF + 1));
    bool got = true;
    while (all && st == GT_OK && got && *n <= NF) {
        st = gt_yuv_read_frame(r, all + *n * *fb, &got);
        if (got) (*n)++;
    }
    CHECK(st == GT_OK, "reading %s: %s", path, gt_errmsg());
    gt_yuv_close(r);
    return all;
}

/* The CPU reference of every frame: plan from the rig, gt_stitch_frame_cpu. */
static uint8_t *reference(const char *rigpath, uint8_t *frames[2][NF], size_t *ob)
{
    gt_stitch_rig rig;
    gt_stitch_plan plan;
    gt_stitch_plan_opts po;
    gt_stitch_plan_opts_init(&po);
    gt_status st = gt_stitch_rig_load(rigpath, &rig);
    if (st == GT_OK) {
        st = gt_stitch_plan_build(&rig, CW, CH, GT_PIX_YUV420P, &po, &plan);
        gt_stitch_rig_free(&rig);
    }
    CHECK(st == GT_OK, "reference plan: %s", gt_errmsg());
    if (st != GT_OK) return NULL;
    *ob = plan.out_bytes;
    uint8_t *out = malloc(plan.out_bytes * NF);
    for (int f = 0; out && f < NF && st == GT_OK; f++) {
        const uint8_t *in[2] = {frames[0][f], frames[1][f]};
        st = gt_stitch_frame_cpu(&plan, in, out + f * plan.out_bytes);
    }
    CHECK(st == GT_OK, "reference stitch: %s", gt_errmsg());
    gt_stitch_plan_free(&plan);
    return out;
}

static int max_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    int m = 0;
    for (size_t i = 0; i < n; i++) m = abs(a[i] - b[i]) > m ? abs(a[i] - b[i]) : m;
    return m;
}

/* The whole stream to Y4M, a slice to raw, and two refusals. */
static void stream(void)
{
    static uint8_t frames[2][NF][CW * CH * 3 / 2];
    uint8_t *fp[2][NF];
    const char *cams[2] = {api_tmp("cam1.yuv"), api_tmp("cam2.yuv")};
    for (int c = 0; c < 2; c++) {
        for (int f = 0; f < NF; f++) make_frame(c, f, frames[c][f]), fp[c][f] = frames[c][f];
        if (!write_file(cams[c], frames[c], sizeof frames[c])) return;
    }
    if (!write_file(api_tmp("rig.txt"), rig_text, strlen(rig_text))) return;
    gt_stitch_job j;
    gt_stitch_job_init(&j);
    j.rig = api_tmp("rig.txt");
    j.inputs = cams, j.ninputs = 2;
    j.w = CW, j.h = CH, j.fmt = GT_PIX_YUV420P;
    j.output = api_tmp("pano.y4m");
    long n = -1;
    gt_status st = gt_stitch_stream(&j, &n);
    CHECK(st == GT_OK && n == NF, "stream: status %d, %ld frames, want %d (%s)", (int)st, n, NF, gt_errmsg());
    size_t ob = 0, fb = 0;
    uint8_t *ref = reference(j.rig, fp, &ob);
    long got = 0;
    uint8_t *out = st == GT_OK ? read_frames(j.output, 288, 128, &got, &fb) : NULL;
    CHECK(got == NF, "the Y4M output has %ld frames, want %d", got, NF);
    if (ref && out && got == NF && fb == ob) {
        int m = max_diff(ref, out, ob * NF);
        CHECK(m <= 1, "the panorama differs from the CPU reference by %d", m);
        CHECK(memcmp(out, out + ob, ob) != 0, "frames 0 and 1 are equal: the inputs' motion is lost");
    }
    /* frames 2..4 of the same streams, raw */
    j.start = 2, j.frames = 3, j.output = api_tmp("slice.yuv");
    st = gt_stitch_stream(&j, &n);
    CHECK(st == GT_OK && n == 3, "slice: status %d, %ld frames, want 3 (%s)", (int)st, n, gt_errmsg());
    uint8_t *slice = st == GT_OK ? read_frames(j.output, 288, 128, &got, &fb) : NULL;
    CHECK(got == 3, "the slice has %ld frames, want 3", got);
    if (slice && out && got == 3) CHECK(!memcmp(slice, out + 2 * ob, 3 * ob), "the slice differs from frames 2-4");
    /* a start past the end; an output that is an input */
    j.start = NF, j.frames = -1, j.output = api_tmp("past.yuv");
    st = gt_stitch_stream(&j, &n);
    CHECK(st == GT_ERR_USAGE && strstr(gt_errmsg(), "past the end"), "start %d of %d frames: status %d (%s)", NF, NF,
          (int)st, gt_errmsg());
    CHECK(!api_exists(j.output), "a start past the end left %s", j.output);
    j.start = 0, j.output = cams[1];
    st = gt_stitch_stream(&j, &n);
    CHECK(st == GT_ERR_USAGE, "output onto an input: status %d (%s)", (int)st, gt_errmsg());
    uint8_t *again = read_frames(cams[1], CW, CH, &got, &fb);
    CHECK(again && got == NF && !memcmp(again, frames[1], sizeof frames[1]), "the input was changed");
    free(ref), free(out), free(slice), free(again);
}

/* Camera view of w x h through T (camera pixel -> photograph pixel),
 * bilinear, RGB. */
static uint8_t *view(const gt_image *photo, const double T[9], int w, int h)
{
    uint8_t *v = malloc((size_t)w * h * 3), *p = photo->data;
    for (int y = 0; v && y < h; y++)
        for (int x = 0; x < w; x++) {
            double d = T[6] * x + T[7] * y + T[8];
            double px = (T[0] * x + T[1] * y + T[2]) / d, py = (T[3] * x + T[4] * y + T[5]) / d;
            int x0 = (int)floor(px), y0 = (int)floor(py);
            double fx = px - x0, fy = py - y0;
            for (int k = 0; k < 3; k++) {
                double s = 0;
                for (int dy = 0; dy <= 1; dy++)
                    for (int dx = 0; dx <= 1; dx++) {
                        int xx = x0 + dx < photo->w ? x0 + dx : photo->w - 1;
                        int yy = y0 + dy < photo->h ? y0 + dy : photo->h - 1;
                        s += (dx ? fx : 1 - fx) * (dy ? fy : 1 - fy) * p[((size_t)yy * photo->w + xx) * 3 + k];
                    }
                v[((size_t)y * w + x) * 3 + k] = (uint8_t)lrint(s);
            }
        }
    return v;
}

static void apply(const double H[9], double x, double y, double *ox, double *oy)
{
    double d = H[6] * x + H[7] * y + H[8];
    *ox = (H[0] * x + H[1] * y + H[2]) / d;
    *oy = (H[3] * x + H[4] * y + H[5]) / d;
}

/* How far est puts camera point (x, y) from where truth does (pixels). */
static double miss(const double truth[9], const double est[9], double x, double y)
{
    double tx, ty, ex, ey;
    apply(truth, x, y, &tx, &ty);
    apply(est, x, y, &ex, &ey);
    return hypot(ex - tx, ey - ty);
}

/* Two views of the photograph, the second turned 3 degrees and scaled 0.98,
 * overlapping by a third: the calibrated camera 2 -> camera 1 map against
 * the truth, where the views overlap (every 4th pixel of camera 2 that lands
 * in camera 1; within 0.2 px) and at camera 2's corners, up to 160 pixels
 * beyond the overlap (within 1 px). */
static void calibrate(const char *photo_path)
{
    gt_image photo;
    gt_status st = gt_image_read(photo_path, 3, 0, &photo);
    CHECK(st == GT_OK, "read %s: %s", photo_path, gt_errmsg());
    if (st != GT_OK) return;
    const int w = 224, h = 144;
    const double deg = 3.14159265358979323846 / 180, a = 0.98 * cos(3 * deg), b = 0.98 * sin(3 * deg);
    const double T[2][9] = {{1, 0, 8, 0, 1, 8, 0, 0, 1}, {a, -b, 168, b, a, 6, 0, 0, 1}};
    const char *cams[2] = {api_tmp("view1.png"), api_tmp("view2.png")};
    for (int c = 0; c < 2 && st == GT_OK; c++) {
        uint8_t *v = view(&photo, T[c], w, h);
        st = v ? gt_png_write(cams[c], w, h, 3, v) : GT_ERR_RUNTIME;
        free(v);
    }
    gt_image_free(&photo);
    CHECK(st == GT_OK, "writing the views: %s", gt_errmsg());
    gt_stitch_calib_opts o;
    gt_stitch_calib_opts_init(&o);
    o.inputs = cams, o.ninputs = 2;
    o.out = api_tmp("calib.txt");
    if (st == GT_OK) st = gt_stitch_calibrate(&o);
    CHECK(st == GT_OK, "calibrate: %s", gt_errmsg());
    gt_stitch_rig rig;
    if (st == GT_OK) st = gt_stitch_rig_load(o.out, &rig);
    CHECK(st == GT_OK, "the calibrated rig: %s", gt_errmsg());
    if (st != GT_OK) return;
    CHECK(rig.ncam == 2, "the rig has %d cameras", rig.ncam);
    double T1inv[9], truth[9], est[9], overlap = 0, corners = 0;
    gt_stitch_h_invert(T[0], T1inv);
    gt_stitch_h_mul(T1inv, T[1], truth);                 /* camera 2 -> camera 1 */
    gt_stitch_h_mul(rig.cam[0].Hinv, rig.cam[1].H, est); /* camera 2 -> panorama -> camera 1 */
    int inside = 0;
    for (int y = 0; y < h; y += 4)
        for (int x = 0; x < w; x += 4) {
            double tx, ty;
            apply(truth, x, y, &tx, &ty);
            if (tx < 0 || ty < 0 || tx > w - 1 || ty > h - 1) continue;
            overlap = fmax(overlap, miss(truth, est, x, y));
            inside++;
        }
    for (int k = 0; k < 4; k++) corners = fmax(corners, miss(truth, est, k % 2 ? w - 1 : 0, k / 2 ? h - 1 : 0));
    CHECK(inside > 400, "only %d points of camera 2 land in camera 1", inside);
    CHECK(overlap <= 0.2, "in the overlap, camera 2 lands up to %.3f px from the truth in camera 1", overlap);
    CHECK(corners <= 1.0, "camera 2's corners land up to %.3f px from the truth in camera 1", corners);
    for (int c = 0; c < 2; c++)
        CHECK(fabs(rig.cam[c].gain - 1) <= 0.03, "camera %d's gain is %.3f, the views have one exposure", c + 1,
              rig.cam[c].gain);
    gt_stitch_rig_free(&rig);
}

int main(void)
{
    const char *photo = api_testdata("stitch/photo_chelsea.png");
    if (!api_begin("stitch_job", photo)) return 1;
    stream();
    calibrate(photo);
    return api_end("stitch_job");
}
