// CUDA marching cubes with shared vertices, one z-slab per call (a single
// pass is the slab [0, Z)). Same function as gt_mc_slab_cpu (lib/mc/mc_cpu.c).
//
// Work unit: a "word", 32 consecutive points (or voxels) of one row (j, k):
// columns 32w .. 32w+31, W = ceil(X/32) words per row. Words are numbered
// (plane, row, word) with the word fastest, which is the vertex (edge-id)
// order, so one exclusive scan of per-word counts numbers every vertex.
//  1. bits: the volume is read once (coalesced, float4 when X % 4 == 0) and
//     packed to one "in" bit per point (v >= iso; NaN is out): 1/32 of the
//     volume's bytes. Planes [z0, min(z1+2, Z)).
//  2. count: per word, its vertices (crossed x/y/z edges of its points: XORs
//     of bit words of the row, the next column, the +y row and the +z plane,
//     popcounts) and its triangles (table counts of its non-empty voxels,
//     found as "some corner in and some out" bits, walked with ffs).
//  3. scan: exclusive scans (CUB, 64-bit) of both -> word offsets, totals;
//     one scan of V | T << 32 when the slab is small enough that neither
//     total can reach 2^32 (512^3: 4.2M words; the limit is 11.1M words).
//  4. vertices: per block of 128 words, the words' edge masks and first
//     vertex numbers go to shared memory; then the block's vertices are
//     spread over all threads (vertex -> word by a binary search of the word
//     offsets, -> point by a binary search of prefix popcounts, -> axis), so
//     lanes stay busy on sparse, uneven occupancy and writes are coalesced.
//  5. triangles: per block of 128 words, each word lists its non-empty voxels
//     (bit, cube, first triangle) in shared memory after a block scan of their
//     counts, with the edge masks and vertex bases of its 4 point rows; then
//     the block's triangles are spread over all threads (triangle -> voxel by
//     a binary search). A corner's vertex number is the offset of its point's
//     word + the popcount of the word's edge masks below the point + its axis
//     rank. More than kVoxCap voxels in a block: several passes.
// No per-thread arrays indexed at run time (nothing in local memory): the
// eight corner points' vertex numbers of a voxel go to shared memory.
// kernels/mc/emit_emu.py emulates this index logic against the CPU numbering.
// Counts and offsets are 64-bit; final vertex numbers are checked < 2^31, so
// 32-bit modular sums of them are exact.
#include <cstdint>

#include "kernels/common/cu_check.h"
#include "kernels/common/cu_prim.h"
#include "kernels/common/cu_runtime.h"
#include "kernels/mc/mc_cuda.h"

