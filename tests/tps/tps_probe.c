/* Test helper (not a test): fit through lib/tps and evaluate, on plain stdin:
 *   tps_probe LAMBDA KERNEL [cpu|cuda] < "n m\n" + n lines "sx sy sz tx ty tz" + m lines "x y z"
 * prints m lines "fx fy fz" (%.17g). Used by the scipy interop test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/device.h"
#include "common/log.h"
#include "tps/tps.h"

int main(int argc, char **argv)
{
    gt_set_progname("tps_probe");
    if (argc < 3) return 2;
    size_t n, m;
    if (scanf("%zu %zu", &n, &m) != 2) return 3;
    double *src = malloc(n * 3 * sizeof(double)), *dst = malloc(n * 3 * sizeof(double));
    double *p = malloc((m ? m : 1) * 3 * sizeof(double));
    for (size_t i = 0; i < n; i++)
        if (scanf("%lf %lf %lf %lf %lf %lf", &src[3 * i], &src[3 * i + 1], &src[3 * i + 2],
                  &dst[3 * i], &dst[3 * i + 1], &dst[3 * i + 2]) != 6)
            return 3;
    for (size_t i = 0; i < m; i++)
        if (scanf("%lf %lf %lf", &p[3 * i], &p[3 * i + 1], &p[3 * i + 2]) != 3) return 3;
    gt_tps_fit_opts o = {0};
    o.lambda = atof(argv[1]);
    o.kernel = strcmp(argv[2], "r") ? GT_TPS_R2LOGR : GT_TPS_R;
    o.device = argc > 3 && !strcmp(argv[3], "cuda") ? GT_DEVICE_CUDA : GT_DEVICE_CPU;
    if (o.device == GT_DEVICE_CUDA) {
        char why[256];
        gt_device_kind k;
        if (gt_gpu_count(why, sizeof why) == 0 || gt_device_choose(GT_DEVICE_CUDA, 0, &k) != GT_OK) {
            fprintf(stderr, "no GPU (%s)\n", why);
            return 77;
        }
    }
    gt_tps t;
    gt_tps_init(&t);
    gt_status s = gt_tps_fit(src, dst, n, &o, &t);
    if (s == GT_OK) s = gt_tps_eval(&t, p, m, p, o.device, NULL);
    if (s != GT_OK) return gt_report(s);
    for (size_t i = 0; i < m; i++) printf("%.17g %.17g %.17g\n", p[3 * i], p[3 * i + 1], p[3 * i + 2]);
    gt_tps_free(&t);
    free(src); free(dst); free(p);
    return 0;
}
