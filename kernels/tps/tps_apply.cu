// Applying a thin-plate spline on the GPU: evaluation at many points
// (tps_eval_kernel) and volume resampling (voxel world positions, f of
// them, trilinear samples). The per-element math (U, the affine part, the
// voxel conversions, the trilinear sample) is lib/tps/tps_math.h, the same
// functions the CPU reference calls; double precision throughout, so the
// warp matches the CPU to rounding (the same terms summed in the same order).
//
// Launch shapes:
//  - tps_eval_kernel: 256 threads, each holding PPT = 2 points in registers;
//    the block walks the control points in tiles of 256 staged in shared
//    memory (c and w), so every control point is read from global memory
//    once per block, and each shared load feeds PPT kernel evaluations
//    (the work is O(points x control points), bound by the double-precision
//    log/sqrt, not by memory). Grids beyond 2^30 blocks are launched in chunks.
//  - tps_voxel_pos, tps_sample: one voxel per thread, 256-thread blocks in
//    a grid-stride loop over at most 65536 blocks (memory-bound, O(voxels)).
#include <cuda_runtime.h>

#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/tps/tps_cuda.h"
#include "tps/tps_math.h"

#define TPS_BLOCK 256
#define TPS_PPT 2

// small arrays passed by value: they live in the kernel's parameter space
struct Affine { double a[12]; }; // 4x3 row-major (tps_affine_plus)
struct Mat3 { double m[9]; };
struct Vec3 { double v[3]; };

// p and out: npts*3 (row-major); may alias (each thread reads its points first)
template <int KERNEL>
__global__ void __launch_bounds__(TPS_BLOCK)
tps_eval_kernel(size_t n, const double *__restrict__ c, const double *__restrict__ w, const Affine A,
                const double *p, size_t npts, double *out)
{
    __shared__ double sc[3 * TPS_BLOCK];
    __shared__ double sw[3 * TPS_BLOCK];
    const size_t base = blockIdx.x * (size_t)(TPS_BLOCK * TPS_PPT) + threadIdx.x;
    double x[TPS_PPT], y[TPS_PPT], z[TPS_PPT], f0[TPS_PPT], f1[TPS_PPT], f2[TPS_PPT];
#pragma unroll
    for (int q = 0; q < TPS_PPT; q++) {
        size_t i = base + (size_t)q * TPS_BLOCK;
        x[q] = y[q] = z[q] = 0.0;
        if (i < npts) {
            x[q] = p[3 * i];
            y[q] = p[3 * i + 1];
            z[q] = p[3 * i + 2];
        }
        f0[q] = f1[q] = f2[q] = 0.0;
    }
    for (size_t t0 = 0; t0 < n; t0 += TPS_BLOCK) {
        const size_t cnt = n - t0 < TPS_BLOCK ? n - t0 : TPS_BLOCK;
        __syncthreads(); // previous tile consumed
        for (size_t k = threadIdx.x; k < 3 * cnt; k += TPS_BLOCK) {
            sc[k] = c[3 * t0 + k];
            sw[k] = w[3 * t0 + k];
        }
        __syncthreads();
        for (int k = 0; k < (int)cnt; k++) {
            const double cx = sc[3 * k], cy = sc[3 * k + 1], cz = sc[3 * k + 2];
            const double wx = sw[3 * k], wy = sw[3 * k + 1], wz = sw[3 * k + 2];
#pragma unroll
            for (int q = 0; q < TPS_PPT; q++) {
                double u = tps_u_at(KERNEL, x[q], y[q], z[q], cx, cy, cz);
                f0[q] += wx * u;
                f1[q] += wy * u;
                f2[q] += wz * u;
            }
        }
    }
#pragma unroll
    for (int q = 0; q < TPS_PPT; q++) {
        size_t i = base + (size_t)q * TPS_BLOCK;
        if (i < npts) {
            const double sum[3] = {f0[q], f1[q], f2[q]};
            double f[3];
            tps_affine_plus(A.a, x[q], y[q], z[q], sum, f);
            out[3 * i] = f[0];
            out[3 * i + 1] = f[1];
            out[3 * i + 2] = f[2];
        }
    }
}

