// CUDA marching cubes with shared vertices, one z-slab per call (a single
// pass is the slab [0, Z)). Same function as gt_mc_slab_cpu (lib/mc/mc_cpu.c).
//
// Work unit: a "row", the X points (or voxels) of one (j, k). A warp walks a
// row in chunks, one column per lane, with coalesced loads of the rows it
// needs (4 for classify/vertices, 8 for triangles); chunks overlap by one or
// two lanes so that neighbours come by shuffles; prefix sums within a chunk
// are bit-plane ballots.
//  1. classify: per row, the number of crossed grid edges (vertices) of its
//     points and the number of triangles of its voxels (table counts).
//  2. scan: exclusive scans (CUB, 64-bit) of both -> row offsets; the totals.
//  3. compaction: the list of occupied rows (rows with vertices / triangles).
//  4. edge vertices (fused with 5): per occupied row, a warp prefix sum of
//     the per-point edge counts places each vertex at its final index
//     (edge-id order).
//  5. triangles: per occupied voxel row, each triangle corner is the vertex
//     number of its edge: row offset + prefix within the row + axis rank.
//     A chunk's triangles are spread over the lanes (one slot per lane, found
//     through a small per-warp owner table), so the stores coalesce.
// The emit kernel keeps no per-thread arrays indexed at run time (nothing in
// local memory): the four point rows' masks and prefixes are packed into two
// words per lane; kernels/mc/emit_emu.py emulates its index logic against the
// CPU numbering.
// Counts and offsets are 64-bit; final vertex numbers are checked < 2^31.
#include <cstdint>

#include "kernels/common/cu_check.h"
#include "kernels/common/cu_prim.h"
#include "kernels/common/cu_runtime.h"
#include "kernels/mc/mc_cuda.h"

