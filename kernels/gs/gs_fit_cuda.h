/* The training loss (L1 + D-SSIM with its image gradient) and Adam on the
 * GPU (gs_fit.cu) behind a C interface for lib/gs/gs_fit.c; the CPU oracle
 * is lib/gs/gs_fit_loss.c and gs_fit_adam.c. Images are device planar float
 * RGB (3*w*h). Work is queued on `stream` (a cudaStream_t; NULL: default). */
#ifndef GT_KERNELS_GS_FIT_CUDA_H
#define GT_KERNELS_GS_FIT_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "gs/gs_grad.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gt_gs_cu_loss gt_gs_cu_loss;
/* How many evaluations may be queued between fetches. */
#define GT_GS_CU_LOSS_RING 256
typedef struct gt_gs_cu_loss_value {
    double loss, l1, ssim; /* the loss, its L1 part and the mean SSIM */
    double sse, n;         /* sum of squared differences over n values (PSNR) */
} gt_gs_cu_loss_value;
/* A workspace for images up to max_w x max_h. */
gt_status gt_gs_cu_loss_create(int max_w, int max_h, void *stream, gt_gs_cu_loss **out);
size_t gt_gs_cu_loss_bytes(const gt_gs_cu_loss *L);
void gt_gs_cu_loss_destroy(gt_gs_cu_loss *L);
/* Queue the loss of x against y; dl_dx (device, may be NULL) gets
 * dLoss/dx. The sums stay on the device, in the next free slot of the ring
 * (GT_ERR_RUNTIME when all GT_GS_CU_LOSS_RING are taken), until a fetch. */
gt_status gt_gs_cu_loss_eval(gt_gs_cu_loss *L, const float *x, const float *y, int w, int h, double lambda,
                             float *dl_dx);
/* Wait for the queued evaluations; out[k] (room for GT_GS_CU_LOSS_RING)
 * gets the k-th one's values, *count how many; the ring is free again. */
gt_status gt_gs_cu_loss_fetch_all(gt_gs_cu_loss *L, gt_gs_cu_loss_value *out, int *count);
/* Evaluations queued since the last fetch. */
int gt_gs_cu_loss_pending(const gt_gs_cu_loss *L);
/* gt_gs_cu_loss_fetch_all, returning the last one's loss, L1, mean SSIM and
 * sum of squared differences (for PSNR). */
gt_status gt_gs_cu_loss_fetch(gt_gs_cu_loss *L, double *loss, double *l1, double *ssim, double *sse);
/* x[i] clamped to [0, 1] (a render as the evaluation scores it). */
gt_status gt_gs_cu_clamp01(float *x, size_t n, void *stream);

/* dst[i] = src[i] / 255 (training images kept as 8 bits on the device). */
gt_status gt_gs_cu_u8_to_float(const unsigned char *src, float *dst, size_t n, void *stream);

/* Adam step t (1-based) on device arrays, as gt_gs_adam_cpu. */
gt_status gt_gs_cu_adam(float *p, const float *g, float *m, float *v, size_t n, double lr, double lr_rest,
                        int period, int t, void *stream);

/* MCMC (lib/gs/gs_fit_mcmc.h) on device arrays, as gt_gs_mcmc_reg_cpu and
 * gt_gs_mcmc_noise_cpu. */
gt_status gt_gs_cu_mcmc_reg(const gt_gs_raw *r, double opacity_reg, double scale_reg, gt_gs_raw *g, void *stream);
gt_status gt_gs_cu_mcmc_noise(gt_gs_raw *r, double scaler, uint64_t seed, uint64_t step, void *stream);

#ifdef __cplusplus
}
#endif
#endif