namespace {

__constant__ uint8_t c_ntri[256];
constexpr int kTriBytes = 256 * GT_MC_MAXTRI * 3;
__device__ uint8_t d_tri[kTriBytes]; // the triangle table (read through L1)

struct Geo {
    const float *vol; // plane zb of the buffer
    int64_t X, Y, Z, zb;
    int64_t z0, z1, kc, kt; // own [z0,z1), counted point planes [z0,kc), voxel planes [z0,kt)
    int64_t W;              // words per row
    float isof;
    double iso;
    double dir[3][3], origin[3], dinv[3][3];
    double nsign;
    int reverse, normals;
    int small;  // every word / row-segment index and divisor fits in 32 bits
    int packed; // word counts / offsets packed as V | T << 32 in one array (both totals < 2^32)
};

// Word offsets (exclusive scans of the per-word counts): vertices and
// triangles in two arrays, or, when the slab is small enough that both totals
// stay below 2^32, packed into one (one scan; the halves never carry).
__device__ __forceinline__ uint64_t offv(const Geo &g, const uint64_t *offV, uint64_t x)
{
    const uint64_t a = offV[x];
    return g.packed ? (a & 0xffffffffull) : a;
}
__device__ __forceinline__ uint64_t offt(const Geo &g, const uint64_t *offV, const uint64_t *offT, uint64_t x)
{
    return g.packed ? (offV[x] >> 32) : offT[x];
}

// q = a / b, r = a % b, in 32 bits when the slab is small enough (64-bit
// division is a long subroutine)
__device__ __forceinline__ void divmod(const Geo &g, uint64_t a, uint64_t b, uint64_t &q, uint64_t &r)
{
    if (g.small) {
        const uint32_t a32 = (uint32_t)a, b32 = (uint32_t)b;
        q = a32 / b32;
        r = a32 - (uint32_t)q * b32;
    } else {
        q = a / b;
        r = a - q * b;
    }
}

// ------------------------------------------------------------------ 1. bits
// bits[((k - z0) * Y + j) * W + w], bit b = point (32w + b, j, k) is in; 0
// past the row's end. One warp per (row, 512-column segment).
constexpr int kSeg = 512;
template <bool VEC>
__global__ void __launch_bounds__(256) k_bits(Geo g, uint64_t nrows, uint32_t *bits)
{
    const unsigned lane = threadIdx.x & 31u;
    const uint64_t nseg = (uint64_t)((g.X + kSeg - 1) / kSeg);
    const uint64_t items = nrows * nseg;
    const uint64_t warps = (uint64_t)gridDim.x * (blockDim.x >> 5);
    for (uint64_t it = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; it < items; it += warps) {
        uint64_t r, sg, pl, jj;
        divmod(g, it, nseg, r, sg);
        divmod(g, r, (uint64_t)g.Y, pl, jj);
        const int64_t s0 = (int64_t)sg * kSeg;
        const int64_t j = (int64_t)jj, k = g.z0 + (int64_t)pl;
        const float *row = g.vol + ((k - g.zb) * g.Y + j) * g.X;
        uint32_t *out = bits + r * (uint64_t)g.W + (uint64_t)(s0 / 32);
        const int64_t wleft = g.W - s0 / 32; // words of this row from the segment on
        if (VEC) {
            // lane l holds columns s0 + 128u + 4l .. +3 (X % 4 == 0: all or none valid)
            float4 f[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const int64_t i = s0 + 128 * u + 4 * (int64_t)lane;
                f[u] = i < g.X ? __ldg(reinterpret_cast<const float4 *>(row + i)) : make_float4(0.f, 0.f, 0.f, 0.f);
                if (i >= g.X) f[u].x = f[u].y = f[u].z = f[u].w = __int_as_float(0x7fc00000); // NaN: out
            }
#pragma unroll
            for (int u = 0; u < 4; u++) {
                uint32_t v = (f[u].x >= g.isof ? 1u : 0u) | (f[u].y >= g.isof ? 2u : 0u) | (f[u].z >= g.isof ? 4u : 0u) |
                             (f[u].w >= g.isof ? 8u : 0u);
                v <<= 4 * (lane & 7u);
                v |= __shfl_xor_sync(0xffffffffu, v, 1);
                v |= __shfl_xor_sync(0xffffffffu, v, 2);
                v |= __shfl_xor_sync(0xffffffffu, v, 4);
                const int64_t wd = 4 * u + (lane >> 3);
                if ((lane & 7u) == 0 && wd < wleft) out[wd] = v;
            }
        } else {
            float f[16];
#pragma unroll
            for (int u = 0; u < 16; u++) {
                const int64_t i = s0 + 32 * u + (int64_t)lane;
                f[u] = i < g.X ? __ldg(row + i) : __int_as_float(0x7fc00000);
            }
            uint32_t mine = 0;
#pragma unroll
            for (int u = 0; u < 16; u++) {
                const uint32_t b = __ballot_sync(0xffffffffu, f[u] >= g.isof);
                if (lane == (unsigned)u) mine = b;
            }
            if ((int64_t)lane < 16 && (int64_t)lane < wleft) out[lane] = mine;
        }
    }
}

// ------------------------------------------------------- word-level helpers
__device__ __forceinline__ uint32_t ldbits(const uint32_t *bits, const Geo &g, int64_t k, int64_t j, int64_t w)
{
    return __ldg(bits + ((k - g.z0) * g.Y + j) * g.W + w);
}
// mask of the bits b < n (n may be <= 0 or >= 32)
__device__ __forceinline__ uint32_t low_bits(int64_t n)
{
    return n >= 32 ? 0xffffffffu : n <= 0 ? 0u : (1u << n) - 1u;
}

// The point row (j, k), word w: its in bits c (and cn of the next word, 0
// past the row), its edge masks xe/ye/ze (bit b: the point 32w+b has a
// crossed x/y/z edge) and mn, the 3-bit edge mask of the next word's first
// point (meaningful when w + 1 < W).
struct PRow {
    uint32_t c, cn, xe, ye, ze, mn;
};
__device__ __forceinline__ PRow prow(const uint32_t *bits, const Geo &g, int64_t j, int64_t k, int64_t w)
{
    PRow r;
    const bool nx = w + 1 < g.W;
    const bool hy = j + 1 < g.Y, hz = k + 1 < g.Z;
    r.c = ldbits(bits, g, k, j, w);
    r.cn = nx ? ldbits(bits, g, k, j, w + 1) : 0u;
    uint32_t cy = 0, cyn = 0, cz = 0, czn = 0;
    if (hy) {
        cy = ldbits(bits, g, k, j + 1, w);
        cyn = nx ? ldbits(bits, g, k, j + 1, w + 1) : 0u;
    }
    if (hz) {
        cz = ldbits(bits, g, k + 1, j, w);
        czn = nx ? ldbits(bits, g, k + 1, j, w + 1) : 0u;
    }
    const int64_t lim = g.X - 32 * w; // points of this word: min(lim, 32)
    const uint32_t ptv = low_bits(lim);
    r.xe = (r.c ^ __funnelshift_r(r.c, r.cn, 1)) & low_bits(lim - 1);
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
__device__ __forceinline__ unsigned word_vcount(const PRow &r)
{
    return (unsigned)(__popc(r.xe) + __popc(r.ye) + __popc(r.ze));
}
// in bits of rows q = dy + 2*dz of a voxel row (the word and the next one)
struct VRows {
    uint32_t c[4], cn[4];
};
__device__ __forceinline__ VRows vrows(const uint32_t *bits, const Geo &g, int64_t j, int64_t k, int64_t w)
{
    VRows v;
    const bool nx = w + 1 < g.W;
#pragma unroll
    for (int q = 0; q < 4; q++) {
        v.c[q] = ldbits(bits, g, k + (q >> 1), j + (q & 1), w);
        v.cn[q] = nx ? ldbits(bits, g, k + (q >> 1), j + (q & 1), w + 1) : 0u;
    }
    return v;
}
// the word's non-empty voxels (some corner in, some out; voxel i needs i+1 < X)
__device__ __forceinline__ uint32_t nonempty(const Geo &g, const VRows &v, int64_t w)
{
    uint32_t a = 0xffffffffu, o = 0;
#pragma unroll
    for (int q = 0; q < 4; q++) {
        const uint32_t sh = __funnelshift_r(v.c[q], v.cn[q], 1);
        a &= v.c[q] & sh;
        o |= v.c[q] | sh;
    }
    return (o & ~a) & low_bits(g.X - 32 * w - 1);
}
// cube index of voxel b of the word (corner n = dx + 2*dy + 4*dz)
__device__ __forceinline__ unsigned cube_at(const VRows &v, unsigned b)
{
    unsigned c = 0;
#pragma unroll
    for (int q = 0; q < 4; q++) c |= (__funnelshift_r(v.c[q], v.cn[q], b) & 3u) << (2 * q);
    return c;
}
__device__ __forceinline__ bool is_voxrow(const Geo &g, int64_t j, int64_t k) { return k < g.kt && j + 1 < g.Y; }

// ----------------------------------------------------------------- 2. count
__device__ __forceinline__ void word_coords(const Geo &g, uint64_t x, int64_t &w, int64_t &j, int64_t &k)
{
    uint64_t r, ww, pl, jj;
    divmod(g, x, (uint64_t)g.W, r, ww);
    divmod(g, r, (uint64_t)g.Y, pl, jj);
    w = (int64_t)ww;
    j = (int64_t)jj;
    k = g.z0 + (int64_t)pl;
}

__global__ void __launch_bounds__(256) k_count(Geo g, const uint32_t *bits, uint64_t nwords, uint64_t *cntV, uint64_t *cntT)
{
    __shared__ uint8_t s_ntri[256];
    for (unsigned q = threadIdx.x; q < 256; q += blockDim.x) s_ntri[q] = c_ntri[q];
    __syncthreads();
    for (uint64_t x = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; x < nwords; x += (uint64_t)gridDim.x * blockDim.x) {
        int64_t w, j, k;
        word_coords(g, x, w, j, k);
        const PRow pr = prow(bits, g, j, k, w);
        unsigned nt = 0;
        if (is_voxrow(g, j, k)) {
            const VRows v = vrows(bits, g, j, k, w);
            uint32_t ne = nonempty(g, v, w);
            while (ne) {
                const unsigned b = (unsigned)(__ffs(ne) - 1);
                ne &= ne - 1u;
                nt += s_ntri[cube_at(v, b)];
            }
        }
        if (g.packed) {
            cntV[x] = (uint64_t)word_vcount(pr) | ((uint64_t)nt << 32);
        } else {
            cntV[x] = word_vcount(pr);
            cntT[x] = nt;
        }
    }
}

// ------------------------------------------------- vertex position, normal
__device__ __forceinline__ float ldro(const Geo &g, int64_t i, int64_t j, int64_t k)
{
    return __ldg(g.vol + ((k - g.zb) * g.Y + j) * g.X + i);
}

// Central difference along axis a (one-sided at the border). a is a
// compile-time constant after inlining: no arrays indexed at run time, so
// nothing goes to local memory.
__device__ __forceinline__ double grad1(const Geo &g, int64_t i, int64_t j, int64_t k, int a)
{
    const int64_t n = a == 0 ? g.X : a == 1 ? g.Y : g.Z;
    const int64_t p = a == 0 ? i : a == 1 ? j : k;
    if (n < 2) return 0.0;
    const int64_t lo = p > 0 ? p - 1 : p, hi = p + 1 < n ? p + 1 : p;
    const int64_t dl = lo - p, dh = hi - p;
    const double vlo = ldro(g, i + (a == 0 ? dl : 0), j + (a == 1 ? dl : 0), k + (a == 2 ? dl : 0));
    const double vhi = ldro(g, i + (a == 0 ? dh : 0), j + (a == 1 ? dh : 0), k + (a == 2 ? dh : 0));
    return (vhi - vlo) / (double)(hi - lo);
}

__device__ __forceinline__ double edge_t(float v0, float v1, double iso)
{
    const double a = v0, b = v1;
    if (!isfinite(a) || !isfinite(b) || a == b) return 0.5;
    double t = (iso - a) / (b - a);
    if (!(t >= GT_MC_TMIN)) t = GT_MC_TMIN;
    if (t > 1.0 - GT_MC_TMIN) t = 1.0 - GT_MC_TMIN;
    return t;
}

// The vertex of the edge (i,j,k) along axis a (a compile-time constant after
// unrolling), v0, v1 the values at its two ends (already loaded by the caller).
__device__ __forceinline__ void emit_vertex(const Geo &g, int64_t i, int64_t j, int64_t k, int a, float v0, float v1,
                                            float *xyz, float *nrm)
{
    const double t = edge_t(v0, v1, g.iso);
    const double gx = a == 0 ? (double)i + t : (double)i;
    const double gy = a == 1 ? (double)j + t : (double)j;
    const double gz = a == 2 ? (double)k + t : (double)k;
#pragma unroll
    for (int c = 0; c < 3; c++)
        xyz[c] = (float)(g.origin[c] + gx * g.dir[0][c] + gy * g.dir[1][c] + gz * g.dir[2][c]);
    if (!nrm) return;
    const int64_t i1 = i + (a == 0), j1 = j + (a == 1), k1 = k + (a == 2);
    double gg[3];
#pragma unroll
    for (int c = 0; c < 3; c++) gg[c] = (1.0 - t) * grad1(g, i, j, k, c) + t * grad1(g, i1, j1, k1, c);
    double w[3], n2 = 0;
#pragma unroll
    for (int c = 0; c < 3; c++) {
        w[c] = g.dinv[c][0] * gg[0] + g.dinv[c][1] * gg[1] + g.dinv[c][2] * gg[2];
        n2 += w[c] * w[c];
    }
    const double sc = (n2 > 0 && isfinite(n2)) ? g.nsign / sqrt(n2) : 0.0;
#pragma unroll
    for (int c = 0; c < 3; c++) nrm[c] = (float)(w[c] * sc);
}


// Edge e of the table (axis e >> 2, offsets (e & 1, (e >> 1) & 1) along the
// two other axes u < v) as the offset of its lower point: x (0/1) and the
// point row pr = dy + 2*dz
__device__ __forceinline__ void edge_corner(int e, int &ax, unsigned &ox, unsigned &pr)
{
    ax = e >> 2;
    const unsigned lo = (unsigned)e & 1u, hi = ((unsigned)e >> 1) & 1u;
    ox = ax == 0 ? 0u : lo;                          // x is u unless the axis is x
    const unsigned oy = ax == 0 ? lo : ax == 2 ? hi : 0u; // y is u (axis x) or v (axis z)
    const unsigned oz = ax == 2 ? 0u : hi;           // z is v unless the axis is z
    pr = oy + 2u * oz;
}

// ------------------------------------------------------ 4. vertices, 5. triangles
// One block per 128 consecutive own words. Phase A, one thread per word: the
// word's edge masks (and, for triangles, its non-empty voxels) go to shared
// memory. Phase B spreads the block's vertices (triangles), a contiguous
// range of the output, over all threads: output element e is found by binary
// searches in shared memory, so every lane does useful work however unevenly
// the words are occupied, and consecutive lanes write consecutive elements.
constexpr int kEmitThreads = 128;
constexpr int kVoxCap = 2048; // voxels listed per pass of the triangle kernel (a block has at most 4096)

// exclusive prefix of v over the block (kEmitThreads threads), *total the sum.
// The caller syncs before s_w is used again.
__device__ __forceinline__ unsigned block_scan(unsigned v, unsigned *s_w, unsigned &total)
{
    const unsigned lane = threadIdx.x & 31u, wid = threadIdx.x >> 5;
    unsigned x = v;
#pragma unroll
    for (unsigned d = 1; d < 32; d <<= 1) {
        const unsigned y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d) x += y;
    }
    if (lane == 31u) s_w[wid] = x;
    __syncthreads();
    unsigned off = 0, tot = 0;
#pragma unroll
    for (unsigned q = 0; q < kEmitThreads / 32; q++) {
        const unsigned s = s_w[q];
        if (q < wid) off += s;
        tot += s;
    }
    total = tot;
    return off + x - v;
}

// vertices of the point rows' bits below p: popcounts of the three edge masks
__device__ __forceinline__ unsigned before_pt(uint32_t xe, uint32_t ye, uint32_t ze, unsigned p)
{
    const uint32_t lt = (1u << p) - 1u; // p < 32
    return (unsigned)(__popc(xe & lt) + __popc(ye & lt) + __popc(ze & lt));
}

template <bool NRM>
__global__ void __launch_bounds__(kEmitThreads) k_verts(Geo g, const uint32_t *bits, uint64_t nown, const uint64_t *offV,
                                                         float *xyz, float *nrm)
{
    __shared__ uint32_t s_m[3][kEmitThreads];     // the words' edge masks xe, ye, ze
    __shared__ uint32_t s_vo[kEmitThreads + 1];   // block-local number of each word's first vertex; [128] = all
    const unsigned tid = threadIdx.x;
    for (uint64_t w0 = (uint64_t)blockIdx.x * kEmitThreads; w0 < nown; w0 += (uint64_t)gridDim.x * kEmitThreads) {
        const uint64_t w1 = w0 + kEmitThreads < nown ? w0 + kEmitThreads : nown;
        const uint64_t vb0 = offv(g, offV, w0), nvb = offv(g, offV, w1) - vb0;
        if (nvb == 0) continue; // block-uniform
        const uint64_t x = w0 + tid;
        uint32_t xe = 0, ye = 0, ze = 0, vo = (uint32_t)nvb; // words past the end: no vertices
        if (x < w1) {
            int64_t w, j, k;
            word_coords(g, x, w, j, k);
            const PRow pr = prow(bits, g, j, k, w);
            xe = pr.xe;
            ye = pr.ye;
            ze = pr.ze;
            vo = (uint32_t)(offv(g, offV, x) - vb0);
        }
        s_m[0][tid] = xe;
        s_m[1][tid] = ye;
        s_m[2][tid] = ze;
        s_vo[tid] = vo;
        if (tid == 0) s_vo[kEmitThreads] = (uint32_t)nvb;
        __syncthreads();
        for (uint32_t v = tid; v < (uint32_t)nvb; v += kEmitThreads) {
            // the word: the last q with s_vo[q] <= v (s_vo[0] = 0)
            unsigned q = 0, len = kEmitThreads;
            while (len > 1) {
                const unsigned h = len >> 1;
                if (s_vo[q + h] <= v) q += h, len -= h;
                else len = h;
            }
            const unsigned r = v - s_vo[q];
            const uint32_t mx = s_m[0][q], my = s_m[1][q], mz = s_m[2][q];
            // the point: the last b with before_pt(b) <= r
            unsigned b = 0;
            len = 32;
            while (len > 1) {
                const unsigned h = len >> 1;
                if (before_pt(mx, my, mz, b + h) <= r) b += h, len -= h;
                else len = h;
            }
            const unsigned rr = r - before_pt(mx, my, mz, b); // 0..2: the rr-th crossed edge of the point
            uint32_t m3 = ((mx >> b) & 1u) | (((my >> b) & 1u) << 1) | (((mz >> b) & 1u) << 2);
            if (rr >= 1u) m3 &= m3 - 1u;
            if (rr >= 2u) m3 &= m3 - 1u;
            const int a = __ffs(m3) - 1;
            int64_t w, j, k;
            word_coords(g, w0 + q, w, j, k);
            const int64_t i = 32 * w + b;
            const float f0 = ldro(g, i, j, k);
            const float f1 = ldro(g, i + (a == 0), j + (a == 1), k + (a == 2));
            emit_vertex(g, i, j, k, a, f0, f1, xyz + 3 * (vb0 + v), NRM ? nrm + 3 * (vb0 + v) : nullptr);
        }
        __syncthreads(); // the shared arrays are reused by the next block
    }
}

__global__ void __launch_bounds__(kEmitThreads) k_tris(Geo g, const uint32_t *bits, uint64_t nown, const uint64_t *offV,
                                                        const uint64_t *offT, uint64_t vbase, int32_t *tris)
{
    __shared__ uint8_t s_ntri[256];
    __shared__ uint32_t s_m[12][kEmitThreads];  // edge masks of the word's point rows q = dy + 2*dz: xe, ye, ze at 3q
    __shared__ uint32_t s_base[8][kEmitThreads]; // vertex number of row q's first point (2q) and of its next word's (2q+1)
    __shared__ uint32_t s_mn[kEmitThreads];      // the next words' first points' 3-bit edge masks, row q at bit 3q
    __shared__ uint32_t s_vox[kVoxCap];          // listed voxel: word << 13 | bit << 8 | cube
    __shared__ uint16_t s_vt[kVoxCap + 1];       // its first triangle (block-local, < 128*32*12); [n] = the pass's end
    __shared__ unsigned s_w[kEmitThreads / 32];
    for (unsigned q = threadIdx.x; q < 256; q += blockDim.x) s_ntri[q] = c_ntri[q];
    __syncthreads();
    const unsigned tid = threadIdx.x;
    for (uint64_t w0 = (uint64_t)blockIdx.x * kEmitThreads; w0 < nown; w0 += (uint64_t)gridDim.x * kEmitThreads) {
        const uint64_t w1 = w0 + kEmitThreads < nown ? w0 + kEmitThreads : nown;
        const uint64_t tb0 = offt(g, offV, offT, w0), ntb = offt(g, offV, offT, w1) - tb0;
        if (ntb == 0) continue; // block-uniform
        const uint64_t x = w0 + tid;
        int64_t w = 0, j = 0, k = 0;
        if (x < w1) word_coords(g, x, w, j, k);
        VRows vr;
#pragma unroll
        for (int q = 0; q < 4; q++) vr.c[q] = vr.cn[q] = 0;
        uint32_t ne = 0;
        if (x < w1 && is_voxrow(g, j, k)) {
            vr = vrows(bits, g, j, k, w);
            ne = nonempty(g, vr, w);
        }
        if (ne) {
            const bool nx = w + 1 < g.W;
            uint32_t mn = 0;
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int dy = q & 1, dz = q >> 1;
                const PRow p = prow(bits, g, j + dy, k + dz, w);
                s_m[3 * q][tid] = p.xe;
                s_m[3 * q + 1][tid] = p.ye;
                s_m[3 * q + 2][tid] = p.ze;
                mn |= p.mn << (3 * q);
                const uint64_t xq = x + (uint64_t)dy * (uint64_t)g.W + (uint64_t)dz * (uint64_t)(g.Y * g.W);
                s_base[2 * q][tid] = (uint32_t)(vbase + offv(g, offV, xq));
                s_base[2 * q + 1][tid] = nx ? (uint32_t)(vbase + offv(g, offV, xq + 1)) : 0u;
            }
            s_mn[tid] = mn;
        }
        unsigned nvox;
        const unsigned v0 = block_scan((unsigned)__popc(ne), s_w, nvox); // synced: the word data is visible
        const uint32_t t0 = ne ? (uint32_t)(offt(g, offV, offT, x) - tb0) : 0u;
        // every thread has read the scan's partials before any listing store:
        // racecheck saw the partials' reads and the first pass's stores at one
        // shared address (a WAR hazard without this barrier)
        __syncthreads();
        for (unsigned lo = 0; lo < nvox; lo += kVoxCap) { // block-uniform; one pass unless > kVoxCap voxels
            const unsigned n = nvox - lo < (unsigned)kVoxCap ? nvox - lo : (unsigned)kVoxCap;
            // list voxels [lo, lo + n); the first triangle of voxel lo + kVoxCap ends the pass
            uint32_t m = ne, t = t0;
            for (unsigned v = v0; m; v++) {
                const unsigned b = (unsigned)(__ffs(m) - 1);
                m &= m - 1u;
                const unsigned cube = cube_at(vr, b);
                if (v >= lo && v < lo + kVoxCap) {
                    s_vox[v - lo] = (tid << 13) | (b << 8) | cube;
                    s_vt[v - lo] = (uint16_t)t;
                } else if (v == lo + kVoxCap) {
                    s_vt[kVoxCap] = (uint16_t)t;
                }
                t += s_ntri[cube];
            }
            if (tid == 0 && lo + kVoxCap >= nvox) s_vt[n] = (uint16_t)ntb;
            __syncthreads();
            const unsigned T1 = s_vt[n];
            for (unsigned t2 = s_vt[0] + tid; t2 < T1; t2 += kEmitThreads) {
                // the voxel: the last a < n with s_vt[a] <= t2 (skips voxels without triangles)
                unsigned a = 0, len = n;
                while (len > 1) {
                    const unsigned h = len >> 1;
                    if (s_vt[a + h] <= t2) a += h, len -= h;
                    else len = h;
                }
                const uint32_t e = s_vox[a];
                const unsigned q = e >> 13, b = (e >> 8) & 31u, cube = e & 255u;
                const uint8_t *ct = d_tri + cube * (GT_MC_MAXTRI * 3) + 3 * (t2 - s_vt[a]);
                int32_t idx[3];
#pragma unroll
                for (int c = 0; c < 3; c++) {
                    int ax;
                    unsigned ox, pr;
                    edge_corner(__ldg(ct + c), ax, ox, pr);
                    const unsigned p = b + ox; // the corner point's bit; 32: the next word's first point
                    uint32_t vi;
                    if (p < 32u) {
                        const uint32_t lt = (1u << p) - 1u, le = lt | (1u << p);
                        // points below p, and the point's own edges along axes below ax
                        vi = s_base[2 * pr][q] + (uint32_t)(__popc(s_m[3 * pr][q] & (ax > 0 ? le : lt)) +
                                                            __popc(s_m[3 * pr + 1][q] & (ax > 1 ? le : lt)) +
                                                            __popc(s_m[3 * pr + 2][q] & lt));
                    } else {
                        vi = s_base[2 * pr + 1][q] + (uint32_t)__popc((s_mn[q] >> (3 * pr)) & ((1u << ax) - 1u));
                    }
                    idx[c] = (int32_t)vi;
                }
                int32_t *out = tris + 3 * (tb0 + t2);
                out[0] = idx[0];
                out[1] = g.reverse ? idx[2] : idx[1];
                out[2] = g.reverse ? idx[1] : idx[2];
            }
            __syncthreads(); // the list is reused by the next pass
        }
        __syncthreads(); // the word data is reused by the next block
    }
}

