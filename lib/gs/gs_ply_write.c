/* Writing a scene's raw parameters as the standard 3DGS PLY of the
 * reference training (scene/gaussian_model.py save_ply): binary little
 * endian floats x y z nx ny nz f_dc_0..2 f_rest_0.. opacity scale_0..2
 * rot_0..3, f_rest channel-major (all of red's coefficients 1..K-1, then
 * green's, then blue's), normals zero. gs_ply.c reads it back. */
#include <stdio.h>
#include <stdlib.h>

#include "gs/gs_fit.h"
#include "io/ply.h"

gt_status gt_gs_raw_write_ply(const char *path, const gt_gs_raw *r)
{
    int per = r->sh_k - 1, np = 6 + 3 + 3 * per + 1 + 3 + 4;
    char (*names)[24] = calloc((size_t)np, sizeof *names);
    const char **nm = calloc((size_t)np, sizeof *nm);
    gt_ply_type *types = calloc((size_t)np, sizeof *types);
    if (!names || !nm || !types) {
        free(names), free(nm), free(types);
        return gt_fail(GT_ERR_RUNTIME, "out of memory (PLY header)");
    }
    int k = 0;
    static const char *const head[] = {"x", "y", "z", "nx", "ny", "nz", "f_dc_0", "f_dc_1", "f_dc_2"};
    for (int q = 0; q < 9; q++) snprintf(names[k++], 24, "%s", head[q]);
    for (int q = 0; q < 3 * per; q++) snprintf(names[k++], 24, "f_rest_%d", q);
    snprintf(names[k++], 24, "opacity");
    for (int q = 0; q < 3; q++) snprintf(names[k++], 24, "scale_%d", q);
    for (int q = 0; q < 4; q++) snprintf(names[k++], 24, "rot_%d", q);
    for (int q = 0; q < np; q++) nm[q] = names[q], types[q] = GT_PLY_FLOAT32;
    gt_ply_mesh m;
    gt_status st = gt_ply_mesh_alloc(&m, r->n, np, nm, types);
    free(names), free(nm), free(types);
    if (st != GT_OK) return st;
    for (size_t i = 0; i < r->n; i++) {
        float *v = m.vdata + i * (size_t)np;
        const float *sh = r->sh + i * (size_t)r->sh_k * 3;
        int c = 0;
        for (int q = 0; q < 3; q++) v[c++] = r->pos[3 * i + q];
        for (int q = 0; q < 3; q++) v[c++] = 0.0f;
        for (int q = 0; q < 3; q++) v[c++] = sh[q];
        for (int ch = 0; ch < 3; ch++)
            for (int j = 0; j < per; j++) v[c++] = sh[(1 + j) * 3 + ch];
        v[c++] = r->logit_opacity[i];
        for (int q = 0; q < 3; q++) v[c++] = r->log_scale[3 * i + q];
        for (int q = 0; q < 4; q++) v[c++] = r->rot[4 * i + q];
    }
    st = gt_ply_write(path, &m, GT_PLY_BINARY_LE);
    gt_ply_free(&m);
    return st;
}
