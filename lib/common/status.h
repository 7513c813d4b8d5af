/* Status codes shared by all of libcore, and the error message behind them.
 *
 * A function that fails returns a gt_status other than GT_OK and leaves a
 * one-line message, retrievable with gt_errmsg(), that says what went wrong
 * and, for bad input data, where: "<what> (<file>:<line>)".  The numeric value
 * of a status is the exit code a program returns for it. */
#ifndef GT_STATUS_H
#define GT_STATUS_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gt_status {
    GT_OK = 0,
    GT_ERR_RUNTIME = 1, /* runtime failure: I/O error, solver did not converge, ... */
    GT_ERR_USAGE = 2,   /* bad command line */
    GT_ERR_DATA = 3,    /* bad input data */
    GT_ERR_GPU = 4,     /* GPU unavailable, CUDA failure or out of (device) memory */
} gt_status;

/* Set the message (printf-style) and return code, so `return gt_fail(...)` reads well. */
gt_status gt_fail(gt_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
gt_status gt_vfail(gt_status code, const char *fmt, va_list ap);

/* Like gt_fail, with a place appended: "<what> (<file>:<line>)".  line <= 0
 * omits the line. */
gt_status gt_fail_at(gt_status code, const char *file, long line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Same, with a byte offset: "<what> (<file>: byte <offset>)". */
gt_status gt_fail_at_byte(gt_status code, const char *file, long long offset,
                          const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Prefix the current message with more context: "<ctx>: <old message>". */
void gt_errmsg_prefix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

const char *gt_errmsg(void);     /* last message ("" if none) */
void gt_errmsg_clear(void);
const char *gt_status_name(gt_status s);
int gt_exit_code(gt_status s);   /* 0..4 */

#define GT_TRY(expr)                        \
    do {                                    \
        gt_status gt_try_s_ = (expr);       \
        if (gt_try_s_ != GT_OK) return gt_try_s_; \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
