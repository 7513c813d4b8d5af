// Evaluate a thin-plate spline at many points: each thread holds PPT points
// in registers; the block walks the control points in tiles staged in shared
// memory (c and w), so every control point is read from global memory once
// per block. Double precision (coordinates, U and accumulation): the warp
// is exact to rounding compared with the CPU reference.
// Also: volume resampling (world positions -> f -> trilinear sample).
#include <cuda_runtime.h>

#include "kernels/common/cu_check.h"
#include "kernels/common/cu_runtime.h"
#include "kernels/tps/tps_cuda.h"

#define TPS_BLOCK 256
#define TPS_PPT 2

template <int KERNEL>
__device__ __forceinline__ double tps_u2(double r2)
{
    if (KERNEL == 1) return -sqrt(r2);
    return r2 > 0.0 ? 0.5 * r2 * log(r2) : 0.0;
}

// p and out: npts*3 (row-major); may alias (each thread reads its points first)
template <int KERNEL>
__global__ void __launch_bounds__(TPS_BLOCK)
tps_eval_kernel(size_t n, const double *__restrict__ c, const double *__restrict__ w, double a0,
                double a1, double a2, double a3, double a4, double a5, double a6, double a7,
                double a8, double a9, double a10, double a11, const double *p, size_t npts,
                double *out)
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
                double dx = x[q] - cx, dy = y[q] - cy, dz = z[q] - cz;
                double u = tps_u2<KERNEL>(dx * dx + dy * dy + dz * dz);
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
            out[3 * i] = a0 + a3 * x[q] + a6 * y[q] + a9 * z[q] + f0[q];
            out[3 * i + 1] = a1 + a4 * x[q] + a7 * y[q] + a10 * z[q] + f1[q];
            out[3 * i + 2] = a2 + a5 * x[q] + a8 * y[q] + a11 * z[q] + f2[q];
        }
    }
}

static gt_status launch_eval(int kernel, size_t n, const double *dc, const double *dw,
                             const double *a, const double *dp, size_t npts, double *dout)
{
    const size_t per = (size_t)TPS_BLOCK * TPS_PPT;
    size_t blocks = (npts + per - 1) / per;
    // grid x is limited to 2^31-1 blocks; chunk larger inputs
    const size_t maxb = (size_t)1 << 30;
    for (size_t b0 = 0; b0 < blocks; b0 += maxb) {
        size_t nb = blocks - b0 < maxb ? blocks - b0 : maxb;
        size_t off = b0 * per, cnt = npts - off < nb * per ? npts - off : nb * per;
        if (kernel == 1)
            tps_eval_kernel<1><<<(unsigned)nb, TPS_BLOCK>>>(
                n, dc, dw, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
                a[11], dp + 3 * off, cnt, dout + 3 * off);
        else
            tps_eval_kernel<0><<<(unsigned)nb, TPS_BLOCK>>>(
                n, dc, dw, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
                a[11], dp + 3 * off, cnt, dout + 3 * off);
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
__global__ void tps_voxel_pos(long long d0, long long d1, size_t nvox, double m0, double m1,
                              double m2, double m3, double m4, double m5, double m6, double m7,
                              double m8, double o0, double o1, double o2, double *pos)
{
    for (size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x; v < nvox;
         v += (size_t)gridDim.x * blockDim.x) {
        double i = (double)(v % (size_t)d0);
        double j = (double)((v / (size_t)d0) % (size_t)d1);
        double k = (double)(v / ((size_t)d0 * (size_t)d1));
        pos[3 * v] = o0 + i * m0 + j * m3 + k * m6;
        pos[3 * v + 1] = o1 + i * m1 + j * m4 + k * m7;
        pos[3 * v + 2] = o2 + i * m2 + j * m5 + k * m8;
    }
}

struct Mat3 { double m[9]; };

__global__ void tps_sample(const float *__restrict__ f, long long d0, long long d1, long long d2,
                           Mat3 Minv, double o0, double o1, double o2,
                           const double *__restrict__ q, size_t nvox, float *__restrict__ out)
{
    for (size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x; v < nvox;
         v += (size_t)gridDim.x * blockDim.x) {
        double r0 = q[3 * v] - o0, r1 = q[3 * v + 1] - o1, r2 = q[3 * v + 2] - o2;
        const double *M = Minv.m;
        double x = M[0] * r0 + M[1] * r1 + M[2] * r2;
        double y = M[3] * r0 + M[4] * r1 + M[5] * r2;
        double z = M[6] * r0 + M[7] * r1 + M[8] * r2;
        double val = 0.0;
        const double e = 1e-6; // within 1e-6 voxel of the grid counts as on it (as the CPU)
        if (x >= -e && y >= -e && z >= -e && x <= d0 - 1 + e && y <= d1 - 1 + e &&
            z <= d2 - 1 + e) {
            x = fmin(fmax(x, 0.0), (double)(d0 - 1));
            y = fmin(fmax(y, 0.0), (double)(d1 - 1));
            z = fmin(fmax(z, 0.0), (double)(d2 - 1));
            long long i = (long long)x, j = (long long)y, k = (long long)z;
            if (i > d0 - 2) i = d0 - 2 < 0 ? 0 : d0 - 2;
            if (j > d1 - 2) j = d1 - 2 < 0 ? 0 : d1 - 2;
            if (k > d2 - 2) k = d2 - 2 < 0 ? 0 : d2 - 2;
            double fx = x - i, fy = y - j, fz = z - k;
            long long i1 = i + 1 < d0 ? i + 1 : i, j1 = j + 1 < d1 ? j + 1 : j,
                      k1 = k + 1 < d2 ? k + 1 : k;
#define V(a, b, c) (double)f[(a) + d0 * ((b) + d1 * (c))]
            double c00 = V(i, j, k) * (1 - fx) + V(i1, j, k) * fx;
            double c10 = V(i, j1, k) * (1 - fx) + V(i1, j1, k) * fx;
            double c01 = V(i, j, k1) * (1 - fx) + V(i1, j, k1) * fx;
            double c11 = V(i, j1, k1) * (1 - fx) + V(i1, j1, k1) * fx;
#undef V
            double c0 = c00 * (1 - fy) + c10 * fy, c1 = c01 * (1 - fy) + c11 * fy;
            val = c0 * (1 - fz) + c1 * fz;
        }
        out[v] = (float)val;
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
    Mat3 mi;
    for (int i = 0; i < 9; i++) mi.m[i] = Minv[i];
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
    tps_voxel_pos<<<gt_grid(nvox, 256, 65536), 256>>>(dims[0], dims[1], nvox, M[0], M[1], M[2],
                                                       M[3], M[4], M[5], M[6], M[7], M[8], o[0],
                                                       o[1], o[2], dq);
    CHK(gt_cu_status_from(cudaGetLastError(), "tps_voxel_pos", __FILE__, __LINE__));
    CHK(launch_eval(kernel, n, dc, dw, a, dq, nvox, dq));
    tps_sample<<<gt_grid(nvox, 256, 65536), 256>>>(din, dims[0], dims[1], dims[2], mi, o[0],
                                                    o[1], o[2], dq, nvox, dout);
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
