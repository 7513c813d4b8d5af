/* Adaptive density control and MCMC relocation on the GPU (gs_densify.cu),
 * the same functions as the CPU reference of lib/gs/gs_fit_densify.c
 * (gt_gs_densify_prune, gt_gs_mcmc_relocate, gt_gs_opacity_cap), on device
 * arrays, so that gsrender --fit never moves its Gaussians to the host to
 * change their number. Every gt_gs_raw here holds device pointers; work is
 * queued on `stream` (a cudaStream_t; NULL: the default stream). A call
 * that changes the count waits for its counts (a few bytes) to size the new
 * arrays; nothing else leaves the device. */
#ifndef GT_KERNELS_GS_DENSIFY_CUDA_H
#define GT_KERNELS_GS_DENSIFY_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "gs/gs_fit.h"
#include "gs/gs_grad.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device parameter arrays of n Gaussians of SH degree deg, zeroed (what:
 * the name of the allocation in an out-of-memory message). */
gt_status gt_gs_cu_raw_alloc(gt_gs_raw *d, size_t n, int sh_degree, const char *what);
void gt_gs_cu_raw_free(gt_gs_raw *d);
/* Copy every group of the first min(dst->n, src->n) Gaussians; kind: 0 host
 * to device, 1 device to host, 2 device to device. */
gt_status gt_gs_cu_raw_copy(gt_gs_raw *dst, const gt_gs_raw *src, int kind, void *stream);

/* gt_gs_densify_prune on the device: r, m, v replaced by new device arrays
 * of the new count (the old ones freed); stats: device statistics of r. */
gt_status gt_gs_cu_densify_prune(gt_gs_raw *r, gt_gs_raw *m, gt_gs_raw *v, const gt_gs_grad_stats *stats,
                                 const gt_gs_densify_opts *o, double extent, bool prune_big, uint64_t seed,
                                 gt_gs_densify_count *out, void *stream);
/* gt_gs_mcmc_relocate on the device: relocation in place, growth into new
 * arrays (the old ones freed). */
gt_status gt_gs_cu_mcmc_relocate(gt_gs_raw *r, gt_gs_raw *m, gt_gs_raw *v, const gt_gs_densify_opts *o,
                                 uint64_t seed, gt_gs_densify_count *out, void *stream);
/* The reference's reset_opacity: every opacity at most max_opacity, and the
 * opacities' Adam moments (m, v: n floats each) zeroed. */
gt_status gt_gs_cu_opacity_cap(float *logit_opacity, float *m, float *v, size_t n, double max_opacity,
                               void *stream);

#ifdef __cplusplus
}
#endif
#endif
