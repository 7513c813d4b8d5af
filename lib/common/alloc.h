/* Checked allocation: sizes computed from untrusted headers go through these,
 * so a lying header gives an error, not an overflow or a giant allocation. */
#ifndef GT_ALLOC_H
#define GT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* a*b (and a*b*c) with overflow detection: false on overflow */
static inline bool gt_mul_size(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool gt_mul3_size(size_t a, size_t b, size_t c, size_t *out)
{
    size_t t;
    return gt_mul_size(a, b, &t) && gt_mul_size(t, c, out);
}

/* malloc/calloc that set a GT_ERR_RUNTIME message naming `what` on failure. */
void *gt_malloc(size_t bytes, const char *what);
void *gt_calloc(size_t n, size_t size, const char *what);
/* n*size with overflow check */
void *gt_malloc_array(size_t n, size_t size, const char *what);
/* gt_malloc for large arrays, in transparent huge pages where the system
 * gives them on request (a page fault per 2 MiB instead of per 4 KiB: on the
 * GPU machine 4 KiB faults fill fresh memory at about 2 GB/s on one core, a
 * third of what huge pages allow). Below 4 MiB, or with GT_NO_HUGEPAGE=1 in
 * the environment (to compare), plain malloc. free() releases it. */
void *gt_malloc_huge(size_t bytes, const char *what);
/* GT_NO_HUGEPAGE is set (to anything but 0): gt_malloc_huge is plain malloc
 * and pinned blocks come from cudaMallocHost (gt_cu_pinned_alloc) */
bool gt_hugepages_off(void);

#ifdef __cplusplus
}
#endif
#endif
