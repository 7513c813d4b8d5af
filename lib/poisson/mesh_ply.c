/* The reconstructed mesh as PLY (gt_pr_write_mesh_ply, poisson.h): a host
 * mesh with its density and colour columns through gt_ply_write_trimesh; a
 * mesh the CUDA path left on the device (gt_pr_mesh.dev) through the
 * piecewise writer fed by double-buffered pinned downloads
 * (io/ply_gpu.h over common/gpu_fetch.h), so that piece k+1 crosses the
 * bus while piece k is formatted and written. gt_pr_mesh_to_host brings
 * such a mesh over whole instead. */
#include <stdlib.h>
#include <string.h>

#include "gt_config.h"
#include "io/ply.h"
#include "poisson/poisson.h"
#if GT_HAVE_CUDA
#include "io/ply_gpu.h"
#include "common/gpu_runtime.h"
#include "kernels/poisson/pr_gpu.h"
#endif

/* a mesh relative to an origin away from 0 (points far from 0 given as
 * doubles): written with the origin added, x y z as float64 */
static bool mesh_moved(const gt_pr_mesh *m)
{
    return m->origin[0] != 0.0 || m->origin[1] != 0.0 || m->origin[2] != 0.0;
}

#if GT_HAVE_CUDA
static gt_status write_from_device(const char *path, const gt_pr_mesh *m, double *wait_ms)
{
    const float *xyz;
    const int32_t *tri;
    gt_pr_dev_mesh_get(m->dev, &xyz, &tri);
    gt_cu_fetch *f = NULL;
    gt_ply_trisrc src;
    /* the extraction synchronised the device: nothing to wait for */
    gt_status st = gt_ply_trisrc_gpu(xyz, NULL, m->nvert, tri, m->ntri, NULL, &f, &src);
    if (st == GT_OK) {
        if (mesh_moved(m)) src.origin = m->origin, src.xyz_double = true;
        st = gt_ply_write_trisrc(path, &src, GT_PLY_BINARY_LE);
        if (wait_ms) *wait_ms = gt_cu_fetch_wait_ms(f);
    }
    gt_cu_fetch_destroy(f);
    return st;
}
#endif

gt_status gt_pr_mesh_to_host(gt_pr_mesh *m)
{
    if (!m->dev) return GT_OK;
#if GT_HAVE_CUDA
    const float *xyz;
    const int32_t *tri;
    gt_pr_dev_mesh_get(m->dev, &xyz, &tri);
    float *hx = malloc(m->nvert * 3 * sizeof(float) + 4);
    int32_t *ht = malloc(m->ntri * 3 * sizeof(int32_t) + 4);
    gt_status st = hx && ht ? GT_OK : gt_fail(GT_ERR_RUNTIME, "out of memory (a mesh of %zu vertices)", m->nvert);
    if (st == GT_OK) st = gt_cu_memcpy_d2h(hx, xyz, m->nvert * 3 * sizeof(float), NULL);
    if (st == GT_OK) st = gt_cu_memcpy_d2h(ht, tri, m->ntri * 3 * sizeof(int32_t), NULL);
    if (st != GT_OK) {
        free(hx);
        free(ht);
        return st;
    }
    gt_pr_dev_mesh_free(m->dev);
    m->dev = NULL;
    free(m->xyz);
    free(m->tri);
    m->xyz = hx;
    m->tri = ht;
    return GT_OK;
#else
    return gt_fail(GT_ERR_GPU, "built without CUDA");
#endif
}

gt_status gt_pr_write_mesh_ply(const char *path, const gt_pr_params *p, const gt_pr_mesh *mesh, double *download_wait_ms)
{
    if (download_wait_ms) *download_wait_ms = 0;
    if (mesh->dev) {
#if GT_HAVE_CUDA
        return write_from_device(path, mesh, download_wait_ms);
#else
        return gt_fail(GT_ERR_GPU, "built without CUDA");
#endif
    }
    const char *extra_names[4];
    int nextra = 0;
    float *extra = NULL;
    int want_rgb = p->want_colors && mesh->rgb;
    if (p->want_density && mesh->density) extra_names[nextra++] = "density";
    if (want_rgb) { extra_names[nextra++] = "red"; extra_names[nextra++] = "green"; extra_names[nextra++] = "blue"; }
    if (nextra) {
        extra = malloc(mesh->nvert * nextra * sizeof(float) + 4);
        if (!extra) return gt_fail(GT_ERR_RUNTIME, "out of memory");
        for (size_t v = 0; v < mesh->nvert; v++) {
            int k = 0;
            if (p->want_density && mesh->density) extra[v * nextra + k++] = mesh->density[v];
            if (want_rgb)
                for (int a = 0; a < 3; a++) extra[v * nextra + k++] = mesh->rgb[3 * v + a];
        }
    }
    gt_status st = gt_ply_write_trimesh_at(path, mesh_moved(mesh) ? mesh->origin : NULL, mesh->nvert,
                                           mesh->xyz, NULL, nextra, extra_names, extra, mesh->ntri, mesh->tri,
                                           GT_PLY_BINARY_LE);
    free(extra);
    return st;
}
