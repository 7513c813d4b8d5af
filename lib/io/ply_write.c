/* PLY writing (see ply.h): the header, then the vertex rows (straight from
 * memory when they are all float32 in the host's order, else converted in
 * chunks) and the faces as uchar-counted int lists; ascii prints each value.
 * Output is atomic (common/output.h). Triangle meshes (gt_ply_write_trimesh)
 * go through the parallel piecewise writer of ply_write_tri.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/output.h"
#include "io/numtext.h"
#include "io/ply_internal.h"

static void print_val(FILE *f, gt_ply_type t, float x)
{
    switch (t) {
    case GT_PLY_FLOAT32: /* the shortest text that reads back as the same value */
    case GT_PLY_FLOAT64: {
        char b[GT_FMT_MAX];
        if (t == GT_PLY_FLOAT32) gt_fmt_float(b, x);
        else gt_fmt_double(b, (double)x);
        fputs(b, f);
        break;
    }
    default: {
        unsigned char b[8];
        ply_store_val(b, t, x, false);
        fprintf(f, "%.0f", ply_load_d(b, t, false));
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
    for (int i = 0; i < m->nprops; i++) fprintf(fp, "property %s %s\n", gt_ply_type_name(m->props[i].type), m->props[i].name);
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
    bool swap = (fmt == GT_PLY_BINARY_BE) == ply_host_le();
    bool direct = !swap && ply_host_le();
    size_t rs = 0;
    for (size_t i = 0; i < np; i++) {
        rs += ply_tsize[m->props[i].type];
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
                    ply_store_val(p, m->props[i].type, m->vdata[v * np + i], swap);
                    p += ply_tsize[m->props[i].type];
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
                if (swap) v = ply_bs32(v);
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

/* a mesh already in host memory: the pieces point into its arrays */
typedef struct host_tris {
    const float *xyz, *nrm, *extra;
    int nextra;
    const int32_t *tris;
} host_tris;

static gt_status host_verts(void *ctx, size_t v0, size_t n, const float **xyz, const float **nrm,
                            const float **extra)
{
    const host_tris *h = ctx;
    (void)n;
    *xyz = h->xyz + 3 * v0;
    *nrm = h->nrm ? h->nrm + 3 * v0 : NULL;
    *extra = h->nextra ? h->extra + (size_t)h->nextra * v0 : NULL;
    return GT_OK;
}

static gt_status host_tri(void *ctx, size_t t0, size_t n, const int32_t **tris)
{
    const host_tris *h = ctx;
    (void)n;
    *tris = h->tris + 3 * t0;
    return GT_OK;
}

gt_status gt_ply_write_trimesh_at(const char *path, const double *origin, size_t nvert, const float *xyz,
                                  const float *normals, int nextra, const char *const *extra_names,
                                  const float *extra, size_t ntri, const int32_t *tris, gt_ply_format fmt)
{
    host_tris h = {xyz, normals, extra, nextra, tris};
    gt_ply_trisrc src = {.nvert = nvert, .ntri = ntri, .normals = normals != NULL, .nextra = nextra,
                         .extra_names = extra_names, .origin = origin, .xyz_double = origin != NULL,
                         .verts = host_verts, .tris = host_tri, .ctx = &h};
    return gt_ply_write_trisrc(path, &src, fmt);
}

gt_status gt_ply_write_trimesh(const char *path, size_t nvert, const float *xyz, const float *normals, int nextra,
                               const char *const *extra_names, const float *extra, size_t ntri,
                               const int32_t *tris, gt_ply_format fmt)
{
    return gt_ply_write_trimesh_at(path, NULL, nvert, xyz, normals, nextra, extra_names, extra, ntri, tris, fmt);
}
