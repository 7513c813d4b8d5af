/* Shared libraries opened on first use (dlopen/dlsym) instead of linked:
 * cuBLAS and cuSOLVER are hundreds of MB that the dynamic loader would map
 * into every program at exec, whether or not it calls them. A table names
 * the entry points a caller uses; loading fills its slots or fails with
 * GT_ERR_GPU (exit 4) and a message that names the library:
 *   "cuSOLVER not found (libcusolver.so.12: <dlerror's reason>)"
 *   "cuSOLVER: libcusolver.so.12 has no cusolverDnXpotrf (<reason>)" */
#ifndef GT_DYNLIB_H
#define GT_DYNLIB_H

#include <stddef.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gt_dynsym {
    const char *name; /* symbol, e.g. "cublasCreate_v2" */
    void **slot;      /* where its address goes */
} gt_dynsym;

/* Open the first of `sonames` (NULL-terminated; tried in order, through the
 * loader's search path) that opens, and resolve every symbol of syms[0..n)
 * into its slot. `what` names the library in messages ("cuBLAS"). On
 * success *handle (may be NULL) gets the dlopen handle, which stays open for
 * the life of the process. On failure no slot is written, nothing stays
 * open, and the message lists every name tried. */
gt_status gt_dynlib_load(const char *what, const char *const *sonames, const gt_dynsym *syms, size_t n,
                         void **handle);

/* Whether a shared object whose file name starts with `prefix` (e.g.
 * "libcublas") is mapped into this process now (from /proc/self/maps):
 * for tests and GT_STARTUP_TRACE. */
int gt_dynlib_mapped(const char *prefix);

#ifdef __cplusplus
}
#endif
#endif
