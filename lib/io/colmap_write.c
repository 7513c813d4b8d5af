/* Writing COLMAP models (colmap.h): text with the header comments COLMAP
 * writes and numbers that read back exactly, or binary; each file written
 * atomically (common/output.h). */
#include <stdio.h>
#include <string.h>

#include "common/output.h"
#include "io/colmap.h"
#include "io/numtext.h"

static void put_num(FILE *f, double v)
{
    char b[GT_FMT_MAX];
    gt_fmt_double(b, v);
    fputc(' ', f);
    fputs(b, f);
}

static void put32(FILE *f, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    fwrite(b, 1, 4, f);
}

static void put64(FILE *f, uint64_t v)
{
    put32(f, (uint32_t)v);
    put32(f, (uint32_t)(v >> 32));
}

static void putf64(FILE *f, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    put64(f, u);
}

static void cameras_txt(FILE *f, const gt_colmap_model *m)
{
    fprintf(f, "# Camera list with one line of data per camera:\n#   CAMERA_ID, MODEL, WIDTH, HEIGHT, PARAMS[]\n"
               "# Number of cameras: %zu\n", m->ncameras);
    for (size_t i = 0; i < m->ncameras; i++) {
        const gt_colmap_camera *c = &m->cameras[i];
        fprintf(f, "%u %s %d %d", c->id, gt_colmap_model_name(c->model), c->width, c->height);
        for (int k = 0; k < c->nparams; k++) put_num(f, c->params[k]);
        fputc('\n', f);
    }
}

static void cameras_bin(FILE *f, const gt_colmap_model *m)
{
    put64(f, m->ncameras);
    for (size_t i = 0; i < m->ncameras; i++) {
        const gt_colmap_camera *c = &m->cameras[i];
        put32(f, c->id), put32(f, (uint32_t)c->model), put64(f, (uint64_t)c->width), put64(f, (uint64_t)c->height);
        for (int k = 0; k < c->nparams; k++) putf64(f, c->params[k]);
    }
}

/* 2-D points written: those kept, else none. */
static uint64_t n2d(const gt_colmap_image *im)
{
    return im->xy && im->point3d_id ? im->npoints2d : 0;
}

static void images_txt(FILE *f, const gt_colmap_model *m)
{
    uint64_t obs = 0;
    for (size_t i = 0; i < m->nimages; i++) obs += n2d(&m->images[i]);
    fprintf(f, "# Image list with two lines of data per image:\n"
               "#   IMAGE_ID, QW, QX, QY, QZ, TX, TY, TZ, CAMERA_ID, NAME\n"
               "#   POINTS2D[] as (X, Y, POINT3D_ID)\n"
               "# Number of images: %zu, mean observations per image: %.17g\n",
            m->nimages, m->nimages ? (double)obs / (double)m->nimages : 0.0);
    for (size_t i = 0; i < m->nimages; i++) {
        const gt_colmap_image *im = &m->images[i];
        fprintf(f, "%u", im->id);
        for (int k = 0; k < 4; k++) put_num(f, im->qvec[k]);
        for (int k = 0; k < 3; k++) put_num(f, im->tvec[k]);
        fprintf(f, " %u %s\n", im->camera_id, im->name);
        for (uint64_t k = 0; k < n2d(im); k++) {
            if (k) fputc(' ', f);
            char b[GT_FMT_MAX];
            gt_fmt_double(b, im->xy[2 * k]);
            fputs(b, f);
            put_num(f, im->xy[2 * k + 1]);
            fprintf(f, " %lld", (long long)im->point3d_id[k]);
        }
        fputc('\n', f);
    }
}

static void images_bin(FILE *f, const gt_colmap_model *m)
{
    put64(f, m->nimages);
    for (size_t i = 0; i < m->nimages; i++) {
        const gt_colmap_image *im = &m->images[i];
        put32(f, im->id);
        for (int k = 0; k < 4; k++) putf64(f, im->qvec[k]);
        for (int k = 0; k < 3; k++) putf64(f, im->tvec[k]);
        put32(f, im->camera_id);
        fwrite(im->name, 1, strlen(im->name) + 1, f);
        put64(f, n2d(im));
        for (uint64_t k = 0; k < n2d(im); k++)
            putf64(f, im->xy[2 * k]), putf64(f, im->xy[2 * k + 1]), put64(f, (uint64_t)im->point3d_id[k]);
    }
}

static uint64_t tlen(const gt_colmap_points *p, size_t i)
{
    return p->track && p->track[i] ? p->track_len[i] : 0;
}

static void points_txt(FILE *f, const gt_colmap_model *m)
{
    const gt_colmap_points *p = &m->points;
    uint64_t obs = 0;
    for (size_t i = 0; i < p->n; i++) obs += tlen(p, i);
    fprintf(f, "# 3D point list with one line of data per point:\n"
               "#   POINT3D_ID, X, Y, Z, R, G, B, ERROR, TRACK[] as (IMAGE_ID, POINT2D_IDX)\n"
               "# Number of points: %zu, mean track length: %.17g\n",
            p->n, p->n ? (double)obs / (double)p->n : 0.0);
    for (size_t i = 0; i < p->n; i++) {
        fprintf(f, "%llu", (unsigned long long)p->id[i]);
        for (int k = 0; k < 3; k++) put_num(f, p->xyz[3 * i + k]);
        fprintf(f, " %u %u %u", p->rgb[3 * i], p->rgb[3 * i + 1], p->rgb[3 * i + 2]);
        put_num(f, p->error[i]);
        for (uint64_t k = 0; k < tlen(p, i); k++) fprintf(f, " %u %u", p->track[i][2 * k], p->track[i][2 * k + 1]);
        fputc('\n', f);
    }
}

static void points_bin(FILE *f, const gt_colmap_model *m)
{
    const gt_colmap_points *p = &m->points;
    put64(f, p->n);
    for (size_t i = 0; i < p->n; i++) {
        put64(f, p->id[i]);
        for (int k = 0; k < 3; k++) putf64(f, p->xyz[3 * i + k]);
        fwrite(p->rgb + 3 * i, 1, 3, f);
        putf64(f, p->error[i]);
        put64(f, tlen(p, i));
        for (uint64_t k = 0; k < tlen(p, i); k++) put32(f, p->track[i][2 * k]), put32(f, p->track[i][2 * k + 1]);
    }
}

static gt_status write_one(const char *dir, const char *part, bool binary, const gt_colmap_model *m,
                           void (*fn)(FILE *, const gt_colmap_model *))
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.%s", dir, part, binary ? "bin" : "txt");
    gt_out o;
    GT_TRY(gt_out_open(&o, path));
    fn(o.fp, m);
    return gt_out_commit(&o);
}

gt_status gt_colmap_write(const char *dir, const gt_colmap_model *m, bool binary)
{
    GT_TRY(write_one(dir, "cameras", binary, m, binary ? cameras_bin : cameras_txt));
    GT_TRY(write_one(dir, "images", binary, m, binary ? images_bin : images_txt));
    return write_one(dir, "points3D", binary, m, binary ? points_bin : points_txt);
}
