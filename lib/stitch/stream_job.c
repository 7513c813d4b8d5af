/* The yuvstitch job: N camera streams in, one panorama stream out, on the
 * GPU (three pinned slots in flight) or the CPU reference, with the
 * program's path checks, messages, progress bar, --timings report and atomic
 * output. gt_stitch_stream (stitch.h) is the entry point; tools/yuvstitch.c
 * only parses options into a gt_stitch_job.
 *
 * Threads: the CUDA context starts on one while the host loads the rig and
 * builds the plan, and the same thread then allocates the GPU's frame
 * buffers (pinned and device slots, streams: gt_stitch_gpu_prealloc) as soon
 * as the inputs' sizes are known, so that only the plan's upload is left
 * after the plan (joined before the device is chosen); the cameras are read
 * in parallel (OpenMP, one per stream); a writer thread takes the stitched
 * frames in order, so that the output's writes overlap the next frames'
 * reading and stitching.
 *
 * Split by stage: this file runs the job (set-up, the GPU and CPU frame
 * loops, the finish); stream_io.c holds the host stages (paths, inputs,
 * masks, plan, output), stream_threads.c the writer and CUDA threads;
 * stream_internal.h the state they share (job_ctx).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/pin_prefault.h"
#include "common/progress.h"
#include "common/timer.h"
#include "common/trace.h"
#include "stitch/stream_internal.h"

void gt_stitch_job_init(gt_stitch_job *j)
{
    memset(j, 0, sizeof *j);
    j->fmt = -1;
    j->out_y4m = -1;
    j->frames = -1;
    gt_stitch_plan_opts_init(&j->plan);
    j->matrix = GT_BT601;
    j->range = GT_RANGE_LIMITED;
    j->device = GT_DEVICE_AUTO;
}

/* Everything up to the first frame: rig, paths, inputs, plan, device,
 * output. The CUDA context starts (0.1-0.3 s) on a thread while the host
 * reads the rig and builds the plan; joined before the device is chosen. */
static gt_status setup(job_ctx *c)
{
    const gt_stitch_job *j = c->j;
    c->t_run = gt_now_ms();
    pthread_mutex_init(&c->dev_mu, NULL);
    pthread_cond_init(&c->dev_cv, NULL);
    /* frames overlap on three streams (upload, kernels, download): two
     * hardware queues (common/device.h), set before the CUDA thread starts */
    gt_device_set_queues(2);
    gt_device_env_init();
    if (pthread_create(&c->dev_th, NULL, sj_device_prepare_main, c) == 0) {
        c->dev_th_started = true;
    } else {
        pthread_mutex_destroy(&c->dev_mu);
        pthread_cond_destroy(&c->dev_cv);
    }
    GT_TRY(gt_stitch_rig_load(j->rig, &c->rig));
    if (c->rig.ncam != j->ninputs)
        return gt_fail(GT_ERR_USAGE, "the rig '%s' has %d cameras but %d inputs were given", j->rig, c->rig.ncam,
                       j->ninputs);
    GT_TRY(sj_check_paths(c));
    GT_TRY(sj_open_inputs(c));
    sj_post_frame_sizes(c);
    GT_TRY(sj_skip_to_start(c));
    GT_TRY(sj_load_masks(c));
    GT_TRY(sj_build_plan(c));
    gt_trace("input read (rig, headers, masks, plan)");
    double t_dev = gt_now_ms();
    sj_join_device_prepare(c);
    GT_TRY(gt_device_choose(j->device, j->gpu, &c->dev));
    gt_trace(c->dev == GT_DEVICE_CUDA ? "first kernel" : "computing on the CPU");
    gt_timings_add(&c->tm, "start: device (rest of CUDA start)", gt_now_ms() - t_dev);
    if (c->pre || c->pre_st) gt_timings_add(&c->tm, "start: GPU buffers (CUDA thread, overlapped)", c->pre_ms);
    GT_TRY(sj_create_output(c));
    gt_progress_start(&c->pr, "stitching", j->frames > 0 ? (double)j->frames : 0);
    c->t_start = gt_now_ms();
    /* the whole run, from the rig to the last byte; streaming starts once the
     * GPU plan and buffers are ready */
    double other = c->t_start - c->t_run - gt_timings_get(&c->tm, "start: plan (seams, weights, CPU)") -
                   gt_timings_get(&c->tm, "start: device (rest of CUDA start)") -
                   gt_timings_get(&c->tm, "start: skip to the first frame") -
                   gt_timings_get(&c->tm, "start: pinned buffers' pages (CPU)");
    gt_timings_add(&c->tm, "start: rig, inputs, output, other", other);
    return sj_writer_start(c);
}

