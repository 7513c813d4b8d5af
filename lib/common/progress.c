#include "common/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/timer.h"

bool gt_progress_enabled(void)
{
    const char *env = getenv("GT_PROGRESS");
    if (env && *env) return strcmp(env, "0") != 0;
    return gt_verbosity() >= 0 && isatty(STDERR_FILENO);
}

void gt_progress_start(gt_progress *p, const char *label, double total)
{
    memset(p, 0, sizeof *p);
    snprintf(p->label, sizeof p->label, "%s", label ? label : "");
    p->total = total;
    p->t0 = gt_now_ms();
    p->last_draw = -1e9;
    p->active = gt_progress_enabled();
}

void gt_progress_update(gt_progress *p, double done, const char *extra)
{
    if (!p->active) return;
    double now = gt_now_ms();
    bool last = p->total > 0 && done >= p->total;
    if (!last && now - p->last_draw < 100.0) return; /* at most 10 redraws a second */
    p->last_draw = now;
    char line[256];
    int len;
    double secs = (now - p->t0) / 1e3;
    if (p->total > 0) {
        double f = done / p->total;
        if (f < 0) f = 0;
        if (f > 1) f = 1;
        char bar[31];
        int fill = (int)(f * 30.0 + 0.5);
        for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '.';
        bar[30] = 0;
        len = snprintf(line, sizeof line, "%s: [%s] %5.1f%% %.0f/%.0f %.1fs%s%s", p->label, bar,
                       100.0 * f, done, p->total, secs, extra ? " " : "", extra ? extra : "");
    } else {
        len = snprintf(line, sizeof line, "%s: %.0f %.1fs%s%s", p->label, done, secs,
                       extra ? " " : "", extra ? extra : "");
    }
    if (len < 0) return;
    if (len >= (int)sizeof line) len = (int)sizeof line - 1;
    int pad = p->width > len ? p->width - len : 0;
    fprintf(stderr, "\r%s%*s", line, pad, "");
    fflush(stderr);
    p->width = len;
}

void gt_progress_end(gt_progress *p)
{
    if (!p->active) return;
    if (p->width > 0) fprintf(stderr, "\r%*s\r", p->width, "");
    fflush(stderr);
    p->active = false;
}
