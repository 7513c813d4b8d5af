/* A progress bar on stderr for long work, drawn only when stderr is a TTY and
 * the program is not quiet (-q); silent otherwise, so logs stay clean. */
#ifndef GT_PROGRESS_H
#define GT_PROGRESS_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gt_progress {
    char label[48];
    double total;      /* <= 0: unknown total, shows a count */
    double t0, last_draw;
    bool active;
    int width;         /* last line length, for clearing */
} gt_progress;

void gt_progress_start(gt_progress *p, const char *label, double total);
/* `extra` (may be NULL) is appended, e.g. "residual 3.2e-07" or "58.1 fps". */
void gt_progress_update(gt_progress *p, double done, const char *extra);
void gt_progress_end(gt_progress *p);

/* Whether bars are drawn at all (TTY and not quiet; GT_PROGRESS=0 disables,
 * GT_PROGRESS=1 forces them, for tests). */
bool gt_progress_enabled(void);

#ifdef __cplusplus
}
#endif
#endif
