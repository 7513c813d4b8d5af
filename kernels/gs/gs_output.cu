// gsrender's Y4M output on the GPU (gs_output.h): RGB -> YUV kernel, the
// pinned download slots and their second stream.
//
// k_rgb_to_yuv: one thread per chroma sample (one pixel for 4:4:4, a 2x1 or
// 2x2 block otherwise); it writes the block's lumas and its Cb/Cr. The
// arithmetic mirrors gt_rgb_to_yuv in lib/io/yuv_format.c expression for
// expression in double, with __dmul_rn/__dadd_rn/__ddiv_rn so that nvcc
// cannot fuse a multiply and an add that the CPU rounds twice.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gs/gs_math.h"
#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "kernels/gs/gs_output.h"

namespace {

using Conv = gt_gs_yuv_planes;

__device__ __forceinline__ uint8_t clamp8(double v)
{
    v = __dadd_rn(v, 0.5);
    return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v;
}

__device__ __forceinline__ void rgb_at(const uint8_t *p, size_t i, uint8_t o[3])
{
    o[0] = p[3 * i];
    o[1] = p[3 * i + 1];
    o[2] = p[3 * i + 2];
}

__device__ __forceinline__ void rgb_at(const float *p, size_t i, uint8_t o[3])
{
    o[0] = gs_to8(p[3 * i]);
    o[1] = gs_to8(p[3 * i + 1]);
    o[2] = gs_to8(p[3 * i + 2]);
}

template <typename T>
__global__ void k_rgb_to_yuv(const T *__restrict__ rgb, Conv c, uint8_t *__restrict__ d)
{
    const int cwid = c.w / c.sx, chei = c.h / c.sy;
    const size_t n = (size_t)cwid * chei;
    const double dkb = __dmul_rn(2.0, __dadd_rn(1.0, -c.kb)), dkr = __dmul_rn(2.0, __dadd_rn(1.0, -c.kr));
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n; k += (size_t)gridDim.x * blockDim.x) {
        const int cx = (int)(k % cwid), cy = (int)(k / cwid);
        double cb = 0, cr = 0;
        for (int by = 0; by < c.sy; by++)
            for (int bx = 0; bx < c.sx; bx++) {
                const int x = cx * c.sx + bx, y = cy * c.sy + by;
                uint8_t p[3];
                rgb_at(rgb, (size_t)y * c.w + x, p);
                const double R = __ddiv_rn((double)p[0], 255.0), G = __ddiv_rn((double)p[1], 255.0),
                             B = __ddiv_rn((double)p[2], 255.0);
                const double Y = __dadd_rn(__dadd_rn(__dmul_rn(c.kr, R), __dmul_rn(c.kg, G)), __dmul_rn(c.kb, B));
                d[c.off[0] + (size_t)y * c.stride[0] + (size_t)x * c.step[0]] =
                    clamp8(__dadd_rn(c.yo, __dmul_rn(c.ys, Y)));
                cb = __dadd_rn(cb, __ddiv_rn(__dadd_rn(B, -Y), dkb));
                cr = __dadd_rn(cr, __ddiv_rn(__dadd_rn(R, -Y), dkr));
            }
        const double nb = (double)(c.sx * c.sy);
        cb = __ddiv_rn(cb, nb);
        cr = __ddiv_rn(cr, nb);
        d[c.off[1] + (size_t)cy * c.stride[1] + (size_t)cx * c.step[1]] = clamp8(__dadd_rn(128.0, __dmul_rn(c.cs, cb)));
        d[c.off[2] + (size_t)cy * c.stride[2] + (size_t)cx * c.step[2]] = clamp8(__dadd_rn(128.0, __dmul_rn(c.cs, cr)));
    }
}

template <typename T>
gt_status launch(const T *rgb, const Conv &c, uint8_t *d, cudaStream_t st)
{
    size_t n = (size_t)(c.w / c.sx) * (size_t)(c.h / c.sy);
    k_rgb_to_yuv<T><<<gt_grid(n, 256, 1u << 16), 256, 0, st>>>(rgb, c, d);
    GT_CU_LAUNCH("k_rgb_to_yuv");
    return GT_OK;
}

} // namespace

struct gt_gs_cu_yuv {
    Conv c;
    int device;
    cudaStream_t down;
    uint8_t *d_frame[GT_GS_YUV_SLOTS];
    uint8_t *h_frame[GT_GS_YUV_SLOTS];
    cudaEvent_t converted[GT_GS_YUV_SLOTS], down0[GT_GS_YUV_SLOTS], down1[GT_GS_YUV_SLOTS];
};

extern "C" void gt_gs_cu_yuv_destroy(gt_gs_cu_yuv *y)
{
    if (!y) return;
    if (y->down) cudaStreamSynchronize(y->down);
    for (int s = 0; s < GT_GS_YUV_SLOTS; s++) {
        if (y->d_frame[s]) gt_cu_free(y->d_frame[s]);
        if (y->h_frame[s]) gt_cu_pinned_free(y->h_frame[s]);
        if (y->converted[s]) cudaEventDestroy(y->converted[s]);
        if (y->down0[s]) cudaEventDestroy(y->down0[s]);
        if (y->down1[s]) cudaEventDestroy(y->down1[s]);
    }
    if (y->down) gt_cu_stream_destroy(y->down);
    free(y);
}

