/* Random sparse matrices for the sparse tests (header-only). */
#ifndef SPARSE_TESTUTIL_H
#define SPARSE_TESTUTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h> /* its asserts (the benches that include this too) */

#include "gt_test.h"
#include "sparse/sparse.h"

static inline double sp_val(gt_rng *r)
{
    double v = gt_rng_range(r, 0.1, 1.0); /* never 0: DIA drops zeros */
    return gt_rng_uniform(r) < 0.5 ? -v : v;
}

/* variant 0: uniform density; 1: density with empty rows and one dense row;
   2: banded (|i-j| <= 3 plus a few far entries); 3: power-law row lengths;
   4: exactly 5 entries per row. Aborts on failure (tests only). */
static inline void sp_random(gt_rng *r, int64_t n, int64_t m, double dens, int variant, gt_csr *out)
{
    int64_t cap = n * 8 + (int64_t)(dens * (double)n * (double)m * 1.2) + m + 16;
    int32_t *ri = malloc((size_t)cap * 4), *ci = malloc((size_t)cap * 4);
    double *v = malloc((size_t)cap * 8);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        if (variant == 1 && i % 5 == 2) continue; /* empty rows */
        if (variant == 1 && i == n / 2) {
            for (int64_t j = 0; j < m && k < cap; j++) ri[k] = (int32_t)i, ci[k] = (int32_t)j, v[k++] = sp_val(r);
            continue;
        }
        int64_t len;
        if (variant == 3) len = (int64_t)(1.0 / pow(gt_rng_uniform(r) + 1e-3, 1.2)); /* heavy tail */
        else if (variant == 4) len = 5;
        else if (variant == 2) len = 0;
        else len = (int64_t)(dens * (double)m + gt_rng_uniform(r) * 2);
        if (len > m) len = m;
        if (variant == 2)
            for (int64_t j = i - 3; j <= i + 3; j++)
                if (j >= 0 && j < m && k < cap) ri[k] = (int32_t)i, ci[k] = (int32_t)j, v[k++] = sp_val(r);
        for (int64_t t = 0; t < len && k < cap; t++)
            ri[k] = (int32_t)i, ci[k] = (int32_t)(gt_rng_u64(r) % (uint64_t)m), v[k++] = sp_val(r);
        if (variant == 2 && gt_rng_uniform(r) < 0.05 && k < cap)
            ri[k] = (int32_t)i, ci[k] = (int32_t)(gt_rng_u64(r) % (uint64_t)m), v[k++] = sp_val(r);
    }
    /* duplicates are summed: make them harmless by using |v| on repeats is not
       needed; a sum of two values may be 0 only with probability ~0 */
    if (gt_csr_from_triplets(n, m, k, ri, ci, v, out) != GT_OK) abort();
    free(ri), free(ci), free(v);
}

/* Nonsymmetric, strictly diagonally dominant (diagonal = 1.5 * row sum + 1). */
static inline void sp_diag_dominant(gt_rng *r, int64_t n, double dens, gt_csr *out)
{
    gt_csr a;
    sp_random(r, n, n, dens, 0, &a);
    int64_t cap = a.nnz + n;
    int32_t *ri = malloc((size_t)cap * 4), *ci = malloc((size_t)cap * 4);
    double *v = malloc((size_t)cap * 8);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int64_t p = a.ptr[i]; p < a.ptr[i + 1]; p++)
            if (a.col[p] != i) ri[k] = (int32_t)i, ci[k] = a.col[p], v[k++] = a.val[p], s += fabs(a.val[p]);
        ri[k] = (int32_t)i, ci[k] = (int32_t)i, v[k++] = 1.5 * s + 1.0;
    }
    if (gt_csr_from_triplets(n, n, k, ri, ci, v, out) != GT_OK) abort();
    free(ri), free(ci), free(v), gt_csr_free(&a);
}

/* L + shift I with L the Laplacian of a random graph (each row links to deg/2
   random others; repeated edges add weight): symmetric, lambda_min = shift
   exactly (the constant vector), Gershgorin's lower bound is tight while its
   upper bound 2 maxdeg + shift is far above lambda_max. */
static inline void sp_graph_laplacian(gt_rng *r, int64_t n, int deg, double shift, gt_csr *out)
{
    int64_t cap = n * (int64_t)deg * 2 + n;
    int32_t *ri = malloc((size_t)cap * 4), *ci = malloc((size_t)cap * 4);
    double *v = malloc((size_t)cap * 8);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        ri[k] = ci[k] = (int32_t)i, v[k++] = shift;
        for (int e = 0; e < deg / 2; e++) {
            int64_t j = (int64_t)(gt_rng_range(r, 0, (double)n)) % n;
            if (j == i) continue;
            ri[k] = (int32_t)i, ci[k] = (int32_t)j, v[k++] = -1;
            ri[k] = (int32_t)j, ci[k] = (int32_t)i, v[k++] = -1;
            ri[k] = ci[k] = (int32_t)i, v[k++] = 1;
            ri[k] = ci[k] = (int32_t)j, v[k++] = 1;
        }
    }
    if (gt_csr_from_triplets(n, n, k, ri, ci, v, out) != GT_OK) abort();
    free(ri), free(ci), free(v);
}

