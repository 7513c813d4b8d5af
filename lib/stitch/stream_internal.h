/* Private to the yuvstitch job (stream_job.c, stream_io.c,
 * stream_threads.c): the job's state, shared by the main thread, the CUDA
 * thread and the writer thread, and the stages each file holds. */
#ifndef GT_STITCH_STREAM_PRIV_H
#define GT_STITCH_STREAM_PRIV_H

#include <pthread.h>
#include <stdbool.h>

#include "common/progress.h"
#include "common/timer.h"
#include "io/image.h"
#include "io/yuv.h"
#include "stitch/calib.h"
#include "stitch/stitch.h"

/* The writer thread: frames are posted in order, at most GT_STITCH_SLOTS in
 * flight (they live in the output slots). */
typedef struct {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool started, stop;
    const uint8_t *q[GT_STITCH_SLOTS];
    long posted, written;
    gt_status st;
    char msg[1024];
    double ms, idle_ms;
} frame_writer;

/* Everything one job holds; job_free releases it. */
typedef struct {
    const gt_stitch_job *j;
    gt_stitch_rig rig;
    gt_yuv_reader *rd[GT_STITCH_MAX_CAMS];
    gt_image masks[GT_STITCH_MAX_CAMS];
    gt_stitch_plan_opts po; /* the job's, with the rig's masks */
    gt_stitch_plan plan;
    gt_stitch_gpu *gpu;
    gt_stitch_gain_update gu;
    pthread_t dev_th;
    bool dev_th_started;
    /* the sizes for the CUDA thread's gt_stitch_gpu_prealloc: dev_sizes 0 not
     * yet known, 1 posted in pre_*, -1 none coming (the thread stops) */
    pthread_mutex_t dev_mu;
    pthread_cond_t dev_cv;
    int dev_sizes, pre_ncam;
    size_t pre_in, pre_out;
    gt_stitch_gpu *pre;   /* what the thread made, or NULL */
    gt_status pre_st;     /* and its failure, with its message */
    char pre_msg[1024];
    double pre_ms;
    gt_device_kind dev;
    bool any_y4m;
    gt_yuv_writer *wr;
    uint8_t *cpu_in[GT_STITCH_MAX_CAMS], *cpu_out[2];
    gt_timings tm;
    gt_progress pr;
    double t_run, t_start, t_setup; /* job start, streaming start, GPU setup (ms) */
    long k;                         /* frames handed to the writer */
    frame_writer w;
} job_ctx;

/* stream_io.c: paths, inputs, masks, the plan, the output */
gt_status sj_check_paths(const job_ctx *c);
gt_status sj_save_masks(const gt_stitch_plan *plan, const char *dir);
gt_status sj_past_end(const job_ctx *c, int i, long n);
gt_status sj_read_set(job_ctx *c, uint8_t **bufs, long frame, bool *got);
gt_status sj_emit(job_ctx *c, const uint8_t *frame, long k);
gt_status sj_update_gains(job_ctx *c, uint8_t *const *bufs, long k);
gt_status sj_open_inputs(job_ctx *c);
gt_status sj_skip_to_start(job_ctx *c);
gt_status sj_load_masks(job_ctx *c);
gt_status sj_build_plan(job_ctx *c);
gt_status sj_create_output(job_ctx *c);

/* stream_threads.c: the writer thread and the CUDA thread */
gt_status sj_writer_start(job_ctx *c);
gt_status sj_writer_post(frame_writer *w, const uint8_t *buf, long k);
gt_status sj_writer_wait(job_ctx *c, long k);
gt_status sj_writer_stop(frame_writer *w);
void *sj_device_prepare_main(void *arg);
void sj_join_device_prepare(job_ctx *c);
void sj_post_frame_sizes(job_ctx *c);

#endif
