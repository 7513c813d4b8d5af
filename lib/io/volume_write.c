/* Volumes, writing: NRRD0004 with raw encoding (see volume.h), atomic. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/output.h"
#include "io/volume_internal.h"

gt_status gt_nrrd_write(const char *path, const gt_volume *v, const char *const *keyvals, int nkv)
{
    const gt_volume_info *in = &v->info;
    if ((unsigned)in->type > GT_VOL_FLOAT64) return gt_fail(GT_ERR_USAGE, "bad voxel type");
    size_t n = gt_vol_vsize[in->type];
    for (int a = 0; a < 3; a++) {
        if (in->dims[a] <= 0 || !gt_mul_size(n, (size_t)in->dims[a], &n))
            return gt_fail(GT_ERR_USAGE, "bad volume dims");
    }
    for (int i = 0; i < nkv; i++)
        if (!strstr(keyvals[i], ":=") || strchr(keyvals[i], '\n'))
            return gt_fail(GT_ERR_USAGE, "NRRD key/value '%s' must be 'key:=value' on one line", keyvals[i]);
    gt_out o;
    GT_TRY(gt_out_open(&o, path));
    FILE *f = o.fp;
    fprintf(f, "NRRD0004\n# written by gputools\ntype: %s\ndimension: 3\nspace dimension: 3\n", gt_vol_nrrdname[in->type]);
    fprintf(f, "sizes: %lld %lld %lld\n", (long long)in->dims[0], (long long)in->dims[1], (long long)in->dims[2]);
    fprintf(f, "space directions:");
    for (int a = 0; a < 3; a++) fprintf(f, " (%.17g,%.17g,%.17g)", in->dir[a][0], in->dir[a][1], in->dir[a][2]);
    fprintf(f, "\nspace origin: (%.17g,%.17g,%.17g)\n", in->origin[0], in->origin[1], in->origin[2]);
    fprintf(f, "kinds: domain domain domain\n");
    if (gt_vol_vsize[in->type] > 1) fprintf(f, "endian: %s\n", gt_vol_host_le() ? "little" : "big");
    fprintf(f, "encoding: raw\n");
    for (int i = 0; i < nkv; i++) fprintf(f, "%s\n", keyvals[i]);
    fputc('\n', f);
    if (fwrite(v->data, 1, n, f) != n) {
        gt_out_abort(&o);
        return gt_fail(GT_ERR_RUNTIME, "write error on '%s': %s", path, strerror(errno));
    }
    return gt_out_commit(&o);
}
