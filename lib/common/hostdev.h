/* One qualifier for functions that the CPU reference (C11, lib/<domain>) and
 * the CUDA kernels (kernels/<domain>) both compile from the same header, so
 * that the per-element math of an algorithm is written once:
 *
 *     #include "common/hostdev.h"
 *     GT_HD float gt_xx_weight(float t) { ... }
 *
 * Under nvcc it expands to __host__ __device__ __forceinline__, under a C
 * compiler to static inline. Such headers hold only pure functions of their
 * arguments (no allocation, no I/O, no globals), so both paths compute the
 * same numbers from the same expressions. */
#ifndef GT_HOSTDEV_H
#define GT_HOSTDEV_H

#ifdef __CUDACC__
#define GT_HD __host__ __device__ __forceinline__
#else
#define GT_HD static inline
#endif

#endif
