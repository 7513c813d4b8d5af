/* Benchmark helper for scripts/bench/yuvstitch-wide (not a test).
 *   bench_wide gpu RIG [ITERS]   GPU time per frame (warp and blend kernels,
 *                                CUDA events) of RIG's 6 x 1920x1080 yuyv422
 *                                cameras for direct, feather and
 *                                multiband(5), with each one's bytes-moved
 *                                floor; then the multiband warp computing
 *                                each sample's camera position in the kernel
 *                                (the stitcher's way) against reading it from
 *                                a precomputed map (gt_stitch_gpu_bench_warp).
 *   bench_wide plan RIG          the plan's time on the CPU (what the start
 *                                of a run pays before the first frame). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/device.h"
#include "common/timer.h"
#include "io/yuv.h"
#include "stitch/stitch.h"

enum { CW = 1920, CH = 1080 };

/* bytes a frame must move at least (reads + writes of device memory) */
static double floor_bytes(const gt_stitch_plan *p)
{
    double b = 0;
    int N = p->ncam;
    for (int q = 0; q < 3; q++) {
        const gt_stitch_plane *pl = &p->plane[q];
        double n = (double)pl->out.w * pl->out.h, cov = 0;
        for (int i = 0; i < N; i++) { /* the samples camera i's box covers */
            const int *bx = pl->mbbox[0][i];
            if (p->blend == GT_BLEND_MULTIBAND && bx[2] >= bx[0]) cov += (double)(bx[2] - bx[0] + 1) * (bx[3] - bx[1] + 1);
        }
        if (p->blend == GT_BLEND_NONE) b += n * 3;                 /* sample, owner, out */
        else if (p->blend == GT_BLEND_FEATHER) b += n * (1.2 + 8); /* samples, two weights, out */
        else {
            b += cov * (1 + 4);                                    /* warp: read, write float */
            for (int l = 1; l < pl->levels; l++) b += cov / (1 << (2 * l)) * 4 * 9; /* pyramids, blends */
            b += n * 6;                                            /* collapse, store */
        }
    }
    return b;
}

static int load(const char *path, gt_stitch_rig *rig)
{
    if (gt_stitch_rig_load(path, rig)) return fprintf(stderr, "%s\n", gt_errmsg()), 1;
    return 0;
}

static int gpu(const char *rigpath, int iters)
{
    gt_device_kind k;
    if (gt_device_choose(GT_DEVICE_CUDA, 0, &k)) return fprintf(stderr, "%s\n", gt_errmsg()), 4;
    gt_stitch_rig rig;
    if (load(rigpath, &rig)) return 1;
    static const char *names[3] = {"direct", "feather", "multiband(5)"};
    double bw = getenv("BENCH_BW_GBPS") ? atof(getenv("BENCH_BW_GBPS")) : 3350.0;
    printf("%d x %dx%d yuyv422 -> %dx%d %s\n", rig.ncam, CW, CH, rig.pano_w, rig.pano_h,
           rig.ray ? "(through rays)" : "(through homographies)");
    printf("%-14s %10s %10s %12s %12s\n", "blend", "warp ms", "blend ms", "GPU ms/frame", "floor ms");
    for (int b = 0; b < 3; b++) {
        gt_stitch_plan_opts o;
        gt_stitch_plan_opts_init(&o);
        o.blend = (gt_blend_mode)b;
        gt_stitch_plan plan;
        if (gt_stitch_plan_build(&rig, CW, CH, GT_PIX_YUYV422, &o, &plan)) return fprintf(stderr, "%s\n", gt_errmsg()), 1;
        gt_stitch_gpu *g;
        if (gt_stitch_gpu_create(&plan, &g)) return fprintf(stderr, "%s\n", gt_errmsg()), 4;
        for (int s = 0; s < 2; s++)
            for (int c = 0; c < rig.ncam; c++) {
                uint8_t *fr = gt_stitch_gpu_in_buf(g, s, c);
                for (size_t j = 0; j < plan.in_bytes; j++) fr[j] = (uint8_t)(64 + ((j * 7 + (size_t)c * 13) & 127));
            }
        for (int it = 0; it < 3; it++) gt_stitch_gpu_submit(g, it & 1), gt_stitch_gpu_wait(g, it & 1);
        double ms0[4], ms1[4];
        long f0, f1;
        gt_stitch_gpu_stage_ms(g, ms0, &f0);
        for (int it = 0; it < iters; it++)
            if (gt_stitch_gpu_wait(g, it & 1) || gt_stitch_gpu_submit(g, it & 1)) return fprintf(stderr, "%s\n", gt_errmsg()), 4;
        gt_stitch_gpu_wait(g, 0), gt_stitch_gpu_wait(g, 1);
        gt_stitch_gpu_stage_ms(g, ms1, &f1);
        double w = (ms1[1] * f1 - ms0[1] * f0) / (f1 - f0), bl = (ms1[2] * f1 - ms0[2] * f0) / (f1 - f0);
        double fb = floor_bytes(&plan);
        printf("%-14s %10.4f %10.4f %12.4f %12.4f   (%.1f MB at %.0f GB/s)\n", names[b], w, bl, w + bl, fb / (bw * 1e6),
               fb / 1e6, bw);
        gt_stitch_gpu_destroy(g);
        if (b == GT_BLEND_MULTIBAND && rig.ray) {
            double ms[2];
            if (gt_stitch_gpu_bench_warp(&plan, iters, ms)) return fprintf(stderr, "%s\n", gt_errmsg()), 4;
            printf("multiband warp, 3 planes: computed in the kernel %.4f ms/frame, read from a map %.4f ms/frame "
                   "(map %.0f MB): %s\n", ms[0], ms[1],
                   8.0 * rig.ncam * ((double)plan.plane[0].out.w * plan.plane[0].out.h +
                                     2.0 * plan.plane[1].out.w * plan.plane[1].out.h) / 1e6,
                   ms[0] <= ms[1] ? "computing is faster (the stitcher's way)" : "the map is faster");
        }
        gt_stitch_plan_free(&plan);
    }
    gt_stitch_rig_free(&rig);
    return 0;
}

static int plan_time(const char *rigpath)
{
    gt_stitch_rig rig;
    if (load(rigpath, &rig)) return 1;
    for (int b = 0; b < 3; b++) {
        gt_stitch_plan_opts o;
        gt_stitch_plan_opts_init(&o);
        o.blend = (gt_blend_mode)b;
        gt_stitch_plan plan;
        double t0 = gt_now_ms();
        if (gt_stitch_plan_build(&rig, CW, CH, GT_PIX_YUYV422, &o, &plan)) return fprintf(stderr, "%s\n", gt_errmsg()), 1;
        printf("plan (blend %d): %.1f ms\n", b, gt_now_ms() - t0);
        gt_stitch_plan_free(&plan);
    }
    gt_stitch_rig_free(&rig);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "gpu")) return gpu(argv[2], argc >= 4 ? atoi(argv[3]) : 50);
    if (argc >= 3 && !strcmp(argv[1], "plan")) return plan_time(argv[2]);
    fprintf(stderr, "usage: bench_wide gpu RIG [ITERS] | plan RIG\n");
    return 2;
}
