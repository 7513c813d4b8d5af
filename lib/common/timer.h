/* Timers: host wall clock and CUDA events behind one API, and a table of
 * per-stage times printed by --timings. */
#ifndef GT_TIMER_H
#define GT_TIMER_H

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

double gt_now_ms(void); /* monotonic clock in milliseconds */

typedef struct gt_timer {
    bool gpu;        /* timed with CUDA events on `stream` */
    void *stream;    /* cudaStream_t or NULL (default stream) */
    void *ev[2];     /* cudaEvent_t */
    double t0;       /* host start */
} gt_timer;

/* Start a timer. With gpu = true (and a CUDA build) events are recorded on
 * `stream`; otherwise the host clock is used. */
void gt_timer_start(gt_timer *t, bool gpu, void *stream);
/* Stop and return elapsed milliseconds (waits for the stop event on a GPU timer). */
double gt_timer_stop(gt_timer *t);

#define GT_TIMINGS_MAX 48
typedef struct gt_timings {
    int n;
    struct {
        char name[40];
        double ms;
        long count;
    } stage[GT_TIMINGS_MAX];
} gt_timings;

void gt_timings_init(gt_timings *tm);
/* Accumulate `ms` into the stage called `name` (created on first use). */
void gt_timings_add(gt_timings *tm, const char *name, double ms);
double gt_timings_get(const gt_timings *tm, const char *name);
/* Table on `f`: stage, total ms, calls, mean ms, share. `title` may be NULL. */
void gt_timings_print(const gt_timings *tm, FILE *f, const char *title);

#ifdef __cplusplus
}
#endif
#endif
