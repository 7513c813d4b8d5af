/* Large arrays of doubles as text rows ("x y z\n"), shortest round-trip
 * numbers (io/numtext.h), formatted in parallel (OpenMP) a chunk of rows per
 * thread and written in order with large fwrite calls. For the text writers
 * of point sets, parameter files and solution vectors. */
#ifndef GT_IO_NUMROWS_H
#define GT_IO_NUMROWS_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Write n rows to f: row i is a[ka i .. ka i + ka - 1] followed by
 * b[kb i .. kb i + kb - 1] (b may be NULL with kb = 0), separated by single
 * spaces and ended by '\n'. 1 <= ka + kb <= 16. Returns 0, or -1 on a
 * write or memory error (errno set). */
int gt_write_rows(FILE *f, size_t n, const double *a, int ka, const double *b, int kb);

#ifdef __cplusplus
}
#endif
#endif