/* one more frame to the writer: progress */
static void frame_done(job_ctx *c)
{
    char extra[64];
    c->k++;
    snprintf(extra, sizeof extra, "%.1f fps", c->k / ((gt_now_ms() - c->t_start) / 1000.0));
    gt_progress_update(&c->pr, (double)c->k, extra);
}

/* GPU: frame k in slot k % GT_STITCH_SLOTS: while k is on the GPU, k-1 is
 * queued for the writer behind k-2 (being written) and k+1 is read. */
static gt_status stream_gpu(job_ctx *c)
{
    const gt_stitch_job *j = c->j;
    if (c->pre_st) return gt_fail(c->pre_st, "%s", c->pre_msg); /* the buffers' failure */
    gt_stitch_gpu *pre = c->pre;
    c->pre = NULL;
    if (pre) GT_TRY(gt_stitch_gpu_create_from(pre, &c->plan, &c->gpu));
    else GT_TRY(gt_stitch_gpu_create(&c->plan, &c->gpu));
    c->t_setup = gt_now_ms() - c->t_start;
    gt_timings_add(&c->tm, "start: GPU plan, pinned buffers", c->t_setup);
    long submitted = 0;
    bool eof = false;
    for (;;) {
        bool got = false;
        int slot = (int)(submitted % GT_STITCH_SLOTS);
        if (!eof && (j->frames < 0 || submitted < j->frames)) {
            GT_TRY(gt_stitch_gpu_wait(c->gpu, slot)); /* slot's inputs free (its last frame is done) */
            uint8_t *bufs[GT_STITCH_MAX_CAMS];
            for (int i = 0; i < c->plan.ncam; i++) bufs[i] = gt_stitch_gpu_in_buf(c->gpu, slot, i);
            GT_TRY(sj_read_set(c, bufs, submitted, &got));
            eof = !got;
            if (got) GT_TRY(sj_update_gains(c, bufs, submitted));
            if (got) {
                /* the download overwrites this slot's output: its last frame must be written */
                GT_TRY(sj_writer_wait(c, submitted - GT_STITCH_SLOTS));
                double ts = gt_now_ms();
                GT_TRY(gt_stitch_gpu_submit(c->gpu, slot));
                gt_timings_add(&c->tm, "submit (host)", gt_now_ms() - ts);
                submitted++;
            }
        }
        if (c->k < submitted - (got ? 1 : 0)) {
            int ps = (int)(c->k % GT_STITCH_SLOTS);
            double tw = gt_now_ms();
            GT_TRY(gt_stitch_gpu_wait(c->gpu, ps));
            gt_timings_add(&c->tm, "wait for GPU", gt_now_ms() - tw);
            GT_TRY(sj_writer_post(&c->w, gt_stitch_gpu_out_buf(c->gpu, ps), c->k));
            frame_done(c);
        }
        if (!got && c->k == submitted) break;
    }
    double ms[4];
    long nf;
    gt_stitch_gpu_stage_ms(c->gpu, ms, &nf);
    static const char *names[4] = {"upload (GPU)", "warp (GPU)", "blend (GPU)", "download (GPU)"};
    for (int s = 0; s < 4; s++)
        for (long f = 0; f < nf; f++) gt_timings_add(&c->tm, names[s], ms[s]);
    return GT_OK;
}

/* CPU reference: two output buffers, one being written while the next
 * frame is stitched. */
static gt_status stream_cpu(job_ctx *c)
{
    const gt_stitch_job *j = c->j;
    for (int i = 0; i < c->plan.ncam; i++)
        if (!(c->cpu_in[i] = malloc(c->plan.in_bytes))) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    for (int s = 0; s < 2; s++)
        if (!(c->cpu_out[s] = malloc(c->plan.out_bytes))) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    while (j->frames < 0 || c->k < j->frames) {
        long k = c->k;
        bool got;
        GT_TRY(sj_read_set(c, c->cpu_in, k, &got));
        if (!got) break;
        GT_TRY(sj_update_gains(c, c->cpu_in, k));
        GT_TRY(sj_writer_wait(c, k - 2));
        double t0 = gt_now_ms();
        GT_TRY(gt_stitch_frame_cpu(&c->plan, (const uint8_t *const *)c->cpu_in, c->cpu_out[k & 1]));
        gt_timings_add(&c->tm, "warp+blend (CPU)", gt_now_ms() - t0);
        GT_TRY(sj_writer_post(&c->w, c->cpu_out[k & 1], k));
        frame_done(c);
    }
    return GT_OK;
}

