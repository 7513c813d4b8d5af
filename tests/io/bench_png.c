/* PNG encoder timing (not a test): the fast encoder (png_write.c) at each
 * thread count and level asked, against stb_image_write's default, on the
 * pixels of a PNG file (a rendered frame is the case that matters).
 *   bench_png IMAGE.png [reps] [channels]
 * channels 3 or 4 converts the image first. Prints ms per encode (median of
 * reps), the CPU time of all its threads (median; on a busy machine the
 * robust figure) and the file size for each setting. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/timer.h"
#include "io/image.h"

#if defined(GT_HAVE_STB_SYSTEM)
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wtype-limits"
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb_image_write.h>
static void count_sink(void *ctx, void *data, int size)
{
    (void)data;
    *(size_t *)ctx += (size_t)size;
}
#endif

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_d);
    return t[n / 2];
}

int main(int argc, char **argv)
{
    gt_set_progname("bench_png");
    if (argc < 2) {
        fprintf(stderr, "usage: bench_png IMAGE.png [reps] [channels]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    int want = argc > 3 ? atoi(argv[3]) : 0;
    if (reps < 1) reps = 1;
    gt_image img;
    if (gt_image_read(argv[1], want, 0, &img) != GT_OK) return gt_report(GT_ERR_DATA);
    double *t = malloc(sizeof *t * (size_t)reps), *c = malloc(sizeof *c * (size_t)reps);
    printf("%dx%d, %d channels, %d bits, %ld cores online\n", img.w, img.h, img.channels, img.bits,
           sysconf(_SC_NPROCESSORS_ONLN));
#if defined(GT_HAVE_STB_SYSTEM)
    size_t sz = 0;
    for (int r = 0; r < reps; r++) {
        sz = 0;
        double t0 = gt_now_ms(), c0 = cpu_ms();
        stbi_write_png_to_func(count_sink, &sz, img.w, img.h, img.channels, img.data, img.w * img.channels);
        t[r] = gt_now_ms() - t0;
        c[r] = cpu_ms() - c0;
    }
    printf("stb_image_write (old)     %8.2f ms %8.2f cpu ms %9zu bytes\n", median(t, reps), median(c, reps), sz);
#endif
    const int levels[] = {1, 2, 6};
    const int threads[] = {1, 2, 4, 8, 0};
    for (size_t li = 0; li < sizeof levels / sizeof *levels; li++)
        for (size_t ti = 0; ti < sizeof threads / sizeof *threads; ti++) {
            size_t n = 0;
            for (int r = 0; r < reps; r++) {
                uint8_t *png;
                double t0 = gt_now_ms(), c0 = cpu_ms();
                if (gt_png_encode(&img, 0, levels[li], threads[ti], &png, &n) != GT_OK) return gt_report(GT_ERR_RUNTIME);
                t[r] = gt_now_ms() - t0;
                c[r] = cpu_ms() - c0;
                free(png);
            }
            printf("fast, level %d, threads %-2d %8.2f ms %8.2f cpu ms %9zu bytes\n", levels[li], threads[ti],
                   median(t, reps), median(c, reps), n);
        }
    free(t);
    free(c);
    gt_image_free(&img);
    return 0;
}
