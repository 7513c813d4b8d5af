#include "common/status.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char msg[1024];

gt_status gt_vfail(gt_status code, const char *fmt, va_list ap)
{
    vsnprintf(msg, sizeof msg, fmt, ap);
    return code;
}

gt_status gt_fail(gt_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gt_vfail(code, fmt, ap);
    va_end(ap);
    return code;
}

static void append(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void append(const char *fmt, ...)
{
    size_t len = strlen(msg);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + len, sizeof msg - len, fmt, ap);
    va_end(ap);
}

gt_status gt_fail_at(gt_status code, const char *file, long line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gt_vfail(code, fmt, ap);
    va_end(ap);
    if (!file) file = "-";
    if (strcmp(file, "-") == 0) file = "<stdin>";
    if (line > 0) append(" (%s:%ld)", file, line);
    else append(" (%s)", file);
    return code;
}

gt_status gt_fail_at_byte(gt_status code, const char *file, long long offset,
                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gt_vfail(code, fmt, ap);
    va_end(ap);
    if (!file || strcmp(file, "-") == 0) file = "<stdin>";
    append(" (%s: byte %lld)", file, offset);
    return code;
}

void gt_errmsg_prefix(const char *fmt, ...)
{
    char old[sizeof msg];
    memcpy(old, msg, sizeof msg);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (old[0]) append(": %s", old);
}

const char *gt_errmsg(void) { return msg; }
void gt_errmsg_clear(void) { msg[0] = 0; }

const char *gt_status_name(gt_status s)
{
    switch (s) {
    case GT_OK: return "ok";
    case GT_ERR_RUNTIME: return "runtime failure";
    case GT_ERR_USAGE: return "usage error";
    case GT_ERR_DATA: return "bad input data";
    case GT_ERR_GPU: return "GPU unavailable or out of memory";
    }
    return "unknown status";
}

int gt_exit_code(gt_status s)
{
    return (s >= GT_OK && s <= GT_ERR_GPU) ? (int)s : 1;
}
