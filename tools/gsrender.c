/* gsrender: render a 3D Gaussian Splatting scene (the reference
 * rasterizer's forward pass) to PNG, a PNG sequence or a Y4M stream. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/device.h"
#include "common/log.h"
#include "common/progress.h"
#include "common/status.h"
#include "common/timer.h"
#include "gs/gs.h"
#include "io/image.h"
#include "io/yuv.h"

static const char *USAGE =
    "Usage: gsrender [options] SCENE -o OUT\n"
    "Render a 3D Gaussian Splatting scene (the reference PLY of 3DGS training,\n"
    "or a .splat file) with the reference rasterizer's forward pass.\n"
    "\n"
    "Output:\n"
    "  -o, --output FILE       PNG for one view; for --orbit a pattern with one %d\n"
    "                          (frame_%04d.png), or a .y4m file, or - (Y4M on stdout)\n"
    "      --alpha             write RGBA PNGs (alpha = 1 - final transmittance)\n"
    "      --depth FILE        expected depth of one view: .pfm (float, metres of the\n"
    "                          scene) or .pgm (16-bit, 65535 = the largest depth)\n"
    "      --fps N             frame rate written to the Y4M header (default 30)\n"
    "Camera (one of):\n"
    "      --cameras FILE      cameras.json of the reference training\n"
    "      --view NAME|N       camera by img_name, else by index from 0 (default 0)\n"
    "      --eye X,Y,Z --target X,Y,Z [--up X,Y,Z] [--fovy DEG] [--size WxH]\n"
    "                          look-at camera (defaults: up 0,1,0, fovy 50, 1280x720)\n"
    "      --orbit N           N views on a circle around --target (default: the\n"
    "                          scene's centre, the median position), axis --up\n"
    "      --orbit-radius R    default 2.5 x the scene's radius (75th percentile of\n"
    "                          the distances to the centre)\n"
    "      --orbit-elevation D degrees above the orbit plane (default 20)\n"
    "  With none of these: orbit view 0 of the defaults.\n"
    "Rendering:\n"
    "      --background R,G,B  background colour in [0,1] (default 0,0,0)\n"
    "      --sh-degree N       use SH up to degree N (0..3; default: the scene's)\n"
    "      --scale-modifier F  multiply every Gaussian's scale by F (default 1)\n"
    "      --antialias         Mip-Splatting/gsplat opacity-compensated 2-D filter\n"
    "      --tile-binning exact|square  GPU binning of Gaussians to 16x16 tiles: the\n"
    "                          tiles where alpha can reach 1/255 (default), or the\n"
    "                          reference's bounding square (same image, slower)\n"
    "\n" GT_COMMON_HELP
    "\nExit status: 0 ok, 1 runtime error, 2 usage, 3 bad input data, 4 GPU error.\n";

enum {
    O_CAMERAS = GT_OPT_TOOL_BASE, O_VIEW, O_EYE, O_TARGET, O_UP, O_FOVY, O_SIZE, O_ORBIT, O_ORADIUS,
    O_OELEV, O_BG, O_SHDEG, O_SCALE, O_ALPHA, O_DEPTH, O_AA, O_FPS, O_BINNING
};

typedef struct {
    const char *scene, *out, *cameras, *view, *depth;
    double eye[3], target[3], up[3], fovy, oradius, oelev;
    bool have_eye, have_target, have_up, have_size, alpha;
    int w, h, orbit, fps;
    gt_gs_params prm;
    gt_common_opts common;
} opts;

/* one %d-style conversion (%d, %5d, %05d) and no other % but %% */
static bool frame_pattern(const char *s, bool *has)
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

static gt_status write_png(const char *path, const gt_gs_image *im, bool alpha)
{
    if (alpha) return gt_png_write(path, im->w, im->h, 4, im->rgba8);
    size_t np = (size_t)im->w * im->h;
    uint8_t *rgb = malloc(np * 3);
    if (!rgb) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    for (size_t i = 0; i < np; i++) memcpy(rgb + 3 * i, im->rgba8 + 4 * i, 3);
    gt_status st = gt_png_write(path, im->w, im->h, 3, rgb);
    free(rgb);
    return st;
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
 * the pipe overlap the GPU work. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int posted, written;
    bool stop;
    gt_status st;
    char msg[1024];
    gt_gs_image *im; /* [2] */
    bool y4m, alpha;
    const char *pattern;
    gt_yuv_writer *yw;
    uint8_t *rgb, *yuv;
    gt_pixfmt pf;
    double write_ms;
    gt_progress *pg;
} frame_writer;

