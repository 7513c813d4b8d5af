/* The parallel coordinate reader (lib/io/mtx_coo.c): the same matrix and the
 * same errors at the same lines whatever the thread count and wherever the
 * chunk boundaries fall (GT_MTX_CHUNK_BYTES forces small chunks), checked
 * against sums computed here from the entries written. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/status.h"
#include "gt_test.h"
#include "io/mtx.h"
#include "io_test_util.h"

enum { N = 9, M = 7 };

static void set_par(int threads, long chunk)
{
    char b[32];
    snprintf(b, sizeof b, "%d", threads);
    setenv("GT_READ_THREADS", b, 1);
    if (chunk > 0) {
        snprintf(b, sizeof b, "%ld", chunk);
        setenv("GT_MTX_CHUNK_BYTES", b, 1);
    } else {
        unsetenv("GT_MTX_CHUNK_BYTES");
    }
}

/* A file of `k` entries with comments, blank lines, tabs, CRLF and repeats;
 * values are multiples of 1/4, so every sum is exact in any order. expect
 * gets the matrix (mirrored for symmetric/skew). */
static size_t make_file(const char *path, const char *sym, int k, int rows, int cols, gt_rng *r,
                        double expect[N][N], int present[N][N])
{
    memset(expect, 0, sizeof(double) * N * N);
    memset(present, 0, sizeof(int) * N * N);
    char *buf = malloc(200 + (size_t)k * 64);
    size_t n = (size_t)sprintf(buf, "%%%%MatrixMarket matrix coordinate real %s\n%% a comment\n\n%d %d %d\n", sym,
                               rows, cols, k);
    bool skew = strcmp(sym, "skew-symmetric") == 0, mirror = strcmp(sym, "general") != 0;
    for (int e = 0; e < k; e++) {
        int i = (int)(gt_rng_u64(r) % (uint64_t)rows), j = (int)(gt_rng_u64(r) % (uint64_t)cols);
        if (mirror && j > i) { int t = i; i = j, j = t; }
        if (skew && i == j) i = (i + 1) % rows, j = i == 0 ? 0 : j, i = i == 0 ? 1 : i;
        if (skew && j >= i) j = i - 1;
        double v = (double)((int64_t)(gt_rng_u64(r) % 81) - 40) / 4.0;
        expect[i][j] += v, present[i][j] = 1;
        if (mirror && i != j) expect[j][i] += skew ? -v : v, present[j][i] = 1;
        const char *sep = e % 5 == 1 ? "\t" : e % 7 == 2 ? "   " : " ";
        const char *eol = e % 3 == 0 ? "\r\n" : "\n";
        n += (size_t)sprintf(buf + n, "%s%d%s%d%s%.17g%s", e % 11 == 4 ? "  " : "", i + 1, sep, j + 1, sep, v, eol);
        if (e % 13 == 6) n += (size_t)sprintf(buf + n, "%% comment between entries\n");
        if (e % 17 == 8) n += (size_t)sprintf(buf + n, " \t \n");
    }
    io_write_file(path, buf, n);
    free(buf);
    return n;
}

static void check_csr(const gt_mtx *m, int rows, double expect[N][N], int present[N][N])
{
    assert_non_null(m->ptr);
    assert_null(m->row);
    assert_int_equal(m->ptr[0], 0);
    int64_t k = 0;
    for (int i = 0; i < rows; i++) {
        int last = -1;
        for (int j = 0; j < N; j++) {
            if (!present[i][j]) continue;
            assert_true(k < m->ptr[i + 1]);
            assert_int_equal(m->col[k], j);
            assert_true(m->val[k] == expect[i][j]);
            assert_true(j > last);
            last = j;
            k++;
        }
        assert_int_equal(m->ptr[i + 1], k);
    }
    assert_int_equal(m->nnz, k);
}

/* Every chunk size from 1 byte to the file's length, 1..16 threads. */
static void check_kind(const char *sym, int rows, int cols)
{
    gt_rng rng = {7};
    static double expect[N][N];
    static int present[N][N];
    const char *p = io_tmp("par.mtx");
    size_t len = make_file(p, sym, 60, rows, cols, &rng, expect, present);
    static const int threads[] = {1, 2, 3, 4, 7, 16};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++)
        for (long c = t == 0 ? 0 : 1; c <= (long)len + 1; c += t == 0 ? 1 : 1 + (long)t) {
            set_par(threads[t], c);
            gt_mtx m;
            GT_ASSERT_OK(gt_mtx_read_csr(p, &m));
            assert_int_equal(m.nrows, rows);
            check_csr(&m, rows, expect, present);
            gt_mtx_free(&m);
        }
    /* COO through gt_mtx_read: the same entries, row indices from the offsets */
    set_par(3, 5);
    gt_mtx m, c;
    GT_ASSERT_OK(gt_mtx_read(p, &m));
    GT_ASSERT_OK(gt_mtx_read_csr(p, &c));
    assert_int_equal(m.nnz, c.nnz);
    for (int64_t i = 0; i < c.nrows; i++)
        for (int64_t q = c.ptr[i]; q < c.ptr[i + 1]; q++) {
            assert_int_equal(m.row[q], i);
            assert_int_equal(m.col[q], c.col[q]);
            assert_true(m.val[q] == c.val[q]);
        }
    gt_mtx_free(&m);
    gt_mtx_free(&c);
}