static gt_status launch_eval(int kernel, size_t n, const double *dc, const double *dw,
                             const double *a, const double *dp, size_t npts, double *dout)
{
    const size_t per = (size_t)TPS_BLOCK * TPS_PPT;
    Affine A;
    for (int k = 0; k < 12; k++) A.a[k] = a[k];
    size_t blocks = (npts + per - 1) / per;
    // grid x is limited to 2^31-1 blocks; chunk larger inputs
    const size_t maxb = (size_t)1 << 30;
    for (size_t b0 = 0; b0 < blocks; b0 += maxb) {
        size_t nb = blocks - b0 < maxb ? blocks - b0 : maxb;
        size_t off = b0 * per, cnt = npts - off < nb * per ? npts - off : nb * per;
        if (kernel == TPS_KERNEL_R)
            tps_eval_kernel<TPS_KERNEL_R><<<(unsigned)nb, TPS_BLOCK>>>(n, dc, dw, A, dp + 3 * off, cnt,
                                                                       dout + 3 * off);
        else
            tps_eval_kernel<TPS_KERNEL_R2LOGR><<<(unsigned)nb, TPS_BLOCK>>>(n, dc, dw, A, dp + 3 * off,
                                                                            cnt, dout + 3 * off);
        GT_CU_LAUNCH("tps_eval_kernel");
    }
    return GT_OK;
}

static void add(gt_timings *tm, const char *name, double ms)
{
    if (tm) gt_timings_add(tm, name, ms);
}

extern "C" gt_status gt_tps_cuda_eval(int kernel, size_t n, const double *c, const double *w,
                                      const double *a, const double *p, size_t npts, double *out,
                                      gt_timings *tm)
{
    if (npts == 0) return GT_OK;
    double *dc = nullptr, *dw = nullptr, *dp = nullptr;
    gt_status st = GT_OK;
    gt_timer t;
#define CHK(x) do { st = (x); if (st != GT_OK) goto done; } while (0)
    gt_timer_start(&t, true, nullptr);
    CHK(gt_cu_malloc((void **)&dc, n * 3 * sizeof(double), "control points"));
    CHK(gt_cu_malloc((void **)&dw, n * 3 * sizeof(double), "weights"));
    CHK(gt_cu_malloc((void **)&dp, npts * 3 * sizeof(double), "points"));
    CHK(gt_cu_memcpy_h2d(dc, c, n * 3 * sizeof(double), nullptr));
    CHK(gt_cu_memcpy_h2d(dw, w, n * 3 * sizeof(double), nullptr));
    CHK(gt_cu_memcpy_h2d(dp, p, npts * 3 * sizeof(double), nullptr));
    add(tm, "transfer", gt_timer_stop(&t));
    gt_timer_start(&t, true, nullptr);
    CHK(launch_eval(kernel, n, dc, dw, a, dp, npts, dp));
    add(tm, "evaluate", gt_timer_stop(&t));
    gt_timer_start(&t, true, nullptr);
    CHK(gt_cu_memcpy_d2h(out, dp, npts * 3 * sizeof(double), nullptr));
    add(tm, "transfer", gt_timer_stop(&t));
done:
#undef CHK
    gt_cu_free(dc);
    gt_cu_free(dw);
    gt_cu_free(dp);
    return st;
}

// world position of voxel v (x fastest)
__global__ void tps_voxel_pos(long long d0, long long d1, size_t nvox, const Mat3 M, const Vec3 o,
                              double *pos)
{
    for (size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x; v < nvox;
         v += (size_t)gridDim.x * blockDim.x) {
        double i = (double)(v % (size_t)d0);
        double j = (double)((v / (size_t)d0) % (size_t)d1);
        double k = (double)(v / ((size_t)d0 * (size_t)d1));
        double q[3];
        tps_voxel_world(M.m, o.v, i, j, k, q);
        pos[3 * v] = q[0];
        pos[3 * v + 1] = q[1];
        pos[3 * v + 2] = q[2];
    }
}

