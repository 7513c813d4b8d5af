/* libFuzzer target: gsrender's cameras.json reader (lib/gs/gs_cameras.c),
 * through a memfd as a user's file would be read. Cameras the reader
 * accepts must be usable as they are: sizes in 1..GT_GS_MAX_SIZE, positive
 * finite focal lengths and principal point, finite pose; a broken promise
 * aborts. */
#include "fuzz_common.h"

#include <math.h>
#include <stdlib.h>

#include "gs/gs.h"

#define PROMISE(c) ((c) ? (void)0 : fuzz_broken_promise(#c))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfd(data, size, path, sizeof path);
    if (fd < 0) return 0;
    gt_gs_camera *cams;
    int n;
    if (gt_gs_cameras_read(path, &cams, &n) == GT_OK) {
        PROMISE(n >= 0 && (n == 0 || cams));
        for (int i = 0; i < n; i++) {
            const gt_gs_camera *c = &cams[i];
            PROMISE(c->width >= 1 && c->width <= GT_GS_MAX_SIZE);
            PROMISE(c->height >= 1 && c->height <= GT_GS_MAX_SIZE);
            PROMISE(isfinite(c->fx) && c->fx > 0 && isfinite(c->fy) && c->fy > 0);
            PROMISE(isfinite(c->cx) && isfinite(c->cy));
            for (int k = 0; k < 9; k++) PROMISE(isfinite(c->R[k]));
            for (int k = 0; k < 3; k++) PROMISE(isfinite(c->t[k]) && isfinite(c->campos[k]));
            PROMISE(memchr(c->name, 0, sizeof c->name));
        }
        free(cams);
    }
    close(fd);
    return 0;
}
