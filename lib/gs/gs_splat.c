/* The compact .splat format: 32 bytes per Gaussian (position f32x3, linear
 * scale f32x3, RGBA u8x4 with colour = SH_C0*dc + 0.5 and alpha = opacity,
 * rotation u8x4 as q*128+128 in w x y z order), little endian. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/output.h"
#include "gs/gs.h"
#include "gs/gs_math.h"

gt_status gt_gs_scene_read_splat(const char *path, gt_gs_scene *s)
{
    memset(s, 0, sizeof *s);
    const char *name = gt_in_name(path);
    unsigned char *buf;
    size_t len;
    GT_TRY(gt_in_read_all(path, &buf, &len));
    if (len % 32 != 0) {
        free(buf);
        return gt_fail_at_byte(GT_ERR_DATA, name, (long long)(len - len % 32),
                               "not a .splat file: size %zu is not a multiple of 32 bytes", len);
    }
    size_t n = len / 32;
    gt_status st = gt_gs_scene_alloc(s, n, 0);
    if (st != GT_OK) {
        free(buf);
        return st;
    }
    for (size_t i = 0; i < n; i++) {
        const unsigned char *r = buf + 32 * i;
        float v[6];
        memcpy(v, r, sizeof v); /* little-endian float32, as written by the format's tools */
        for (int k = 0; k < 3; k++) {
            s->pos[3 * i + k] = v[k];
            s->scale[3 * i + k] = v[3 + k];
        }
        /* colour byte = (SH_C0 * dc + 0.5) * 255 */
        for (int c = 0; c < 3; c++) s->sh[3 * i + c] = ((float)r[24 + c] / 255.0f - 0.5f) / GT_GS_SH_C0;
        s->opacity[i] = (float)r[27] / 255.0f;
        float *q = s->rot + 4 * i;
        for (int k = 0; k < 4; k++) q[k] = ((float)r[28 + k] - 128.0f) / 128.0f;
        gs_quat_normalize(q);
    }
    free(buf);
    return GT_OK;
}

