/* Helper for tests/io/interop_mtx.py: writes and dumps Matrix Market files
 * through libcore so that an outside reader (scipy) can be compared with it.
 *   test_mtx_tool write PATH      write a fixed-seed COO matrix, print its entries
 *   test_mtx_tool writevec PATH   write a fixed-seed vector, print its values
 *   test_mtx_tool dump PATH       read PATH, print what libcore read
 * Numbers are printed with %.17g (exact for doubles). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "gt_test.h"
#include "io/mtx.h"

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    gt_rng rng = {2024};
    if (strcmp(argv[1], "write") == 0) {
        enum { R = 50, C = 31 };
        int32_t row[R * C], col[R * C];
        double val[R * C];
        int n = 0;
        for (int j = 0; j < C; j++)
            for (int i = 0; i < R; i++)
                if (gt_rng_uniform(&rng) < 0.1) { /* distinct positions, random order below */
                    row[n] = i;
                    col[n] = j;
                    val[n] = gt_rng_range(&rng, -1e3, 1e3) * (n % 5 == 0 ? 1e-200 : 1.0);
                    n++;
                }
        for (int k = n - 1; k > 0; k--) { /* shuffle: the reader must sort */
            int t = (int)(gt_rng_u64(&rng) % (uint64_t)(k + 1));
            int32_t a = row[k]; row[k] = row[t]; row[t] = a;
            a = col[k]; col[k] = col[t]; col[t] = a;
            double v = val[k]; val[k] = val[t]; val[t] = v;
        }
        if (gt_mtx_write_coo(argv[2], R, C, n, row, col, val, "interop test") != GT_OK) goto fail;
        printf("coo %d %d\n", R, C);
        for (int k = 0; k < n; k++) printf("%d %d %.17g\n", row[k], col[k], val[k]);
        return 0;
    }
    if (strcmp(argv[1], "writevec") == 0) {
        double v[40];
        for (int k = 0; k < 40; k++) v[k] = gt_rng_range(&rng, -1, 1) / 7.0;
        if (gt_mtx_write_vector(argv[2], v, 40, NULL) != GT_OK) goto fail;
        printf("array 40 1\n");
        for (int k = 0; k < 40; k++) printf("%.17g\n", v[k]);
        return 0;
    }
    if (strcmp(argv[1], "dump") == 0) {
        gt_mtx m;
        if (gt_mtx_read(argv[2], &m) != GT_OK) goto fail;
        if (m.is_array) {
            printf("array %lld %lld\n", (long long)m.nrows, (long long)m.ncols);
            for (int64_t k = 0; k < m.nrows * m.ncols; k++) printf("%.17g\n", m.dense[k]);
        } else {
            printf("coo %lld %lld\n", (long long)m.nrows, (long long)m.ncols);
            for (int64_t k = 0; k < m.nnz; k++) printf("%d %d %.17g\n", m.row[k], m.col[k], m.val[k]);
        }
        gt_mtx_free(&m);
        return 0;
    }
    return 2;
fail:
    fprintf(stderr, "test_mtx_tool: %s\n", gt_errmsg());
    return 1;
}
