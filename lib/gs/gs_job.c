/* The gsrender job: a scene file in, one view (PNG, optional depth map) or an
 * orbit (a PNG sequence or a Y4M stream) out, on the GPU or the CPU
 * reference, with the program's progress bar, --timings report and atomic
 * outputs. gt_gs_render_view and gt_gs_render_orbit (gs.h) are the entry
 * points; tools/gsrender.c only parses options into a gt_gs_job. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/progress.h"
#include "common/timer.h"
#include "common/trace.h"
#include "gs/gs.h"
#include "io/image.h"
#include "io/yuv.h"

void gt_gs_job_init(gt_gs_job *j)
{
    memset(j, 0, sizeof *j);
    gt_gs_params_init(&j->render);
    j->up[1] = 1;
    j->fovy = 50;
    j->width = 1280;
    j->height = 720;
    j->orbit_elevation = 20;
    j->fps = 30;
    j->frame_end = -1;
    j->device = GT_DEVICE_AUTO;
    j->png_level = -1;
}

bool gt_gs_job_all_views(const gt_gs_job *j)
{
    return j->view && !strcmp(j->view, "all");
}

gt_status gt_gs_job_frames(const gt_gs_job *j, int total, int *first, int *end)
{
    *first = 0;
    *end = total;
    if (!j->have_frames) return GT_OK;
    char r[48];
    if (j->frame_end >= 0) snprintf(r, sizeof r, "%d:%d", j->frame_first, j->frame_end);
    else snprintf(r, sizeof r, "%d:", j->frame_first);
    if (!j->orbit && !gt_gs_job_all_views(j))
        return gt_fail(GT_ERR_USAGE, "--frames '%s': a slice of an --orbit or of --view all; give one", r);
    if (j->frame_first < 0) return gt_fail(GT_ERR_USAGE, "--frames '%s': frames count from 0", r);
    if (j->frame_end >= 0 && j->frame_end <= j->frame_first)
        return gt_fail(GT_ERR_USAGE, "--frames '%s': an empty range (A:B renders frames A to B-1; B > A)", r);
    if (j->frame_first >= total || j->frame_end > total) {
        if (j->orbit)
            return gt_fail(GT_ERR_USAGE, "--frames '%s': past the end of the orbit's %d frames (0..%d; B at most %d)",
                           r, total, total - 1, total);
        return gt_fail(GT_ERR_USAGE, "--frames '%s': past the end of the %d cameras of %s (0..%d; B at most %d)", r,
                       total, j->cameras, total - 1, total);
    }
    *first = j->frame_first;
    if (j->frame_end >= 0) *end = j->frame_end;
    return GT_OK;
}

/* one %d-style conversion (%d, %5d, %05d) and no other % but %% */
bool gt_gs_frame_pattern(const char *s, bool *has)
{
    int n = 0;
    for (const char *p = s; *p; p++) {
        if (*p != '%') continue;
        if (p[1] == '%') {
            p++;
            continue;
        }
        p++;
        while (*p >= '0' && *p <= '9') p++;
        if (*p != 'd') return false;
        n++;
    }
    *has = n == 1;
    return n <= 1;
}

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcasecmp(s + a - b, suf) == 0;
}

gt_status gt_gs_job_check(const gt_gs_job *j)
{
    if (!j->scene) return gt_fail(GT_ERR_USAGE, "no scene given");
    if (!j->output) return gt_fail(GT_ERR_USAGE, "no output given");
    if (j->png_level < -1 || j->png_level > 9)
        return gt_fail(GT_ERR_USAGE, "--png-level %d: give 0..9", j->png_level);
    if (j->have_eye != j->have_target && !j->orbit)
        return gt_fail(GT_ERR_USAGE, "--eye and --target go together");
    if (j->have_eye && j->cameras)
        return gt_fail(GT_ERR_USAGE, "--cameras and --eye/--target are two ways to give a camera: pick one");
    if (j->view && !j->cameras) return gt_fail(GT_ERR_USAGE, "--view needs --cameras");
    if (j->orbit && (j->view || j->have_eye))
        return gt_fail(GT_ERR_USAGE, "--orbit makes its own cameras: drop --view/--eye");
    bool all = gt_gs_job_all_views(j);
    if (j->depth && j->orbit) return gt_fail(GT_ERR_USAGE, "--depth is for a single view, not --orbit");
    if (j->depth && all) return gt_fail(GT_ERR_USAGE, "--depth is for a single view, not --view all");
    if (j->depth && !ends_with(j->depth, ".pfm") && !ends_with(j->depth, ".pgm"))
        return gt_fail(GT_ERR_USAGE, "--depth '%s': give a .pfm or .pgm file", j->depth);
    if (j->orbit || all) {
        bool pat = false;
        if (!gt_gs_frame_pattern(j->output, &pat))
            return gt_fail(GT_ERR_USAGE, "-o '%s': a frame pattern takes one %%d (e.g. frame_%%04d.png)",
                           j->output);
        if (!pat && strcmp(j->output, "-") != 0 && !ends_with(j->output, ".y4m"))
            return gt_fail(GT_ERR_USAGE,
                           "-o '%s': with %s give a pattern like frame_%%04d.png, a .y4m file or -",
                           j->output, all ? "--view all" : "--orbit");
    }
    if (!j->orbit && !all && !strcmp(j->output, "-"))
        return gt_fail(GT_ERR_USAGE, "-o -: standard output is for --orbit Y4M streams; give a .png");
    int first, end; /* --view all: the range is checked once the cameras are read */
    return gt_gs_job_frames(j, all ? 1000000 : j->orbit, &first, &end);
}

