// AMG set-up on the GPU, stage 4 (twin of lib/sparse/amg_galerkin.c): the
// sparse product C = A B by hashing, a warp per row of C, in two passes:
// count (the distinct columns of the row), scan, fill (values summed in the
// hash table with shared-memory atomics, then the table compacted in place
// and each entry written at its rank, so rows come out sorted). A row's
// table is sized to it (twice its products when counting, twice its entries
// when filling, 32 to 512 slots): clearing and compacting 512 slots for the
// ~40 products of a fine row of A P cost more than the products. The
// tables live in shared memory; a row that does not fit (more than 512
// distinct columns) is flagged and redone with a table in global memory
// sized from its product count, in batches. The Galerkin operator is
// R (A P), as on the CPU; values agree up to the order of the sums.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "kernels/common/cu_prim.h"
#include "kernels/sparse/amg_cu_impl.cuh"

namespace {

constexpr int WPB = 4;   // warps per block
constexpr int HS = 512;  // shared slots per warp
constexpr size_t GLOBAL_BUDGET = (size_t)256 << 20;

struct mat {
    const int64_t *ptr;
    const int32_t *col;
    const double *val;
};

// The products of row i of A B from A's entries first, first + step, ...
__device__ int64_t products(int64_t i, mat a, mat b, int first, int step)
{
    int64_t s = 0;
    for (int64_t p = a.ptr[i] + first; p < a.ptr[i + 1]; p += step) s += b.ptr[a.col[p] + 1] - b.ptr[a.col[p]];
    return s;
}

// All of them, summed across the warp (in all lanes).
__device__ int64_t row_products(int64_t i, mat a, mat b)
{
    int64_t ub = products(i, a, b, threadIdx.x & 31, 32);
    for (int o = 16; o > 0; o /= 2) ub += __shfl_xor_sync(0xffffffffu, ub, o);
    return ub;
}

// A table of at least twice `need` slots (a power of two, 32 to cap).
__device__ int table_size(int64_t need, int cap)
{
    int c = 32;
    while (c < cap && c < 2 * need) c *= 2;
    return c;
}

// One row of C = A B by a warp: insert the products into the table
// (keys -1 = empty). The row's products are dealt out flat: 32 entries of
// A's row at a time, their B-row lengths scanned across the warp, and lane
// t takes product t, t + 32, ... of the chunk, so a warp stays busy however
// short B's rows are, and neighbouring lanes mostly read one B row (distinct
// keys: few lanes collide on a slot). Returns false (in all lanes) when the
// table filled up.
template <bool FILL>
__device__ bool row_hash(int64_t i, mat a, mat b, int32_t *keys, double *vals, int cap, int *count)
{
    const unsigned full = 0xffffffffu;
    int lane = threadIdx.x & 31;
    for (int s = lane; s < cap; s += 32) {
        keys[s] = -1;
        if (FILL) vals[s] = 0;
    }
    __syncwarp();
    bool fail = false;
    int cnt = 0;
    for (int64_t p0 = a.ptr[i], e = a.ptr[i + 1]; p0 < e && !fail; p0 += 32) {
        int64_t p = p0 + lane, bs = 0;
        int len = 0;
        double av = 0;
        if (p < e) {
            int32_t k = a.col[p];
            bs = b.ptr[k], len = (int)(b.ptr[k + 1] - bs);
            if (FILL) av = a.val[p];
        }
        int incl = len; // inclusive scan of the lengths
        for (int o = 1; o < 32; o *= 2) {
            int v = __shfl_up_sync(full, incl, o);
            if (lane >= o) incl += v;
        }
        int total = __shfl_sync(full, incl, 31);
        for (int base = 0; base < total && !fail; base += 32) {
            int t = base + lane, j = 0; // j: the entry holding product t (lanes whose scan is <= t)
            for (int s = 16; s > 0; s /= 2) {
                int v = __shfl_sync(full, incl, j + s - 1);
                if (v <= t) j += s;
            }
            int excl = __shfl_sync(full, incl - len, j);
            int64_t q = __shfl_sync(full, bs, j) + (t - excl);
            double f = __shfl_sync(full, av, j);
            if (t < total) {
                int32_t c = b.col[q];
                uint32_t h = gt_amg_hash((uint32_t)c) & (uint32_t)(cap - 1);
                int u = 0;
                for (; u < cap; u++) {
                    int32_t old = atomicCAS(keys + h, -1, c);
                    if (old == -1 || old == c) {
                        cnt += old == -1;
                        if (FILL) atomicAdd(vals + h, f * b.val[q]);
                        break;
                    }
                    h = (h + 1) & (uint32_t)(cap - 1);
                }
                fail = u == cap;
            }
            fail = __any_sync(full, fail);
        }
    }
    for (int o = 16; o > 0; o /= 2) cnt += __shfl_xor_sync(full, cnt, o);
    *count = cnt;
    __syncwarp();
    return !fail;
}

// Compact the table in place (positions never pass the slot read) and write
// each entry at its rank in the row.
__device__ void row_write(int32_t *keys, double *vals, int cap, int32_t *ccol, double *cval)
{
    int lane = threadIdx.x & 31, n = 0;
    for (int base = 0; base < cap; base += 32) {
        int s = base + lane;
        int32_t k = s < cap ? keys[s] : -1;
        double v = s < cap ? vals[s] : 0;
        unsigned m = __ballot_sync(0xffffffffu, k >= 0);
        __syncwarp();
        if (k >= 0) {
            int pos = n + __popc(m & ((1u << lane) - 1u));
            keys[pos] = k, vals[pos] = v;
        }
        n += __popc(m);
        __syncwarp();
    }
    for (int e = lane; e < n; e += 32) {
        int32_t k = keys[e];
        int r = 0;
        for (int f = 0; f < n; f++) r += keys[f] < k;
        ccol[r] = k, cval[r] = vals[e];
    }
    __syncwarp();
}

template <bool FILL>
__global__ void k_spgemm_shared(int64_t n, mat a, mat b, int64_t *__restrict__ cptr, int32_t *__restrict__ ccol,
                                double *__restrict__ cval, uint8_t *__restrict__ over)
{
    __shared__ int32_t keys[WPB][HS];
    __shared__ double vals[WPB][FILL ? HS : 1];
    int w = threadIdx.x >> 5;
    int32_t *keys_w = keys[w];
    double *vals_w = FILL ? vals[w] : nullptr;
    for (int64_t i = (int64_t)blockIdx.x * WPB + w; i < n; i += (int64_t)gridDim.x * WPB) {
        if (FILL && over[i]) continue;
        int cnt = 0;
        // the table: twice the products (count) or the entries (fill), at most HS
        int cap = table_size(FILL ? cptr[i + 1] - cptr[i] : row_products(i, a, b), HS);
        bool ok = row_hash<FILL>(i, a, b, keys_w, vals_w, cap, &cnt);
        if (!FILL) {
            if ((threadIdx.x & 31) == 0) cptr[i + 1] = ok ? cnt : 0, over[i] = !ok;
        } else {
            row_write(keys_w, vals_w, cap, ccol + cptr[i], cval + cptr[i]);
        }
    }
}

// The rows rows[0..nr) with a table of cap slots each in global memory.
template <bool FILL>
__global__ void k_spgemm_global(int64_t nr, const uint32_t *__restrict__ rows, mat a, mat b, int cap, int32_t *gkeys,
                                double *gvals, int64_t *__restrict__ cptr, int32_t *__restrict__ ccol,
                                double *__restrict__ cval)
{
    int w = threadIdx.x >> 5;
    for (int64_t r = (int64_t)blockIdx.x * WPB + w; r < nr; r += (int64_t)gridDim.x * WPB) {
        int64_t i = rows[r];
        int32_t *keys = gkeys + (size_t)r * cap;
        double *vals = FILL ? gvals + (size_t)r * cap : nullptr;
        int cnt = 0;
        row_hash<FILL>(i, a, b, keys, vals, cap, &cnt); // cap >= 2 x the products: never full
        if (!FILL) {
            if ((threadIdx.x & 31) == 0) cptr[i + 1] = cnt;
        } else {
            row_write(keys, vals, cap, ccol + cptr[i], cval + cptr[i]);
        }
    }
}

__global__ void k_products(int64_t nr, const uint32_t *__restrict__ rows, mat a, mat b, int64_t *__restrict__ ub)
{
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < nr; r += (int64_t)gridDim.x * blockDim.x) {
        ub[r] = products(rows[r], a, b, 0, 1);
    }
}