namespace {

__constant__ uint8_t c_ntri[256];
constexpr int kTriWords = 256 * GT_MC_MAXTRI * 3 / 4;
__device__ uint32_t d_tri32[kTriWords]; // the triangle table as words, copied to shared memory

struct Geo {
    const float *vol; // plane zb of the buffer
    int64_t X, Y, Z, zb;
    int64_t z0, z1, kc, kt; // own [z0,z1), counted point planes [z0,kc), voxel planes [z0,kt)
    float isof;
    double iso;
    double dir[3][3], origin[3], dinv[3][3];
    double nsign;
    int reverse, normals;
};

// The rows (j+dy, k+dz) a warp reads, as pointers (nullptr when outside the
// volume): slot dy + 3*dz for (dy,dz) in (0,0) (1,0) (2,0) (0,1) (1,1) (2,1)
// (0,2) (1,2). "wide" (the triangle pass) needs all 8, the others the four
// slots 0, 1, 3, 4. Warp-uniform, so the null checks do not diverge.
struct Rows {
    const float *p[8];
};
__device__ __forceinline__ Rows row_ptrs(const Geo &g, int64_t j, int64_t k, bool wide)
{
    Rows r;
    for (int q = 0; q < 8; q++) {
        const int dy = q % 3, dz = q / 3;
        const bool need = wide || (dy < 2 && dz < 2);
        r.p[q] = (need && j + dy < g.Y && k + dz < g.Z) ? g.vol + ((k + dz - g.zb) * g.Y + j + dy) * g.X : nullptr;
    }
    return r;
}
// in/out bits of column i for the rows (bit dy + 3*dz); 0 past the row's end
__device__ __forceinline__ unsigned col_bits(const Geo &g, const Rows &r, int64_t i)
{
    unsigned b = 0;
    if (i < g.X)
        for (int q = 0; q < 8; q++)
            if (r.p[q]) b |= (__ldg(r.p[q] + i) >= g.isof ? 1u : 0u) << q;
    return b;
}
__device__ __forceinline__ unsigned bit(unsigned b, int dy, int dz) { return (b >> (dy + 3 * dz)) & 1u; }

// edge mask (x,y,z) of point (i, j+dy, k+dz) from its column bits and the next column's
__device__ __forceinline__ unsigned pmask(const Geo &g, unsigned b, unsigned b1, int64_t i, int64_t j,
                                          int64_t k, int dy, int dz)
{
    unsigned c = bit(b, dy, dz), m = 0;
    if (i + 1 < g.X && bit(b1, dy, dz) != c) m |= 1u;
    if (j + dy + 1 < g.Y && bit(b, dy + 1, dz) != c) m |= 2u;
    if (k + dz + 1 < g.Z && bit(b, dy, dz + 1) != c) m |= 4u;
    return m;
}

__device__ __forceinline__ unsigned cube_of(unsigned b, unsigned b1)
{
    unsigned c = 0;
    for (int q = 0; q < 4; q++) {
        int dy = q & 1, dz = q >> 1;
        c |= bit(b, dy, dz) << (2 * dy + 4 * dz);
        c |= bit(b1, dy, dz) << (1 + 2 * dy + 4 * dz);
    }
    return c;
}

// Warp exclusive prefix sum of small values (< 2^nbits) by bit-plane ballots;
// *total gets the warp's sum. All 32 lanes must call it.
__device__ __forceinline__ unsigned warp_excl_small(unsigned v, unsigned lane, int nbits, unsigned *total)
{
    const unsigned lt = (1u << lane) - 1u;
    unsigned ex = 0, tot = 0;
    for (int p = 0; p < nbits; p++) {
        const unsigned bal = __ballot_sync(0xffffffffu, (v >> p) & 1u);
        ex += (unsigned)__popc(bal & lt) << p;
        tot += (unsigned)__popc(bal) << p;
    }
    *total = tot;
    return ex;
}

// Lanes overlap between chunks so that no lane loads extra columns: a chunk
// covers columns base .. base+31, and its first S columns are its points
// (voxels); the remaining lanes only supply the neighbours' bits/masks.
constexpr int kStrideCount = 31;    // classify, vertices: point i needs column i+1
constexpr int kStrideTri = 30;      // triangles: voxel i needs the mask of point i+1 (column i+2)

// 1. per-row vertex and triangle counts
__global__ void k_classify(Geo g, uint64_t nrows, uint64_t *rowV, uint64_t *rowT)
{
    __shared__ uint8_t s_ntri[256];
    for (unsigned q = threadIdx.x; q < 256; q += blockDim.x) s_ntri[q] = c_ntri[q];
    __syncthreads();
    const unsigned lane = threadIdx.x & 31u;
    const uint64_t warps = (uint64_t)gridDim.x * (blockDim.x >> 5);
    for (uint64_t r = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < nrows; r += warps) {
        const int64_t j = (int64_t)(r % (uint64_t)g.Y), k = g.z0 + (int64_t)(r / (uint64_t)g.Y);
        const bool vox = k < g.kt && j + 1 < g.Y;
        const Rows rp = row_ptrs(g, j, k, false);
        unsigned nv = 0, nt = 0;
        for (int64_t base = 0; base < g.X; base += kStrideCount) {
            const int64_t i = base + lane;
            const unsigned b = col_bits(g, rp, i);
            const unsigned b1 = __shfl_down_sync(0xffffffffu, b, 1); // lane 31: unused
            if (lane < (unsigned)kStrideCount && i < g.X) {
                nv += __popc(pmask(g, b, b1, i, j, k, 0, 0));
                if (vox && i + 1 < g.X) nt += s_ntri[cube_of(b, b1)];
            }
        }
        for (int o = 16; o > 0; o >>= 1) {
            nv += __shfl_down_sync(0xffffffffu, nv, o);
            nt += __shfl_down_sync(0xffffffffu, nt, o);
        }
        if (lane == 0) {
            rowV[r] = nv;
            rowT[r] = nt;
        }
    }
}

// flags of occupied rows (vertices or triangles) from the scanned offsets (n rows, offsets n+1)
__global__ void k_flags2(const uint64_t *offV, const uint64_t *offT, uint64_t n, uint8_t *flags)
{
    for (uint64_t r = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; r < n; r += (uint64_t)gridDim.x * blockDim.x)
        flags[r] = (offV[r + 1] > offV[r] || offT[r + 1] > offT[r]) ? 1 : 0;
}

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

// The emit kernel's compact form of Rows (fewer registers): the own row's
// pointer, the row and plane strides, and a bit per slot q that is loaded
// (the same slots as row_ptrs gives non-null).
struct RowsC {
    const float *p0;
    int64_t sy, sz;
    unsigned valid;
};
__device__ __forceinline__ RowsC row_ptrs_c(const Geo &g, int64_t j, int64_t k, bool wide)
{
    RowsC r;
    r.p0 = g.vol + ((k - g.zb) * g.Y + j) * g.X;
    r.sy = g.X;
    r.sz = g.X * g.Y;
    r.valid = 0;
    for (int q = 0; q < 8; q++) {
        const int dy = q % 3, dz = q / 3;
        const bool need = wide || (dy < 2 && dz < 2);
        if (need && j + dy < g.Y && k + dz < g.Z) r.valid |= 1u << q;
    }
    return r;
}
// in/out bits of column i as col_bits, plus the values of the row's own point
// (slot 0) and of its +y (slot 1) and +z (slot 3) neighbours: the ends of the
// point's y and z edges (0 where not loaded; then no such edge exists)
__device__ __forceinline__ unsigned col_bits_v(const Geo &g, const RowsC &r, int64_t i, float &f0, float &fy, float &fz)
{
    unsigned b = 0;
    f0 = fy = fz = 0.f;
    if (i < g.X) {
        const float *pi = r.p0 + i;
#pragma unroll
        for (int q = 0; q < 8; q++)
            if ((r.valid >> q) & 1u) {
                const int dy = q % 3, dz = q / 3;
                const float v = __ldg(pi + dy * r.sy + dz * r.sz);
                if (q == 0) f0 = v;
                if (q == 1) fy = v;
                if (q == 3) fz = v;
                b |= (v >= g.isof ? 1u : 0u) << q;
            }
    }
    return b;
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

// 4+5. per occupied own row: its points' edge vertices, written at their
// final (slab-local) index, and, for a voxel row, its voxels' triangles.
// Per lane and chunk the state of the four point rows q = dy + 2*dz is packed:
// edge masks at i (bits 3q..3q+2) and at i+1 (bits 12+3q..), the exclusive
// within-chunk vertex prefix (7 bits each, <= 31*3); the running row bases are
// 32-bit: every vertex number is < 2^31 (checked on the host), so modular
// 32-bit sums are exact.
constexpr int kEmitThreads = 256;
template <bool NRM>
__global__ void __launch_bounds__(kEmitThreads, NRM ? 2 : 4) k_emit(Geo g, const uint32_t *rows, uint64_t nrows, const uint64_t *rowV,
                       const uint64_t *rowT, uint64_t vbase, int32_t *tris, float *xyz, float *nrm)
{
    __shared__ uint8_t s_ntri[256];
    __shared__ uint32_t s_tri32[kTriWords];
    __shared__ uint8_t s_own[kEmitThreads / 32][kStrideTri * GT_MC_MAXTRI]; // owner lane of a chunk's triangle slot
    for (unsigned q = threadIdx.x; q < 256; q += blockDim.x) s_ntri[q] = c_ntri[q];
    for (unsigned q = threadIdx.x; q < (unsigned)kTriWords; q += blockDim.x) s_tri32[q] = d_tri32[q];
    __syncthreads();
    const uint8_t *s_tri = reinterpret_cast<const uint8_t *>(s_tri32);
    const unsigned lane = threadIdx.x & 31u, wid = threadIdx.x >> 5;
    const uint64_t warps = (uint64_t)gridDim.x * (blockDim.x >> 5);
    for (uint64_t w = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; w < nrows; w += warps) {
        const uint64_t r = rows[w];
        const int64_t j = (int64_t)(r % (uint64_t)g.Y), k = g.z0 + (int64_t)(r / (uint64_t)g.Y);
        const bool voxrow = k < g.kt && j + 1 < g.Y; // warp-uniform
        const RowsC rp = row_ptrs_c(g, j, k, voxrow);
        // running slab-local vertex offset of the own row, and global (vbase +)
        // offsets of the point rows (dy,dz) = q&1, q>>1, mod 2^32
        uint32_t vown = (uint32_t)rowV[r];
        uint32_t vc0 = (uint32_t)(vbase + rowV[r]), vc1 = 0, vc2 = 0, vc3 = 0;
        if (voxrow) {
            vc1 = (uint32_t)(vbase + rowV[r + 1]);
            vc2 = (uint32_t)(vbase + rowV[r + (uint64_t)g.Y]);
            vc3 = (uint32_t)(vbase + rowV[r + 1 + (uint64_t)g.Y]);
        }
        uint64_t tc = rowT[r];
        for (int64_t base = 0; base < g.X; base += kStrideTri) {
            const int64_t i = base + lane;
            float f0, fy, fz;
            const unsigned b = col_bits_v(g, rp, i, f0, fy, fz);
            const unsigned b1 = __shfl_down_sync(0xffffffffu, b, 1); // lane 31: unused
            const float fx = __shfl_down_sync(0xffffffffu, f0, 1);
            const bool pt = lane < (unsigned)kStrideTri && i < g.X; // this chunk's points
            unsigned mP = 0, exP = 0, own_tot = 0, tot1 = 0, tot2 = 0, tot3 = 0;
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int dy = q & 1, dz = q >> 1;
                if (q > 0 && !voxrow) continue; // only the row's own points
                const unsigned m = (lane < 31u && i < g.X) ? pmask(g, b, b1, i, j, k, dy, dz) : 0u;
                const unsigned cnt = pt ? (unsigned)__popc(m) : 0u;
                unsigned tot;
                const unsigned ex = warp_excl_small(cnt, lane, 2, &tot);
                const unsigned mnext = __shfl_down_sync(0xffffffffu, m, 1);
                mP |= (m << (3 * q)) | (mnext << (12 + 3 * q));
                exP |= ex << (7 * q);
                if (q == 0) own_tot = tot;
                if (q == 1) tot1 = tot;
                if (q == 2) tot2 = tot;
                if (q == 3) tot3 = tot;
            }
            if (pt) { // this row's vertices, in edge-id order
                const unsigned m = mP & 7u;
                uint32_t v = vown + (exP & 127u);
                if (m & 1u) {
                    emit_vertex(g, i, j, k, 0, f0, fx, xyz + 3 * (size_t)v, NRM ? nrm + 3 * (size_t)v : nullptr);
                    v++;
                }
                if (m & 2u) {
                    emit_vertex(g, i, j, k, 1, f0, fy, xyz + 3 * (size_t)v, NRM ? nrm + 3 * (size_t)v : nullptr);
                    v++;
                }
                if (m & 4u)
                    emit_vertex(g, i, j, k, 2, f0, fz, xyz + 3 * (size_t)v, NRM ? nrm + 3 * (size_t)v : nullptr);
            }
            const bool vox = voxrow && pt && i + 1 < g.X;
            const unsigned cube = vox ? cube_of(b, b1) : 0u;
            const unsigned nt = s_ntri[cube];
            unsigned ttot;
            const unsigned tex = warp_excl_small(nt, lane, 4, &ttot);
            // The chunk's triangles are spread over the lanes (one per lane,
            // consecutive, so the stores coalesce and no lane loops over its
            // voxel's list while the others wait): slot t < ttot is triangle
            // t - tex[src] of lane src, found through a per-warp owner table.
            for (unsigned q = 0; q < nt; q++) s_own[wid][tex + q] = (uint8_t)lane;
            __syncwarp();
            for (unsigned t0 = 0; t0 < ttot; t0 += 32u) { // warp-uniform
                const unsigned t = t0 + lane;
                const unsigned src = t < ttot ? s_own[wid][t] : 0u;
                const unsigned scube = __shfl_sync(0xffffffffu, cube, src);
                const unsigned smP = __shfl_sync(0xffffffffu, mP, src);
                const unsigned sexP = __shfl_sync(0xffffffffu, exP, src);
                const unsigned stex = __shfl_sync(0xffffffffu, tex, src);
                if (t < ttot) {
                    const uint8_t *ct = s_tri + scube * (GT_MC_MAXTRI * 3) + 3 * (t - stex);
                    int32_t idx[3];
#pragma unroll
                    for (int w3 = 0; w3 < 3; w3++) {
                        int ax;
                        unsigned ox, pr;
                        edge_corner(ct[w3], ax, ox, pr);
                        const unsigned m0 = (smP >> (3 * pr)) & 7u;
                        const unsigned mm = (smP >> (3 * pr + 12 * ox)) & 7u;
                        const unsigned ex = ((sexP >> (7 * pr)) & 127u) + (ox ? (unsigned)__popc(m0) : 0u);
                        const uint32_t rb = pr == 0 ? vc0 : pr == 1 ? vc1 : pr == 2 ? vc2 : vc3;
                        idx[w3] = (int32_t)(rb + ex + (unsigned)__popc(mm & ((1u << ax) - 1u)));
                    }
                    int32_t *out = tris + 3 * (tc + t);
                    out[0] = idx[0];
                    out[1] = g.reverse ? idx[2] : idx[1];
                    out[2] = g.reverse ? idx[1] : idx[2];
                }
            }
            __syncwarp(); // the owner table is rewritten by the next chunk
            tc += ttot;
            vown += own_tot;
            vc0 += own_tot;
            vc1 += tot1;
            vc2 += tot2;
            vc3 += tot3;
        }
    }
}

} // namespace

