/* The GPU AMG from host data (amg.h: gt_amg_gpu_run, gt_amg_gpu_pcg), for
 * the GPU test and the benchmark; GT_ERR_GPU in builds without CUDA. */
#include "gt_config.h"
#include "sparse/amg.h"
#if GT_HAVE_CUDA
#include "kernels/sparse/amg_cu.h"
#endif

gt_status gt_amg_gpu_run(const gt_csr *a, const gt_precond_opts *o, gt_amg *h, const double *r, double *z, int reps,
                         gt_amg_gpu_result *res)
{
#if GT_HAVE_CUDA
    return gt_cu_amg_run(a, o, h, r, z, reps, res);
#else
    (void)a, (void)o, (void)h, (void)r, (void)z, (void)reps, (void)res;
    return gt_fail(GT_ERR_GPU, "amg: built without CUDA");
#endif
}

gt_status gt_amg_gpu_pcg(const gt_csr *a, const gt_precond_opts *o, const double *b, double *x, double tol, int maxit,
                         gt_amg_gpu_result *res)
{
#if GT_HAVE_CUDA
    return gt_cu_amg_pcg(a, o, b, x, tol, maxit, res);
#else
    (void)a, (void)o, (void)b, (void)x, (void)tol, (void)maxit, (void)res;
    return gt_fail(GT_ERR_GPU, "amg: built without CUDA");
#endif
}
