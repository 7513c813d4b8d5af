/* Volumes, the NRRD header (see volume.h): voxel type names and sizes, the
 * header's fields parsed and checked (sizes, type, endian, encoding,
 * directions, data file, skips) and the data source positioned at the data. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "io/volume_internal.h"

const size_t gt_vol_vsize[8] = {1, 1, 2, 2, 4, 4, 4, 8};
const char *const gt_vol_vname[8] = {"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "float64"};
const char *const gt_vol_nrrdname[8] = {"uint8", "int8", "uint16", "int16", "uint32", "int32", "float", "double"};

size_t gt_voltype_size(gt_voltype t)
{
    return (unsigned)t < 8 ? gt_vol_vsize[t] : 0;
}

const char *gt_voltype_name(gt_voltype t)
{
    return (unsigned)t < 8 ? gt_vol_vname[t] : "?";
}

bool gt_vol_type_lookup(const char *s, gt_voltype *t)
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
    if (s && gt_vol_type_lookup(s, t)) return GT_OK;
    return gt_fail(GT_ERR_USAGE, "%s%sunknown voxel type '%s' (uint8, int8, uint16, int16, uint32, int32, float32, float64)",
                   opt ? opt : "", opt ? ": " : "", s ? s : "");
}
gt_status gt_vol_set_dims(gt_volume_stream *s, const char *fn, long line)
{
    gt_volume_info *in = &s->info;
    size_t n = gt_vol_vsize[in->type];
    for (int a = 0; a < 3; a++) {
        if (in->dims[a] <= 0)
            return gt_fail_at(GT_ERR_DATA, fn, line, "volume size %lld along axis %d must be positive",
                              (long long)in->dims[a], a);
        if (!gt_mul_size(n, (size_t)in->dims[a], &n) || n > (size_t)INT64_MAX)
            return gt_fail_at(GT_ERR_DATA, fn, line, "volume sizes %lld x %lld x %lld overflow 64 bits",
                              (long long)in->dims[0], (long long)in->dims[1], (long long)in->dims[2]);
    }
    s->slice = gt_vol_vsize[in->type] * (size_t)in->dims[0] * (size_t)in->dims[1];
    return GT_OK;
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

gt_status gt_vol_nrrd_header(gt_volume_stream *s, const char *path)
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
            if (!gt_vol_type_lookup(v, &in->type))
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
    if (!have_endian && gt_vol_vsize[in->type] > 1)
        return gt_fail_at(GT_ERR_DATA, fn, last, "NRRD header has no 'endian' (needed for %s)", gt_vol_vname[in->type]);
    if (!have_spacings && !have_dirs)
        for (int a = 0; a < 3; a++) in->dir[a][a] = 1.0;
    GT_TRY(gt_vol_set_dims(s, fn, last));

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
    s->swap = in->big_endian == gt_vol_host_le() && gt_vol_vsize[in->type] > 1;
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