// voxel v takes the trilinear sample of f at the index of the warped position q[v]
__global__ void tps_sample(const float *__restrict__ f, long long d0, long long d1, long long d2,
                           const Mat3 Minv, const Vec3 o, const double *__restrict__ q, size_t nvox,
                           float *__restrict__ out)
{
    for (size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x; v < nvox;
         v += (size_t)gridDim.x * blockDim.x) {
        double idx[3];
        tps_world_index(Minv.m, o.v, q + 3 * v, idx);
        out[v] = (float)tps_trilinear(f, d0, d1, d2, idx[0], idx[1], idx[2]);
    }
}

extern "C" gt_status gt_tps_cuda_warp_volume(int kernel, size_t n, const double *c,
                                             const double *w, const double *a, const float *in,
                                             const long long dims[3], const double M[9],
                                             const double Minv[9], const double o[3], float *out,
                                             gt_timings *tm)
{
    const size_t nvox = (size_t)dims[0] * (size_t)dims[1] * (size_t)dims[2];
    double *dc = nullptr, *dw = nullptr, *dq = nullptr;
    float *din = nullptr, *dout = nullptr;
    gt_status st = GT_OK;
    gt_timer t;
    Mat3 mm, mi;
    Vec3 ov;
    for (int i = 0; i < 9; i++) {
        mm.m[i] = M[i];
        mi.m[i] = Minv[i];
    }
    for (int i = 0; i < 3; i++) ov.v[i] = o[i];
#define CHK(x) do { st = (x); if (st != GT_OK) goto done; } while (0)
    gt_timer_start(&t, true, nullptr);
    CHK(gt_cu_malloc((void **)&dc, n * 3 * sizeof(double), "control points"));
    CHK(gt_cu_malloc((void **)&dw, n * 3 * sizeof(double), "weights"));
    CHK(gt_cu_malloc((void **)&dq, nvox * 3 * sizeof(double), "voxel positions"));
    CHK(gt_cu_malloc((void **)&din, nvox * sizeof(float), "volume"));
    CHK(gt_cu_malloc((void **)&dout, nvox * sizeof(float), "warped volume"));
    CHK(gt_cu_memcpy_h2d(dc, c, n * 3 * sizeof(double), nullptr));
    CHK(gt_cu_memcpy_h2d(dw, w, n * 3 * sizeof(double), nullptr));
    CHK(gt_cu_memcpy_h2d(din, in, nvox * sizeof(float), nullptr));
    add(tm, "transfer", gt_timer_stop(&t));
    gt_timer_start(&t, true, nullptr);
    tps_voxel_pos<<<gt_grid(nvox, 256, 65536), 256>>>(dims[0], dims[1], nvox, mm, ov, dq);
    CHK(gt_cu_status_from(cudaGetLastError(), "tps_voxel_pos", __FILE__, __LINE__));
    CHK(launch_eval(kernel, n, dc, dw, a, dq, nvox, dq));
    tps_sample<<<gt_grid(nvox, 256, 65536), 256>>>(din, dims[0], dims[1], dims[2], mi, ov, dq, nvox,
                                                    dout);
    CHK(gt_cu_status_from(cudaGetLastError(), "tps_sample", __FILE__, __LINE__));
    add(tm, "warp volume", gt_timer_stop(&t));
    gt_timer_start(&t, true, nullptr);
    CHK(gt_cu_memcpy_d2h(out, dout, nvox * sizeof(float), nullptr));
    add(tm, "transfer", gt_timer_stop(&t));
done:
#undef CHK
    gt_cu_free(dc);
    gt_cu_free(dw);
    gt_cu_free(dq);
    gt_cu_free(din);
    gt_cu_free(dout);
    return st;
}
