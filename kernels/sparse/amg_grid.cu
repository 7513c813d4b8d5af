// AMG on a grid, the set-up on the GPU (twin of lib/sparse/amg_grid.c):
// the grid found from the entries' offsets and checked entry by entry, the
// DIA form of a level, the end weights and the Gershgorin bound of a level,
// the Galerkin operator point by point (gt_amg_grid_galerkin_point, the
// CPU's function) and its CSR form. A thread per row or per coarse point;
// sums and maxima by block reductions and one atomic per block.
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>

#include <climits>
#include <math.h>
#include <string.h>

#include "kernels/common/cu_prim.h"
#include "kernels/sparse/amg_cu_impl.cuh"

namespace {

constexpr int B = 256;
using breduce_d = cub::BlockReduce<double, B>;
using breduce_l = cub::BlockReduce<long long, B>;
using breduce_u = cub::BlockReduce<unsigned, B>;

struct scratch {
    unsigned long long d2;
    long long dmax;
    long long bad;
    unsigned mask;
    double sum[6];
    unsigned long long rho_bits;
};

struct bit_or {
    __device__ unsigned operator()(unsigned a, unsigned b) const { return a | b; }
};
struct l_min {
    __device__ long long operator()(long long a, long long b) const { return a < b ? a : b; }
};
struct d_max {
    __device__ double operator()(double a, double b) const { return a > b ? a : b; }
};
struct l_max {
    __device__ long long operator()(long long a, long long b) const { return a > b ? a : b; }
};

// gt_amg_grid_pair from the row's coordinates (found once a row) and the
// entry's offset alone, where nx, ny >= 3 make the offsets of the 27
// neighbours distinct and recoverable by rounding: dz from off against nx ny
// / 2 (a neighbour's rest is within nx + 1 < nx ny / 2), dy likewise, dx the
// rest. A triple within {-1, 0, 1}^3 whose point lies in the grid is a
// neighbour, and a neighbour always decomposes so: the same answers as the
// coordinates' differences, without two divisions an entry.
struct rowc {
    int64_t x, y, z;
    bool fast;
};
__device__ __forceinline__ rowc row_coords(const gt_amg_grid &g, int64_t i)
{
    rowc c;
    gt_amg_grid_xyz(g, i, &c.x, &c.y, &c.z);
    c.fast = g.nx >= 3 && g.ny >= 3;
    return c;
}
__device__ __forceinline__ bool pair_fast(const gt_amg_grid &g, const rowc &c, int64_t i, int64_t j, int *s)
{
    if (!c.fast) return gt_amg_grid_pair(g, i, j, s);
    int64_t off = j - i, nxny = g.nx * g.ny;
    int dz = 2 * off > nxny ? 1 : 2 * off < -nxny ? -1 : 0;
    int64_t r = off - dz * nxny;
    int dy = 2 * r > g.nx ? 1 : 2 * r < -g.nx ? -1 : 0;
    int64_t dx = r - dy * g.nx;
    if (dx < -1 || dx > 1 || !gt_amg_grid_inside(g, c.x + dx, c.y + dy, c.z + dz)) return false;
    *s = gt_amg_grid_slot((int)dx, dy, dz);
    return true;
}

__global__ void k_offsets(int64_t n, const int64_t *__restrict__ ptr, const int32_t *__restrict__ col, scratch *out)
{
    __shared__ union {
        typename breduce_l::TempStorage l;
    } tmp;
    long long d2 = LLONG_MAX, dmax = 0;
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B)
        for (int64_t p = ptr[i]; p < ptr[i + 1]; p++) {
            long long o = (long long)col[p] - i;
            if (o > 1 && o < d2) d2 = o;
            if (o > dmax) dmax = o;
        }
    long long a = breduce_l(tmp.l).Reduce(d2, l_min());
    __syncthreads();
    long long b = breduce_l(tmp.l).Reduce(dmax, l_max());
    if (threadIdx.x == 0) {
        atomicMin(&out->d2, (unsigned long long)a);
        atomicMax(&out->dmax, b);
    }
}

