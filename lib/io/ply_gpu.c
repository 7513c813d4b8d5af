/* A device mesh as a gt_ply_trisrc (ply_gpu.h) */
#include "io/ply_gpu.h"

#include <stdlib.h>
#include <string.h>

static gt_status mesh_verts(void *ctx, size_t v0, size_t n, const float **xyz, const float **nrm, const float **extra)
{
    void *h[GT_CU_FETCH_MAX_ARRAYS] = {NULL, NULL, NULL};
    GT_TRY(gt_cu_fetch_get((gt_cu_fetch *)ctx, 0, v0, n, h));
    *xyz = (const float *)h[0];
    *nrm = (const float *)h[1];
    *extra = NULL;
    return GT_OK;
}

static gt_status mesh_tris(void *ctx, size_t t0, size_t n, const int32_t **tris)
{
    void *h[GT_CU_FETCH_MAX_ARRAYS] = {NULL, NULL, NULL};
    GT_TRY(gt_cu_fetch_get((gt_cu_fetch *)ctx, 1, t0, n, h));
    *tris = (const int32_t *)h[0];
    return GT_OK;
}

gt_status gt_ply_trisrc_gpu(const float *d_xyz, const float *d_nrm, size_t nvert, const int32_t *d_tris,
                            size_t ntri, void *after, gt_cu_fetch **f, gt_ply_trisrc *src)
{
    const char *e = getenv("GT_PLY_PIECE_ROWS");
    const long long env_rows = e ? atoll(e) : 0;
    const size_t rows = env_rows > 0 ? (size_t)env_rows : (size_t)1 << 20; /* 12 MB per array and piece */
    gt_cu_fetch_phase ph[2];
    memset(ph, 0, sizeof ph);
    ph[0].narr = 2;
    ph[0].d[0] = d_xyz;
    ph[0].d[1] = d_nrm;
    ph[0].row_bytes[0] = ph[0].row_bytes[1] = 12;
    ph[0].rows = nvert;
    ph[1].narr = 1;
    ph[1].d[0] = d_tris;
    ph[1].row_bytes[0] = 12;
    ph[1].rows = ntri;
    GT_TRY(gt_cu_fetch_create(ph, 2, rows, after, f));
    memset(src, 0, sizeof *src);
    src->nvert = nvert;
    src->ntri = ntri;
    src->normals = d_nrm != NULL;
    src->chunk = rows;
    src->verts = mesh_verts;
    src->tris = mesh_tris;
    src->ctx = *f;
    return GT_OK;
}
