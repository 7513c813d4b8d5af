// Cholesky factorization of the TPS fit's dense SPD block on the GPU,
// double precision, without cuSOLVER: opening cuSOLVER and the lazy
// loading of potrf's kernels cost a fit 60-90 ms before its first flop
// (RESULTS.md, sessions of 2026-11-29), more than the factorization of
// n = 20000 itself. CPU reference: lib/tps/linalg.c (tps_cholesky,
// tps_chol_solve); tests/tps/test_gpu_tps.c compares them.
//
// Factorization: recursive by columns (Gustavson's recursive Cholesky, as
// in Elmroth and Gustavson 2000): the left half of the columns is factored,
// the right half's columns (every row below) are updated by it in one
// matrix product, then the right half is factored. Nearly all of the n^3/3
// flops are then in a few large products with a long inner dimension
// (chol_update: C -= P P^T on 128 x 128 tiles of the lower triangle, the
// FP64 tensor cores through mma.sync m16n8k16, three cp.async stages of 16
// columns; on an H200 m16n8k16 ran this 1.7x faster than m8n8k4, and the
// tensor cores are busy 79 % of the time on the largest product of
// n = 20000, 49 TFLOP/s). Halves
// stop at PW = 256 columns, which are factored left-looking by blocks of 32
// columns, one launch per block (chol_panel_step): every CTA updates the
// 32 x 32 diagonal block and its own 64 rows below it by the leaf's columns
// already done (on the tensor cores too: 1.4x faster than FMAs from shared
// memory at n = 20000), factors the block (one warp, in registers;
// redundantly: 32^3/3 flops; the pivots' chain pipelined ahead of the
// updates: a step 15.9 -> 12.6 us) and solves its rows; the CTA that reads
// the diagonal block last writes its factor (2 CTAs per SM).
// The solves with the factor: tps_chol_solve.cu.
// Only the lower triangle is read or written; the strict upper triangle
// keeps what it held. Everything runs on stream 0, asynchronous to the host.
#include <cuda_runtime.h>

#include <climits>

#include "kernels/common/cu_check.h"
#include "kernels/tps/tps_cuda.h"

namespace {

constexpr int PW = 256;        // leaf width: the recursion stops at this many columns
constexpr int IB = 32;         // inner block: columns per chol_panel_step
constexpr int RB = 64;         // rows per CTA in chol_panel_step
constexpr int QC = 16;         // its chunk of finished columns (shared memory under 48 KB)
constexpr int ST = 128;        // chol_update tile
constexpr int SK = 16;         // chol_update k-slab
constexpr int SLD = ST + 4;    // its shared leading dimension: = 4 mod 16 doubles, no bank conflicts
constexpr int STAGES = 3;      // cp.async stages
constexpr int UPD_SMEM = STAGES * 2 * SK * SLD * (int)sizeof(double);

static_assert(PW % SK == 0 && PW % IB == 0 && IB % QC == 0, "panel width");

// cp.async (sm_80 on); before it a plain load, which the barrier after the
// wait orders the same way.
__device__ __forceinline__ void cp_async8(double *dst, const double *src, bool valid)
{
#if __CUDA_ARCH__ >= 800
    unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    int n = valid ? 8 : 0; // 0: the 8 bytes are zero-filled
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(s), "l"(src), "r"(n));
#else
    *dst = valid ? *src : 0.0;
#endif
}
__device__ __forceinline__ void cp_async_commit()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}
template <int K> __device__ __forceinline__ void cp_async_wait()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(K));
#endif
}

// c += A B for A 8 x 4 (a: A[g][t]), B 4 x 8 (b: B[t][g]), C 8 x 8 (c0, c1:
// C[g][2t], C[g][2t + 1]); g = lane / 4, t = lane % 4. The FP64 tensor cores
// from sm_80; before them the same through shuffles and FMAs. (dmma16's
// parts before sm_90.)
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ < 900
__device__ __forceinline__ void dmma8(double &c0, double &c1, double a, double b)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                 : "+d"(c0), "+d"(c1)
                 : "d"(a), "d"(b));
#else
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const double ag = __shfl_sync(0xffffffffu, a, 4 * g + k);
        c0 += ag * __shfl_sync(0xffffffffu, b, 4 * (2 * t) + k);
        c1 += ag * __shfl_sync(0xffffffffu, b, 4 * (2 * t + 1) + k);
    }
#endif
}
#endif

