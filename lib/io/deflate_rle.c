/* Raw deflate with literals and distance-1 runs (deflate_rle.h).
 *
 * Per block of at most BLOCK_IN input bytes: the bytes become tokens (a
 * literal, or a run of 3..258 copies of the byte before: a match at
 * distance 1), counted as they are made; code lengths by Huffman's
 * construction over the counts (two queues over the symbols sorted by
 * count), limited to 15 bits (lengths past the limit are folded into it,
 * then leaves at the limit are traded for splits of the next shorter leaf
 * until Kraft's sum is exactly 1); canonical codes as RFC 1951 3.2.2
 * assigns them; the block goes out as dynamic Huffman, or stored where that
 * is smaller. The distance tree is always two codes of one bit (only code 0,
 * distance 1, is used; a complete tree every inflater accepts). */
#include <stdlib.h>
#include <string.h>

#include "io/deflate_rle.h"

enum {
    BLOCK_IN = 128 * 1024, /* input bytes per block (one Huffman table each) */
    MAX_BITS = 15,         /* literal/length code lengths */
    MAX_CL_BITS = 7,       /* code-length code lengths */
    NLIT = 286,            /* literal/length symbols */
    NCL = 19,              /* code-length symbols */
    STORED_MAX = 65535     /* bytes per stored block */
};

/* lengths 3..258: symbol 257 + k for base[k] <= len, extra bits len - base[k] */
static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
/* the order in which code-length code lengths are sent */
static const uint8_t cl_order[NCL] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

size_t gt_deflate_rle_bound(size_t n)
{
    /* dynamic blocks are only sent where smaller than stored ones: stored
     * pieces cost 5 bytes each beyond their data, plus the closing block */
    return n + 5 * (n / STORED_MAX + n / BLOCK_IN + 2) + 16;
}

/* ------------------------------------------------------------ bit writer */
typedef struct {
    uint8_t *p, *end;
    uint64_t acc; /* pending bits, the first at bit 0 */
    int n;        /* how many */
    bool over;    /* ran out of room */
} bitw;

static void bw_drain(bitw *w, int keep)
{
    while (w->n >= 8 + keep) {
        if (w->p == w->end) {
            w->over = true;
            w->n = 0;
            w->acc = 0;
            return;
        }
        *w->p++ = (uint8_t)w->acc;
        w->acc >>= 8;
        w->n -= 8;
    }
}

/* v: k bits (k <= 32) */
static inline void put_bits(bitw *w, uint32_t v, int k)
{
    w->acc |= (uint64_t)v << w->n;
    w->n += k;
    if (w->n >= 32) {
        if (w->end - w->p >= 8) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            memcpy(w->p, &w->acc, 8); /* the low 4 bytes count; the rest is rewritten */
#else
            w->p[0] = (uint8_t)w->acc;
            w->p[1] = (uint8_t)(w->acc >> 8);
            w->p[2] = (uint8_t)(w->acc >> 16);
            w->p[3] = (uint8_t)(w->acc >> 24);
#endif
            w->p += 4;
            w->acc >>= 32;
            w->n -= 32;
        } else {
            bw_drain(w, 0);
        }
    }
}

/* to a byte boundary (zero bits), everything written out */
static void bw_align(bitw *w)
{
    put_bits(w, 0, (8 - (w->n & 7)) & 7);
    bw_drain(w, 0);
}

/* ------------------------------------------------------------- Huffman */
static uint16_t reverse_bits(uint32_t c, int len)
{
    uint32_t r = 0;
    for (int i = 0; i < len; i++, c >>= 1) r = (r << 1) | (c & 1u);
    return (uint16_t)r;
}

