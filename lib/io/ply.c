/* PLY reader and writer (see ply.h).
 *
 * Reader: the header is parsed line by line through the streaming reader;
 * element bodies are read in order. Fixed-size binary records (no list
 * properties) are read in bulk chunks and converted column by column; an
 * all-float32 little-endian vertex element on a little-endian host is read
 * straight into the output array. Records with list properties are parsed
 * one at a time from the reader's buffer. Arrays grow as data actually
 * arrives (capped by the header's counts), and on a regular file the counts
 * are first checked against the bytes left, so a lying header can neither
 * cause a giant allocation nor a long read. */
#include "io/ply.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/output.h"
#include "io/ply_internal.h"
#include "io/reader.h"

#define MAX_ELEMS 256
#define MAX_PROPS 4096
#define MAX_HEADER_LINES 100000

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
    pelem elem[MAX_ELEMS];
    int vi, fi; /* index of vertex and face elements, -1 if none */
} phdr;

static const size_t tsize[] = {1, 1, 2, 2, 4, 4, 4, 8};
static const char *const tname[] = {"char", "uchar", "short", "ushort",
                                    "int", "uint", "float", "double"};
static const char *const tname2[] = {"int8", "uint8", "int16", "uint16",
                                     "int32", "uint32", "float32", "float64"};

const char *gt_ply_type_name(gt_ply_type t)
{
    return (unsigned)t < 8 ? tname[t] : "?";
}

static bool parse_type(const char *s, gt_ply_type *t)
{
    for (int i = 0; i < 8; i++)
        if (strcmp(s, tname[i]) == 0 || strcmp(s, tname2[i]) == 0) {
            *t = (gt_ply_type)i;
            return true;
        }
    return false;
}

static bool host_le(void)
{
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

/* ------------------------------------------------------------------ header */

/* split a header line into at most 8 whitespace-separated tokens */
static int tokenize(char *s, char **tok, int maxtok)
{
    int n = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t') s++;
        if (!*s) break;
        if (n == maxtok) return maxtok + 1;
        tok[n++] = s;
        while (*s && *s != ' ' && *s != '\t') s++;
        if (*s) *s++ = '\0';
    }
    return n;
}

static bool parse_count(const char *s, unsigned long long *v)
{
    if (*s < '0' || *s > '9') return false;
    errno = 0;
    char *end;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end) return false;
    *v = x;
    return true;
}

static void hdr_free(phdr *h)
{
    for (int i = 0; i < h->nelem; i++) free(h->elem[i].props);
    h->nelem = 0;
}

static gt_status add_comment(gt_ply_mesh *m, const char *text)
{
    if (m->ncomments >= 10000) return GT_OK; /* keep the first ones only */
    char **c = realloc(m->comments, (size_t)(m->ncomments + 1) * sizeof *c);
    if (!c) return gt_fail(GT_ERR_RUNTIME, "out of memory (PLY comments)");
    m->comments = c;
    c[m->ncomments] = strdup(text);
    if (!c[m->ncomments]) return gt_fail(GT_ERR_RUNTIME, "out of memory (PLY comments)");
    m->ncomments++;
    return GT_OK;
}