__global__ void k_fits(int64_t n, const int64_t *__restrict__ ptr, const int32_t *__restrict__ col, gt_amg_grid g,
                       scratch *out)
{
    __shared__ union {
        typename breduce_l::TempStorage l;
        typename breduce_u::TempStorage u;
    } tmp;
    long long bad = 0;
    unsigned mask = 0;
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) {
        rowc c = row_coords(g, i);
        for (int64_t p = ptr[i]; p < ptr[i + 1]; p++) {
            int s;
            if (pair_fast(g, c, i, col[p], &s)) mask |= 1u << s;
            else bad++;
        }
    }
    long long b = breduce_l(tmp.l).Sum(bad);
    __syncthreads();
    unsigned m = breduce_u(tmp.u).Reduce(mask, bit_or());
    if (threadIdx.x == 0) {
        if (b) atomicAdd((unsigned long long *)&out->bad, (unsigned long long)b);
        atomicOr(&out->mask, m);
    }
}

// the DIA form (zeroed before): a thread per row, so duplicates add in order
__global__ void k_to_dia(int64_t n, const int64_t *__restrict__ ptr, const int32_t *__restrict__ col,
                         const double *__restrict__ val, gt_amg_grid g, amg_slots where, double *__restrict__ dia)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) {
        rowc c = row_coords(g, i);
        for (int64_t p = ptr[i]; p < ptr[i + 1]; p++) {
            int s;
            if (pair_fast(g, c, i, col[p], &s) && where.s[s] >= 0) dia[(int64_t)where.s[s] * n + i] += val[p];
        }
    }
}

// nonsymmetric couplings (into bad) and the |a| sums of the face slots per axis
__global__ void k_sym_axis(int64_t n, int nd, amg_slots slot, amg_slots where, amg_offs off,
                           const double *__restrict__ dia, scratch *out)
{
    __shared__ union {
        typename breduce_l::TempStorage l;
        typename breduce_d::TempStorage d;
    } tmp;
    long long bad = 0;
    double ax[3] = {0, 0, 0};
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B)
        for (int k = 0; k < nd; k++) {
            double v = dia[(int64_t)k * n + i];
            if (v == 0) continue;
            int s = slot.s[k], mk = where.s[GT_AMG_GRID_SLOTS - 1 - s];
            double w = mk < 0 ? 0 : dia[(int64_t)mk * n + i + off.o[k]];
            if (fabs(v - w) > 1e-12 * (fabs(v) + fabs(w))) bad++;
            int d = gt_amg_grid_face_axis(s);
            if (d >= 0) ax[d] += fabs(v);
        }
    long long b = breduce_l(tmp.l).Sum(bad);
    if (threadIdx.x == 0 && b) atomicAdd((unsigned long long *)&out->bad, (unsigned long long)b);
    for (int d = 0; d < 3; d++) {
        __syncthreads();
        double t = breduce_d(tmp.d).Sum(ax[d]);
        if (threadIdx.x == 0) atomicAdd(&out->sum[d], t);
    }
}

// the face sums of gt_amg_grid_end_weights for dimension d (even, > 1): a
// thread per point of its last face; sum[d] towards the point before,
// sum[3 + d] diagonal less the couplings within the face
__global__ void k_end(gt_amg_grid g, int d, int nd, amg_slots slot, const double *__restrict__ dia, scratch *out)
{
    __shared__ typename breduce_d::TempStorage tmp;
    int64_t n = gt_amg_grid_size(g), m = d == 0 ? g.nx : d == 1 ? g.ny : g.nz, nf = n / m;
    double tw = 0, dl = 0;
    for (int64_t t = (int64_t)blockIdx.x * B + threadIdx.x; t < nf; t += (int64_t)gridDim.x * B) {
        int64_t i = d == 0 ? g.nx - 1 + g.nx * t
                  : d == 1 ? t % g.nx + g.nx * (g.ny - 1 + g.ny * (t / g.nx))
                           : t + g.nx * g.ny * (g.nz - 1);
        for (int k = 0; k < nd; k++) {
            double v = dia[(int64_t)k * n + i];
            if (v == 0) continue;
            int s = slot.s[k];
            int o = gt_amg_grid_sd(s, d);
            if (o == -1) tw += fabs(v);
            else if (o == 0) dl += s == 13 ? v : -fabs(v);
        }
    }
    double a = breduce_d(tmp).Sum(tw);
    __syncthreads();
    double b = breduce_d(tmp).Sum(dl);
    if (threadIdx.x == 0) atomicAdd(&out->sum[d], a), atomicAdd(&out->sum[3 + d], b);
}

