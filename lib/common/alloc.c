#include "common/alloc.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *gt_malloc(size_t bytes, const char *what)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) gt_fail(GT_ERR_RUNTIME, "out of memory allocating %zu bytes for %s", bytes, what);
    return p;
}

void *gt_calloc(size_t n, size_t size, const char *what)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) gt_fail(GT_ERR_RUNTIME, "out of memory allocating %zu x %zu bytes for %s", n, size, what);
    return p;
}

void *gt_malloc_array(size_t n, size_t size, const char *what)
{
    size_t bytes;
    if (!gt_mul_size(n, size, &bytes)) {
        gt_fail(GT_ERR_RUNTIME, "size overflow allocating %zu x %zu bytes for %s", n, size, what);
        return NULL;
    }
    return gt_malloc(bytes, what);
}

bool gt_hugepages_off(void)
{
    static int off = -1; /* read once; a benign race sets the same value */
    if (off < 0) {
        const char *e = getenv("GT_NO_HUGEPAGE");
        off = e && *e && strcmp(e, "0") != 0;
    }
    return off;
}

void *gt_malloc_huge(size_t bytes, const char *what)
{
    const size_t huge = (size_t)2 << 20;
    if (bytes < 2 * huge || gt_hugepages_off()) return gt_malloc(bytes, what);
    if (bytes > SIZE_MAX - huge) {
        gt_fail(GT_ERR_RUNTIME, "size overflow allocating %zu bytes for %s", bytes, what);
        return NULL;
    }
    const size_t m = (bytes + huge - 1) / huge * huge;
    void *p = aligned_alloc(huge, m);
    if (!p) {
        gt_fail(GT_ERR_RUNTIME, "out of memory allocating %zu bytes for %s", bytes, what);
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    madvise(p, m, MADV_HUGEPAGE);
#endif
    return p;
}
