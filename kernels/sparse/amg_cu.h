/* Smoothed-aggregation AMG on the GPU (the twin of lib/sparse/amg*.c): the
 * whole set-up on the device (strength, MIS-2 aggregation, smoothed
 * prolongator, Galerkin products by a two-pass hash SpGEMM, dense inverse
 * of the coarsest level) and the V-cycle queued on a stream without host
 * synchronisation. C API. */
#ifndef GT_AMG_CU_H
#define GT_AMG_CU_H

#include "common/status.h"
#include "kernels/sparse/sparse_cu.h"
#include "sparse/amg.h"
#include "sparse/precond.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The AMG preconditioner on the GPU from d (prec 8, CSR; host is the same
   matrix on the host or NULL, read only by the multicolour Gauss-Seidel
   smoother, whose colouring is the CPU's gt_sp_colour). p->on_gpu;
   p->apply(ctx, r, z, stream) queues one V-cycle from z = 0 on stream
   (device vectors). p->summary (verbose) has the level table and the set-up
   time of each stage (each stage synchronised for its time). */
gt_status gt_cu_amg_create(const gt_spd *d, const gt_csr *host, const gt_precond_opts *o, gt_precond *p);

/* For tests and benchmarks: the device hierarchy of p copied into a host
   gt_amg (levels' a, p, r with r's rows unsorted, agg, dinv, rho; the coarsest factor is not
   copied, nc is set); free with gt_amg_free. */
gt_status gt_cu_amg_download(const gt_precond *p, gt_amg *h);
/* The per-stage set-up times of p (GT_AMG_NSTAGES entries). */
void gt_cu_amg_stage_ms(const gt_precond *p, double *ms);

/* The host-data entry points of lib/sparse/amg.h (gt_amg_gpu_run and
   gt_amg_gpu_pcg; amg_pcg.cu holds the PCG loop). */
gt_status gt_cu_amg_run(const gt_csr *a, const gt_precond_opts *o, gt_amg *h, const double *r, double *z, int reps,
                        gt_amg_gpu_result *res);
gt_status gt_cu_amg_pcg(const gt_csr *a, const gt_precond_opts *o, const double *b, double *x, double tol, int maxit,
                        gt_amg_gpu_result *res);

#ifdef __cplusplus
}
#endif
#endif
