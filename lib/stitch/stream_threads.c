/* The yuvstitch job's helper threads (stream_internal.h): the writer, which
 * takes the stitched frames in order and writes them while the next ones
 * are read and stitched, and the CUDA thread, which starts the context and
 * then allocates the GPU's frame buffers as soon as the inputs' sizes are
 * known, while the main thread builds the plan. */
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/pin_prefault.h"
#include "common/timer.h"
#include "stitch/stream_internal.h"

static void *sj_writer_main(void *arg)
{
    job_ctx *c = arg;
    frame_writer *w = &c->w;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        double ti = gt_now_ms();
        while (w->written == w->posted && !w->stop) pthread_cond_wait(&w->cv, &w->mu);
        if (w->written > 0) w->idle_ms += gt_now_ms() - ti; /* starved: nothing queued */
        if (w->written == w->posted || w->st) break;        /* stopped and drained, or failed */
        long k = w->written;
        const uint8_t *buf = w->q[k % GT_STITCH_SLOTS];
        pthread_mutex_unlock(&w->mu);
        double t0 = gt_now_ms();
        gt_status st = sj_emit(c, buf, k);
        double dt = gt_now_ms() - t0;
        pthread_mutex_lock(&w->mu);
        w->ms += dt;
        if (st) {
            w->st = st;
            snprintf(w->msg, sizeof w->msg, "%s", gt_errmsg());
        } else {
            w->written++;
        }
        pthread_cond_broadcast(&w->cv);
        if (st) break;
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

gt_status sj_writer_start(job_ctx *c)
{
    pthread_mutex_init(&c->w.mu, NULL);
    pthread_cond_init(&c->w.cv, NULL);
    if (pthread_create(&c->w.th, NULL, sj_writer_main, c))
        return gt_fail(GT_ERR_RUNTIME, "cannot start the writer thread");
    c->w.started = true;
    return GT_OK;
}

static gt_status sj_writer_error(const frame_writer *w) { return gt_fail(w->st, "%s", w->msg); }

/* hand frame k (posted in order) to the writer */
gt_status sj_writer_post(frame_writer *w, const uint8_t *buf, long k)
{
    pthread_mutex_lock(&w->mu);
    gt_status st = w->st;
    if (!st) {
        w->q[k % GT_STITCH_SLOTS] = buf;
        w->posted = k + 1;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return st ? sj_writer_error(w) : GT_OK;
}

/* wait until frame k has been written (its slot can be reused) */
gt_status sj_writer_wait(job_ctx *c, long k)
{
    frame_writer *w = &c->w;
    if (k < 0) return GT_OK;
    double t0 = gt_now_ms();
    pthread_mutex_lock(&w->mu);
    while (w->written <= k && !w->st) pthread_cond_wait(&w->cv, &w->mu);
    gt_status st = w->st;
    pthread_mutex_unlock(&w->mu);
    gt_timings_add(&c->tm, "wait for writer", gt_now_ms() - t0);
    return st ? sj_writer_error(w) : GT_OK;
}

/* stop (after draining what was posted) and join; the writer's status */
gt_status sj_writer_stop(frame_writer *w)
{
    if (!w->started) return GT_OK;
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    w->started = false;
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    return w->st ? sj_writer_error(w) : GT_OK;
}

/* The CUDA thread: the context, then the frame buffers once the sizes come */
void *sj_device_prepare_main(void *arg)
{
    job_ctx *c = arg;
    const gt_stitch_job *j = c->j;
    gt_device_prepare(j->device, j->gpu);
    if (j->device == GT_DEVICE_CPU) return NULL;
    pthread_mutex_lock(&c->dev_mu);
    while (c->dev_sizes == 0) pthread_cond_wait(&c->dev_cv, &c->dev_mu);
    bool go = c->dev_sizes > 0;
    pthread_mutex_unlock(&c->dev_mu);
    int n = gt_gpu_count(NULL, 0);
    if (!go || j->gpu < 0 || j->gpu >= n) return NULL; /* gt_device_choose says why */
    double t0 = gt_now_ms();
    c->pre_st = gt_stitch_gpu_prealloc(c->pre_ncam, c->pre_in, c->pre_out, &c->pre);
    if (c->pre_st) snprintf(c->pre_msg, sizeof c->pre_msg, "%s", gt_errmsg());
    c->pre_ms = gt_now_ms() - t0;
    return NULL;
}

/* tell the CUDA thread the sizes of its buffers, or (ok false) that none come */
static void sj_post_sizes(job_ctx *c, bool ok)
{
    if (!c->dev_th_started) return;
    pthread_mutex_lock(&c->dev_mu);
    if (c->dev_sizes == 0) c->dev_sizes = ok ? 1 : -1;
    pthread_cond_broadcast(&c->dev_cv);
    pthread_mutex_unlock(&c->dev_mu);
}

void sj_join_device_prepare(job_ctx *c)
{
    if (!c->dev_th_started) return;
    sj_post_sizes(c, false); /* the job failed before the sizes were known */
    pthread_join(c->dev_th, NULL);
    c->dev_th_started = false;
    pthread_mutex_destroy(&c->dev_mu);
    pthread_cond_destroy(&c->dev_cv);
}

/* once the rig and the inputs are open: the frame sizes to the CUDA thread */
void sj_post_frame_sizes(job_ctx *c)
{
    gt_pixfmt f = gt_yuv_pixfmt(c->rd[0]);
    c->pre_ncam = c->rig.ncam;
    c->pre_in = gt_pixfmt_frame_bytes(f, gt_yuv_width(c->rd[0]), gt_yuv_height(c->rd[0]));
    c->pre_out = gt_pixfmt_frame_bytes(f, c->rig.pano_w, c->rig.pano_h);
    /* the buffers' pages faulted in now, while the context starts: the CUDA
     * thread then only page-locks them (before the sizes go, so it finds them) */
    if (c->dev_th_started && c->j->device != GT_DEVICE_CPU && c->pre_in > 0 && c->pre_out > 0) {
        double t0 = gt_now_ms();
        int omp_prev = gt_omp_leave_core();
        gt_stitch_gpu_prefault(c->pre_ncam, c->pre_in, c->pre_out);
        gt_omp_restore(omp_prev);
        gt_timings_add(&c->tm, "start: pinned buffers' pages (CPU)", gt_now_ms() - t0);
    }
    sj_post_sizes(c, c->pre_in > 0 && c->pre_out > 0); /* 0: sizes the plan refuses */
}

