#include "kernels/poisson/pr_gpu.h"
extern "C" gt_status gt_pr_octree_build_cuda(const float *, size_t, int, gt_pr_octree *, gt_timings *) { return gt_fail(GT_ERR_GPU, "todo"); }
extern "C" gt_status gt_pr_prepare_cuda(const gt_pr_input *, const gt_pr_params *, gt_timings *, gt_pr_state *, size_t *, size_t *) { return gt_fail(GT_ERR_GPU, "todo"); }