static gt_status read_header(gt_reader *r, phdr *h, gt_ply_mesh *m)
{
    const char *fn = r->name;
    char *line;
    size_t len;
    memset(h, 0, sizeof *h);
    h->vi = h->fi = -1;
    GT_TRY(gt_rd_line(r, &line, &len));
    if (!line || strcmp(line, "ply") != 0)
        return gt_fail_at(GT_ERR_DATA, fn, 1, "not a PLY file (first line is not 'ply')");
    bool have_format = false;
    for (;;) {
        GT_TRY(gt_rd_line(r, &line, &len));
        long ln = r->line;
        if (!line)
            return gt_fail_at(GT_ERR_DATA, fn, ln + 1, "file ends in the PLY header (no end_header)");
        if (ln > MAX_HEADER_LINES)
            return gt_fail_at(GT_ERR_DATA, fn, ln, "PLY header longer than %d lines", MAX_HEADER_LINES);
        if (strncmp(line, "comment", 7) == 0 && (line[7] == ' ' || line[7] == '\t' || !line[7])) {
            const char *t = line + 7;
            if (*t) t++;
            GT_TRY(add_comment(m, t));
            continue;
        }
        if (strncmp(line, "obj_info", 8) == 0 && (line[8] == ' ' || line[8] == '\t' || !line[8]))
            continue;
        char *tok[9];
        int nt = tokenize(line, tok, 8);
        if (nt == 0) return gt_fail_at(GT_ERR_DATA, fn, ln, "empty line in the PLY header");
        if (strcmp(tok[0], "format") == 0) {
            if (have_format) return gt_fail_at(GT_ERR_DATA, fn, ln, "second 'format' line");
            if (nt != 3) return gt_fail_at(GT_ERR_DATA, fn, ln, "expected 'format <type> 1.0'");
            if (strcmp(tok[1], "ascii") == 0) h->fmt = GT_PLY_ASCII;
            else if (strcmp(tok[1], "binary_little_endian") == 0) h->fmt = GT_PLY_BINARY_LE;
            else if (strcmp(tok[1], "binary_big_endian") == 0) h->fmt = GT_PLY_BINARY_BE;
            else return gt_fail_at(GT_ERR_DATA, fn, ln, "unknown PLY format '%s'", tok[1]);
            if (strcmp(tok[2], "1.0") != 0 && strcmp(tok[2], "1") != 0)
                return gt_fail_at(GT_ERR_DATA, fn, ln, "unsupported PLY version '%s'", tok[2]);
            have_format = true;
        } else if (strcmp(tok[0], "element") == 0) {
            if (!have_format) return gt_fail_at(GT_ERR_DATA, fn, ln, "'element' before 'format'");
            if (nt != 3) return gt_fail_at(GT_ERR_DATA, fn, ln, "expected 'element <name> <count>'");
            if (h->nelem == MAX_ELEMS) return gt_fail_at(GT_ERR_DATA, fn, ln, "more than %d elements", MAX_ELEMS);
            if (strlen(tok[1]) >= 64) return gt_fail_at(GT_ERR_DATA, fn, ln, "element name too long");
            for (int i = 0; i < h->nelem; i++)
                if (strcmp(h->elem[i].name, tok[1]) == 0)
                    return gt_fail_at(GT_ERR_DATA, fn, ln, "element '%s' defined twice", tok[1]);
            pelem *e = &h->elem[h->nelem];
            memset(e, 0, sizeof *e);
            strcpy(e->name, tok[1]);
            if (!parse_count(tok[2], &e->count) || e->count > (unsigned long long)INT64_MAX)
                return gt_fail_at(GT_ERR_DATA, fn, ln, "bad element count '%s'", tok[2]);
            if (strcmp(e->name, "vertex") == 0) h->vi = h->nelem;
            if (strcmp(e->name, "face") == 0) h->fi = h->nelem;
            h->nelem++;
        } else if (strcmp(tok[0], "property") == 0) {
            if (h->nelem == 0) return gt_fail_at(GT_ERR_DATA, fn, ln, "'property' before any 'element'");
            pelem *e = &h->elem[h->nelem - 1];
            pprop p;
            memset(&p, 0, sizeof p);
            const char *name;
            if (nt >= 2 && strcmp(tok[1], "list") == 0) {
                if (nt != 5)
                    return gt_fail_at(GT_ERR_DATA, fn, ln, "expected 'property list <count type> <type> <name>'");
                if (!parse_type(tok[2], &p.ctype))
                    return gt_fail_at(GT_ERR_DATA, fn, ln, "unknown PLY type '%s'", tok[2]);
                if (p.ctype == GT_PLY_FLOAT32 || p.ctype == GT_PLY_FLOAT64)
                    return gt_fail_at(GT_ERR_DATA, fn, ln, "list count type must be an integer type, not '%s'", tok[2]);
                if (!parse_type(tok[3], &p.type))
                    return gt_fail_at(GT_ERR_DATA, fn, ln, "unknown PLY type '%s'", tok[3]);
                p.is_list = true;
                name = tok[4];
                e->has_list = true;
            } else {
                if (nt != 3) return gt_fail_at(GT_ERR_DATA, fn, ln, "expected 'property <type> <name>'");
                if (!parse_type(tok[1], &p.type))
                    return gt_fail_at(GT_ERR_DATA, fn, ln, "unknown PLY type '%s'", tok[1]);
                name = tok[2];
            }
            if (strlen(name) >= 64) return gt_fail_at(GT_ERR_DATA, fn, ln, "property name too long");
            for (int i = 0; i < e->nprops; i++)
                if (strcmp(e->props[i].name, name) == 0)
                    return gt_fail_at(GT_ERR_DATA, fn, ln, "property '%s' defined twice in element '%s'", name, e->name);
            if (e->nprops == MAX_PROPS)
                return gt_fail_at(GT_ERR_DATA, fn, ln, "more than %d properties in element '%s'", MAX_PROPS, e->name);
            strcpy(p.name, name);
            pprop *np = realloc(e->props, (size_t)(e->nprops + 1) * sizeof *np);
            if (!np) return gt_fail(GT_ERR_RUNTIME, "out of memory (PLY header)");
            e->props = np;
            e->props[e->nprops++] = p;
            if (!p.is_list) e->recsize += tsize[p.type];
        } else if (strcmp(tok[0], "end_header") == 0) {
            if (nt != 1) return gt_fail_at(GT_ERR_DATA, fn, ln, "junk after end_header");
            if (!have_format) return gt_fail_at(GT_ERR_DATA, fn, ln, "no 'format' line in the PLY header");
            break;
        } else {
            return gt_fail_at(GT_ERR_DATA, fn, ln, "unknown PLY header keyword '%s'", tok[0]);
        }
    }
    for (int i = 0; i < h->nelem; i++)
        if (h->elem[i].count > 0 && h->elem[i].nprops == 0)
            return gt_fail_at(GT_ERR_DATA, fn, r->line, "element '%s' has %llu records but no properties",
                              h->elem[i].name, h->elem[i].count);
    if (h->fi >= 0) {
        pelem *f = &h->elem[h->fi];
        int pick = -1;
        for (int i = 0; i < f->nprops; i++)
            if (f->props[i].is_list && (strcmp(f->props[i].name, "vertex_indices") == 0 ||
                                        strcmp(f->props[i].name, "vertex_index") == 0)) {
                pick = i;
                break;
            }
        for (int i = 0; pick < 0 && i < f->nprops; i++)
            if (f->props[i].is_list) pick = i;
        if (pick < 0 && f->count > 0)
            return gt_fail_at(GT_ERR_DATA, fn, r->line, "face element has no list property (vertex_indices)");
        if (pick >= 0) {
            if (f->props[pick].type == GT_PLY_FLOAT32 || f->props[pick].type == GT_PLY_FLOAT64)
                return gt_fail_at(GT_ERR_DATA, fn, r->line, "face vertex indices must have an integer type, not '%s'",
                                  tname[f->props[pick].type]);
            f->props[pick].col = 1;
        }
    }
    return GT_OK;
}

/* --------------------------------------------------------------- values */

static inline uint16_t bs16(uint16_t x) { return (uint16_t)((x >> 8) | (x << 8)); }
static inline uint32_t bs32(uint32_t x) { return __builtin_bswap32(x); }
static inline uint64_t bs64(uint64_t x) { return __builtin_bswap64(x); }

/* value of type t at p as double; swap = bytes are in the other order */
static inline double load_d(const unsigned char *p, gt_ply_type t, bool swap)
{
    switch (t) {
    case GT_PLY_INT8: return (double)(int8_t)p[0];
    case GT_PLY_UINT8: return (double)p[0];
    case GT_PLY_INT16: { uint16_t v; memcpy(&v, p, 2); if (swap) v = bs16(v); return (double)(int16_t)v; }
    case GT_PLY_UINT16: { uint16_t v; memcpy(&v, p, 2); if (swap) v = bs16(v); return (double)v; }
    case GT_PLY_INT32: { uint32_t v; memcpy(&v, p, 4); if (swap) v = bs32(v); return (double)(int32_t)v; }
    case GT_PLY_UINT32: { uint32_t v; memcpy(&v, p, 4); if (swap) v = bs32(v); return (double)v; }
    case GT_PLY_FLOAT32: { uint32_t v; memcpy(&v, p, 4); if (swap) v = bs32(v); float f; memcpy(&f, &v, 4); return (double)f; }
    case GT_PLY_FLOAT64: { uint64_t v; memcpy(&v, p, 8); if (swap) v = bs64(v); double d; memcpy(&d, &v, 8); return d; }
    }
    return 0;
}