// D = A B + D, A 16 x 16 (a: rows g, g + 8 and columns t, t + 4, t + 8,
// t + 12 of it as a[0..7] = (g, t), (g + 8, t), (g, t + 4), ...), B 16 x 8
// (b[v]: row t + 4 v, column g), D 16 x 8 (d: (g, 2t), (g, 2t + 1),
// (g + 8, 2t), (g + 8, 2t + 1)); g = lane / 4, t = lane % 4. PTX ISA,
// "Matrix fragments for mma.m16n8k16" (.f64, sm_90); before sm_90 as eight
// m8n8k4 products.
__device__ __forceinline__ void dmma16(double (&d)[4], const double (&a)[8], const double (&b)[4])
{
#if __CUDA_ARCH__ >= 900
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
                 "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
                   "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
#else
    // rows g + 8 h, columns 4 q .. 4 q + 3: eight 8 x 8 x 4 products
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int q = 0; q < 4; q++) dmma8(d[2 * h], d[2 * h + 1], a[h + 2 * q], b[q]);
#endif
}

// ---- the diagonal block's factorization, by warp 0 in registers (lane i
// holds row i of D; padding rows past b are rows of the identity). rd[c]
// gets 1 / L[c][c]; *bad the first column (from 0) whose pivot is not
// positive (or not a number), -1 when none. cb: 2 x 32 doubles of shared
// memory (16-byte aligned), where column c's finished values are passed.
// The serial chain is the pivots': lane c + 1 forms the next pivot from its
// own values (its diagonal minus L[c+1][c]^2) and it is broadcast and its
// reciprocal square root started before column c's update of the rest, which
// then overlaps it (one column's chain: an FMA, a shuffle, the rsqrt).
__device__ void chol32(double (*D)[IB + 1], double *rd, double *cb, int b, int *bad)
{
    const int lane = threadIdx.x & 31;
    if (threadIdx.x < 32) {
        double row[IB], mine = 1.0;
#pragma unroll
        for (int j = 0; j < IB; j++) row[j] = D[lane][j];
        int first = -1;
        double dcc = __shfl_sync(0xffffffffu, row[0], 0);
        double ip = rsqrt(dcc); // one rounding more than 1 / sqrt; the serial chain's one slow step
#pragma unroll
        for (int c = 0; c < IB; c++) {
            if (!(dcc > 0.0) && first < 0 && c < b) first = c;
            const double l = lane == c ? dcc * ip : row[c] * ip;
            if (lane == c) mine = ip;
            if (lane >= c) row[c] = l;
            if (c + 1 < IB) {
                // the next pivot, then column c's update of the columns right of it
                const double dn = __shfl_sync(0xffffffffu, row[c + 1] - l * l, c + 1);
                const double ipn = rsqrt(dn);
                double *col = cb + 32 * (c & 1); // two buffers: one __syncwarp per column
                if (lane >= c) col[lane - c] = l; // col[j] = L[c + j][c]
                __syncwarp();
#pragma unroll
                for (int p = 0; 2 * p < IB - c; p++) {
                    const double2 v = reinterpret_cast<const double2 *>(col)[p];
                    // rows above c + j get values in their upper triangle, never read
                    if (2 * p >= 1 && 2 * p <= IB - 1 - c) row[c + 2 * p] -= l * v.x;
                    if (2 * p + 1 <= IB - 1 - c) row[c + 2 * p + 1] -= l * v.y;
                }
                dcc = dn;
                ip = ipn;
            }
        }
#pragma unroll
        for (int j = 0; j < IB; j++) D[lane][j] = j <= lane ? row[j] : 0.0;
        rd[lane] = mine;
        if (lane == 0) *bad = first;
    }
    __syncthreads();
}

