// Triangular solves with the Cholesky factor of tps_chol.cu, on the GPU,
// double precision. CPU reference: lib/tps/linalg.c (tps_chol_solve);
// tests/tps/test_gpu_tps.c compares them.
// Solve (nrhs <= 4): the 64 x 64 diagonal blocks of L inverted at once, then
// forward and backward substitution in one launch each, a CTA per block of
// 64 rows that adds the products of the blocks before it as they are
// published (a flag per block) and multiplies by its block's inverse.
// Only the lower triangle of L is read. Everything runs on stream 0,
// asynchronous to the host.
#include <cuda_runtime.h>

#include "kernels/common/cu_check.h"
#include "kernels/tps/tps_cuda.h"

namespace {

constexpr int TB = 64; // triangular solve block
constexpr int INV_SMEM = 2 * TB * (TB + 1) * (int)sizeof(double);

// ---- triangular solves, nrhs <= 4, blocks of TB rows: first the inverse of
// every diagonal block (all at once), then one launch per direction, whose
// diagonal solves are products with those inverses (no serial chain of 64
// divisions per block).

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

// One direction of the solve in one launch, a CTA per block of TB rows:
// forward (TRANS false) Z_j = L_jj^-1 (Y_j - sum_{k<j} L_jk Z_k) for j = 0, 1,
// ...; backward (TRANS true) X_j = L_jj^-T (Z_j - sum_{k>j} L_kj^T X_k) for
// j = nb - 1, ... 0. Each CTA takes a ticket (sync[0]) for its block, so it
// only waits for blocks whose CTAs have started: it adds the off-diagonal
// products as the blocks they need are published (sync[1 + k] set once X_k
// is written), the next tile's loads in flight meanwhile, and the chain from
// one block to the next is one tile, the diagonal inverse and a flag. (One
// launch per block and direction before: 626 launches, 15 ms at N = 20000.)
// Tiles go through shared memory as T[r][c], r the output row of the block,
// c the summed index, read with rows across the warp (padding TB + 1).
constexpr int SB = 256;                 // threads of chol_trsv: TB rows x 4 quarters of the columns
constexpr int TQ = SB / TB;             // the quarters
constexpr int TV = TB * TB / SB;        // a tile's values per thread
static_assert(SB % TB == 0, "chol_trsv: a thread keeps its memory row of the tile");
constexpr int TRSV_SMEM = (2 * TB * (TB + 1) + (4 + TQ * 4) * TB) * (int)sizeof(double);

// the tile whose memory (column-major, lda) starts at A, memory rows < nr and
// columns < nc valid (zeros past them), into registers
__device__ __forceinline__ void trsv_tile_load(const double *__restrict__ A, size_t lda, int nr, int nc, double pre[TV])
{
    // element threadIdx.x + i SB: memory row f (the same for every i), column s0 + TQ i
    const int f = threadIdx.x % TB, s0 = threadIdx.x / TB;
    const double *p = A + f + (size_t)s0 * lda;
    const size_t step = (size_t)TQ * lda;
#pragma unroll
    for (int i = 0; i < TV; i++) pre[i] = (f < nr && s0 + TQ * i < nc) ? p[i * step] : 0.0;
}
// ... into T: memory row f, column s is T[f][s] (forward: rows of L are the
// block's rows) or T[s][f] (backward: L^T)
template <bool TRANS>
__device__ __forceinline__ void trsv_tile_store(double (*T)[TB + 1], const double pre[TV])
{
    const int f = threadIdx.x % TB, s0 = threadIdx.x / TB;
#pragma unroll
    for (int i = 0; i < TV; i++) {
        if (TRANS) T[s0 + TQ * i][f] = pre[i];
        else T[f][s0 + TQ * i] = pre[i];
    }
}
// acc[q] += sum over this thread's columns c of T[r][c] v[q][c]
__device__ __forceinline__ void trsv_tile_mv(const double (*T)[TB + 1], const double (*v)[TB], double acc[4])
{
    const int r = threadIdx.x % TB, cq = threadIdx.x / TB;
#pragma unroll 4
    for (int c = cq; c < TB; c += TQ) {
        const double t = T[r][c];
#pragma unroll
        for (int q = 0; q < 4; q++) acc[q] += t * v[q][c];
    }
}
// the CTA's sums of acc over the quarters (part: scratch); thread q TB + r
// (q < 4) gets row r's sum for right-hand side q
__device__ __forceinline__ double trsv_reduce(const double acc[4], double (*part)[TB])
{
    const int r = threadIdx.x % TB, cq = threadIdx.x / TB;
#pragma unroll
    for (int q = 0; q < 4; q++) part[cq * 4 + q][r] = acc[q];
    __syncthreads();
    double s = 0.0;
    if (threadIdx.x < 4 * TB) {
        const int q = threadIdx.x / TB, rr = threadIdx.x % TB;
#pragma unroll
        for (int k = 0; k < TQ; k++) s += part[k * 4 + q][rr];
    }
    return s;
}

template <bool TRANS>
__global__ void __launch_bounds__(SB, 2) chol_trsv(const double *__restrict__ L, size_t ld, int N,
                                                   const double *__restrict__ Inv, const double *__restrict__ Y,
                                                   size_t ldy, double *X, size_t ldx, int nrhs, int *sync)
{
    extern __shared__ double trsv_sm[];
    double(*T)[TB + 1] = (double(*)[TB + 1])trsv_sm;
    double(*Ti)[TB + 1] = T + TB;
    double(*v)[TB] = (double(*)[TB])(trsv_sm + 2 * TB * (TB + 1));
    double(*part)[TB] = v + 4;
    __shared__ int ticket;
    const int tid = threadIdx.x, nb = (N + TB - 1) / TB;
    if (tid == 0) ticket = atomicAdd(&sync[0], 1);
    __syncthreads();
    const int j = TRANS ? nb - 1 - ticket : ticket, r0 = j * TB, bj = N - r0 < TB ? N - r0 : TB;
    volatile int *flag = sync + 1;
    double pre[TV], acc[4] = {0.0, 0.0, 0.0, 0.0};
    trsv_tile_load(Inv + (size_t)j * TB * TB, TB, TB, TB, pre); // padded with the identity
    trsv_tile_store<TRANS>(Ti, pre);
    // the off-diagonal blocks in the order they are published
    const int nk = TRANS ? nb - 1 - j : j;
    auto tile = [&](int k) {
        if (TRANS) trsv_tile_load(L + (size_t)k * TB + (size_t)r0 * ld, ld, N - k * TB, bj, pre);
        else trsv_tile_load(L + (size_t)r0 + (size_t)k * TB * ld, ld, bj, TB, pre);
    };
    if (nk > 0) tile(TRANS ? nb - 1 : 0);
    for (int i = 0; i < nk; i++) {
        const int k = TRANS ? nb - 1 - i : i;
        if (tid == 0) {
            while (flag[k] == 0) {
            }
            __threadfence();
        }
        __syncthreads(); // also: the previous block's products are done with T and v
        trsv_tile_store<TRANS>(T, pre);
        if (tid < 4 * TB) {
            const int q = tid / TB, c = tid % TB, row = k * TB + c;
            v[q][c] = (q < nrhs && row < N) ? __ldcg(X + (size_t)row + (size_t)q * ldx) : 0.0;
        }
        if (i + 1 < nk) tile(TRANS ? k - 1 : k + 1);
        __syncthreads();
        trsv_tile_mv(T, v, acc);
    }
    __syncthreads(); // every product is done with T and v
    const double s = trsv_reduce(acc, part);
    const int q = tid / TB, rr = tid % TB;
    if (tid < 4 * TB) v[q][rr] = (q < nrhs && rr < bj) ? Y[(size_t)(r0 + rr) + (size_t)q * ldy] - s : 0.0;
    __syncthreads();
    double x[4] = {0.0, 0.0, 0.0, 0.0};
    trsv_tile_mv(Ti, v, x);
    __syncthreads(); // the first sums are read from part
    const double xj = trsv_reduce(x, part);
    if (tid < 4 * TB && q < nrhs && rr < bj) {
        X[(size_t)(r0 + rr) + (size_t)q * ldx] = xj;
        __threadfence();
    }
    __syncthreads();
    if (tid == 0) flag[j] = 1;
}

} // namespace