static gt_status write_one(frame_writer *w, int f)
{
    const gt_gs_image *im = &w->im[f % 2];
    if (w->y4m) {
        size_t np = (size_t)im->w * im->h;
        for (size_t i = 0; i < np; i++) memcpy(w->rgb + 3 * i, im->rgba8 + 4 * i, 3);
        GT_TRY(gt_rgb_to_yuv(w->rgb, im->w, im->h, GT_BT601, GT_RANGE_LIMITED, w->yuv, w->pf));
        return gt_yuv_write_frame(w->yw, w->yuv);
    }
    char path[4096];
    snprintf(path, sizeof path, w->pattern, f);
    return write_png(path, im, w->alpha);
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
        double t0 = gt_now_ms();
        gt_status st = write_one(w, f);
        w->write_ms += gt_now_ms() - t0;
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

static gt_status run(opts *o)
{
    gt_timings tm;
    gt_timings_init(&tm);
    gt_timer t;
    gt_device_kind dev;
    GT_TRY(gt_device_choose(o->common.device, o->common.gpu, &dev));
    bool gpu = dev == GT_DEVICE_CUDA;

    /* cameras */
    gt_gs_camera *cams = NULL;
    int ncams = 0;
    if (o->cameras) GT_TRY(gt_gs_cameras_read(o->cameras, &cams, &ncams));
    gt_gs_camera single;
    bool one = o->orbit == 0;
    gt_status st = GT_OK;
    gt_gs_scene scene;
    memset(&scene, 0, sizeof scene);
    gt_gs_gpu *g = NULL;
    gt_gs_image im;
    memset(&im, 0, sizeof im);
    gt_gs_image im2[2];
    memset(im2, 0, sizeof im2);
    gt_yuv_writer *yw = NULL;
    uint8_t *rgb = NULL, *yuv = NULL;

    if (o->cameras && one) {
        /* an img_name first (names like "00001" are common), else an index */
        int idx = -1;
        const char *v = o->view ? o->view : "0";
        for (int i = 0; i < ncams && idx < 0; i++)
            if (!strcmp(cams[i].name, v)) idx = i;
        if (idx < 0) {
            char *end;
            long k = strtol(v, &end, 10);
            if (!*v || *end != 0) {
                st = gt_fail(GT_ERR_USAGE, "--view '%s': no camera with that img_name in %s", v,
                             o->cameras);
                goto out;
            }
            if (k < 0 || k >= ncams) {
                st = gt_fail(GT_ERR_USAGE, "--view %ld out of range: %s has %d cameras (0..%d)", k,
                             o->cameras, ncams, ncams - 1);
                goto out;
            }
            idx = (int)k;
        }
        single = cams[idx];
    } else if (one && o->have_eye) {
        if ((st = gt_gs_camera_lookat(&single, o->eye, o->target, o->up, o->fovy, o->w, o->h)) != GT_OK)
            goto out;
    }

    gt_timer_start(&t, false, NULL);
    if ((st = gt_gs_scene_read(o->scene, &scene)) != GT_OK) goto out;
    gt_timings_add(&tm, "load", gt_timer_stop(&t));
    gt_info("%zu Gaussians, SH degree %d", scene.n, scene.sh_degree);

    /* orbit (or default) geometry */
    double centre[3], up[3] = {0, 1, 0}, radius;
    {
        float c[3], ext;
        gt_gs_scene_bounds(&scene, c, &ext);
        for (int k = 0; k < 3; k++) centre[k] = o->have_target ? o->target[k] : c[k];
        radius = o->oradius > 0 ? o->oradius : 2.5 * ext;
        if (o->have_up) {
            memcpy(up, o->up, sizeof up);
        } else if (ncams > 0) {
            /* the training cameras' mean "up" (-y of each camera) */
            double u[3] = {0, 0, 0}, l = 0;
            for (int i = 0; i < ncams; i++)
                for (int k = 0; k < 3; k++) u[k] -= cams[i].R[3 + k];
            for (int k = 0; k < 3; k++) l += u[k] * u[k];
            if (l > 1e-12)
                for (int k = 0; k < 3; k++) up[k] = u[k] / sqrt(l);
        }
        if (!o->have_size && ncams > 0) {
            o->w = cams[0].width;
            o->h = cams[0].height;
        }
    }
    int nframes = one ? 1 : o->orbit;
    if (one && !o->cameras && !o->have_eye)
        if ((st = gt_gs_camera_orbit(&single, centre, up, radius, o->oelev, 0, 1, o->fovy, o->w, o->h)) !=
            GT_OK)
            goto out;
    int W = one ? single.width : o->w, H = one ? single.height : o->h;
    if (one) {
        if ((st = gt_gs_image_alloc(&im, W, H)) != GT_OK) goto out;
    } else {
        for (int k = 0; k < 2; k++)
            if ((st = gt_gs_image_alloc(&im2[k], W, H)) != GT_OK) goto out;
    }

    if (gpu) {
        gt_timer_start(&t, false, NULL);
        if ((st = gt_gs_gpu_create(&scene, &o->prm, &g)) != GT_OK) goto out;
        gt_timings_add(&tm, "upload", gt_timer_stop(&t));
    }

    bool pattern = false, y4m = false;
    if (!one) {
        frame_pattern(o->out, &pattern); /* checked in main */
        y4m = !pattern;
    }
    gt_pixfmt pf = (W % 2 == 0 && H % 2 == 0) ? GT_PIX_YUV420P : GT_PIX_YUV444P;
    if (y4m) {
        rgb = malloc((size_t)W * H * 3);
        yuv = malloc(gt_pixfmt_frame_bytes(pf, W, H));
        if (!rgb || !yuv) {
            st = gt_fail(GT_ERR_RUNTIME, "out of memory");
            goto out;
        }
        if ((st = gt_yuv_create(o->out, true, W, H, pf, o->fps, 1, &yw)) != GT_OK) goto out;
    }

    gt_progress pg;
    gt_progress_start(&pg, "frames", nframes);
    double t_all = gt_now_ms();
    int what = GT_GS_OUT_RGBA8 | (o->depth ? GT_GS_OUT_AUX : 0);
    gt_timings *tmp = o->common.timings ? &tm : NULL;
    if (one) {
        if (gpu) st = gt_gs_gpu_render(g, &single, &im, what, tmp);
        else st = gt_gs_render(false, &scene, &single, &o->prm, &im, tmp);
        if (st == GT_OK) {
            gt_timer_start(&t, false, NULL);
            st = write_png(o->out, &im, o->alpha);
            if (st == GT_OK && o->depth) st = write_depth(o->depth, &im);
            gt_timings_add(&tm, "write", gt_timer_stop(&t));
        }
    } else {
        frame_writer w;
        memset(&w, 0, sizeof w);
        pthread_mutex_init(&w.mu, NULL);
        pthread_cond_init(&w.cv, NULL);
        w.im = im2;
        w.y4m = y4m;
        w.alpha = o->alpha;
        w.pattern = o->out;
        w.yw = yw;
        w.rgb = rgb;
        w.yuv = yuv;
        w.pf = pf;
        w.pg = &pg;
        pthread_t th;
        if (pthread_create(&th, NULL, writer_main, &w) != 0) {
            st = gt_fail(GT_ERR_RUNTIME, "cannot start the frame writer thread");
        } else {
            for (int f = 0; f < nframes && st == GT_OK; f++) {
                /* buffer f%2 is free once frame f-2 is written */
                pthread_mutex_lock(&w.mu);
                while (w.written < f - 1 && w.st == GT_OK) pthread_cond_wait(&w.cv, &w.mu);
                bool werr = w.st != GT_OK;
                pthread_mutex_unlock(&w.mu);
                if (werr) break;
                gt_gs_camera cam;
                st = gt_gs_camera_orbit(&cam, centre, up, radius, o->oelev, f, nframes, o->fovy, W, H);
                if (st != GT_OK) break;
                gt_gs_image *dst = &im2[f % 2];
                if (gpu) st = gt_gs_gpu_render(g, &cam, dst, what, tmp);
                else st = gt_gs_render(false, &scene, &cam, &o->prm, dst, tmp);
                if (st != GT_OK) break;
                pthread_mutex_lock(&w.mu);
                w.posted = f + 1;
                pthread_cond_broadcast(&w.cv);
                pthread_mutex_unlock(&w.mu);
            }
            pthread_mutex_lock(&w.mu);
            w.stop = true;
            pthread_cond_broadcast(&w.cv);
            pthread_mutex_unlock(&w.mu);
            pthread_join(th, NULL);
            if (st == GT_OK && w.st != GT_OK) st = gt_fail(w.st, "%s", w.msg);
            gt_timings_add(&tm, "write (overlapped)", w.write_ms);
        }
        pthread_cond_destroy(&w.cv);
        pthread_mutex_destroy(&w.mu);
    }
    gt_progress_end(&pg);
    double t_total = gt_now_ms() - t_all;
    if (yw) {
        gt_status fs = gt_yuv_finish(yw, st == GT_OK);
        yw = NULL;
        if (st == GT_OK) st = fs;
    }
    if (st == GT_OK && o->common.timings) {
        gt_timings_print(&tm, stderr, gpu ? "gsrender timings (GPU)" : "gsrender timings (CPU)");
        fprintf(stderr, "frames %d, %dx%d, %.3f ms/frame end to end, %.2f fps", nframes, W, H,
                t_total / nframes, 1000.0 * nframes / t_total);
        if (gpu)
            fprintf(stderr, ", pairs %zu (last frame), peak GPU memory %.1f MiB", gt_gs_gpu_last_pairs(g),
                    gt_gs_gpu_peak_bytes() / 1048576.0);
        fprintf(stderr, "\n");
    }
out:
    if (yw) gt_yuv_finish(yw, false);
    free(rgb);
    free(yuv);
    gt_gs_gpu_destroy(g);
    gt_gs_image_free(&im);
    gt_gs_image_free(&im2[0]);
    gt_gs_image_free(&im2[1]);
    gt_gs_scene_free(&scene);
    free(cams);
    return st;
}

int main(int argc, char **argv)
{
    gt_set_progname("gsrender");
    opts o;
    memset(&o, 0, sizeof o);
    gt_common_opts_init(&o.common);
    gt_gs_params_init(&o.prm);
    o.fovy = 50;
    o.oelev = 20;
    o.w = 1280;
    o.h = 720;
    o.fps = 30;
    o.up[1] = 1;
    static const struct option lo[] = {
        {"output", required_argument, 0, 'o'},
        {"cameras", required_argument, 0, O_CAMERAS},
        {"view", required_argument, 0, O_VIEW},
        {"eye", required_argument, 0, O_EYE},
        {"target", required_argument, 0, O_TARGET},
        {"up", required_argument, 0, O_UP},
        {"fovy", required_argument, 0, O_FOVY},
        {"size", required_argument, 0, O_SIZE},
        {"orbit", required_argument, 0, O_ORBIT},
        {"orbit-radius", required_argument, 0, O_ORADIUS},
        {"orbit-elevation", required_argument, 0, O_OELEV},
        {"background", required_argument, 0, O_BG},
        {"sh-degree", required_argument, 0, O_SHDEG},
        {"scale-modifier", required_argument, 0, O_SCALE},
        {"alpha", no_argument, 0, O_ALPHA},
        {"depth", required_argument, 0, O_DEPTH},
        {"antialias", no_argument, 0, O_AA},
        {"fps", required_argument, 0, O_FPS},
        {"tile-binning", required_argument, 0, O_BINNING},
        GT_COMMON_LONGOPTS,
        {0, 0, 0, 0}};
    int c;
    gt_status st = GT_OK;
    while (st == GT_OK && (c = getopt_long(argc, argv, "o:" GT_COMMON_SHORTOPTS, lo, NULL)) != -1) {
        gt_cli_result cr = gt_common_option(&o.common, c, optarg);
        if (cr == GT_CLI_HANDLED) continue;
        if (cr == GT_CLI_EXIT_OK) return 0;
        if (cr == GT_CLI_ERROR) return gt_report(GT_ERR_USAGE);
        double v3[3];
        switch (c) {
        case 'h': fputs(USAGE, stdout); return 0;
        case 'o': o.out = optarg; break;
        case O_CAMERAS: o.cameras = optarg; break;
        case O_VIEW: o.view = optarg; break;
        case O_EYE: st = gt_parse_vec("--eye", optarg, 3, o.eye), o.have_eye = true; break;
        case O_TARGET: st = gt_parse_vec("--target", optarg, 3, o.target), o.have_target = true; break;
        case O_UP: st = gt_parse_vec("--up", optarg, 3, o.up), o.have_up = true; break;
        case O_FOVY: st = gt_parse_double("--fovy", optarg, 1e-3, 179.0, &o.fovy); break;
        case O_SIZE:
            st = gt_parse_wxh("--size", optarg, GT_GS_MAX_SIZE, &o.w, &o.h), o.have_size = true;
            break;
        case O_ORBIT: st = gt_parse_int("--orbit", optarg, 1, 1000000, &o.orbit); break;
        case O_ORADIUS: st = gt_parse_double("--orbit-radius", optarg, 1e-9, 1e12, &o.oradius); break;
        case O_OELEV: st = gt_parse_double("--orbit-elevation", optarg, -89.9, 89.9, &o.oelev); break;
        case O_BG:
            st = gt_parse_vec("--background", optarg, 3, v3);
            for (int k = 0; k < 3 && st == GT_OK; k++) {
                if (v3[k] < 0 || v3[k] > 1)
                    st = gt_usage_error("--background '%s': components must be in [0, 1]", optarg);
                o.prm.bg[k] = (float)v3[k];
            }
            break;
        case O_SHDEG: st = gt_parse_int("--sh-degree", optarg, 0, 3, &o.prm.sh_degree); break;
        case O_SCALE: {
            double d;
            st = gt_parse_double("--scale-modifier", optarg, 1e-6, 1e6, &d);
            o.prm.scale_modifier = (float)d;
            break;
        }
        case O_ALPHA: o.alpha = true; break;
        case O_DEPTH: o.depth = optarg; break;
        case O_AA: o.prm.antialias = true; break;
        case O_FPS: st = gt_parse_int("--fps", optarg, 1, 1000, &o.fps); break;
        case O_BINNING: {
            static const char *const names[] = {"exact", "square"};
            int k = 0;
            st = gt_parse_enum("--tile-binning", optarg, names, 2, &k);
            o.prm.square_binning = k == 1;
            break;
        }
        default: return gt_report(gt_usage_error("try 'gsrender --help'"));
        }
    }
    if (st != GT_OK) return gt_report(st);
    if (optind + 1 != argc)
        return gt_report(gt_usage_error(optind >= argc ? "missing SCENE (try 'gsrender --help')"
                                                       : "one SCENE expected (try 'gsrender --help')"));
    o.scene = argv[optind];
    if (!o.out) return gt_report(gt_usage_error("missing -o OUT (try 'gsrender --help')"));
    if (o.have_eye != o.have_target && !o.orbit)
        return gt_report(gt_usage_error("--eye and --target go together"));
    if (o.have_eye && o.cameras)
        return gt_report(gt_usage_error("--cameras and --eye/--target are two ways to give a camera: pick one"));
    if (o.view && !o.cameras) return gt_report(gt_usage_error("--view needs --cameras"));
    if (o.orbit && (o.view || o.have_eye))
        return gt_report(gt_usage_error("--orbit makes its own cameras: drop --view/--eye"));
    if (o.depth && o.orbit) return gt_report(gt_usage_error("--depth is for a single view, not --orbit"));
    if (o.depth && !ends_with(o.depth, ".pfm") && !ends_with(o.depth, ".pgm"))
        return gt_report(gt_usage_error("--depth '%s': give a .pfm or .pgm file", o.depth));
    if (o.orbit) {
        bool pat = false;
        if (!frame_pattern(o.out, &pat))
            return gt_report(gt_usage_error("-o '%s': a frame pattern takes one %%d (e.g. frame_%%04d.png)", o.out));
        if (!pat && strcmp(o.out, "-") != 0 && !ends_with(o.out, ".y4m"))
            return gt_report(gt_usage_error(
                "-o '%s': with --orbit give a pattern like frame_%%04d.png, a .y4m file or -", o.out));
    }
    if (!o.orbit && !strcmp(o.out, "-"))
        return gt_report(gt_usage_error("-o -: standard output is for --orbit Y4M streams; give a .png"));
    st = run(&o);
    gt_device_shutdown();
    return gt_report(st);
}
