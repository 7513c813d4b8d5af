/* Handing a program's GPU release to a helper process at exit: opt-in.
 *
 * When a CUDA program exits, the kernel driver releases what the process held
 * when its files on /dev/nvidia* are closed: the context's queues and device
 * memory and, when no other process uses the GPU, the unified-memory driver's
 * registration of the GPU (0.03-0.15 s in all on the H200 machine of
 * scripts/bench/RESULTS.md). By default the exiting process does that work
 * itself, after its output is complete: when the command returns, nothing
 * of it holds the GPU (a scheduler's epilog, nvidia-smi and the next job see
 * it free). For batch work, the driver's persistence mode (nvidia-persistenced)
 * or scripts/batch/gpu-hold keep the GPU registered between commands, which
 * saves most of that time without a process outliving its command.
 *
 * With GT_DEFER_RELEASE=1, gt_release_arm() registers an exit handler that,
 * once the program has written everything, flushes stdio and starts a helper
 * process that shares the program's memory and holds only its files on the
 * driver; the program then exits at once with its status, and the helper,
 * once it sees the program gone, exits in turn: the driver's release runs in
 * the helper, ~0.1 s after the command has returned. Nothing the program
 * wrote depends on it. The helper closes standard input, output and error
 * and every other file at its start (a pipeline's reader sees the end of the
 * output when the program exits), leaves the terminal's session, and takes
 * the default signal actions (it is named "gt-gpu-release" in ps).
 *
 * Not armed, or the handler steps aside (the ordinary exit then runs), when:
 *   GT_DEFER_RELEASE is unset, empty or "0" (the default);
 *   the GPU's compute mode is not Default (exclusive-process or prohibited,
 *     as on many clusters: the next command's context could not be created
 *     while the helper lingered);
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

/* Whether the environment asks for the hand-off and lets it be (see above). */
bool gt_release_wanted(void);

/* The GPU's compute mode as the CUDA runtime numbers it; only Default lets
 * another process use the GPU while the helper holds it. */
enum { GT_COMPUTE_MODE_DEFAULT = 0 };

/* Register the exit handler once a GPU context is up, given the compute
 * mode of its GPU (idempotent; nothing when !gt_release_wanted() or the
 * mode is not GT_COMPUTE_MODE_DEFAULT). Register it after every other exit
 * handler whose work the helper's release makes unnecessary: it runs first
 * and, when it hands off, the ones registered before it do not run. */
void gt_release_arm(int compute_mode);

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