/* RGB or RGBA straight from the rgba8 pixels (the encoder skips alpha) */
static gt_status write_png(const char *path, const gt_gs_image *im, bool alpha, int level)
{
    gt_image img = {im->w, im->h, alpha ? 4 : 3, 8, im->rgba8};
    return gt_png_write_image(path, &img, 4, level);
}

static gt_status write_depth(const char *path, const gt_gs_image *im)
{
    size_t np = (size_t)im->w * im->h;
    float *d = malloc(np * sizeof *d);
    if (!d) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    float dmax = 0;
    for (size_t i = 0; i < np; i++) {
        d[i] = im->alpha[i] > 1e-4f ? im->depth[i] / im->alpha[i] : 0.0f;
        if (d[i] > dmax) dmax = d[i];
    }
    gt_status st;
    if (ends_with(path, ".pfm")) {
        st = gt_pfm_write(path, im->w, im->h, 1, d);
    } else {
        uint16_t *q = malloc(np * sizeof *q);
        if (!q) {
            free(d);
            return gt_fail(GT_ERR_RUNTIME, "out of memory");
        }
        double sc = dmax > 0 ? 65535.0 / dmax : 0.0;
        for (size_t i = 0; i < np; i++) q[i] = (uint16_t)lrint(fmin(65535.0, d[i] * sc));
        gt_info("depth PGM: value = depth * %.9g (largest depth %.9g)", sc, dmax);
        st = gt_pgm16_write(path, im->w, im->h, q);
        free(q);
    }
    free(d);
    return st;
}

/* Orbit frames are written by a second thread while the next frame
 * renders (two image buffers), so that RGB->YUV conversion, PNG encoding and
 * the pipe overlap the GPU work. A Y4M stream rendered on the GPU is
 * converted there and downloaded into two pinned slots (gt_gs_gpu_render_yuv)
 * on a second stream: the writer waits for frame k's download and writes it
 * while k+1 renders. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int posted, written;
    bool stop;
    gt_status st;
    char msg[1024];
    gt_gs_image *im; /* [2] */
    bool y4m, alpha;
    int png_level;
    const char *pattern;
    int first; /* global number of frame 0 of the slice (the pattern's %d) */
    gt_yuv_writer *yw;
    uint8_t *rgb, *yuv;
    gt_pixfmt pf;
    gt_gs_gpu *g; /* gpu_yuv: frames come from its slots */
    bool gpu_yuv;
    gt_timings tm; /* the writer's stages, per frame; merged into the job's at the end */
    gt_progress *pg;
} frame_writer;

