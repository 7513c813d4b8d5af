#include "common/device.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <string.h>

#include "common/log.h"
#include "common/release.h"
#include "common/trace.h"
#include "gt_config.h"
#if GT_HAVE_CUDA
#include "common/gpu_runtime.h"
#endif

#if GT_HAVE_CUDA
static bool hook_counting(void);
#endif

const char *gt_device_name(gt_device_kind k)
{
    switch (k) {
    case GT_DEVICE_AUTO: return "auto";
    case GT_DEVICE_CUDA: return "cuda";
    case GT_DEVICE_CPU: return "cpu";
    }
    return "?";
}

static bool no_gpu_env(void)
{
    const char *env = getenv("GT_NO_GPU");
    return env && *env && strcmp(env, "0") != 0;
}

static int g_queues = 1;
static pthread_once_t g_env_once = PTHREAD_ONCE_INIT;

void gt_device_set_queues(int n)
{
    if (n >= 1 && n <= 32) g_queues = n;
}

static void env_init(void)
{
    char v[16];
    snprintf(v, sizeof v, "%d", g_queues);
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", v, 0); /* 0: the user's value stays */
}

void gt_device_env_init(void)
{
    pthread_once(&g_env_once, env_init);
}

int gt_gpu_count(char *why, size_t why_len)
{
    gt_device_env_init();
    if (no_gpu_env()) {
        if (why) snprintf(why, why_len, "GT_NO_GPU is set");
        return 0;
    }
#if GT_HAVE_CUDA
    return gt_cu_device_count(why, why_len);
#else
    if (why) snprintf(why, why_len, "this build has no CUDA support");
    return 0;
#endif
}

/* "; CUDA_VISIBLE_DEVICES='...'" when the CUDA runtime counted the GPUs and
 * the variable is set (it decides which GPUs are seen, and their numbers),
 * else "" */
static void visible_note(char *buf, size_t len)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    buf[0] = 0;
    if (GT_HAVE_CUDA && v && !no_gpu_env()) snprintf(buf, len, "; CUDA_VISIBLE_DEVICES='%.64s'", v);
}

/* the "device chosen" milestone of GT_STARTUP_TRACE, once per process (a
 * job may confirm a device its program chose) */
static void trace_chosen(const char *what)
{
    static atomic_flag done = ATOMIC_FLAG_INIT;
    if (gt_trace_on() && !atomic_flag_test_and_set(&done)) gt_trace(what);
}

gt_status gt_device_choose(gt_device_kind requested, int gpu, gt_device_kind *chosen)
{
    if (requested == GT_DEVICE_CPU) {
        *chosen = GT_DEVICE_CPU;
        trace_chosen("device chosen: cpu");
        return GT_OK;
    }
    char why[256] = "", vis[96] = "";
    int n = gt_gpu_count(why, sizeof why);
    visible_note(vis, sizeof vis);
    if (n == 0) {
        size_t l = strlen(why);
        snprintf(why + l, sizeof why - l, "%s", vis);
        if (requested == GT_DEVICE_CUDA)
            return gt_fail(GT_ERR_GPU, "--device cuda: no CUDA GPU is available (%s)", why);
        gt_notice("no CUDA GPU available (%s); computing on the CPU", why);
        *chosen = GT_DEVICE_CPU;
        trace_chosen("device chosen: cpu (no GPU)");
        return GT_OK;
    }
    if (gpu < 0 || gpu >= n)
        return gt_fail(GT_ERR_GPU, "--gpu %d: no such GPU (this machine has %d, numbered 0..%d%s)", gpu, n,
                       n - 1, vis);
#if GT_HAVE_CUDA
    GT_TRY(gt_cu_set_device(gpu));
    trace_chosen("device chosen: cuda, context ready");
    /* registered after the CUDA runtime's own exit handler, so it runs first;
     * and after the allocation hook's report, which then sees what the
     * shutdown left. The hand-off of the GPU's release (release.h) comes
     * last and runs first, when it is asked for (GT_DEFER_RELEASE) and the
     * GPU's compute mode lets it; not while the hook counts what the exit
     * frees. */
    static int registered;
    if (!registered) {
        registered = 1;
        gt_alloc_hook_init();
        atexit(gt_device_shutdown);
        if (!hook_counting() && gt_release_wanted()) gt_release_arm(gt_cu_compute_mode());
    }
#endif
    *chosen = GT_DEVICE_CUDA;
    return GT_OK;
}

/* gt_device_prepare's work: whether the context of `gpu` is up and current
 * on this thread. Once the GPU is known to exist (and before the context,
 * the slow part, is created) found(arg) is called (when not NULL). */
static bool prepare(gt_device_kind requested, int gpu, void (*found)(void *), void *arg)
{
    if (requested == GT_DEVICE_CPU) return false;
#if GT_HAVE_CUDA
    int n = gt_gpu_count(NULL, 0);
    if (gpu < 0 || gpu >= n) return false; /* errors: gt_device_choose reports them */
    if (found) found(arg);
    if (gt_cu_set_device(gpu) != GT_OK) return false;
    gt_trace("context ready (prepared)");
    return true;
#else
    (void)gpu, (void)found, (void)arg;
    return false;
#endif
}

