/* Private to lib/stitch's calibration (calib.c, calib_pairs.c,
 * calib_job.c): a pair's fit and its dense refinement's correspondences. */
#ifndef GT_STITCH_CALIB_PRIV_H
#define GT_STITCH_CALIB_PRIV_H

#include "stitch/calib.h"

/* whether H (camera i -> camera j, cameras w x h) is a plausible view
 * change for the homography model: every corner in front, the warped area
 * within 1/16..16 */
bool gt_calib_sane(const double H[9], int w, int h);
/* One pair: a first model from the ratio-tested matches m0, guided
 * matching, (the rotation model, luma planes yi, yj given) the matches to
 * sub-pixel accuracy, RANSAC and Levenberg-Marquardt into p (H, inliers in
 * pa/pb and fa/fb, rms, used: plausible for o->model). */
gt_status gt_calib_fit_pair(const gt_calib_feat *fi, const gt_calib_feat *fj, const gt_calib_match *m0, int nm0,
                            const gt_stitch_calib_opts *o, const uint8_t *yi, const uint8_t *yj, int w, int h,
                            int pitch, uint64_t seed, gt_calib_pair *p);
/* After the dense refinement of p->H: the inliers' error under it (rms,
 * max), then points of the overlap and their images as the pair's
 * correspondences (pa, pb) for the homographies' global refinement. */
gt_status gt_calib_final_pair(gt_calib_pair *p, int w, int h);

#endif
