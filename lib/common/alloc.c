#include "common/alloc.h"

#include <stdlib.h>

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