// the slab's totals in one place, so that one small copy brings them to the host
__global__ void k_totals(Geo g, const uint64_t *offV, const uint64_t *offT, uint64_t nown, uint64_t nwc, uint64_t *tot)
{
    tot[0] = offv(g, offV, nown);
    tot[1] = offv(g, offV, nwc);
    tot[2] = offt(g, offV, offT, nwc);
}

} // namespace

struct gt_mc_cuda {
    gt_mc_geom g;
    int64_t cap_planes;
    float *d_buf;
    const float *d_vol;
    int64_t zb, nzb;
    uint32_t *d_bits;           // in bits, cap_planes * Y * W words
    uint64_t *d_offV, *d_offT;  // per-word counts, then offsets (cap_planes * Y * W + 1)
    uint64_t *d_tot;            // own vertices, all counted vertices, triangles
    float *d_xyz, *d_nrm;
    int32_t *d_tris;
    uint64_t cap_v, cap_t;
    uint64_t nv, nt; // last slab
    bool two_scans;  // never pack the word counts (tests)
    gt_arena arena;
    void *stream;
};

static size_t words_of(const gt_mc_geom *g, int64_t planes)
{
    return (size_t)((g->dims[0] + 31) / 32) * (size_t)g->dims[1] * (size_t)planes;
}

