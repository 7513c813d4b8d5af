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
/* Overlapped upload from a reader, through two pinned staging slots:
 *   stage_begin(zb, nzb, &have): the slab will hold planes [zb, zb+nzb); the
 *     planes the last slab already brought up are kept (moved on the device),
 *     the ones from `have` on must be staged;
 *   then for each piece of at most stage_planes() planes, in z order:
 *     stage_buffer(&h) (a free slot; waits for its previous copy), fill h,
 *     stage_upload(h, z, nz) (an asynchronous copy on the context's stream,
 *     so the next piece is read while this one travels);
 *   stage_wait(): all copies done (gt_mc_cuda_slab would wait anyway, on the
 *     same stream; this lets the caller time the upload's tail).
 * Pinned slots go through gt_cu_pinned_alloc (the allocation test hook).
 * A slot holds 64 MiB of planes (at least one plane); GT_MC_STAGE_PLANES=N
 * in the environment makes it N planes (tests: several pieces per slab). */
gt_status gt_mc_cuda_stage_begin(gt_mc_cuda *c, int64_t zb, int64_t nzb, int64_t *have_end);
int64_t gt_mc_cuda_stage_planes(gt_mc_cuda *c);
gt_status gt_mc_cuda_stage_buffer(gt_mc_cuda *c, float **host);
gt_status gt_mc_cuda_stage_upload(gt_mc_cuda *c, const float *host, int64_t z, int64_t nz);
gt_status gt_mc_cuda_stage_wait(gt_mc_cuda *c);
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