/* integer value (counts, indices): exact for every integer type */
static inline long long load_i(const unsigned char *p, gt_ply_type t, bool swap)
{
    switch (t) {
    case GT_PLY_INT8: return (int8_t)p[0];
    case GT_PLY_UINT8: return p[0];
    case GT_PLY_INT16: { uint16_t v; memcpy(&v, p, 2); if (swap) v = bs16(v); return (int16_t)v; }
    case GT_PLY_UINT16: { uint16_t v; memcpy(&v, p, 2); if (swap) v = bs16(v); return v; }
    case GT_PLY_INT32: { uint32_t v; memcpy(&v, p, 4); if (swap) v = bs32(v); return (int32_t)v; }
    case GT_PLY_UINT32: { uint32_t v; memcpy(&v, p, 4); if (swap) v = bs32(v); return v; }
    default: return 0;
    }
}

/* Convert column `col` of nrow fixed-size records to floats. */
#define CONV_LOOP(T, EXPR)                                                   \
    for (size_t r = 0; r < nrow; r++) {                                      \
        T v;                                                                 \
        memcpy(&v, src + r * rs, sizeof v);                                  \
        out[r * (size_t)np] = (float)(EXPR);                                 \
    }

static void convert_col(const unsigned char *src, size_t rs, size_t nrow, gt_ply_type t, bool swap,
                        float *out, int np)
{
    switch (t) {
    case GT_PLY_INT8: CONV_LOOP(int8_t, v) break;
    case GT_PLY_UINT8: CONV_LOOP(uint8_t, v) break;
    case GT_PLY_INT16:
        if (swap) { CONV_LOOP(uint16_t, (int16_t)bs16(v)) } else { CONV_LOOP(int16_t, v) }
        break;
    case GT_PLY_UINT16:
        if (swap) { CONV_LOOP(uint16_t, bs16(v)) } else { CONV_LOOP(uint16_t, v) }
        break;
    case GT_PLY_INT32:
        if (swap) { CONV_LOOP(uint32_t, (int32_t)bs32(v)) } else { CONV_LOOP(int32_t, v) }
        break;
    case GT_PLY_UINT32:
        if (swap) { CONV_LOOP(uint32_t, bs32(v)) } else { CONV_LOOP(uint32_t, v) }
        break;
    case GT_PLY_FLOAT32:
        if (swap) {
            for (size_t r = 0; r < nrow; r++) {
                uint32_t v;
                memcpy(&v, src + r * rs, 4);
                v = bs32(v);
                memcpy(&out[r * (size_t)np], &v, 4);
            }
        } else {
            CONV_LOOP(float, v)
        }
        break;
    case GT_PLY_FLOAT64:
        if (swap) {
            for (size_t r = 0; r < nrow; r++) {
                uint64_t v;
                double d;
                memcpy(&v, src + r * rs, 8);
                v = bs64(v);
                memcpy(&d, &v, 8);
                out[r * (size_t)np] = (float)d;
            }
        } else {
            CONV_LOOP(double, v)
        }
        break;
    }
}

/* ------------------------------------------------------------ body state */

typedef struct body {
    gt_reader *r;
    const char *fn;
    phdr *h;
    gt_ply_mesh *m;
    bool swap;
    size_t vcap;    /* rows allocated in m->vdata */
    size_t fcap;    /* faces allocated in m->face_start (minus 1) */
    size_t icap;    /* indices allocated in m->face_idx */
    unsigned long long nvert_hdr;
    long long fsize_left; /* bytes left after the header on a regular file, -1 on a pipe */
} body;

static gt_status grow_vert(body *b, size_t need)
{
    gt_ply_mesh *m = b->m;
    if (need <= b->vcap) return GT_OK;
    size_t cap = b->vcap ? b->vcap : 4096;
    while (cap < need) cap *= 2;
    if (cap > b->nvert_hdr) cap = (size_t)b->nvert_hdr;
    size_t bytes;
    size_t np = m->nprops ? (size_t)m->nprops : 1;
    if (!gt_mul3_size(cap, np, sizeof(float), &bytes))
        return gt_fail(GT_ERR_DATA, "PLY vertex data too large (%s)", b->fn);
    float *v = realloc(m->vdata, bytes ? bytes : 1);
    if (!v) return gt_fail(GT_ERR_RUNTIME, "out of memory for %zu PLY vertices (%s)", cap, b->fn);
    m->vdata = v;
    b->vcap = cap;
    return GT_OK;
}

static gt_status grow_face(body *b, size_t nface_need, size_t nidx_need)
{
    gt_ply_mesh *m = b->m;
    if (nface_need > b->fcap) {
        size_t cap = b->fcap ? b->fcap : 4096;
        while (cap < nface_need) cap *= 2;
        unsigned long long hc = b->h->elem[b->h->fi].count;
        if (cap > hc) cap = (size_t)hc;
        uint32_t *s = realloc(m->face_start, (cap + 1) * sizeof *s);
        if (!s) return gt_fail(GT_ERR_RUNTIME, "out of memory for %zu PLY faces (%s)", cap, b->fn);
        m->face_start = s;
        b->fcap = cap;
    }
    if (nidx_need > b->icap) {
        size_t cap = b->icap ? b->icap : 16384;
        while (cap < nidx_need) cap *= 2;
        if (cap > UINT32_MAX) cap = UINT32_MAX;
        int32_t *ix = realloc(m->face_idx, cap * sizeof *ix);
        if (!ix) return gt_fail(GT_ERR_RUNTIME, "out of memory for PLY face indices (%s)", b->fn);
        m->face_idx = ix;
        b->icap = cap;
    }
    return GT_OK;
}

