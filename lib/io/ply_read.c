/* PLY reading (see ply.h): the header (ply_header.c), then the element
 * bodies in order, decoded here. Fixed-size binary records (no list
 * properties) are read in bulk chunks and converted column by column; an
 * all-float32 vertex element is read straight into the output array (and
 * byte-swapped in place when the file's order is not the host's). Records
 * with list properties are parsed one at a time from the reader's buffer,
 * ascii records a line at a time. Arrays grow as data actually arrives
 * (capped by the header's counts), and on a regular file the counts are
 * first checked against the bytes left, so a lying header can neither cause
 * a giant allocation nor a long read. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "io/ply_internal.h"

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
    bool *rel;            /* NULL, or per vertex column: kept relative to m->origin (rel_columns) */
} body;

/* value d of vertex rec's column col into vdata (relative to the column's
 * origin where it has one) */
static inline void put_vertex(body *b, size_t rec, int col, double d)
{
    gt_ply_mesh *m = b->m;
    if (b->rel && b->rel[col]) {
        if (rec == 0) m->origin[col] = ply_pick_origin(d); /* before any other record */
        d -= m->origin[col];
    }
    m->vdata[rec * (size_t)m->nprops + (size_t)col] = (float)d;
}

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

/* store index idx as the j-th of face f, whose list starts at s0 (where:
 * line or byte offset, for the message) */
static inline gt_status face_index(body *b, size_t f, size_t s0, long long j, long long idx,
                                   long long where, bool is_line)
{
    size_t at = s0 + (size_t)j;
    if (at >= b->icap) GT_TRY(grow_face(b, f + 1, at + 1));
    if (idx < 0 || (unsigned long long)idx >= b->nvert_hdr) {
        if (is_line)
            return gt_fail_at(GT_ERR_DATA, b->fn, (long)where,
                              "face %zu: vertex index %lld out of range [0, %llu)", f, idx, b->nvert_hdr);
        return gt_fail_at_byte(GT_ERR_DATA, b->fn, where,
                               "face %zu: vertex index %lld out of range [0, %llu)", f, idx, b->nvert_hdr);
    }
    b->m->face_idx[at] = (int32_t)idx;
    return GT_OK;
}

/* face f complete with cnt indices from s0 */
static inline void face_end(body *b, size_t f, size_t s0, long long cnt)
{
    b->m->face_start[f + 1] = (uint32_t)(s0 + (size_t)cnt);
    b->m->nface = f + 1;
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
            /* several threads pread() a regular file's large blocks (from the
             * page cache one thread copies only a few GB/s) */
            size_t got = gt_rd_bytes_bulk(r, out, want * rs);
            if (got < want * rs) {
                st = truncated(b, e, done + got / rs);
                break;
            }
            if (b->swap) {
                for (size_t i = 0, n = want * (size_t)np; i < n; i++) {
                    uint32_t w;
                    memcpy(&w, out + i, 4);
                    w = ply_bs32(w);
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
                const pprop *p = &e->props[i];
                if (b->rel && b->rel[p->col])
                    for (size_t r = 0; r < want; r++)
                        put_vertex(b, done + r, p->col, ply_load_d(tmp + r * rs + off, p->type, b->swap));
                else
                    ply_convert_col(tmp + off, rs, want, p->type, b->swap, out + p->col, np);
                off += ply_tsize[p->type];
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
    for (unsigned long long rec = 0; rec < e->count; rec++) {
        if (is_vertex) GT_TRY(grow_vert(b, (size_t)rec + 1));
        for (int i = 0; i < e->nprops; i++) {
            const pprop *p = &e->props[i];
            if (!p->is_list) {
                size_t sz = ply_tsize[p->type];
                if (gt_rd_fill(r, sz) < sz) return truncated(b, e, rec);
                if (is_vertex) put_vertex(b, (size_t)rec, p->col, ply_load_d(r->buf + r->pos, p->type, b->swap));
                r->pos += sz;
                continue;
            }
            size_t csz = ply_tsize[p->ctype], isz = ply_tsize[p->type];
            if (gt_rd_fill(r, csz) < csz) return truncated(b, e, rec);
            long long at = gt_rd_offset(r);
            long long cnt = ply_load_i(r->buf + r->pos, p->ctype, b->swap);
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
                    long long idx = ply_load_i(r->buf + r->pos, p->type, b->swap);
                    GT_TRY(face_index(b, f, s0, j, idx, gt_rd_offset(r), false));
                    r->pos += isz;
                }
                face_end(b, f, s0, cnt);
            } else {
                if (!skip_bytes(r, (unsigned long long)cnt * isz)) return truncated(b, e, rec);
            }
        }
        if (is_vertex) m->nvert = (size_t)rec + 1;
    }
    return GT_OK;
}

