/* libFuzzer target: stpsfit's parameter file reader (lib/tps/params.c),
 * through a memfd as a user's file would be read. A spline the reader
 * accepts must be one stpsfit could have written: a known kernel, finite
 * lambda >= 0, n >= 1 and finite coefficients; a broken promise aborts. */
#include "fuzz_common.h"

#include <math.h>

#include "tps/tps.h"

#define PROMISE(c) ((c) ? (void)0 : fuzz_broken_promise(#c))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfd(data, size, path, sizeof path);
    if (fd < 0) return 0;
    gt_tps t;
    if (gt_tps_read(path, &t) == GT_OK) {
        PROMISE(t.kernel == GT_TPS_R2LOGR || t.kernel == GT_TPS_R);
        PROMISE(isfinite(t.lambda) && t.lambda >= 0);
        PROMISE(t.n >= 1 && t.c && t.w);
        for (int r = 0; r < 4; r++)
            for (int k = 0; k < 3; k++) PROMISE(isfinite(t.a[r][k]));
        for (size_t k = 0; k < 3 * t.n; k++) PROMISE(isfinite(t.c[k]) && isfinite(t.w[k]));
        gt_tps_free(&t);
    }
    close(fd);
    return 0;
}
