// Cholesky factorization and solve of the TPS fit's dense SPD block on the
// GPU, double precision, without cuSOLVER: opening cuSOLVER and the lazy
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
// columns; on an H200 m16n8k16 ran this 1.7x faster than m8n8k4). Halves
// stop at PW = 256 columns, which are factored left-looking by blocks of 32
// columns, one launch per block (chol_panel_step): every CTA updates the
// 32 x 32 diagonal block by the leaf's columns already done and factors it
// (one warp, in registers; redundantly: 32^3/3 flops), then updates and
// solves its own 64 rows below it; the CTA that reads the diagonal block
// last writes its factor (2 CTAs per SM).
// Solve (nrhs <= 4): the 64 x 64 diagonal blocks of L inverted at once, then
// forward and backward substitution by blocks of 64 rows, one launch per
// block and direction; each CTA multiplies the block's right-hand side by
// the inverse and updates its own rows (forward) or columns (backward).
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
constexpr int TB = 64;         // triangular solve block
constexpr int INV_SMEM = 2 * TB * (TB + 1) * (int)sizeof(double);

static_assert(PW % SK == 0 && PW % IB == 0 && IB % QC == 0, "panel width");

// ---- the diagonal block's factorization, by warp 0 in registers (lane i
// holds row i of D; padding rows past b are rows of the identity). rd[c]
// gets 1 / L[c][c]; *bad the first column (from 0) whose pivot is not
// positive (or not a number), -1 when none.
__device__ void chol32(double (*D)[IB + 1], double *rd, int b, int *bad)
{
    const int lane = threadIdx.x & 31;
    if (threadIdx.x < 32) {
        double row[IB], mine = 1.0;
#pragma unroll
        for (int j = 0; j < IB; j++) row[j] = D[lane][j];
        int first = -1;
#pragma unroll
        for (int c = 0; c < IB; c++) {
            const double dcc = __shfl_sync(0xffffffffu, row[c], c);
            if (!(dcc > 0.0) && first < 0 && c < b) first = c;
            const double ip = rsqrt(dcc); // one rounding more than 1 / sqrt; the serial chain's one slow step
            if (lane == c) {
                row[c] = dcc * ip;
                mine = ip;
            } else if (lane > c) {
                row[c] *= ip;
            }
#pragma unroll
            for (int j = c + 1; j < IB; j++) {
                const double ljc = __shfl_sync(0xffffffffu, row[c], j);
                if (lane >= j) row[j] -= row[c] * ljc;
            }
        }
#pragma unroll
        for (int j = 0; j < IB; j++) D[lane][j] = row[j];
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
__global__ void __launch_bounds__(256, 2) chol_panel_step(double *__restrict__ A, size_t ld, int N, int k0, int c0,
                                                       int b, int *__restrict__ info, unsigned *__restrict__ count)
{
    __shared__ double D[IB][IB + 1], Dt[IB][QC + 1], X[RB][IB + 1], Rt[RB][QC + 1], rd[IB];
    __shared__ int bad;
    __shared__ bool last;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int row0 = c0 + b + blockIdx.x * RB;
    const int lw = c0 - k0;
    for (int e = tid; e < IB * IB; e += 256) {
        int i = e % IB, j = e / IB; // i fastest: coalesced column reads
        D[i][j] = (i < b && j < b && j <= i) ? A[(size_t)(c0 + i) + (size_t)(c0 + j) * ld] : (i == j ? 1.0 : 0.0);
    }
    for (int e = tid; e < RB * IB; e += 256) {
        int r = e % RB, j = e / RB;
        X[r][j] = (row0 + r < N && j < b) ? A[(size_t)(row0 + r) + (size_t)(c0 + j) * ld] : 0.0;
    }
    // left-looking update by the leaf's finished columns, QC at a time; the
    // next chunk's loads are in flight while this one is used
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
    double dacc[4] = {0, 0, 0, 0}, xacc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (lw > 0) fetch(0);
    __syncthreads(); // D is read (the chunks below read no row of it)
    if (tid == 0) {
        last = atomicAdd(count, 1u) == gridDim.x - 1;
        if (last) *count = 0; // every CTA has counted: ready for the next launch
    }
    for (int q0 = 0; q0 < lw; q0 += QC) {
        __syncthreads();
#pragma unroll
        for (int u = 0; u < PD; u++) Dt[(tid + 256 * u) % IB][(tid + 256 * u) / IB] = pd[u];
#pragma unroll
        for (int u = 0; u < PR; u++) Rt[(tid + 256 * u) % RB][(tid + 256 * u) / RB] = pr[u];
        __syncthreads();
        if (q0 + QC < lw) fetch(q0 + QC);
#pragma unroll
        for (int q = 0; q < QC; q++) {
            const double dl = Dt[lane][q];
#pragma unroll
            for (int s = 0; s < 4; s++) dacc[s] += Dt[warp + 8 * s][q] * dl;
#pragma unroll
            for (int s = 0; s < 8; s++) xacc[s] += Rt[warp + 8 * s][q] * dl;
        }
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < 4; s++)
        if (warp + 8 * s >= lane) D[warp + 8 * s][lane] -= dacc[s];
#pragma unroll
    for (int s = 0; s < 8; s++) X[warp + 8 * s][lane] -= xacc[s];
    __syncthreads();
    chol32(D, rd, b, &bad);
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

    auto load = [&](int stage, int kt) {
        double *As = sm + stage * 2 * SK * SLD, *Bs = As + SK * SLD;
#pragma unroll
        for (int it = 0; it < (SK * ST) / 256; it++) {
            const int idx = it * 256 + tid, k = idx / ST, mm = idx % ST;
            const size_t col = (size_t)(kt * SK + k) * ld;
            const int ra = r0 + mm, rb = s0 + mm;
            cp_async8(&As[k * SLD + mm], P + (ra < rem ? ra : 0) + col, ra < rem);
            cp_async8(&Bs[k * SLD + mm], P + (rb < rem ? rb : 0) + col, rb < rem);
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
    for (int kt = 0; kt < nk; kt++) {
        cp_async_wait<STAGES - 2>();
        __syncthreads(); // stage kt is in; every warp is done with stage kt - 1
        if (kt + STAGES - 1 < nk) load((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
        cp_async_commit();
        const double *As = sm + (kt % STAGES) * 2 * SK * SLD, *Bs = As + SK * SLD;
        double bf[4][4];
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int v = 0; v < 4; v++) bf[j][v] = Bs[(t + 4 * v) * SLD + wn * 32 + j * 8 + g];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            double a[8];
#pragma unroll
            for (int v = 0; v < 8; v++) a[v] = As[(t + 4 * (v / 2)) * SLD + wm * 64 + i * 16 + g + 8 * (v % 2)];
#pragma unroll
            for (int j = 0; j < 4; j++) dmma16(acc[i][j], a, bf[j]);
        }
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

// ---- triangular solves, nrhs <= 4, blocks of TB rows: first the inverse of
// every diagonal block (all at once), then per block one launch in each
// direction, whose diagonal solve is a product with that inverse (no serial
// chain of 64 divisions and shuffles per launch: 22 us a launch before).

// Inv (TB x TB per block, column-major in the block) = L_bb^-1 for every
// diagonal block b (blockIdx.x); past N the identity. Thread j forms column
// j by forward substitution.
__global__ void __launch_bounds__(TB) chol_inv_diag(const double *__restrict__ L, size_t ld, int N,
                                                    double *__restrict__ Inv)
{
    extern __shared__ double inv_sm[]; // Ls, then Vi: 2 TB (TB + 1) doubles (over 48 KB: dynamic)
    double(*Ls)[TB + 1] = (double(*)[TB + 1])inv_sm, (*Vi)[TB + 1] = Ls + TB;
    const int c0 = blockIdx.x * TB, b = N - c0 < TB ? N - c0 : TB, j = threadIdx.x;
    for (int e = j; e < TB * TB; e += TB) {
        int i = e % TB, k = e / TB; // rows fastest: coalesced
        Ls[i][k] = (i < b && k <= i) ? L[(size_t)(c0 + i) + (size_t)(c0 + k) * ld] : (i == k ? 1.0 : 0.0);
    }
    __syncthreads();
    for (int i = 0; i < TB; i++) {
        double s0 = i == j ? 1.0 : 0.0, s1 = 0.0;
        if (i > j) {
            int k = j;
            for (; k + 1 < i; k += 2) {
                s0 -= Ls[i][k] * Vi[k][j];
                s1 -= Ls[i][k + 1] * Vi[k + 1][j];
            }
            if (k < i) s0 -= Ls[i][k] * Vi[k][j];
        }
        Vi[i][j] = i >= j ? (s0 + s1) / Ls[i][i] : 0.0; // column j: this thread's own
    }
    __syncthreads();
    double *out = Inv + (size_t)blockIdx.x * TB * TB;
    for (int e = j; e < TB * TB; e += TB) out[e] = Vi[e % TB][e / TB];
}

// Forward block step: Z[block] = L_bb^-1 Y[block]; Y[rows below] -= L[below, block] Z[block].
__global__ void __launch_bounds__(256) chol_fwd_step(const double *__restrict__ L, size_t ld, int N, int c0, int b,
                                                     const double *__restrict__ Inv, double *__restrict__ Y,
                                                     size_t ldy, double *__restrict__ Z, int nrhs)
{
    __shared__ double ys[4][TB], xs[4][TB];
    const int tid = threadIdx.x;
    {
        const int k = tid / TB, i = tid % TB;
        ys[k][i] = (k < nrhs && i < b) ? Y[(size_t)(c0 + i) + (size_t)k * ldy] : 0.0;
    }
    __syncthreads();
    {
        const int k = tid / TB, i = tid % TB;
        double s = 0.0;
        if (k < nrhs)
            for (int c = 0; c <= i; c++) s += Inv[i + c * TB] * ys[k][c];
        xs[k][i] = s;
    }
    __syncthreads();
    if (blockIdx.x == 0)
        for (int e = tid; e < nrhs * b; e += blockDim.x)
            Z[(size_t)(c0 + e % b) + (size_t)(e / b) * N] = xs[e / b][e % b];
    const int r = c0 + b + blockIdx.x * blockDim.x + tid;
    if (r >= N) return;
    double s[4] = {0, 0, 0, 0};
    for (int c = 0; c < b; c++) {
        const double l = L[(size_t)r + (size_t)(c0 + c) * ld];
#pragma unroll
        for (int k = 0; k < 4; k++) s[k] += l * xs[k][c];
    }
    for (int k = 0; k < nrhs; k++) Y[(size_t)r + (size_t)k * ldy] -= s[k];
}

// Backward block step: X[block] = L_bb^-T Z[block]; Z[rows above] -= L[block, above]^T X[block].
// One warp per column above (8 per CTA), 64 contiguous reads of it.
__global__ void __launch_bounds__(256) chol_bwd_step(const double *__restrict__ L, size_t ld, int N, int c0, int b,
                                                     const double *__restrict__ Inv, double *__restrict__ Z,
                                                     double *__restrict__ X, size_t ldx, int nrhs)
{
    __shared__ double zs[4][TB], xs[4][TB];
    const int tid = threadIdx.x;
    {
        const int k = tid / TB, i = tid % TB;
        zs[k][i] = (k < nrhs && i < b) ? Z[(size_t)(c0 + i) + (size_t)k * N] : 0.0;
    }
    __syncthreads();
    {
        const int k = tid / TB, i = tid % TB; // (L^-T)[i][c] = Inv[c][i], c >= i
        double s = 0.0;
        if (k < nrhs)
            for (int c = i; c < TB; c++) s += Inv[c + i * TB] * zs[k][c];
        xs[k][i] = s;
    }
    __syncthreads();
    if (blockIdx.x == 0)
        for (int e = tid; e < nrhs * b; e += blockDim.x)
            X[(size_t)(c0 + e % b) + (size_t)(e / b) * ldx] = xs[e / b][e % b];
    const int lane = tid & 31, warp = tid >> 5;
    const int i = blockIdx.x * 8 + warp;
    if (i >= c0) return;
    const double l0 = lane < b ? L[(size_t)(c0 + lane) + (size_t)i * ld] : 0.0;
    const double l1 = lane + 32 < b ? L[(size_t)(c0 + lane + 32) + (size_t)i * ld] : 0.0;
    for (int k = 0; k < nrhs; k++) {
        double s = l0 * xs[k][lane] + l1 * xs[k][lane + 32];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0) Z[(size_t)i + (size_t)k * N] -= s;
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

extern "C" size_t gt_tps_cuda_chol_solve_work(size_t N, int nrhs)
{
    const size_t nb = (N + TB - 1) / TB;
    return N * (size_t)nrhs + nb * TB * TB;
}

extern "C" gt_status gt_tps_cuda_chol_solve(const double *L, size_t ld, size_t N, double *B, size_t ldb, int nrhs,
                                            double *work)
{
    if (nrhs < 1 || nrhs > 4) return gt_fail(GT_ERR_GPU, "Cholesky solve: %d right-hand sides (1 to 4)", nrhs);
    if (N == 0) return GT_OK;
    const int n = (int)N, nb = (n + TB - 1) / TB;
    double *Z = work, *Inv = work + N * (size_t)nrhs;
    static bool attr;
    if (!attr) {
        GT_CU(cudaFuncSetAttribute(chol_inv_diag, cudaFuncAttributeMaxDynamicSharedMemorySize, INV_SMEM));
        attr = true;
    }
    chol_inv_diag<<<nb, TB, INV_SMEM>>>(L, ld, n, Inv);
    GT_CU_LAUNCH("chol_inv_diag");
    for (int c0 = 0; c0 < n; c0 += TB) {
        const int b = n - c0 < TB ? n - c0 : TB, below = n - c0 - b;
        chol_fwd_step<<<below > 0 ? (below + 255) / 256 : 1, 256>>>(L, ld, n, c0, b, Inv + (size_t)(c0 / TB) * TB * TB,
                                                                     B, ldb, Z, nrhs);
        GT_CU_LAUNCH("chol_fwd_step");
    }
    for (int c0 = ((n - 1) / TB) * TB; c0 >= 0; c0 -= TB) {
        const int b = n - c0 < TB ? n - c0 : TB;
        chol_bwd_step<<<c0 > 0 ? (c0 + 7) / 8 : 1, 256>>>(L, ld, n, c0, b, Inv + (size_t)(c0 / TB) * TB * TB, Z, B,
                                                           ldb, nrhs);
        GT_CU_LAUNCH("chol_bwd_step");
    }
    return GT_OK;
}
