/* libFuzzer target: Y4M / raw YUV reader (path-based, through a memfd), and
 * the YUV->RGB / format conversion of each frame it returns. A stream that is
 * not Y4M is read as raw 6x4 in a format picked by the input size.
 *
 * Build and run by hand (from the repo root, after `meson setup build`):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
 *     -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I. -Ilib -Ibuild tests/fuzz/fuzz_y4m.c \
 *     lib/common/{status,log,alloc,output}.c lib/io/yuv_read.c lib/io/yuv_format.c -o /tmp/fuzz_y4m
 *   /tmp/fuzz_y4m -max_total_time=180 -rss_limit_mb=2048 CORPUS_DIR testdata/io/yuv/broken
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/yuv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz_y4m", 0);
    if (fd < 0) return 0;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    gt_yuv_reader *r;
    if (gt_yuv_open(path, 6, 4, (int)(size % GT_PIX_COUNT), &r) == GT_OK) {
        size_t fb = gt_yuv_frame_bytes(r);
        int w = gt_yuv_width(r), h = gt_yuv_height(r);
        if (fb <= ((size_t)1 << 22)) { /* the reader caps at 1 GiB; keep the fuzzer fast */
            uint8_t *buf = malloc(fb), *rgb = malloc((size_t)w * h * 3), *conv = malloc((size_t)w * h * 3);
            bool got = true;
            while (gt_yuv_read_frame(r, buf, &got) == GT_OK && got) {
                gt_yuv_to_rgb(buf, gt_yuv_pixfmt(r), w, h, GT_BT709, GT_RANGE_LIMITED, rgb);
                gt_yuv_convert(buf, gt_yuv_pixfmt(r), conv, GT_PIX_YUV444P, w, h);
                gt_rgb_to_yuv(rgb, w, h, GT_BT601, GT_RANGE_FULL, buf, gt_yuv_pixfmt(r));
            }
            free(buf);
            free(rgb);
            free(conv);
        }
        gt_yuv_close(r);
    }
    close(fd);
    return 0;
}