/* Code lengths (<= maxbits, 0 for unused symbols) for freq[0..n), n <= NLIT. */
static void huff_lengths(const uint32_t *freq, int n, int maxbits, uint8_t *len)
{
    int sym[NLIT], m = 0;
    for (int i = 0; i < n; i++) {
        len[i] = 0;
        if (freq[i]) sym[m++] = i;
    }
    if (m == 0) return;
    if (m == 1) { /* one used symbol: a one-bit code beside an unused one */
        len[sym[0]] = 1;
        len[sym[0] == 0 ? 1 : 0] = 1;
        return;
    }
    for (int i = 1; i < m; i++) { /* by count, ascending (n <= 286: insertion sort) */
        int s = sym[i], j = i;
        for (; j > 0 && freq[sym[j - 1]] > freq[s]; j--) sym[j] = sym[j - 1];
        sym[j] = s;
    }
    /* leaves 0..m-1 (sorted), internal nodes m..2m-2 made in ascending weight */
    uint64_t wt[2 * NLIT];
    int parent[2 * NLIT], depth[2 * NLIT];
    for (int i = 0; i < m; i++) wt[i] = freq[sym[i]];
    int li = 0, ii = m, next = m;
    while (next < 2 * m - 1) {
        int c[2];
        for (int k = 0; k < 2; k++) c[k] = (li < m && (ii >= next || wt[li] <= wt[ii])) ? li++ : ii++;
        wt[next] = wt[c[0]] + wt[c[1]];
        parent[c[0]] = parent[c[1]] = next;
        next++;
    }
    depth[2 * m - 2] = 0;
    for (int k = 2 * m - 3; k >= 0; k--) depth[k] = depth[parent[k]] + 1;
    int count[MAX_BITS + 1] = {0};
    for (int k = 0; k < m; k++) count[depth[k] > maxbits ? maxbits : depth[k]]++;
    /* Kraft: sum of 2^(maxbits - len) must be 2^maxbits */
    uint32_t total = 0;
    for (int l = 1; l <= maxbits; l++) total += (uint32_t)count[l] << (maxbits - l);
    while (total > (1u << maxbits)) {
        count[maxbits]--;
        for (int l = maxbits - 1; l > 0; l--)
            if (count[l]) {
                count[l]--;
                count[l + 1] += 2;
                break;
            }
        total--;
    }
    /* the rarest symbols get the longest codes */
    int k = 0;
    for (int l = maxbits; l >= 1; l--)
        for (int c = 0; c < count[l]; c++) len[sym[k++]] = (uint8_t)l;
}

/* Canonical codes (RFC 1951 3.2.2), bit-reversed for LSB-first output. */
static void huff_codes(const uint8_t *len, int n, uint16_t *code)
{
    int count[MAX_BITS + 1] = {0}, next[MAX_BITS + 2];
    for (int i = 0; i < n; i++) count[len[i]]++;
    count[0] = 0;
    int c = 0;
    for (int b = 1; b <= MAX_BITS; b++) {
        c = (c + count[b - 1]) << 1;
        next[b] = c;
    }
    for (int i = 0; i < n; i++) code[i] = len[i] ? reverse_bits((uint32_t)next[len[i]]++, len[i]) : 0;
}

/* -------------------------------------------------------------- blocks */
typedef struct {
    uint8_t lsym[259];  /* length -> its index k in len_base */
    uint16_t *tok;      /* < 256 literal, else 256 + run length */
    uint32_t freq[NLIT];
} coder;

