/* Volumes, the slab stream (see volume.h): open a NRRD or headerless raw
 * volume, check its sizes against the data before anyone allocates by them,
 * and hand out z-slabs in order from the raw bytes or a zlib inflate. */
#include <stdlib.h>
#include <string.h>

#include "common/output.h"
#include "io/volume_internal.h"

/* big-endian data to host order; several threads for large slabs, so that
 * the swap keeps up with the threaded read */
static void swap_bytes(void *buf, size_t n, size_t sz)
{
    unsigned char *p = buf;
    const int par = n >= ((size_t)1 << 20);
    if (sz == 2) {
#pragma omp parallel for schedule(static) if (par)
        for (size_t i = 0; i < n; i++) {
            uint16_t v;
            memcpy(&v, p + 2 * i, 2);
            v = (uint16_t)((v >> 8) | (v << 8));
            memcpy(p + 2 * i, &v, 2);
        }
    } else if (sz == 4) {
#pragma omp parallel for schedule(static) if (par)
        for (size_t i = 0; i < n; i++) {
            uint32_t v;
            memcpy(&v, p + 4 * i, 4);
            v = __builtin_bswap32(v);
            memcpy(p + 4 * i, &v, 4);
        }
    } else if (sz == 8) {
#pragma omp parallel for schedule(static) if (par)
        for (size_t i = 0; i < n; i++) {
            uint64_t v;
            memcpy(&v, p + 8 * i, 8);
            v = __builtin_bswap64(v);
            memcpy(p + 8 * i, &v, 8);
        }
    }
}

/* read up to n decoded bytes; returns the count (short only at end/error) */
size_t gt_vol_src_read(gt_volume_stream *s, void *dst, size_t n, gt_status *st)
{
    *st = GT_OK;
    if (!s->info.gzip) {
        size_t got = gt_rd_bytes_bulk(s->src, dst, n);
        if (s->src->err) *st = gt_rd_ioerr(s->src);
        return got;
    }
#if HAVE_Z
    size_t done = 0;
    unsigned char *d = dst;
    while (done < n && !s->zend) {
        gt_reader *r = s->src;
        size_t avail = gt_rd_fill(r, GT_RD_BUF);
        if (r->err) {
            *st = gt_rd_ioerr(r);
            return done;
        }
        s->zs.next_in = r->buf + r->pos;
        s->zs.avail_in = (uInt)(avail > (1u << 30) ? (1u << 30) : avail);
        size_t want = n - done;
        s->zs.next_out = d + done;
        s->zs.avail_out = (uInt)(want > (1u << 30) ? (1u << 30) : want);
        uInt in0 = s->zs.avail_in, out0 = s->zs.avail_out;
        int rc = inflate(&s->zs, Z_NO_FLUSH);
        r->pos += in0 - s->zs.avail_in;
        done += out0 - s->zs.avail_out;
        if (rc == Z_STREAM_END) {
            s->zend = true;
            break;
        }
        if (rc == Z_BUF_ERROR && avail == 0) break; /* input ended early */
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            *st = gt_fail_at_byte(GT_ERR_DATA, s->srcname, gt_rd_offset(r), "corrupt gzip data: %s",
                                  s->zs.msg ? s->zs.msg : "inflate failed");
            return done;
        }
        if (avail == 0 && in0 == 0) break;
    }
    return done;
#else
    (void)dst;
    (void)n;
    *st = gt_fail(GT_ERR_DATA, "gzip encoding not supported (built without zlib)");
    return 0;
