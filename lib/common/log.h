/* Messages on stderr with the program's name: errors, warnings, notices and
 * verbose detail, honouring -q and -v. */
#ifndef GT_LOG_H
#define GT_LOG_H

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

void gt_set_progname(const char *name);
const char *gt_progname(void);

/* verbosity: -1 quiet (errors only), 0 normal, 1 verbose (-v), 2 more (-vv) */
void gt_set_verbosity(int level);
int gt_verbosity(void);

void gt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));   /* always */
void gt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));    /* unless -q */
void gt_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));  /* unless -q */
void gt_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));    /* with -v */

/* Print "prog: error: <gt_errmsg()>" and return the exit code for s. */
int gt_report(gt_status s);

#ifdef __cplusplus
}
#endif
#endif
