/* See numrows.h. Chunks of rows go to one buffer each; a round formats up
 * to 2 chunks per thread at once, then writes them in order, so memory stays
 * bounded (ROUND_BYTES) whatever n is. A chunk is small enough that every
 * thread gets work at n = 20000 rows of 6 (stpsfit's parameter file), large
 * enough (>= 256 rows) to pay for its scheduling. */
#include "io/numrows.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "io/numtext.h"

#ifdef _OPENMP
#include <omp.h>
#endif

enum { ROWS_MIN = 256, ROWS_MAX = 4096 };
/* Below this many numbers (about a millisecond on one core) one thread
 * formats them all: waking a team costs more than it saves, and on a
 * loaded machine a barrier waiting for a descheduled thread costs ~15 ms
 * (measured at n = 1000 rows of 6 on 2 busy cores). */
#define PAR_MIN_NUMBERS ((size_t)50000)
#define ROUND_BYTES ((size_t)16 << 20)

/* rows [i0, i1) into buf; returns the bytes written */
static size_t format_rows(char *buf, size_t i0, size_t i1, const double *a, int ka, const double *b, int kb)
{
    char *p = buf;
    for (size_t i = i0; i < i1; i++) {
        const double *ra = a + (size_t)ka * i;
        for (int j = 0; j < ka; j++) {
            p += gt_fmt_double(p, ra[j]);
            *p++ = ' ';
        }
        if (kb) {
            const double *rb = b + (size_t)kb * i;
            for (int j = 0; j < kb; j++) {
                p += gt_fmt_double(p, rb[j]);
                *p++ = ' ';
            }
        }
        p[-1] = '\n';
    }
    return (size_t)(p - buf);
}

int gt_write_rows(FILE *f, size_t n, const double *a, int ka, const double *b, int kb)
{
    if (ka < 0 || kb < 0 || ka + kb < 1 || ka + kb > 16 || (kb && !b)) {
        errno = EINVAL;
        return -1;
    }
    if (n == 0) return 0;
    size_t row_max = (size_t)(ka + kb) * GT_FMT_MAX; /* GT_FMT_MAX counts the NUL: room for ' ' */
    int nth = 1;
#ifdef _OPENMP
    if (n * (size_t)(ka + kb) >= PAR_MIN_NUMBERS) nth = omp_get_max_threads();
#endif
    size_t rows = n / ((size_t)nth * 2);
    rows = rows < ROWS_MIN ? ROWS_MIN : rows > ROWS_MAX ? ROWS_MAX : rows;
    size_t nchunks = (n + rows - 1) / rows, cap = rows * row_max;
    size_t per_round = (size_t)nth * 2;
    if (per_round > ROUND_BYTES / cap) per_round = ROUND_BYTES / cap;
    if (per_round > nchunks) per_round = nchunks;
    if (per_round < 1) per_round = 1;
    char *mem = malloc(per_round * cap);
    size_t *len = malloc(per_round * sizeof *len);
    if (!mem || !len) {
        free(mem);
        free(len);
        errno = ENOMEM;
        return -1;
    }
    int rc = 0;
    for (size_t c0 = 0; c0 < nchunks && rc == 0; c0 += per_round) {
        size_t m = nchunks - c0 < per_round ? nchunks - c0 : per_round;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nth) if (m > 1)
        for (size_t c = 0; c < m; c++) {
            size_t i0 = (c0 + c) * rows, i1 = i0 + rows < n ? i0 + rows : n;
            len[c] = format_rows(mem + c * cap, i0, i1, a, ka, b, kb);
        }
        for (size_t c = 0; c < m; c++)
            if (fwrite(mem + c * cap, 1, len[c], f) != len[c]) {
                rc = -1;
                break;
            }
    }
    free(mem);
    free(len);
    return rc;
}