// One 32-column block [c0, c0 + b) of the leaf that starts at k0; columns
// k0 .. c0 of the leaf are final. Rows c0 + b .. N are split over CTAs, RB
// each. The CTA that finishes reading the diagonal block last (count: a
// device int, 0 before the launch and after it) writes its factor: CTAs
// start at different times, and an earlier write would reach a CTA that
// has not read the block yet.
// The left-looking update (X -= R Dl^T and D -= Dl Dl^T, R the CTA's rows
// and Dl the diagonal block's rows in the leaf's finished columns) runs on
// the FP64 tensor cores, QC columns at a time: warp w owns X's 16 x 8 tiles
// (w / 2, 2 (w % 2)) and (w / 2, 2 (w % 2) + 1) and D's tile (w / 4, w % 4).
// The chunks are staged k-major (Rt[q][r]) with a leading dimension of 4
// mod 16 doubles, so the fragments' loads are free of bank conflicts; the
// next chunk's loads are in flight in registers while this one is used.
__global__ void __launch_bounds__(256, 2) chol_panel_step(double *__restrict__ A, size_t ld, int N, int k0, int c0,
                                                       int b, int *__restrict__ info, unsigned *__restrict__ count)
{
    constexpr int DLD = IB + 4, RLD = RB + 4;
    __shared__ double D[IB][IB + 1], X[RB][IB + 1], Dt[QC][DLD], Rt[QC][RLD], rd[IB];
    __shared__ __align__(16) double cb[2 * 32];
    __shared__ int bad;
    __shared__ bool last;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int row0 = c0 + b + blockIdx.x * RB;
    const int lw = c0 - k0;
    {
        // every load in flight before the first store (one memory latency, not 12)
        double dv[IB * IB / 256], xv[RB * IB / 256];
#pragma unroll
        for (int u = 0; u < IB * IB / 256; u++) {
            const int e = tid + 256 * u, i = e % IB, j = e / IB; // i fastest: coalesced column reads
            dv[u] = (i < b && j < b && j <= i) ? A[(size_t)(c0 + i) + (size_t)(c0 + j) * ld] : (i == j ? 1.0 : 0.0);
        }
#pragma unroll
        for (int u = 0; u < RB * IB / 256; u++) {
            const int e = tid + 256 * u, r = e % RB, j = e / RB;
            xv[u] = (row0 + r < N && j < b) ? A[(size_t)(row0 + r) + (size_t)(c0 + j) * ld] : 0.0;
        }
#pragma unroll
        for (int u = 0; u < IB * IB / 256; u++) D[(tid + 256 * u) % IB][(tid + 256 * u) / IB] = dv[u];
#pragma unroll
        for (int u = 0; u < RB * IB / 256; u++) X[(tid + 256 * u) % RB][(tid + 256 * u) / RB] = xv[u];
    }
    constexpr int PD = IB * QC / 256, PR = RB * QC / 256;
    double pd[PD], pr[PR];
    auto fetch = [&](int q0) {
#pragma unroll
        for (int u = 0; u < PD; u++) {
            const int e = tid + 256 * u, i = e % IB, q = e / IB;
            pd[u] = i < b ? A[(size_t)(c0 + i) + (size_t)(k0 + q0 + q) * ld] : 0.0;
        }
#pragma unroll
        for (int u = 0; u < PR; u++) {
            const int e = tid + 256 * u, r = e % RB, q = e / RB;
            pr[u] = row0 + r < N ? A[(size_t)(row0 + r) + (size_t)(k0 + q0 + q) * ld] : 0.0;
        }
    };
    double dacc[4] = {0, 0, 0, 0}, xacc[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    const int xm = (warp >> 1) * 16, xn = (warp & 1) * 16, dm = (warp >> 2) * 16, dn = (warp & 3) * 8;
    const bool dtile = dn < dm + 16; // D's tiles right of the diagonal's 16 x 16 blocks are not needed
    if (lw > 0) fetch(0);
    __syncthreads(); // D is read (the chunks below read no row of it)
    if (tid == 0) {
        last = atomicAdd(count, 1u) == gridDim.x - 1;
        if (last) *count = 0; // every CTA has counted: ready for the next launch
    }
    for (int q0 = 0; q0 < lw; q0 += QC) {
        __syncthreads(); // every warp is done with the last chunk
#pragma unroll
        for (int u = 0; u < PD; u++) Dt[(tid + 256 * u) / IB][(tid + 256 * u) % IB] = pd[u];
#pragma unroll
        for (int u = 0; u < PR; u++) Rt[(tid + 256 * u) / RB][(tid + 256 * u) % RB] = pr[u];
        __syncthreads();
        if (q0 + QC < lw) fetch(q0 + QC);
#pragma unroll
        for (int kk = 0; kk < QC; kk += 16) {
            double a[8], bx[2][4], bd[4];
#pragma unroll
            for (int v = 0; v < 8; v++) a[v] = Rt[kk + t + 4 * (v >> 1)][xm + g + 8 * (v & 1)];
#pragma unroll
            for (int h = 0; h < 2; h++)
#pragma unroll
                for (int v = 0; v < 4; v++) bx[h][v] = Dt[kk + t + 4 * v][xn + 8 * h + g];
            dmma16(xacc[0], a, bx[0]);
            dmma16(xacc[1], a, bx[1]);
            if (dtile) {
#pragma unroll
                for (int v = 0; v < 8; v++) a[v] = Dt[kk + t + 4 * (v >> 1)][dm + g + 8 * (v & 1)];
#pragma unroll
                for (int v = 0; v < 4; v++) bd[v] = Dt[kk + t + 4 * v][dn + g];
                dmma16(dacc, a, bd);
            }
        }
    }
    // fragments: (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1)
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const int r = g + 8 * (e >> 1), c = 2 * t + (e & 1);
        X[xm + r][xn + c] -= xacc[0][e];
        X[xm + r][xn + 8 + c] -= xacc[1][e];
        if (dtile && dn + c <= dm + r) D[dm + r][dn + c] -= dacc[e];
    }
    __syncthreads();
    chol32(D, rd, cb, b, &bad);
    // X <- X L^-T: row r by the 4 lanes 4r .. 4r + 3, each 8 of its columns
    // (sub, sub + 4, ...) in registers; the finished value of column c comes
    // from the lane that holds it
    {
        const int r = tid >> 2, sub = tid & 3;
        double xr[IB / 4];
#pragma unroll
        for (int q = 0; q < IB / 4; q++) xr[q] = X[r][sub + 4 * q];
#pragma unroll
        for (int c = 0; c < IB; c++) {
            const double mine = xr[c >> 2] * rd[c];
            const double x = __shfl_sync(0xffffffffu, mine, (lane & ~3) | (c & 3));
            if (sub == (c & 3)) xr[c >> 2] = x;
#pragma unroll
            for (int q = 0; q < IB / 4; q++)
                if (sub + 4 * q > c) xr[q] -= x * D[sub + 4 * q][c];
        }
#pragma unroll
        for (int q = 0; q < IB / 4; q++) X[r][sub + 4 * q] = xr[q];
    }
    __syncthreads();
    for (int e = tid; e < RB * IB; e += 256) {
        int r = e % RB, j = e / RB;
        if (row0 + r < N && j < b) A[(size_t)(row0 + r) + (size_t)(c0 + j) * ld] = X[r][j];
    }
    if (last) { // (every CTA computed the same D)
        for (int e = tid; e < IB * IB; e += 256) {
            int i = e % IB, j = e / IB;
            if (i < b && j <= i) A[(size_t)(c0 + i) + (size_t)(c0 + j) * ld] = D[i][j];
        }
        if (tid == 0 && bad >= 0) atomicCAS(info, 0, c0 + bad + 1);
    }
}