void gt_device_prepare(gt_device_kind requested, int gpu)
{
    (void)prepare(requested, gpu, NULL, NULL);
}

typedef struct prep_thread {
    pthread_t th;
} prep_thread;

static void *load_main(void *arg)
{
    gt_device_prep *p = arg;
    p->w.load(p->w.arg);
    return NULL;
}

typedef struct loader {
    gt_device_prep *p;
    pthread_t th;
    bool started;
} loader;

/* a GPU exists: start the warm-up's load beside the context creation (or
 * run it here when no thread can be had) */
static void start_load(void *arg)
{
    loader *l = arg;
    if (!l->p->w.load) return;
    l->started = pthread_create(&l->th, NULL, load_main, l->p) == 0;
    if (!l->started) l->p->w.load(l->p->w.arg);
}

static void *prepare_main(void *arg)
{
    gt_device_prep *p = arg;
    loader l = {p, 0, false};
    /* the load starts after cuInit: beside cuInit (an idle GPU's ~0.1 s
     * registration) it made the context 70-80 ms later and stpsfit n = 20000
     * 50 ms slower (scripts/bench/RESULTS.md, 2026-11-29, thirteenth) */
    bool up = prepare(p->requested, p->gpu, start_load, &l);
    if (l.started) pthread_join(l.th, NULL);
    if (up && p->w.warm) p->w.warm(p->w.arg);
    return NULL;
}

void gt_device_prepare_start(gt_device_prep *p, gt_device_kind requested, int gpu, const gt_device_warmup *w)
{
    memset(p, 0, sizeof *p);
    p->requested = requested;
    p->gpu = gpu;
    if (w) p->w = *w;
    if (requested == GT_DEVICE_CPU || !GT_HAVE_CUDA) return;
    gt_device_env_init(); /* before the thread: setenv beside getenv is a race */
    prep_thread *t = malloc(sizeof *t);
    if (!t) return;
    if (pthread_create(&t->th, NULL, prepare_main, p) != 0) {
        free(t);
        return;
    }
    p->th = t;
    p->omp_prev = gt_omp_leave_core();
}

void gt_device_prepare_join(gt_device_prep *p)
{
    if (!p->th) return;
    prep_thread *t = p->th;
    pthread_join(t->th, NULL);
    free(t);
    p->th = NULL;
    gt_omp_restore(p->omp_prev);
    p->omp_prev = 0;
}

gt_status gt_device_prepare_finish(gt_device_prep *p, gt_device_kind *chosen)
{
    gt_device_prepare_join(p);
    return gt_device_choose(p->requested, p->gpu, chosen);
}

int gt_omp_leave_core(void)
{
#ifdef _OPENMP
    int prev = omp_get_max_threads();
    const char *env = getenv("OMP_NUM_THREADS");
    int cores = omp_get_num_procs();
    if ((!env || !*env) && cores > 1 && prev >= cores) omp_set_num_threads(cores - 1);
    return prev;
#else
    return 0;
#endif
}

void gt_omp_restore(int prev)
{
#ifdef _OPENMP
    if (prev > 0) omp_set_num_threads(prev);
#else
    (void)prev;
#endif
}

gt_status gt_gpu_mem_info(size_t *free_bytes, size_t *total_bytes)
{
#if GT_HAVE_CUDA
    return gt_cu_mem_info(free_bytes, total_bytes);
#else
    *free_bytes = *total_bytes = 0;
    return gt_fail(GT_ERR_GPU, "this build has no CUDA support");
#endif
}

void gt_gpu_describe(char *buf, size_t len)
{
    if (!len) return;
    buf[0] = 0;
#if GT_HAVE_CUDA
    gt_cu_device_name(buf, len);
#endif
}

void gt_device_shutdown(void)
{
#if GT_HAVE_CUDA
    if (gt_release_armed()) return; /* the helper's release frees it with the context */
    gt_arena *a = gt_default_arena();
    if (a->ptr) gt_arena_release(a);
#endif
}

/* ---- GPU memory exhaustion */

const char *gt_src_path(const char *file)
{
    if (!file) return "?";
    while (!strncmp(file, "../", 3)) file += 3;
    return file;
}

static void human_size(size_t b, char *buf, size_t len)
{
    if (b < ((size_t)1 << 20)) snprintf(buf, len, "%.1f KiB", b / 1024.0);
    else if (b < ((size_t)1 << 30)) snprintf(buf, len, "%.1f MiB", b / 1048576.0);
    else snprintf(buf, len, "%.2f GiB", b / 1073741824.0);
}

