/* The index logic of the CUDA marching cubes (kernels/mc), in GT_HD
 * functions that the kernels and a host test (tests/mc/test_mc_words.c,
 * which checks them against the CPU reference's numbering) both compile.
 *
 * Work unit: a "word", 32 consecutive points (or voxels) of one row (j, k):
 * columns 32w .. 32w+31, W = ceil(X/32) words per row. Words are numbered
 * (plane, row, word) with the word fastest, which is the vertex (edge-id)
 * order, so one exclusive scan of per-word counts numbers every vertex.
 * bits[((k - z0) * Y + j) * W + w], bit b: point (32w + b, j, k) is in.
 * Counts and offsets are 64-bit; final vertex numbers are < 2^31, so 32-bit
 * modular sums of them are exact. */
#ifndef GT_KERNELS_MC_WORDS_H
#define GT_KERNELS_MC_WORDS_H

#include <stdint.h>

#include "common/hostdev.h"
#include "mc/mc.h"
#include "mc/mc_math.h"

/* The slab as the kernels see it (passed by value to every kernel). */
typedef struct gt_mcw_geo {
    const float *vol; /* plane zb of the buffer */
    int64_t X, Y, Z, zb;
    int64_t z0, z1, kc, kt; /* own [z0,z1), counted point planes [z0,kc), voxel planes [z0,kt) */
    int64_t W;              /* words per row */
    float isof;
    double iso;
    double dir[3][3], origin[3], dinv[3][3];
    double nsign;
    int reverse, normals;
    int small;  /* every word / row-segment index and divisor fits in 32 bits */
    int packed; /* word counts / offsets packed as V | T << 32 in one array (both totals < 2^32) */
} gt_mcw_geo;

#define GT_MCW_SEG 512 /* columns per work item of the bits stage */

/* The slab [z0, z1) of G's volume, whose planes from zb are at vol: the
 * geometry the kernels get. *nwc, *nown: the counted and the own point
 * words. two_scans: never pack the word counts. (Host code.) */
static inline void gt_mcw_geo_init(gt_mcw_geo *g, const gt_mc_geom *G, const float *vol, int64_t zb, int64_t z0,
                                   int64_t z1, int two_scans, uint64_t *nwc, uint64_t *nown)
{
    const int64_t X = G->dims[0], Y = G->dims[1], Z = G->dims[2];
    g->vol = vol;
    g->X = X; g->Y = Y; g->Z = Z; g->zb = zb;
    g->z0 = z0; g->z1 = z1;
    g->kc = z1 + 1 < Z ? z1 + 1 : Z;
    g->kt = z1 < Z - 1 ? z1 : Z - 1;
    g->W = (X + 31) / 32;
    g->isof = G->isof;
    g->iso = G->iso;
    for (int a = 0; a < 3; a++) {
        g->origin[a] = G->origin[a];
        for (int b = 0; b < 3; b++) g->dir[a][b] = G->dir[a][b], g->dinv[a][b] = G->dinv[a][b];
    }
    g->nsign = G->nsign;
    g->reverse = G->reverse ? 1 : 0;
    g->normals = G->normals ? 1 : 0;
    const int64_t kb = z1 + 2 < Z ? z1 + 2 : Z;                         /* bit planes [z0, kb) */
    const uint64_t rw = (uint64_t)Y * (uint64_t)g->W;                    /* words per plane */
    const uint64_t nbrows = (uint64_t)(kb - z0) * (uint64_t)Y;           /* rows of bits */
    const uint64_t nsegs = nbrows * (uint64_t)((X + GT_MCW_SEG - 1) / GT_MCW_SEG); /* bits work items */
    *nwc = (uint64_t)(g->kc - z0) * rw;
    *nown = (uint64_t)(z1 - z0) * rw;
    g->small = (nbrows * rw < (1ull << 32) && nsegs < (1ull << 32)) ? 1 : 0; /* nbrows * rw >= every word index */
    /* per word at most 96 vertices and 32 * GT_MC_MAXTRI triangles */
    g->packed = (!two_scans && *nwc < (1ull << 32) / (32 * GT_MC_MAXTRI)) ? 1 : 0;
}

