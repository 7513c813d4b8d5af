/* The stpsfit jobs: fit a spline from two point files to a parameter file,
 * apply a parameter file to points or a PLY mesh, or resample a NRRD volume
 * through one, each on the chosen device with the program's --timings table
 * and atomic outputs. gt_tps_fit_job, gt_tps_apply_job and
 * gt_tps_apply_volume_job (tps.h) are the entry points; tools/stpsfit.c only
 * parses options into a gt_tps_job. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "common/guard.h"
#include "common/log.h"
#include "common/timer.h"
#include "common/trace.h"
#include "gt_config.h"
#include "io/ply.h"
#include "io/points.h"
#include "io/volume.h"
#include "tps/tps.h"
#include "tps/warp.h"
#if GT_HAVE_CUDA
#include "kernels/tps/tps_cuda.h"
#endif

void gt_tps_job_init(gt_tps_job *j)
{
    memset(j, 0, sizeof *j);
    j->kernel = GT_TPS_R2LOGR;
    j->device = GT_DEVICE_AUTO;
}

/* A job's run: the device is started on a thread (run) while the job reads
 * its input; the job then calls choose() before its first GPU call. A fit
 * under --device auto may instead run on the CPU (small_fit), decided before
 * anything of CUDA starts (cpu) or once the points are read (defer: the
 * device is then started, if at all, after the read). */
typedef struct job_ctx {
    const gt_tps_job *j;
    const gt_device_warmup *warm;
    gt_device_prep prep;
    gt_device_kind dev;
    bool chosen;
    bool cpu, defer;
    gt_timings tm;
} job_ctx;

/* The plain fit (a given lambda, no GCV) on the CPU, in ms, on `threads`
 * threads: its O(n^3) steps (the Cholesky of Q2^T K Q2 is ~3/4 of it), at a
 * rate a fifth under the one measured on a 2-core machine (n = 1742: the
 * whole command 150-192 ms on 2 threads, scripts/bench/RESULTS.md). */
static double cpu_fit_ms(size_t n, int threads)
{
    return (double)n * (double)n * (double)n / (14e6 * (threads > 0 ? threads : 1));
}

/* Fits the CPU ends in this long finish before CUDA would have started: on
 * the GPU machine a process that only creates and releases a context takes
 * 0.29-0.52 s from exec to exit, stpsfit's GPU fit of n = 1742 0.42-0.48 s. */
#define CPU_FIT_MAX_MS 200.0

bool gt_tps_fit_prefers_cpu(size_t n, int threads)
{
    return cpu_fit_ms(n, threads) <= CPU_FIT_MAX_MS;
}

static int fit_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* Bounds on the points in a file from its size: a point takes at least 6
 * bytes (text "0 0 0" and a newline; binary PLY: 12) and, in the files
 * stpsfit reads, at most 128; false where the size says nothing (a pipe). */