struct gt_mc_cuda {
    gt_mc_geom g;
    int64_t cap_planes;
    float *d_buf;
    const float *d_vol;
    int64_t zb, nzb;
    uint64_t *d_rowV, *d_rowT;
    uint8_t *d_flags;
    uint32_t *d_list;
    float *d_xyz, *d_nrm;
    int32_t *d_tris;
    uint64_t cap_v, cap_t;
    uint64_t nv, nt; // last slab
    gt_arena arena;
    void *stream;
};

static size_t row_bytes(int64_t Y, int64_t planes)
{
    const size_t rows = (size_t)Y * (size_t)planes + 1;
    return rows * (2 * sizeof(uint64_t) + 1 + sizeof(uint32_t));
}

extern "C" size_t gt_mc_cuda_base_bytes(const gt_mc_geom *g, int64_t planes)
{
    return (size_t)planes * (size_t)g->dims[0] * (size_t)g->dims[1] * sizeof(float) + row_bytes(g->dims[1], planes);
}

static gt_status create_inner(gt_mc_cuda *c, size_t rows)
{
    const gt_mc_table *t = gt_mc_table_get();
    if (rows > UINT32_MAX) return gt_fail(GT_ERR_RUNTIME, "slab too large (%zu rows)", rows);
    GT_CU(cudaMemcpyToSymbol(c_ntri, t->ntri, sizeof t->ntri));
    static_assert(sizeof t->tri == kTriWords * 4, "table size");
    GT_CU(cudaMemcpyToSymbol(d_tri32, t->tri, sizeof t->tri));
    GT_TRY(gt_cu_stream_create(&c->stream));
    GT_TRY(gt_cu_malloc((void **)&c->d_rowV, rows * sizeof(uint64_t), "mc row vertex offsets"));
    GT_TRY(gt_cu_malloc((void **)&c->d_rowT, rows * sizeof(uint64_t), "mc row triangle offsets"));
    GT_TRY(gt_cu_malloc((void **)&c->d_flags, rows, "mc row flags"));
    GT_TRY(gt_cu_malloc((void **)&c->d_list, rows * sizeof(uint32_t), "mc occupied rows"));
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
    const gt_status st = create_inner(c, (size_t)g->dims[1] * (size_t)max_planes + 1);
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
    gt_cu_free(c->d_rowV);
    gt_cu_free(c->d_rowT);
    gt_cu_free(c->d_flags);
    gt_cu_free(c->d_list);
    gt_cu_free(c->d_xyz);
    gt_cu_free(c->d_nrm);
    gt_cu_free(c->d_tris);
    gt_arena_release(&c->arena);
    if (c->stream) gt_cu_stream_destroy(c->stream);
    free(c);
}

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