gt_status gt_gpu_oom_fail(gt_alloc_kind kind, size_t bytes, const char *what, const char *file, int line,
                          const char *detail)
{
    char hs[32], where[512];
    human_size(bytes, hs, sizeof hs);
    if (file && line > 0)
        snprintf(where, sizeof where, "%s:%d%s%s", gt_src_path(file), line, detail && *detail ? "; " : "",
                 detail ? detail : "");
    else
        snprintf(where, sizeof where, "%s", detail && *detail ? detail : "?");
    return gt_fail(GT_ERR_GPU, "out of %s memory: %zu bytes (%s) for %s (%s)",
                   kind == GT_ALLOC_PINNED ? "pinned host" : "GPU", bytes, hs, what && *what ? what : "data",
                   where);
}

bool gt_gpu_oom(gt_status st)
{
    const char *m = gt_errmsg();
    return st == GT_ERR_GPU &&
           (!strncmp(m, "out of GPU memory", 17) || !strncmp(m, "out of pinned host memory", 25));
}

void gt_gpu_oom_hint(const char *fmt, ...)
{
    char old[1024], hint[512];
    snprintf(old, sizeof old, "%s", gt_errmsg());
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(hint, sizeof hint, fmt, ap);
    va_end(ap);
    gt_fail(GT_ERR_GPU, "%s; %s", old, hint);
}

gt_status gt_alloc_hook_parse(const char *fail, const char *count, gt_alloc_hook *h)
{
    h->fail_at = 0;
    h->count = count && *count && strcmp(count, "0") != 0;
    if (!fail || !*fail) return GT_OK;
    const char *p = fail;
    while (*p >= '0' && *p <= '9') p++;
    errno = 0;
    unsigned long long v = *p == 0 ? strtoull(fail, NULL, 10) : 0;
    if (*p != 0 || errno == ERANGE || v > (unsigned long long)(unsigned long)-1)
        return gt_fail(GT_ERR_USAGE,
                       "GT_FAIL_DEVICE_ALLOC='%s': expected the number of the GPU allocation to fail "
                       "(1, 2, ...; 0 for none)",
                       fail);
    h->fail_at = (unsigned long)v;
    return GT_OK;
}

bool gt_alloc_hook_fails(const gt_alloc_hook *h, unsigned long k)
{
    return h->fail_at != 0 && k == h->fail_at;
}

static pthread_once_t hook_once = PTHREAD_ONCE_INIT;
static gt_alloc_hook hook;
static bool hook_active;
static gt_status hook_bad;
static char hook_bad_msg[256];
static atomic_ulong hook_total, hook_n[2];

static void hook_report(void)
{
    unsigned long d = atomic_load(&hook_n[GT_ALLOC_DEVICE]), p = atomic_load(&hook_n[GT_ALLOC_PINNED]);
    fprintf(stderr, "%s: GPU allocations: %lu (%lu device, %lu pinned host)", gt_progname(), d + p, d, p);
#if GT_HAVE_CUDA
    /* registered before gt_device_shutdown (see gt_device_choose), so this
     * runs after it: what is held now was never freed */
    size_t bytes, blocks, pinned;
    gt_cu_held(&bytes, &blocks, &pinned);
    fprintf(stderr, "; held at exit: %zu bytes in %zu device blocks, %zu pinned blocks", bytes, blocks, pinned);
#endif
    fputc('\n', stderr);
}

static void hook_init(void)
{
    char keep[1024];
    snprintf(keep, sizeof keep, "%s", gt_errmsg()); /* the parse must not clobber a message */
    hook_bad = gt_alloc_hook_parse(getenv("GT_FAIL_DEVICE_ALLOC"), getenv("GT_COUNT_DEVICE_ALLOC"), &hook);
    if (hook_bad != GT_OK) snprintf(hook_bad_msg, sizeof hook_bad_msg, "%s", gt_errmsg());
    gt_fail(GT_OK, "%s", keep);
    hook_active = hook_bad != GT_OK || hook.fail_at != 0 || hook.count;
    if (hook.count) atexit(hook_report);
}

#if GT_HAVE_CUDA
static bool hook_counting(void)
{
    return hook.count;
}
#endif

void gt_alloc_hook_init(void)
{
    pthread_once(&hook_once, hook_init);
}

gt_status gt_alloc_hook_check(gt_alloc_kind kind, size_t bytes, const char *what, const char *file, int line)
{
    pthread_once(&hook_once, hook_init);
    if (!hook_active) return GT_OK;
    if (hook_bad != GT_OK) return gt_fail(hook_bad, "%s", hook_bad_msg);
    atomic_fetch_add(&hook_n[kind == GT_ALLOC_PINNED], 1);
    unsigned long k = atomic_fetch_add(&hook_total, 1) + 1;
    if (!gt_alloc_hook_fails(&hook, k)) return GT_OK;
    char detail[128];
    snprintf(detail, sizeof detail, "allocation %lu of the run, failed by GT_FAIL_DEVICE_ALLOC=%lu", k,
             hook.fail_at);
    return gt_gpu_oom_fail(kind, bytes, what, file, line, detail);
}

void gt_alloc_hook_counts(unsigned long *device, unsigned long *pinned)
{
    *device = atomic_load(&hook_n[GT_ALLOC_DEVICE]);
    *pinned = atomic_load(&hook_n[GT_ALLOC_PINNED]);
}