#endif
}
static gt_status stream_finish_open(gt_volume_stream *s, long long byte_skip_gz)
{
    gt_volume_info *in = &s->info;
    gt_reader *d = s->src;
    s->data_start = gt_rd_offset(d);
    long long fsz = gt_rd_file_size(d);
    in->data_offset = fsz >= 0 ? s->data_start : -1;
    /* the sizes against the data, before anyone allocates by them */
    long long need = (long long)(s->slice * (size_t)in->dims[2]);
    if (!in->gzip && fsz >= 0) {
        long long left = fsz - s->data_start;
        if (left < need)
            return gt_fail_at_byte(GT_ERR_DATA, s->srcname, fsz,
                                   "volume data needs %lld bytes (%lld x %lld x %lld %s), the file has %lld after the header",
                                   need, (long long)in->dims[0], (long long)in->dims[1], (long long)in->dims[2],
                                   gt_vol_vname[in->type], left < 0 ? 0 : left);
        if (s->is_raw && left > need) /* a wrong --dims would mesh part of the data, silently */
            return gt_fail_at_byte(GT_ERR_DATA, s->srcname, need,
                                   "raw volume has more data than --dims/--type say (%lld bytes: %lld x %lld x %lld %s), "
                                   "the file has %lld",
                                   need, (long long)in->dims[0], (long long)in->dims[1], (long long)in->dims[2],
                                   gt_vol_vname[in->type], left);
    } else if (!in->gzip) {
        /* a pipe: a stream that ends within its first buffer is measured
         * whole; a longer one that falls short is named when it ends */
        size_t want = need < (long long)GT_RD_BUF ? (size_t)need : GT_RD_BUF;
        size_t avail = gt_rd_fill(d, want);
        if (d->err) return gt_rd_ioerr(d);
        if (avail < want)
            return gt_fail_at_byte(GT_ERR_DATA, s->srcname, gt_rd_offset(d) + (long long)avail,
                                   "volume data needs %lld bytes (%lld x %lld x %lld %s), the stream has %zu after the header",
                                   need, (long long)in->dims[0], (long long)in->dims[1], (long long)in->dims[2],
                                   gt_vol_vname[in->type], avail);
    } else {
        /* deflate expands at most 1032 times (258-byte matches in 2 bits):
         * more than that from the compressed bytes at hand is a lying header */
        long long left = fsz >= 0 ? fsz - s->data_start : -1;
        if (fsz < 0) {
            size_t avail = gt_rd_fill(d, GT_RD_BUF);
            if (d->err) return gt_rd_ioerr(d);
            if (d->eof) left = (long long)avail;
        }
        long long skip = s->gz_skip;
        if (left >= 0 && (double)need + (double)skip > 1032.0 * (double)(left + 1))
            return gt_fail_at_byte(GT_ERR_DATA, s->srcname, s->data_start,
                                   "volume data needs %lld bytes (%lld x %lld x %lld %s), more than the %lld bytes of gzip "
                                   "data can hold (deflate expands at most 1032 times)",
                                   need, (long long)in->dims[0], (long long)in->dims[1], (long long)in->dims[2],
                                   gt_vol_vname[in->type], left);
    }
#if HAVE_Z
    if (in->gzip) {
        memset(&s->zs, 0, sizeof s->zs);
        if (inflateInit2(&s->zs, 15 + 32) != Z_OK) return gt_fail(GT_ERR_RUNTIME, "zlib init failed");
        s->zinit = true;
        (void)byte_skip_gz;
        unsigned char tmp[4096];
        while (s->gz_skip > 0) {
            size_t k = s->gz_skip > (long long)sizeof tmp ? sizeof tmp : (size_t)s->gz_skip;
            gt_status st;
            if (gt_vol_src_read(s, tmp, k, &st) != k)
                return st != GT_OK ? st
                                   : gt_fail_at_byte(GT_ERR_DATA, s->srcname, gt_rd_offset(d),
                                                     "gzip data ends within 'byte skip'");
            s->gz_skip -= (long long)k;
        }
    }
#else
    (void)byte_skip_gz;
#endif
    return GT_OK;
}

gt_status gt_vol_stream_open(const char *path, int mode, const int64_t *dims, int type, const double *spacing,
                             const double *origin, bool big_endian, gt_volume_stream **out)
{
    *out = NULL;
    gt_volume_stream *s = calloc(1, sizeof *s);
    if (!s) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    gt_status st = gt_rd_open(&s->hdr, path);
    if (st != GT_OK) {
        free(s);
        return st;
    }
    if (mode == GT_VOL_MODE_AUTO) {
        unsigned char magic[4];
        size_t n = gt_rd_peek(&s->hdr, magic, 4);
        mode = (n == 4 && memcmp(magic, "NRRD", 4) == 0) ? GT_VOL_MODE_NRRD : GT_VOL_MODE_RAW;
    }
    if (mode == GT_VOL_MODE_NRRD) {
        st = gt_vol_nrrd_header(s, path);
    } else {
        if (!dims || type < 0 || type > GT_VOL_FLOAT64) {
            st = gt_fail(GT_ERR_USAGE, "'%s' is not a NRRD file: give --dims X,Y,Z and --type for a raw volume",
                         gt_in_name(path));
        } else {
            gt_volume_info *in = &s->info;
            for (int a = 0; a < 3; a++) in->dims[a] = dims[a];
            in->type = (gt_voltype)type;
            for (int a = 0; a < 3; a++) {
                in->dir[a][a] = spacing ? spacing[a] : 1.0;
                in->origin[a] = origin ? origin[a] : 0.0;
            }
            in->big_endian = big_endian;
            s->src = &s->hdr;
            s->srcname = s->hdr.name;
            s->is_raw = true;
            s->swap = big_endian == gt_vol_host_le() && gt_vol_vsize[type] > 1;
            st = GT_OK;
            for (int a = 0; a < 3 && st == GT_OK; a++)
                if (dims[a] <= 0) st = gt_fail(GT_ERR_USAGE, "--dims: size %lld along axis %d must be positive",
                                              (long long)dims[a], a);
            if (st == GT_OK) st = gt_vol_set_dims(s, s->srcname, 0);
        }
    }
    if (st == GT_OK) st = stream_finish_open(s, 0);
    if (st != GT_OK) {
        gt_volume_stream_close(s);
        return st;
    }
    *out = s;
    return GT_OK;
}