extern "C" size_t gt_mc_cuda_base_bytes(const gt_mc_geom *g, int64_t planes)
{
    const size_t words = words_of(g, planes);
    return (size_t)planes * (size_t)g->dims[0] * (size_t)g->dims[1] * sizeof(float) + words * sizeof(uint32_t) +
           (words + 1) * 2 * sizeof(uint64_t);
}

static gt_status create_inner(gt_mc_cuda *c, size_t words)
{
    const gt_mc_table *t = gt_mc_table_get();
    GT_CU(cudaMemcpyToSymbol(c_ntri, t->ntri, sizeof t->ntri));
    static_assert(sizeof t->tri == kTriBytes, "table size");
    GT_CU(cudaMemcpyToSymbol(d_tri, t->tri, sizeof t->tri));
    GT_TRY(gt_cu_stream_create(&c->stream));
    GT_TRY(gt_cu_malloc((void **)&c->d_bits, (words ? words : 1) * sizeof(uint32_t), "mc in bits"));
    GT_TRY(gt_cu_malloc((void **)&c->d_offV, (words + 1) * sizeof(uint64_t), "mc word vertex offsets"));
    GT_TRY(gt_cu_malloc((void **)&c->d_offT, (words + 1) * sizeof(uint64_t), "mc word triangle offsets"));
    GT_TRY(gt_cu_malloc((void **)&c->d_tot, 3 * sizeof(uint64_t), "mc totals"));
    return GT_OK;
}