// C -= P P^T for the part of C (rem rows, leading dimension ld) below its
// diagonal and left of column ncols; P: rem x kw (kw a multiple of SK), its
// row j being the one of C's row j, so its first ncols rows give the
// columns. One CTA per 128 x 128 tile: first the triangle of the first
// ceil(ncols / 128) tile rows, then full tile rows of that many tiles; 8
// warps, each a 64 x 32 part of the tile (4 x 4 mma per 16 columns of P).
__global__ void __launch_bounds__(256, 1) chol_update(double *__restrict__ C, const double *__restrict__ P, size_t ld,
                                                      int rem, int ncols, int kw)
{
    extern __shared__ double sm[];
    const long long bid = blockIdx.x, tj_n = (ncols + ST - 1) / ST, tri = tj_n * (tj_n + 1) / 2;
    int ti, tj;
    if (bid < tri) {
        ti = (int)((sqrt(8.0 * (double)bid + 1.0) - 1.0) * 0.5);
        while ((long long)(ti + 1) * (ti + 2) / 2 <= bid) ti++;
        while ((long long)ti * (ti + 1) / 2 > bid) ti--;
        tj = (int)(bid - (long long)ti * (ti + 1) / 2);
    } else {
        ti = (int)(tj_n + (bid - tri) / tj_n);
        tj = (int)((bid - tri) % tj_n);
    }
    const int r0 = ti * ST, s0 = tj * ST;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp >> 2, wn = warp & 3;
    const int nk = kw / SK;

    // a thread copies one row (mm) of every other column (kq, kq + 2, ...)
    // of a slab, for A's rows and B's: its addresses are fixed but for the
    // slab's offset, so a slab costs 16 copies and a few adds (the address
    // arithmetic per copy had kept the tensor cores waiting after every
    // barrier)
    const int mm = tid & (ST - 1), kq = tid / ST;
    const bool va = r0 + mm < rem, vb = s0 + mm < rem;
    const double *ga = P + (va ? r0 + mm : 0) + (size_t)kq * ld, *gb = P + (vb ? s0 + mm : 0) + (size_t)kq * ld;
    double *sa = sm + kq * SLD + mm;
    auto load = [&](int stage, int kt) {
        double *As = sa + stage * 2 * SK * SLD, *Bs = As + SK * SLD;
        const double *a = ga + (size_t)kt * SK * ld, *b = gb + (size_t)kt * SK * ld;
#pragma unroll
        for (int it = 0; it < SK * ST / 256; it++) {
            cp_async8(As + it * (256 / ST) * SLD, a, va);
            cp_async8(Bs + it * (256 / ST) * SLD, b, vb);
            a += (256 / ST) * ld;
            b += (256 / ST) * ld;
        }
    };

    double acc[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0;

#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < nk) load(s, s);
        cp_async_commit();
    }
    const int g = lane >> 2, t = lane & 3;
    const double *fa = sm + t * SLD + wm * 64 + g, *fb = sm + SK * SLD + t * SLD + wn * 32 + g;
    for (int kt = 0, stage = 0; kt < nk; kt++) {
        cp_async_wait<STAGES - 2>();
        __syncthreads(); // stage kt is in; every warp is done with stage kt - 1
        const double *As = fa + stage * 2 * SK * SLD, *Bs = fb + stage * 2 * SK * SLD;
        double bf[4][4];
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int v = 0; v < 4; v++) bf[j][v] = Bs[4 * v * SLD + j * 8];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            double a[8];
#pragma unroll
            for (int v = 0; v < 8; v++) a[v] = As[4 * (v / 2) * SLD + i * 16 + 8 * (v % 2)];
#pragma unroll
            for (int j = 0; j < 4; j++) dmma16(acc[i][j], a, bf[j]);
        }
        // the next copies are issued after this slab's products (asm volatile
        // keeps the order): the tensor cores start right after the barrier
        if (kt + STAGES - 1 < nk) load(stage == 0 ? STAGES - 1 : stage - 1, kt + STAGES - 1);
        cp_async_commit();
        stage = stage == STAGES - 1 ? 0 : stage + 1;
    }
    cp_async_wait<0>();
    // C's values of one 16-row strip are all loaded before any is stored