/* The bit operations of the device, and their host equivalents. */
GT_HD unsigned gt_mcw_popc(uint32_t x)
{
#ifdef __CUDA_ARCH__
    return (unsigned)__popc(x);
#else
    return (unsigned)__builtin_popcount(x);
#endif
}
GT_HD int gt_mcw_ffs(uint32_t x)
{
#ifdef __CUDA_ARCH__
    return __ffs(x);
#else
    return __builtin_ffs((int)x);
#endif
}
/* the low 32 bits of (hi:lo) >> (s & 31) */
GT_HD uint32_t gt_mcw_fsr(uint32_t lo, uint32_t hi, unsigned s)
{
#ifdef __CUDA_ARCH__
    return __funnelshift_r(lo, hi, s);
#else
    return (uint32_t)((((uint64_t)hi << 32) | lo) >> (s & 31u));
#endif
}

/* Word offsets (exclusive scans of the per-word counts): vertices and
 * triangles in two arrays, or, when the slab is small enough that both totals
 * stay below 2^32, packed into one (one scan; the halves never carry). */
GT_HD uint64_t gt_mcw_offv(const gt_mcw_geo *g, const uint64_t *offV, uint64_t x)
{
    const uint64_t a = offV[x];
    return g->packed ? (a & 0xffffffffull) : a;
}
GT_HD uint64_t gt_mcw_offt(const gt_mcw_geo *g, const uint64_t *offV, const uint64_t *offT, uint64_t x)
{
    return g->packed ? (offV[x] >> 32) : offT[x];
}

/* q = a / b, r = a % b, in 32 bits when the slab is small enough (64-bit
 * division is a long subroutine) */
GT_HD void gt_mcw_divmod(const gt_mcw_geo *g, uint64_t a, uint64_t b, uint64_t *q, uint64_t *r)
{
    if (g->small) {
        const uint32_t a32 = (uint32_t)a, b32 = (uint32_t)b;
        *q = a32 / b32;
        *r = a32 - (uint32_t)*q * b32;
    } else {
        *q = a / b;
        *r = a - *q * b;
    }
}
/* word x -> its column word w, row j, plane k */
GT_HD void gt_mcw_coords(const gt_mcw_geo *g, uint64_t x, int64_t *w, int64_t *j, int64_t *k)
{
    uint64_t r, ww, pl, jj;
    gt_mcw_divmod(g, x, (uint64_t)g->W, &r, &ww);
    gt_mcw_divmod(g, r, (uint64_t)g->Y, &pl, &jj);
    *w = (int64_t)ww;
    *j = (int64_t)jj;
    *k = g->z0 + (int64_t)pl;
}

GT_HD uint32_t gt_mcw_ldbits(const uint32_t *bits, const gt_mcw_geo *g, int64_t k, int64_t j, int64_t w)
{
    return GT_MC_LDG(bits + ((k - g->z0) * g->Y + j) * g->W + w);
}
/* mask of the bits b < n (n may be <= 0 or >= 32) */
GT_HD uint32_t gt_mcw_low_bits(int64_t n)
{
    return n >= 32 ? 0xffffffffu : n <= 0 ? 0u : (1u << n) - 1u;
}

/* The point row (j, k), word w: its in bits c (and cn of the next word, 0
 * past the row), its edge masks xe/ye/ze (bit b: the point 32w+b has a
 * crossed x/y/z edge) and mn, the 3-bit edge mask of the next word's first
 * point (meaningful when w + 1 < W). */
typedef struct gt_mcw_prow {
    uint32_t c, cn, xe, ye, ze, mn;
} gt_mcw_prow;
GT_HD gt_mcw_prow gt_mcw_point_row(const uint32_t *bits, const gt_mcw_geo *g, int64_t j, int64_t k, int64_t w)
{
    gt_mcw_prow r;
    const int nx = w + 1 < g->W;
    const int hy = j + 1 < g->Y, hz = k + 1 < g->Z;
    r.c = gt_mcw_ldbits(bits, g, k, j, w);
    r.cn = nx ? gt_mcw_ldbits(bits, g, k, j, w + 1) : 0u;
    uint32_t cy = 0, cyn = 0, cz = 0, czn = 0;
    if (hy) {
        cy = gt_mcw_ldbits(bits, g, k, j + 1, w);
        cyn = nx ? gt_mcw_ldbits(bits, g, k, j + 1, w + 1) : 0u;
    }
    if (hz) {
        cz = gt_mcw_ldbits(bits, g, k + 1, j, w);
        czn = nx ? gt_mcw_ldbits(bits, g, k + 1, j, w + 1) : 0u;
    }
    const int64_t lim = g->X - 32 * w; /* points of this word: min(lim, 32) */
    const uint32_t ptv = gt_mcw_low_bits(lim);
    r.xe = (r.c ^ gt_mcw_fsr(r.c, r.cn, 1)) & gt_mcw_low_bits(lim - 1);
    r.ye = hy ? (r.c ^ cy) & ptv : 0u;
    r.ze = hz ? (r.c ^ cz) & ptv : 0u;
    uint32_t mn = 0;
    if (nx) {
        if (lim - 32 > 1 && ((r.cn ^ (r.cn >> 1)) & 1u)) mn |= 1u;
        if (hy && ((r.cn ^ cyn) & 1u)) mn |= 2u;
        if (hz && ((r.cn ^ czn) & 1u)) mn |= 4u;
    }
    r.mn = mn;
    return r;
}
GT_HD unsigned gt_mcw_vcount(const gt_mcw_prow *r)
{
    return gt_mcw_popc(r->xe) + gt_mcw_popc(r->ye) + gt_mcw_popc(r->ze);
}

