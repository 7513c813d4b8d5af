/* Not a test: the driver of scripts/bench/gsrender-peers. Renders a scene
 * from a list of cameras with the CUDA rasterizer (or the CPU reference with
 * "cpu") and reports the time of each frame, image left on the device: the
 * host clock around one synchronised gt_gs_gpu_render with nothing
 * downloaded (preprocess, duplicate, sort, ranges, blend and the launches),
 * best and mean of REPS after a warm-up frame. Then downloads each view's
 * float image into OUT (float32, views one after another, rows top first, rgb
 * interleaved), for the image comparison with the peers.
 *
 *   bench_gs_render SCENE.ply CAMERAS REPS OUT.f32 [cpu] [square] [float]
 *
 * square: the reference's bounding-square binning; float: the SH as floats
 * on the device (gsrender --sh-precision float; default halves).
 * CAMERAS: a cameras.json (the reference training's, read as gsrender
 * --cameras reads it), or a .txt of one camera per line, w h fx fy R[9]
 * (world -> camera, rows) t[3] campos[3]. Prints per view "view I best_ms B mean_ms M pairs P", then
 * the per-stage means of one more timed pass ("stage NAME ms"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/timer.h"
#include "gs/gs.h"
#include "gt_config.h"

static int die(const char *what, const char *detail)
{
    fprintf(stderr, "bench_gs_render: error: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    return 1;
}

static int read_cameras(const char *path, gt_gs_camera **out, int *n)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    gt_gs_camera *cams = NULL;
    int count = 0;
    for (;;) {
        gt_gs_camera c;
        memset(&c, 0, sizeof c);
        int ok = fscanf(f, "%d %d %f %f", &c.width, &c.height, &c.fx, &c.fy) == 4;
        for (int k = 0; k < 9 && ok; k++) ok = fscanf(f, "%f", &c.R[k]) == 1;
        for (int k = 0; k < 3 && ok; k++) ok = fscanf(f, "%f", &c.t[k]) == 1;
        for (int k = 0; k < 3 && ok; k++) ok = fscanf(f, "%f", &c.campos[k]) == 1;
        if (!ok) break;
        c.cx = 0.5f * (float)c.width, c.cy = 0.5f * (float)c.height; /* centred, as the peers' */
        gt_gs_camera *grown = realloc(cams, (size_t)(count + 1) * sizeof *cams);
        if (!grown) break;
        cams = grown;
        cams[count++] = c;
    }
    fclose(f);
    *out = cams;
    *n = count;
    return count > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_gs_render SCENE.ply CAMERAS.json|CAMERAS.txt REPS OUT.f32 [cpu] [square] [float]\n");
        return 2;
    }
    int reps = atoi(argv[3]);
    bool cpu = false, square = false, sh_float = false;
    for (int k = 5; k < argc; k++) {
        if (!strcmp(argv[k], "cpu")) cpu = true;
        if (!strcmp(argv[k], "square")) square = true;
        if (!strcmp(argv[k], "float")) sh_float = true;
    }
#if !GT_HAVE_CUDA
    if (!cpu) return die("built without CUDA: pass cpu", NULL);
#endif
    gt_gs_scene s;
    if (gt_gs_scene_read(argv[1], &s) != GT_OK) return die("cannot read the scene", gt_errmsg());
    gt_gs_camera *cams;
    int nc;
    size_t cl = strlen(argv[2]);
    if (cl > 5 && !strcmp(argv[2] + cl - 5, ".json")) {
        if (gt_gs_cameras_read(argv[2], &cams, &nc) != GT_OK) return die("cameras.json", gt_errmsg());
    } else if (read_cameras(argv[2], &cams, &nc)) {
        return die("camera file: expected lines of w h fx fy R[9] t[3] campos[3]", argv[2]);
    }
    gt_gs_params p;
    gt_gs_params_init(&p);
    p.square_binning = square;
    p.sh_half = !sh_float;
    FILE *out = fopen(argv[4], "wb");
    if (!out) return die("cannot write", argv[4]);
    gt_gs_image im;
    memset(&im, 0, sizeof im);
#if GT_HAVE_CUDA
    gt_gs_gpu *g = NULL;
    if (!cpu && gt_gs_gpu_create(&s, &p, &g) != GT_OK) return die("gt_gs_gpu_create", gt_errmsg());
#endif
    gt_timings tm;
    gt_timings_init(&tm);
    for (int v = 0; v < nc; v++) {
        const gt_gs_camera *c = &cams[v];
        if (im.w != c->width || im.h != c->height) {
            gt_gs_image_free(&im);
            if (gt_gs_image_alloc(&im, c->width, c->height) != GT_OK) return die("image", gt_errmsg());
        }
        double best = 1e30, sum = 0;
        size_t pairs = 0;
        for (int r = -1; r < reps; r++) { /* -1: warm-up */
            gt_status st;
            double t0 = gt_now_ms();
#if GT_HAVE_CUDA
            if (!cpu)
                st = gt_gs_gpu_render(g, c, &im, 0, NULL);
            else
#endif
                st = gt_gs_render_cpu(&s, c, &p, &im);
            double dt = gt_now_ms() - t0;
            if (st != GT_OK) return die("render", gt_errmsg());
            if (r < 0) continue;
            best = dt < best ? dt : best;
            sum += dt;
        }
#if GT_HAVE_CUDA
        if (!cpu) {
            if (gt_gs_gpu_render(g, c, &im, 0, &tm) != GT_OK) return die("render", gt_errmsg());
            pairs = gt_gs_gpu_last_pairs(g);
            if (gt_gs_gpu_render(g, c, &im, GT_GS_OUT_FLOAT, NULL) != GT_OK) return die("render", gt_errmsg());
        }
#endif
        printf("view %d best_ms %.4f mean_ms %.4f pairs %zu\n", v, best, reps > 0 ? sum / reps : 0.0, pairs);
        size_t np = (size_t)c->width * c->height * 3;
        if (fwrite(im.rgb, sizeof(float), np, out) != np) return die("cannot write", argv[4]);
    }
    if (fclose(out)) return die("cannot write", argv[4]);
    for (int k = 0; k < tm.n; k++) printf("stage %s %.4f\n", tm.stage[k].name, tm.stage[k].ms / nc);
#if GT_HAVE_CUDA
    gt_gs_gpu_destroy(g);
#endif
    gt_gs_image_free(&im);
    gt_gs_scene_free(&s);
    free(cams);
    return 0;
}
