/* CUDA marching cubes (kernels/mc/mc_extract.cu), called by lib/mc. The same
 * slab semantics as gt_mc_slab_cpu (lib/mc/mc.h); vertices and triangles come
 * out in the same order, so the meshes are equal. */
#ifndef GT_KERNELS_MC_CUDA_H
#define GT_KERNELS_MC_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "common/timer.h"
#include "mc/mc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gt_mc_cuda gt_mc_cuda;

/* A context for slabs of at most max_planes planes (the whole volume: Z). */
gt_status gt_mc_cuda_create(const gt_mc_geom *g, int64_t max_planes, gt_mc_cuda **ctx);
void gt_mc_cuda_destroy(gt_mc_cuda *c);
/* Device bytes a context plus its volume buffer needs before the outputs. */
size_t gt_mc_cuda_base_bytes(const gt_mc_geom *g, int64_t planes);

/* Upload planes [zb, zb+nzb) from host (timed as "transfers"). */
gt_status gt_mc_cuda_upload(gt_mc_cuda *c, const float *host, int64_t zb, int64_t nzb, gt_timings *tm);
/* Use a caller's device volume (whole volume, zb = 0) instead of uploads. */
void gt_mc_cuda_use_device_volume(gt_mc_cuda *c, const float *d_vol);

/* Extract slab [z0, z1) from the uploaded planes; results stay on the device
 * (numbering from vbase); *nv, *nt get the slab's counts. */
gt_status gt_mc_cuda_slab(gt_mc_cuda *c, int64_t z0, int64_t z1, uint64_t vbase, uint64_t *nv,
                          uint64_t *nt, gt_timings *tm);
/* Small slabs scan their vertex and triangle counts packed in one 64-bit
 * word; this forces the two separate scans that large slabs use (tests). */
void gt_mc_cuda_force_two_scans(gt_mc_cuda *c, bool on);
/* The last slab's results where they are on the device (valid until the
 * next slab or gt_mc_cuda_destroy; nrm NULL without normals) and the stream
 * that is still making them. */
void gt_mc_cuda_results(const gt_mc_cuda *c, const float **xyz, const float **nrm, const int32_t **tris,
                        uint64_t *nv, uint64_t *nt, void **stream);
/* Copy the last slab's results to the end of m (timed as "transfers"). */
gt_status gt_mc_cuda_download(gt_mc_cuda *c, gt_mc_mesh *m, gt_timings *tm);

#ifdef __cplusplus
}
#endif
#endif
