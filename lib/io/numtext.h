/* Numbers as text, fast and exact, for the text formats' large arrays
 * (point text, stpsfit parameter files, Matrix Market vectors).
 *
 * Formatting gives the shortest decimal that reads back as exactly the same
 * double (float), the closest such one to the value: never more digits than
 * %.17g (%.9g) needs, usually fewer. Parsing is correctly rounded, as strtod
 * is: a fast path for up to 19 significant digits, strtod for the rest. */
#ifndef GT_IO_NUMTEXT_H
#define GT_IO_NUMTEXT_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Room gt_fmt_double and gt_fmt_float need, with the NUL
 * ("-2.2250738585072014e-308" is 24 characters). */
#define GT_FMT_MAX 32

/* Write v into buf (GT_FMT_MAX bytes) as the shortest decimal that strtod
 * reads back as v, NUL-terminated; returns its length. Plain notation or an
 * exponent ("1e+16" is written "1e16", "1e-05" "1e-5"), whichever is shorter;
 * "0", "-0", "inf", "-inf", "nan" as printf writes them. */
int gt_fmt_double(char *buf, double v);
/* The same for a float: shortest that strtof reads back as v. */
int gt_fmt_float(char *buf, float v);

/* strtod(s, end) with the same result, the same accepted text (leading
 * white space, sign, digits with an optional point, exponent; "inf", "nan"
 * and hexadecimal through strtod itself) and the same *end; true when a
 * number was read (*end > s). (Not named gt_parse_double: that one, in
 * common/cli.h, parses option arguments.) */
bool gt_scan_double(const char *s, const char **end, double *v);

#ifdef __cplusplus
}
#endif
#endif
