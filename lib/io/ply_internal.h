/* Private to lib/io: what the stages of the PLY code share (ply_header.c,
 * ply_read.c, ply_write.c, ply_types.c, ply.c), and the entry point of
 * points.c, which sniffs the content first and cannot reopen a pipe. The
 * per-value conversions are inline here: the body decoder and the writer
 * call them once per value. */
#ifndef GT_IO_PLY_INTERNAL_H
#define GT_IO_PLY_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "io/ply.h"
#include "io/reader.h"

/* Read a PLY from an already open streaming reader; the vertex properties
 * named rel[0..nrel-1] are kept relative to an origin (m->origin) where the
 * file holds them in more precision than float32 (gt_points_read_table). */
gt_status gt_ply_read_reader(gt_reader *r, gt_ply_mesh *m, const char *const *rel, int nrel);

/* The origin of a column kept relative (gt_points_read_table's nrel): its
 * first value rounded to an integer where float32 is coarse (1024 or more
 * from 0, where floats lie 1.2e-4 apart), else 0. */
static inline double ply_pick_origin(double first)
{
    return isfinite(first) && fabs(first) >= 1024.0 ? rint(first) : 0.0;
}

#define PLY_MAX_ELEMS 256
#define PLY_MAX_PROPS 4096

/* ------------------------------------------------ the header (ply_header.c) */

typedef struct pprop {
    char name[64];
    gt_ply_type type;  /* scalar type, or index type of a list */
    bool is_list;
    gt_ply_type ctype; /* list count type */
    int col;           /* vertex: output column; face: 1 for the index list */
} pprop;

typedef struct pelem {
    char name[64];
    unsigned long long count;
    int nprops;
    pprop *props;
    bool has_list;
    size_t recsize; /* fixed record size (binary) when !has_list */
} pelem;

typedef struct phdr {
    gt_ply_format fmt;
    int nelem;
    pelem elem[PLY_MAX_ELEMS];
    int vi, fi; /* index of vertex and face elements, -1 if none */
} phdr;

/* Parse the header (after it, r is at the first body byte); fills h and
 * m->comments. ply_hdr_free releases h's property lists. */
gt_status ply_read_header(gt_reader *r, phdr *h, gt_ply_mesh *m);
void ply_hdr_free(phdr *h);

/* ----------------------------------------------------- types (ply_types.c) */

extern const size_t ply_tsize[8]; /* bytes of each gt_ply_type */
bool ply_parse_type(const char *s, gt_ply_type *t);
/* One property of nrow fixed-size records (record size rs; src points at
 * the property in the first record) to floats at out[r * np]. */
void ply_convert_col(const unsigned char *src, size_t rs, size_t nrow, gt_ply_type t, bool swap,
                     float *out, int np);

static inline bool ply_host_le(void)
{
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

static inline uint16_t ply_bs16(uint16_t x) { return (uint16_t)((x >> 8) | (x << 8)); }
static inline uint32_t ply_bs32(uint32_t x) { return __builtin_bswap32(x); }
static inline uint64_t ply_bs64(uint64_t x) { return __builtin_bswap64(x); }

/* value of type t at p as double; swap = bytes are in the other order */
static inline double ply_load_d(const unsigned char *p, gt_ply_type t, bool swap)
{
    switch (t) {
    case GT_PLY_INT8: return (double)(int8_t)p[0];
    case GT_PLY_UINT8: return (double)p[0];
    case GT_PLY_INT16: { uint16_t v; memcpy(&v, p, 2); if (swap) v = ply_bs16(v); return (double)(int16_t)v; }
    case GT_PLY_UINT16: { uint16_t v; memcpy(&v, p, 2); if (swap) v = ply_bs16(v); return (double)v; }
    case GT_PLY_INT32: { uint32_t v; memcpy(&v, p, 4); if (swap) v = ply_bs32(v); return (double)(int32_t)v; }
    case GT_PLY_UINT32: { uint32_t v; memcpy(&v, p, 4); if (swap) v = ply_bs32(v); return (double)v; }
    case GT_PLY_FLOAT32: { uint32_t v; memcpy(&v, p, 4); if (swap) v = ply_bs32(v); float f; memcpy(&f, &v, 4); return (double)f; }
    case GT_PLY_FLOAT64: { uint64_t v; memcpy(&v, p, 8); if (swap) v = ply_bs64(v); double d; memcpy(&d, &v, 8); return d; }
    }
    return 0;
}

/* integer value (counts, indices): exact for every integer type */
static inline long long ply_load_i(const unsigned char *p, gt_ply_type t, bool swap)
{
    switch (t) {
    case GT_PLY_INT8: return (int8_t)p[0];
    case GT_PLY_UINT8: return p[0];
    case GT_PLY_INT16: { uint16_t v; memcpy(&v, p, 2); if (swap) v = ply_bs16(v); return (int16_t)v; }
    case GT_PLY_UINT16: { uint16_t v; memcpy(&v, p, 2); if (swap) v = ply_bs16(v); return v; }
    case GT_PLY_INT32: { uint32_t v; memcpy(&v, p, 4); if (swap) v = ply_bs32(v); return (int32_t)v; }
    case GT_PLY_UINT32: { uint32_t v; memcpy(&v, p, 4); if (swap) v = ply_bs32(v); return v; }
    default: return 0;
    }
}

/* x stored as type t at p (integers rounded and clamped to the type) */
static inline void ply_store_val(unsigned char *p, gt_ply_type t, float x, bool swap)
{
    switch (t) {
    case GT_PLY_INT8: { int8_t v = (int8_t)lrintf(fminf(fmaxf(x, -128.f), 127.f)); memcpy(p, &v, 1); break; }
    case GT_PLY_UINT8: { uint8_t v = (uint8_t)lrintf(fminf(fmaxf(x, 0.f), 255.f)); memcpy(p, &v, 1); break; }
    case GT_PLY_INT16: { uint16_t v = (uint16_t)(int16_t)lrintf(fminf(fmaxf(x, -32768.f), 32767.f)); if (swap) v = ply_bs16(v); memcpy(p, &v, 2); break; }
    case GT_PLY_UINT16: { uint16_t v = (uint16_t)lrintf(fminf(fmaxf(x, 0.f), 65535.f)); if (swap) v = ply_bs16(v); memcpy(p, &v, 2); break; }
    case GT_PLY_INT32: { double d = fmin(fmax((double)x, -2147483648.0), 2147483647.0); uint32_t v = (uint32_t)(int32_t)llrint(d); if (swap) v = ply_bs32(v); memcpy(p, &v, 4); break; }
    case GT_PLY_UINT32: { double d = fmin(fmax((double)x, 0.0), 4294967295.0); uint32_t v = (uint32_t)llrint(d); if (swap) v = ply_bs32(v); memcpy(p, &v, 4); break; }
    case GT_PLY_FLOAT32: { uint32_t v; memcpy(&v, &x, 4); if (swap) v = ply_bs32(v); memcpy(p, &v, 4); break; }
    case GT_PLY_FLOAT64: { double d = x; uint64_t v; memcpy(&v, &d, 8); if (swap) v = ply_bs64(v); memcpy(p, &v, 8); break; }
    }
}

/* Next blank-separated token of a text line (NUL-terminated in place), or
 * NULL at the end of the line. */
static inline char *ply_next_tok(char **s)
{
    char *p = *s;
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) {
        *s = p;
        return NULL;
    }
    char *t = p;
    while (*p && *p != ' ' && *p != '\t') p++;
    if (*p) *p++ = '\0';
    *s = p;
    return t;
}

#endif
