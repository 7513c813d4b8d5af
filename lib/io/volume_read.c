/* Volumes, whole-volume reads (see volume.h): the slab stream read into one
 * buffer that grows as data arrives (a header that lies about the sizes
 * cannot force a large allocation), NRRD, raw or either; voxel access. */
#include <stdlib.h>
#include <string.h>

#include "io/volume_internal.h"

static gt_status read_all(gt_volume_stream *s, bool raw_exact, gt_volume *v)
{
    memset(v, 0, sizeof *v);
    v->info = s->info;
    int64_t nzt = s->info.dims[2];
    /* grow by slabs as data arrives: start with what the file size vouches
     * for (regular file) or about 64 MB, double up to the full size */
    int64_t cap = 0, done = 0;
    bool vouched = !s->info.gzip && s->info.data_offset >= 0;
    unsigned char *buf = NULL;
    while (done < nzt) {
        if (done == cap) {
            int64_t ncap = vouched ? nzt : (cap ? cap * 2 : (int64_t)((64u << 20) / s->slice + 1));
            if (ncap > nzt) ncap = nzt;
            unsigned char *nb = realloc(buf, s->slice * (size_t)ncap);
            if (!nb) {
                free(buf);
                return gt_fail(GT_ERR_RUNTIME, "out of memory for a %lld x %lld x %lld %s volume",
                               (long long)s->info.dims[0], (long long)s->info.dims[1], (long long)nzt,
                               gt_vol_vname[s->info.type]);
            }
            buf = nb;
            cap = ncap;
        }
        int64_t step = cap - done;
        int64_t maxstep = (int64_t)((256u << 20) / s->slice) + 1;
        if (step > maxstep) step = maxstep;
        gt_status st = gt_volume_stream_read(s, done, step, buf + s->slice * (size_t)done);
        if (st != GT_OK) {
            free(buf);
            return st;
        }
        done += step;
    }
    if (raw_exact) {
        /* headerless raw: the data must be exactly the volume */
        unsigned char extra;
        gt_status st;
        if (gt_vol_src_read(s, &extra, 1, &st) == 1) {
            free(buf);
            return gt_fail_at_byte(GT_ERR_DATA, s->srcname, gt_rd_offset(s->src) - 1,
                                   "raw volume has more data than --dims/--type say (%lld bytes)",
                                   (long long)(s->slice * (size_t)nzt));
        }
    }
    v->data = buf;
    return GT_OK;
}

gt_status gt_nrrd_read(const char *path, gt_volume *v)
{
    memset(v, 0, sizeof *v);
    gt_volume_stream *s;
    GT_TRY(gt_vol_stream_open(path, GT_VOL_MODE_NRRD, NULL, -1, NULL, NULL, false, &s));
    gt_status st = read_all(s, false, v);
    gt_volume_stream_close(s);
    return st;
}

gt_status gt_raw_read(const char *path, const int64_t dims[3], gt_voltype type, const double spacing[3],
                      const double origin[3], bool big_endian, gt_volume *v)
{
    memset(v, 0, sizeof *v);
    gt_volume_stream *s;
    GT_TRY(gt_vol_stream_open(path, GT_VOL_MODE_RAW, dims, (int)type, spacing, origin, big_endian, &s));
    gt_status st = read_all(s, true, v);
    gt_volume_stream_close(s);
    return st;
}

gt_status gt_volume_read(const char *path, const int64_t *dims, int type, const double *spacing,
                         const double *origin, gt_volume *v)
{
    memset(v, 0, sizeof *v);
    gt_volume_stream *s;
    GT_TRY(gt_vol_stream_open(path, GT_VOL_MODE_AUTO, dims, type, spacing, origin, false, &s));
    bool raw = s->is_raw;
    gt_status st = read_all(s, raw, v);
    gt_volume_stream_close(s);
    return st;
}

void gt_volume_free(gt_volume *v)
{
    if (!v) return;
    free(v->data);
    v->data = NULL;
}

double gt_volume_get(const gt_volume *v, int64_t i, int64_t j, int64_t k)
{
    size_t idx = (size_t)i + (size_t)v->info.dims[0] * ((size_t)j + (size_t)v->info.dims[1] * (size_t)k);
    const void *d = v->data;
    switch (v->info.type) {
    case GT_VOL_UINT8: return ((const uint8_t *)d)[idx];
    case GT_VOL_INT8: return ((const int8_t *)d)[idx];
    case GT_VOL_UINT16: return ((const uint16_t *)d)[idx];
    case GT_VOL_INT16: return ((const int16_t *)d)[idx];
    case GT_VOL_UINT32: return ((const uint32_t *)d)[idx];
    case GT_VOL_INT32: return ((const int32_t *)d)[idx];
    case GT_VOL_FLOAT32: return ((const float *)d)[idx];
    case GT_VOL_FLOAT64: return ((const double *)d)[idx];
    }
    return 0;
}
