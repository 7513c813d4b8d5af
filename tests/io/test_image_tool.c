/* Helper for tests/io/interop_image.sh.
 *   test_image_tool png W H C RAW OUT.png     8-bit samples from RAW -> PNG
 *   test_image_tool pgm16 W H RAW OUT.pgm     16-bit host-order samples -> PGM
 *   test_image_tool dump IMAGE WANT16         decoded samples (host order) to stdout
 *   test_image_tool pngx W H C BITS THREADS LEVEL RAW OUT.png
 *                                             the fast encoder (gt_png_encode): 8 or 16-bit
 *                                             (host-order) samples, THREADS bands, LEVEL
 * dump prints "<w> <h> <channels> <bits>" on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "io/image.h"

static void *load(const char *path, size_t n)
{
    void *b = malloc(n);
    FILE *f = fopen(path, "rb");
    if (!f || fread(b, 1, n, f) != n) exit(1);
    fclose(f);
    return b;
}

int main(int argc, char **argv)
{
    gt_set_progname("test_image_tool");
    if (argc == 7 && strcmp(argv[1], "png") == 0) {
        int w = atoi(argv[2]), h = atoi(argv[3]), c = atoi(argv[4]);
        void *px = load(argv[5], (size_t)w * h * c);
        return gt_report(gt_png_write(argv[6], w, h, c, px));
    }
    if (argc == 10 && strcmp(argv[1], "pngx") == 0) {
        int w = atoi(argv[2]), h = atoi(argv[3]), c = atoi(argv[4]), bits = atoi(argv[5]);
        gt_image img = {w, h, c, bits, load(argv[8], (size_t)w * h * c * (bits / 8))};
        uint8_t *png;
        size_t n;
        gt_status st = gt_png_encode(&img, 0, atoi(argv[7]), atoi(argv[6]), &png, &n);
        if (st != GT_OK) return gt_report(st);
        FILE *f = fopen(argv[9], "wb");
        if (!f || fwrite(png, 1, n, f) != n || fclose(f) != 0) return 1;
        free(png);
        free(img.data);
        return 0;
    }
    if (argc == 6 && strcmp(argv[1], "pgm16") == 0) {
        int w = atoi(argv[2]), h = atoi(argv[3]);
        void *px = load(argv[4], (size_t)w * h * 2);
        return gt_report(gt_pgm16_write(argv[5], w, h, px));
    }
    if (argc == 4 && strcmp(argv[1], "dump") == 0) {
        gt_image img;
        gt_status st = gt_image_read(argv[2], 0, atoi(argv[3]), &img);
        if (st != GT_OK) return gt_report(st);
        fwrite(img.data, (size_t)img.bits / 8, (size_t)img.w * img.h * img.channels, stdout);
        fprintf(stderr, "%d %d %d %d\n", img.w, img.h, img.channels, img.bits);
        gt_image_free(&img);
        return 0;
    }
    fprintf(stderr, "usage: see test_image_tool.c\n");
    return 2;
}