static void test_general(void **s) { (void)s; check_kind("general", N, M); }
static void test_symmetric_mirror(void **s) { (void)s; check_kind("symmetric", N, N); }
static void test_skew_mirror(void **s) { (void)s; check_kind("skew-symmetric", N, N); }

/* Duplicates of a pattern matrix collapse to one entry of 1. */
static void test_pattern_duplicates(void **s)
{
    (void)s;
    const char *p = io_tmp("pat.mtx");
    io_write_text(p, "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 5\n2 1\n2 1\n3 3\r\n2 1\n3 1\n");
    for (long c = 1; c < 60; c++) {
        set_par(4, c);
        gt_mtx m;
        GT_ASSERT_OK(gt_mtx_read_csr(p, &m));
        assert_int_equal(m.nnz, 5); /* (1,2) (1,3) (2,1) (3,1) (3,3) */
        for (int64_t k = 0; k < m.nnz; k++) assert_true(m.val[k] == 1.0);
        int64_t want_ptr[] = {0, 2, 3, 5};
        for (int i = 0; i < 4; i++) assert_int_equal(m.ptr[i], want_ptr[i]);
        gt_mtx_free(&m);
    }
}

/* A file of 200 good lines (plus comments and blank lines) with the faults
 * given; the message must name `line` and hold `words` for every thread
 * count and chunk size. */
static void check_error(const char *name, const char *declared, int bad_at, const char *bad, int bad2_at,
                        const char *bad2, int nlines, long line, const char *words)
{
    const char *p = io_tmp(name);
    char *buf = malloc(64 * (size_t)nlines + 200);
    size_t n = (size_t)sprintf(buf, "%%%%MatrixMarket matrix coordinate real general\n%% c\n%s\n", declared);
    for (int e = 1; e <= nlines; e++) { /* file line e + 3 */
        if (e == bad_at) n += (size_t)sprintf(buf + n, "%s\n", bad);
        else if (e == bad2_at) n += (size_t)sprintf(buf + n, "%s\n", bad2);
        else if (e % 10 == 0) n += (size_t)sprintf(buf + n, "%% comment\n");
        else if (e % 10 == 5) n += (size_t)sprintf(buf + n, "  \r\n");
        else n += (size_t)sprintf(buf + n, "%d %d %d.5\n", e % 40 + 1, e % 30 + 1, e);
    }
    io_write_file(p, buf, n);
    free(buf);
    char want[64];
    snprintf(want, sizeof want, ":%ld)", line);
    for (int t = 1; t <= 16; t *= 2)
        for (long c = 1; c < (long)n + 50; c += 1 + 13 * (t > 1)) {
            set_par(t, c);
            gt_mtx m;
            gt_status st = gt_mtx_read_csr(p, &m);
            assert_int_equal(st, GT_ERR_DATA);
            const char *msg = gt_errmsg();
            if (!strstr(msg, want) || !strstr(msg, words)) {
                fprintf(stderr, "threads %d chunk %ld: '%s' (want %s, %s)\n", t, c, msg, want, words);
                fail();
            }
        }
}

static void test_errors_at_their_line(void **s)
{
    (void)s;
    /* 200 lines: 160 entries, 20 comments, 20 blank */
    check_error("e1.mtx", "40 30 160", 150, "3 x 1.5", 0, "", 200, 153, "bad entry");
    check_error("e2.mtx", "40 30 160", 77, "3 1 nan", 151, "1 1 zz", 200, 80, "not a finite number");
    check_error("e3.mtx", "40 30 160", 3, "41 1 1", 0, "", 200, 6, "outside the 40 x 30");
    check_error("e4.mtx", "40 30 160", 199, "1 1 1 1", 0, "", 200, 202, "extra text '1'");
    check_error("e5.mtx", "40 30 160", 2, "1 1 1e999", 0, "", 200, 5, "bad or missing value '1e999'");
    /* the count runs out before the bad lines: "more entries" at the first
     * content line beyond it (entry 101 is file line 129) */
    check_error("e6.mtx", "40 30 100", 140, "garbage", 0, "", 200, 129, "more entries than the 100 declared");
    /* too few: the line after the last */
    check_error("e7.mtx", "40 30 170", 0, "", 0, "", 200, 204, "file ends after 160 of 170 entries");
    /* a NUL byte in a line reads as one bad token */
    check_error("e8.mtx", "40 30 160", 50, "1 1 1\x01", 0, "", 200, 53, "bad");
}