/* in bits of rows q = dy + 2*dz of a voxel row (the word and the next one) */
typedef struct gt_mcw_vrows {
    uint32_t c[4], cn[4];
} gt_mcw_vrows;
GT_HD gt_mcw_vrows gt_mcw_voxel_rows(const uint32_t *bits, const gt_mcw_geo *g, int64_t j, int64_t k, int64_t w)
{
    gt_mcw_vrows v;
    const int nx = w + 1 < g->W;
    GT_MC_UNROLL
    for (int q = 0; q < 4; q++) {
        v.c[q] = gt_mcw_ldbits(bits, g, k + (q >> 1), j + (q & 1), w);
        v.cn[q] = nx ? gt_mcw_ldbits(bits, g, k + (q >> 1), j + (q & 1), w + 1) : 0u;
    }
    return v;
}
/* the word's non-empty voxels (some corner in, some out; voxel i needs i+1 < X) */
GT_HD uint32_t gt_mcw_nonempty(const gt_mcw_geo *g, const gt_mcw_vrows *v, int64_t w)
{
    uint32_t a = 0xffffffffu, o = 0;
    GT_MC_UNROLL
    for (int q = 0; q < 4; q++) {
        const uint32_t sh = gt_mcw_fsr(v->c[q], v->cn[q], 1);
        a &= v->c[q] & sh;
        o |= v->c[q] | sh;
    }
    return (o & ~a) & gt_mcw_low_bits(g->X - 32 * w - 1);
}
/* cube index of voxel b of the word (corner n = dx + 2*dy + 4*dz) */
GT_HD unsigned gt_mcw_cube(const gt_mcw_vrows *v, unsigned b)
{
    unsigned c = 0;
    GT_MC_UNROLL
    for (int q = 0; q < 4; q++) c |= (gt_mcw_fsr(v->c[q], v->cn[q], b) & 3u) << (2 * q);
    return c;
}
/* does the point row (j, k) start a row of voxels of the slab? */
GT_HD int gt_mcw_is_voxrow(const gt_mcw_geo *g, int64_t j, int64_t k)
{
    return k < g->kt && j + 1 < g->Y;
}

/* Word x's vertices (*nv: the crossed edges of its points) and triangles
 * (*nt: the table counts ntri of its non-empty voxels). */
GT_HD void gt_mcw_word_counts(const uint32_t *bits, const gt_mcw_geo *g, uint64_t x, const uint8_t *ntri,
                              unsigned *nv, unsigned *nt)
{
    int64_t w, j, k;
    gt_mcw_coords(g, x, &w, &j, &k);
    const gt_mcw_prow pr = gt_mcw_point_row(bits, g, j, k, w);
    unsigned n = 0;
    if (gt_mcw_is_voxrow(g, j, k)) {
        const gt_mcw_vrows v = gt_mcw_voxel_rows(bits, g, j, k, w);
        uint32_t ne = gt_mcw_nonempty(g, &v, w);
        while (ne) {
            const unsigned b = (unsigned)(gt_mcw_ffs(ne) - 1);
            ne &= ne - 1u;
            n += ntri[gt_mcw_cube(&v, b)];
        }
    }
    *nv = gt_mcw_vcount(&pr);
    *nt = n;
}

/* vertices of the point rows' bits below p (p < 32): popcounts of the three
 * edge masks */
GT_HD unsigned gt_mcw_before(uint32_t xe, uint32_t ye, uint32_t ze, unsigned p)
{
    const uint32_t lt = (1u << p) - 1u;
    return gt_mcw_popc(xe & lt) + gt_mcw_popc(ye & lt) + gt_mcw_popc(ze & lt);
}
/* The word's r-th vertex (r < its count), from its edge masks: the point b
 * (the last with gt_mcw_before(b) <= r) and the axis a of its edge (the
 * point's crossed edges in axis order). */
