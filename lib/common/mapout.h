/* Fast appends to a regular file: the file grows in large chunks, each
 * append is copied into an mmap'ed window by a small pool of threads (one
 * slice each) and the window is unmapped behind it; while the pool copies,
 * the next window is mapped, and then the pool populates it
 * (MADV_POPULATE_WRITE: page allocation and zeroing in parallel, no fault
 * per page). A full disk is a clean ENOSPC, never a SIGBUS: populate reports
 * it (EFAULT) and that append goes through pwrite, which names the errno;
 * where MADV_POPULATE_WRITE is missing (Linux < 5.14) the chunks are
 * fallocated instead (GT_MAPOUT_FALLOCATE forces that, for tests). On tmpfs this spreads the kernel's
 * page allocation, zeroing and copy over several cores instead of one
 * write() under the inode lock.
 *
 * The file must be open read-write (mkstemp's fd is); nothing else may write
 * to it meanwhile. gt_mapout_close truncates the file to exactly the bytes
 * appended (fallocate grows it by whole chunks). */
#ifndef GT_MAPOUT_H
#define GT_MAPOUT_H

#include <stddef.h>
#include <sys/types.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gt_mapout gt_mapout;

/* How appends of 1 MiB and more are written: mmap windows and the pool, or
 * plain pwrite (where page faults cost more than one copy in the kernel, as
 * on some virtual machines). AUTO (the default; GT_MAPOUT_MODE=mmap|pwrite
 * forces one) writes 3 appends each way, times the last 2 of each and keeps
 * the faster. The bytes written are the same either way. */
typedef enum { GT_MAPOUT_AUTO = 0, GT_MAPOUT_MMAP = 1, GT_MAPOUT_PWRITE = 2 } gt_mapout_mode;

/* Start appending at byte `start` of fd (the bytes before it are kept).
 * nthreads <= 0: a default from the core count (1..8, or GT_WRITE_THREADS);
 * chunk: bytes reserved per fallocate (rounded up to pages; 0: 64 MiB).
 * Returns NULL (errno set) where the fast path does not apply: not a regular
 * file, fallocate or mmap unsupported, or no memory. The caller then writes
 * the ordinary way; nothing was changed in the file. */
gt_mapout *gt_mapout_open(int fd, off_t start, int nthreads, size_t chunk);
/* Append n bytes. Errors (ENOSPC, EIO, mmap failure) are GT_ERR_RUNTIME with
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