static gt_status write_one(frame_writer *w, int f)
{
    const gt_gs_image *im = &w->im[f % 2];
    double t0 = gt_now_ms();
    if (w->gpu_yuv) {
        const uint8_t *frame;
        double dl = 0;
        GT_TRY(gt_gs_gpu_yuv_frame(w->g, f % GT_GS_GPU_YUV_SLOTS, &frame, &dl));
        gt_timings_add(&w->tm, "download (GPU, overlapped)", dl);
        gt_timings_add(&w->tm, "download wait (writer)", gt_now_ms() - t0);
        t0 = gt_now_ms();
        gt_status st = gt_yuv_write_frame(w->yw, frame);
        gt_timings_add(&w->tm, "write (overlapped)", gt_now_ms() - t0);
        return st;
    }
    if (w->y4m) {
        size_t np = (size_t)im->w * im->h;
        for (size_t i = 0; i < np; i++) memcpy(w->rgb + 3 * i, im->rgba8 + 4 * i, 3);
        GT_TRY(gt_rgb_to_yuv(w->rgb, im->w, im->h, GT_BT601, GT_RANGE_LIMITED, w->yuv, w->pf));
        gt_timings_add(&w->tm, "yuv convert (cpu, overlapped)", gt_now_ms() - t0);
        t0 = gt_now_ms();
        gt_status st = gt_yuv_write_frame(w->yw, w->yuv);
        gt_timings_add(&w->tm, "write (overlapped)", gt_now_ms() - t0);
        return st;
    }
    char path[4096];
    snprintf(path, sizeof path, w->pattern, w->first + f);
    gt_status st = write_png(path, im, w->alpha, w->png_level);
    gt_timings_add(&w->tm, "write png (overlapped)", gt_now_ms() - t0);
    return st;
}

/* the writer's stages into the job's table, their call counts kept */
static void merge_timings(gt_timings *dst, const gt_timings *src)
{
    for (int i = 0; i < src->n; i++) {
        gt_timings_add(dst, src->stage[i].name, src->stage[i].ms);
        for (int k = 0; k < dst->n; k++)
            if (!strcmp(dst->stage[k].name, src->stage[i].name)) dst->stage[k].count += src->stage[i].count - 1;
    }
}

static void *writer_main(void *arg)
{
    frame_writer *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        while (w->posted == w->written && !w->stop) pthread_cond_wait(&w->cv, &w->mu);
        if (w->posted == w->written) {
            pthread_mutex_unlock(&w->mu);
            break;
        }
        int f = w->written;
        pthread_mutex_unlock(&w->mu);
        gt_status st = write_one(w, f);
        pthread_mutex_lock(&w->mu);
        if (st != GT_OK) {
            w->st = st;
            snprintf(w->msg, sizeof w->msg, "%s", gt_errmsg());
        } else {
            w->written = f + 1;
        }
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        if (st != GT_OK) break;
        gt_progress_update(w->pg, f + 1, NULL);
    }
    return NULL;
}

/* Everything one job holds; job_free releases it. */
typedef struct {
    const gt_gs_job *j;
    bool gpu, one, list; /* one view; list: every camera of the file (--view all) */
    gt_device_prep prep; /* the CUDA start, on a thread while the inputs are read */
    gt_timings tm;
    gt_gs_camera *cams;
    int ncams;
    gt_gs_camera single;
    gt_gs_scene scene;
    gt_gs_gpu *g;
    double centre[3], up[3], radius; /* the orbit (or default view) */
    double elevation, fovy;
    int W, H, nframes;               /* nframes: of this run (the slice) */
    int first;                       /* the slice's first frame in the orbit */
    gt_gs_image im, im2[2];          /* one view; the orbit's two buffers */
    bool y4m;
    bool gpu_yuv;                    /* Y4M converted and downloaded by the GPU */
    gt_pixfmt pf;
    gt_yuv_writer *yw;
    uint8_t *rgb, *yuv;
} job_ctx;

static void job_free(job_ctx *c)
{
    if (c->yw) gt_yuv_finish(c->yw, false);
    free(c->rgb);
    free(c->yuv);
    gt_gs_gpu_destroy(c->g);
    gt_gs_image_free(&c->im);
    gt_gs_image_free(&c->im2[0]);
    gt_gs_image_free(&c->im2[1]);
    gt_gs_scene_free(&c->scene);
    free(c->cams);
}

/* The camera of --view: an img_name first (names like "00001" are common),
 * else an index. */
static gt_status pick_view(job_ctx *c)
{
    const gt_gs_job *j = c->j;
    int idx = -1;
    const char *v = j->view ? j->view : "0";
    for (int i = 0; i < c->ncams && idx < 0; i++)
        if (!strcmp(c->cams[i].name, v)) idx = i;
    if (idx < 0) {
        char *end;
        long k = strtol(v, &end, 10);
        if (!*v || *end != 0)
            return gt_fail(GT_ERR_USAGE, "--view '%s': no camera with that img_name in %s", v, j->cameras);
        if (k < 0 || k >= c->ncams)
            return gt_fail(GT_ERR_USAGE, "--view %ld out of range: %s has %d cameras (0..%d)", k,
                           j->cameras, c->ncams, c->ncams - 1);
        idx = (int)k;
    }
    c->single = c->cams[idx];
    return GT_OK;
}