/* Standard input ("-") through a pipe: the same matrix. */
static void test_stdin(void **s)
{
    (void)s;
    gt_rng rng = {3};
    static double expect[N][N];
    static int present[N][N];
    const char *p = io_tmp("stdin.mtx");
    make_file(p, "symmetric", 80, N, N, &rng, expect, present);
    set_par(4, 17);
    int saved;
    pid_t pid = io_stdin_from_pipe(p, &saved);
    gt_mtx m;
    gt_status st = gt_mtx_read_csr("-", &m);
    io_stdin_restore(pid, saved);
    GT_ASSERT_OK(st);
    check_csr(&m, N, expect, present);
    gt_mtx_free(&m);
}

/* A size line with far more rows than entries: no row-sized arrays until the
 * sizes are known plausible; then CSR all the same. */
static void test_sparse_rows(void **s)
{
    (void)s;
    const char *p = io_tmp("tall.mtx");
    io_write_text(p, "%%MatrixMarket matrix coordinate real general\n1000000 5 3\n999999 2 1.5\n3 1 2\n999999 2 1\n");
    set_par(2, 4);
    gt_mtx m;
    GT_ASSERT_OK(gt_mtx_read_csr(p, &m));
    assert_int_equal(m.nnz, 2);
    assert_int_equal(m.ptr[3], 1);
    assert_int_equal(m.ptr[999998], 1);
    assert_int_equal(m.ptr[999999], 2);
    assert_int_equal(m.col[1], 1);
    assert_true(m.val[1] == 2.5);
    gt_mtx_free(&m);
}

/* The coordinate writer, formatted in parallel: every line read back by
 * fscanf (strtod) gives the same indices and the same double bits, in order. */
static void test_write_coo_parallel(void **s)
{
    (void)s;
    enum { K = 70000 };
    int32_t *row = malloc(K * sizeof *row), *col = malloc(K * sizeof *col);
    double *val = malloc(K * sizeof *val);
    gt_rng rng = {11};
    for (int k = 0; k < K; k++) {
        row[k] = k / 7, col[k] = (int32_t)(gt_rng_u64(&rng) % 2000000000u);
        double v = gt_rng_range(&rng, -1, 1) * pow(10.0, (double)(int)(gt_rng_u64(&rng) % 600) - 300);
        val[k] = k % 1000 == 3 ? 5e-324 : k % 1000 == 4 ? -0.0 : v;
    }
    const char *p = io_tmp("w.mtx");
    GT_ASSERT_OK(gt_mtx_write_coo(p, K / 7 + 1, 2000000000, K, row, col, val, NULL));
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char line[256];
    assert_non_null(fgets(line, sizeof line, f));
    assert_non_null(fgets(line, sizeof line, f));
    for (int k = 0; k < K; k++) {
        int i, j;
        double v;
        assert_int_equal(fscanf(f, "%d %d %lf", &i, &j, &v), 3);
        assert_int_equal(i, row[k] + 1);
        assert_int_equal(j, col[k] + 1);
        assert_memory_equal(&v, &val[k], sizeof v);
    }
    assert_int_equal(fscanf(f, "%255s", line), EOF);
    fclose(f);
    free(row), free(col), free(val);
}

/* Files over 1 MB are mapped, not read: the same CSR mapped or read, with 1
 * or 4 threads, for a file ending without a newline in the middle of its
 * last page and for one padded to a whole number of pages (read, as its
 * mapping has no room for the NUL after the text). */
static void same_csr(const gt_mtx *a, const gt_mtx *b)
{
    assert_int_equal(a->nrows, b->nrows);
    assert_int_equal(a->nnz, b->nnz);
    assert_memory_equal(a->ptr, b->ptr, (size_t)(a->nrows + 1) * sizeof *a->ptr);
    assert_memory_equal(a->col, b->col, (size_t)a->nnz * sizeof *a->col);
    assert_memory_equal(a->val, b->val, (size_t)a->nnz * sizeof *a->val);
}

