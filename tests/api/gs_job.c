/* The gsrender job through libcore's public API, as an outside C program
 * uses it (compiled against the installed headers and library through
 * pkg-config by tests/api/run-api-tests.sh): one view with its depth map and
 * a three-frame Y4M orbit of testdata/gs/scene.ply, and two jobs that must
 * fail without leaving a file. Exit 0: passed; 1: failed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs/gs.h"
#include "io/image.h"
#include "io/yuv.h"

#include "api_test.h"

/* One view of cameras.json's view002 with alpha and depth: the PNG has the
 * camera's size, the scene covers part of it (some pixels opaque, not all),
 * and the depth map is finite, >= 0, and positive where the view is opaque. */
static void view(const char *scene, const char *cams)
{
    const char *png = api_tmp("view.png"), *pfm = api_tmp("view.pfm");
    gt_gs_job j;
    gt_gs_job_init(&j);
    j.scene = scene;
    j.cameras = cams;
    j.view = "view002";
    j.output = png;
    j.depth = pfm;
    j.alpha = true;
    gt_status st = gt_gs_render_view(&j);
    CHECK(st == GT_OK, "view: %s", gt_errmsg());
    if (st != GT_OK) return;
    gt_image im;
    st = gt_image_read(png, 0, 0, &im);
    CHECK(st == GT_OK, "read %s: %s", png, gt_errmsg());
    if (st != GT_OK) return;
    CHECK(im.w == 160 && im.h == 90 && im.channels == 4, "view is %dx%d, %d channels; want 160x90 RGBA",
          im.w, im.h, im.channels);
    int w, h, ch;
    float *d = NULL;
    st = gt_pfm_read(pfm, &w, &h, &ch, &d);
    CHECK(st == GT_OK, "read %s: %s", pfm, gt_errmsg());
    if (st == GT_OK && w == im.w && h == im.h && ch == 1 && im.channels == 4) {
        const uint8_t *px = im.data;
        size_t opaque = 0, bad = 0, np = (size_t)w * h;
        for (size_t i = 0; i < np; i++) {
            if (!isfinite(d[i]) || d[i] < 0) bad++;
            if (px[4 * i + 3] == 255) opaque++, bad += !(d[i] > 0);
        }
        CHECK(opaque > 0 && opaque < np, "view: %zu opaque pixels of %zu; want some, not all", opaque, np);
        CHECK(bad == 0, "depth: %zu pixels negative, not finite, or 0 where the view is opaque", bad);
    } else if (st == GT_OK) {
        CHECK(0, "depth map is %dx%d with %d channels", w, h, ch);
    }
    free(d);
    gt_image_free(&im);
}

/* A three-frame orbit to Y4M: three 32x24 frames, each different from the
 * one before (the camera moves around the scene). */
static void orbit(const char *scene)
{
    const char *y4m = api_tmp("orbit.y4m");
    gt_gs_job j;
    gt_gs_job_init(&j);
    j.scene = scene;
    j.orbit = 3;
    j.width = 32, j.height = 24, j.have_size = true;
    j.output = y4m;
    gt_status st = gt_gs_render_orbit(&j);
    CHECK(st == GT_OK, "orbit: %s", gt_errmsg());
    if (st != GT_OK) return;
    gt_yuv_reader *r;
    st = gt_yuv_open(y4m, 0, 0, -1, &r);
    CHECK(st == GT_OK, "open %s: %s", y4m, gt_errmsg());
    if (st != GT_OK) return;
    CHECK(gt_yuv_width(r) == 32 && gt_yuv_height(r) == 24, "orbit frames are %dx%d", gt_yuv_width(r),
          gt_yuv_height(r));
    size_t fb = gt_yuv_frame_bytes(r);
    unsigned char *prev = malloc(fb), *cur = malloc(fb);
    int n = 0, same = 0;
    bool got = true;
    while (prev && cur && got) {
        st = gt_yuv_read_frame(r, cur, &got);
        if (st != GT_OK || !got) break;
        if (n > 0 && !memcmp(prev, cur, fb)) same++;
        memcpy(prev, cur, fb);
        n++;
    }
    CHECK(st == GT_OK, "reading the orbit: %s", gt_errmsg());
    CHECK(n == 3, "orbit has %d frames, want 3", n);
    CHECK(same == 0, "%d orbit frames equal the one before", same);
    free(prev);
    free(cur);
    gt_yuv_close(r);
}