// 1 / a_ii from the centre slot; the first bad row by an atomic minimum
__global__ void k_dinv_dia(int64_t n, const double *__restrict__ centre, double *__restrict__ dinv,
                           unsigned long long *bad)
{
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) {
        double d = centre[i];
        if (d == 0 || !isfinite(d)) atomicMin(bad, (unsigned long long)i);
        dinv[i] = 1.0 / d;
    }
}

// max_i |dinv_i| sum_k |a_ik| (the slots in order, as the CPU's sorted row)
__global__ void k_gersh(int64_t n, int nd, const double *__restrict__ dia, const double *__restrict__ dinv, scratch *out)
{
    __shared__ typename breduce_d::TempStorage tmp;
    double m = 0;
    for (int64_t i = (int64_t)blockIdx.x * B + threadIdx.x; i < n; i += (int64_t)gridDim.x * B) {
        double s = 0;
        for (int k = 0; k < nd; k++) s += fabs(dia[(int64_t)k * n + i]);
        s *= fabs(dinv[i]);
        m = fmax(m, s);
    }
    double t = breduce_d(tmp).Reduce(m, d_max());
    if (threadIdx.x == 0) atomicMax(&out->rho_bits, (unsigned long long)__double_as_longlong(t));
}

// A_c = R A P, on levels of many coarse points: a thread per coarse point
// running the CPU's function (gt_amg_grid_galerkin_point, the same order of
// sums), its 27 sums in shared memory (dynamically indexed, so registers
// cannot hold them). 160^3 Laplacian: 0.91 ms for level 1, where the warp
// per point below took 1.87 ms.
constexpr int BT = 128;
__global__ void __launch_bounds__(BT) k_galerkin_thread(gt_amg_grid f, gt_amg_grid c, int nd, amg_slots slot,
                                                        const double *__restrict__ fine, double *__restrict__ coarse)
{
    __shared__ double sh[BT * GT_AMG_GRID_SLOTS];
    double *acc = sh + threadIdx.x * GT_AMG_GRID_SLOTS;
    int64_t nc = gt_amg_grid_size(c);
    int8_t sl[GT_AMG_GRID_SLOTS];
    for (int k = 0; k < GT_AMG_GRID_SLOTS; k++) sl[k] = (int8_t)slot.s[k];
    for (int64_t I = (int64_t)blockIdx.x * BT + threadIdx.x; I < nc; I += (int64_t)gridDim.x * BT) {
        int64_t cx, cy, cz;
        gt_amg_grid_xyz(c, I, &cx, &cy, &cz);
        gt_amg_grid_galerkin_point(f, c, nd, sl, fine, cx, cy, cz, acc);
        for (int s = 0; s < GT_AMG_GRID_SLOTS; s++) coarse[(int64_t)s * nc + I] = acc[s];
    }
}
// the threshold between the two: coarse points at or above it take a thread
// each (level 2 of 160^3, 64,000 points: 0.65 ms by thread, 0.72 by warp;
// level 3, 8,000: 0.53 ms by thread, 0.10 by warp)
constexpr int64_t GALERKIN_THREAD_MIN = 32768;

