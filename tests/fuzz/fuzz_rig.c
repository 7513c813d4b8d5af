/* libFuzzer target: yuvstitch rig file reader (lib/stitch/rig.c), through a
 * memfd so that the path-based loader (mask path resolution included) runs
 * as it does on a user's file. A rig the reader accepts must keep the
 * promises stitch.h makes (sizes, camera count, finite H and inverse, gain
 * range); a broken promise aborts, so the fuzzer reports it. */
#include "fuzz_common.h"

#include <math.h>
#include <stdlib.h>

#include "stitch/stitch.h"

#define PROMISE(c) ((c) ? (void)0 : fuzz_broken_promise(#c))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfd(data, size, path, sizeof path);
    if (fd < 0) return 0;
    gt_stitch_rig rig;
    if (gt_stitch_rig_load(path, &rig) == GT_OK) {
        PROMISE(rig.pano_w >= 1 && rig.pano_w <= 65536 && rig.pano_h >= 1 && rig.pano_h <= 65536);
        PROMISE(rig.ncam >= 1 && rig.ncam <= GT_STITCH_MAX_CAMS);
        PROMISE(rig.path && !strcmp(rig.path, path));
        for (int i = 0; i < rig.ncam; i++) {
            const gt_stitch_cam *c = &rig.cam[i];
            double hm[9];
            gt_stitch_h_macro(c->H, hm);
            for (int k = 0; k < 9; k++) PROMISE(isfinite(c->H[k]) && isfinite(c->Hinv[k]) && isfinite(hm[k]));
            PROMISE(c->gain > 0 && c->gain <= 100);
            PROMISE(c->line >= 1);
            PROMISE(!c->mask_path || c->mask_path[0]);
        }
        gt_stitch_rig_free(&rig);
    }
    close(fd);
    return 0;
}
