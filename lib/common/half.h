/* IEEE binary16 ("half") conversions on the host, rounding to nearest even
 * as the GPU's __float2half_rn does: for scenes kept in half precision on
 * the device (gsrender's SH coefficients), converted while they are staged
 * for the upload. */
#ifndef GT_COMMON_HALF_H
#define GT_COMMON_HALF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One value: round to nearest even; overflow to +-inf; NaN stays NaN
 * (quiet); results below the smallest subnormal round to +-0. */
uint16_t gt_f32_to_f16(float f);
/* Exact (every half is a float). */
float gt_f16_to_f32(uint16_t h);
/* n values, the same results as gt_f32_to_f16 (NaN payloads aside), with
 * the CPU's F16C instructions where it has them. */
void gt_f32_to_f16_array(uint16_t *dst, const float *src, size_t n);

#ifdef __cplusplus
}
#endif
#endif
