#include "common/cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "gt_config.h"

void gt_common_opts_init(gt_common_opts *o)
{
    o->device = GT_DEVICE_AUTO;
    o->gpu = 0;
    o->timings = false;
    o->verbosity = 0;
}

gt_cli_result gt_common_option(gt_common_opts *o, int opt, const char *arg)
{
    switch (opt) {
    case GT_OPT_DEVICE: {
        static const char *const names[] = {"auto", "cuda", "cpu"};
        int v;
        if (gt_parse_enum("--device", arg, names, 3, &v) != GT_OK) return GT_CLI_ERROR;
        o->device = (gt_device_kind)v;
        return GT_CLI_HANDLED;
    }
    case GT_OPT_GPU:
        return gt_parse_int("--gpu", arg, 0, 1023, &o->gpu) == GT_OK ? GT_CLI_HANDLED
                                                                    : GT_CLI_ERROR;
    case GT_OPT_TIMINGS: o->timings = true; return GT_CLI_HANDLED;
    case 'q': o->verbosity = -1; gt_set_verbosity(-1); return GT_CLI_HANDLED;
    case 'v':
        if (o->verbosity < 0) o->verbosity = 0;
        o->verbosity++;
        gt_set_verbosity(o->verbosity);
        return GT_CLI_HANDLED;
    case GT_OPT_VERSION: gt_print_version(); return GT_CLI_EXIT_OK;
    default: return GT_CLI_NOT_COMMON;
    }
}

gt_status gt_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gt_vfail(GT_ERR_USAGE, fmt, ap);
    va_end(ap);
    return GT_ERR_USAGE;
}

gt_status gt_parse_path_once(const char *opt, const char *arg, const char **slot)
{
    if (*slot)
        return gt_usage_error("%s given twice ('%s' and '%s'): give it once", opt, *slot, arg ? arg : "");
    if (!arg || !*arg) return gt_usage_error("%s: empty path", opt);
    *slot = arg;
    return GT_OK;
}

void gt_print_version(void) { printf("%s (gputools) %s\n", gt_progname(), GT_VERSION); }

static const char *show(const char *s) { return s ? s : "(none)"; }

gt_status gt_parse_long(const char *opt, const char *s, long lo, long hi, long *out)
{
    char *end;
    if (!s || !*s) return gt_usage_error("missing value for %s", opt);
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end != 0 || end == s)
        return gt_usage_error("invalid value '%s' for %s: expected an integer", show(s), opt);
    if (errno == ERANGE || v < lo || v > hi)
        return gt_usage_error("value %s for %s is out of range [%ld, %ld]", s, opt, lo, hi);
    *out = v;
    return GT_OK;
}

gt_status gt_parse_int(const char *opt, const char *s, int lo, int hi, int *out)
{
    long v;
    GT_TRY(gt_parse_long(opt, s, lo, hi, &v));
    *out = (int)v;
    return GT_OK;
}

gt_status gt_parse_double(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    if (!s || !*s) return gt_usage_error("missing value for %s", opt);
    errno = 0;
    double v = strtod(s, &end);
    if (*end != 0 || end == s || !isfinite(v))
        return gt_usage_error("invalid value '%s' for %s: expected a finite number", show(s), opt);
    if (v < lo || v > hi)
        return gt_usage_error("value %s for %s is out of range [%g, %g]", s, opt, lo, hi);
    *out = v;
    return GT_OK;
}

gt_status gt_parse_wxh(const char *opt, const char *s, int max, int *w, int *h)
{
    char *end;
    if (!s || !*s) return gt_usage_error("missing value for %s", opt);
    errno = 0;
    long a = strtol(s, &end, 10);
    if (end == s || (*end != 'x' && *end != 'X'))
        return gt_usage_error("invalid value '%s' for %s: expected WIDTHxHEIGHT, e.g. 1920x1080",
                              s, opt);
    const char *p = end + 1;
    long b = strtol(p, &end, 10);
    if (end == p || *end != 0)
        return gt_usage_error("invalid value '%s' for %s: expected WIDTHxHEIGHT, e.g. 1920x1080",
                              s, opt);
    if (errno == ERANGE || a < 1 || b < 1 || a > max || b > max)
        return gt_usage_error("size %s for %s is out of range: each side must be 1..%d", s, opt,
                              max);
    *w = (int)a;
    *h = (int)b;
    return GT_OK;
}

gt_status gt_parse_vec(const char *opt, const char *s, int n, double *out)
{
    if (!s || !*s) return gt_usage_error("missing value for %s", opt);
    const char *p = s;
    for (int i = 0; i < n; i++) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !isfinite(v)) goto bad;
        out[i] = v;
        p = end;
        if (i + 1 < n) {
            if (*p != ',') goto bad;
            p++;
        }
    }
    if (*p != 0) goto bad;
    return GT_OK;
bad:
    return gt_usage_error("invalid value '%s' for %s: expected %d comma-separated numbers", s,
                          opt, n);
}

gt_status gt_parse_ivec(const char *opt, const char *s, int n, long lo, long hi, long *out)
{
    if (!s || !*s) return gt_usage_error("missing value for %s", opt);
    const char *p = s;
    for (int i = 0; i < n; i++) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p) goto bad;
        if (errno == ERANGE || v < lo || v > hi)
            return gt_usage_error("value '%s' for %s is out of range: each must be in [%ld, %ld]",
                                  s, opt, lo, hi);
        out[i] = v;
        p = end;
        if (i + 1 < n) {
            if (*p != ',') goto bad;
            p++;
        }
    }
    if (*p != 0) goto bad;
    return GT_OK;
bad:
    return gt_usage_error("invalid value '%s' for %s: expected %d comma-separated integers", s,
                          opt, n);
}

gt_status gt_parse_enum(const char *opt, const char *s, const char *const *names, int count,
                        int *out)
{
    for (int i = 0; s && i < count; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return GT_OK;
        }
    char list[512] = "";
    size_t len = 0;
    for (int i = 0; i < count; i++) {
        const char *sep = i == 0 ? "" : (i + 1 == count ? " or " : ", ");
        int k = snprintf(list + len, sizeof list - len, "%s%s", sep, names[i]);
        if (k < 0 || (size_t)k >= sizeof list - len) break;
        len += (size_t)k;
    }
    return gt_usage_error("invalid value '%s' for %s: expected %s", show(s), opt, list);
}
