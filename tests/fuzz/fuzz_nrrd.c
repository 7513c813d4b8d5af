/* libFuzzer target: NRRD header + data reader (raw and gzip), whole-volume
 * and slab-streaming paths. Inputs naming device files are skipped (a
 * detached "data file: /dev/zero" is a legitimate endless stream). */
#include "fuzz_common.h"

#include <stdlib.h>

#include "io/volume.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (memmem(data, size, "/dev", 4) || memmem(data, size, "/proc", 5) || memmem(data, size, "/sys", 4)) return 0;
    char path[64];
    int fd = fuzz_memfd(data, size, path, sizeof path);
    if (fd < 0) return 0;
    gt_volume v;
    if (gt_volume_read(path, NULL, -1, NULL, NULL, &v) == GT_OK) {
        volatile double s = gt_volume_get(&v, v.info.dims[0] - 1, v.info.dims[1] - 1, v.info.dims[2] - 1);
        (void)s;
        gt_volume_free(&v);
    }
    gt_volume_stream *st;
    if (gt_volume_stream_open(path, NULL, -1, NULL, NULL, &st) == GT_OK) {
        const gt_volume_info *in = gt_volume_stream_info(st);
        size_t slice = gt_voltype_size(in->type) * (size_t)in->dims[0] * (size_t)in->dims[1];
        if (slice <= (64u << 20)) {
            void *buf = malloc(slice);
            for (int64_t z = 1; buf && z < in->dims[2]; z += 2)
                if (gt_volume_stream_read(st, z, 1, buf) != GT_OK) break;
            free(buf);
        }
        gt_volume_stream_close(st);
    }
    close(fd);
    return 0;
}