/* ----------------------------------------------------------------- ascii */

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
    for (unsigned long long rec = 0; rec < e->count; rec++) {
        char *line;
        GT_TRY(gt_rd_line(r, &line, NULL));
        if (!line) return truncated(b, e, rec);
        long ln = r->line;
        if (is_vertex) GT_TRY(grow_vert(b, (size_t)rec + 1));
        char *s = line;
        for (int i = 0; i < e->nprops; i++) {
            const pprop *p = &e->props[i];
            char *t = ply_next_tok(&s);
            if (!t)
                return gt_fail_at(GT_ERR_DATA, b->fn, ln, "element '%s' record %llu: missing value for '%s'",
                                  e->name, rec, p->name);
            double d;
            long long iv = 0;
            if (!p->is_list) {
                /* a relative column's text is read in double whatever its
                 * declared type: the digits are there */
                const bool rel = is_vertex && b->rel && b->rel[p->col] && p->type == GT_PLY_FLOAT32;
                if (!ascii_val(t, rel ? GT_PLY_FLOAT64 : p->type, &d, NULL))
                    return gt_fail_at(GT_ERR_DATA, b->fn, ln, "bad %s value '%.40s' for property '%s'",
                                      gt_ply_type_name(p->type), t, p->name);
                if (is_vertex) put_vertex(b, (size_t)rec, p->col, d);
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
                t = ply_next_tok(&s);
                if (!t)
                    return gt_fail_at(GT_ERR_DATA, b->fn, ln, "list '%s' has fewer than %lld values", p->name, cnt);
                if (!ascii_val(t, p->type, &d, &iv))
                    return gt_fail_at(GT_ERR_DATA, b->fn, ln, "bad %s value '%.40s' in list '%s'",
                                      gt_ply_type_name(p->type), t, p->name);
                if (store) GT_TRY(face_index(b, f, s0, j, iv, ln, true));
            }
            if (store) face_end(b, f, s0, cnt);
        }
        if (ply_next_tok(&s))
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
            else rec += p->is_list ? ply_tsize[p->ctype] : ply_tsize[p->type];
        }
        unsigned long long t;
        if (__builtin_mul_overflow(rec, e->count, &t) || __builtin_add_overflow(total, t, &total)) return false;
    }
    if (h->fmt == GT_PLY_ASCII && total > 0) total--; /* last newline may be missing */
    *out = total;
    return true;
}

/* b->rel and m->origin for the vertex columns named in rel[0..nrel-1] whose
 * values carry more than float32's 24 bits: float64 and 32-bit integers,
 * and in ascii also float32 (its text may hold more digits) */
static gt_status rel_columns(body *b, const phdr *h, const char *const *rel, int nrel)
{
    gt_ply_mesh *m = b->m;
    if (nrel <= 0 || h->vi < 0 || m->nprops == 0) return GT_OK;
    const pelem *v = &h->elem[h->vi];
    bool any = false;
    b->rel = calloc((size_t)m->nprops, sizeof *b->rel);
    m->origin = calloc((size_t)m->nprops, sizeof *m->origin);
    if (!b->rel || !m->origin) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    for (int i = 0; i < v->nprops; i++) {
        const pprop *p = &v->props[i];
        if (p->is_list) continue;
        const bool wide = p->type == GT_PLY_FLOAT64 || p->type == GT_PLY_INT32 || p->type == GT_PLY_UINT32 ||
                          (h->fmt == GT_PLY_ASCII && p->type == GT_PLY_FLOAT32);
        for (int j = 0; j < nrel && wide; j++)
            if (strcmp(p->name, rel[j]) == 0) b->rel[p->col] = any = true;
    }
    if (!any) {
        free(b->rel);
        b->rel = NULL;
    }
    return GT_OK;
}

static gt_status read_body(gt_reader *r, phdr *h, gt_ply_mesh *m, const char *const *rel, int nrel)
{
    body b;
    memset(&b, 0, sizeof b);
    b.r = r;
    b.fn = r->name;
    b.h = h;
    b.m = m;
    b.swap = (h->fmt == GT_PLY_BINARY_BE) == ply_host_le();
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
    gt_status st = rel_columns(&b, h, rel, nrel);

    for (int i = 0; st == GT_OK && i < h->nelem; i++) {
        pelem *e = &h->elem[i];
        if (h->fmt == GT_PLY_ASCII) st = ascii_elem(&b, i);
        else if (e->has_list) st = bin_var(&b, i);
        else st = bin_fixed(&b, i);
    }
    free(b.rel);
    GT_TRY(st);
    /* no origin away from 0: the mesh is as gt_ply_read gives it */
    bool moved = false;
    for (int c = 0; m->origin && c < m->nprops; c++) moved |= m->origin[c] != 0.0;
    if (!moved) {
        free(m->origin);
        m->origin = NULL;
    }
    if (h->fmt == GT_PLY_ASCII) {
        char *line;
        size_t len;
        for (;;) {
            GT_TRY(gt_rd_line(r, &line, &len));
            if (!line) break;
            char *s = line;
            if (ply_next_tok(&s))
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

gt_status gt_ply_read_reader(gt_reader *r, gt_ply_mesh *m, const char *const *rel, int nrel)
{
    memset(m, 0, sizeof *m);
    phdr *h = calloc(1, sizeof *h);
    if (!h) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    gt_status st = ply_read_header(r, h, m);
    if (st == GT_OK) st = read_body(r, h, m, rel, nrel);
    ply_hdr_free(h);
    free(h);
    if (st != GT_OK) gt_ply_free(m);
    return st;
}

gt_status gt_ply_read(const char *path, gt_ply_mesh *m)
{
    memset(m, 0, sizeof *m);
    gt_reader r;
    GT_TRY(gt_rd_open(&r, path));
    gt_status st = gt_ply_read_reader(&r, m, NULL, 0);
    gt_rd_close(&r);
    return st;
}