static gt_status truncated(body *b, const pelem *e, unsigned long long rec)
{
    if (b->r->err) return gt_rd_ioerr(b->r);
    if (b->h->fmt == GT_PLY_ASCII)
        return gt_fail_at(GT_ERR_DATA, b->fn, b->r->line + 1,
                          "file ends in element '%s' after %llu of %llu records", e->name, rec, e->count);
    return gt_fail_at_byte(GT_ERR_DATA, b->fn, gt_rd_offset(b->r),
                           "file ends in element '%s' after %llu of %llu records", e->name, rec, e->count);
}

/* store one face index list; vals read by the caller */
static gt_status face_begin(body *b, size_t f, long long cnt, long long where, bool is_line)
{
    gt_ply_mesh *m = b->m;
    if (cnt < 0) {
        if (is_line) return gt_fail_at(GT_ERR_DATA, b->fn, (long)where, "face %zu: negative vertex count %lld", f, cnt);
        return gt_fail_at_byte(GT_ERR_DATA, b->fn, where, "face %zu: negative vertex count %lld", f, cnt);
    }
    size_t start = f == 0 ? 0 : m->face_start[f];
    if ((unsigned long long)start + (unsigned long long)cnt > UINT32_MAX - 1) {
        if (is_line) return gt_fail_at(GT_ERR_DATA, b->fn, (long)where, "more than 2^32 face indices");
        return gt_fail_at_byte(GT_ERR_DATA, b->fn, where, "more than 2^32 face indices");
    }
    /* index room grows as indices arrive (a lying count must not allocate) */
    GT_TRY(grow_face(b, f + 1, 0));
    if (f == 0) m->face_start[0] = 0;
    return GT_OK;
}

static gt_status bad_index(body *b, size_t f, long long idx, long long where, bool is_line)
{
    if (is_line)
        return gt_fail_at(GT_ERR_DATA, b->fn, (long)where, "face %zu: vertex index %lld out of range [0, %llu)",
                          f, idx, b->nvert_hdr);
    return gt_fail_at_byte(GT_ERR_DATA, b->fn, where, "face %zu: vertex index %lld out of range [0, %llu)", f, idx,
                           b->nvert_hdr);
}

/* ---------------------------------------------------------------- binary */

/* Skip n bytes of the body. */
static bool skip_bytes(gt_reader *r, unsigned long long n)
{
    while (n > 0) {
        size_t a = gt_rd_fill(r, GT_RD_BUF);
        if (a == 0) return false;
        size_t k = a < n ? a : (size_t)n;
        r->pos += k;
        n -= k;
    }
    return true;
}