extern "C" gt_status gt_mc_cuda_create(const gt_mc_geom *g, int64_t max_planes, gt_mc_cuda **out)
{
    *out = nullptr;
    gt_mc_cuda *c = (gt_mc_cuda *)calloc(1, sizeof *c);
    if (!c) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    c->g = *g;
    c->cap_planes = max_planes;
    gt_arena_init(&c->arena);
    const gt_status st = create_inner(c, words_of(g, max_planes));
    if (st != GT_OK) {
        gt_mc_cuda_destroy(c);
        return st;
    }
    *out = c;
    return GT_OK;
}

extern "C" void gt_mc_cuda_destroy(gt_mc_cuda *c)
{
    if (!c) return;
    if (c->stream) cudaStreamSynchronize((cudaStream_t)c->stream);
    gt_cu_free(c->d_buf);
    gt_cu_free(c->d_bits);
    gt_cu_free(c->d_offV);
    gt_cu_free(c->d_offT);
    gt_cu_free(c->d_tot);
    gt_cu_free(c->d_xyz);
    gt_cu_free(c->d_nrm);
    gt_cu_free(c->d_tris);
    gt_arena_release(&c->arena);
    if (c->stream) gt_cu_stream_destroy(c->stream);
    free(c);
}

extern "C" void gt_mc_cuda_force_two_scans(gt_mc_cuda *c, bool on) { c->two_scans = on; }

