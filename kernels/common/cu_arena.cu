// Reusable device scratch memory (kernels/common/cu_prim.h).
#include "kernels/common/cu_check.h"
#include "kernels/common/cu_prim.h"
#include "kernels/common/cu_runtime.h"

extern "C" void gt_arena_init(gt_arena *a)
{
    a->ptr = nullptr;
    a->cap = 0;
}

extern "C" void gt_arena_release(gt_arena *a)
{
    if (a->ptr) {
        cudaDeviceSynchronize();
        gt_cu_free(a->ptr);
    }
    a->ptr = nullptr;
    a->cap = 0;
}

extern "C" gt_status gt_arena_reserve(gt_arena *a, size_t bytes, void **ptr)
{
    if (bytes <= a->cap && a->ptr) {
        *ptr = a->ptr;
        return GT_OK;
    }
    // grow by at least 1.5x so that a sequence of slightly larger requests
    // does not reallocate every time
    size_t want = bytes < a->cap + a->cap / 2 ? a->cap + a->cap / 2 : bytes;
    if (want < 4096) want = 4096;
    if (a->ptr) {
        GT_CU(cudaDeviceSynchronize()); // work queued on the old buffer must finish
        gt_cu_free(a->ptr);
        a->ptr = nullptr;
        a->cap = 0;
    }
    GT_TRY(gt_cu_malloc(&a->ptr, want, "scratch arena"));
    a->cap = want;
    *ptr = a->ptr;
    return GT_OK;
}

static gt_arena default_arena;

extern "C" gt_arena *gt_default_arena(void) { return &default_arena; }
