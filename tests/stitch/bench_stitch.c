/* Benchmark helper for scripts/bench/yuvstitch (not a test).
 *   bench_stitch rig DIR            write DIR/rig.txt: 4 x 1920x1080 cameras
 *                                   into a 7040x1080 (7.6 MP) panorama
 *   bench_stitch gen DIR FRAMES     write DIR/cam{1..4}.yuv (yuyv422, FRAMES each)
 *   bench_stitch gpu [ITERS]        GPU time per frame (warp+blend kernels, CUDA
 *                                   events) for none/feather/multiband(5), yuyv422
 *                                   and the same pipeline on packed RGBA, with
 *                                   the bytes-moved floor of each.
 *   bench_stitch io DIR [FRAMES]    CPU only: the CLI's output writer on a
 *                                   7040x1080 yuyv422 stream into DIR/io.yuv,
 *                                   through stdio (GT_NO_MMAP_WRITE) and through
 *                                   the parallel mmap appender, in MB/s; then
 *                                   the 4 input readers (DIR/cam*.yuv from gen),
 *                                   one thread per camera as in the CLI. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/device.h"
#include "common/timer.h"
#include "io/yuv.h"
#include "stitch/stitch.h"

enum { CW = 1920, CH = 1080, PW = 7040, PH = 1080, NC = 4 };

static void make_rig(gt_stitch_rig *rig)
{
    memset(rig, 0, sizeof *rig);
    rig->pano_w = PW;
    rig->pano_h = PH;
    rig->ncam = NC;
    double step = (PW - CW) / 3.0;
    for (int i = 0; i < NC; i++) {
        /* a mild perspective about the camera centre (outer edges widen) */
        double p = (i < 2 ? 1 : -1) * 2e-5, cx = CW / 2.0, cy = CH / 2.0;
        double A[9] = {1.0, 0.004 * (i - 1.5), 0, -0.002 * (i - 1.5), 1.0, 0, p, 0, 1.0};
        double Tin[9] = {1, 0, -cx, 0, 1, -cy, 0, 0, 1}, Tout[9] = {1, 0, i * step + cx, 0, 1, cy, 0, 0, 1};
        double T1[9], H[9];
        gt_stitch_h_mul(A, Tin, T1);
        gt_stitch_h_mul(Tout, T1, H);
        memcpy(rig->cam[i].H, H, sizeof H);
        gt_stitch_h_invert(H, rig->cam[i].Hinv);
        rig->cam[i].gain = 1.0f + 0.03f * (float)i;
    }
}