static void test_large_mapped(void **s)
{
    (void)s;
    enum { K = 90000, R = 5000 };
    long page = sysconf(_SC_PAGESIZE);
    for (int pad = 0; pad < 2; pad++) {
        char *buf = malloc((size_t)K * 40 + (size_t)page + 200);
        size_t n = (size_t)sprintf(buf, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", R, R, K);
        gt_rng rng = {5};
        double sum = 0;
        for (int k = 0; k < K; k++) {
            double v = (double)(int)(gt_rng_u64(&rng) % 1000) / 8.0;
            sum += v;
            n += (size_t)sprintf(buf + n, "%d %d %.17g%s", (int)(gt_rng_u64(&rng) % R) + 1,
                                 (int)(gt_rng_u64(&rng) % R) + 1, v, k + 1 < K ? "\n" : "");
        }
        if (pad) { /* a comment line before the last entry's line ends the file on a page boundary */
            char *last = strrchr(buf, '\n') + 1;
            size_t tail = n - (size_t)(last - buf);
            size_t need = ((size_t)page - (n + 2) % (size_t)page) % (size_t)page; /* "%" + need + "\n" */
            memmove(last + need + 2, last, tail);
            last[0] = '%';
            memset(last + 1, 'x', need);
            last[need + 1] = '\n';
            n += need + 2;
            assert_int_equal(n % (size_t)page, 0);
        }
        assert_true(n > (1u << 20));
        const char *p = io_tmp("large.mtx");
        io_write_file(p, buf, n);
        free(buf);
        gt_mtx a, b, c;
        unsetenv("GT_MTX_CHUNK_BYTES");
        setenv("GT_READ_THREADS", "1", 1);
        GT_ASSERT_OK(gt_mtx_read_csr(p, &a));
        setenv("GT_READ_THREADS", "4", 1);
        GT_ASSERT_OK(gt_mtx_read_csr(p, &b));
        setenv("GT_MTX_NO_MMAP", "1", 1);
        GT_ASSERT_OK(gt_mtx_read_csr(p, &c));
        unsetenv("GT_MTX_NO_MMAP");
        same_csr(&a, &b);
        same_csr(&a, &c);
        double got = 0; /* multiples of 1/8 below 2^40: exact in any order */
        for (int64_t k = 0; k < a.nnz; k++) got += a.val[k];
        assert_true(got == sum);
        gt_mtx_free(&a), gt_mtx_free(&b), gt_mtx_free(&c);
    }
}

/* Values read exactly as strtod reads them, in every notation the fast
 * path takes or leaves (digits, points, exponents, signs, 1..20 digits). */
static void test_values_as_strtod(void **s)
{
    (void)s;
    enum { K = 20000 };
    char *buf = malloc((size_t)K * 64 + 100);
    double *want = malloc(K * sizeof *want);
    size_t n = (size_t)sprintf(buf, "%%%%MatrixMarket matrix coordinate real general\n%d 1 %d\n", K, K);
    gt_rng rng = {99};
    static const char *const fmt[] = {"%.*g", "%.*e", "%.*f", "%+.*g", "%.*E"};
    for (int k = 0; k < K; k++) {
        double x = gt_rng_range(&rng, -1, 1) * pow(10.0, (double)(int)(gt_rng_u64(&rng) % 80) - 40);
        int prec = (int)(gt_rng_u64(&rng) % 20), f = (int)(gt_rng_u64(&rng) % 5);
        char v[64];
        if (f == 2 && fabs(x) > 1e15) f = 0;
        snprintf(v, sizeof v, fmt[f], prec, x);
        if (k % 97 == 0) snprintf(v, sizeof v, "%s", k % 2 ? "00012.50" : "-0");
        want[k] = strtod(v, NULL);
        n += (size_t)sprintf(buf + n, "%d 1 %s\n", k + 1, v);
    }
    const char *p = io_tmp("vals.mtx");
    io_write_file(p, buf, n);
    free(buf);
    set_par(2, 0);
    gt_mtx m;
    GT_ASSERT_OK(gt_mtx_read_csr(p, &m));
    assert_int_equal(m.nnz, K);
    for (int k = 0; k < K; k++) assert_memory_equal(&m.val[k], &want[k], sizeof want[k]);
    gt_mtx_free(&m);
    free(want);
}

static int teardown(void **s)
{
    (void)s;
    io_rm_tmpdir();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_general),
        cmocka_unit_test(test_symmetric_mirror),
        cmocka_unit_test(test_skew_mirror),
        cmocka_unit_test(test_pattern_duplicates),
        cmocka_unit_test(test_errors_at_their_line),
        cmocka_unit_test(test_stdin),
        cmocka_unit_test(test_sparse_rows),
        cmocka_unit_test(test_write_coo_parallel),
        cmocka_unit_test(test_large_mapped),
        cmocka_unit_test(test_values_as_strtod),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