static void emit_stored(bitw *w, const uint8_t *src, size_t n, bool final)
{
    size_t off = 0;
    do {
        size_t k = n - off < STORED_MAX ? n - off : STORED_MAX;
        bool fin = final && off + k == n;
        put_bits(w, fin ? 1u : 0u, 1);
        put_bits(w, 0, 2);
        bw_align(w);
        put_bits(w, (uint32_t)k, 16);
        put_bits(w, (uint32_t)(~k & 0xffffu), 16);
        bw_drain(w, 0);
        if (w->end - w->p < (ptrdiff_t)k) {
            w->over = true;
            return;
        }
        memcpy(w->p, src + off, k);
        w->p += k;
        off += k;
    } while (off < n);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define WORDWISE 1
static inline uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
#endif

/* A run of r (3..258) copies of the byte before: its token, its count,
 * and its extra bits with the distance code's one bit. */
static inline void add_run(coder *cd, size_t r, size_t *nt, uint64_t *run_extra)
{
    const int q = cd->lsym[r];
    cd->tok[(*nt)++] = (uint16_t)(256 + r);
    cd->freq[257 + q]++;
    *run_extra += len_extra[q] + 1u;
}

/* One block of src[a, b) (b > a); the window holds src[0, a). */
static void emit_block(coder *cd, bitw *w, const uint8_t *src, size_t a, size_t b, bool final)
{
    uint32_t *freq = cd->freq;
    memset(freq, 0, sizeof cd->freq);
    size_t nt = 0;
    uint64_t run_extra = 0; /* extra bits of the runs, and their distance bit */
    for (size_t i = a; i < b;) {
#ifdef WORDWISE
        /* eight positions at once: byte k of d is 0 where src[i+k] ==
         * src[i+k-1]; a run (>= 3) starts at k where bytes k, k+1, k+2 are;
         * with none among k = 0..5, six literals */
        if (i > 0 && b - i >= 8) {
            const uint64_t lo7 = 0x7f7f7f7f7f7f7f7full;
            const uint64_t d = load64(src + i - 1) ^ load64(src + i);
            const uint64_t z = ~(((d & lo7) + lo7) | d | lo7); /* 0x80 in each zero byte */
            const uint64_t t = z & (z >> 8) & (z >> 16);
            const int k = t ? __builtin_ctzll(t) >> 3 : 6;
            for (int j = 0; j < k; j++) {
                const uint8_t c = src[i + j];
                cd->tok[nt++] = c;
                freq[c]++;
            }
            i += (size_t)k;
            if (k == 6) continue;
            /* a run of at least 3 starts at i */
            const uint8_t c = src[i];
            const uint64_t cc = 0x0101010101010101ull * c;
            size_t lim = b - i < 258 ? b - i : 258, r = 3;
            while (r + 8 <= lim && load64(src + i + r) == cc) r += 8;
            while (r < lim && src[i + r] == c) r++;
            add_run(cd, r, &nt, &run_extra);
            i += r;
            continue;
        }
#endif
        const uint8_t c = src[i];
        if (i > 0 && src[i - 1] == c) {
            size_t lim = b - i < 258 ? b - i : 258, r = 1;
            while (r < lim && src[i + r] == c) r++;
            if (r >= 3) {
                add_run(cd, r, &nt, &run_extra);
                i += r;
                continue;
            }
        }
        cd->tok[nt++] = c;
        freq[c]++;
        i++;
    }
    freq[256] = 1; /* end of block */

    uint8_t len[NLIT];
    uint16_t code[NLIT];
    huff_lengths(freq, NLIT, MAX_BITS, len);
    huff_codes(len, NLIT, code);
    int nlit = NLIT;
    while (nlit > 257 && len[nlit - 1] == 0) nlit--;

    /* the code lengths (literal/length, then the two distance codes), run-length coded */
    uint8_t all[NLIT + 2];
    memcpy(all, len, (size_t)nlit);
    all[nlit] = all[nlit + 1] = 1;
    const int nall = nlit + 2;
    uint8_t cl_sym[NLIT + 2], cl_ext[NLIT + 2];
    int ncl = 0;
    uint32_t cl_freq[NCL] = {0};
    for (int i = 0; i < nall;) {
        const uint8_t v = all[i];
        int run = 1;
        while (i + run < nall && all[i + run] == v) run++;
        i += run;
        if (v == 0) {
            while (run >= 11) {
                int r = run < 138 ? run : 138;
                cl_sym[ncl] = 18, cl_ext[ncl++] = (uint8_t)(r - 11);
                run -= r;
            }
            if (run >= 3) {
                cl_sym[ncl] = 17, cl_ext[ncl++] = (uint8_t)(run - 3);
                run = 0;
            }
        } else {
            cl_sym[ncl] = v, cl_ext[ncl++] = 0;
            run--;
            while (run >= 3) {
                int r = run < 6 ? run : 6;
                cl_sym[ncl] = 16, cl_ext[ncl++] = (uint8_t)(r - 3);
                run -= r;
            }
        }
        while (run-- > 0) cl_sym[ncl] = v, cl_ext[ncl++] = 0;
    }
    for (int i = 0; i < ncl; i++) cl_freq[cl_sym[i]]++;
    uint8_t cl_len[NCL];
    uint16_t cl_code[NCL];
    huff_lengths(cl_freq, NCL, MAX_CL_BITS, cl_len);
    huff_codes(cl_len, NCL, cl_code);
    int nclen = NCL;
    while (nclen > 4 && cl_len[cl_order[nclen - 1]] == 0) nclen--;

    /* size of the dynamic block against stored pieces */
    static const uint8_t cl_extra_bits[NCL] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7};
    uint64_t bits = 3 + 14 + 3 * (uint64_t)nclen + run_extra;
    for (int i = 0; i < ncl; i++) bits += cl_len[cl_sym[i]] + cl_extra_bits[cl_sym[i]];
    for (int s = 0; s < NLIT; s++) bits += (uint64_t)freq[s] * len[s];
    const size_t n = b - a;
    const uint64_t stored_bits = 8 * ((uint64_t)n + 5 * ((n + STORED_MAX - 1) / STORED_MAX)) + 8;
    if (bits >= stored_bits) {
        emit_stored(w, src + a, n, final);
        return;
    }

    put_bits(w, final ? 1u : 0u, 1);
    put_bits(w, 2, 2); /* dynamic Huffman */
    put_bits(w, (uint32_t)(nlit - 257), 5);
    put_bits(w, 1, 5); /* two distance codes */
    put_bits(w, (uint32_t)(nclen - 4), 4);
    for (int i = 0; i < nclen; i++) put_bits(w, cl_len[cl_order[i]], 3);
    for (int i = 0; i < ncl; i++) {
        const int s = cl_sym[i];
        put_bits(w, cl_code[s], cl_len[s]);
        if (cl_extra_bits[s]) put_bits(w, cl_ext[i], cl_extra_bits[s]);
    }
    /* the tokens, with the writer's state in locals: per token one table
     * entry (code | length << 16) and one shift into the accumulator */
    uint32_t cl[NLIT];
    for (int q = 0; q < NLIT; q++) cl[q] = code[q] | (uint32_t)len[q] << 16;
    for (size_t t = 0; t < nt; t++) {
        const uint32_t v = cd->tok[t];
        uint32_t bits, k;
        if (v < 256) {
            bits = cl[v] & 0xffffu;
            k = cl[v] >> 16;
        } else {
            const uint32_t r = v - 256;
            const int q = cd->lsym[r];
            const uint32_t e = cl[257 + q];
            /* length code, its extra bits, distance code 0 (one 0 bit) */
            bits = (e & 0xffffu) | ((r - len_base[q]) << (e >> 16));
            k = (e >> 16) + len_extra[q] + 1u;
        }
        put_bits(w, bits, (int)k);
    }
    put_bits(w, code[256], len[256]);
}

size_t gt_deflate_rle(const uint8_t *src, size_t n, bool last, uint8_t *dst, size_t cap)
{
    coder cd;
    for (int k = 0, l = 3; l <= 258; l++) {
        while (k < 28 && len_base[k + 1] <= l) k++;
        cd.lsym[l] = (uint8_t)k;
    }
    cd.tok = malloc((n < BLOCK_IN ? (n ? n : 1) : BLOCK_IN) * sizeof *cd.tok);
    if (!cd.tok) return 0;
    bitw w = {dst, dst + cap, 0, 0, false};
    for (size_t a = 0; a < n && !w.over; a += BLOCK_IN) {
        size_t b = n - a < BLOCK_IN ? n : a + BLOCK_IN;
        emit_block(&cd, &w, src, a, b, last && b == n);
    }
    if (!last || n == 0) /* an empty stored block: the sync flush, or the final block */
        emit_stored(&w, src, 0, last);
    bw_align(&w);
    free(cd.tok);
    return w.over ? 0 : (size_t)(w.p - dst);
}
