/* Atomic output: write to a temporary file beside the target and rename it
 * into place on success, so a failed or interrupted run never leaves a partial
 * file. "-" writes to stdout, and an existing device or FIFO (/dev/null, a
 * named pipe) is written in place rather than replaced by a regular file
 * (then nothing can be taken back). Temporary files
 * still open when the program is killed by SIGINT/SIGTERM/SIGHUP are removed. */
#ifndef GT_OUTPUT_H
#define GT_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gt_out {
    FILE *fp;       /* write here */
    char *path;     /* target path ("-" for stdout) */
    char *tmp;      /* temporary path, NULL for stdout */
    bool is_stdout;
    bool direct;    /* an existing device or FIFO, written in place */
} gt_out;

/* Open `path` for writing. Fails (GT_ERR_RUNTIME) when the directory is not
 * writable, with a message naming the path. */
gt_status gt_out_open(gt_out *o, const char *path);
/* Flush, check for write errors, close and rename into place. On failure the
 * temporary file is removed. Always releases `o`. */
gt_status gt_out_commit(gt_out *o);
/* Close and remove the temporary file (no-op on a zeroed or committed gt_out). */
void gt_out_abort(gt_out *o);

/* Open an input path for reading; "-" is stdin. A missing or unreadable file
 * sets *st = GT_ERR_RUNTIME with "cannot open '<path>': <reason>". */
FILE *gt_in_open(const char *path, gt_status *st);
void gt_in_close(FILE *f);
/* "<stdin>" for "-" and NULL, else path: for messages */
const char *gt_in_name(const char *path);
/* The whole of an input path ("-" is stdin; pipes work) in a malloc'ed
 * buffer *data of *len bytes, for the caller to free. GT_ERR_RUNTIME with a
 * message naming the input when it cannot be opened or read, or memory
 * runs out. */
gt_status gt_in_read_all(const char *path, unsigned char **data, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
