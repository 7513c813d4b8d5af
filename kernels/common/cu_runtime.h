/* The CUDA runtime's C wrappers moved to lib/common/gpu_runtime.h, below
 * every user of the GPU. This forward stays only until the last files that
 * include it (kernels/gs, kernels/stitch, lib/gs/gs_fit.c) switch to
 * "common/gpu_runtime.h"; then it goes. */
#include "common/gpu_runtime.h"