extern "C" size_t gt_tps_cuda_chol_solve_work(size_t N, int nrhs)
{
    const size_t nb = (N + TB - 1) / TB;
    /* Z, the diagonal blocks' inverses, then chol_trsv's tickets and flags
     * (2 nb + 2 ints) */
    return N * (size_t)nrhs + nb * TB * TB + (2 * nb + 3) / 2;
}

extern "C" gt_status gt_tps_cuda_chol_solve(const double *L, size_t ld, size_t N, double *B, size_t ldb, int nrhs,
                                            double *work)
{
    if (nrhs < 1 || nrhs > 4) return gt_fail(GT_ERR_GPU, "Cholesky solve: %d right-hand sides (1 to 4)", nrhs);
    if (N == 0) return GT_OK;
    const int n = (int)N, nb = (n + TB - 1) / TB;
    double *Z = work, *Inv = work + N * (size_t)nrhs;
    int *sync = (int *)(Inv + (size_t)nb * TB * TB);
    static bool attr;
    if (!attr) {
        GT_CU(cudaFuncSetAttribute(chol_inv_diag, cudaFuncAttributeMaxDynamicSharedMemorySize, INV_SMEM));
        GT_CU(cudaFuncSetAttribute(chol_trsv<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, TRSV_SMEM));
        GT_CU(cudaFuncSetAttribute(chol_trsv<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, TRSV_SMEM));
        attr = true;
    }
    GT_CU(cudaMemsetAsync(sync, 0, (2 * (size_t)nb + 2) * sizeof(int), 0));
    chol_inv_diag<<<nb, TB, INV_SMEM>>>(L, ld, n, Inv);
    GT_CU_LAUNCH("chol_inv_diag");
    chol_trsv<false><<<nb, SB, TRSV_SMEM>>>(L, ld, n, Inv, B, ldb, Z, N, nrhs, sync);
    GT_CU_LAUNCH("chol_trsv");
    chol_trsv<true><<<nb, SB, TRSV_SMEM>>>(L, ld, n, Inv, Z, N, B, ldb, nrhs, sync + nb + 1);
    GT_CU_LAUNCH("chol_trsv");
    return GT_OK;
}