// A_c = R A P on smaller levels: a warp per coarse point, lane q < 27 adding fine point q's
// part (gt_amg_grid_galerkin_fine, the CPU's per-point function) into its
// own row of 27 sums in shared memory, then lane s summing column s over
// the 27 rows in order. The CPU adds the same parts in the same order of
// fine points, so the two differ by the grouping of the sums only.
constexpr int BG = 128, WG = BG / 32, RS = GT_AMG_GRID_SLOTS + 1; // row stride (padded)
__global__ void __launch_bounds__(BG) k_galerkin(gt_amg_grid f, gt_amg_grid c, int nd, amg_slots slot,
                                                 const double *__restrict__ fine, double *__restrict__ coarse)
{
    __shared__ double sh[WG * 27 * RS];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    double *rows = sh + w * 27 * RS;
    int64_t nc = gt_amg_grid_size(c);
    int8_t sl[GT_AMG_GRID_SLOTS];
    for (int k = 0; k < GT_AMG_GRID_SLOTS; k++) sl[k] = (int8_t)slot.s[k];
    for (int64_t I = ((int64_t)blockIdx.x * BG + threadIdx.x) >> 5; I < nc; I += ((int64_t)gridDim.x * BG) >> 5) {
        int64_t cx, cy, cz;
        gt_amg_grid_xyz(c, I, &cx, &cy, &cz);
        if (lane < 27) {
            double *acc = rows + lane * RS;
            for (int s = 0; s < GT_AMG_GRID_SLOTS; s++) acc[s] = 0;
            gt_amg_grid_galerkin_fine(f, c, nd, sl, fine, cx, cy, cz, 2 * cx - 1 + lane % 3, 2 * cy - 1 + lane / 3 % 3,
                                      2 * cz - 1 + lane / 9, acc);
        }
        __syncwarp();
        if (lane < GT_AMG_GRID_SLOTS) {
            double v = 0;
            for (int q = 0; q < 27; q++) v += rows[q * RS + lane];
            coarse[(int64_t)lane * nc + I] = v;
        }
        __syncwarp();
    }
}

__global__ void k_rowlen(gt_amg_grid c, int64_t *__restrict__ ptr)
{
    int64_t nc = gt_amg_grid_size(c);
    for (int64_t I = (int64_t)blockIdx.x * B + threadIdx.x; I < nc; I += (int64_t)gridDim.x * B) {
        int64_t x, y, z;
        gt_amg_grid_xyz(c, I, &x, &y, &z);
        ptr[I + 1] = gt_amg_grid_row_len(c, x, y, z);
    }
}

__global__ void k_dia_csr(gt_amg_grid c, const double *__restrict__ dia, const int64_t *__restrict__ ptr,
                          int32_t *__restrict__ col, double *__restrict__ val)
{
    int64_t nc = gt_amg_grid_size(c);
    for (int64_t I = (int64_t)blockIdx.x * B + threadIdx.x; I < nc; I += (int64_t)gridDim.x * B) {
        int64_t x, y, z, q = ptr[I];
        gt_amg_grid_xyz(c, I, &x, &y, &z);
        for (int s = 0; s < GT_AMG_GRID_SLOTS; s++) {
            if (!gt_amg_grid_inside(c, x + gt_amg_grid_sdx(s), y + gt_amg_grid_sdy(s), z + gt_amg_grid_sdz(s))) continue;
            col[q] = (int32_t)(I + gt_amg_grid_offset(c, s));
            val[q++] = dia[(int64_t)s * nc + I];
        }
    }
}

struct dscratch {
    scratch *d = nullptr;
    ~dscratch() { gt_cu_free(d); }
    gt_status init(cudaStream_t st)
    {
        if (!d) GT_TRY(gt_cu_malloc((void **)&d, sizeof *d, "amg grid scratch"));
        scratch h{};
        h.d2 = ULLONG_MAX;
        GT_CU(cudaMemcpyAsync(d, &h, sizeof h, cudaMemcpyHostToDevice, st));
        return GT_OK;
    }
    gt_status get(scratch *h, cudaStream_t st)
    {
        GT_CU(cudaMemcpyAsync(h, d, sizeof *h, cudaMemcpyDeviceToHost, st));
        GT_CU(cudaStreamSynchronize(st));
        return GT_OK;
    }
};