/* The frames of a Y4M file, concatenated; *n gets their count. */
static unsigned char *y4m_frames(const char *path, int *n, size_t *fb)
{
    gt_yuv_reader *r;
    *n = 0;
    if (gt_yuv_open(path, 0, 0, -1, &r) != GT_OK) return NULL;
    *fb = gt_yuv_frame_bytes(r);
    unsigned char *all = malloc(*fb * 8);
    bool got = true;
    while (all && *n < 8 && gt_yuv_read_frame(r, all + *n * *fb, &got) == GT_OK && got) (*n)++;
    gt_yuv_close(r);
    return all;
}

/* A slice of the orbit (have_frames 1..2 of 3) is frames 1 and 2 of the whole
 * orbit (orbit() wrote it); a slice past the orbit is refused, with no file. */
static void slice(const char *scene)
{
    const char *part = api_tmp("part.y4m"), *bad = api_tmp("bad.y4m");
    gt_gs_job j;
    gt_gs_job_init(&j);
    j.scene = scene;
    j.orbit = 3;
    j.width = 32, j.height = 24, j.have_size = true;
    j.have_frames = true, j.frame_first = 1; /* frame_end -1: to the end */
    j.output = part;
    gt_status st = gt_gs_render_orbit(&j);
    CHECK(st == GT_OK, "slice 1: of the orbit: %s", gt_errmsg());
    int nw = 0, np = 0;
    size_t fw = 0, fp = 0;
    unsigned char *w = y4m_frames(api_tmp("orbit.y4m"), &nw, &fw), *p = y4m_frames(part, &np, &fp);
    CHECK(nw == 3 && np == 2 && fw == fp, "whole orbit %d frames, slice %d; want 3 and 2", nw, np);
    if (nw == 3 && np == 2 && fw == fp) CHECK(!memcmp(w + fw, p, 2 * fw), "the slice's frames differ from 1..2");
    free(w);
    free(p);
    j.frame_first = 2, j.frame_end = 4;
    j.output = bad;
    CHECK(gt_gs_render_orbit(&j) == GT_ERR_USAGE && strstr(gt_errmsg(), "past the end"),
          "slice 2:4 of 3 frames: not refused (%s)", gt_errmsg());
    CHECK(!api_exists(bad), "a refused slice left a file");
}

/* Jobs that fail leave no file: a contradiction in the job (a depth map of
 * an orbit) and a scene that does not exist. */
static void failures(const char *scene)
{
    const char *out = api_tmp("fail_%d.png"), *depth = api_tmp("fail.pfm");
    gt_gs_job j;
    gt_gs_job_init(&j);
    j.scene = scene;
    j.orbit = 2;
    j.output = out;
    j.depth = depth;
    CHECK(gt_gs_render_orbit(&j) == GT_ERR_USAGE, "orbit with a depth map: not refused (%s)", gt_errmsg());
    j.depth = NULL;
    j.scene = api_tmp("no-such-scene.ply");
    CHECK(gt_gs_render_orbit(&j) != GT_OK, "missing scene: no error");
    CHECK(!api_exists(api_tmp("fail_0.png")) && !api_exists(depth), "a failed job left a file");
}

int main(void)
{
    const char *scene = api_testdata("gs/scene.ply"), *cams = api_testdata("gs/cameras.json");
    if (!api_begin("gs_job", scene)) return 1;
    view(scene, cams);
    orbit(scene);
    slice(scene);
    failures(scene);
    return api_end("gs_job");
}
