/* Where work runs: the CUDA GPU or the CPU reference.  `auto` picks CUDA when
 * a usable GPU is present and falls back to the CPU with a one-line notice.
 * `cuda` without a GPU is GT_ERR_GPU (exit 4). Setting the environment
 * variable GT_NO_GPU=1 hides every GPU (to test the fallback on a GPU host). */
#ifndef GT_DEVICE_H
#define GT_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gt_device_kind { GT_DEVICE_AUTO = 0, GT_DEVICE_CUDA = 1, GT_DEVICE_CPU = 2 } gt_device_kind;

const char *gt_device_name(gt_device_kind k); /* "auto", "cuda", "cpu" */

/* Resolve `requested` to CUDA or CPU; on CUDA also makes GPU `gpu` current.
 * The notice for the auto fallback goes through gt_notice (silenced by -q). */
gt_status gt_device_choose(gt_device_kind requested, int gpu, gt_device_kind *chosen);

/* Start the CUDA context of GPU `gpu` (the slow part of gt_device_choose,
 * 0.1-0.3 s) and report nothing: for a thread that overlaps it with host
 * work. The current device is per thread, so the main thread still calls
 * gt_device_choose, which then finds the context ready and reports errors. */
void gt_device_prepare(gt_device_kind requested, int gpu);

/* What a job will need of the GPU first, started early by
 * gt_device_prepare_start: `load` (may be NULL) needs no CUDA context (e.g.
 * opening cuBLAS/cuSOLVER, hundreds of MB for the dynamic loader) and runs
 * on a second thread while the context is created, once a GPU is known to
 * be there (none: it does not run, and the CPU fallback does not wait); `warm` (may be NULL)
 * runs once both are done, with the context current: library handles and a
 * tiny launch of the job's kernels, whose first-call costs (CUDA lazy
 * loading) are then paid there. Both must report nothing: errors they meet
 * come again on the job's thread. */
typedef struct gt_device_warmup {
    void (*load)(void *arg);
    void (*warm)(void *arg);
    void *arg;
} gt_device_warmup;

/* gt_device_prepare, then the warm-up w (may be NULL), on a thread of its
 * own, so that they overlap the reading of the input. A job starts it
 * before it reads and calls gt_device_prepare_finish before its first GPU
 * call, which chooses the device on the job's thread and reports any error
 * (exit 4 without a GPU). Nothing is started for GT_DEVICE_CPU (the CPU path
 * makes no CUDA call) or when a thread cannot be created (the job then pays
 * the start where it is). While the thread runs, the caller's OpenMP teams
 * leave it a core (gt_omp_leave_core below); the join restores them. */
typedef struct gt_device_prep {
    void *th; /* the thread (opaque here); NULL while none runs */
    gt_device_kind requested;
    int gpu;
    gt_device_warmup w;
    int omp_prev; /* the OpenMP team size before gt_omp_leave_core; 0: not capped */
} gt_device_prep;
void gt_device_prepare_start(gt_device_prep *p, gt_device_kind requested, int gpu, const gt_device_warmup *w);
/* Wait for the thread (nothing when none was started); call it before the
 * first GPU call and on every way out of the job. */
void gt_device_prepare_join(gt_device_prep *p);
/* Join, then gt_device_choose with the device and GPU the thread was
 * started for, on this thread: the job's first GPU call may follow. */
gt_status gt_device_prepare_finish(gt_device_prep *p, gt_device_kind *chosen);

/* OpenMP teams beside a thread that creates the CUDA context: teams as large
 * as the machine's cores leave that thread no core while their threads spin
 * between regions (yuvstitch's plan on the 16-core GPU machine: 358-643 ms
 * spinning, 95 ms with OMP_WAIT_POLICY=passive, 61-87 ms with 15 threads;
 * the context came later too). gt_omp_leave_core() caps the calling
 * thread's later teams at cores - 1 (none when OMP_NUM_THREADS is set, or on
 * a one-core machine) and returns what gt_omp_restore() puts back.
 * gt_device_prepare_start and yuvstitch's plan use it. */
int gt_omp_leave_core(void);
void gt_omp_restore(int prev);

/* The hardware work queues (CUDA_DEVICE_MAX_CONNECTIONS) that this
 * process's CUDA context opens, when the user has not set the variable.
 * Each queue costs context creation and teardown time: on the H200 machine
 * of scripts/bench/RESULTS.md the context took 109-128 ms with CUDA's
 * default of 8 and 49-59 ms with 1, its release 56-65 and 22-27 ms, and
 * every program's whole command 110-160 ms less with 1 (medians), outputs
 * byte-identical. libcore's jobs queue their kernels on one stream at a
 * time (streams elsewhere are for graph capture; copies have queues of
 * their own), so the default is 1; yuvstitch, whose upload, kernels and
 * download of consecutive frames overlap on three streams, asks for 2.
 * gt_device_set_queues(n) (1..32) sets the count before the first GPU call;
 * gt_device_env_init() puts it into the environment once (the first CUDA
 * call reads it there), from the main thread before any thread that may
 * start CUDA (gt_device_prepare_start and gt_gpu_count call it too). */