unsigned grid_of(int64_t n) { return gt_grid((size_t)(n ? n : 1), B); }

} // namespace

amg_offs amg_grid_offsets(const amg_dlevel *L)
{
    amg_offs o{};
    for (int k = 0; k < L->nd; k++) o.o[k] = gt_amg_grid_offset(L->g, L->slot[k]);
    return o;
}

gt_status amg_cu_grid_detect(amg_dlevel *L, gt_amg_grid_info *gi, cudaStream_t st)
{
    memset(gi, 0, sizeof *gi);
    const amg_dcsr *a = &L->a;
    int64_t n = a->n;
    if (n < 2 || a->n != a->m) return GT_OK;
    dscratch sc;
    scratch h;
    GT_TRY(sc.init(st));
    k_offsets<<<grid_of(n), B, 0, st>>>(n, a->ptr, a->col, sc.d);
    GT_CU_LAUNCH("k_offsets");
    GT_TRY(sc.get(&h, st));
    gt_amg_grid cand[18];
    int nc = gt_amg_grid_candidates(n, h.d2 == ULLONG_MAX ? 0 : (int64_t)h.d2, (int64_t)h.dmax, cand);
    for (int k = 0; k < nc && gi->g.nx == 0; k++) {
        GT_TRY(sc.init(st));
        k_fits<<<grid_of(n), B, 0, st>>>(n, a->ptr, a->col, cand[k], sc.d);
        GT_CU_LAUNCH("k_fits");
        GT_TRY(sc.get(&h, st));
        if (h.bad == 0) gi->g = cand[k], gi->mask = h.mask;
    }
    if (gi->g.nx == 0) return GT_OK;
    // the DIA form with the slots found
    amg_slots where;
    L->nd = 0;
    for (int s = 0; s < GT_AMG_GRID_SLOTS; s++) {
        where.s[s] = -1;
        if (gi->mask >> s & 1) where.s[s] = L->nd, L->slot[L->nd++] = (int8_t)s;
    }
    L->g = gi->g;
    GT_TRY(gt_cu_malloc((void **)&L->dia, (size_t)L->nd * (size_t)n * 8, "amg grid stencil"));
    GT_CU(cudaMemsetAsync(L->dia, 0, (size_t)L->nd * (size_t)n * 8, st));
    k_to_dia<<<grid_of(n), B, 0, st>>>(n, a->ptr, a->col, a->val, L->g, where, L->dia);
    GT_CU_LAUNCH("k_to_dia");
    amg_slots slot;
    for (int k = 0; k < L->nd; k++) slot.s[k] = L->slot[k];
    GT_TRY(sc.init(st));
    k_sym_axis<<<grid_of(n), B, 0, st>>>(n, L->nd, slot, where, amg_grid_offsets(L), L->dia, sc.d);
    GT_CU_LAUNCH("k_sym_axis");
    GT_TRY(sc.get(&h, st));
    gi->symmetric = h.bad == 0;
    for (int d = 0; d < 3; d++) gi->axis[d] = h.sum[d];
    return GT_OK;
}

