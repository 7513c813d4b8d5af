/* Matrix Market reader and writer.
 *
 * Coordinate matrices (real, integer, pattern; general, symmetric,
 * skew-symmetric) are read as a COO list with the symmetric half expanded
 * (the file's symmetry is kept as a flag) and duplicates summed; entries are
 * sorted by (row, col) on return (or as CSR, gt_mtx_read_csr). Array matrices
 * are read as dense column-major. The whole file is read first (stdin too),
 * then the body of a coordinate file is parsed in parallel.
 * complex and hermitian give a clear "not supported" error; nan and inf
 * values are errors naming the line. Indices are
 * 0-based in memory, 1-based in the file. */
#ifndef GT_MTX_H
#define GT_MTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { GT_MTX_GENERAL, GT_MTX_SYMMETRIC, GT_MTX_SKEW } gt_mtx_symmetry;
typedef enum { GT_MTX_REAL, GT_MTX_INTEGER, GT_MTX_PATTERN } gt_mtx_field;

typedef struct gt_mtx {
    int64_t nrows, ncols;
    bool is_array;          /* "matrix array": dense, column-major in `dense` */
    gt_mtx_field field;
    gt_mtx_symmetry symmetry; /* as declared in the file */
    /* coordinate: nnz entries after expansion, sorted by (row, col), duplicates summed */
    int64_t nnz;
    int32_t *row, *col;
    double *val;            /* pattern: all 1.0 */
    /* gt_mtx_read_csr: row offsets (nrows + 1) in place of row (NULL) */
    int64_t *ptr;
    /* array: nrows*ncols values, column-major */
    double *dense;
} gt_mtx;

gt_status gt_mtx_read(const char *path, gt_mtx *m);
/* The same, a coordinate matrix as CSR: ptr (nrows + 1 offsets), col, val,
 * rows sorted by column, duplicates summed; row is NULL. The sizes are
 * checked as gt_mtx_check_sizes does before the offsets are allocated.
 * Array matrices come back as from gt_mtx_read. The body is parsed by
 * GT_READ_THREADS threads (default: OpenMP's); the result is the same for
 * any count. */
gt_status gt_mtx_read_csr(const char *path, gt_mtx *m);
void gt_mtx_free(gt_mtx *m);

/* Sizes a consumer allocates by (vector length, CSR row offsets) against
 * what the file holds: a coordinate matrix whose larger size is above 2^27
 * and 64 times its entries is GT_ERR_DATA ("implausible"), the sign of a
 * lying size line rather than a real matrix. Array matrices always pass. */
gt_status gt_mtx_check_sizes(const gt_mtx *m, const char *path);

/* Read a vector: an array matrix with one column (or one row), or a
 * coordinate n x 1 matrix (missing entries are 0). */
gt_status gt_mtx_read_vector(const char *path, double **v, int64_t *n);

/* Write a coordinate real general matrix (0-based arrays in memory),
 * values as the shortest decimal that reads back exactly (io/numtext.h),
 * lines formatted in parallel. Atomic; "-" = stdout. `comment` may be NULL. */
gt_status gt_mtx_write_coo(const char *path, int64_t nrows, int64_t ncols, int64_t nnz,
                           const int32_t *row, const int32_t *col, const double *val,
                           const char *comment);
/* Write a dense vector as "matrix array real general" n x 1 (shortest
 * round-trip values, formatted in parallel: io/numrows.h). */
gt_status gt_mtx_write_vector(const char *path, const double *v, int64_t n, const char *comment);

#ifdef __cplusplus
}
#endif
#endif
