/* Host blocks faulted in ahead of being page-locked: a program that knows,
 * before its CUDA context is up, the large pinned buffers it will ask for
 * faults their pages in while the context starts; gt_cu_pinned_alloc then
 * takes a prefaulted block of the exact size and only page-locks it
 * (cudaHostRegister of 96 MB on the H200 machine: 15-21 ms on fresh pages,
 * 2-3 ms on pages already faulted in). A block not taken is freed by
 * gt_pin_prefault_release. */
#ifndef GT_PIN_PREFAULT_H
#define GT_PIN_PREFAULT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* fault in one block of `bytes` (sizes that gt_cu_pinned_alloc page-locks in
 * huge pages only: 4 MiB and more, GT_NO_HUGEPAGE unset; else nothing); best
 * effort: no memory, no block */
void gt_pin_prefault(size_t bytes);
/* a prefaulted block of exactly `bytes`, now the caller's (free() releases it),
 * or NULL */
void *gt_pin_take_prefaulted(size_t bytes);
/* free the prefaulted blocks not taken */
void gt_pin_prefault_release(void);

#ifdef __cplusplus
}
#endif
#endif
