/* The training images of gsrender --fit: one per camera, named by the
 * camera's img_name (the reference's cameras.json writes it without the
 * extension; with one, it is tried as it is first) in the images directory,
 * read as PNG or JPEG (8 or 16 bit), converted to planar float RGB in [0,1]
 * with any alpha composited over the background (what the reference does
 * for images with alpha when it is told the background), and checked
 * against the camera's size. With a downscale factor the cameras shrink as
 * the reference's --resolution does and full-size images are area-averaged
 * down (gs_pixels.h: a box filter for sizes that divide). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "common/path.h"
#include "gs/gs_fit.h"
#include "gs/gs_pixels.h"
#include "io/image.h"

static const char *const EXTS[] = {".png", ".jpg", ".jpeg", ".PNG", ".JPG", ".JPEG"};
#define NEXT (int)(sizeof EXTS / sizeof EXTS[0])

static bool has_image_ext(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot) return false;
    for (int k = 0; k < NEXT; k++)
        if (!strcasecmp(dot, EXTS[k])) return true;
    return false;
}

/* The path of camera `name`'s image in dir, or false with `tried` listing
 * the paths tried. */
static bool find_image(const char *dir, const char *name, char *path, size_t len, char *tried, size_t tlen)
{
    tried[0] = 0;
    if (has_image_ext(name)) {
        snprintf(path, len, "%s/%s", dir, name);
        if (gt_path_is_file(path)) return true;
        snprintf(tried, tlen, "'%s'", path);
        return false;
    }
    for (int k = 0; k < NEXT; k++) {
        snprintf(path, len, "%s/%s%s", dir, name, EXTS[k]);
        if (gt_path_is_file(path)) return true;
    }
    snprintf(tried, tlen, "'%s/%s' with .png, .jpg or .jpeg", dir, name);
    return false;
}

/* Image files in dir that no camera names: a -v note each. */
static void note_unused(const char *dir, const gt_gs_camera *cams, int n)
{
    if (gt_verbosity() < 1) return;
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !has_image_ext(e->d_name)) continue;
        size_t stem = strrchr(e->d_name, '.') - e->d_name;
        bool used = false;
        for (int i = 0; i < n && !used; i++)
            used = !strcmp(cams[i].name, e->d_name) ||
                   (strlen(cams[i].name) == stem && !strncmp(cams[i].name, e->d_name, stem));
        if (!used) gt_info("%s/%s: no camera of this name, not used", dir, e->d_name);
    }
    closedir(d);
}

void gt_gs_fit_images_free(float **rgb, int ncams)
{
    if (!rgb) return;
    for (int i = 0; i < ncams; i++) free(rgb[i]);
    free(rgb);
}

gt_status gt_gs_fit_images_read(const char *dir, gt_gs_camera *cams, int ncams, const float bg[3],
                                int downscale, float ***rgb_out)
{
    *rgb_out = NULL;
    if (!gt_path_is_dir(dir))
        return gt_fail(GT_ERR_DATA, "the images directory '%s' does not exist or is not a directory", dir);
    float **rgb = calloc((size_t)ncams, sizeof *rgb);
    if (!rgb) return gt_fail(GT_ERR_RUNTIME, "out of memory (training images)");
    int f = downscale > 1 ? downscale : 1;
    gt_status st = GT_OK;
    for (int i = 0; i < ncams && st == GT_OK; i++) {
        gt_gs_camera *c = &cams[i];
        char path[4096], tried[4200];
        if (!c->name[0]) {
            st = gt_fail(GT_ERR_DATA, "camera %d has no img_name: its training image cannot be found", i);
            break;
        }
        if (!find_image(dir, c->name, path, sizeof path, tried, sizeof tried)) {
            st = gt_fail(GT_ERR_DATA, "camera '%s' has no image: tried %s", c->name, tried);
            break;
        }
        gt_image img;
        if (gt_image_read(path, 0, 1, &img) != GT_OK) {
            gt_errmsg_prefix("camera '%s'", c->name);
            st = GT_ERR_DATA;
            break;
        }
        int w = c->width, h = c->height;
        if (f > 1) { /* the reference: Python round(size / f) (halves to even), the same FoV */
            w = (int)nearbyint(c->width / (double)f), h = (int)nearbyint(c->height / (double)f);
            if (w < 1) w = 1;
            if (h < 1) h = 1;
        }
        /* an image of the camera's full size is area-averaged down (gs_pixels.h) */
        bool full = f > 1 && img.w == c->width && img.h == c->height;
        if (!(img.w == w && img.h == h) && !full) {
            if (f > 1)
                st = gt_fail(GT_ERR_DATA,
                             "image '%s' is %dx%d but camera '%s' is %dx%d (%dx%d at --resolution %d)", path,
                             img.w, img.h, c->name, c->width, c->height, w, h, f);
            else
                st = gt_fail(GT_ERR_DATA, "image '%s' is %dx%d but camera '%s' is %dx%d", path, img.w, img.h,
                             c->name, c->width, c->height);
            gt_image_free(&img);
            break;
        }
        rgb[i] = malloc(sizeof(float) * 3 * (size_t)w * h);
        if (!rgb[i]) st = gt_fail(GT_ERR_RUNTIME, "out of memory (image '%s')", path);
        else st = gt_gs_pixels_planar(&img, w, h, bg, rgb[i]);
        gt_image_free(&img);
        if (f > 1) {
            c->fx *= (float)w / c->width;
            c->fy *= (float)h / c->height;
            c->cx *= (float)w / c->width;
            c->cy *= (float)h / c->height;
            c->width = w, c->height = h;
        }
    }
    if (st != GT_OK) {
        gt_gs_fit_images_free(rgb, ncams);
        return st;
    }
    note_unused(dir, cams, ncams);
    *rgb_out = rgb;
    return GT_OK;
}