// The overflow rows, both passes' global part: batches of rows sharing one
// table size (the largest of the batch).
template <bool FILL>
gt_status overflow_rows(const std::vector<uint32_t> &rows, const std::vector<int64_t> &ub, int64_t bcols, mat a, mat b,
                        amg_dcsr *c, cudaStream_t st)
{
    size_t nr = rows.size();
    for (size_t r0 = 0; r0 < nr;) {
        int64_t cap = 1;
        size_t r1 = r0;
        for (; r1 < nr; r1++) {
            int64_t need = 2 * std::min(std::max<int64_t>(ub[r1], 1), bcols);
            int64_t c2 = std::max(cap, (int64_t)1 << (64 - __builtin_clzll((unsigned long long)need)));
            if (r1 > r0 && (size_t)c2 * (r1 - r0 + 1) * 12 > GLOBAL_BUDGET) break;
            cap = c2;
        }
        if (cap > (1 << 30)) return gt_fail(GT_ERR_RUNTIME, "amg: a Galerkin row too long for the GPU product");
        size_t nb = r1 - r0;
        uint32_t *drows = nullptr;
        int32_t *gkeys = nullptr;
        double *gvals = nullptr;
        gt_status s = gt_cu_malloc((void **)&drows, nb * 4, "amg spgemm rows");
        if (s == GT_OK) s = gt_cu_malloc((void **)&gkeys, nb * (size_t)cap * 4, "amg spgemm table");
        if (s == GT_OK && FILL) s = gt_cu_malloc((void **)&gvals, nb * (size_t)cap * 8, "amg spgemm table");
        if (s == GT_OK) {
            cudaMemcpyAsync(drows, rows.data() + r0, nb * 4, cudaMemcpyHostToDevice, st);
            k_spgemm_global<FILL><<<gt_grid(nb, WPB), WPB * 32, 0, st>>>((int64_t)nb, drows, a, b, (int)cap, gkeys, gvals,
                                                                        c->ptr, c->col, c->val);
            cudaError_t e = cudaGetLastError();
            if (e == cudaSuccess) e = cudaStreamSynchronize(st);
            if (e != cudaSuccess) s = gt_cu_status_from(e, "k_spgemm_global", __FILE__, __LINE__);
        }
        gt_cu_free(drows), gt_cu_free(gkeys), gt_cu_free(gvals);
        GT_TRY(s);
        r0 = r1;
    }
    return GT_OK;
}

} // namespace