extern "C" void gt_mc_cuda_use_device_volume(gt_mc_cuda *c, const float *d_vol)
{
    c->d_vol = d_vol;
    c->zb = 0;
    c->nzb = c->g.dims[2];
}

extern "C" gt_status gt_mc_cuda_upload(gt_mc_cuda *c, const float *host, int64_t zb, int64_t nzb, gt_timings *tm)
{
    const size_t plane = (size_t)c->g.dims[0] * (size_t)c->g.dims[1];
    if (nzb > c->cap_planes) return gt_fail(GT_ERR_RUNTIME, "internal: slab of %lld planes > %lld", (long long)nzb, (long long)c->cap_planes);
    if (!c->d_buf) GT_TRY(gt_cu_malloc((void **)&c->d_buf, (size_t)c->cap_planes * plane * sizeof(float), "mc volume slab"));
    gt_timer t;
    gt_timer_start(&t, true, c->stream);
    GT_TRY(gt_cu_memcpy_h2d(c->d_buf, host, (size_t)nzb * plane * sizeof(float), c->stream));
    const double ms = gt_timer_stop(&t);
    if (tm) gt_timings_add(tm, "transfers", ms);
    c->d_vol = c->d_buf;
    c->zb = zb;
    c->nzb = nzb;
    return GT_OK;
}