void gt_device_set_queues(int n);
void gt_device_env_init(void);

/* Number of usable CUDA GPUs (0 when built without CUDA, when no driver or GPU
 * is present, or when GT_NO_GPU is set); `why` (may be NULL) gets a reason
 * when the count is 0. */
int gt_gpu_count(char *why, size_t why_len);

/* Free and total memory of the current GPU, in bytes. */
gt_status gt_gpu_mem_info(size_t *free_bytes, size_t *total_bytes);

/* Release libcore's process-wide GPU resources (the default scratch arena);
 * programs call it before exit so that leak checkers see a clean exit. */
void gt_device_shutdown(void);

/* Name of the current GPU, or "" */
void gt_gpu_describe(char *buf, size_t len);

/* ---- GPU memory exhaustion: the message, and a test hook
 *
 * Every device allocation libcore makes (gt_cu_malloc) and every pinned host
 * allocation (gt_cu_pinned_alloc) goes through common/gpu_runtime.c,
 * which calls gt_alloc_hook_check() first. Two environment variables, read
 * once per process, drive it:
 *
 *   GT_FAIL_DEVICE_ALLOC=N   allocation number N of the run (counted from 1;
 *                            device and pinned host allocations share one
 *                            count, so that N = 1, 2, ... walks every
 *                            allocation in the order the job makes them)
 *                            fails as if cudaMalloc or cudaMallocHost had
 *                            returned cudaErrorMemoryAllocation. 0 or unset:
 *                            none fails. Anything else: every allocation
 *                            fails with a usage error (exit 2), so that a
 *                            mistyped value cannot pass for a clean run.
 *   GT_COUNT_DEVICE_ALLOC=1  at exit, print on stderr
 *                            "<prog>: GPU allocations: T (D device, P pinned host)"
 *                            and, in CUDA builds, "; held at exit: B bytes in
 *                            K device blocks, Q pinned blocks" (all 0 when the
 *                            program freed what it took).
 *
 * Unset, they cost one branch per allocation. What cuBLAS, cuSOLVER and
 * cuSPARSE allocate for themselves (handles, workspaces they size) does not
 * go through libcore and is not counted. */
typedef enum gt_alloc_kind { GT_ALLOC_DEVICE = 0, GT_ALLOC_PINNED = 1 } gt_alloc_kind;

typedef struct gt_alloc_hook {
    unsigned long fail_at; /* allocation number that fails; 0: none */
    bool count;            /* print the counts at exit */
} gt_alloc_hook;

/* The variables' values (NULL: unset) into *h; GT_ERR_USAGE with a message
 * naming the variable for a GT_FAIL_DEVICE_ALLOC that is not a number. */
gt_status gt_alloc_hook_parse(const char *fail, const char *count, gt_alloc_hook *h);
/* Whether allocation number k (from 1) fails under h. */
bool gt_alloc_hook_fails(const gt_alloc_hook *h, unsigned long k);
/* Called by the allocators before each allocation of `bytes` for `what` at
 * file:line: counts it and returns GT_OK, or the out-of-memory failure when
 * the hook fails this one. */
gt_status gt_alloc_hook_check(gt_alloc_kind kind, size_t bytes, const char *what, const char *file,
                              int line);
/* Read the variables now (done at the first allocation otherwise):
 * gt_device_choose calls it so that the count is printed after
 * gt_device_shutdown has run, with what was still held then. */
void gt_alloc_hook_init(void);
/* Allocations counted so far (zero while both variables are unset). */
void gt_alloc_hook_counts(unsigned long *device, unsigned long *pinned);

/* The out-of-memory failure (GT_ERR_GPU), one form for every program:
 *   "out of GPU memory: <bytes> bytes (<MiB>) for <what> (<file>:<line>; <detail>)"
 * ("out of pinned host memory" for GT_ALLOC_PINNED); detail says what is
 * known: the free memory, or that the test hook failed it. */
gt_status gt_gpu_oom_fail(gt_alloc_kind kind, size_t bytes, const char *what, const char *file, int line,
                          const char *detail);
/* Whether st with the current message is such a failure. */
bool gt_gpu_oom(gt_status st);
/* Append "; <hint>" to the current message: how to retry with less memory. */
void gt_gpu_oom_hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A compiler's __FILE__ without the leading "../" of a build directory. */
const char *gt_src_path(const char *file);

#ifdef __cplusplus
}
#endif
#endif
