/* Helper for tests/io/interop_yuv.sh.
 *   test_yuv_tool gen PATH y4m|raw FMT W H N   write N fixed-seed frames
 *   test_yuv_tool dump PATH [W H FMT]          read a stream, write its frames raw to stdout
 *   test_yuv_tool convert SRC SFMT DFMT W H     convert a raw stream with gt_yuv_convert
 * dump prints "<fmt> <w> <h> <frames>" on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/status.h"
#include "gt_test.h"
#include "io/yuv.h"

int main(int argc, char **argv)
{
    gt_set_progname("test_yuv_tool");
    gt_status st = GT_ERR_USAGE;
    if (argc == 8 && strcmp(argv[1], "gen") == 0) {
        gt_pixfmt f;
        int w = atoi(argv[5]), h = atoi(argv[6]), n = atoi(argv[7]);
        if ((st = gt_pixfmt_parse("FMT", argv[4], &f)) != GT_OK) return gt_report(st);
        gt_yuv_writer *wr;
        if ((st = gt_yuv_create(argv[2], strcmp(argv[3], "y4m") == 0, w, h, f, 25, 1, &wr)) != GT_OK)
            return gt_report(st);
        size_t fb = gt_pixfmt_frame_bytes(f, w, h);
        unsigned char *buf = malloc(fb);
        gt_rng rng = {77};
        for (int k = 0; k < n && st == GT_OK; k++) {
            /* smooth-ish content with noise, so chroma resampling is visible */
            for (size_t i = 0; i < fb; i++) buf[i] = (unsigned char)((i * 7 + k * 13) % 251 + gt_rng_u64(&rng) % 5);
            st = gt_yuv_write_frame(wr, buf);
        }
        free(buf);
        gt_status st2 = gt_yuv_finish(wr, st == GT_OK);
        return gt_report(st != GT_OK ? st : st2);
    }
    if ((argc == 3 || argc == 6) && strcmp(argv[1], "dump") == 0) {
        gt_pixfmt f = (gt_pixfmt)-1;
        int w = 0, h = 0;
        if (argc == 6) {
            w = atoi(argv[3]);
            h = atoi(argv[4]);
            if ((st = gt_pixfmt_parse("FMT", argv[5], &f)) != GT_OK) return gt_report(st);
        }
        gt_yuv_reader *r;
        if ((st = gt_yuv_open(argv[2], w, h, (int)f, &r)) != GT_OK) return gt_report(st);
        size_t fb = gt_yuv_frame_bytes(r);
        unsigned char *buf = malloc(fb);
        bool got = true;
        while ((st = gt_yuv_read_frame(r, buf, &got)) == GT_OK && got) fwrite(buf, 1, fb, stdout);
        fprintf(stderr, "%s %d %d %ld\n", gt_pixfmt_name(gt_yuv_pixfmt(r)), gt_yuv_width(r),
                gt_yuv_height(r), gt_yuv_frames_read(r));
        gt_yuv_close(r);
        free(buf);
        return gt_report(st);
    }
    if (argc == 7 && strcmp(argv[1], "convert") == 0) {
        gt_pixfmt sf, df;
        int w = atoi(argv[5]), h = atoi(argv[6]);
        if ((st = gt_pixfmt_parse("SFMT", argv[3], &sf)) != GT_OK ||
            (st = gt_pixfmt_parse("DFMT", argv[4], &df)) != GT_OK)
            return gt_report(st);
        gt_yuv_reader *r;
        if ((st = gt_yuv_open(argv[2], w, h, (int)sf, &r)) != GT_OK) return gt_report(st);
        size_t sb = gt_pixfmt_frame_bytes(sf, w, h), db = gt_pixfmt_frame_bytes(df, w, h);
        unsigned char *a = malloc(sb), *b = malloc(db);
        bool got = true;
        while ((st = gt_yuv_read_frame(r, a, &got)) == GT_OK && got) {
            if ((st = gt_yuv_convert(a, sf, b, df, w, h)) != GT_OK) break;
            fwrite(b, 1, db, stdout);
        }
        gt_yuv_close(r);
        free(a);
        free(b);
        return gt_report(st);
    }
    fprintf(stderr, "usage: see the comment in test_yuv_tool.c\n");
    return 2;
}
