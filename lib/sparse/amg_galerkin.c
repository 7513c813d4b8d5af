/* AMG set-up, stage 4: the Galerkin coarse operator A_c = P^T A P as two
 * sparse products, R (A P) with R = P^T, each by Gustavson's row-by-row
 * algorithm with a dense accumulator and a marker per column. Two passes
 * (count, then fill), like the GPU's; rows come out sorted by column, and
 * structural zeros (cancellations) are kept. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "sparse/amg.h"

static int cmp_i32(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

gt_status gt_amg_spgemm(const gt_csr *a, const gt_csr *b, gt_csr *c)
{
    int64_t n = a->nrows, m = b->ncols;
    int64_t *ptr = gt_malloc_array((size_t)n + 1, 8, "spgemm rows");
    int64_t *mark = gt_malloc_array((size_t)(m ? m : 1), 8, "spgemm marker");
    double *acc = gt_calloc((size_t)(m ? m : 1), 8, "spgemm accumulator");
    if (!ptr || !mark || !acc) return free(ptr), free(mark), free(acc), GT_ERR_RUNTIME;
    for (int64_t j = 0; j < m; j++) mark[j] = -1;
    ptr[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t cnt = 0;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            int32_t k = a->col[p];
            for (int64_t q = b->ptr[k]; q < b->ptr[k + 1]; q++)
                if (mark[b->col[q]] != i) mark[b->col[q]] = i, cnt++;
        }
        ptr[i + 1] = ptr[i] + cnt;
    }
    int32_t *col = gt_malloc_array((size_t)(ptr[n] ? ptr[n] : 1), 4, "spgemm columns");
    double *val = gt_malloc_array((size_t)(ptr[n] ? ptr[n] : 1), 8, "spgemm values");
    if (!col || !val) return free(ptr), free(mark), free(acc), free(col), free(val), GT_ERR_RUNTIME;
    for (int64_t j = 0; j < m; j++) mark[j] = -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t o = ptr[i], k2 = o;
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            int32_t k = a->col[p];
            double av = a->val[p];
            for (int64_t q = b->ptr[k]; q < b->ptr[k + 1]; q++) {
                int32_t j = b->col[q];
                if (mark[j] != i) mark[j] = i, acc[j] = 0, col[k2++] = j;
                acc[j] += av * b->val[q];
            }
        }
        qsort(col + o, (size_t)(k2 - o), 4, cmp_i32);
        for (int64_t x = o; x < k2; x++) val[x] = acc[col[x]];
    }
    free(mark), free(acc);
    *c = (gt_csr){.nrows = n, .ncols = m, .nnz = ptr[n], .ptr = ptr, .col = col, .val = val};
    return GT_OK;
}

gt_status gt_amg_galerkin(const gt_csr *a, const gt_csr *p, const gt_csr *r, gt_csr *ac)
{
    gt_csr ap;
    GT_TRY(gt_amg_spgemm(a, p, &ap));
    gt_status s = gt_amg_spgemm(r, &ap, ac);
    gt_csr_free(&ap);
    return s;
}
