/* libFuzzer target: point text (and PLY sniffing) reader. */
#include "fuzz_common.h"

#include <stdlib.h>

#include "io/points.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfd(data, size, path, sizeof path);
    if (fd < 0) return 0;
    double *xyz;
    size_t n;
    if (gt_points_read_any(path, &xyz, &n) == GT_OK) {
        volatile double s = n ? xyz[3 * n - 1] : 0;
        (void)s;
        free(xyz);
    }
    close(fd);
    return 0;
}