static int write_rig(const char *dir)
{
    gt_stitch_rig rig;
    make_rig(&rig);
    char path[4096];
    snprintf(path, sizeof path, "%s/rig.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f) return perror(path), 1;
    fprintf(f, "# 4 x 1920x1080 -> 7040x1080 (bench_stitch)\npanorama %d %d\n", PW, PH);
    for (int i = 0; i < NC; i++) {
        fprintf(f, "camera\n  H");
        for (int k = 0; k < 9; k++) fprintf(f, " %.17g", rig.cam[i].H[k]);
        fprintf(f, "\n  gain %.9g\n", rig.cam[i].gain);
    }
    return fclose(f) != 0;
}

static void fill_frame(uint8_t *fr, int cam, int frame)
{
    for (int y = 0; y < CH; y++) {
        uint8_t *r = fr + (size_t)y * CW * 2;
        for (int x = 0; x < CW; x += 2) {
            int X = x + cam * 1707 + frame * 3;
            r[2 * x] = (uint8_t)(64 + ((X * 7 + y * 3) & 127));
            r[2 * x + 1] = (uint8_t)(96 + ((X + y) & 63));
            r[2 * x + 2] = (uint8_t)(64 + (((X + 1) * 7 + y * 3) & 127));
            r[2 * x + 3] = (uint8_t)(96 + ((X - y) & 63));
        }
    }
}

static int gen(const char *dir, int frames)
{
    uint8_t *fr = malloc((size_t)CW * CH * 2);
    for (int c = 0; c < NC; c++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/cam%d.yuv", dir, c + 1);
        FILE *f = fopen(path, "wb");
        if (!f) return perror(path), 1;
        for (int k = 0; k < frames; k++) {
            if (k < 8) fill_frame(fr, c, k); /* then repeat the 8 frames: generation stays fast */
            else if (k == 8) fclose(f), f = NULL;
            if (f) fwrite(fr, 1, (size_t)CW * CH * 2, f);
        }
        if (f) fclose(f);
        if (frames > 8) { /* append copies of the first 8 frames */
            FILE *in = fopen(path, "rb");
            size_t fb = (size_t)CW * CH * 2 * 8;
            uint8_t *blk = malloc(fb);
            if (fread(blk, 1, fb, in) != fb) return fprintf(stderr, "short read\n"), 1;
            fclose(in);
            FILE *o = fopen(path, "ab");
            for (int k = 8; k < frames; k += 8) {
                size_t n = (size_t)(frames - k < 8 ? frames - k : 8) * CW * CH * 2;
                fwrite(blk, 1, n, o);
            }
            fclose(o);
            free(blk);
        }
    }
    free(fr);
    return 0;
}

/* bytes a pass must move at least (reads + writes of device memory) */
static double floor_bytes(const gt_stitch_plan *p, double in_bytes_per_sample)
{
    double b = 0;
    int N = p->ncam;
    for (int q = 0; q < 3; q++) {
        const gt_stitch_plane *pl = &p->plane[q];
        double n = (double)pl->out.w * pl->out.h;
        if (p->blend == GT_BLEND_NONE) b += n * (in_bytes_per_sample + 1 + 1); /* sample, owner, out */
        else if (p->blend == GT_BLEND_FEATHER) b += n * (in_bytes_per_sample * 1.2 + 4.0 * N + 1);
        else {
            b += n * in_bytes_per_sample * N + n * 4 * N; /* warp: read, write float */
            for (int l = 0; l < pl->levels; l++) {
                double nl = (double)pl->lw[l] * pl->lh[l];
                if (l > 0) b += 4.0 * N * (4 * nl + nl); /* reduce: read fine (4 nl), write */
                b += 4.0 * N * (nl + nl) + 4.0 * nl;    /* level blend: G, weights, write B */
                if (l + 1 < pl->levels) b += 4.0 * N * nl / 4 + 4.0 * (nl + nl + nl / 4); /* coarse reads, collapse */
            }
            b += n * (4 + 1 + 1); /* store */
        }
    }
    return b;
}

static int gpu(int iters)
{
    gt_device_kind k;
    if (gt_device_choose(GT_DEVICE_CUDA, 0, &k)) return fprintf(stderr, "%s\n", gt_errmsg()), 4;
    gt_stitch_rig rig;
    make_rig(&rig);
    static const char *names[3] = {"direct", "feather", "multiband(5)"};
    double bw = getenv("BENCH_BW_GBPS") ? atof(getenv("BENCH_BW_GBPS")) : 3350.0;
    printf("%-14s %-8s %10s %10s %12s %12s\n", "blend", "format", "warp ms", "blend ms", "GPU ms/frame", "floor ms");
    for (int rgba = 0; rgba < 2; rgba++)
        for (int b = 0; b < 3; b++) {
            gt_stitch_plan_opts o;
            gt_stitch_plan_opts_init(&o);
            o.blend = (gt_blend_mode)b;
            gt_stitch_plan plan;
            if (gt_stitch_plan_build(&rig, CW, CH, rgba ? GT_PIX_YUV444P : GT_PIX_YUYV422, &o, &plan))
                return fprintf(stderr, "%s\n", gt_errmsg()), 1;
            if (rgba) { /* packed RGBA: three blended channels, alpha carried in memory */
                for (int q = 0; q < 3; q++) {
                    plan.plane[q].in = (gt_plane_view){(size_t)q, 4 * CW, 4, CW, CH, 1, 1, 0, 0};
                    plan.plane[q].out = (gt_plane_view){(size_t)q, 4 * PW, 4, PW, PH, 1, 1, 0, 0};
                }
                plan.in_bytes = (size_t)CW * CH * 4;
                plan.out_bytes = (size_t)PW * PH * 4;
            }
            gt_stitch_gpu *g;
            if (gt_stitch_gpu_create(&plan, &g)) return fprintf(stderr, "%s\n", gt_errmsg()), 4;
            for (int c = 0; c < NC; c++) {
                uint8_t *fr = gt_stitch_gpu_in_buf(g, 0, c);
                if (rgba) for (size_t j = 0; j < plan.in_bytes; j++) fr[j] = (uint8_t)(j * 7 + c);
                else fill_frame(fr, c, 0);
                memcpy(gt_stitch_gpu_in_buf(g, 1, c), fr, plan.in_bytes);
            }
            /* warm up, then reset the averages by measuring a fresh object's deltas */
            for (int it = 0; it < 3; it++) gt_stitch_gpu_submit(g, it & 1), gt_stitch_gpu_wait(g, it & 1);
            double ms0[4], ms1[4];
            long f0, f1;
            gt_stitch_gpu_stage_ms(g, ms0, &f0);
            for (int it = 0; it < iters; it++) {
                if (gt_stitch_gpu_wait(g, it & 1) || gt_stitch_gpu_submit(g, it & 1))
                    return fprintf(stderr, "%s\n", gt_errmsg()), 4;
            }
            gt_stitch_gpu_wait(g, 0), gt_stitch_gpu_wait(g, 1);
            gt_stitch_gpu_stage_ms(g, ms1, &f1);
            double w = (ms1[1] * f1 - ms0[1] * f0) / (f1 - f0), bl = (ms1[2] * f1 - ms0[2] * f0) / (f1 - f0);
            double fb = floor_bytes(&plan, 1.0);
            printf("%-14s %-8s %10.4f %10.4f %12.4f %12.4f   (%.1f MB at %.0f GB/s)\n", names[b],
                   rgba ? "rgba" : "yuyv422", w, bl, w + bl, fb / (bw * 1e6), fb / 1e6, bw);
            gt_stitch_gpu_destroy(g);
            gt_stitch_plan_free(&plan);
        }
    return 0;
}

/* variant 0: stdio (the writer before), 1: mapped appender forced to mmap,
 * 2: forced to pwrite, 3: auto (what the CLI uses) */
static const char *variant_names[4] = {"stdio fwrite (before)", "mmap + pool (forced)", "pwrite (forced)",
                                       "auto (the CLI's default)"};
static double write_run(const char *path, int frames, const uint8_t *fr, int variant)
{
    if (variant == 0) setenv("GT_NO_MMAP_WRITE", "1", 1);
    else unsetenv("GT_NO_MMAP_WRITE");
    static const char *modes[4] = {"", "mmap", "pwrite", "auto"};
    setenv("GT_MAPOUT_MODE", modes[variant], 1);
    unlink(path);
    double t0 = gt_now_ms();
    gt_yuv_writer *w;
    if (gt_yuv_create(path, false, PW, PH, GT_PIX_YUYV422, 25, 1, &w)) return fprintf(stderr, "%s\n", gt_errmsg()), -1;
    for (int k = 0; k < frames; k++)
        if (gt_yuv_write_frame(w, fr)) return fprintf(stderr, "%s\n", gt_errmsg()), -1;
    if (gt_yuv_finish(w, true)) return fprintf(stderr, "%s\n", gt_errmsg()), -1;
    double ms = gt_now_ms() - t0;
    unlink(path);
    return ms;
}

typedef struct {
    const char *path;
    uint8_t *buf;
    long frames;
    double ms;
} read_job;

static void *read_main(void *p)
{
    read_job *j = p;
    gt_yuv_reader *r;
    if (gt_yuv_open(j->path, CW, CH, GT_PIX_YUYV422, &r)) return fprintf(stderr, "%s\n", gt_errmsg()), NULL;
    bool got = true;
    double t0 = gt_now_ms();
    while (got && !gt_yuv_read_frame(r, j->buf, &got)) j->frames += got;
    j->ms = gt_now_ms() - t0;
    gt_yuv_close(r);
    return NULL;
}

static int io(const char *dir, int frames)
{
    size_t fb = gt_pixfmt_frame_bytes(GT_PIX_YUYV422, PW, PH);
    uint8_t *fr = malloc(fb);
    for (size_t j = 0; j < fb; j++) fr[j] = (uint8_t)(j * 131 >> 7);
    char path[4096];
    snprintf(path, sizeof path, "%s/io.yuv", dir);
    printf("output writer, %d frames of %.1f MB into %s:\n", frames, fb / 1e6, path);
    const char *wt = getenv("GT_WRITE_THREADS");
    printf("  (copy threads of the mmap pool: %s)\n", wt ? wt : "default, half the cores up to 8");
    for (int rep = 0; rep < 2; rep++)
        for (int v = 0; v < 4; v++) {
            double ms = write_run(path, frames, fr, v);
            if (ms < 0) return 1;
            printf("  %-28s %8.2f ms/frame %8.0f MB/s  (%.0f frames/s)\n", variant_names[v], ms / frames,
                   fb * (double)frames / 1e3 / ms, frames / (ms / 1e3));
        }
    unsetenv("GT_NO_MMAP_WRITE");
    unsetenv("GT_MAPOUT_MODE");
    free(fr);
    read_job j[NC];
    pthread_t th[NC];
    double t0 = gt_now_ms();
    for (int c = 0; c < NC; c++) {
        static char paths[NC][4096];
        snprintf(paths[c], sizeof paths[c], "%s/cam%d.yuv", dir, c + 1);
        j[c] = (read_job){paths[c], malloc((size_t)CW * CH * 2), 0, 0};
        pthread_create(&th[c], NULL, read_main, &j[c]);
    }
    long tot = 0;
    for (int c = 0; c < NC; c++) pthread_join(th[c], NULL), tot += j[c].frames, free(j[c].buf);
    double ms = gt_now_ms() - t0;
    if (!tot) return fprintf(stderr, "no input frames: run 'bench_stitch gen %s N' first\n", dir), 1;
    printf("input readers, 4 threads: %ld frames of %.1f MB in %.1f ms: %.0f MB/s, %.2f ms per 4-camera set (%.0f sets/s)\n",
           tot, CW * CH * 2 / 1e6, ms, tot * (double)CW * CH * 2 / 1e3 / ms, ms / (tot / (double)NC),
           tot / (double)NC / (ms / 1e3));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "io")) return io(argv[2], argc >= 4 ? atoi(argv[3]) : 60);
    if (argc >= 3 && !strcmp(argv[1], "rig")) return write_rig(argv[2]);
    if (argc >= 4 && !strcmp(argv[1], "gen")) return gen(argv[2], atoi(argv[3]));
    if (argc >= 2 && !strcmp(argv[1], "gpu")) return gpu(argc >= 3 ? atoi(argv[2]) : 50);
    fprintf(stderr, "usage: bench_stitch rig DIR | gen DIR FRAMES | gpu [ITERS] | io DIR [FRAMES]\n");
    return 2;
}
