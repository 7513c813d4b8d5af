/* Volume resampling through a TPS warp: the voxel conversions, the CPU
 * reference (per voxel: world position, f, continuous index, trilinear
 * sample, with the functions of tps_math.h that the CUDA kernels in
 * kernels/tps/tps_apply.cu use too) and the dispatch. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "gt_config.h"
#include "tps/tps_math.h"
#include "tps/warp.h"

#if GT_HAVE_CUDA
#include "kernels/tps/tps_cuda.h"
#endif

static size_t type_size(gt_voltype t)
{
    switch (t) {
    case GT_VOL_UINT8: case GT_VOL_INT8: return 1;
    case GT_VOL_UINT16: case GT_VOL_INT16: return 2;
    case GT_VOL_UINT32: case GT_VOL_INT32: case GT_VOL_FLOAT32: return 4;
    default: return 8;
    }
}

static float get_f(const void *d, gt_voltype t, size_t i)
{
    switch (t) {
    case GT_VOL_UINT8: return ((const uint8_t *)d)[i];
    case GT_VOL_INT8: return ((const int8_t *)d)[i];
    case GT_VOL_UINT16: return ((const uint16_t *)d)[i];
    case GT_VOL_INT16: return ((const int16_t *)d)[i];
    case GT_VOL_UINT32: return (float)((const uint32_t *)d)[i];
    case GT_VOL_INT32: return (float)((const int32_t *)d)[i];
    case GT_VOL_FLOAT32: return ((const float *)d)[i];
    default: return (float)((const double *)d)[i];
    }
}

static double clampr(double v, double lo, double hi)
{
    v = nearbyint(v);
    return v < lo ? lo : v > hi ? hi : v;
}

static void put(void *d, gt_voltype t, size_t i, double v)
{
    switch (t) {
    case GT_VOL_UINT8: ((uint8_t *)d)[i] = (uint8_t)clampr(v, 0, 255); break;
    case GT_VOL_INT8: ((int8_t *)d)[i] = (int8_t)clampr(v, -128, 127); break;
    case GT_VOL_UINT16: ((uint16_t *)d)[i] = (uint16_t)clampr(v, 0, 65535); break;
    case GT_VOL_INT16: ((int16_t *)d)[i] = (int16_t)clampr(v, -32768, 32767); break;
    case GT_VOL_UINT32: ((uint32_t *)d)[i] = (uint32_t)clampr(v, 0, 4294967295.0); break;
    case GT_VOL_INT32: ((int32_t *)d)[i] = (int32_t)clampr(v, -2147483648.0, 2147483647.0); break;
    case GT_VOL_FLOAT32: ((float *)d)[i] = (float)v; break;
    default: ((double *)d)[i] = v; break;
    }
}

static bool inv3(const double m[9], double r[9])
{
    double det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
                 m[2] * (m[3] * m[7] - m[4] * m[6]);
    if (!(fabs(det) > 0.0) || !isfinite(det)) return false;
    double id = 1.0 / det;
    r[0] = (m[4] * m[8] - m[5] * m[7]) * id;
    r[1] = (m[2] * m[7] - m[1] * m[8]) * id;
    r[2] = (m[1] * m[5] - m[2] * m[4]) * id;
    r[3] = (m[5] * m[6] - m[3] * m[8]) * id;
    r[4] = (m[0] * m[8] - m[2] * m[6]) * id;
    r[5] = (m[2] * m[3] - m[0] * m[5]) * id;
    r[6] = (m[3] * m[7] - m[4] * m[6]) * id;
    r[7] = (m[1] * m[6] - m[0] * m[7]) * id;
    r[8] = (m[0] * m[4] - m[1] * m[3]) * id;
    return true;
}

gt_status gt_tps_warp_volume(const gt_tps *t, const gt_volume *in, gt_volume *out,
                             gt_device_kind device, gt_timings *tm)
{
    const gt_volume_info *vi = &in->info;
    long long d[3] = {vi->dims[0], vi->dims[1], vi->dims[2]};
    size_t nvox;
    if (!gt_mul3_size((size_t)d[0], (size_t)d[1], (size_t)d[2], &nvox) || nvox == 0)
        return gt_fail(GT_ERR_DATA, "bad volume dimensions");
    double M[9], Minv[9];
    for (int a = 0; a < 3; a++)
        for (int j = 0; j < 3; j++) M[3 * a + j] = vi->dir[a][j];
    /* index = Minv (q - o) with q = o + sum_a idx_a dir[a]: the matrix with
     * dir[a] as column a, inverted; stored row-major in Minv */
    double C[9];
    for (int r = 0; r < 3; r++)
        for (int a = 0; a < 3; a++) C[3 * r + a] = vi->dir[a][r];
    if (!inv3(C, Minv))
        return gt_fail(GT_ERR_DATA, "the volume's space directions are singular");
    float *fin = gt_malloc_array(nvox, sizeof(float), "volume (float)");
    float *fout = gt_malloc_array(nvox, sizeof(float), "warped volume (float)");
    void *odata = gt_malloc_array(nvox, type_size(vi->type), "warped volume");
    gt_status st = GT_OK;
    if (!fin || !fout || !odata) {
        st = GT_ERR_RUNTIME;
        goto fail;
    }
    for (size_t i = 0; i < nvox; i++) fin[i] = get_f(in->data, vi->type, i);
    if (device == GT_DEVICE_CPU) {
        double t0 = gt_now_ms();
#pragma omp parallel for schedule(dynamic, 1)
        for (long long k = 0; k < d[2]; k++)
            for (long long j = 0; j < d[1]; j++)
                for (long long i = 0; i < d[0]; i++) {
                    double q[3], fq[3], idx[3];
                    tps_voxel_world(M, vi->origin, (double)i, (double)j, (double)k, q);
                    tps_eval_point((int)t->kernel, t->n, t->c, t->w, &t->a[0][0], q[0], q[1], q[2], fq);
                    tps_world_index(Minv, vi->origin, fq, idx);
                    fout[i + d[0] * (j + d[1] * k)] =
                        (float)tps_trilinear(fin, d[0], d[1], d[2], idx[0], idx[1], idx[2]);
                }
        if (tm) gt_timings_add(tm, "warp volume", gt_now_ms() - t0);
    } else {
#if GT_HAVE_CUDA
        /* no gt_tps_cuda_init: the warp needs neither cuBLAS nor cuSOLVER */
        st = gt_tps_cuda_warp_volume((int)t->kernel, t->n, t->c, t->w, &t->a[0][0], fin, d, M, Minv,
                                     vi->origin, fout, tm);
#else
        st = gt_fail(GT_ERR_GPU, "this build has no CUDA support; use --device cpu");
#endif
        if (st != GT_OK) goto fail;
    }
    for (size_t i = 0; i < nvox; i++) put(odata, vi->type, i, fout[i]);
    memset(out, 0, sizeof *out);
    out->info = *vi;
    out->info.data_path[0] = 0;
    out->info.data_offset = -1;
    out->info.gzip = false;
    out->info.big_endian = false;
    out->data = odata;
    odata = NULL;
fail:
    free(fin);
    free(fout);
    free(odata);
    return st;
}
