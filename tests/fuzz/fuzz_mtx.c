/* libFuzzer target: Matrix Market reader (path-based, through a memfd).
 *
 * Build and run by hand (from the repo root, after `meson setup build`):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
 *     -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I. -Ilib -Ibuild tests/fuzz/fuzz_mtx.c \
 *     lib/common/{status,log,alloc,output}.c lib/io/mtx.c -o /tmp/fuzz_mtx
 *   /tmp/fuzz_mtx -max_total_time=180 -rss_limit_mb=2048 CORPUS_DIR testdata/io/mtx/broken
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/mtx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz_mtx", 0);
    if (fd < 0) return 0;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    gt_mtx m;
    if (gt_mtx_read(path, &m) == GT_OK) {
        /* touch everything the reader claims to return */
        double s = 0;
        for (int64_t k = 0; k < m.nnz; k++) s += m.val[k] + m.row[k] + m.col[k];
        if (m.is_array)
            for (int64_t k = 0; k < m.nrows * m.ncols; k++) s += m.dense[k];
        if (s == 12345.678) puts("");
        gt_mtx_free(&m);
    }
    double *v;
    int64_t n;
    if (gt_mtx_read_vector(path, &v, &n) == GT_OK) free(v);
    close(fd);
    return 0;
}
