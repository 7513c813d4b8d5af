/* Volume read throughput: bench_volume_read FILE [--dims X,Y,Z --type T]
 * [--reps N]. Reads FILE (NRRD, or headerless raw with --dims/--type) with
 * gt_volume_read several times and prints the best GB/s, once with one
 * reader thread and once with the default count (GT_READ_THREADS in the
 * environment sets it). For files in /dev/shm or the page cache this is the
 * copy speed the reader reaches; a cold disk measures the disk. Not a test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/status.h"
#include "io/reader.h"
#include "io/volume.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int run(const char *path, const int64_t *dims, int type, int reps, const char *label)
{
    double best = 1e30;
    size_t bytes = 0;
    for (int i = 0; i < reps; i++) {
        gt_volume v;
        double t0 = now();
        gt_status st = gt_volume_read(path, dims, type, NULL, NULL, &v);
        double t = now() - t0;
        if (st != GT_OK) {
            fprintf(stderr, "bench_volume_read: error: %s\n", gt_errmsg());
            return 1;
        }
        bytes = gt_voltype_size(v.info.type) * (size_t)v.info.dims[0] * (size_t)v.info.dims[1] *
                (size_t)v.info.dims[2];
        gt_volume_free(&v);
        if (t < best) best = t;
    }
    printf("%-24s %10.1f MiB  best %8.3f ms  %6.2f GB/s\n", label, bytes / 1048576.0, best * 1e3,
           bytes / best / 1e9);
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int64_t dims[3];
    bool have_dims = false;
    int type = -1, reps = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dims") == 0 && i + 1 < argc) {
            long long x, y, z;
            if (sscanf(argv[++i], "%lld,%lld,%lld", &x, &y, &z) != 3) goto usage;
            dims[0] = x, dims[1] = y, dims[2] = z;
            have_dims = true;
        } else if (strcmp(argv[i], "--type") == 0 && i + 1 < argc) {
            gt_voltype t;
            if (gt_voltype_parse("--type", argv[++i], &t) != GT_OK) goto usage;
            type = (int)t;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
            if (reps < 1) goto usage;
        } else if (!path && argv[i][0] != '-') {
            path = argv[i];
        } else
            goto usage;
    }
    if (!path) goto usage;
    char label[64];
    const char *env = getenv("GT_READ_THREADS");
    char *saved = env ? strdup(env) : NULL;
    setenv("GT_READ_THREADS", "1", 1);
    if (run(path, have_dims ? dims : NULL, type, reps, "1 thread")) return 1;
    if (saved) setenv("GT_READ_THREADS", saved, 1);
    else unsetenv("GT_READ_THREADS");
    free(saved);
    snprintf(label, sizeof label, "%d threads", gt_rd_bulk_threads());
    return run(path, have_dims ? dims : NULL, type, reps, label);
usage:
    fprintf(stderr, "usage: bench_volume_read FILE [--dims X,Y,Z --type T] [--reps N]\n");
    return 2;
}
