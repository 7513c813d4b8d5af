/* GT_STARTUP_TRACE (trace.h): the process start time from /proc/self/stat,
 * read once by a constructor, and one stderr line per milestone. */
#include "common/trace.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"

static bool trace_enabled;
static double ctor_ms;     /* CLOCK_MONOTONIC when the constructor ran */
static double ctor_age_ms; /* process age then: CLOCK_BOOTTIME - start time */

static double clock_ms(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Field 22 of /proc/self/stat: start time in clock ticks since boot; -1 if
 * unreadable. The second field (comm) may hold spaces and parentheses, so
 * the fields are counted from its last ')'. */
static double start_since_boot_ms(void)
{
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f) return -1;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    char *p = strrchr(buf, ')');
    if (!p) return -1;
    p++;
    for (int field = 3; field < 22; field++) { /* p is before field 3 */
        p = strchr(p + 1, ' ');
        if (!p) return -1;
    }
    unsigned long long ticks = strtoull(p + 1, NULL, 10);
    long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? ticks * 1e3 / hz : -1;
}

__attribute__((constructor)) static void trace_init(void)
{
    const char *e = getenv("GT_STARTUP_TRACE");
    trace_enabled = e && *e && strcmp(e, "0") != 0;
    if (!trace_enabled) return;
    ctor_ms = clock_ms(CLOCK_MONOTONIC);
    double start = start_since_boot_ms();
    ctor_age_ms = start >= 0 ? clock_ms(CLOCK_BOOTTIME) - start : 0;
    if (ctor_age_ms < 0) ctor_age_ms = 0;
}

bool gt_trace_on(void) { return trace_enabled; }

double gt_trace_ms(void)
{
    return ctor_age_ms + (clock_ms(CLOCK_MONOTONIC) - ctor_ms);
}

void gt_trace(const char *event)
{
    if (!trace_enabled) return;
    /* the constructor's line waits for the first call, which comes after
     * main has set the program's name */
    static atomic_flag ctor_printed = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&ctor_printed))
        fprintf(stderr, "%s: startup: %8.1f ms constructor (shared libraries mapped)\n", gt_progname(),
                ctor_age_ms);
    /* one fprintf: lines from two threads do not interleave */
    fprintf(stderr, "%s: startup: %8.1f ms %s\n", gt_progname(), gt_trace_ms(), event);
}
