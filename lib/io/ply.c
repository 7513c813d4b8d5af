/* The PLY mesh in memory (see ply.h): allocation, release, looking up and
 * gathering vertex properties. Reading is ply_header.c + ply_read.c,
 * writing ply_write.c, property types ply_types.c. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/output.h"
#include "io/ply_internal.h"

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
    if (nprops < 0 || nprops > PLY_MAX_PROPS) return gt_fail(GT_ERR_USAGE, "bad PLY property count %d", nprops);
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
    free(m->origin);
    for (int i = 0; i < m->ncomments; i++) free(m->comments[i]);
    free(m->comments);
    memset(m, 0, sizeof *m);
}
