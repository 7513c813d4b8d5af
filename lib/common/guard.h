/* The checks every program runs after parsing its options and before any
 * work, so that a slip of the keyboard loses nothing:
 *  - no output is one of the inputs, nor another output (same file by device
 *    and inode: hard links, symlinks and other spellings of a path are
 *    caught; "-" is compared by what the standard stream is when that is a
 *    regular file);
 *  - every input can be opened, every output's directory exists, no output
 *    is a directory;
 *  - an output's extension does not name a different format than the one
 *    written there (a PNG into x.ply), unless the user named the format.
 * The table of extensions is here, in one place. */
#ifndef GT_GUARD_H
#define GT_GUARD_H

#include <stdbool.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gt_guard_path {
    char *path;
    char *what;         /* its role, for messages: "-o", "--rig", "input 2" */
    const char *format; /* outputs: the format written there, NULL = no extension check */
    const char *force;  /* outputs: the option that names the format ("--out-format"), or NULL */
} gt_guard_path;

typedef struct gt_guard {
    gt_guard_path *in, *out;
    int nin, nout, cap_in, cap_out;
    bool oom;
} gt_guard;

void gt_guard_init(gt_guard *g);
void gt_guard_free(gt_guard *g);

/* Register an input. NULL is ignored; "-" is standard input. */
void gt_guard_input(gt_guard *g, const char *path, const char *what);

/* Register an output. NULL is ignored; "-" is standard output. `format` is
 * the format the program writes there (a name from gt_guard_format's table:
 * "png", "y4m", "raw" (YUV), "ply", "mtx", "nrrd", "tps", "points", "text", "rig", "pfm",
 * "pgm"), or NULL when the user named the format (no extension check).
 * `force` is the option that names it, for the hint in the message. */
void gt_guard_output(gt_guard *g, const char *path, const char *what, const char *format,
                     const char *force);

/* Run every check; the first failure sets the message and is returned:
 *  GT_ERR_RUNTIME  an input cannot be opened ("cannot open '<path>': <why>")
 *                  or is a directory; an output's directory is missing or not
 *                  a directory ("cannot write '<path>': ...");
 *  GT_ERR_USAGE    an output is an input or another output, or is a
 *                  directory; two inputs or two outputs are '-'; an output's
 *                  extension names another format. */
gt_status gt_guard_check(const gt_guard *g);

/* The extension check alone: GT_OK when `path`'s extension is unknown,
 * missing, or one that `format` is written with. */
gt_status gt_guard_format(const char *path, const char *what, const char *format,
                          const char *force);

#ifdef __cplusplus
}
#endif
#endif
