/* 3DGS scene files: the standard PLY of the reference training code (the
 * compact .splat format is gs_splat.c), and the dispatch by extension. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/output.h"
#include "gs/gs.h"
#include "gs/gs_math.h"
#include "io/ply.h"


gt_status gt_gs_scene_read_ply(const char *path, gt_gs_scene *s)
{
    memset(s, 0, sizeof *s);
    gt_ply_mesh m;
    memset(&m, 0, sizeof m);
    GT_TRY(gt_ply_read(path, &m));
    const char *name = gt_in_name(path);
    /* the fields every 3DGS scene has (normals are written but unused) */
    static const char *const base[] = {"x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity",
                                       "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2",
                                       "rot_3"};
    int nb = (int)(sizeof base / sizeof base[0]);
    int missing = 0;
    char miss[512] = "";
    for (int k = 0; k < nb; k++)
        if (gt_ply_find(&m, base[k]) < 0) {
            if (missing < 8) {
                strncat(miss, missing ? ", " : "", sizeof miss - strlen(miss) - 1);
                strncat(miss, base[k], sizeof miss - strlen(miss) - 1);
            }
            missing++;
        }
    if (missing) {
        gt_ply_free(&m);
        return gt_fail_at(GT_ERR_DATA, name, 0,
                          "not a 3D Gaussian Splatting scene: vertex properties missing: %s%s", miss,
                          missing > 8 ? ", ..." : "");
    }
    int nrest = 0;
    while (nrest < 45) {
        char nm[32];
        snprintf(nm, sizeof nm, "f_rest_%d", nrest);
        if (gt_ply_find(&m, nm) < 0) break;
        nrest++;
    }
    int deg;
    switch (nrest) {
    case 0: deg = 0; break;
    case 9: deg = 1; break;
    case 24: deg = 2; break;
    case 45: deg = 3; break;
    default:
        gt_ply_free(&m);
        return gt_fail_at(GT_ERR_DATA, name, 0,
                          "%d f_rest_* properties: a 3DGS scene has 0, 9, 24 or 45 (SH degree 0-3)",
                          nrest);
    }
    gt_status st = gt_gs_scene_alloc(s, m.nvert, deg);
    if (st != GT_OK) {
        gt_ply_free(&m);
        return st;
    }
    int col[14], rest[45];
    for (int k = 0; k < nb; k++) col[k] = gt_ply_find(&m, base[k]);
    for (int k = 0; k < nrest; k++) {
        char nm[32];
        snprintf(nm, sizeof nm, "f_rest_%d", k);
        rest[k] = gt_ply_find(&m, nm);
    }
    int per = nrest / 3; /* coefficients 1..K-1 per channel; stored channel-major */
    /* one pass over the rows, in parallel: the activations (sigmoid, exp,
     * normalisation) and the SH transposition cost more than the read */
#pragma omp parallel for schedule(static)
    for (long long ii = 0; ii < (long long)m.nvert; ii++) {
        const size_t i = (size_t)ii;
        const float *v = m.vdata + i * (size_t)m.nprops;
        float *pos = s->pos + 3 * i, *sc = s->scale + 3 * i, *q = s->rot + 4 * i;
        float *sh = s->sh + i * (size_t)s->sh_k * 3;
        for (int k = 0; k < 3; k++) pos[k] = v[col[k]];
        for (int c = 0; c < 3; c++) sh[c] = v[col[3 + c]];
        for (int c = 0; c < 3; c++)
            for (int j = 0; j < per; j++) sh[(1 + j) * 3 + c] = v[rest[c * per + j]];
        s->opacity[i] = gs_sigmoid(v[col[6]]);
        for (int k = 0; k < 3; k++) sc[k] = expf(v[col[7 + k]]);
        for (int k = 0; k < 4; k++) q[k] = v[col[10 + k]];
        gs_quat_normalize(q);
        if (!isfinite(pos[0]) || !isfinite(pos[1]) || !isfinite(pos[2]) || !isfinite(sc[0]) ||
            !isfinite(sc[1]) || !isfinite(sc[2])) {
            /* non-finite Gaussians cannot be drawn: make them invisible */
            s->opacity[i] = 0.0f;
            for (int k = 0; k < 3; k++) {
                pos[k] = 0.0f;
                sc[k] = 0.0f;
            }
        }
    }
    gt_ply_free(&m);
    return GT_OK;
}

gt_status gt_gs_scene_read(const char *path, gt_gs_scene *s)
{
    size_t l = strlen(path);
    if (l >= 6 && strcmp(path + l - 6, ".splat") == 0) return gt_gs_scene_read_splat(path, s);
    return gt_gs_scene_read_ply(path, s);
}
