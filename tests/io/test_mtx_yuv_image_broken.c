/* Broken-input folders: every file in testdata/io/<kind>/broken/ must be
 * rejected with GT_ERR_DATA and a message naming the place.
 *
 * Usage: test_mtx_yuv_image_broken <kind>   (mtx | yuv | image)
 *
 * testdata/io/<kind>/broken/EXPECT lists every case, one per line:
 *     <file name> <place> <words...>
 * <place> is the line number (checked as "<file>:<line>)"), "-" for a place
 * without a line ("(<file>)"), or "byte" for a byte offset ("<file>: byte ");
 * <words> must appear in the message. A file in the folder missing from
 * EXPECT (or the reverse) fails the test, so no case goes unchecked. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
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
    const char *td = getenv("GT_TESTDATA");
    if (!td) td = "testdata";
    gt_status (*reader)(const char *) = read_mtx;
#ifdef WITH_YUV
    if (strcmp(argv[1], "yuv") == 0) reader = read_yuv;
#endif
#ifdef WITH_IMAGE
    if (strcmp(argv[1], "image") == 0) reader = read_image;
#endif
    char dir[1024], path[1200];
    snprintf(dir, sizeof dir, "%s/io/%s/broken", td, argv[1]);
    snprintf(path, sizeof path, "%s/EXPECT", dir);
    FILE *ex = fopen(path, "r");
    if (!ex) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    int failures = 0, cases = 0;
    char line[1024];
    char listed[512][128];
    int nlisted = 0;
    while (fgets(line, sizeof line, ex)) {
        line[strcspn(line, "\n")] = 0;
        if (!line[0] || line[0] == '#') continue;
        char name[128], place[32];
        int off = 0;
        if (sscanf(line, "%127s %31s %n", name, place, &off) < 2) {
            fprintf(stderr, "bad EXPECT line: %s\n", line);
            failures++;
            continue;
        }
        const char *words = line + off;
        if (nlisted < 512) snprintf(listed[nlisted++], 128, "%s", name);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        gt_errmsg_clear();
        gt_status st = reader(path);
        const char *msg = gt_errmsg();
        char want[1400];
        if (strcmp(place, "-") == 0) snprintf(want, sizeof want, "(%s)", path);
        else if (strcmp(place, "byte") == 0) snprintf(want, sizeof want, "(%s: byte ", path);
        else snprintf(want, sizeof want, "(%s:%s)", path, place);
        bool ok = st == GT_ERR_DATA && strstr(msg, want) && (!*words || strstr(msg, words));
        cases++;
        printf("%s %s: status %d, message: %s\n", ok ? "ok  " : "FAIL", name, (int)st, msg);
        if (!ok) {
            printf("     wanted status 3, place '%s', words '%s'\n", want, words);
            failures++;
        }
    }
    fclose(ex);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "EXPECT") == 0) continue;
        bool found = false;
        for (int i = 0; i < nlisted && !found; i++) found = strcmp(listed[i], e->d_name) == 0;
        if (!found) {
            printf("FAIL %s: not listed in EXPECT\n", e->d_name);
            failures++;
        }
    }
    if (d) closedir(d);
    printf("%d cases, %d failures\n", cases, failures);
    return failures ? 1 : 0;
}