/* Drain the writer, commit the output, report. */
static gt_status finish(job_ctx *c)
{
    const gt_stitch_job *j = c->j;
    long k = c->k;
    GT_TRY(sj_writer_stop(&c->w));
    for (long f = 0; f < k; f++) gt_timings_add(&c->tm, "write (writer thread)", c->w.ms / k);
    for (long f = 0; f < k; f++) gt_timings_add(&c->tm, "writer idle (queue empty)", c->w.idle_ms / k);
    gt_progress_end(&c->pr);
    gt_yuv_writer *wr = c->wr;
    c->wr = NULL;
    double t_fin = gt_now_ms();
    GT_TRY(gt_yuv_finish(wr, true));
    gt_timings_add(&c->tm, "end: close the output", gt_now_ms() - t_fin);
    double total = gt_now_ms() - c->t_run, startup = c->t_start + c->t_setup - c->t_run;
    if (j->timings) {
        gt_timings_print(&c->tm, stderr, "yuvstitch stages (per-frame means in the 'mean' column)");
        /* overall: everything from reading the rig to closing the output;
         * streaming: the frames alone, after the one-time start */
        fprintf(stderr,
                "frames %ld, wall %.1f ms, %.1f frames/s overall (%s); start %.1f ms (rig, plan, CUDA, buffers), "
                "streaming %.1f frames/s\n",
                k, total, k > 0 ? k / (total / 1000.0) : 0.0, c->dev == GT_DEVICE_CUDA ? "cuda" : "cpu", startup,
                k > 0 && total > startup ? k / ((total - startup) / 1000.0) : 0.0);
    }
    if (k == 0) gt_notice("no frames were stitched (an input is empty)");
    return GT_OK;
}

/* Release everything; after a failure, stop the writer (keeping the
 * failure's message) and remove the unfinished output. */
static void job_free(job_ctx *c, gt_status st)
{
    sj_join_device_prepare(c); /* the job failed before the join */
    if (c->w.started) {
        char keep[1024];
        snprintf(keep, sizeof keep, "%s", gt_errmsg());
        sj_writer_stop(&c->w);
        gt_fail(st, "%s", keep);
    }
    if (c->wr) gt_yuv_finish(c->wr, false);
    gt_stitch_gpu_destroy(c->gpu);
    gt_stitch_gpu_destroy(c->pre);
    gt_pin_prefault_release(); /* what the CUDA thread did not take */
    gt_stitch_gain_update_free(&c->gu);
    gt_stitch_plan_free(&c->plan);
    for (int i = 0; i < GT_STITCH_MAX_CAMS; i++) {
        if (c->rd[i]) gt_yuv_close(c->rd[i]);
        if (c->masks[i].data) gt_image_free(&c->masks[i]);
        free(c->cpu_in[i]);
    }
    free(c->cpu_out[0]);
    free(c->cpu_out[1]);
    gt_stitch_rig_free(&c->rig);
}

gt_status gt_stitch_stream(const gt_stitch_job *j, long *frames)
{
    if (frames) *frames = 0;
    if (!j->rig || !j->output || j->ninputs < 1 || !j->inputs)
        return gt_fail(GT_ERR_USAGE, "gt_stitch_stream: give the rig, the inputs and the output");
    if (j->start < 0) return gt_fail(GT_ERR_USAGE, "gt_stitch_stream: start %ld is negative", j->start);
    job_ctx *c = calloc(1, sizeof *c);
    if (!c) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    c->j = j;
    gt_timings_init(&c->tm);
    gt_status st = setup(c);
    if (!st) st = c->dev == GT_DEVICE_CUDA ? stream_gpu(c) : stream_cpu(c);
    if (!st) gt_trace("job done");
    if (!st) st = finish(c);
    if (!st) gt_trace("output written");
    if (!st && frames) *frames = c->k;
    job_free(c, st);
    free(c);
    return st;
}
