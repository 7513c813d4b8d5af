/* Volumes: NRRD (NRRD0001..0005, raw or gzip encoding, attached or detached
 * data) and headerless raw. Sizes from headers are checked against the data
 * before any large allocation. Voxel (i,j,k) is at data[i + X*(j + Y*k)]
 * (x fastest); its world position is origin + i*dir[0] + j*dir[1] + k*dir[2]
 * where dir[a] is the a-th space direction (spacing along axis a when the
 * file has only spacings). */
#ifndef GT_VOLUME_H
#define GT_VOLUME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gt_voltype {
    GT_VOL_UINT8, GT_VOL_INT8, GT_VOL_UINT16, GT_VOL_INT16,
    GT_VOL_UINT32, GT_VOL_INT32, GT_VOL_FLOAT32, GT_VOL_FLOAT64
} gt_voltype;

size_t gt_voltype_size(gt_voltype t);
const char *gt_voltype_name(gt_voltype t); /* "uint8", "int16", "float32", ... */
/* parse uint8|int8|uint16|int16|uint32|int32|float32|float64 (also NRRD's
 * aliases: uchar, short, ushort, int, uint, float, double, ...) */
gt_status gt_voltype_parse(const char *opt, const char *s, gt_voltype *t);

typedef struct gt_volume_info {
    int64_t dims[3];
    gt_voltype type;
    double dir[3][3];     /* space directions (rows: axis 0,1,2) */
    double origin[3];
    bool has_iso;         /* key/value "iso:=V" in the NRRD */
    double iso;
    /* where the data is (filled by the readers) */
    bool big_endian;
    bool gzip;
    long long data_offset; /* byte offset of the raw data in data_path, -1 if unknown (pipe) */
    char data_path[1024];  /* file that holds the data ("" = same stream as header) */
} gt_volume_info;

typedef struct gt_volume {
    gt_volume_info info;
    void *data;            /* dims product * type size bytes, host byte order */
} gt_volume;

/* Whole-volume reads. */
gt_status gt_nrrd_read(const char *path, gt_volume *v);
gt_status gt_raw_read(const char *path, const int64_t dims[3], gt_voltype type,
                      const double spacing[3], const double origin[3], bool big_endian,
                      gt_volume *v);
/* Read either: NRRD when the file starts with "NRRD", else raw with the given
 * dims/type (GT_ERR_USAGE naming --dims/--type if they are missing). */
gt_status gt_volume_read(const char *path, const int64_t *dims /* may be NULL */,
                         int type /* gt_voltype or -1 */, const double *spacing,
                         const double *origin, gt_volume *v);
void gt_volume_free(gt_volume *v);

/* Slab streaming for volumes larger than memory: open, then read z-slabs in
 * increasing z order (each slab's voxels contiguous, x fastest). */
typedef struct gt_volume_stream gt_volume_stream;
gt_status gt_volume_stream_open(const char *path, const int64_t *dims, int type,
                                const double *spacing, const double *origin,
                                gt_volume_stream **s);
const gt_volume_info *gt_volume_stream_info(const gt_volume_stream *s);
/* Read slices [z0, z0+nz) into buf; z0 must not go backwards. */
gt_status gt_volume_stream_read(gt_volume_stream *s, int64_t z0, int64_t nz, void *buf);
void gt_volume_stream_close(gt_volume_stream *s);

/* The detached data file ("data file:") that the NRRD header at `path`
 * names, into out; "" when the data is attached, the file is not NRRD, path
 * is "-", or the header cannot be read (the program's read reports that).
 * For the path guard: an output must not replace it either. */
void gt_volume_data_file(const char *path, char *out, size_t n);

/* Write NRRD0004 with raw encoding, little endian, space directions and
 * origin; `keyvals` (may be NULL) "key:=value" lines. Atomic. */
gt_status gt_nrrd_write(const char *path, const gt_volume *v, const char *const *keyvals, int nkv);

/* Convert voxel to float */
double gt_volume_get(const gt_volume *v, int64_t i, int64_t j, int64_t k);

#ifdef __cplusplus
}
#endif
#endif
