/* Handing a program's GPU release to a helper process at exit.
 *
 * When a CUDA program exits, the kernel driver releases what the process held
 * when its files on /dev/nvidia* are closed: the context's queues and device
 * memory and, when no other process uses the GPU, the unified-memory driver's
 * registration of the GPU (0.03-0.15 s in all on the H200 machine of
 * scripts/bench/RESULTS.md). The exiting process does that work itself, after
 * its output is complete, and its parent (the shell, a script) waits for it.
 *
 * gt_release_arm() registers an exit handler that, once the program has
 * written everything, flushes stdio and starts a helper process that shares
 * the program's memory and holds only its files on the driver; the program
 * then exits at once with its status, and the helper, once it sees the
 * program gone, exits in turn: the driver's release runs in the helper, after
 * the command has returned. Nothing the program wrote depends on it. The
 * helper closes standard input, output and error and every other file at its
 * start (a pipeline's reader sees the end of the output when the program
 * exits), leaves the terminal's session, and takes the default signal
 * actions (it is named "gt-gpu-release" in ps).
 *
 * Not armed, or the handler steps aside (the ordinary exit then runs), when:
 *   GT_SYNC_EXIT is set (and not "0"): the program releases the GPU itself;
 *   LD_PRELOAD, CUDA_INJECTION64_PATH or NVTX_INJECTION64_PATH is set: a
 *     sanitizer (compute-sanitizer sets the last), profiler or tracer that
 *     wants to see the process release what it took;
 *   /proc/self/fd cannot be read, or a helper cannot be started.
 */
#ifndef GT_RELEASE_H
#define GT_RELEASE_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the environment lets the release be handed off (see above). */
bool gt_release_wanted(void);

/* Register the exit handler once a GPU context is up (idempotent; nothing
 * when !gt_release_wanted()). Register it after every other exit handler
 * whose work the helper's release makes unnecessary: it runs first and,
 * when it hands off, the ones registered before it do not run. */
void gt_release_arm(void);

/* Whether the exit will hand the release off (armed, and no hand-off has
 * failed): steps that only free GPU resources before exit can be skipped. */
bool gt_release_armed(void);

/* The mechanism: flush stdio and exit the process with `status`, leaving the
 * open files whose /proc/self/fd link starts with keep_prefix to a helper
 * that closes every other file at once and the kept ones linger_ms after the
 * process has exited. Returns -1 (and does not exit) when no open file
 * matches, /proc/self/fd cannot be read or the helper cannot be started. */
int gt_release_exit(int status, const char *keep_prefix, unsigned linger_ms);

#ifdef __cplusplus
}
#endif
#endif
