/* Structure analysis (parallel over rows, OpenMP), the automatic format choice, --info and the greedy
 * colouring used by multicolour Gauss-Seidel. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/sparse.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Row i holds column j? Binary search (rows are sorted); *v its value. */
static bool lookup(const gt_csr *a, int64_t i, int32_t j, double *v)
{
    int64_t lo = a->ptr[i], hi = a->ptr[i + 1];
    while (lo < hi) {
        int64_t m = lo + (hi - lo) / 2;
        if (a->col[m] < j) lo = m + 1;
        else hi = m;
    }
    if (lo < a->ptr[i + 1] && a->col[lo] == j) {
        *v = a->val[lo];
        return true;
    }
    return false;
}

/* Numerically symmetric, given as many entries above the diagonal as below:
 * every upper entry (i, j) has its mirror (j, i) with a close value (then
 * the map is onto the lower entries, which are as many). Rows in parallel,
 * every thread stops once one finds a mismatch. */
static bool check_symmetric(const gt_csr *a)
{
    int bad = 0;
#pragma omp parallel for schedule(dynamic, 4096)
    for (int64_t i = 0; i < a->nrows; i++) {
        if (__atomic_load_n(&bad, __ATOMIC_RELAXED)) continue;
        for (int64_t p = a->ptr[i + 1] - 1; p >= a->ptr[i] && a->col[p] > i; p--) {
            double t;
            if (!lookup(a, a->col[p], (int32_t)i, &t) ||
                fabs(t - a->val[p]) > 1e-12 * (fabs(t) + fabs(a->val[p]))) {
                __atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
                break;
            }
        }
    }
    return !bad;
}

/* An entry (i, j, v) as 64 bits: mixed so that sums over the entries above
 * the diagonal and over the mirrored ones below agree only when the two
 * multisets do (up to a 2^-64 chance); -0 counts as +0. */
static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 33, x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}
static inline uint64_t entry_hash(int64_t i, int64_t j, double v)
{
    uint64_t bits = 0;
    if (v != 0) memcpy(&bits, &v, sizeof bits);
    return mix64(mix64(((uint64_t)i << 32) ^ (uint64_t)j) ^ bits);
}

/* Structure analysis in one parallel pass over the rows (lengths, diagonal
 * dominance, the diagonals used as bits of a bitmap per thread, entries
 * above and below the diagonal, and, when the caller does not know
 * whether A is symmetric, sums of the entries above and of the mirrored
 * entries below as hashes). Equal sums say A is exactly symmetric in one
 * streaming pass; otherwise the check by binary search (values within
 * 1e-12) runs, when the counts above and below agree: on a randomly
 * numbered 405k-row mesh matrix written as "general" that search was 80 %
 * of the analysis (335 ms of the read's 854 ms on one core). */
