/* Private to lib/io/volume_*.c: the slab stream's state and the helpers the
 * volume files share (type tables, byte order, the header parser, the
 * stream's open and raw data source). Not part of libcore's API. */
#ifndef GT_IO_VOLUME_INTERNAL_H
#define GT_IO_VOLUME_INTERNAL_H

#include <stdbool.h>
#include <string.h>

#include "io/reader.h"
#include "io/volume.h"

#if defined(GT_HAVE_ZLIB) && GT_HAVE_ZLIB
#include <zlib.h>
#define HAVE_Z 1
#else
#define HAVE_Z 0
#endif

/* bytes per voxel, names for messages, names written to NRRD headers (by gt_voltype) */
extern const size_t gt_vol_vsize[8];
extern const char *const gt_vol_vname[8];
extern const char *const gt_vol_nrrdname[8];

struct gt_volume_stream {
    gt_volume_info info;
    gt_reader hdr;        /* header (and attached data) */
    gt_reader dat;        /* detached data file, when used */
    gt_reader *src;       /* where the (encoded) data comes from */
    const char *srcname;  /* for messages */
    char srcname_buf[1100];
    size_t slice;         /* bytes per z-slice */
    int64_t z;            /* next slice to read */
    long long data_start; /* reader offset where the data begins */
    bool swap;
    bool is_raw;          /* headerless raw */
    long long gz_skip;    /* NRRD byte skip applied after decompression */
    long long decoded;    /* data bytes handed out so far (after any byte skip) */
#if HAVE_Z
    z_stream zs;
    bool zinit, zend;
#endif
};

static inline bool gt_vol_host_le(void)
{
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

/* type name or NRRD alias -> type (volume_header.c) */
bool gt_vol_type_lookup(const char *s, gt_voltype *t);
/* the bytes per slice from the dims, checked for overflow (volume_header.c) */
gt_status gt_vol_set_dims(gt_volume_stream *s, const char *fn, long line);
/* parse the NRRD header from s->hdr and position s->src at the data (volume_header.c) */
gt_status gt_vol_nrrd_header(gt_volume_stream *s, const char *path);

enum { GT_VOL_MODE_AUTO, GT_VOL_MODE_NRRD, GT_VOL_MODE_RAW };
/* open a stream (volume_stream.c) */
gt_status gt_vol_stream_open(const char *path, int mode, const int64_t *dims, int type, const double *spacing,
                             const double *origin, bool big_endian, gt_volume_stream **out);
/* up to n decoded bytes; the count (short only at end/error) (volume_stream.c) */
size_t gt_vol_src_read(gt_volume_stream *s, void *dst, size_t n, gt_status *st);

#endif
