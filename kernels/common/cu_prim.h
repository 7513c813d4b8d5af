/* C-callable parallel primitives on device arrays, built on CUB: scans, radix
 * sort of key/value pairs (32/64-bit keys), stream compaction, reductions and
 * run-length encoding.  Temporary storage comes from a gt_arena, so hot paths
 * do not cudaMalloc per call (NULL means the process-wide arena).  Functions
 * that return a count to the host synchronize `stream`; the others are
 * asynchronous on it. */
#ifndef GT_CU_PRIM_H
#define GT_CU_PRIM_H

#include <stddef.h>
#include <stdint.h>

#include "common/gpu_runtime.h"
#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* gt_arena: common/gpu_runtime.h */

/* out may equal in for the scans. */
gt_status gt_cu_scan_exclusive_u32(const uint32_t *in, uint32_t *out, size_t n, gt_arena *a, void *stream);
gt_status gt_cu_scan_inclusive_u32(const uint32_t *in, uint32_t *out, size_t n, gt_arena *a, void *stream);
gt_status gt_cu_scan_exclusive_u64(const uint64_t *in, uint64_t *out, size_t n, gt_arena *a, void *stream);
gt_status gt_cu_scan_inclusive_u64(const uint64_t *in, uint64_t *out, size_t n, gt_arena *a, void *stream);

/* Stable LSD radix sort of (key, value) pairs on key bits [begin_bit, end_bit).
 * Inputs are not modified. vals_in/vals_out may be NULL to sort keys only. */
gt_status gt_cu_sort_pairs_u32(const uint32_t *keys_in, uint32_t *keys_out, const uint32_t *vals_in,
                               uint32_t *vals_out, size_t n, int begin_bit, int end_bit,
                               gt_arena *a, void *stream);
gt_status gt_cu_sort_pairs_u64(const uint64_t *keys_in, uint64_t *keys_out, const uint32_t *vals_in,
                               uint32_t *vals_out, size_t n, int begin_bit, int end_bit,
                               gt_arena *a, void *stream);

/* Keep in[i] where flags[i] != 0, in order; *count (host) gets how many. */
gt_status gt_cu_select_flagged_u32(const uint32_t *in, const uint8_t *flags, uint32_t *out, size_t n,
                                   size_t *count, gt_arena *a, void *stream);
gt_status gt_cu_select_flagged_u64(const uint64_t *in, const uint8_t *flags, uint64_t *out, size_t n,
                                   size_t *count, gt_arena *a, void *stream);
/* Indices i (0..n-1) where flags[i] != 0. */
gt_status gt_cu_select_flagged_index(const uint8_t *flags, uint32_t *out_idx, size_t n, size_t *count,
                                     gt_arena *a, void *stream);

/* Reductions; the result goes to the host. Empty input: sum 0, min +inf, max -inf. */
gt_status gt_cu_reduce_sum_f32(const float *in, size_t n, double *out, gt_arena *a, void *stream);
gt_status gt_cu_reduce_sum_f64(const double *in, size_t n, double *out, gt_arena *a, void *stream);
gt_status gt_cu_reduce_sum_u32(const uint32_t *in, size_t n, uint64_t *out, gt_arena *a, void *stream);
gt_status gt_cu_reduce_min_f32(const float *in, size_t n, float *out, gt_arena *a, void *stream);
gt_status gt_cu_reduce_max_f32(const float *in, size_t n, float *out, gt_arena *a, void *stream);

/* Run-length encode: unique_out[k], counts_out[k] for each run of equal keys;
 * *runs (host) gets the number of runs. */
gt_status gt_cu_rle_u32(const uint32_t *in, uint32_t *unique_out, uint32_t *counts_out, size_t n,
                        size_t *runs, gt_arena *a, void *stream);
gt_status gt_cu_rle_u64(const uint64_t *in, uint64_t *unique_out, uint32_t *counts_out, size_t n,
                        size_t *runs, gt_arena *a, void *stream);

#ifdef __cplusplus
}
#endif
#endif