static unsigned warp_grid(uint64_t n)
{
    // 8 warps per 256-thread block; grid-stride beyond 4096 blocks (the
    // triangle kernel loads its 9 KiB table per block)
    const uint64_t blocks = (n + 7) / 8;
    return blocks == 0 ? 1u : blocks > 4096u ? 4096u : (unsigned)blocks;
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
    g.isof = G->isof;
    g.iso = G->iso;
    for (int a = 0; a < 3; a++) {
        g.origin[a] = G->origin[a];
        for (int b = 0; b < 3; b++) g.dir[a][b] = G->dir[a][b], g.dinv[a][b] = G->dinv[a][b];
    }
    g.nsign = G->nsign;
    g.reverse = G->reverse ? 1 : 0;
    g.normals = G->normals ? 1 : 0;
    const uint64_t nrows = (uint64_t)(g.kc - z0) * (uint64_t)Y;    // counted point rows
    const uint64_t nown = (uint64_t)(z1 - z0) * (uint64_t)Y;       // own point rows
    if (nrows + 1 > (uint64_t)Y * (uint64_t)c->cap_planes + 1)
        return gt_fail(GT_ERR_RUNTIME, "internal: slab rows exceed the context");
    gt_timer t = {};

    if (tm) gt_timer_start(&t, true, s);
    k_classify<<<warp_grid(nrows), 256, 0, s>>>(g, nrows, c->d_rowV, c->d_rowT);
    GT_CU_LAUNCH("k_classify");
    if (tm) gt_timings_add(tm, "classify", gt_timer_stop(&t));

    if (tm) gt_timer_start(&t, true, s);
    GT_CU(cudaMemsetAsync(c->d_rowV + nrows, 0, sizeof(uint64_t), s));
    GT_CU(cudaMemsetAsync(c->d_rowT + nrows, 0, sizeof(uint64_t), s));
    GT_TRY(gt_cu_scan_exclusive_u64(c->d_rowV, c->d_rowV, nrows + 1, &c->arena, c->stream));
    GT_TRY(gt_cu_scan_exclusive_u64(c->d_rowT, c->d_rowT, nrows + 1, &c->arena, c->stream));
    uint64_t vown = 0, vall = 0, ntri = 0;
    GT_CU(cudaMemcpyAsync(&vown, c->d_rowV + nown, sizeof vown, cudaMemcpyDeviceToHost, s));
    GT_CU(cudaMemcpyAsync(&vall, c->d_rowV + nrows, sizeof vall, cudaMemcpyDeviceToHost, s));
    GT_CU(cudaMemcpyAsync(&ntri, c->d_rowT + nrows, sizeof ntri, cudaMemcpyDeviceToHost, s));
    GT_CU(cudaStreamSynchronize(s));
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

    // occupied rows: own rows with vertices or triangles
    if (tm) gt_timer_start(&t, true, s);
    size_t nrows_occ = 0;
    if (vown > 0 || ntri > 0) {
        k_flags2<<<gt_grid(nown, 256, 1u << 20), 256, 0, s>>>(c->d_rowV, c->d_rowT, nown, c->d_flags);
        GT_CU_LAUNCH("k_flags2");
        GT_TRY(gt_cu_select_flagged_index(c->d_flags, c->d_list, nown, &nrows_occ, &c->arena, c->stream));
    }
    if (tm) gt_timings_add(tm, "compaction", gt_timer_stop(&t));

    if (tm) gt_timer_start(&t, true, s);
    if (nrows_occ > 0) {
        if (G->normals)
            k_emit<true><<<warp_grid(nrows_occ), kEmitThreads, 0, s>>>(g, c->d_list, nrows_occ, c->d_rowV, c->d_rowT, vbase,
                                                              c->d_tris, c->d_xyz, c->d_nrm);
        else
            k_emit<false><<<warp_grid(nrows_occ), kEmitThreads, 0, s>>>(g, c->d_list, nrows_occ, c->d_rowV, c->d_rowT, vbase,
                                                               c->d_tris, c->d_xyz, nullptr);
        GT_CU_LAUNCH("k_emit");
    }
    // no host sync: the results stay on the stream; gt_mc_cuda_download (same
    // stream) synchronises and reports any fault of the kernels
    if (tm) gt_timings_add(tm, "edge vertices + triangles", gt_timer_stop(&t));

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
