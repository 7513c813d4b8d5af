/* Descriptor matching for the calibration: brute-force Hamming distances of
 * the 256-bit descriptors (four 64-bit popcounts), the nearest and second
 * nearest neighbour both ways, Lowe's ratio test and a cross check. Rows
 * are spread over threads (OpenMP); the result does not depend on the
 * thread count (ties go to the lower index). */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "stitch/calib.h"

static inline int hamming(const uint64_t *a, const uint64_t *b)
{
    return __builtin_popcountll(a[0] ^ b[0]) + __builtin_popcountll(a[1] ^ b[1]) +
           __builtin_popcountll(a[2] ^ b[2]) + __builtin_popcountll(a[3] ^ b[3]);
}

/* descriptors as aligned 64-bit words */
static uint64_t *words(const gt_calib_feat *f)
{
    uint64_t *w = gt_malloc_array((size_t)f->n + 1, GT_CALIB_DESC, "descriptors");
    if (w && f->n) memcpy(w, f->desc, (size_t)f->n * GT_CALIB_DESC);
    return w;
}

/* for every row of A: nearest (idx, d1) and second nearest distance d2 in B
 * (with the popcnt instruction where the processor has it: without it GCC
 * calls a table-driven popcount that takes most of the matching time) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("popcnt", "default")))
#endif
static void nearest(const uint64_t *A, int na, const uint64_t *B, int nb, int *idx, int *d1, int *d2)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < na; i++) {
        const uint64_t *a = A + 4 * (size_t)i;
        int best = 1 << 20, second = 1 << 20, bi = -1;
        for (int j = 0; j < nb; j++) {
            int d = hamming(a, B + 4 * (size_t)j);
            if (d < best) {
                second = best;
                best = d;
                bi = j;
            } else if (d < second) {
                second = d;
            }
        }
        idx[i] = bi;
        d1[i] = best;
        d2[i] = second;
    }
}

gt_status gt_calib_match_features(const gt_calib_feat *fa, const gt_calib_feat *fb, double ratio, gt_calib_match **m,
                         int *n)
{
    *m = NULL;
    *n = 0;
    int na = fa->n, nb = fb->n;
    uint64_t *A = words(fa), *B = words(fb);
    int *ia = gt_malloc_array((size_t)na + 1, 3 * sizeof(int), "matches");
    int *ib = gt_malloc_array((size_t)nb + 1, 3 * sizeof(int), "matches");
    gt_calib_match *out = gt_malloc_array((size_t)(na < nb ? na : nb) + 1, sizeof *out, "matches");
    if (!A || !B || !ia || !ib || !out) {
        free(A), free(B), free(ia), free(ib), free(out);
        return GT_ERR_RUNTIME;
    }
    nearest(A, na, B, nb, ia, ia + na, ia + 2 * (size_t)na);
    nearest(B, nb, A, na, ib, ib + nb, ib + 2 * (size_t)nb);
    int k = 0;
    for (int i = 0; i < na; i++) {
        int j = ia[i];
        if (j < 0 || ib[j] != i) continue; /* cross check */
        int d1 = ia[na + i], d2 = ia[2 * na + i];
        if (!((double)d1 < ratio * (double)d2)) continue; /* ratio test */
        out[k++] = (gt_calib_match){i, j, d1};
    }
    free(A), free(B), free(ia), free(ib);
    *m = out;
    *n = k;
    return GT_OK;
}