gt_status gt_volume_stream_open(const char *path, const int64_t *dims, int type, const double *spacing,
                                const double *origin, gt_volume_stream **s)
{
    return gt_vol_stream_open(path, GT_VOL_MODE_AUTO, dims, type, spacing, origin, false, s);
}

void gt_volume_data_file(const char *path, char *out, size_t n)
{
    if (n) out[0] = '\0';
    if (!path || strcmp(path, "-") == 0) return; /* stdin is read once, by the program */
    FILE *f = fopen(path, "rb");
    if (!f) return;
    char magic[4];
    size_t k = fread(magic, 1, 4, f);
    fclose(f);
    if (k != 4 || memcmp(magic, "NRRD", 4) != 0) return;
    gt_volume_stream *s;
    if (gt_vol_stream_open(path, GT_VOL_MODE_NRRD, NULL, -1, NULL, NULL, false, &s) != GT_OK) {
        gt_errmsg_clear(); /* the program's own read reports it */
        return;
    }
    snprintf(out, n, "%s", s->info.data_path);
    gt_volume_stream_close(s);
}

const gt_volume_info *gt_volume_stream_info(const gt_volume_stream *s)
{
    return &s->info;
}

gt_status gt_volume_stream_read(gt_volume_stream *s, int64_t z0, int64_t nz, void *buf)
{
    if (z0 < s->z || nz < 0 || z0 > s->info.dims[2] || nz > s->info.dims[2] - z0)
        return gt_fail(GT_ERR_USAGE, "volume slab [%lld, %lld) out of order or out of range (next %lld of %lld)",
                       (long long)z0, (long long)(z0 + nz), (long long)s->z, (long long)s->info.dims[2]);
    gt_status st;
    /* skip slices up to z0 */
    while (s->z < z0) {
        unsigned char tmp[65536];
        size_t left = s->slice;
        while (left > 0) {
            size_t k = left < sizeof tmp ? left : sizeof tmp;
            size_t got = gt_vol_src_read(s, tmp, k, &st);
            s->decoded += (long long)got;
            if (st != GT_OK) return st;
            if (got < k) goto short_data;
            left -= k;
        }
        s->z++;
    }
    size_t want = s->slice * (size_t)nz;
    size_t got = gt_vol_src_read(s, buf, want, &st);
    s->decoded += (long long)got;
    if (st != GT_OK) return st;
    if (got < want) {
        s->z += (int64_t)(got / s->slice);
        goto short_data;
    }
    if (s->swap) swap_bytes(buf, want / gt_vol_vsize[s->info.type], gt_vol_vsize[s->info.type]);
    s->z += nz;
    return GT_OK;
short_data:
    return gt_fail_at_byte(GT_ERR_DATA, s->srcname, gt_rd_offset(s->src),
                           "%s data ends after %lld of the %lld bytes the volume needs (%lld x %lld x %lld %s), in slice z=%lld of %lld",
                           s->info.gzip ? "gzip" : "volume", s->decoded,
                           (long long)(s->slice * (size_t)s->info.dims[2]), (long long)s->info.dims[0],
                           (long long)s->info.dims[1], (long long)s->info.dims[2], gt_vol_vname[s->info.type], (long long)s->z,
                           (long long)s->info.dims[2]);
}

void gt_volume_stream_close(gt_volume_stream *s)
{
    if (!s) return;
#if HAVE_Z
    if (s->zinit) inflateEnd(&s->zs);
#endif
    if (s->dat.buf) gt_rd_close(&s->dat);
    if (s->hdr.buf) gt_rd_close(&s->hdr);
    free(s);
}