static unsigned blocks_for(uint64_t n, uint64_t per_block)
{
    const uint64_t b = (n + per_block - 1) / per_block;
    return b == 0 ? 1u : b > (1u << 20) ? (1u << 20) : (unsigned)b; // grid-stride beyond
}

extern "C" gt_status gt_mc_cuda_slab(gt_mc_cuda *c, int64_t z0, int64_t z1, uint64_t vbase, uint64_t *nv_out,
                                     uint64_t *nt_out, gt_timings *tm)
{
    const gt_mc_geom *G = &c->g;
    const int64_t X = G->dims[0], Y = G->dims[1], Z = G->dims[2];
    cudaStream_t s = (cudaStream_t)c->stream;
    if (!(z0 < z1 && c->zb <= (z0 > 0 ? z0 - 1 : 0) && c->zb + c->nzb >= (z1 + 2 < Z ? z1 + 2 : Z)))
        return gt_fail(GT_ERR_RUNTIME, "internal: bad slab [%lld,%lld)", (long long)z0, (long long)z1);
    Geo g;
    g.vol = c->d_vol;
    g.X = X; g.Y = Y; g.Z = Z; g.zb = c->zb;
    g.z0 = z0; g.z1 = z1;
    g.kc = z1 + 1 < Z ? z1 + 1 : Z;
    g.kt = z1 < Z - 1 ? z1 : Z - 1;
    g.W = (X + 31) / 32;
    g.isof = G->isof;
    g.iso = G->iso;
    for (int a = 0; a < 3; a++) {
        g.origin[a] = G->origin[a];
        for (int b = 0; b < 3; b++) g.dir[a][b] = G->dir[a][b], g.dinv[a][b] = G->dinv[a][b];
    }
    g.nsign = G->nsign;
    g.reverse = G->reverse ? 1 : 0;
    g.normals = G->normals ? 1 : 0;
    const int64_t kb = z1 + 2 < Z ? z1 + 2 : Z;                          // bit planes [z0, kb)
    if (kb - z0 > c->cap_planes) return gt_fail(GT_ERR_RUNTIME, "internal: slab planes exceed the context");
    const uint64_t rw = (uint64_t)Y * (uint64_t)g.W;                      // words per plane
    const uint64_t nbrows = (uint64_t)(kb - z0) * (uint64_t)Y;            // rows of bits
    const uint64_t nwc = (uint64_t)(g.kc - z0) * rw;                      // counted point words
    const uint64_t nown = (uint64_t)(z1 - z0) * rw;                       // own point words
    const uint64_t nsegs = nbrows * (uint64_t)((X + kSeg - 1) / kSeg);    // k_bits work items
    g.small = (nbrows * rw < (1ull << 32) && nsegs < (1ull << 32)) ? 1 : 0; // nbrows * rw >= every word index
    // per word at most 96 vertices and 32 * GT_MC_MAXTRI triangles
    g.packed = (!c->two_scans && nwc < (1ull << 32) / (32 * GT_MC_MAXTRI)) ? 1 : 0;
    gt_timer t = {};

    if (tm) gt_timer_start(&t, true, s);
    {
        const bool vec = X % 4 == 0 && ((uintptr_t)(g.vol + (z0 - g.zb) * Y * X) & 15u) == 0;
        if (vec) k_bits<true><<<blocks_for(nsegs, 8), 256, 0, s>>>(g, nbrows, c->d_bits);
        else k_bits<false><<<blocks_for(nsegs, 8), 256, 0, s>>>(g, nbrows, c->d_bits);
        GT_CU_LAUNCH("k_bits");
    }
    if (tm) gt_timings_add(tm, "bits", gt_timer_stop(&t));

    if (tm) gt_timer_start(&t, true, s);
    k_count<<<blocks_for(nwc, 256), 256, 0, s>>>(g, c->d_bits, nwc, c->d_offV, c->d_offT);
    GT_CU_LAUNCH("k_count");
    if (tm) gt_timings_add(tm, "count", gt_timer_stop(&t));

    if (tm) gt_timer_start(&t, true, s);
    GT_CU(cudaMemsetAsync(c->d_offV + nwc, 0, sizeof(uint64_t), s));
    GT_TRY(gt_cu_scan_exclusive_u64(c->d_offV, c->d_offV, nwc + 1, &c->arena, c->stream));
    if (!g.packed) {
        GT_CU(cudaMemsetAsync(c->d_offT + nwc, 0, sizeof(uint64_t), s));
        GT_TRY(gt_cu_scan_exclusive_u64(c->d_offT, c->d_offT, nwc + 1, &c->arena, c->stream));
    }
    k_totals<<<1, 1, 0, s>>>(g, c->d_offV, c->d_offT, nown, nwc, c->d_tot);
    GT_CU_LAUNCH("k_totals");
    uint64_t tot[3] = {0, 0, 0};
    GT_CU(cudaMemcpyAsync(tot, c->d_tot, sizeof tot, cudaMemcpyDeviceToHost, s));
    GT_CU(cudaStreamSynchronize(s));
    const uint64_t vown = tot[0], vall = tot[1], ntri = tot[2];
    if (tm) gt_timings_add(tm, "scan", gt_timer_stop(&t));
    if (vbase + vall > (uint64_t)INT32_MAX)
        return gt_fail(GT_ERR_RUNTIME, "mesh too large: %llu vertices exceed the PLY int index range",
                       (unsigned long long)(vbase + vall));

    // outputs
    if (vown > c->cap_v) {
        gt_cu_free(c->d_xyz);
        gt_cu_free(c->d_nrm);
        c->d_xyz = c->d_nrm = nullptr;
        c->cap_v = 0;
        GT_TRY(gt_cu_malloc((void **)&c->d_xyz, vown * 3 * sizeof(float), "mc vertices"));
        if (G->normals) GT_TRY(gt_cu_malloc((void **)&c->d_nrm, vown * 3 * sizeof(float), "mc normals"));
        c->cap_v = vown;
    }
    if (ntri > c->cap_t) {
        gt_cu_free(c->d_tris);
        c->d_tris = nullptr;
        c->cap_t = 0;
        GT_TRY(gt_cu_malloc((void **)&c->d_tris, ntri * 3 * sizeof(int32_t), "mc triangles"));
        c->cap_t = ntri;
    }

    if (tm) gt_timer_start(&t, true, s);
    if (vown > 0) {
        if (G->normals)
            k_verts<true><<<blocks_for(nown, kEmitThreads), kEmitThreads, 0, s>>>(g, c->d_bits, nown, c->d_offV, c->d_xyz, c->d_nrm);
        else
            k_verts<false><<<blocks_for(nown, kEmitThreads), kEmitThreads, 0, s>>>(g, c->d_bits, nown, c->d_offV, c->d_xyz, nullptr);
        GT_CU_LAUNCH("k_verts");
    }
    if (tm) gt_timings_add(tm, "vertices", gt_timer_stop(&t));

    if (tm) gt_timer_start(&t, true, s);
    if (ntri > 0) {
        k_tris<<<blocks_for(nown, kEmitThreads), kEmitThreads, 0, s>>>(g, c->d_bits, nown, c->d_offV, c->d_offT, vbase, c->d_tris);
        GT_CU_LAUNCH("k_tris");
    }
    // no host sync: the results stay on the stream; gt_mc_cuda_download (same
    // stream) synchronises and reports any fault of the kernels
    if (tm) gt_timings_add(tm, "triangles", gt_timer_stop(&t));

    c->nv = vown;
    c->nt = ntri;
    if (nv_out) *nv_out = vown;
    if (nt_out) *nt_out = ntri;
    return GT_OK;
}

extern "C" gt_status gt_mc_cuda_download(gt_mc_cuda *c, gt_mc_mesh *m, gt_timings *tm)
{
    GT_TRY(gt_mc_mesh_reserve(m, (size_t)c->nv, (size_t)c->nt, c->g.normals));
    gt_timer t;
    gt_timer_start(&t, true, c->stream);
    if (c->nv) {
        GT_TRY(gt_cu_memcpy_d2h(m->xyz + 3 * m->nvert, c->d_xyz, c->nv * 3 * sizeof(float), c->stream));
        if (c->g.normals)
            GT_TRY(gt_cu_memcpy_d2h(m->nrm + 3 * m->nvert, c->d_nrm, c->nv * 3 * sizeof(float), c->stream));
    }
    if (c->nt) GT_TRY(gt_cu_memcpy_d2h(m->tris + 3 * m->ntri, c->d_tris, c->nt * 3 * sizeof(int32_t), c->stream));
    GT_TRY(gt_cu_stream_sync(c->stream));
    const double ms = gt_timer_stop(&t);
    if (tm) gt_timings_add(tm, "transfers", ms);
    m->nvert += (size_t)c->nv;
    m->ntri += (size_t)c->nt;
    return GT_OK;
}