static gt_status bin_fixed(body *b, int ei)
{
    pelem *e = &b->h->elem[ei];
    gt_reader *r = b->r;
    gt_ply_mesh *m = b->m;
    bool is_vertex = ei == b->h->vi;
    size_t rs = e->recsize;
    if (!is_vertex || m->nprops == 0) {
        unsigned long long total;
        if (__builtin_mul_overflow(e->count, (unsigned long long)rs, &total))
            return gt_fail_at_byte(GT_ERR_DATA, b->fn, gt_rd_offset(r), "element '%s' size overflows", e->name);
        long long start = gt_rd_offset(r);
        if (!skip_bytes(r, total)) {
            unsigned long long rec = rs ? (unsigned long long)(gt_rd_offset(r) - start) / rs : 0;
            return truncated(b, e, rec);
        }
        if (is_vertex) m->nvert = (size_t)e->count;
        return GT_OK;
    }
    int np = m->nprops;
    /* all-float32 records map 1:1 onto the output rows: read straight into
     * vdata (and swap in place for the other byte order) */
    bool direct = rs == (size_t)np * 4;
    for (int i = 0; direct && i < e->nprops; i++)
        if (e->props[i].type != GT_PLY_FLOAT32) direct = false;
    size_t chunk = GT_RD_BUF / rs;
    if (chunk == 0) chunk = 1;
    unsigned char *tmp = NULL;
    if (!direct) {
        tmp = malloc(chunk * rs);
        if (!tmp) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    size_t done = 0;
    gt_status st = GT_OK;
    while (done < e->count) {
        size_t want = e->count - done;
        if (direct && b->fsize_left >= 0) {
            /* size already checked against the file: read in large blocks */
            if (want > ((size_t)64 << 20) / rs) want = ((size_t)64 << 20) / rs;
        } else if (want > chunk) {
            want = chunk;
        }
        if ((st = grow_vert(b, done + want)) != GT_OK) break;
        float *out = m->vdata + done * (size_t)np;
        if (direct) {
            size_t got = gt_rd_bytes(r, out, want * rs);
            if (got < want * rs) {
                st = truncated(b, e, done + got / rs);
                break;
            }
            if (b->swap) {
                for (size_t i = 0, n = want * (size_t)np; i < n; i++) {
                    uint32_t w;
                    memcpy(&w, out + i, 4);
                    w = bs32(w);
                    memcpy(out + i, &w, 4);
                }
            }
        } else {
            size_t got = gt_rd_bytes(r, tmp, want * rs);
            if (got < want * rs) {
                st = truncated(b, e, done + got / rs);
                break;
            }
            size_t off = 0;
            for (int i = 0; i < e->nprops; i++) {
                convert_col(tmp + off, rs, want, e->props[i].type, b->swap, out + e->props[i].col, np);
                off += tsize[e->props[i].type];
            }
        }
        done += want;
    }
    free(tmp);
    if (st == GT_OK) m->nvert = done;
    return st;
}

/* records with list properties (any element), one at a time */
static gt_status bin_var(body *b, int ei)
{
    pelem *e = &b->h->elem[ei];
    gt_reader *r = b->r;
    gt_ply_mesh *m = b->m;
    bool is_vertex = ei == b->h->vi, is_face = ei == b->h->fi;
    int np = m->nprops;
    for (unsigned long long rec = 0; rec < e->count; rec++) {
        if (is_vertex) GT_TRY(grow_vert(b, (size_t)rec + 1));
        for (int i = 0; i < e->nprops; i++) {
            const pprop *p = &e->props[i];
            if (!p->is_list) {
                size_t sz = tsize[p->type];
                if (gt_rd_fill(r, sz) < sz) return truncated(b, e, rec);
                if (is_vertex)
                    m->vdata[(size_t)rec * np + p->col] = (float)load_d(r->buf + r->pos, p->type, b->swap);
                r->pos += sz;
                continue;
            }
            size_t csz = tsize[p->ctype], isz = tsize[p->type];
            if (gt_rd_fill(r, csz) < csz) return truncated(b, e, rec);
            long long at = gt_rd_offset(r);
            long long cnt = load_i(r->buf + r->pos, p->ctype, b->swap);
            r->pos += csz;
            if (cnt < 0)
                return gt_fail_at_byte(GT_ERR_DATA, b->fn, at, "element '%s' record %llu: negative list count %lld",
                                       e->name, rec, cnt);
            if (is_face && p->col == 1) {
                size_t f = (size_t)rec;
                GT_TRY(face_begin(b, f, cnt, at, false));
                size_t s0 = m->face_start[f];
                for (long long j = 0; j < cnt; j++) {
                    if (gt_rd_fill(r, isz) < isz) return truncated(b, e, rec);
                    if (s0 + (size_t)j >= b->icap) GT_TRY(grow_face(b, f + 1, s0 + (size_t)j + 1));
                    long long idx = load_i(r->buf + r->pos, p->type, b->swap);
                    if (idx < 0 || (unsigned long long)idx >= b->nvert_hdr)
                        return bad_index(b, f, idx, gt_rd_offset(r), false);
                    m->face_idx[s0 + (size_t)j] = (int32_t)idx;
                    r->pos += isz;
                }
                m->face_start[f + 1] = (uint32_t)(s0 + (size_t)cnt);
                m->nface = f + 1;
            } else {
                if (!skip_bytes(r, (unsigned long long)cnt * isz)) return truncated(b, e, rec);
            }
        }
        if (is_vertex) m->nvert = (size_t)rec + 1;
    }
    return GT_OK;
}

/* ----------------------------------------------------------------- ascii */

static char *next_tok(char **s)
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

/* parse token as type t; integers range-checked */
static bool ascii_val(const char *t, gt_ply_type ty, double *out, long long *iout)
{
    char *end;
    errno = 0;
    if (ty == GT_PLY_FLOAT32) {
        float f = strtof(t, &end);
        if (end == t || *end) return false;
        *out = f;
        return true;
    }
    if (ty == GT_PLY_FLOAT64) {
        double d = strtod(t, &end);
        if (end == t || *end) return false;
        *out = d;
        return true;
    }
    long long v = strtoll(t, &end, 10);
    if (end == t || *end || errno) return false;
    static const long long lo[] = {-128, 0, -32768, 0, INT32_MIN, 0};
    static const long long hi[] = {127, 255, 32767, 65535, INT32_MAX, UINT32_MAX};
    if (v < lo[ty] || v > hi[ty]) return false;
    *out = (double)v;
    if (iout) *iout = v;
    return true;
}

static gt_status ascii_elem(body *b, int ei)
{
    pelem *e = &b->h->elem[ei];
    gt_reader *r = b->r;
    gt_ply_mesh *m = b->m;
    bool is_vertex = ei == b->h->vi, is_face = ei == b->h->fi;
    int np = m->nprops;
    for (unsigned long long rec = 0; rec < e->count; rec++) {
        char *line;
        GT_TRY(gt_rd_line(r, &line, NULL));
        if (!line) return truncated(b, e, rec);
        long ln = r->line;
        if (is_vertex) GT_TRY(grow_vert(b, (size_t)rec + 1));
        char *s = line;
        for (int i = 0; i < e->nprops; i++) {
            const pprop *p = &e->props[i];
            char *t = next_tok(&s);
            if (!t)
                return gt_fail_at(GT_ERR_DATA, b->fn, ln, "element '%s' record %llu: missing value for '%s'",
                                  e->name, rec, p->name);
            double d;
            long long iv = 0;
            if (!p->is_list) {
                if (!ascii_val(t, p->type, &d, NULL))
                    return gt_fail_at(GT_ERR_DATA, b->fn, ln, "bad %s value '%.40s' for property '%s'",
                                      tname[p->type], t, p->name);
                if (is_vertex) m->vdata[(size_t)rec * np + p->col] = (float)d;
                continue;
            }
            if (!ascii_val(t, p->ctype, &d, &iv))
                return gt_fail_at(GT_ERR_DATA, b->fn, ln, "bad list count '%.40s' for property '%s'", t, p->name);
            long long cnt = iv;
            if (cnt < 0)
                return gt_fail_at(GT_ERR_DATA, b->fn, ln, "negative list count %lld for property '%s'", cnt, p->name);
            bool store = is_face && p->col == 1;
            size_t f = (size_t)rec, s0 = 0;
            if (store) {
                GT_TRY(face_begin(b, f, cnt, ln, true));
                s0 = m->face_start[f];
            }
            for (long long j = 0; j < cnt; j++) {
                t = next_tok(&s);
                if (!t)
                    return gt_fail_at(GT_ERR_DATA, b->fn, ln, "list '%s' has fewer than %lld values", p->name, cnt);
                if (!ascii_val(t, p->type, &d, &iv))
                    return gt_fail_at(GT_ERR_DATA, b->fn, ln, "bad %s value '%.40s' in list '%s'",
                                      tname[p->type], t, p->name);
                if (store) {
                    if (s0 + (size_t)j >= b->icap) GT_TRY(grow_face(b, f + 1, s0 + (size_t)j + 1));
                    if (iv < 0 || (unsigned long long)iv >= b->nvert_hdr) return bad_index(b, f, iv, ln, true);
                    m->face_idx[s0 + (size_t)j] = (int32_t)iv;
                }
            }
            if (store) {
                m->face_start[f + 1] = (uint32_t)(s0 + (size_t)cnt);
                m->nface = f + 1;
            }
        }
        if (next_tok(&s))
            return gt_fail_at(GT_ERR_DATA, b->fn, ln, "element '%s' record %llu: more values than properties",
                              e->name, rec);
        if (is_vertex) m->nvert = (size_t)rec + 1;
    }
    return GT_OK;
}

/* --------------------------------------------------------------- reading */

/* Least number of body bytes the header's counts need. false on overflow. */
static bool min_body_bytes(const phdr *h, unsigned long long *out)
{
    unsigned long long total = 0;
    for (int i = 0; i < h->nelem; i++) {
        const pelem *e = &h->elem[i];
        unsigned long long rec = 0;
        for (int j = 0; j < e->nprops; j++) {
            const pprop *p = &e->props[j];
            if (h->fmt == GT_PLY_ASCII) rec += 2; /* a digit and a separator */
            else rec += p->is_list ? tsize[p->ctype] : tsize[p->type];
        }
        unsigned long long t;
        if (__builtin_mul_overflow(rec, e->count, &t) || __builtin_add_overflow(total, t, &total)) return false;
    }
    if (h->fmt == GT_PLY_ASCII && total > 0) total--; /* last newline may be missing */
    *out = total;
    return true;
}

static gt_status read_body(gt_reader *r, phdr *h, gt_ply_mesh *m)
{
    body b;
    memset(&b, 0, sizeof b);
    b.r = r;
    b.fn = r->name;
    b.h = h;
    b.m = m;
    b.swap = (h->fmt == GT_PLY_BINARY_BE) == host_le();
    if (h->fmt == GT_PLY_ASCII) b.swap = false;
    b.nvert_hdr = h->vi >= 0 ? h->elem[h->vi].count : 0;
    m->format = h->fmt;

    unsigned long long need;
    if (!min_body_bytes(h, &need))
        return gt_fail_at(GT_ERR_DATA, b.fn, r->line, "PLY element sizes overflow 64 bits");
    long long fsz = gt_rd_file_size(r);
    b.fsize_left = -1;
    if (fsz >= 0) {
        long long off = gt_rd_offset(r);
        /* only trust the size when the reader is at the file's position */
        long long left = fsz - off;
        if (left >= 0) {
            b.fsize_left = left;
            if (need > (unsigned long long)left)
                return gt_fail_at(GT_ERR_DATA, b.fn, r->line,
                                  "PLY header promises at least %llu bytes of data, file has %lld after the header",
                                  need, left);
        }
    }

    /* vertex columns: scalar properties of the vertex element, in file order */
    if (h->vi >= 0) {
        pelem *v = &h->elem[h->vi];
        int n = 0;
        for (int i = 0; i < v->nprops; i++)
            if (!v->props[i].is_list) n++;
        m->props = calloc(n ? (size_t)n : 1, sizeof *m->props);
        if (!m->props) return gt_fail(GT_ERR_RUNTIME, "out of memory");
        n = 0;
        for (int i = 0; i < v->nprops; i++)
            if (!v->props[i].is_list) {
                v->props[i].col = n;
                strcpy(m->props[n].name, v->props[i].name);
                m->props[n].type = v->props[i].type;
                n++;
            }
        m->nprops = n;
        if (n > 0 && v->count > 0) {
            /* initial capacity: the whole count when the file size vouches for it */
            size_t init = b.fsize_left >= 0 ? (size_t)v->count : 4096;
            if (init > v->count) init = (size_t)v->count;
            GT_TRY(grow_vert(&b, init));
        }
    }
    if (h->fi >= 0 && h->elem[h->fi].count > 0 && b.fsize_left >= 0)
        GT_TRY(grow_face(&b, (size_t)h->elem[h->fi].count, 0));

    for (int i = 0; i < h->nelem; i++) {
        pelem *e = &h->elem[i];
        if (h->fmt == GT_PLY_ASCII) GT_TRY(ascii_elem(&b, i));
        else if (e->has_list) GT_TRY(bin_var(&b, i));
        else GT_TRY(bin_fixed(&b, i));
    }
    if (h->fmt == GT_PLY_ASCII) {
        char *line;
        size_t len;
        for (;;) {
            GT_TRY(gt_rd_line(r, &line, &len));
            if (!line) break;
            char *s = line;
            if (next_tok(&s))
                return gt_fail_at(GT_ERR_DATA, b.fn, r->line, "data after the last PLY element");
        }
    }
    if (h->fi >= 0 && m->nface == 0) {
        free(m->face_start);
        free(m->face_idx);
        m->face_start = NULL;
        m->face_idx = NULL;
    }
    return GT_OK;
}

gt_status gt_ply_read_reader(gt_reader *r, gt_ply_mesh *m)
{
    memset(m, 0, sizeof *m);
    phdr *h = calloc(1, sizeof *h);
    if (!h) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    gt_status st = read_header(r, h, m);
    if (st == GT_OK) st = read_body(r, h, m);
    hdr_free(h);
    free(h);
    if (st != GT_OK) gt_ply_free(m);
    return st;
}

gt_status gt_ply_read(const char *path, gt_ply_mesh *m)
{
    memset(m, 0, sizeof *m);
    gt_reader r;
    GT_TRY(gt_rd_open(&r, path));
    gt_status st = gt_ply_read_reader(&r, m);
    gt_rd_close(&r);
    return st;
}

/* ------------------------------------------------------------- utilities */

int gt_ply_find(const gt_ply_mesh *m, const char *name)
{
    for (int i = 0; i < m->nprops; i++)
        if (strcmp(m->props[i].name, name) == 0) return i;
    return -1;
}

gt_status gt_ply_gather(const gt_ply_mesh *m, const char *path, const char *const *names, int k, float *out)
{
    int *col = malloc((size_t)(k > 0 ? k : 1) * sizeof *col);
    if (!col) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    char missing[512] = "";
    size_t ml = 0;
    int nmiss = 0;
    for (int j = 0; j < k; j++) {
        col[j] = gt_ply_find(m, names[j]);
        if (col[j] < 0) {
            if (ml < sizeof missing - 1) {
                int w = snprintf(missing + ml, sizeof missing - ml, "%s'%s'", nmiss ? ", " : "", names[j]);
                if (w > 0) ml += (size_t)w;
                if (ml > sizeof missing - 1) ml = sizeof missing - 1;
            }
            nmiss++;
        }
    }
    if (nmiss) {
        free(col);
        return gt_fail_at(GT_ERR_DATA, gt_in_name(path), 0, "PLY has no vertex propert%s %s",
                          nmiss > 1 ? "ies" : "y", missing);
    }
    size_t np = (size_t)m->nprops;
    for (size_t v = 0; v < m->nvert; v++)
        for (int j = 0; j < k; j++) out[v * (size_t)k + (size_t)j] = m->vdata[v * np + (size_t)col[j]];
    free(col);
    return GT_OK;
}

bool gt_ply_all_triangles(const gt_ply_mesh *m)
{
    for (size_t f = 0; f < m->nface; f++)
        if (m->face_start[f + 1] - m->face_start[f] != 3) return false;
    return true;
}

gt_status gt_ply_mesh_alloc(gt_ply_mesh *m, size_t nvert, int nprops, const char *const *names,
                            const gt_ply_type *types)
{
    memset(m, 0, sizeof *m);
    if (nprops < 0 || nprops > MAX_PROPS) return gt_fail(GT_ERR_USAGE, "bad PLY property count %d", nprops);
    m->props = calloc(nprops ? (size_t)nprops : 1, sizeof *m->props);
    if (!m->props) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    for (int i = 0; i < nprops; i++) {
        snprintf(m->props[i].name, sizeof m->props[i].name, "%s", names[i]);
        m->props[i].type = types ? types[i] : GT_PLY_FLOAT32;
    }
    m->nprops = nprops;
    m->vdata = gt_calloc(nvert ? nvert * (size_t)(nprops ? nprops : 1) : 1, sizeof(float), "PLY vertices");
    if (!m->vdata || (nvert && nprops && (nvert * (size_t)nprops) / (size_t)nprops != nvert)) {
        free(m->props);
        free(m->vdata);
        memset(m, 0, sizeof *m);
        return gt_fail(GT_ERR_RUNTIME, "out of memory for %zu PLY vertices", nvert);
    }
    m->nvert = nvert;
    m->format = GT_PLY_BINARY_LE;
    return GT_OK;
}

void gt_ply_free(gt_ply_mesh *m)
{
    if (!m) return;
    free(m->props);
    free(m->vdata);
    free(m->face_start);
    free(m->face_idx);
    for (int i = 0; i < m->ncomments; i++) free(m->comments[i]);
    free(m->comments);
    memset(m, 0, sizeof *m);
}

/* --------------------------------------------------------------- writing */

static void store_val(unsigned char *p, gt_ply_type t, float x, bool swap)
{
    switch (t) {
    case GT_PLY_INT8: { int8_t v = (int8_t)lrintf(fminf(fmaxf(x, -128.f), 127.f)); memcpy(p, &v, 1); break; }
    case GT_PLY_UINT8: { uint8_t v = (uint8_t)lrintf(fminf(fmaxf(x, 0.f), 255.f)); memcpy(p, &v, 1); break; }
    case GT_PLY_INT16: { uint16_t v = (uint16_t)(int16_t)lrintf(fminf(fmaxf(x, -32768.f), 32767.f)); if (swap) v = bs16(v); memcpy(p, &v, 2); break; }
    case GT_PLY_UINT16: { uint16_t v = (uint16_t)lrintf(fminf(fmaxf(x, 0.f), 65535.f)); if (swap) v = bs16(v); memcpy(p, &v, 2); break; }
    case GT_PLY_INT32: { double d = fmin(fmax((double)x, -2147483648.0), 2147483647.0); uint32_t v = (uint32_t)(int32_t)llrint(d); if (swap) v = bs32(v); memcpy(p, &v, 4); break; }
    case GT_PLY_UINT32: { double d = fmin(fmax((double)x, 0.0), 4294967295.0); uint32_t v = (uint32_t)llrint(d); if (swap) v = bs32(v); memcpy(p, &v, 4); break; }
    case GT_PLY_FLOAT32: { uint32_t v; memcpy(&v, &x, 4); if (swap) v = bs32(v); memcpy(p, &v, 4); break; }
    case GT_PLY_FLOAT64: { double d = x; uint64_t v; memcpy(&v, &d, 8); if (swap) v = bs64(v); memcpy(p, &v, 8); break; }
    }
}

static void print_val(FILE *f, gt_ply_type t, float x)
{
    switch (t) {
    case GT_PLY_FLOAT32: fprintf(f, "%.9g", (double)x); break;
    case GT_PLY_FLOAT64: fprintf(f, "%.17g", (double)x); break;
    default: {
        unsigned char b[8];
        store_val(b, t, x, false);
        fprintf(f, "%.0f", load_d(b, t, false));
    }
    }
}

/* faces from either face_start/face_idx or a triangle array */
typedef struct faces {
    size_t n;
    const uint32_t *start;
    const int32_t *idx;
    const int32_t *tris;
} faces;

static gt_status write_impl(const char *path, const gt_ply_mesh *m, const faces *fc, gt_ply_format fmt)
{
    if (fmt != GT_PLY_ASCII && fmt != GT_PLY_BINARY_LE && fmt != GT_PLY_BINARY_BE)
        return gt_fail(GT_ERR_USAGE, "bad PLY format %d", (int)fmt);
    for (size_t f = 0; f < fc->n && !fc->tris; f++)
        if (fc->start[f + 1] - fc->start[f] > 255)
            return gt_fail(GT_ERR_DATA, "face %zu has %u vertices; PLY output allows at most 255", f,
                           fc->start[f + 1] - fc->start[f]);
    gt_out o;
    GT_TRY(gt_out_open(&o, path));
    FILE *fp = o.fp;
    static const char *const fmtname[] = {"ascii", "binary_little_endian", "binary_big_endian"};
    fprintf(fp, "ply\nformat %s 1.0\n", fmtname[fmt]);
    for (int i = 0; i < m->ncomments; i++) {
        const char *c = m->comments[i];
        fputs("comment ", fp);
        for (; *c; c++) fputc(*c == '\n' || *c == '\r' ? ' ' : *c, fp);
        fputc('\n', fp);
    }
    fprintf(fp, "element vertex %zu\n", m->nvert);
    for (int i = 0; i < m->nprops; i++) fprintf(fp, "property %s %s\n", tname[m->props[i].type], m->props[i].name);
    if (fc->n > 0) fprintf(fp, "element face %zu\nproperty list uchar int vertex_indices\n", fc->n);
    fputs("end_header\n", fp);

    size_t np = (size_t)m->nprops;
    if (fmt == GT_PLY_ASCII) {
        for (size_t v = 0; v < m->nvert; v++) {
            for (size_t i = 0; i < np; i++) {
                if (i) fputc(' ', fp);
                print_val(fp, m->props[i].type, m->vdata[v * np + i]);
            }
            fputc('\n', fp);
        }
        for (size_t f = 0; f < fc->n; f++) {
            size_t s = fc->tris ? 3 * f : fc->start[f], e = fc->tris ? 3 * f + 3 : fc->start[f + 1];
            const int32_t *ix = fc->tris ? fc->tris : fc->idx;
            fprintf(fp, "%zu", e - s);
            for (size_t j = s; j < e; j++) fprintf(fp, " %d", ix[j]);
            fputc('\n', fp);
        }
        return gt_out_commit(&o);
    }
    bool swap = (fmt == GT_PLY_BINARY_BE) == host_le();
    bool direct = !swap && host_le();
    size_t rs = 0;
    for (size_t i = 0; i < np; i++) {
        rs += tsize[m->props[i].type];
        if (m->props[i].type != GT_PLY_FLOAT32) direct = false;
    }
    if (direct) {
        if (m->nvert && np && fwrite(m->vdata, sizeof(float) * np, m->nvert, fp) != m->nvert) goto ioerr;
    } else if (np > 0) {
        size_t chunk = (1u << 20) / rs + 1;
        unsigned char *buf = malloc(chunk * rs);
        if (!buf) {
            gt_out_abort(&o);
            return gt_fail(GT_ERR_RUNTIME, "out of memory");
        }
        for (size_t v0 = 0; v0 < m->nvert; v0 += chunk) {
            size_t n = m->nvert - v0 < chunk ? m->nvert - v0 : chunk;
            unsigned char *p = buf;
            for (size_t v = v0; v < v0 + n; v++)
                for (size_t i = 0; i < np; i++) {
                    store_val(p, m->props[i].type, m->vdata[v * np + i], swap);
                    p += tsize[m->props[i].type];
                }
            if (fwrite(buf, 1, (size_t)(p - buf), fp) != (size_t)(p - buf)) {
                free(buf);
                goto ioerr;
            }
        }
        free(buf);
    }
    if (fc->n > 0) {
        enum { FB = 1 << 16 };
        unsigned char *buf = malloc(FB + 1024);
        if (!buf) {
            gt_out_abort(&o);
            return gt_fail(GT_ERR_RUNTIME, "out of memory");
        }
        size_t used = 0;
        for (size_t f = 0; f < fc->n; f++) {
            size_t s = fc->tris ? 3 * f : fc->start[f], e = fc->tris ? 3 * f + 3 : fc->start[f + 1];
            const int32_t *ix = fc->tris ? fc->tris : fc->idx;
            buf[used++] = (unsigned char)(e - s);
            for (size_t j = s; j < e; j++) {
                uint32_t v = (uint32_t)ix[j];
                if (swap) v = bs32(v);
                memcpy(buf + used, &v, 4);
                used += 4;
            }
            if (used >= FB) {
                if (fwrite(buf, 1, used, fp) != used) {
                    free(buf);
                    goto ioerr;
                }
                used = 0;
            }
        }
        if (used && fwrite(buf, 1, used, fp) != used) {
            free(buf);
            goto ioerr;
        }
        free(buf);
    }
    return gt_out_commit(&o);
ioerr:
    gt_out_abort(&o);
    return gt_fail(GT_ERR_RUNTIME, "write error on '%s': %s", path, strerror(errno));
}

gt_status gt_ply_write(const char *path, const gt_ply_mesh *m, gt_ply_format fmt)
{
    faces fc = {m->nface, m->face_start, m->face_idx, NULL};
    return write_impl(path, m, &fc, fmt);
}

gt_status gt_ply_write_trimesh(const char *path, size_t nvert, const float *xyz, const float *normals, int nextra,
                               const char *const *extra_names, const float *extra, size_t ntri,
                               const int32_t *tris, gt_ply_format fmt)
{
    if (nextra < 0 || nextra > MAX_PROPS - 6) return gt_fail(GT_ERR_USAGE, "bad extra column count %d", nextra);
    int np = 3 + (normals ? 3 : 0) + nextra;
    const char **names = malloc((size_t)np * sizeof *names);
    if (!names) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    static const char *const base[] = {"x", "y", "z", "nx", "ny", "nz"};
    int k = 0;
    for (int i = 0; i < (normals ? 6 : 3); i++) names[k++] = base[i];
    for (int i = 0; i < nextra; i++) names[k++] = extra_names[i];
    gt_ply_mesh m;
    gt_status st = gt_ply_mesh_alloc(&m, nvert, np, names, NULL);
    free(names);
    if (st != GT_OK) return st;
    for (size_t v = 0; v < nvert; v++) {
        float *row = m.vdata + v * (size_t)np;
        int c = 0;
        for (int i = 0; i < 3; i++) row[c++] = xyz[3 * v + (size_t)i];
        if (normals)
            for (int i = 0; i < 3; i++) row[c++] = normals[3 * v + (size_t)i];
        for (int i = 0; i < nextra; i++) row[c++] = extra[v * (size_t)nextra + (size_t)i];
    }
    faces fc = {ntri, NULL, NULL, tris};
    st = write_impl(path, &m, &fc, fmt);
    gt_ply_free(&m);
    return st;
}