gt_status gt_sp_analyze_sym(const gt_csr *a, bool known_symmetric, gt_sp_info *in)
{
    memset(in, 0, sizeof *in);
    const int64_t n = a->nrows;
    in->nrows = n, in->ncols = a->ncols, in->nnz = a->nnz;
    /* the diagonals used: a bitmap per thread (a shared one costs more on two
       cores than on one: its cache lines move between the cores on a matrix
       with scattered diagonals), merged over the words each thread touched */
    int64_t span = n + a->ncols, words = span / 64 + 1;
    int nt = 1;
#ifdef _OPENMP
    nt = omp_get_max_threads();
#endif
    uint64_t *bits = calloc((size_t)words * (size_t)nt, sizeof *bits);
    int64_t *wlo = malloc((size_t)nt * sizeof *wlo), *whi = malloc((size_t)nt * sizeof *whi);
    if (!bits || !wlo || !whi) {
        free(bits), free(wlo), free(whi);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    for (int t = 0; t < nt; t++) wlo[t] = words, whi[t] = -1;
    /* row lengths up to HCAP counted per thread, longer ones by count and sum:
       the HYB width and its COO share without two more passes over the rows */
    enum { HCAP = 255 };
    int64_t *hist = calloc((size_t)(HCAP + 1) * (size_t)nt, sizeof *hist);
    if (!hist) {
        free(bits), free(wlo), free(whi);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    int64_t over = 0, over_sum = 0;
    int64_t row_min = n ? INT64_MAX : 0, row_max = 0, empty = 0, zero_diag = INT64_MAX, upper = 0, lower = 0;
    double s1 = 0, s2 = 0;
    /* diagonal dominance is settled by the first row that fails it: from
       then on the off-diagonal values are not read at all (half the value
       traffic of the pass) */
    int dd_dead = !(a->nrows == a->ncols && n > 0), not_posd = dd_dead;
    const bool hash = !known_symmetric && a->nrows == a->ncols;
    uint64_t hu = 0, hl = 0;
    int64_t ndiag = 0, first = words, last = -1;
    /* one parallel region for the row pass and the merge of the diagonal
       bitmaps: waking a sleeping team costs milliseconds on a busy or
       virtual machine (2 cores here: a 0.01 ms merge loop took 7-8 ms as a
       region of its own) */
#pragma omp parallel num_threads(nt)
    {
    int t = 0;
#ifdef _OPENMP
    t = omp_get_thread_num();
#endif
    uint64_t *mine = bits + (size_t)t * (size_t)words;
    int64_t *myhist = hist + (size_t)t * (HCAP + 1);
    int64_t lo = words, hi = -1;
#pragma omp for schedule(static, 4096) reduction(min : row_min, zero_diag) reduction(max : row_max) \
    reduction(+ : empty, s1, s2, upper, lower, hu, hl, over, over_sum) reduction(| : not_posd)
    for (int64_t i = 0; i < n; i++) {
        int64_t len = a->ptr[i + 1] - a->ptr[i];
        if (len < row_min) row_min = len;
        if (len > row_max) row_max = len;
        if (len == 0) empty++;
        if (len <= HCAP) myhist[len]++;
        else over++, over_sum += len;
        s1 += (double)len, s2 += (double)len * (double)len;
        const bool need_off = !__atomic_load_n(&dd_dead, __ATOMIC_RELAXED);
        const int64_t pb = a->ptr[i], pe = a->ptr[i + 1];
        double off = 0;
        int64_t dpos = -1, below = 0;
        /* the entries' diagonals as bits (s = column - row + n - 1), the
         * diagonal's place and the count below it: a loop without branches
         * over the column indices only (the values are read below only
         * while they are needed) */
        const int64_t shift = n - 1 - i;
        int64_t smin = INT64_MAX, smax = -1;
        for (int64_t p = pb; p < pe; p++) {
            const int64_t c = a->col[p], s = c + shift;
            below += c < i;
            dpos = c == i ? p : dpos;
            smin = s < smin ? s : smin;
            smax = s > smax ? s : smax;
            mine[s >> 6] |= (uint64_t)1 << (s & 63);
        }
        if (pe > pb) {
            if ((smin >> 6) < lo) lo = smin >> 6;
            if ((smax >> 6) > hi) hi = smax >> 6;
        }
        lower += below, upper += len - below - (dpos >= 0);
        /* the values only while diagonal dominance is open, or for the hash */
        if (need_off || hash)
            for (int64_t p = pb; p < pe; p++) {
                const int64_t c = a->col[p];
                if (c == i) continue;
                if (need_off) off += fabs(a->val[p]);
                if (hash) {
                    if (c > i) hu += entry_hash(i, c, a->val[p]);
                    else hl += entry_hash(c, i, a->val[p]);
                }
            }
        double diag = dpos >= 0 ? a->val[dpos] : 0.0;
        if (i < a->ncols && diag == 0.0 && i < zero_diag) zero_diag = i;
        if (need_off && !(fabs(diag) > off)) __atomic_store_n(&dd_dead, 1, __ATOMIC_RELAXED);
        if (!(diag > 0)) not_posd = 1;
    }
    wlo[t] = lo, whi[t] = hi;
#pragma omp barrier
#pragma omp single
    for (int u = 0; u < nt; u++) {
        if (wlo[u] < first) first = wlo[u];
        if (whi[u] > last) last = whi[u];
    }
#pragma omp for reduction(+ : ndiag)
    for (int64_t w = first; w <= last; w++) {
        uint64_t u = 0;
        for (int k = 0; k < nt; k++)
            if (w >= wlo[k] && w <= whi[k]) u |= bits[(size_t)k * (size_t)words + (size_t)w];
        ndiag += __builtin_popcountll(u);
    }
    }
    free(bits), free(wlo), free(whi);
    in->ndiag = ndiag;
    in->row_min = row_min, in->row_max = row_max, in->empty_rows = empty;
    in->zero_diag_row = zero_diag == INT64_MAX ? -1 : zero_diag;
    in->diag_dominant = !dd_dead;
    in->positive_diagonal = !not_posd;
    in->symmetric = a->nrows == a->ncols && upper == lower &&
                    (known_symmetric || (hash && hu == hl) || check_symmetric(a));
    if (n > 0) {
        in->row_mean = s1 / (double)n;
        double var = s2 / (double)n - in->row_mean * in->row_mean;
        in->row_std = var > 0 ? sqrt(var) : 0;
    }
    /* gt_hyb_width's choice (the largest K with at least max(4096, n/3)
       rows of K or more entries) from the histogram, and the entries beyond
       K; when K would be above HCAP, its own passes */
    for (int k = 1; k < nt; k++)
        for (int l = 0; l <= HCAP; l++) hist[l] += hist[(size_t)k * (HCAP + 1) + (size_t)l];
    int64_t need = n / 3 > 4096 ? n / 3 : 4096, atleast = over, K = 0;
    if (need > n) need = n;
    if (atleast < need) {
        for (int64_t k = HCAP; k >= 1; k--) {
            atleast += hist[k];
            if (atleast >= need) {
                K = k;
                break;
            }
        }
        int64_t hc = over_sum - over * K;
        for (int64_t k = K + 1; k <= HCAP; k++) hc += hist[k] * (k - K);
        in->hyb_width = K;
        in->hyb_coo_nnz = hc;
    } else {
        in->hyb_width = gt_hyb_width(a);
        int64_t hc = 0;
        const int64_t w = in->hyb_width;
        for (int64_t i = 0; i < n; i++) {
            int64_t len = a->ptr[i + 1] - a->ptr[i];
            if (len > w) hc += len - w;
        }
        in->hyb_coo_nnz = hc;
    }
    free(hist);
    for (int f = 0; f < GT_SP_NFORMATS; f++) {
        in->bytes[f][0] = gt_sp_format_bytes(in, (gt_sp_format)f, 4);
        in->bytes[f][1] = gt_sp_format_bytes(in, (gt_sp_format)f, 8);
    }
    return GT_OK;
}

gt_status gt_sp_analyze(const gt_csr *a, gt_sp_info *in)
{
    return gt_sp_analyze_sym(a, false, in);
}

size_t gt_sp_format_bytes(const gt_sp_info *in, gt_sp_format f, int prec)
{
    size_t v = (size_t)prec, n = (size_t)in->nrows, z = (size_t)in->nnz;
    switch (f) {
    case GT_SP_COO: return z * (8 + v);
    case GT_SP_CSR: return (n + 1) * 8 + z * (4 + v);
    case GT_SP_ELL: return (size_t)in->row_max * n * (4 + v);
    case GT_SP_DIA: return (size_t)in->ndiag * (4 + n * v);
    case GT_SP_HYB: return (size_t)in->hyb_width * n * (4 + v) + (size_t)in->hyb_coo_nnz * (8 + v);
    default: return 0;
    }
}

gt_sp_format gt_sp_choose_format(const gt_sp_info *in, char *why, size_t wl)
{
    double nnz = (double)in->nnz;
    double dia_fill = in->ndiag ? nnz / ((double)in->ndiag * (double)in->nrows) : 0;
    double ell_fill = in->row_max ? nnz / ((double)in->row_max * (double)in->nrows) : 0;
    if (in->nnz == 0) {
        snprintf(why, wl, "the matrix has no nonzeros: CSR");
        return GT_SP_CSR;
    }
    if (in->nrows == in->ncols && dia_fill >= 2.0 / 3.0 && in->ndiag <= 256) {
        snprintf(why, wl,
                 "%lld diagonals hold all nonzeros with %.0f%% of the DIA slots used: DIA "
                 "(x is read contiguously, no column indices)",
                 (long long)in->ndiag, 100 * dia_fill);
        return GT_SP_DIA;
    }
    if (ell_fill >= 2.0 / 3.0) {
        snprintf(why, wl,
                 "row lengths are even (%lld..%lld, ELL width %lld is %.0f%% full): ELL",
                 (long long)in->row_min, (long long)in->row_max, (long long)in->row_max,
                 100 * ell_fill);
        return GT_SP_ELL;
    }
    if (in->hyb_width > 0 && (double)in->hyb_coo_nnz <= nnz / 3 && in->row_std <= in->row_mean) {
        snprintf(why, wl,
                 "rows are mostly regular: HYB with Bell & Garland ELL width %lld "
                 "(%.0f%% of the nonzeros in the COO part; plain ELL would be %.0f%% full)",
                 (long long)in->hyb_width, 100 * (double)in->hyb_coo_nnz / nnz, 100 * ell_fill);
        return GT_SP_HYB;
    }
    snprintf(why, wl,
             "row lengths are uneven (mean %.1f, std %.1f, max %lld; %lld diagonals): CSR",
             in->row_mean, in->row_std, (long long)in->row_max, (long long)in->ndiag);
    return GT_SP_CSR;
}

void gt_sp_print_info(const gt_sp_info *in, FILE *f)
{
    fprintf(f, "size          %lld x %lld\n", (long long)in->nrows, (long long)in->ncols);
    fprintf(f, "nnz           %lld (%.3g%% dense)\n", (long long)in->nnz,
            in->nrows && in->ncols ? 100.0 * (double)in->nnz / ((double)in->nrows * (double)in->ncols) : 0.0);
    fprintf(f, "symmetric     %s\n", in->symmetric ? "yes" : "no");
    fprintf(f, "diag dominant %s\n", in->diag_dominant ? "yes (strictly, by rows)" : "no");
    if (in->zero_diag_row >= 0)
        fprintf(f, "zero diagonal first at row %lld\n", (long long)in->zero_diag_row + 1);
    fprintf(f, "row length    min %lld  max %lld  mean %.2f  std %.2f  empty rows %lld\n",
            (long long)in->row_min, (long long)in->row_max, in->row_mean, in->row_std,
            (long long)in->empty_rows);
    fprintf(f, "diagonals     %lld\n", (long long)in->ndiag);
    fprintf(f, "HYB width     %lld (COO part %lld nonzeros)\n", (long long)in->hyb_width,
            (long long)in->hyb_coo_nnz);
    fprintf(f, "\n%-6s %14s %10s %14s %10s\n", "format", "bytes(single)", "B/nnz", "bytes(double)",
            "B/nnz");
    for (int k = 0; k < GT_SP_NFORMATS; k++) {
        double z = in->nnz ? (double)in->nnz : 1.0;
        fprintf(f, "%-6s %14zu %10.2f %14zu %10.2f\n", gt_sp_format_name((gt_sp_format)k),
                in->bytes[k][0], (double)in->bytes[k][0] / z, in->bytes[k][1],
                (double)in->bytes[k][1] / z);
    }
    char why[256];
    gt_sp_format c = gt_sp_choose_format(in, why, sizeof why);
    fprintf(f, "\nauto format   %s: %s\n", gt_sp_format_name(c), why);
}

gt_status gt_sp_colour(const gt_csr *a, int32_t *colour, int32_t *ncolours)
{
    int64_t n = a->nrows;
    /* transpose structure for the symmetrised graph */
    int64_t *tp = calloc((size_t)a->ncols + 2, sizeof *tp);
    int32_t *ti = malloc((size_t)(a->nnz ? a->nnz : 1) * sizeof *ti);
    int64_t *mark = malloc((size_t)(n + 1) * sizeof *mark);
    if (!tp || !ti || !mark) {
        free(tp), free(ti), free(mark);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    for (int64_t p = 0; p < a->nnz; p++) tp[a->col[p] + 1]++;
    for (int64_t j = 0; j < a->ncols; j++) tp[j + 1] += tp[j];
    int64_t *nx = malloc((size_t)(a->ncols + 1) * sizeof *nx);
    if (!nx) {
        free(tp), free(ti), free(mark);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    memcpy(nx, tp, (size_t)(a->ncols + 1) * sizeof *nx);
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) ti[nx[a->col[p]]++] = (int32_t)i;
    free(nx);
    for (int64_t c = 0; c <= n; c++) mark[c] = -1;
    int32_t nc = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            int64_t j = a->col[p];
            if (j != i && j < n && j < i) mark[colour[j]] = i;
        }
        if (i < a->ncols)
            for (int64_t p = tp[i]; p < tp[i + 1]; p++) {
                int64_t j = ti[p];
                if (j < i) mark[colour[j]] = i;
            }
        int32_t c = 0;
        while (mark[c] == i) c++;
        colour[i] = c;
        if (c + 1 > nc) nc = c + 1;
    }
    free(tp), free(ti), free(mark);
    *ncolours = nc;
    return GT_OK;
}