static gt_status yuv_create(const Conv *p, gt_gs_cu_yuv *y)
{
    y->c = *p;
    GT_CU(cudaGetDevice(&y->device));
    void *s;
    GT_TRY(gt_cu_stream_create(&s));
    y->down = (cudaStream_t)s;
    for (int k = 0; k < GT_GS_YUV_SLOTS; k++) {
        GT_TRY(gt_cu_malloc((void **)&y->d_frame[k], y->c.bytes, "YUV frame"));
        GT_TRY(gt_cu_pinned_alloc((void **)&y->h_frame[k], y->c.bytes, "YUV frame (pinned)"));
        GT_CU(cudaEventCreateWithFlags(&y->converted[k], cudaEventDisableTiming));
        GT_CU(cudaEventCreate(&y->down0[k]));
        GT_CU(cudaEventCreate(&y->down1[k]));
    }
    return GT_OK;
}

extern "C" gt_status gt_gs_cu_yuv_create(const gt_gs_yuv_planes *p, gt_gs_cu_yuv **out)
{
    *out = NULL;
    gt_gs_cu_yuv *y = (gt_gs_cu_yuv *)calloc(1, sizeof *y);
    if (!y) return gt_fail(GT_ERR_RUNTIME, "out of memory (YUV output)");
    gt_status st = yuv_create(p, y);
    if (st != GT_OK) {
        gt_gs_cu_yuv_destroy(y);
        return st;
    }
    *out = y;
    return GT_OK;
}

extern "C" size_t gt_gs_cu_yuv_frame_bytes(const gt_gs_cu_yuv *y)
{
    return y->c.bytes;
}

extern "C" gt_status gt_gs_cu_yuv_submit(gt_gs_cu_yuv *y, const float *rgb, void *stream, int slot, gt_timings *tm)
{
    if (slot < 0 || slot >= GT_GS_YUV_SLOTS) return gt_fail(GT_ERR_RUNTIME, "YUV slot %d out of range", slot);
    cudaStream_t st = (cudaStream_t)stream;
    // the slot's device frame is free once its last download is done (an
    // event never recorded is complete)
    GT_CU(cudaStreamWaitEvent(st, y->down1[slot], 0));
    gt_timer t;
    if (tm) gt_timer_start(&t, true, stream);
    GT_TRY(launch(rgb, y->c, y->d_frame[slot], st));
    if (tm) gt_timings_add(tm, "yuv convert", gt_timer_stop(&t));
    GT_CU(cudaEventRecord(y->converted[slot], st));
    GT_CU(cudaStreamWaitEvent(y->down, y->converted[slot], 0));
    GT_CU(cudaEventRecord(y->down0[slot], y->down));
    GT_CU(cudaMemcpyAsync(y->h_frame[slot], y->d_frame[slot], y->c.bytes, cudaMemcpyDeviceToHost, y->down));
    GT_CU(cudaEventRecord(y->down1[slot], y->down));
    return GT_OK;
}

extern "C" gt_status gt_gs_cu_yuv_wait(gt_gs_cu_yuv *y, int slot, const uint8_t **frame, double *download_ms)
{
    if (slot < 0 || slot >= GT_GS_YUV_SLOTS) return gt_fail(GT_ERR_RUNTIME, "YUV slot %d out of range", slot);
    GT_CU(cudaSetDevice(y->device)); // the writer thread's device
    GT_CU(cudaEventSynchronize(y->down1[slot]));
    float ms = 0;
    if (download_ms) {
        GT_CU(cudaEventElapsedTime(&ms, y->down0[slot], y->down1[slot]));
        *download_ms = ms;
    }
    *frame = y->h_frame[slot];
    return GT_OK;
}

extern "C" gt_status gt_gs_cu_rgb_to_yuv(const uint8_t *rgb8, const float *rgbf, const gt_gs_yuv_planes *p,
                                         uint8_t *frame)
{
    const Conv &c = *p;
    const size_t bytes = c.bytes;
    const int w = c.w, h = c.h;
    size_t in = (size_t)w * h * 3 * (rgb8 ? 1 : sizeof(float));
    void *d_in = NULL, *d_out = NULL;
    gt_status st = gt_cu_malloc(&d_in, in, "test image");
    if (st == GT_OK) st = gt_cu_malloc(&d_out, bytes, "test frame");
    if (st == GT_OK) st = gt_cu_memcpy_h2d(d_in, rgb8 ? (const void *)rgb8 : (const void *)rgbf, in, NULL);
    if (st == GT_OK) st = gt_cu_memset(d_out, 0xAB, bytes, NULL); // a sample never written shows
    if (st == GT_OK)
        st = rgb8 ? launch((const uint8_t *)d_in, c, (uint8_t *)d_out, 0) : launch((const float *)d_in, c, (uint8_t *)d_out, 0);
    if (st == GT_OK) st = gt_cu_memcpy_d2h(frame, d_out, bytes, NULL);
    if (st == GT_OK) st = gt_cu_sync();
    if (d_in) gt_cu_free(d_in);
    if (d_out) gt_cu_free(d_out);
    return st;
}
