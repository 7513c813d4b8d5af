/* Start-up trace: with GT_STARTUP_TRACE=1 in the environment, each milestone
 * of a program's start (main entry, device chosen, context ready, libraries
 * loaded, input read, first kernel, job done, output written) prints one line
 * on stderr,
 *   "<prog>: startup: <ms> ms <event>"
 * where <ms> is the time since the process was started (exec), taken from
 * /proc/self/stat (one clock tick of resolution, 10 ms on most kernels) plus
 * the monotonic clock since libcore's constructor ran. The first line,
 * "constructor", gives the time libcore's constructor ran, after the
 * dynamic loader had mapped every shared library the program links: the
 * loader's cost. Unset or 0: nothing is printed and a call costs
 * one branch. Safe from any thread. */
#ifndef GT_TRACE_H
#define GT_TRACE_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether GT_STARTUP_TRACE is on. */
bool gt_trace_on(void);
/* Print the line for `event` (when on). */
void gt_trace(const char *event);
/* Milliseconds since the process started (the number gt_trace prints). */
double gt_trace_ms(void);

#ifdef __cplusplus
}
#endif
#endif