gt_status amg_cu_spgemm(const amg_dcsr *A, const amg_dcsr *Bm, amg_dcsr *c, cudaStream_t st)
{
    int64_t n = A->n;
    mat a{A->ptr, A->col, A->val}, b{Bm->ptr, Bm->col, Bm->val};
    *c = amg_dcsr{};
    c->n = n, c->m = Bm->m;
    uint8_t *over = nullptr;
    uint32_t *orows = nullptr;
    int64_t *ub = nullptr;
    std::vector<uint32_t> hrows;
    std::vector<int64_t> hub;
    gt_status s = gt_cu_malloc((void **)&c->ptr, (size_t)(n + 1) * 8, "amg galerkin rows");
    if (s == GT_OK) s = gt_cu_malloc((void **)&over, (size_t)(n ? n : 1), "amg spgemm flags");
    if (s == GT_OK) s = gt_cu_malloc((void **)&orows, (size_t)(n ? n : 1) * 4, "amg spgemm rows");
    unsigned g = gt_grid((size_t)n, WPB, 1u << 20);
    if (s == GT_OK) {
        k_spgemm_shared<false><<<g, WPB * 32, 0, st>>>(n, a, b, c->ptr, nullptr, nullptr, over);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) s = gt_cu_status_from(e, "k_spgemm_shared", __FILE__, __LINE__);
    }
    size_t nover = 0;
    if (s == GT_OK) s = gt_cu_select_flagged_index(over, orows, (size_t)n, &nover, nullptr, st);
    if (s == GT_OK && nover > 0) {
        hrows.resize(nover), hub.resize(nover);
        s = gt_cu_malloc((void **)&ub, nover * 8, "amg spgemm products");
        if (s == GT_OK) {
            k_products<<<gt_grid(nover, 256), 256, 0, st>>>((int64_t)nover, orows, a, b, ub);
            cudaMemcpyAsync(hrows.data(), orows, nover * 4, cudaMemcpyDeviceToHost, st);
            cudaMemcpyAsync(hub.data(), ub, nover * 8, cudaMemcpyDeviceToHost, st);
            cudaError_t e = cudaStreamSynchronize(st);
            if (e != cudaSuccess) s = gt_cu_status_from(e, "k_products", __FILE__, __LINE__);
        }
        if (s == GT_OK) s = overflow_rows<false>(hrows, hub, Bm->m, a, b, c, st);
    }
    if (s == GT_OK) s = amg_rows_to_ptr(c->ptr, n, st, &c->nnz);
    if (s == GT_OK) s = gt_cu_malloc((void **)&c->col, (size_t)(c->nnz ? c->nnz : 1) * 4, "amg galerkin columns");
    if (s == GT_OK) s = gt_cu_malloc((void **)&c->val, (size_t)(c->nnz ? c->nnz : 1) * 8, "amg galerkin values");
    if (s == GT_OK) {
        k_spgemm_shared<true><<<g, WPB * 32, 0, st>>>(n, a, b, c->ptr, c->col, c->val, over);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) s = gt_cu_status_from(e, "k_spgemm_shared", __FILE__, __LINE__);
    }
    if (s == GT_OK && nover > 0) s = overflow_rows<true>(hrows, hub, Bm->m, a, b, c, st);
    if (s == GT_OK) {
        cudaError_t e = cudaStreamSynchronize(st);
        if (e != cudaSuccess) s = gt_cu_status_from(e, "amg spgemm", __FILE__, __LINE__);
    }
    gt_cu_free(over), gt_cu_free(orows), gt_cu_free(ub);
    if (s != GT_OK) amg_dcsr_free(c);
    return s;
}
