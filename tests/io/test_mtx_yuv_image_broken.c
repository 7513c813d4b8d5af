/* Broken-input folders: every file in testdata/io/<kind>/broken/ must be
 * rejected with GT_ERR_DATA and a message naming the place, as its EXPECT
 * list says (format in tests/broken_expect.h).
 *
 * Usage: test_mtx_yuv_image_broken <kind>   (mtx | yuv | image) */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broken_expect.h"
#include "io/image.h"
#include "io/mtx.h"
#include "io/yuv.h"

static gt_status read_mtx(const char *path)
{
    gt_mtx m;
    gt_status st = gt_mtx_read(path, &m);
    if (st == GT_OK) gt_mtx_free(&m);
    return st;
}

#ifdef WITH_YUV
static gt_status read_yuv(const char *path)
{
    gt_yuv_reader *r;
    gt_status st = gt_yuv_open(path, 0, 0, -1, &r);
    if (st != GT_OK) return st;
    void *buf = malloc(gt_yuv_frame_bytes(r));
    bool got = true;
    while (st == GT_OK && got) st = gt_yuv_read_frame(r, buf, &got);
    free(buf);
    gt_yuv_close(r);
    return st;
}
#endif

#ifdef WITH_IMAGE
static gt_status read_image(const char *path)
{
    size_t n = strlen(path);
    if (n > 4 && strcmp(path + n - 4, ".pfm") == 0) {
        int w, h, c;
        float *d;
        gt_status st = gt_pfm_read(path, &w, &h, &c, &d);
        if (st == GT_OK) free(d);
        return st;
    }
    gt_image img;
    gt_status st = gt_image_read(path, 0, 1, &img);
    if (st == GT_OK) gt_image_free(&img);
    return st;
}
#endif

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s mtx|yuv|image\n", argv[0]);
        return 2;
    }
    gt_status (*reader)(const char *) = read_mtx;
#ifdef WITH_YUV
    if (strcmp(argv[1], "yuv") == 0) reader = read_yuv;
#endif
#ifdef WITH_IMAGE
    if (strcmp(argv[1], "image") == 0) reader = read_image;
#endif
    char folder[256];
    snprintf(folder, sizeof folder, "io/%s/broken", argv[1]);
    int failures = broken_expect_check(folder, reader);
    return failures ? 1 : 0;
}
