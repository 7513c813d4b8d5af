/* Level sets of the triangular solves over a CSR pattern (sparse/ilu0.h):
 * level(i) = 1 + the highest level among the rows row i reads (0 when none),
 * then the rows bucketed by level, ascending within a level. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "sparse/ilu0.h"

gt_status gt_ilu0_levels(const gt_csr *a, const int64_t *diag, bool upper, gt_levels *lv)
{
    memset(lv, 0, sizeof *lv);
    int64_t n = a->nrows;
    int32_t *lev = gt_malloc_array((size_t)n + 1, sizeof *lev, "level sets");
    if (!lev) return GT_ERR_RUNTIME;
    int32_t top = -1;
    for (int64_t t = 0; t < n; t++) {
        int64_t i = upper ? n - 1 - t : t;
        int64_t b = upper ? diag[i] + 1 : a->ptr[i], e = upper ? a->ptr[i + 1] : diag[i];
        int32_t l = 0;
        for (int64_t p = b; p < e; p++)
            if (lev[a->col[p]] + 1 > l) l = lev[a->col[p]] + 1;
        lev[i] = l;
        if (l > top) top = l;
    }
    lv->nlevels = top + 1;
    lv->ptr = gt_calloc((size_t)lv->nlevels + 1, sizeof *lv->ptr, "level sets");
    lv->rows = gt_malloc_array((size_t)n + 1, sizeof *lv->rows, "level sets");
    if (!lv->ptr || !lv->rows) {
        free(lev);
        gt_levels_free(lv);
        return GT_ERR_RUNTIME;
    }
    for (int64_t i = 0; i < n; i++) lv->ptr[lev[i] + 1]++;
    for (int64_t l = 0; l < lv->nlevels; l++) lv->ptr[l + 1] += lv->ptr[l];
    int64_t *fill = gt_malloc_array((size_t)lv->nlevels + 1, sizeof *fill, "level sets");
    if (!fill) {
        free(lev);
        gt_levels_free(lv);
        return GT_ERR_RUNTIME;
    }
    memcpy(fill, lv->ptr, (size_t)lv->nlevels * sizeof *fill);
    for (int64_t i = 0; i < n; i++) lv->rows[fill[lev[i]]++] = (int32_t)i;
    free(fill);
    free(lev);
    return GT_OK;
}

void gt_levels_free(gt_levels *lv)
{
    if (!lv) return;
    free(lv->ptr);
    free(lv->rows);
    memset(lv, 0, sizeof *lv);
}
