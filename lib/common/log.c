#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>

static const char *progname = "gputools";
static int verbosity = 0;

void gt_set_progname(const char *name) { progname = name; }
const char *gt_progname(void) { return progname; }
void gt_set_verbosity(int level) { verbosity = level; }
int gt_verbosity(void) { return verbosity; }

static void vput(const char *kind, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: %s", progname, kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

#define GT_LOG_FN(name, kind, cond)        \
    void name(const char *fmt, ...)        \
    {                                      \
        if (!(cond)) return;               \
        va_list ap;                        \
        va_start(ap, fmt);                 \
        vput(kind, fmt, ap);               \
        va_end(ap);                        \
    }

GT_LOG_FN(gt_error, "error: ", 1)
GT_LOG_FN(gt_warn, "warning: ", verbosity >= 0)
GT_LOG_FN(gt_notice, "", verbosity >= 0)
GT_LOG_FN(gt_info, "", verbosity >= 1)

int gt_report(gt_status s)
{
    if (s == GT_OK) return 0;
    const char *m = gt_errmsg();
    gt_error("%s", (m && m[0]) ? m : gt_status_name(s));
    return gt_exit_code(s);
}