/* Same matrix (dimensions, pattern, values exactly); with keep_zeros false
   explicit zeros of a are ignored. */
static inline bool sp_csr_equal(const gt_csr *a, const gt_csr *b, bool keep_zeros)
{
    if (a->nrows != b->nrows || a->ncols != b->ncols) return false;
    for (int64_t i = 0; i < a->nrows; i++) {
        int64_t q = b->ptr[i];
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            if (!keep_zeros && a->val[p] == 0.0) continue;
            if (q >= b->ptr[i + 1] || b->col[q] != a->col[p] || b->val[q] != a->val[p]) return false;
            q++;
        }
        if (q != b->ptr[i + 1]) return false;
    }
    return true;
}
/* A minimal Matrix Market coordinate reader for the tests (the program uses
   lib/io). Returns false when the file is missing. */
#include <stdio.h>
#include <string.h>
static inline bool sp_read_mtx(const char *path, gt_csr *out)
{
    FILE *f = fopen(path, "r");
    if (!f) return false;
    char line[1024];
    if (!fgets(line, sizeof line, f)) { fclose(f); return false; }
    bool sym = strstr(line, "symmetric") != NULL, pattern = strstr(line, "pattern") != NULL;
    do {
        if (!fgets(line, sizeof line, f)) { fclose(f); return false; }
    } while (line[0] == '%');
    long long n, m, nz;
    if (sscanf(line, "%lld %lld %lld", &n, &m, &nz) != 3) { fclose(f); return false; }
    int32_t *r = malloc((size_t)(2 * nz + 1) * 4), *c = malloc((size_t)(2 * nz + 1) * 4);
    double *v = malloc((size_t)(2 * nz + 1) * 8);
    long long k = 0;
    for (long long e = 0; e < nz; e++) {
        long long i, j;
        double x = 1;
        if (!fgets(line, sizeof line, f)) break;
        if (pattern ? sscanf(line, "%lld %lld", &i, &j) != 2 : sscanf(line, "%lld %lld %lf", &i, &j, &x) != 3) break;
        r[k] = (int32_t)(i - 1), c[k] = (int32_t)(j - 1), v[k++] = x;
        if (sym && i != j) r[k] = (int32_t)(j - 1), c[k] = (int32_t)(i - 1), v[k++] = x;
    }
    fclose(f);
    bool ok = gt_csr_from_triplets(n, m, k, r, c, v, out) == GT_OK;
    free(r), free(c), free(v);
    return ok;
}

/* K blocks [[e, c_k], [-c_k, e]] (c_k = 1 + k/8, e = 4e-15): a field of
   values on the imaginary axis to rounding, where BiCGStab's
   minimal-residual step has t's ~ 0 (omega ~ 0); GMRES solves it. */
static inline void sp_rotation_blocks(int K, gt_csr *out)
{
    int32_t *r = malloc((size_t)4 * K * sizeof *r), *c = malloc((size_t)4 * K * sizeof *c);
    double *v = malloc((size_t)4 * K * sizeof *v);
    assert_non_null(r), assert_non_null(c), assert_non_null(v);
    int64_t q = 0;
    for (int k = 0; k < K; k++) {
        double ck = 1 + k / 8.0;
        int32_t i = 2 * k;
        r[q] = i, c[q] = i, v[q++] = 4e-15;
        r[q] = i, c[q] = i + 1, v[q++] = ck;
        r[q] = i + 1, c[q] = i, v[q++] = -ck;
        r[q] = i + 1, c[q] = i + 1, v[q++] = 4e-15;
    }
    GT_ASSERT_OK(gt_csr_from_triplets(2 * K, 2 * K, q, r, c, v, out));
    free(r), free(c), free(v);
}

/* Real matrices: testdata/sparse, then the shared data folder. */
static inline bool sp_real_matrix(const char *name, gt_csr *out)
{
    char p[1024];
    const char *td = getenv("GT_TESTDATA"), *src = getenv("GT_SOURCE_DIR");
    if (td) {
        snprintf(p, sizeof p, "%s/sparse/%s", td, name);
        if (sp_read_mtx(p, out)) return true;
    }
    if (src) {
        snprintf(p, sizeof p, "%s/shared/data/matrices/%s", src, name);
        if (sp_read_mtx(p, out)) return true;
        snprintf(p, sizeof p, "%s/../shared/data/matrices/%s", src, name);
        if (sp_read_mtx(p, out)) return true;
    }
    snprintf(p, sizeof p, "/work/shared/data/matrices/%s", name);
    return sp_read_mtx(p, out);
}
#endif
