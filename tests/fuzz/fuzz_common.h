/* libFuzzer harness helpers: hand the input to a path-based reader through a
 * memfd (a regular, seekable file), as a user's file would be; report a
 * result that breaks the reader's promises. */
#ifndef GT_FUZZ_COMMON_H
#define GT_FUZZ_COMMON_H

#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Returns an fd holding data and writes "/proc/self/fd/N" into path. */
static int fuzz_memfd(const uint8_t *data, size_t size, char *path, size_t cap)
{
    int fd = memfd_create("fuzz", 0);
    if (fd < 0) return -1;
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)w;
    }
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

/* A reader accepted an input but returned something its header rules out:
 * abort, so that libFuzzer keeps the input as a finding. */
static inline void fuzz_broken_promise(const char *what)
{
    fprintf(stderr, "fuzz: reader accepted the input but broke its promise: %s\n", what);
    abort();
}

#endif
