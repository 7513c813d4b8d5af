/* PNG encoder timing (not a test): our encoder (png_write.c) at each thread
 * count and level asked, against stb_image_write's default and, on the same
 * filtered rows, zlib's level 1 and libdeflate's level 1 alone (one thread,
 * the rows' deflating only), on the pixels of a PNG or JPEG file.
 *   bench_png IMAGE [reps] [channels]
 * channels 3 or 4 converts the image first. Prints ms per encode (median of
 * reps), the CPU time of all its threads (median; on a busy machine the
 * robust figure) and the file size for each setting (for zlib and
 * libdeflate: their zlib stream plus our PNG's other bytes, the file they
 * would give). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libdeflate.h>
#if defined(GT_HAVE_ZLIB)
#include <zlib.h>
#endif

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

/* The zlib stream of a PNG's IDAT chunks (malloc'ed) and the other bytes. */
static uint8_t *idat_stream(const uint8_t *png, size_t len, size_t *n, size_t *other)
{
    uint8_t *z = malloc(len);
    size_t pos = 8;
    *n = 0;
    *other = 8;
    while (z && pos + 12 <= len) {
        size_t k = (size_t)png[pos] << 24 | (size_t)png[pos + 1] << 16 | (size_t)png[pos + 2] << 8 | png[pos + 3];
        if (!memcmp(png + pos + 4, "IDAT", 4)) memcpy(z + *n, png + pos + 8, k), *n += k;
        else *other += k + 12;
        pos += k + 12;
    }
    *other += 12; /* one IDAT chunk's length, type and CRC */
    return z;
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
    size_t sz = 0;
#if defined(GT_HAVE_STB_SYSTEM)
    for (int r = 0; r < reps; r++) {
        sz = 0;
        double t0 = gt_now_ms(), c0 = cpu_ms();
        stbi_write_png_to_func(count_sink, &sz, img.w, img.h, img.channels, img.data, img.w * img.channels);
        t[r] = gt_now_ms() - t0;
        c[r] = cpu_ms() - c0;
    }
    printf("stb_image_write (old)     %8.2f ms %8.2f cpu ms %9zu bytes\n", median(t, reps), median(c, reps), sz);
#endif
    /* the filtered rows, from a stored (level 0) file */
    uint8_t *png0;
    size_t len0, zn, other;
    if (gt_png_encode(&img, 0, 0, 1, &png0, &len0) != GT_OK) return gt_report(GT_ERR_RUNTIME);
    uint8_t *z0 = idat_stream(png0, len0, &zn, &other);
    const size_t raw = ((size_t)img.w * img.channels * (img.bits / 8) + 1) * (size_t)img.h;
    uint8_t *rows = malloc(raw), *zo = malloc(raw + raw / 8 + 4096);
    struct libdeflate_decompressor *dd = libdeflate_alloc_decompressor();
    if (!z0 || !rows || !zo || !dd || libdeflate_zlib_decompress(dd, z0, zn, rows, raw, NULL) != LIBDEFLATE_SUCCESS) {
        fprintf(stderr, "bench_png: cannot read back the stored rows\n");
        return 1;
    }
    libdeflate_free_decompressor(dd);
    free(png0);
    free(z0);
#if defined(GT_HAVE_ZLIB)
    for (int r = 0; r < reps; r++) {
        uLongf zl = (uLongf)(raw + raw / 8 + 4096);
        double t0 = gt_now_ms(), c0 = cpu_ms();
        if (compress2(zo, &zl, rows, (uLong)raw, 1) != Z_OK) return 1;
        t[r] = gt_now_ms() - t0;
        c[r] = cpu_ms() - c0;
        sz = zl + other;
    }
    printf("zlib level 1, 1 thread    %8.2f ms %8.2f cpu ms %9zu bytes (deflate only)\n", median(t, reps),
           median(c, reps), sz);
#endif
    struct libdeflate_compressor *ld = libdeflate_alloc_compressor(1);
    for (int r = 0; r < reps; r++) {
        double t0 = gt_now_ms(), c0 = cpu_ms();
        size_t zl = libdeflate_zlib_compress(ld, rows, raw, zo, raw + raw / 8 + 4096);
        t[r] = gt_now_ms() - t0;
        c[r] = cpu_ms() - c0;
        sz = zl + other;
    }
    libdeflate_free_compressor(ld);
    printf("libdeflate level 1, 1 th. %8.2f ms %8.2f cpu ms %9zu bytes (deflate only)\n", median(t, reps),
           median(c, reps), sz);
    free(rows);
    free(zo);
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
            printf("ours, level %d, threads %-2d %8.2f ms %8.2f cpu ms %9zu bytes\n", levels[li], threads[ti],
                   median(t, reps), median(c, reps), n);
        }
    free(t);
    free(c);
    gt_image_free(&img);
    return 0;
}
