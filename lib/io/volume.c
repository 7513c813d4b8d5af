/* Volumes: NRRD (NRRD0001..0005; raw or gzip encoding; attached or detached
 * data) and headerless raw (see volume.h).
 *
 * Every read goes through the slab stream: the header is parsed from the
 * streaming reader, then the data source (raw bytes from the reader, or a
 * zlib inflate over it) hands out z-slabs in order. A whole-volume read
 * grows its buffer slab by slab as data arrives, so a header that lies about
 * the sizes cannot force a large allocation; on a regular raw file the sizes
 * are first checked against the file size. */
#include "io/volume.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/output.h"
#include "io/reader.h"

#if defined(GT_HAVE_ZLIB) && GT_HAVE_ZLIB
#include <zlib.h>
#define HAVE_Z 1
#else
#define HAVE_Z 0
#endif

static const size_t vsize[] = {1, 1, 2, 2, 4, 4, 4, 8};
static const char *const vname[] = {"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "float64"};
/* names written to NRRD headers */
static const char *const nrrdname[] = {"uint8", "int8", "uint16", "int16", "uint32", "int32", "float", "double"};

size_t gt_voltype_size(gt_voltype t)
{
    return (unsigned)t < 8 ? vsize[t] : 0;
}

const char *gt_voltype_name(gt_voltype t)
{
    return (unsigned)t < 8 ? vname[t] : "?";
}

static bool type_lookup(const char *s, gt_voltype *t)
{
    static const struct {
        const char *n;
        gt_voltype t;
    } tab[] = {
        {"uint8", GT_VOL_UINT8}, {"uchar", GT_VOL_UINT8}, {"unsigned char", GT_VOL_UINT8}, {"uint8_t", GT_VOL_UINT8},
        {"int8", GT_VOL_INT8}, {"signed char", GT_VOL_INT8}, {"int8_t", GT_VOL_INT8},
        {"uint16", GT_VOL_UINT16}, {"ushort", GT_VOL_UINT16}, {"unsigned short", GT_VOL_UINT16},
        {"unsigned short int", GT_VOL_UINT16}, {"uint16_t", GT_VOL_UINT16},
        {"int16", GT_VOL_INT16}, {"short", GT_VOL_INT16}, {"short int", GT_VOL_INT16}, {"signed short", GT_VOL_INT16},
        {"signed short int", GT_VOL_INT16}, {"int16_t", GT_VOL_INT16},
        {"uint32", GT_VOL_UINT32}, {"uint", GT_VOL_UINT32}, {"unsigned int", GT_VOL_UINT32}, {"uint32_t", GT_VOL_UINT32},
        {"int32", GT_VOL_INT32}, {"int", GT_VOL_INT32}, {"signed int", GT_VOL_INT32}, {"int32_t", GT_VOL_INT32},
        {"float32", GT_VOL_FLOAT32}, {"float", GT_VOL_FLOAT32},
        {"float64", GT_VOL_FLOAT64}, {"double", GT_VOL_FLOAT64},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strcmp(s, tab[i].n) == 0) {
            *t = tab[i].t;
            return true;
        }
    return false;
}

gt_status gt_voltype_parse(const char *opt, const char *s, gt_voltype *t)
{
    if (s && type_lookup(s, t)) return GT_OK;
    return gt_fail(GT_ERR_USAGE, "%s%sunknown voxel type '%s' (uint8, int8, uint16, int16, uint32, int32, float32, float64)",
                   opt ? opt : "", opt ? ": " : "", s ? s : "");
}

static bool host_le(void)
{
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

static void swap_bytes(void *buf, size_t n, size_t sz)
{
    unsigned char *p = buf;
    if (sz == 2)
        for (size_t i = 0; i < n; i++, p += 2) {
            uint16_t v;
            memcpy(&v, p, 2);
            v = (uint16_t)((v >> 8) | (v << 8));
            memcpy(p, &v, 2);
        }
    else if (sz == 4)
        for (size_t i = 0; i < n; i++, p += 4) {
            uint32_t v;
            memcpy(&v, p, 4);
            v = __builtin_bswap32(v);
            memcpy(p, &v, 4);
        }
    else if (sz == 8)
        for (size_t i = 0; i < n; i++, p += 8) {
            uint64_t v;
            memcpy(&v, p, 8);
            v = __builtin_bswap64(v);
            memcpy(p, &v, 8);
        }
}

/* ------------------------------------------------------------ stream */

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

static gt_status set_dims(gt_volume_stream *s, const char *fn, long line)
{
    gt_volume_info *in = &s->info;
    size_t n = vsize[in->type];
    for (int a = 0; a < 3; a++) {
        if (in->dims[a] <= 0)
            return gt_fail_at(GT_ERR_DATA, fn, line, "volume size %lld along axis %d must be positive",
                              (long long)in->dims[a], a);
        if (!gt_mul_size(n, (size_t)in->dims[a], &n) || n > (size_t)INT64_MAX)
            return gt_fail_at(GT_ERR_DATA, fn, line, "volume sizes %lld x %lld x %lld overflow 64 bits",
                              (long long)in->dims[0], (long long)in->dims[1], (long long)in->dims[2]);
    }
    s->slice = vsize[in->type] * (size_t)in->dims[0] * (size_t)in->dims[1];
    return GT_OK;
}

/* read up to n decoded bytes; returns the count (short only at end/error) */
static size_t src_read(gt_volume_stream *s, void *dst, size_t n, gt_status *st)
{
    *st = GT_OK;
    if (!s->info.gzip) {
        size_t got = gt_rd_bytes(s->src, dst, n);
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

/* ---------------------------------------------------------- NRRD header */

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
    return s;
}

static bool parse_ll(const char *s, long long *v, char **end)
{
    errno = 0;
    char *e;
    long long x = strtoll(s, &e, 10);
    if (e == s || errno) return false;
    *v = x;
    if (end) *end = e;
    return true;
}

static bool parse_dbl(const char *s, double *v, char **end)
{
    char *e;
    double x = strtod(s, &e);
    if (e == s) return false;
    *v = x;
    if (end) *end = e;
    return true;
}

/* "(a,b,c)" */
static bool parse_vec(char **p, double v[3])
{
    char *s = *p;
    while (*s == ' ' || *s == '\t') s++;
    if (*s++ != '(') return false;
    for (int i = 0; i < 3; i++) {
        char *e;
        if (!parse_dbl(s, &v[i], &e)) return false;
        s = e;
        while (*s == ' ' || *s == '\t') s++;
        if (*s++ != (i < 2 ? ',' : ')')) return false;
    }
    *p = s;
    return true;
}

static bool only_space(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return *s == '\0';
}

static gt_status nrrd_header(gt_volume_stream *s, const char *path)
{
    gt_reader *r = &s->hdr;
    const char *fn = r->name;
    gt_volume_info *in = &s->info;
    char *line;
    GT_TRY(gt_rd_line(r, &line, NULL));
    if (!line || strncmp(line, "NRRD000", 7) != 0 || line[7] < '1' || line[7] > '5' || line[8])
        return gt_fail_at(GT_ERR_DATA, fn, 1, "not a NRRD file (expected NRRD0001..NRRD0005 on the first line)");
    bool have_type = false, have_dim = false, have_sizes = false, have_enc = false, have_endian = false;
    bool have_spacings = false, have_dirs = false;
    long long line_skip = 0, byte_skip = 0;
    char datafile[1024] = "";
    long last = 1;
    for (;;) {
        GT_TRY(gt_rd_line(r, &line, NULL));
        if (!line) break; /* EOF: fine with a detached data file */
        long ln = last = r->line;
        if (ln > 10000) return gt_fail_at(GT_ERR_DATA, fn, ln, "NRRD header longer than 10000 lines");
        if (line[0] == '\0') break; /* end of header */
        if (line[0] == '#') continue;
        char *kv = strstr(line, ":=");
        char *fd = strstr(line, ": ");
        if (kv && (!fd || kv < fd)) {
            *kv = '\0';
            char *key = trim(line), *val = trim(kv + 2);
            if (strcmp(key, "iso") == 0) {
                char *e;
                if (!parse_dbl(val, &in->iso, &e) || !only_space(e))
                    return gt_fail_at(GT_ERR_DATA, fn, ln, "bad iso value '%.40s'", val);
                in->has_iso = true;
            }
            continue;
        }
        if (!fd) return gt_fail_at(GT_ERR_DATA, fn, ln, "expected '<field>: <value>' in the NRRD header");
        *fd = '\0';
        char *f = trim(line), *v = trim(fd + 2);
        if (strcmp(f, "type") == 0) {
            if (!type_lookup(v, &in->type))
                return gt_fail_at(GT_ERR_DATA, fn, ln, "unsupported NRRD type '%.40s'", v);
            have_type = true;
        } else if (strcmp(f, "dimension") == 0) {
            long long d;
            char *e;
            if (!parse_ll(v, &d, &e) || !only_space(e)) return gt_fail_at(GT_ERR_DATA, fn, ln, "bad dimension '%.40s'", v);
            if (d != 3) return gt_fail_at(GT_ERR_DATA, fn, ln, "volume must have dimension 3, not %lld", d);
            have_dim = true;
        } else if (strcmp(f, "sizes") == 0) {
            if (!have_dim) return gt_fail_at(GT_ERR_DATA, fn, ln, "'sizes' before 'dimension'");
            char *p = v;
            for (int a = 0; a < 3; a++) {
                long long x;
                char *e;
                if (!parse_ll(p, &x, &e)) return gt_fail_at(GT_ERR_DATA, fn, ln, "bad sizes '%.60s' (need 3 integers)", v);
                if (x <= 0) return gt_fail_at(GT_ERR_DATA, fn, ln, "size %lld along axis %d must be positive", x, a);
                in->dims[a] = x;
                p = e;
            }
            if (!only_space(p)) return gt_fail_at(GT_ERR_DATA, fn, ln, "sizes has more than 3 values");
            have_sizes = true;
        } else if (strcmp(f, "endian") == 0) {
            if (strcmp(v, "little") == 0) in->big_endian = false;
            else if (strcmp(v, "big") == 0) in->big_endian = true;
            else return gt_fail_at(GT_ERR_DATA, fn, ln, "bad endian '%.40s'", v);
            have_endian = true;
        } else if (strcmp(f, "encoding") == 0) {
            if (strcmp(v, "raw") == 0) in->gzip = false;
            else if (strcmp(v, "gzip") == 0 || strcmp(v, "gz") == 0) {
                if (!HAVE_Z) return gt_fail_at(GT_ERR_DATA, fn, ln, "gzip encoding not supported (built without zlib)");
                in->gzip = true;
            } else
                return gt_fail_at(GT_ERR_DATA, fn, ln, "unsupported NRRD encoding '%.40s' (raw or gzip)", v);
            have_enc = true;
        } else if (strcmp(f, "spacings") == 0) {
            if (have_dirs) return gt_fail_at(GT_ERR_DATA, fn, ln, "both 'spacings' and 'space directions'");
            char *p = v;
            for (int a = 0; a < 3; a++) {
                double x;
                char *e;
                if (!parse_dbl(p, &x, &e)) return gt_fail_at(GT_ERR_DATA, fn, ln, "bad spacings '%.60s'", v);
                if (isnan(x)) x = 1.0;
                if (!isfinite(x) || x == 0) return gt_fail_at(GT_ERR_DATA, fn, ln, "bad spacing %g", x);
                in->dir[a][0] = in->dir[a][1] = in->dir[a][2] = 0;
                in->dir[a][a] = x;
                p = e;
            }
            if (!only_space(p)) return gt_fail_at(GT_ERR_DATA, fn, ln, "spacings has more than 3 values");
            have_spacings = true;
        } else if (strcmp(f, "space directions") == 0) {
            if (have_spacings) return gt_fail_at(GT_ERR_DATA, fn, ln, "both 'spacings' and 'space directions'");
            char *p = v;
            for (int a = 0; a < 3; a++) {
                if (!parse_vec(&p, in->dir[a]))
                    return gt_fail_at(GT_ERR_DATA, fn, ln, "bad space directions (need 3 vectors '(x,y,z)')");
                for (int c = 0; c < 3; c++)
                    if (!isfinite(in->dir[a][c])) return gt_fail_at(GT_ERR_DATA, fn, ln, "non-finite space direction");
            }
            if (!only_space(p)) return gt_fail_at(GT_ERR_DATA, fn, ln, "space directions has more than 3 vectors");
            have_dirs = true;
        } else if (strcmp(f, "space origin") == 0) {
            char *p = v;
            if (!parse_vec(&p, in->origin) || !only_space(p))
                return gt_fail_at(GT_ERR_DATA, fn, ln, "bad space origin (need '(x,y,z)')");
            for (int c = 0; c < 3; c++)
                if (!isfinite(in->origin[c])) return gt_fail_at(GT_ERR_DATA, fn, ln, "non-finite space origin");
        } else if (strcmp(f, "space dimension") == 0) {
            if (strcmp(v, "3") != 0) return gt_fail_at(GT_ERR_DATA, fn, ln, "space dimension must be 3");
        } else if (strcmp(f, "data file") == 0 || strcmp(f, "datafile") == 0) {
            if (strncmp(v, "LIST", 4) == 0 || strchr(v, ' ') || strchr(v, '%'))
                return gt_fail_at(GT_ERR_DATA, fn, ln, "multi-file 'data file' lists are not supported");
            if (strlen(v) >= sizeof datafile || !*v) return gt_fail_at(GT_ERR_DATA, fn, ln, "bad data file name");
            strcpy(datafile, v);
        } else if (strcmp(f, "line skip") == 0 || strcmp(f, "lineskip") == 0) {
            char *e;
            if (!parse_ll(v, &line_skip, &e) || !only_space(e) || line_skip < 0 || line_skip > 1000000)
                return gt_fail_at(GT_ERR_DATA, fn, ln, "bad line skip '%.40s'", v);
        } else if (strcmp(f, "byte skip") == 0 || strcmp(f, "byteskip") == 0) {
            char *e;
            if (!parse_ll(v, &byte_skip, &e) || !only_space(e) || byte_skip < 0)
                return gt_fail_at(GT_ERR_DATA, fn, ln, "bad or unsupported byte skip '%.40s'", v);
        } else {
            static const char *const ignored[] = {
                "content", "space", "kinds", "centers", "centerings", "labels", "units", "space units",
                "min", "max", "old min", "oldmin", "old max", "oldmax", "sample units", "sampleunits",
                "measurement frame", "thicknesses", "axis mins", "axismins", "axis maxs", "axismaxs",
                "number", "block size", "blocksize"};
            bool ok = false;
            for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
                if (strcmp(f, ignored[i]) == 0) ok = true;
            if (!ok) return gt_fail_at(GT_ERR_DATA, fn, ln, "unknown NRRD field '%.40s'", f);
        }
    }
    if (!have_type) return gt_fail_at(GT_ERR_DATA, fn, last, "NRRD header has no 'type'");
    if (!have_dim) return gt_fail_at(GT_ERR_DATA, fn, last, "NRRD header has no 'dimension'");
    if (!have_sizes) return gt_fail_at(GT_ERR_DATA, fn, last, "NRRD header has no 'sizes'");
    if (!have_enc) return gt_fail_at(GT_ERR_DATA, fn, last, "NRRD header has no 'encoding'");
    if (!have_endian && vsize[in->type] > 1)
        return gt_fail_at(GT_ERR_DATA, fn, last, "NRRD header has no 'endian' (needed for %s)", vname[in->type]);
    if (!have_spacings && !have_dirs)
        for (int a = 0; a < 3; a++) in->dir[a][a] = 1.0;
    GT_TRY(set_dims(s, fn, last));

    if (datafile[0]) {
        if (datafile[0] == '/' || !path || strcmp(path, "-") == 0 || !strchr(path, '/')) {
            snprintf(in->data_path, sizeof in->data_path, "%s", datafile);
        } else {
            int dl = (int)(strrchr(path, '/') - path);
            if ((size_t)dl + 1 + strlen(datafile) >= sizeof in->data_path)
                return gt_fail_at(GT_ERR_DATA, fn, last, "data file path too long");
            memcpy(in->data_path, path, (size_t)dl + 1);
            strcpy(in->data_path + dl + 1, datafile);
        }
        gt_status st = gt_rd_open(&s->dat, in->data_path);
        if (st != GT_OK) {
            char msg[1200];
            snprintf(msg, sizeof msg, "%s", gt_errmsg());
            return gt_fail_at(GT_ERR_DATA, fn, last, "NRRD data file: %s", msg);
        }
        s->src = &s->dat;
        snprintf(s->srcname_buf, sizeof s->srcname_buf, "%s", in->data_path);
        s->srcname = s->srcname_buf;
    } else {
        if (!line) return gt_fail_at(GT_ERR_DATA, fn, last + 1, "NRRD header does not end with a blank line and has no 'data file'");
        s->src = &s->hdr;
        s->srcname = fn;
    }
    gt_reader *d = s->src;
    for (long long i = 0; i < line_skip; i++) {
        char *l;
        GT_TRY(gt_rd_line(d, &l, NULL));
        if (!l) return gt_fail_at(GT_ERR_DATA, s->srcname, d->line + 1, "data ends within 'line skip'");
    }
    s->swap = in->big_endian == host_le() && vsize[in->type] > 1;
    if (in->gzip) s->gz_skip = byte_skip;
    if (!in->gzip && byte_skip > 0) {
        unsigned char tmp[4096];
        long long left = byte_skip;
        while (left > 0) {
            size_t k = left > (long long)sizeof tmp ? sizeof tmp : (size_t)left;
            if (gt_rd_bytes(d, tmp, k) != k)
                return gt_fail_at_byte(GT_ERR_DATA, s->srcname, gt_rd_offset(d), "data ends within 'byte skip'");
            left -= (long long)k;
        }
    }
    return GT_OK;
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
                                   vname[in->type], left < 0 ? 0 : left);
        if (s->is_raw && left > need) /* a wrong --dims would mesh part of the data, silently */
            return gt_fail_at_byte(GT_ERR_DATA, s->srcname, need,
                                   "raw volume has more data than --dims/--type say (%lld bytes: %lld x %lld x %lld %s), "
                                   "the file has %lld",
                                   need, (long long)in->dims[0], (long long)in->dims[1], (long long)in->dims[2],
                                   vname[in->type], left);
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
                                   vname[in->type], avail);
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
                                   vname[in->type], left);
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
            if (src_read(s, tmp, k, &st) != k)
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

enum { MODE_AUTO, MODE_NRRD, MODE_RAW };

static gt_status stream_open(const char *path, int mode, const int64_t *dims, int type, const double *spacing,
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
    if (mode == MODE_AUTO) {
        unsigned char magic[4];
        size_t n = gt_rd_peek(&s->hdr, magic, 4);
        mode = (n == 4 && memcmp(magic, "NRRD", 4) == 0) ? MODE_NRRD : MODE_RAW;
    }
    if (mode == MODE_NRRD) {
        st = nrrd_header(s, path);
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
            s->swap = big_endian == host_le() && vsize[type] > 1;
            st = GT_OK;
            for (int a = 0; a < 3 && st == GT_OK; a++)
                if (dims[a] <= 0) st = gt_fail(GT_ERR_USAGE, "--dims: size %lld along axis %d must be positive",
                                              (long long)dims[a], a);
            if (st == GT_OK) st = set_dims(s, s->srcname, 0);
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
    return stream_open(path, MODE_AUTO, dims, type, spacing, origin, false, s);
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
    if (stream_open(path, MODE_NRRD, NULL, -1, NULL, NULL, false, &s) != GT_OK) {
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
            size_t got = src_read(s, tmp, k, &st);
            s->decoded += (long long)got;
            if (st != GT_OK) return st;
            if (got < k) goto short_data;
            left -= k;
        }
        s->z++;
    }
    size_t want = s->slice * (size_t)nz;
    size_t got = src_read(s, buf, want, &st);
    s->decoded += (long long)got;
    if (st != GT_OK) return st;
    if (got < want) {
        s->z += (int64_t)(got / s->slice);
        goto short_data;
    }
    if (s->swap) swap_bytes(buf, want / vsize[s->info.type], vsize[s->info.type]);
    s->z += nz;
    return GT_OK;
short_data:
    return gt_fail_at_byte(GT_ERR_DATA, s->srcname, gt_rd_offset(s->src),
                           "%s data ends after %lld of the %lld bytes the volume needs (%lld x %lld x %lld %s), in slice z=%lld of %lld",
                           s->info.gzip ? "gzip" : "volume", s->decoded,
                           (long long)(s->slice * (size_t)s->info.dims[2]), (long long)s->info.dims[0],
                           (long long)s->info.dims[1], (long long)s->info.dims[2], vname[s->info.type], (long long)s->z,
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

/* ------------------------------------------------------- whole volume */

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
                               vname[s->info.type]);
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
        if (src_read(s, &extra, 1, &st) == 1) {
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
    GT_TRY(stream_open(path, MODE_NRRD, NULL, -1, NULL, NULL, false, &s));
    gt_status st = read_all(s, false, v);
    gt_volume_stream_close(s);
    return st;
}

gt_status gt_raw_read(const char *path, const int64_t dims[3], gt_voltype type, const double spacing[3],
                      const double origin[3], bool big_endian, gt_volume *v)
{
    memset(v, 0, sizeof *v);
    gt_volume_stream *s;
    GT_TRY(stream_open(path, MODE_RAW, dims, (int)type, spacing, origin, big_endian, &s));
    gt_status st = read_all(s, true, v);
    gt_volume_stream_close(s);
    return st;
}

gt_status gt_volume_read(const char *path, const int64_t *dims, int type, const double *spacing,
                         const double *origin, gt_volume *v)
{
    memset(v, 0, sizeof *v);
    gt_volume_stream *s;
    GT_TRY(stream_open(path, MODE_AUTO, dims, type, spacing, origin, false, &s));
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

/* --------------------------------------------------------------- write */

gt_status gt_nrrd_write(const char *path, const gt_volume *v, const char *const *keyvals, int nkv)
{
    const gt_volume_info *in = &v->info;
    if ((unsigned)in->type > GT_VOL_FLOAT64) return gt_fail(GT_ERR_USAGE, "bad voxel type");
    size_t n = vsize[in->type];
    for (int a = 0; a < 3; a++) {
        if (in->dims[a] <= 0 || !gt_mul_size(n, (size_t)in->dims[a], &n))
            return gt_fail(GT_ERR_USAGE, "bad volume dims");
    }
    for (int i = 0; i < nkv; i++)
        if (!strstr(keyvals[i], ":=") || strchr(keyvals[i], '\n'))
            return gt_fail(GT_ERR_USAGE, "NRRD key/value '%s' must be 'key:=value' on one line", keyvals[i]);
    gt_out o;
    GT_TRY(gt_out_open(&o, path));
    FILE *f = o.fp;
    fprintf(f, "NRRD0004\n# written by gputools\ntype: %s\ndimension: 3\nspace dimension: 3\n", nrrdname[in->type]);
    fprintf(f, "sizes: %lld %lld %lld\n", (long long)in->dims[0], (long long)in->dims[1], (long long)in->dims[2]);
    fprintf(f, "space directions:");
    for (int a = 0; a < 3; a++) fprintf(f, " (%.17g,%.17g,%.17g)", in->dir[a][0], in->dir[a][1], in->dir[a][2]);
    fprintf(f, "\nspace origin: (%.17g,%.17g,%.17g)\n", in->origin[0], in->origin[1], in->origin[2]);
    fprintf(f, "kinds: domain domain domain\n");
    if (vsize[in->type] > 1) fprintf(f, "endian: %s\n", host_le() ? "little" : "big");
    fprintf(f, "encoding: raw\n");
    for (int i = 0; i < nkv; i++) fprintf(f, "%s\n", keyvals[i]);
    fputc('\n', f);
    if (fwrite(v->data, 1, n, f) != n) {
        gt_out_abort(&o);
        return gt_fail(GT_ERR_RUNTIME, "write error on '%s': %s", path, strerror(errno));
    }
    return gt_out_commit(&o);
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
