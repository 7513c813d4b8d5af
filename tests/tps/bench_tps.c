/* Benchmark helper (not a test) for scripts/bench/stpsfit, through lib/tps:
 *   bench_tps fit N [REPS]      fit N random pairs on the GPU; per-stage ms of the
 *                               fastest run (context creation reported apart)
 *   bench_tps apply M N         evaluate a fitted N-point spline at M random points
 * Prints "key value" lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/device.h"
#include "common/log.h"
#include "tps/tps.h"
#include "tps_testutil.h"

/* the GPU fit forms K's entries within "Q2^T K Q2" (no "kernel matrix" stage) */
static const char *stages[] = {"allocate", "transfer", "QR", "Q2^T K Q2", "Cholesky", "back-substitution"};
#define NSTAGES (int)(sizeof stages / sizeof stages[0])

int main(int argc, char **argv)
{
    gt_set_progname("bench_tps");
    if (argc < 3) {
        fprintf(stderr, "usage: bench_tps fit N [REPS] | apply M N\n");
        return 2;
    }
    gt_device_kind k;
    if (gt_device_choose(GT_DEVICE_CUDA, 0, &k) != GT_OK) return gt_report(GT_ERR_GPU);
    gt_rng r = {1};
    gt_timings ctx;
    gt_timings_init(&ctx);
    gt_tps_fit_opts o = {0};
    o.device = GT_DEVICE_CUDA;
    if (!strcmp(argv[1], "fit")) {
        size_t n = strtoull(argv[2], NULL, 10);
        int reps = argc > 3 ? atoi(argv[3]) : 3;
        double *src = rand_points(&r, n, -1, 1, false), *dst = deform(&r, src, n, 0.01);
        double best = 1e30, bs[NSTAGES] = {0};
        o.lambda = 1e-6;
        for (int i = 0; i < reps + 1; i++) {
            gt_timings tm;
            gt_timings_init(&tm);
            o.timings = i == 0 ? &ctx : &tm; /* run 0: context + warm-up */
            gt_tps t;
            gt_tps_init(&t);
            double t0 = gt_now_ms();
            gt_status s = gt_tps_fit(src, dst, n, &o, &t);
            double wall = gt_now_ms() - t0;
            if (s != GT_OK) return gt_report(s);
            gt_tps_free(&t);
            if (i == 0) continue;
            if (wall < best) {
                best = wall;
                for (int j = 0; j < NSTAGES; j++) bs[j] = gt_timings_get(&tm, stages[j]);
            }
        }
        printf("n %zu\ncontext_ms %.3f\nfit_wall_ms %.3f\n", n, gt_timings_get(&ctx, "context"), best);
        for (int j = 0; j < NSTAGES; j++) printf("stage %s_ms %.3f\n", stages[j], bs[j]);
        free(src);
        free(dst);
    } else if (!strcmp(argv[1], "apply") && argc > 3) {
        size_t M = strtoull(argv[2], NULL, 10), n = strtoull(argv[3], NULL, 10);
        double *src = rand_points(&r, n, -1, 1, false), *dst = deform(&r, src, n, 0.01);
        o.lambda = 1e-3;
        o.timings = &ctx;
        gt_tps t;
        gt_tps_init(&t);
        gt_status s = gt_tps_fit(src, dst, n, &o, &t);
        if (s != GT_OK) return gt_report(s);
        double *p = rand_points(&r, M, -1.2, 1.2, false);
        double best = 1e30, tr = 0;
        for (int i = 0; i < 4; i++) {
            gt_timings tm;
            gt_timings_init(&tm);
            s = gt_tps_eval(&t, p, M, p, GT_DEVICE_CUDA, &tm); /* in place: points move a bit */
            if (s != GT_OK) return gt_report(s);
            double e = gt_timings_get(&tm, "evaluate");
            if (i > 0 && e < best) { best = e; tr = gt_timings_get(&tm, "transfer"); }
        }
        printf("M %zu\nn %zu\nevaluate_ms %.3f\ntransfer_ms %.3f\nGevals_per_s %.2f\n", M, n, best,
               tr, (double)M * n / (best * 1e-3) / 1e9);
        gt_tps_free(&t);
        free(p); free(src); free(dst);
    } else {
        return 2;
    }
    gt_device_shutdown();
    return 0;
}
