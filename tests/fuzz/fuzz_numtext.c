/* libFuzzer target: io/numtext. gt_scan_double on the input as a string
 * must be strtod (same bits, same end); the input's first 8 (4) bytes as a
 * double (float) must format to text that strtod (strtof) reads back as
 * the same value. A difference aborts. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/numtext.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char s[257];
    size_t n = size < 256 ? size : 256;
    memcpy(s, data, n);
    s[n] = 0;
    char *e1;
    const char *e2;
    double a = strtod(s, &e1), b = 0;
    bool ok = gt_scan_double(s, &e2, &b);
    if (e1 != e2 || ok != (e1 != s)) abort();
    if (ok && memcmp(&a, &b, sizeof a) && !(isnan(a) && isnan(b))) abort();
    char t[GT_FMT_MAX];
    if (size >= 8) {
        double v;
        memcpy(&v, data, sizeof v);
        int len = gt_fmt_double(t, v);
        if (len < 1 || len >= GT_FMT_MAX || (size_t)len != strlen(t)) abort();
        double r = strtod(t, NULL);
        if (!isnan(v) && memcmp(&r, &v, sizeof v)) abort();
    }
    if (size >= 4) {
        float v;
        memcpy(&v, data, sizeof v);
        int len = gt_fmt_float(t, v);
        if (len < 1 || len >= GT_FMT_MAX || (size_t)len != strlen(t)) abort();
        float r = strtof(t, NULL);
        if (!isnan(v) && memcmp(&r, &v, sizeof v)) abort();
    }
    return 0;
}
