/* PLY header: parsed line by line through the streaming reader into the
 * element and property lists (phdr, ply_internal.h) that the body decoder
 * (ply_read.c) walks; comments are kept in the mesh. Errors name the line. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/ply_internal.h"

#define MAX_HEADER_LINES 100000

/* split a header line into at most maxtok blank-separated tokens; more
 * gives maxtok + 1 */
static int tokenize(char *s, char **tok, int maxtok)
{
    int n = 0;
    for (char *t; (t = ply_next_tok(&s));) {
        if (n == maxtok) return maxtok + 1;
        tok[n++] = t;
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

void ply_hdr_free(phdr *h)
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

gt_status ply_read_header(gt_reader *r, phdr *h, gt_ply_mesh *m)
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
            if (h->nelem == PLY_MAX_ELEMS) return gt_fail_at(GT_ERR_DATA, fn, ln, "more than %d elements", PLY_MAX_ELEMS);
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
                if (!ply_parse_type(tok[2], &p.ctype))
                    return gt_fail_at(GT_ERR_DATA, fn, ln, "unknown PLY type '%s'", tok[2]);
                if (p.ctype == GT_PLY_FLOAT32 || p.ctype == GT_PLY_FLOAT64)
                    return gt_fail_at(GT_ERR_DATA, fn, ln, "list count type must be an integer type, not '%s'", tok[2]);
                if (!ply_parse_type(tok[3], &p.type))
                    return gt_fail_at(GT_ERR_DATA, fn, ln, "unknown PLY type '%s'", tok[3]);
                p.is_list = true;
                name = tok[4];
                e->has_list = true;
            } else {
                if (nt != 3) return gt_fail_at(GT_ERR_DATA, fn, ln, "expected 'property <type> <name>'");
                if (!ply_parse_type(tok[1], &p.type))
                    return gt_fail_at(GT_ERR_DATA, fn, ln, "unknown PLY type '%s'", tok[1]);
                name = tok[2];
            }
            if (strlen(name) >= 64) return gt_fail_at(GT_ERR_DATA, fn, ln, "property name too long");
            for (int i = 0; i < e->nprops; i++)
                if (strcmp(e->props[i].name, name) == 0)
                    return gt_fail_at(GT_ERR_DATA, fn, ln, "property '%s' defined twice in element '%s'", name, e->name);
            if (e->nprops == PLY_MAX_PROPS)
                return gt_fail_at(GT_ERR_DATA, fn, ln, "more than %d properties in element '%s'", PLY_MAX_PROPS, e->name);
            strcpy(p.name, name);
            pprop *np = realloc(e->props, (size_t)(e->nprops + 1) * sizeof *np);
            if (!np) return gt_fail(GT_ERR_RUNTIME, "out of memory (PLY header)");
            e->props = np;
            e->props[e->nprops++] = p;
            if (!p.is_list) e->recsize += ply_tsize[p.type];
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
                                  gt_ply_type_name(f->props[pick].type));
            f->props[pick].col = 1;
        }
    }
    return GT_OK;
}