#pragma unroll
    for (int i = 0; i < 4; i++) {
        double cv[4][4];
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int row = r0 + wm * 64 + i * 16 + g + 8 * (e >> 1), col = s0 + wn * 32 + j * 8 + 2 * t + (e & 1);
                cv[j][e] = (row < rem && col < ncols && col <= row) ? C[(size_t)row + (size_t)col * ld] : 0.0;
            }
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int row = r0 + wm * 64 + i * 16 + g + 8 * (e >> 1), col = s0 + wn * 32 + j * 8 + 2 * t + (e & 1);
                if (row < rem && col < ncols && col <= row) C[(size_t)row + (size_t)col * ld] = cv[j][e] - acc[i][j][e];
            }
    }
}

} // namespace

// Columns [k0, k0 + w) of the N x N matrix, every row from k0 down, once
// they hold every update from the columns left of k0.
static gt_status factor(double *A, size_t ld, int N, int k0, int w, int *info)
{
    unsigned *count = (unsigned *)(info + 1);
    if (w <= PW) {
        for (int c0 = k0; c0 < k0 + w; c0 += IB) {
            const int b = k0 + w - c0 < IB ? k0 + w - c0 : IB;
            const int below = N - c0 - b;
            chol_panel_step<<<below > 0 ? (below + RB - 1) / RB : 1, 256>>>(A, ld, N, k0, c0, b, info, count);
            GT_CU_LAUNCH("chol_panel_step");
        }
        return GT_OK;
    }
    const int w1 = ((w / 2 + PW - 1) / PW) * PW; // a multiple of PW (and of SK), less than w
    GT_TRY(factor(A, ld, N, k0, w1, info));
    const int rem = N - k0 - w1, ncols = w - w1;
    const long long ti = (rem + ST - 1) / ST, tj = (ncols + ST - 1) / ST;
    const long long tiles = tj * (tj + 1) / 2 + (ti - tj) * tj;
    chol_update<<<(unsigned)tiles, 256, UPD_SMEM>>>(A + (size_t)(k0 + w1) * (ld + 1),
                                                    A + (size_t)(k0 + w1) + (size_t)k0 * ld, ld, rem, ncols, w1);
    GT_CU_LAUNCH("chol_update");
    return factor(A, ld, N, k0 + w1, w - w1, info);
}

extern "C" gt_status gt_tps_cuda_cholesky(double *A, size_t ld, size_t N, int *info)
{
    if (N > (size_t)INT_MAX / 2 || ld < N) return gt_fail(GT_ERR_GPU, "Cholesky of %zu rows (ld %zu): out of range", N, ld);
    GT_CU(cudaMemsetAsync(info, 0, 2 * sizeof(int), 0));
    if (N == 0) return GT_OK;
    static bool attr;
    if (!attr) {
        GT_CU(cudaFuncSetAttribute(chol_update, cudaFuncAttributeMaxDynamicSharedMemorySize, UPD_SMEM));
        attr = true;
    }
    return factor(A, ld, (int)N, 0, (int)N, info);
}