/* --view all: the slice of the cameras; a Y4M stream needs them all one size. */
static gt_status list_slice(job_ctx *c)
{
    const gt_gs_job *j = c->j;
    int end;
    GT_TRY(gt_gs_job_frames(j, c->ncams, &c->first, &end));
    c->nframes = end - c->first;
    bool pat = false;
    gt_gs_frame_pattern(j->output, &pat);
    const gt_gs_camera *a = &c->cams[c->first];
    for (int i = c->first + 1; i < end && !pat; i++)
        if (c->cams[i].width != a->width || c->cams[i].height != a->height)
            return gt_fail_at(GT_ERR_DATA, j->cameras, 0,
                              "camera %d ('%s') is %dx%d but camera %d ('%s') is %dx%d: a Y4M stream has one "
                              "size (write PNGs, -o frame_%%04d.png)",
                              i, c->cams[i].name, c->cams[i].width, c->cams[i].height, c->first, a->name, a->width,
                              a->height);
    return GT_OK;
}

/* The orbit (or default view) geometry: centre, up axis, radius and size. */
static void orbit_geometry(job_ctx *c, int *w, int *h)
{
    const gt_gs_job *j = c->j;
    float cf[3], ext;
    gt_gs_scene_bounds(&c->scene, cf, &ext);
    for (int k = 0; k < 3; k++) c->centre[k] = j->have_target ? j->target[k] : cf[k];
    c->radius = j->orbit_radius > 0 ? j->orbit_radius : 2.5 * ext;
    c->up[0] = c->up[2] = 0;
    c->up[1] = 1;
    if (j->have_up) {
        memcpy(c->up, j->up, sizeof c->up);
    } else if (c->ncams > 0) {
        /* the training cameras' mean "up" (-y of each camera) */
        double u[3] = {0, 0, 0}, l = 0;
        for (int i = 0; i < c->ncams; i++)
            for (int k = 0; k < 3; k++) u[k] -= c->cams[i].R[3 + k];
        for (int k = 0; k < 3; k++) l += u[k] * u[k];
        if (l > 1e-12)
            for (int k = 0; k < 3; k++) c->up[k] = u[k] / sqrt(l);
    }
    if (!j->have_size && c->ncams > 0) {
        *w = c->cams[0].width;
        *h = c->cams[0].height;
    }
    /* with cameras (a capture's): around where they look, at their distance,
     * height and field of view, unless the options say otherwise */
    double cc[3], r, el, fovy;
    c->elevation = j->orbit_elevation;
    c->fovy = j->fovy;
    if (c->ncams > 0 && gt_gs_cameras_orbit(c->cams, c->ncams, c->up, cc, &r, &el, &fovy)) {
        if (!j->have_target) memcpy(c->centre, cc, sizeof cc);
        if (!j->have_radius && !(j->orbit_radius > 0)) c->radius = r;
        if (!j->have_elevation) c->elevation = el;
        if (!j->have_fovy) c->fovy = fovy;
    }
}

/* Cameras, scene, geometry, image buffers, the GPU context and the Y4M
 * writer: everything up to the first frame. */