gt_status amg_cu_grid_coarsen(amg_dlevel *L, amg_dlevel *C, cudaStream_t st)
{
    int64_t n = L->a.n;
    amg_slots slot;
    for (int k = 0; k < L->nd; k++) slot.s[k] = L->slot[k];
    dscratch sc;
    scratch h;
    // end weights and rho
    GT_TRY(sc.init(st));
    const int64_t dim[3] = {L->g.nx, L->g.ny, L->g.nz};
    for (int d = 0; d < 3; d++)
        if (dim[d] > 1 && !(dim[d] & 1)) k_end<<<grid_of(n / dim[d]), B, 0, st>>>(L->g, d, L->nd, slot, L->dia, sc.d);
    GT_CU_LAUNCH("k_end");
    k_gersh<<<grid_of(n), B, 0, st>>>(n, L->nd, L->dia, L->dinv, sc.d);
    GT_CU_LAUNCH("k_gersh");
    GT_TRY(sc.get(&h, st));
    for (int d = 0; d < 3; d++)
        L->g.wend[d] = dim[d] < 2 || (dim[d] & 1) ? 0.5 : gt_amg_grid_wend(h.sum[d], h.sum[3 + d]);
    double rho;
    memcpy(&rho, &h.rho_bits, 8);
    L->rho = rho;
    // A_c = R A P as 27 slots
    gt_amg_grid c = gt_amg_grid_coarse(L->g);
    int64_t nc = gt_amg_grid_size(c);
    L->nagg = nc;
    C->g = c;
    C->nd = GT_AMG_GRID_SLOTS;
    for (int s = 0; s < GT_AMG_GRID_SLOTS; s++) C->slot[s] = (int8_t)s;
    GT_TRY(gt_cu_malloc((void **)&C->dia, (size_t)GT_AMG_GRID_SLOTS * (size_t)nc * 8, "amg grid stencil"));
    if (nc >= GALERKIN_THREAD_MIN)
        k_galerkin_thread<<<gt_grid((size_t)nc, BT), BT, 0, st>>>(L->g, c, L->nd, slot, L->dia, C->dia);
    else
        k_galerkin<<<gt_grid((size_t)nc * 32, BG), BG, 0, st>>>(L->g, c, L->nd, slot, L->dia, C->dia);
    GT_CU_LAUNCH("k_galerkin");
    // the CSR form only where it is read (the coarsest level's inverse, the
    // download): its size now, without a read-back (each dimension's points
    // have 3 m - 2 in-grid neighbours in all, m > 1)
    C->a = amg_dcsr{};
    C->a.n = C->a.m = nc;
    C->a.nnz = 1;
    for (int64_t m : {c.nx, c.ny, c.nz}) C->a.nnz *= m > 1 ? 3 * m - 2 : 1;
    return GT_OK;
}

gt_status amg_cu_grid_csr(const amg_dlevel *C, amg_dcsr *a, cudaStream_t st)
{
    gt_amg_grid c = C->g;
    int64_t nc = gt_amg_grid_size(c);
    GT_TRY(amg_dcsr_alloc(a, nc, nc, C->a.nnz, true, "amg coarse matrix"));
    k_rowlen<<<grid_of(nc), B, 0, st>>>(c, a->ptr);
    GT_CU_LAUNCH("k_rowlen");
    GT_CU(cudaMemsetAsync(a->ptr, 0, 8, st));
    GT_TRY(gt_cu_scan_inclusive_u64((const uint64_t *)a->ptr + 1, (uint64_t *)a->ptr + 1, (size_t)nc, nullptr, st));
    k_dia_csr<<<grid_of(nc), B, 0, st>>>(c, C->dia, a->ptr, a->col, a->val);
    GT_CU_LAUNCH("k_dia_csr");
    return GT_OK;
}

gt_status amg_cu_grid_dinv(const amg_dlevel *L, double *dinv, int64_t *scratch, cudaStream_t st)
{
    int64_t n = L->a.n;
    int kc = -1;
    for (int k = 0; k < L->nd; k++)
        if (L->slot[k] == 13) kc = k;
    if (kc < 0) return gt_fail(GT_ERR_DATA, "amg: zero, missing or non-finite diagonal in row 1");
    GT_CU(cudaMemsetAsync(scratch, 0xff, 8, st));
    k_dinv_dia<<<grid_of(n), B, 0, st>>>(n, L->dia + (int64_t)kc * n, dinv, (unsigned long long *)scratch);
    GT_CU_LAUNCH("k_dinv_dia");
    return amg_cu_diag_check(scratch, st);
}