GT_HD void gt_mcw_vertex_at(uint32_t mx, uint32_t my, uint32_t mz, unsigned r, unsigned *bp, int *ap)
{
    unsigned b = 0, len = 32;
    while (len > 1) {
        const unsigned h = len >> 1;
        if (gt_mcw_before(mx, my, mz, b + h) <= r) b += h, len -= h;
        else len = h;
    }
    const unsigned rr = r - gt_mcw_before(mx, my, mz, b); /* 0..2: the rr-th crossed edge of the point */
    uint32_t m3 = ((mx >> b) & 1u) | (((my >> b) & 1u) << 1) | (((mz >> b) & 1u) << 2);
    if (rr >= 1u) m3 &= m3 - 1u;
    if (rr >= 2u) m3 &= m3 - 1u;
    *bp = b;
    *ap = gt_mcw_ffs(m3) - 1;
}

/* What the corner vertex numbers of word x's voxels (column word w, row
 * j, plane k) need from its 4 point rows q = dy + 2 dz, stored at stride
 * `stride`: their edge masks at m[3q..3q+2], the vertex numbers (from vbase)
 * of their first points at base[2q] and of the next words' first points at
 * base[2q+1], and those next points' edge masks in *mn (row q at bits 3q). */
GT_HD void gt_mcw_corner_rows(const uint32_t *bits, const gt_mcw_geo *g, const uint64_t *offV, uint64_t vbase,
                              uint64_t x, int64_t w, int64_t j, int64_t k, uint32_t *m, uint32_t *base, uint32_t *mn,
                              unsigned stride)
{
    const int nx = w + 1 < g->W;
    uint32_t n = 0;
    GT_MC_UNROLL
    for (int q = 0; q < 4; q++) {
        const int dy = q & 1, dz = q >> 1;
        const gt_mcw_prow p = gt_mcw_point_row(bits, g, j + dy, k + dz, w);
        m[3 * q * stride] = p.xe;
        m[(3 * q + 1) * stride] = p.ye;
        m[(3 * q + 2) * stride] = p.ze;
        n |= p.mn << (3 * q);
        const uint64_t xq = x + (uint64_t)dy * (uint64_t)g->W + (uint64_t)dz * (uint64_t)(g->Y * g->W);
        base[2 * q * stride] = (uint32_t)(vbase + gt_mcw_offv(g, offV, xq));
        base[(2 * q + 1) * stride] = nx ? (uint32_t)(vbase + gt_mcw_offv(g, offV, xq + 1)) : 0u;
    }
    *mn = n;
}

/* The vertex number of the corner of voxel b whose edge is e (a table
 * entry): the lower point of e is bit p = b + ox of point row pr = dy + 2 dz
 * (p = 32: the next word's first point); its vertex is the row's base number
 * + the popcount of the row's edge masks below the point + the point's own
 * crossed edges along axes below e's. m: the rows' masks, xe ye ze of row q
 * at m[3q..3q+2]; base: row q's first vertex number at base[2q], the next
 * word's at base[2q+1]; *mn: the next words' first points' edge masks, row q
 * at bits 3q. Each array is read at stride `stride` from the word's entry. */
GT_HD uint32_t gt_mcw_corner_vertex(const uint32_t *m, const uint32_t *base, const uint32_t *mn, unsigned stride, int e,
                                    unsigned b)
{
    int ax;
    unsigned ox, oy, oz;
    gt_mc_edge_start(e, &ax, &ox, &oy, &oz);
    const unsigned pr = oy + 2u * oz;
    const unsigned p = b + ox;
    if (p < 32u) {
        const uint32_t lt = (1u << p) - 1u, le = lt | (1u << p);
        /* points below p, and the point's own edges along axes below ax */
        return base[2 * pr * stride] + (gt_mcw_popc(m[3 * pr * stride] & (ax > 0 ? le : lt)) +
                                         gt_mcw_popc(m[(3 * pr + 1) * stride] & (ax > 1 ? le : lt)) +
                                         gt_mcw_popc(m[(3 * pr + 2) * stride] & lt));
    }
    return base[(2 * pr + 1) * stride] + gt_mcw_popc((*mn >> (3 * pr)) & ((1u << ax) - 1u));
}

#endif
