/* Handing a program's GPU release to a helper process at exit, opt-in
 * (release.h) */
#define _GNU_SOURCE
#include "common/release.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "common/trace.h"

enum { OFF, ARMED, STEPPED_ASIDE };
static atomic_int g_state = OFF;

#define HELPER_STACK (64 * 1024)

typedef struct helper_args {
    const int *close_fds; /* every open file but the kept ones and wait_fd */
    int nclose;
    int wait_fd;          /* read end of a pipe whose write end only the program holds */
    unsigned linger_ms;
} helper_args;

static bool env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

static bool env_nonempty(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

bool gt_release_wanted(void)
{
    /* compute-sanitizer sets NVTX_INJECTION64_PATH; Nsight Systems and
     * Compute CUDA_INJECTION64_PATH (and LD_PRELOAD) */
    return env_on("GT_DEFER_RELEASE") && !env_nonempty("LD_PRELOAD") && !env_nonempty("CUDA_INJECTION64_PATH") &&
           !env_nonempty("NVTX_INJECTION64_PATH");
}

/* The helper: it shares the program's memory (CLONE_VM) but has its own
 * copy of the file table and signal actions. Only system calls from here on:
 * the program is exiting beside it. */
static int helper_main(void *arg)
{
    const helper_args *h = arg;
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP) (void)sigaction(s, &dfl, NULL); /* the program's handlers act on its state */
    for (int i = 0; i < h->nclose; i++) (void)close(h->close_fds[i]);
    (void)setsid();
    (void)prctl(PR_SET_NAME, "gt-gpu-release", 0, 0, 0);
    char c;
    while (read(h->wait_fd, &c, 1) < 0 && errno == EINTR) {
    } /* end of file: the program has exited */
    if (h->linger_ms) {
        struct timespec ts = {(time_t)(h->linger_ms / 1000), (long)(h->linger_ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
        }
    }
    return 0; /* the kept files close as the helper exits: the driver's release runs here */
}

/* Every open file but the directory stream's and `skip`, split into the
 * ones to keep and the ones to close; -1 when /proc/self/fd is unreadable */
static int list_files(const char *keep_prefix, int skip, int **close_fds, int *nclose, int *nkeep)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    size_t cap = 32, n = 0, plen = strlen(keep_prefix);
    int *fds = malloc(cap * sizeof *fds), dfd = dirfd(d);
    int kept = 0;
    struct dirent *e;
    while (fds && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        int fd = atoi(e->d_name);
        if (fd == dfd || fd == skip) continue;
        char path[64], link[256];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t l = readlink(path, link, sizeof link - 1);
        if (l > 0) {
            link[l] = 0;
            if (plen && !strncmp(link, keep_prefix, plen)) {
                kept++;
                continue;
            }
        }
        if (n == cap) {
            int *more = realloc(fds, 2 * cap * sizeof *fds);
            if (!more) {
                free(fds);
                fds = NULL;
                break;
            }
            fds = more;
            cap *= 2;
        }
        fds[n++] = fd;
    }
    closedir(d);
    if (!fds) return -1;
    *close_fds = fds;
    *nclose = (int)n;
    *nkeep = kept;
    return 0;
}

/* one exit per process: the helper's arguments and stack need no allocation */
static helper_args g_helper;
static _Alignas(16) char g_helper_stack[HELPER_STACK];

int gt_release_exit(int status, const char *keep_prefix, unsigned linger_ms)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return -1;
    int *fds = NULL, nclose = 0, nkeep = 0;
    if (list_files(keep_prefix, p[0], &fds, &nclose, &nkeep) == 0 && nkeep > 0) {
        /* p[1] is in the list: the helper closes its copy, so that the
         * program's exit is the pipe's end */
        g_helper = (helper_args){fds, nclose, p[0], linger_ms};
        /* SIGCHLD: whoever adopts the helper (init, a subreaper) reaps it */
        if (clone(helper_main, g_helper_stack + HELPER_STACK, CLONE_VM | SIGCHLD, &g_helper) >= 0) {
            /* the helper's copies of standard output and error are not
             * these: what stdio still holds goes out here, before the exit */
            gt_trace("exit: GPU release handed to a helper");
            fflush(NULL);
            _exit(status); /* the memory, fds included, lives on in the helper */
        }
    }
    free(fds);
    close(p[0]);
    close(p[1]);
    return -1;
}

static void on_program_exit(int status, void *arg)
{
    (void)arg;
    if (atomic_load(&g_state) != ARMED) return;
    (void)gt_release_exit(status, "/dev/nvidia", 0);
    /* still here: the ordinary exit runs, and the handlers registered
     * before this one release what they hold */
    atomic_store(&g_state, STEPPED_ASIDE);
}

void gt_release_arm(int compute_mode)
{
    if (!gt_release_wanted()) return;
    if (compute_mode != GT_COMPUTE_MODE_DEFAULT) {
        gt_trace("exit: the GPU's compute mode is not Default: released in the process");
        return;
    }
    int expect = OFF;
    if (atomic_compare_exchange_strong(&g_state, &expect, ARMED) && on_exit(on_program_exit, NULL) != 0)
        atomic_store(&g_state, STEPPED_ASIDE);
}

bool gt_release_armed(void)
{
    return atomic_load(&g_state) == ARMED;
}
