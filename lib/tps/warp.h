/* Resample a volume through a thin-plate spline warp (trilinear). */
#ifndef GT_TPS_WARP_H
#define GT_TPS_WARP_H

#include "io/volume.h"
#include "tps/tps.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out gets in's grid (dims, directions, origin) and type. Output voxel at
 * world position q takes the trilinear sample of `in` at world position
 * f(q): `inverse` maps output space to input space (the inverse of the warp
 * that moves the image). Samples outside the input are 0; integer types are
 * rounded and clamped to their range. */
gt_status gt_tps_warp_volume(const gt_tps *inverse, const gt_volume *in, gt_volume *out,
                             gt_device_kind device, gt_timings *tm);

#ifdef __cplusplus
}
#endif
#endif
