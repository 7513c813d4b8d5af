/* chi volume as NRRD through lib/io's writer (float32 raw, space directions,
 * origin, key "iso:="), atomically. */
#include <stdio.h>
#include <string.h>

#include "io/volume.h"
#include "poisson/poisson.h"

gt_status gt_pr_write_volume(const char *path, const gt_pr_mesh *m)
{
    if (!m->vol || m->vol_n <= 0) return gt_fail(GT_ERR_RUNTIME, "no volume to write");
    gt_volume v;
    memset(&v, 0, sizeof v);
    for (int a = 0; a < 3; a++) {
        v.info.dims[a] = m->vol_n;
        v.info.dir[a][a] = m->vol_spacing;
        v.info.origin[a] = m->origin[a] + m->vol_origin[a];
    }
    v.info.type = GT_VOL_FLOAT32;
    v.info.has_iso = true;
    v.info.iso = m->iso;
    v.data = m->vol;
    char kv[64];
    snprintf(kv, sizeof kv, "iso:=%.9g", m->iso);
    const char *kvs[1] = {kv};
    return gt_nrrd_write(path, &v, kvs, 1);
}