static bool points_bounds(const char *path, size_t *lo, size_t *hi)
{
    struct stat st;
    if (!path || !strcmp(path, "-") || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return false;
    *lo = (size_t)st.st_size / 128;
    *hi = (size_t)st.st_size / 6;
    return true;
}

/* join the preparing thread and resolve the device, reporting its errors */
static gt_status choose(job_ctx *c)
{
    double t0 = gt_now_ms();
    gt_device_prepare_join(&c->prep);
    GT_TRY(gt_device_choose(c->cpu ? GT_DEVICE_CPU : c->j->device, c->j->gpu, &c->dev));
    c->chosen = true;
    if (c->dev == GT_DEVICE_CUDA) gt_timings_add(&c->tm, "device (rest of CUDA start)", gt_now_ms() - t0);
    gt_trace(c->dev == GT_DEVICE_CUDA ? "first kernel" : "computing on the CPU");
    return GT_OK;
}

static gt_status do_fit(job_ctx *c)
{
    const gt_tps_job *j = c->j;
    gt_timings *tm = &c->tm;
    double *src = NULL, *dst = NULL;
    size_t n = 0, m = 0;
    gt_tps t;
    gt_tps_init(&t);
    gt_tps_gcv curve = {0};
    double t0 = gt_now_ms();
    gt_status s = gt_points_read_any(j->source, &src, &n);
    if (s == GT_OK) s = gt_points_read_any(j->target, &dst, &m);
    gt_timings_add(tm, "read", gt_now_ms() - t0);
    if (s == GT_OK && n != m)
        s = gt_fail(GT_ERR_DATA, "SOURCE '%s' has %zu points but TARGET '%s' has %zu: they must pair up",
                    j->source, n, j->target, m);
    if (s == GT_OK && c->defer) { /* the size decides now */
        c->cpu = gt_tps_fit_prefers_cpu(n, fit_threads());
        if (!c->cpu) gt_device_prepare_start(&c->prep, j->device, j->gpu, c->warm);
    }
    if (s == GT_OK && c->cpu)
        gt_info("--device auto: the CPU fits %zu points in about %.0f ms on %d threads, before CUDA would have "
                "started (--device cuda for the GPU)", n, cpu_fit_ms(n, fit_threads()), fit_threads());
    gt_trace("input read");
    gt_tps_fit_opts o = {.kernel = j->kernel, .lambda = j->lambda, .gcv = j->gcv, .timings = tm};
    if (o.gcv) o.gcv_out = &curve;
    gt_tps_plan plan = {0};
    if (s == GT_OK) { /* the host part (checks, QR) while the CUDA context starts */
        s = gt_tps_fit_plan(src, dst, n, &o, &plan);
        if (s != GT_OK) gt_errmsg_prefix("%s -> %s", j->source, j->target);
        else gt_trace("fit planned");
    }
    if (s == GT_OK) s = choose(c);
    if (s == GT_OK) {
        o.device = c->dev;
        s = gt_tps_fit_planned(src, &plan, &o, &t);
        if (s != GT_OK && s != GT_ERR_GPU) gt_errmsg_prefix("%s -> %s", j->source, j->target);
        gt_trace("job done");
    }
    gt_tps_plan_free(&plan);
    if (s == GT_OK && o.gcv) {
        if (gt_verbosity() >= 1) {
            fprintf(stderr, "# GCV curve: lambda score\n");
            for (int i = 0; i < curve.npts; i++)
                fprintf(stderr, "%.9g %.9g\n", curve.lambda[i], curve.score[i]);
        }
        gt_notice("lambda chosen by GCV: %.9g (GCV score %.6g)", t.lambda, curve.best_score);
    }
    if (s == GT_OK) {
        double t2 = gt_now_ms();
        s = gt_tps_write(j->output, &t);
        gt_timings_add(tm, "write", gt_now_ms() - t2);
        if (s == GT_OK) gt_trace("output written");
    }
    gt_tps_gcv_free(&curve);
    gt_tps_free(&t);
    free(src);
    free(dst);
    return s;
}

/* Warp the x, y (and z) of every vertex of a PLY mesh; its other properties
 * and its faces are kept. */
static gt_status apply_ply(job_ctx *c, const gt_tps *t)
{
    const gt_tps_job *j = c->j;
    gt_timings *tm = &c->tm;
    const char *in = j->input;
    double t0 = gt_now_ms();
    gt_ply_mesh m;
    memset(&m, 0, sizeof m);
    gt_status s = gt_ply_read(in, &m);
    gt_timings_add(tm, "read", gt_now_ms() - t0);
    int cx = -1, cy = -1, cz = -1;
    if (s == GT_OK) {
        cx = gt_ply_find(&m, "x");
        cy = gt_ply_find(&m, "y");
        cz = gt_ply_find(&m, "z");
        if (cx < 0 || cy < 0) s = gt_fail(GT_ERR_DATA, "%s: the vertex element has no x and y properties", in);
    }
    gt_trace("input read");
    if (s == GT_OK) s = choose(c);
    double *p = NULL;
    if (s == GT_OK && m.nvert > 0) {
        p = malloc(m.nvert * 3 * sizeof(double));
        if (!p) s = gt_fail(GT_ERR_RUNTIME, "out of memory for %zu points", m.nvert);
    }
    if (s == GT_OK && m.nvert > 0) {
        const int np = m.nprops;
        for (size_t v = 0; v < m.nvert; v++) {
            p[3 * v] = m.vdata[v * np + cx];
            p[3 * v + 1] = m.vdata[v * np + cy];
            p[3 * v + 2] = cz >= 0 ? m.vdata[v * np + cz] : 0.0;
        }
        s = gt_tps_eval(t, p, m.nvert, p, c->dev, tm);
        gt_trace("job done");
        if (s == GT_OK)
            for (size_t v = 0; v < m.nvert; v++) {
                m.vdata[v * np + cx] = (float)p[3 * v];
                m.vdata[v * np + cy] = (float)p[3 * v + 1];
                if (cz >= 0) m.vdata[v * np + cz] = (float)p[3 * v + 2];
            }
    }
    if (s == GT_OK) {
        double t2 = gt_now_ms();
        s = gt_ply_write(j->output, &m, j->ascii ? GT_PLY_ASCII : m.format);
        gt_timings_add(tm, "write", gt_now_ms() - t2);
        if (s == GT_OK) gt_trace("output written");
    }
    free(p);
    gt_ply_free(&m);
    return s;
}

static gt_status apply_points(job_ctx *c, const gt_tps *t)
{
    const gt_tps_job *j = c->j;
    gt_timings *tm = &c->tm;
    double t0 = gt_now_ms();
    double *p = NULL;
    size_t n = 0;
    gt_status s = gt_points_read(j->input, &p, &n);
    gt_timings_add(tm, "read", gt_now_ms() - t0);
    gt_trace("input read");
    if (s == GT_OK) s = choose(c);
    if (s == GT_OK) {
        s = gt_tps_eval(t, p, n, p, c->dev, tm);
        gt_trace("job done");
    }
    if (s == GT_OK) {
        double t2 = gt_now_ms();
        s = gt_points_write(j->output, p, n);
        gt_timings_add(tm, "write", gt_now_ms() - t2);
        if (s == GT_OK) gt_trace("output written");
    }
    free(p);
    return s;
}

static gt_status do_apply(job_ctx *c)
{
    const gt_tps_job *j = c->j;
    gt_tps t;
    GT_TRY(gt_tps_read(j->params, &t));
    gt_status s = gt_points_is_ply_file(j->input) ? apply_ply(c, &t) : apply_points(c, &t);
    gt_tps_free(&t);
    return s;
}

static gt_status do_volume(job_ctx *c)
{
    const gt_tps_job *j = c->j;
    gt_timings *tm = &c->tm;
    gt_tps t;
    GT_TRY(gt_tps_read(j->params, &t));
    gt_volume v, w;
    memset(&v, 0, sizeof v);
    memset(&w, 0, sizeof w);
    double t0 = gt_now_ms();
    gt_status s = gt_nrrd_read(j->input, &v);
    gt_timings_add(tm, "read", gt_now_ms() - t0);
    gt_trace("input read");
    if (s == GT_OK) s = choose(c);
    if (s == GT_OK) {
        s = gt_tps_warp_volume(&t, &v, &w, c->dev, tm);
        gt_trace("job done");
    }
    if (s == GT_OK) {
        double t2 = gt_now_ms();
        s = gt_nrrd_write(j->output, &w, NULL, 0);
        gt_timings_add(tm, "write", gt_now_ms() - t2);
        if (s == GT_OK) gt_trace("output written");
    }
    gt_volume_free(&v);
    free(w.data);
    gt_tps_free(&t);
    return s;
}

typedef gt_status (*job_fn)(job_ctx *c);

#if GT_HAVE_CUDA
/* beside the context creation: open cuBLAS and cuSOLVER for GCV (the plain
 * fit uses neither) */
static void load_fit(void *arg)
{
    const gt_tps_job *j = arg;
    if (j->gcv) gt_tps_cuda_load_libs();
}
/* then, with the context: their handles and one small fit */
static void warm_fit(void *arg)
{
    const gt_tps_job *j = arg;
    gt_tps_cuda_warm((int)j->kernel, j->gcv);
}
#endif

/* Start the device on a thread (with warm, where the job has one), run the
 * job, which reads its input and then chooses the device, and print the
 * stage table (also after a failure, as stpsfit always has). */
static gt_status run(const gt_tps_job *j, job_fn fn, const gt_device_warmup *warm, bool small_fit)
{
    job_ctx c = {.j = j, .warm = warm, .dev = GT_DEVICE_CPU};
    gt_timings_init(&c.tm);
    size_t lo[2], hi[2];
    /* (--gpu N past 0 asks for a GPU: its checks stay as they were) */
    if (small_fit && j->device == GT_DEVICE_AUTO && j->gpu == 0 && GT_HAVE_CUDA) {
        const int th = fit_threads();
        if (!points_bounds(j->source, &lo[0], &hi[0]) || !points_bounds(j->target, &lo[1], &hi[1]))
            c.defer = true;
        else if (gt_tps_fit_prefers_cpu(hi[0] < hi[1] ? hi[0] : hi[1], th))
            c.cpu = true; /* at most that many points: the CPU, nothing of CUDA started */
        else
            c.defer = gt_tps_fit_prefers_cpu(lo[0] > lo[1] ? lo[0] : lo[1], th);
    }
    gt_device_prepare_start(&c.prep, c.cpu || c.defer ? GT_DEVICE_CPU : j->device, j->gpu, warm);
    gt_status s = fn(&c);
    gt_device_prepare_join(&c.prep);
    if (j->timings)
        gt_timings_print(&c.tm, stderr,
                         !c.chosen ? "stpsfit" : c.dev == GT_DEVICE_CPU ? "stpsfit (cpu)" : "stpsfit (cuda)");
    return s;
}

static gt_status need(const char *path, const char *what, const char *job)
{
    return path ? GT_OK : gt_fail(GT_ERR_USAGE, "%s: no %s given", job, what);
}

gt_status gt_tps_fit_job(const gt_tps_job *j)
{
    GT_TRY(need(j->source, "source points", "gt_tps_fit_job"));
    GT_TRY(need(j->target, "target points", "gt_tps_fit_job"));
    GT_TRY(need(j->output, "output", "gt_tps_fit_job"));
    /* a plain fit may be small enough for the CPU (GCV's eigen solver is
     * ~10x the plain fit there: n = 1742 took 1.8 s on 2 cores) */
    const bool small = !j->gcv;
#if GT_HAVE_CUDA
    const gt_device_warmup w = {load_fit, warm_fit, (void *)j};
    return run(j, do_fit, &w, small);
#else
    return run(j, do_fit, NULL, small);
#endif
}

gt_status gt_tps_apply_job(const gt_tps_job *j)
{
    GT_TRY(need(j->params, "parameter file", "gt_tps_apply_job"));
    GT_TRY(need(j->input, "input points", "gt_tps_apply_job"));
    GT_TRY(need(j->output, "output", "gt_tps_apply_job"));
    return run(j, do_apply, NULL, false);
}

gt_status gt_tps_apply_volume_job(const gt_tps_job *j)
{
    GT_TRY(need(j->params, "parameter file", "gt_tps_apply_volume_job"));
    GT_TRY(need(j->input, "input volume", "gt_tps_apply_volume_job"));
    GT_TRY(need(j->output, "output", "gt_tps_apply_volume_job"));
    return run(j, do_volume, NULL, false);
}

const char *gt_tps_job_output_format(const gt_tps_job *j, gt_tps_mode mode)
{
    if (mode == GT_TPS_APPLY) return gt_points_is_ply_file(j->input) ? "ply" : "points";
    return mode == GT_TPS_APPLY_VOLUME ? "nrrd" : "tps";
}

gt_status gt_tps_job_check_paths(const gt_tps_job *j, gt_tps_mode mode, bool format_given)
{
    char datafile[1024] = "";
    if (mode == GT_TPS_APPLY_VOLUME) gt_volume_data_file(j->input, datafile, sizeof datafile);
    gt_guard g;
    gt_guard_init(&g);
    if (mode == GT_TPS_FIT) {
        gt_guard_input(&g, j->source, "SOURCE");
        gt_guard_input(&g, j->target, "TARGET");
    } else {
        gt_guard_input(&g, j->params, "--params");
        gt_guard_input(&g, j->input, mode == GT_TPS_APPLY ? "--apply" : "--apply-volume");
        gt_guard_input(&g, datafile[0] ? datafile : NULL, "the NRRD's data file");
    }
    gt_guard_output(&g, j->output, "-o", format_given ? NULL : gt_tps_job_output_format(j, mode), "--out-format");
    gt_status st = gt_guard_check(&g);
    gt_guard_free(&g);
    return st;
}
