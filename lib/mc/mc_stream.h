/* Private to lib/mc: the streamed extraction of mc.c with the option that
 * mc_ply.c uses to leave a one-pass CUDA mesh on the device. */
#ifndef GT_MC_STREAM_H
#define GT_MC_STREAM_H

#include "mc/mc.h"

/* gt_mc_extract_stream; when keep is non-NULL, dev is CUDA and the volume
 * goes in one pass, *keep gets the gt_mc_cuda context (kernels/mc/mc_cuda.h)
 * with the mesh still on the device and m stays empty: the caller reads the
 * results (gt_mc_cuda_results) and destroys the context. Else *keep = NULL
 * and m holds the mesh. */
gt_status gt_mc_extract_stream_keep(gt_device_kind dev, const int64_t dims[3], gt_mc_read_fn read, void *ctx,
                                    const gt_mc_params *p, size_t max_mem, int64_t slab_planes, gt_mc_mesh *m,
                                    gt_timings *tm, void **keep);

/* (CUDA builds) After the GPU ran out of memory with slabs of P planes: the
 * --max-gpu-mem advice (z-slabs of half as many), added to the message. */
void gt_mc_slab_hint(const gt_mc_geom *g, int64_t P);

#endif
