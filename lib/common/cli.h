/* Command-line helpers shared by all six programs: the common options
 * (--device, --gpu, --timings, -q, -v, --version) and value parsers with range
 * checks.  Parsers return GT_ERR_USAGE with a message naming the option, the
 * bad value and what was expected. */
#ifndef GT_CLI_H
#define GT_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/device.h"
#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gt_common_opts {
    gt_device_kind device; /* --device auto|cuda|cpu (default auto) */
    int gpu;               /* --gpu N (default 0) */
    bool timings;          /* --timings */
    int verbosity;         /* -q: -1, default 0, each -v adds 1 */
} gt_common_opts;

enum {
    GT_OPT_DEVICE = 0x1000,
    GT_OPT_GPU,
    GT_OPT_TIMINGS,
    GT_OPT_VERSION,
    GT_OPT_TOOL_BASE = 0x1100 /* first value free for a tool's own long options */
};

/* Put these in a tool's struct option table (before its terminating zero entry);
 * add GT_COMMON_SHORTOPTS to its getopt string. 'h' is the tool's to handle. */
#define GT_COMMON_LONGOPTS                                   \
    {"device", required_argument, 0, GT_OPT_DEVICE},         \
    {"gpu", required_argument, 0, GT_OPT_GPU},               \
    {"timings", no_argument, 0, GT_OPT_TIMINGS},             \
    {"quiet", no_argument, 0, 'q'},                          \
    {"verbose", no_argument, 0, 'v'},                        \
    {"help", no_argument, 0, 'h'},                           \
    {"version", no_argument, 0, GT_OPT_VERSION}
#define GT_COMMON_SHORTOPTS "qvh"

/* The common options' lines for --help. */
#define GT_COMMON_HELP                                                            \
    "Common options:\n"                                                           \
    "      --device auto|cuda|cpu  where to compute (auto: CUDA if a GPU is present)\n" \
    "      --gpu N             GPU to use, from 0, of those CUDA_VISIBLE_DEVICES\n"    \
    "                          leaves (default 0; see DEVICE in the man page)\n"   \
    "      --timings           print per-stage times to stderr\n"                 \
    "  -q, --quiet             print errors only\n"                               \
    "  -v, --verbose           more detail on stderr (repeat for more)\n"         \
    "  -h, --help              print this help and exit\n"                        \
    "      --version           print the version and exit\n"

void gt_common_opts_init(gt_common_opts *o);

typedef enum {
    GT_CLI_NOT_COMMON = 0, /* not a common option: the tool handles it */
    GT_CLI_HANDLED = 1,
    GT_CLI_EXIT_OK = 2,    /* --version printed: exit 0 */
    GT_CLI_ERROR = 3       /* bad value: gt_errmsg() says why, exit 2 */
} gt_cli_result;

/* Handle one getopt_long result if it is a common option. Sets the log
 * verbosity for -q/-v. */
gt_cli_result gt_common_option(gt_common_opts *o, int opt, const char *arg);

/* Value parsers: `opt` is the option's name as the user typed it ("--iso"). */
gt_status gt_parse_long(const char *opt, const char *s, long lo, long hi, long *out);
gt_status gt_parse_int(const char *opt, const char *s, int lo, int hi, int *out);
gt_status gt_parse_double(const char *opt, const char *s, double lo, double hi, double *out);
/* "WxH", each in [1, max] */
gt_status gt_parse_wxh(const char *opt, const char *s, int max, int *w, int *h);
/* n comma-separated finite numbers, e.g. "x,y,z" */
gt_status gt_parse_vec(const char *opt, const char *s, int n, double *out);
/* n comma-separated integers in [lo, hi], e.g. "X,Y,Z" */
gt_status gt_parse_ivec(const char *opt, const char *s, int n, long lo, long hi, long *out);
/* one of names[0..count-1]; *out gets its index */
gt_status gt_parse_enum(const char *opt, const char *s, const char *const *names, int count,
                        int *out);

/* A path option given once: sets *slot to arg, or GT_ERR_USAGE naming the
 * option when it was given before (a second -o does not silently win). */
gt_status gt_parse_path_once(const char *opt, const char *arg, const char **slot);

/* Set a usage message; for getopt's '?' and for missing operands. */
gt_status gt_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "prog (gputools) VERSION" on stdout */
void gt_print_version(void);

#ifdef __cplusplus
}
#endif
#endif
