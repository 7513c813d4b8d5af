/* libFuzzer target: the image readers (PFM, ours; PNG and the other formats
 * stb_image decodes, through gt_image_read's checks), path-based through a memfd.
 * Build and run: scripts/fuzz -t SECS fuzz_image */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz_image", 0);
    if (fd < 0) return 0;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int w, h, c;
    float *px;
    if (gt_pfm_read(path, &w, &h, &c, &px) == GT_OK) {
        double s = 0; /* touch everything the reader claims to return */
        for (size_t i = 0; i < (size_t)w * h * c; i++) s += px[i];
        if (s == 12345.678) puts("");
        free(px);
    }
    for (int want16 = 0; want16 < 2; want16++) {
        gt_image img;
        if (gt_image_read(path, 0, want16, &img) == GT_OK) {
            size_t n = (size_t)img.w * img.h * img.channels * (img.bits / 8);
            unsigned s = 0;
            for (size_t i = 0; i < n; i++) s += ((const uint8_t *)img.data)[i];
            if (s == 123456789u) puts("");
            gt_image_free(&img);
        }
    }
    close(fd);
    return 0;
}
