/* Fast appends to a regular file through mmap'ed segments, in a pipeline:
 * a filler thread maps the file ahead of the writer and makes its pages exist
 * (MADV_POPULATE_WRITE through a small pool: page allocation and zeroing
 * without a fault per page), the caller copies each append into the ready
 * segments through a second pool, and an unmapper thread unmaps behind. On
 * tmpfs this takes the kernel's page allocation (serialised per file) off
 * the writer's path instead of one write() under the inode lock doing
 * allocation, zeroing and copy on one core.
 * A full disk is a clean ENOSPC, never a SIGBUS: only populated (or, where
 * MADV_POPULATE_WRITE is missing, as on Linux < 5.14, fallocated) pages are
 * written through the mapping; a segment that cannot be made ready sends the
 * rest through pwrite, which names the errno (GT_MAPOUT_FALLOCATE forces
 * fallocate, for tests).
 *
 * The file must be open read-write (mkstemp's fd is); nothing else may write
 * to it meanwhile. gt_mapout_close truncates the file to exactly the bytes
 * appended (the filler runs ahead of them). */
#ifndef GT_MAPOUT_H
#define GT_MAPOUT_H

#include <stddef.h>
#include <sys/types.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gt_mapout gt_mapout;

/* How appends larger than 4 KiB are written: the mmap pipeline, or
 * plain pwrite (where page faults cost more than one copy in the kernel, as
 * on some virtual machines). AUTO (the default; GT_MAPOUT_MODE=mmap|pwrite
 * forces one) writes 3 appends with pwrite, then 3 through the mapping,
 * times the last 2 of each and keeps the faster. The bytes written are the
 * same either way. */
typedef enum { GT_MAPOUT_AUTO = 0, GT_MAPOUT_MMAP = 1, GT_MAPOUT_PWRITE = 2 } gt_mapout_mode;

/* Start appending at byte `start` of fd (the bytes before it are kept).
 * nthreads: threads of each pool (populate, copy); <= 0: a quarter of the
 * cores, 1..4, or GT_WRITE_THREADS. seg: bytes per mapped segment (rounded
 * up to pages; 0: 8 MiB); the filler keeps about 48 MiB ready ahead.
 * Returns NULL (errno set) where the fast path does not apply: not a regular
 * file, fallocate or mmap unsupported, or no memory. The caller then writes
 * the ordinary way; nothing was changed in the file. */
gt_mapout *gt_mapout_open(int fd, off_t start, int nthreads, size_t seg);
/* Append n bytes. Errors (ENOSPC, EFBIG, EIO) are GT_ERR_RUNTIME with
 * "write error on '<name>': <reason>". */
gt_status gt_mapout_write(gt_mapout *m, const void *buf, size_t n, const char *name);
/* The mode in use (AUTO while still timing). */
gt_mapout_mode gt_mapout_get_mode(const gt_mapout *m);
/* Bytes of the file so far (start + appended). */
off_t gt_mapout_offset(const gt_mapout *m);
/* Stop the threads, truncate the file to gt_mapout_offset and free m. ok =
 * false skips the truncation (the file is about to be removed). */
gt_status gt_mapout_close(gt_mapout *m, int ok, const char *name);

#ifdef __cplusplus
}
#endif
#endif
