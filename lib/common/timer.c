#include "common/timer.h"

#include <string.h>
#include <time.h>

#include "gt_config.h"
#if GT_HAVE_CUDA
#include "common/gpu_runtime.h"
#endif

double gt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

void gt_timer_start(gt_timer *t, bool gpu, void *stream)
{
    memset(t, 0, sizeof *t);
    t->stream = stream;
#if GT_HAVE_CUDA
    if (gpu && gt_cu_event_pair_start(t->ev, stream) == 0) {
        t->gpu = true;
        return;
    }
#else
    (void)gpu;
#endif
    t->gpu = false;
    t->t0 = gt_now_ms();
}

double gt_timer_stop(gt_timer *t)
{
#if GT_HAVE_CUDA
    if (t->gpu) return gt_cu_event_pair_stop(t->ev, t->stream);
#endif
    return gt_now_ms() - t->t0;
}

void gt_timings_init(gt_timings *tm) { memset(tm, 0, sizeof *tm); }

void gt_timings_add(gt_timings *tm, const char *name, double ms)
{
    for (int i = 0; i < tm->n; i++)
        if (strcmp(tm->stage[i].name, name) == 0) {
            tm->stage[i].ms += ms;
            tm->stage[i].count++;
            return;
        }
    if (tm->n == GT_TIMINGS_MAX) return;
    int i = tm->n++;
    strncpy(tm->stage[i].name, name, sizeof tm->stage[i].name - 1);
    tm->stage[i].ms = ms;
    tm->stage[i].count = 1;
}

double gt_timings_get(const gt_timings *tm, const char *name)
{
    for (int i = 0; i < tm->n; i++)
        if (strcmp(tm->stage[i].name, name) == 0) return tm->stage[i].ms;
    return 0.0;
}

void gt_timings_print(const gt_timings *tm, FILE *f, const char *title)
{
    double total = 0;
    for (int i = 0; i < tm->n; i++) total += tm->stage[i].ms;
    if (title) fprintf(f, "%s\n", title);
    fprintf(f, "  %-28s %12s %8s %12s %7s\n", "stage", "total ms", "calls", "mean ms", "share");
    for (int i = 0; i < tm->n; i++) {
        double ms = tm->stage[i].ms;
        long c = tm->stage[i].count;
        fprintf(f, "  %-28s %12.3f %8ld %12.4f %6.1f%%\n", tm->stage[i].name, ms, c,
                c ? ms / (double)c : 0.0, total > 0 ? 100.0 * ms / total : 0.0);
    }
    fprintf(f, "  %-28s %12.3f\n", "sum", total);
}