static gt_status job_setup(job_ctx *c)
{
    const gt_gs_job *j = c->j;
    gt_timer t;
    if (j->cameras) GT_TRY(gt_gs_cameras_read(j->cameras, &c->cams, &c->ncams));
    if (j->cameras && c->ncams == 0) /* not "--view 0 out of range (0..-1)" */
        return gt_fail_at(GT_ERR_DATA, j->cameras, 0, "the cameras file holds no cameras (an empty array)");
    if (j->cameras && c->one) GT_TRY(pick_view(c));
    else if (c->one && j->have_eye)
        GT_TRY(gt_gs_camera_lookat(&c->single, j->eye, j->target, j->up, j->fovy, j->width, j->height));
    if (c->list) GT_TRY(list_slice(c));

    gt_timer_start(&t, false, NULL);
    GT_TRY(gt_gs_scene_read(j->scene, &c->scene));
    gt_timings_add(&c->tm, "load", gt_timer_stop(&t));
    gt_info("%zu Gaussians, SH degree %d", c->scene.n, c->scene.sh_degree);

    int w = j->width, h = j->height;
    orbit_geometry(c, &w, &h);
    int end = 1;
    if (j->orbit) GT_TRY(gt_gs_job_frames(j, j->orbit, &c->first, &end));
    else if (c->list) end = c->first + c->nframes; /* list_slice */
    c->nframes = end - c->first;
    if (c->list) w = c->cams[c->first].width, h = c->cams[c->first].height;
    if (c->one && !j->cameras && !j->have_eye)
        GT_TRY(gt_gs_camera_orbit(&c->single, c->centre, c->up, c->radius, c->elevation, 0, 1, c->fovy,
                                  w, h));
    c->W = c->one ? c->single.width : w;
    c->H = c->one ? c->single.height : h;
    if (c->one) GT_TRY(gt_gs_image_alloc(&c->im, c->W, c->H));
    else
        for (int k = 0; k < 2; k++) GT_TRY(gt_gs_image_alloc(&c->im2[k], c->W, c->H));

    /* the input is read: the device the thread started is chosen here, and
     * its errors reported */
    gt_trace("input read");
    gt_device_kind dev;
    GT_TRY(gt_device_prepare_finish(&c->prep, &dev));
    c->gpu = dev == GT_DEVICE_CUDA;
    gt_trace(c->gpu ? "first kernel" : "computing on the CPU");
    if (c->gpu) {
        gt_timer_start(&t, false, NULL);
        GT_TRY(gt_gs_gpu_create(&c->scene, &j->render, &c->g));
        gt_timings_add(&c->tm, "upload", gt_timer_stop(&t));
    }

    bool pattern = false;
    if (!c->one) {
        gt_gs_frame_pattern(j->output, &pattern); /* checked by gt_gs_job_check */
        c->y4m = !pattern;
    }
    c->pf = (c->W % 2 == 0 && c->H % 2 == 0) ? GT_PIX_YUV420P : GT_PIX_YUV444P;
    c->gpu_yuv = c->y4m && c->gpu;
    if (c->gpu_yuv) {
        GT_TRY(gt_gs_gpu_yuv_start(c->g, c->W, c->H, c->pf, GT_BT601, GT_RANGE_LIMITED));
    } else if (c->y4m) {
        c->rgb = malloc((size_t)c->W * c->H * 3);
        c->yuv = malloc(gt_pixfmt_frame_bytes(c->pf, c->W, c->H));
        if (!c->rgb || !c->yuv) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    if (c->y4m) GT_TRY(gt_yuv_create(j->output, true, c->W, c->H, c->pf, j->fps, 1, &c->yw));
    return GT_OK;
}

static gt_status render_frame(job_ctx *c, const gt_gs_camera *cam, gt_gs_image *dst)
{
    const gt_gs_job *j = c->j;
    int what = GT_GS_OUT_RGBA8 | (j->depth ? GT_GS_OUT_AUX : 0);
    gt_timings *tmp = j->timings ? &c->tm : NULL;
    if (c->gpu) return gt_gs_gpu_render(c->g, cam, dst, what, tmp);
    return gt_gs_render(false, &c->scene, cam, &j->render, dst, tmp);
}

static gt_status render_one(job_ctx *c)
{
    gt_status st = render_frame(c, &c->single, &c->im);
    if (st == GT_OK) {
        gt_timer t;
        gt_timer_start(&t, false, NULL);
        st = write_png(c->j->output, &c->im, c->j->alpha, c->j->png_level);
        if (st == GT_OK && c->j->depth) st = write_depth(c->j->depth, &c->im);
        gt_timings_add(&c->tm, "write", gt_timer_stop(&t));
    }
    return st;
}

/* Render frame f into buffer f%2 while the writer thread writes f-1. */
static gt_status render_frames(job_ctx *c, frame_writer *w)
{
    const gt_gs_job *j = c->j;
    gt_status st = GT_OK;
    for (int f = 0; f < c->nframes && st == GT_OK; f++) {
        /* buffer f%2 is free once frame f-2 is written */
        pthread_mutex_lock(&w->mu);
        while (w->written < f - 1 && w->st == GT_OK) pthread_cond_wait(&w->cv, &w->mu);
        bool werr = w->st != GT_OK;
        pthread_mutex_unlock(&w->mu);
        if (werr) break;
        gt_gs_camera cam; /* a camera of the list, or at the angle of its place in the whole orbit */
        if (c->list) cam = c->cams[c->first + f];
        else st = gt_gs_camera_orbit(&cam, c->centre, c->up, c->radius, c->elevation, c->first + f, j->orbit,
                                     c->fovy, c->W, c->H);
        if (st != GT_OK) break;
        gt_gs_image *im = &c->im2[f % 2];
        if (im->w != cam.width || im->h != cam.height) { /* PNGs of a list: each camera its size */
            gt_gs_image_free(im);
            st = gt_gs_image_alloc(im, cam.width, cam.height);
            if (st != GT_OK) break;
        }
        if (c->gpu_yuv) st = gt_gs_gpu_render_yuv(c->g, &cam, f % GT_GS_GPU_YUV_SLOTS, j->timings ? &c->tm : NULL);
        else st = render_frame(c, &cam, im);
        if (st != GT_OK) break;
        pthread_mutex_lock(&w->mu);
        w->posted = f + 1;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
    }
    return st;
}

static gt_status render_orbit(job_ctx *c, gt_progress *pg)
{
    gt_status st = GT_OK;
    frame_writer w;
    memset(&w, 0, sizeof w);
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    w.im = c->im2;
    w.y4m = c->y4m;
    w.alpha = c->j->alpha;
    w.png_level = c->j->png_level;
    w.pattern = c->j->output;
    w.first = c->first;
    w.yw = c->yw;
    w.rgb = c->rgb;
    w.yuv = c->yuv;
    w.pf = c->pf;
    w.g = c->g;
    gt_timings_init(&w.tm);
    w.gpu_yuv = c->gpu_yuv;
    w.pg = pg;
    pthread_t th;
    if (pthread_create(&th, NULL, writer_main, &w) != 0) {
        st = gt_fail(GT_ERR_RUNTIME, "cannot start the frame writer thread");
    } else {
        st = render_frames(c, &w);
        pthread_mutex_lock(&w.mu);
        w.stop = true;
        pthread_cond_broadcast(&w.cv);
        pthread_mutex_unlock(&w.mu);
        pthread_join(th, NULL);
        if (st == GT_OK && w.st != GT_OK) st = gt_fail(w.st, "%s", w.msg);
        merge_timings(&c->tm, &w.tm);
    }
    pthread_cond_destroy(&w.cv);
    pthread_mutex_destroy(&w.mu);
    return st;
}

static void report_timings(const job_ctx *c, double t_total)
{
    gt_timings_print(&c->tm, stderr, c->gpu ? "gsrender timings (GPU)" : "gsrender timings (CPU)");
    fprintf(stderr, "frames %d, %dx%d, %.3f ms/frame end to end, %.2f fps", c->nframes, c->W, c->H,
            t_total / c->nframes, 1000.0 * c->nframes / t_total);
    if (c->gpu)
        fprintf(stderr, ", pairs %zu (last frame), peak GPU memory %.1f MiB", gt_gs_gpu_last_pairs(c->g),
                gt_gs_gpu_peak_bytes() / 1048576.0);
    fprintf(stderr, "\n");
}

static gt_status run_job(const gt_gs_job *j)
{
    GT_TRY(gt_gs_job_check(j));
    job_ctx c;
    memset(&c, 0, sizeof c);
    c.j = j;
    c.list = gt_gs_job_all_views(j);
    c.one = j->orbit == 0 && !c.list;
    gt_timings_init(&c.tm);
    /* the CUDA start overlaps reading the cameras and the scene */
    gt_device_prepare_start(&c.prep, j->device, j->gpu, NULL);
    gt_status st = job_setup(&c);
    gt_device_prepare_join(&c.prep);
    if (st == GT_OK) {
        gt_progress pg;
        gt_progress_start(&pg, "frames", c.nframes);
        double t_all = gt_now_ms();
        st = c.one ? render_one(&c) : render_orbit(&c, &pg);
        gt_progress_end(&pg);
        double t_total = gt_now_ms() - t_all;
        gt_trace("job done");
        if (c.yw) {
            gt_status fs = gt_yuv_finish(c.yw, st == GT_OK);
            c.yw = NULL;
            if (st == GT_OK) st = fs;
        }
        if (st == GT_OK) gt_trace("output written");
        if (st == GT_OK && j->timings) report_timings(&c, t_total);
    }
    job_free(&c);
    return st;
}

gt_status gt_gs_render_view(const gt_gs_job *j)
{
    if (j->orbit != 0)
        return gt_fail(GT_ERR_USAGE, "gt_gs_render_view: orbit is %d frames; gt_gs_render_orbit renders orbits",
                       j->orbit);
    return run_job(j);
}

gt_status gt_gs_render_orbit(const gt_gs_job *j)
{
    if (j->orbit < 1)
        return gt_fail(GT_ERR_USAGE, "gt_gs_render_orbit: orbit is %d frames; give at least 1", j->orbit);
    return run_job(j);
}
