// Device matrix: upload of CSR and conversion CSR -> COO/ELL/DIA/HYB on the GPU.
#include <cuda_runtime.h>

#include <stdlib.h>
#include <string.h>
#include <vector>

#include "kernels/common/cu_check.h"
#include "kernels/common/cu_prim.h"
#include "common/gpu_runtime.h"
#include "kernels/sparse/csr_row.cuh"
#include "kernels/sparse/sparse_cu.h"

namespace {

constexpr int BLOCK = 256;
constexpr int MERGE_ITEMS = 8; // must match spmv.cu

__global__ void k_to_f32(size_t n, const double *in, float *out)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (float)in[i];
}

__global__ void k_row_of_nnz(int64_t n, const int64_t *ptr, int32_t *row)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int64_t p = ptr[i]; p < ptr[i + 1]; p++) row[p] = (int32_t)i;
}

// Row length statistics: max, and the histogram of lengths clamped at hmax.
__global__ void k_row_stats(int64_t n, const int64_t *ptr, unsigned long long *maxlen, unsigned int *hist,
                            int hmax)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long len = 0;
    if (i < n) {
        len = (unsigned long long)(ptr[i + 1] - ptr[i]);
        atomicAdd(hist + (len > (unsigned long long)hmax ? hmax : len), 1u);
    }
    for (int o = 16; o > 0; o /= 2) {
        unsigned long long other = __shfl_down_sync(0xffffffffu, len, o);
        len = other > len ? other : len;
    }
    if ((threadIdx.x & 31) == 0) atomicMax(maxlen, len);
}

template <typename T>
__global__ void k_fill_ell(int64_t n, int64_t width, const int64_t *ptr, const int32_t *col, const T *val,
                           int32_t *ecol, T *eval)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int64_t p = ptr[i], e = ptr[i + 1];
    for (int64_t k = 0; k < width; k++, p++) {
        size_t q = (size_t)k * (size_t)n + (size_t)i;
        bool in = p < e;
        ecol[q] = in ? col[p] : -1;
        eval[q] = in ? val[p] : (T)0;
    }
}

__global__ void k_hyb_counts(int64_t n, int64_t width, const int64_t *ptr, uint64_t *cnt)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int64_t len = ptr[i + 1] - ptr[i];
    cnt[i] = (uint64_t)(len > width ? len - width : 0);
}

template <typename T>
__global__ void k_hyb_coo(int64_t n, int64_t width, const int64_t *ptr, const int32_t *col, const T *val,
                          const uint64_t *start, int32_t *crow, int32_t *ccol, T *cval)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint64_t q = start[i];
    for (int64_t p = ptr[i] + width; p < ptr[i + 1]; p++, q++) crow[q] = (int32_t)i, ccol[q] = col[p], cval[q] = val[p];
}

__global__ void k_dia_flags(int64_t n, const int64_t *ptr, const int32_t *col, uint8_t *flags)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int64_t p = ptr[i]; p < ptr[i + 1]; p++) flags[(int64_t)col[p] - i + n - 1] = 1; // same value: benign
}

__global__ void k_dia_index(int64_t nd, int64_t n, const uint32_t *slots, int32_t *off, int32_t *slot_to_diag)
{
    int64_t d = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (d >= nd) return;
    off[d] = (int32_t)((int64_t)slots[d] - (n - 1));
    slot_to_diag[slots[d]] = (int32_t)d;
}

template <typename T>
__global__ void k_fill_dia(int64_t n, const int64_t *ptr, const int32_t *col, const T *val,
                           const int32_t *slot_to_diag, T *dval)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int64_t p = ptr[i]; p < ptr[i + 1]; p++) {
        int32_t d = slot_to_diag[(int64_t)col[p] - i + n - 1];
        dval[(size_t)d * (size_t)n + (size_t)i] = val[p];
    }
}

gt_status dmalloc(void **p, size_t bytes, const char *what)
{
    return gt_cu_malloc(p, bytes ? bytes : 8, what);
}

unsigned grid(int64_t n)
{
    return gt_grid((size_t)(n > 0 ? n : 1), BLOCK, 0x7fffffffu);
}

template <typename T>
gt_status convert(gt_spd *d, gt_sp_format f, int64_t hyb_width, size_t max_dia_bytes)
{
    int64_t n = d->nrows;
    const T *val = (const T *)d->val;
    unsigned g = grid(n);
    switch (f) {
    case GT_SP_CSR: return GT_OK;
    case GT_SP_COO:
        if (d->has_coo && !d->hyb) return GT_OK;
        if (d->has_coo || d->has_ell) return gt_fail(GT_ERR_GPU, "device matrix already holds another format");
        d->cnnz = d->nnz;
        GT_TRY(dmalloc((void **)&d->crow, (size_t)d->nnz * 4, "COO rows"));
        GT_TRY(dmalloc((void **)&d->ccol, (size_t)d->nnz * 4, "COO cols"));
        GT_TRY(dmalloc(&d->cval, (size_t)d->nnz * sizeof(T), "COO values"));
        if (n) k_row_of_nnz<<<g, BLOCK>>>(n, d->ptr, d->crow);
        GT_CU_LAUNCH("coo rows");
        GT_CU(cudaMemcpy(d->ccol, d->col, (size_t)d->nnz * 4, cudaMemcpyDeviceToDevice));
        GT_CU(cudaMemcpy(d->cval, d->val, (size_t)d->nnz * sizeof(T), cudaMemcpyDeviceToDevice));
        d->has_coo = 1;
        return GT_OK;
    case GT_SP_ELL:
    case GT_SP_HYB: {
        bool hyb = f == GT_SP_HYB;
        if (d->has_ell && (d->hyb != 0) == hyb) return GT_OK;
        if (d->has_ell || d->has_coo) return gt_fail(GT_ERR_GPU, "device matrix already holds another format");
        // row statistics on the device
        const int hmax = 4096;
        unsigned long long *dmax;
        unsigned int *dhist;
        GT_TRY(dmalloc((void **)&dmax, sizeof *dmax, "row stats"));
        gt_status s = dmalloc((void **)&dhist, (hmax + 1) * sizeof *dhist, "row hist");
        if (s != GT_OK) {
            gt_cu_free(dmax);
            return s;
        }
        unsigned long long maxlen = 0;
        std::vector<unsigned int> hist(hmax + 1);
        cudaError_t e = cudaMemset(dmax, 0, sizeof *dmax);
        if (e == cudaSuccess) e = cudaMemset(dhist, 0, (hmax + 1) * sizeof *dhist);
        if (e == cudaSuccess && n) k_row_stats<<<g, BLOCK>>>(n, d->ptr, dmax, dhist, hmax);
        if (e == cudaSuccess) e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaMemcpy(&maxlen, dmax, sizeof maxlen, cudaMemcpyDeviceToHost);
        if (e == cudaSuccess) e = cudaMemcpy(hist.data(), dhist, (hmax + 1) * sizeof *dhist, cudaMemcpyDeviceToHost);
        gt_cu_free(dmax), gt_cu_free(dhist);
        GT_CU(e);
        int64_t width = (int64_t)maxlen;
        if (hyb) {
            if (hyb_width >= 0) width = hyb_width;
            else {
                // Bell & Garland: largest K with at least max(4096, n/3) rows of >= K entries
                int64_t need = n / 3 > 4096 ? n / 3 : 4096;
                if (need > n) need = n;
                int64_t atleast = 0;
                width = 0;
                for (int64_t k = hmax; k >= 1; k--) {
                    atleast += hist[k];
                    if (atleast >= need) {
                        width = k;
                        break;
                    }
                }
            }
            if (width > (int64_t)maxlen) width = (int64_t)maxlen;
        }
        d->ewidth = width;
        size_t cells = (size_t)width * (size_t)n;
        GT_TRY(dmalloc((void **)&d->ecol, cells * 4, "ELL cols"));
        GT_TRY(dmalloc(&d->eval, cells * sizeof(T), "ELL values"));
        if (n) k_fill_ell<T><<<g, BLOCK>>>(n, width, d->ptr, d->col, val, d->ecol, (T *)d->eval);
        GT_CU_LAUNCH("ell fill");
        d->has_ell = 1;
        d->hyb = hyb;
        if (!hyb) return GT_OK;
        uint64_t *cnt;
        GT_TRY(dmalloc((void **)&cnt, ((size_t)n + 1) * 8, "HYB counts"));
        if (n) k_hyb_counts<<<g, BLOCK>>>(n, width, d->ptr, cnt);
        e = cudaGetLastError();
        if (e != cudaSuccess) {
            gt_cu_free(cnt);
            GT_CU(e);
        }
        GT_CU(cudaMemset(cnt + n, 0, 8));
        s = gt_cu_scan_exclusive_u64(cnt, cnt, (size_t)n + 1, NULL, NULL);
        uint64_t total = 0;
        if (s == GT_OK) {
            e = cudaMemcpy(&total, cnt + n, 8, cudaMemcpyDeviceToHost);
            if (e != cudaSuccess) s = gt_cu_status_from(e, "cudaMemcpy", __FILE__, __LINE__);
        }
        if (s == GT_OK) {
            d->cnnz = (int64_t)total;
            s = dmalloc((void **)&d->crow, total * 4, "HYB COO rows");
            if (s == GT_OK) s = dmalloc((void **)&d->ccol, total * 4, "HYB COO cols");
            if (s == GT_OK) s = dmalloc(&d->cval, total * sizeof(T), "HYB COO values");
            if (s == GT_OK && n) {
                k_hyb_coo<T><<<g, BLOCK>>>(n, width, d->ptr, d->col, val, cnt, d->crow, d->ccol, (T *)d->cval);
                e = cudaGetLastError();
                if (e != cudaSuccess) s = gt_cu_status_from(e, "k_hyb_coo", __FILE__, __LINE__);
            }
        }
        if (s == GT_OK) {
            e = cudaDeviceSynchronize();
            if (e != cudaSuccess) s = gt_cu_status_from(e, "hyb", __FILE__, __LINE__);
        }
        gt_cu_free(cnt);
        d->has_coo = 1;
        return s;
    }
    case GT_SP_DIA: {
        if (d->has_dia) return GT_OK;
        if (n != d->ncols) return gt_fail(GT_ERR_RUNTIME, "DIA format needs a square matrix here");
        int64_t span = 2 * n - 1 > 0 ? 2 * n - 1 : 1;
        uint8_t *flags = nullptr;
        uint32_t *slots = nullptr;
        int32_t *map = nullptr;
        GT_TRY(dmalloc((void **)&flags, (size_t)span, "DIA flags"));
        GT_CU(cudaMemset(flags, 0, (size_t)span));
        if (n) k_dia_flags<<<g, BLOCK>>>(n, d->ptr, d->col, flags);
        GT_CU_LAUNCH("dia flags");
        gt_status s = dmalloc((void **)&slots, (size_t)span * 4, "DIA slots");
        size_t nd = 0;
        if (s == GT_OK) s = gt_cu_select_flagged_index(flags, slots, (size_t)span, &nd, NULL, NULL);
        gt_cu_free(flags);
        if (s != GT_OK) {
            if (slots) gt_cu_free(slots);
            return s;
        }
        size_t cells = nd * (size_t)n, bytes = cells * sizeof(T) + nd * 4;
        if (max_dia_bytes && bytes > max_dia_bytes) {
            gt_cu_free(slots);
            return gt_fail(GT_ERR_RUNTIME, "DIA format would need %zu diagonals x %lld rows (%zu MB): too large",
                           nd, (long long)n, bytes >> 20);
        }
        d->ndiag = (int64_t)nd;
        s = dmalloc((void **)&map, (size_t)span * 4, "DIA map");
        if (s == GT_OK) s = dmalloc((void **)&d->doff, nd * 4, "DIA offsets");
        if (s == GT_OK) s = dmalloc(&d->dval, cells * sizeof(T), "DIA values");
        cudaError_t e = cudaSuccess;
        if (s == GT_OK) e = cudaMemset(d->dval, 0, cells * sizeof(T));
        if (s == GT_OK && e == cudaSuccess && nd) {
            k_dia_index<<<grid((int64_t)nd), BLOCK>>>((int64_t)nd, n, slots, d->doff, map);
            k_fill_dia<T><<<g, BLOCK>>>(n, d->ptr, d->col, val, map, (T *)d->dval);
            e = cudaGetLastError();
        }
        if (s == GT_OK && e == cudaSuccess) e = cudaDeviceSynchronize();
        if (s == GT_OK && e != cudaSuccess) s = gt_cu_status_from(e, "dia fill", __FILE__, __LINE__);
        gt_cu_free(slots);
        if (map) gt_cu_free(map);
        if (s == GT_OK) d->has_dia = 1;
        return s;
    }
    default:
        return gt_fail(GT_ERR_GPU, "unknown format %d", (int)f);
    }
}

} // namespace

namespace {
// the CSR arrays page-locked for their copy (gt_cu_copy_locked: ~55 GB/s
// against ~7 GB/s from pageable memory)
gt_status upload(const gt_csr *a, gt_spd *d)
{
    d->nrows = a->nrows, d->ncols = a->ncols, d->nnz = a->nnz;
    size_t z = (size_t)a->nnz, n = (size_t)a->nrows;
    GT_TRY(dmalloc((void **)&d->ptr, (n + 1) * 8, "CSR ptr"));
    GT_TRY(dmalloc((void **)&d->col, z * 4, "CSR cols"));
    GT_TRY(dmalloc(&d->val, z * (size_t)d->prec, "CSR values"));
    GT_TRY(gt_cu_copy_locked(d->ptr, a->ptr, (n + 1) * 8, true, nullptr));
    if (z) GT_TRY(gt_cu_copy_locked(d->col, a->col, z * 4, true, nullptr));
    if (d->prec == 8) {
        if (z) GT_TRY(gt_cu_copy_locked(d->val, a->val, z * 8, true, nullptr));
    } else if (z) {
        double *tmp;
        GT_TRY(dmalloc((void **)&tmp, z * 8, "upload staging"));
        gt_status hs = gt_cu_copy_locked(tmp, a->val, z * 8, true, nullptr);
        if (hs != GT_OK) {
            gt_cu_free(tmp);
            return hs;
        }
        k_to_f32<<<gt_grid(z, BLOCK, 0x7fffffffu), BLOCK>>>(z, tmp, (float *)d->val);
        cudaError_t e = cudaDeviceSynchronize();
        gt_cu_free(tmp);
        GT_CU(e);
    }
    // subwarp width for CSR vector: about two rounds of entries per row (csr_row.cuh)
    double mean = n ? (double)z / (double)n : 0;
    int v = gt_csr_row::csr_sub_width(mean);
    d->csr_vec_width = v;
    // merge-path carries
    d->merge_threads = (int64_t)((n + z + MERGE_ITEMS - 1) / MERGE_ITEMS);
    if (d->merge_threads < 1) d->merge_threads = 1;
    GT_TRY(dmalloc((void **)&d->carry_row, (size_t)d->merge_threads * 8, "merge carries"));
    GT_TRY(dmalloc(&d->carry_val, (size_t)d->merge_threads * (size_t)d->prec, "merge carries"));
    return GT_OK;
}
} // namespace

extern "C" gt_status gt_cu_spd_upload(const gt_csr *a, int prec, gt_spd *d)
{
    memset(d, 0, sizeof *d);
    d->prec = prec == 4 ? 4 : 8;
    gt_status s = upload(a, d);
    if (s != GT_OK) gt_cu_spd_free(d); // callers own d only on success
    return s;
}

extern "C" gt_status gt_cu_spd_convert(gt_spd *d, gt_sp_format f, int64_t hyb_width, size_t max_dia_bytes)
{
    if (d->prec == 4) return convert<float>(d, f, hyb_width, max_dia_bytes);
    return convert<double>(d, f, hyb_width, max_dia_bytes);
}

extern "C" void gt_cu_spd_free(gt_spd *d)
{
    void *ps[] = {d->ptr, d->col, d->val, d->crow, d->ccol, d->cval, d->ecol, d->eval,
                  d->doff, d->dval, d->carry_row, d->carry_val};
    for (size_t k = 0; k < sizeof ps / sizeof *ps; k++)
        if (ps[k]) gt_cu_free(ps[k]);
    memset(d, 0, sizeof *d);
}

namespace {
gt_status down_vals(const gt_spd *d, const void *src, size_t n, double *dst)
{
    if (n == 0) return GT_OK;
    if (d->prec == 8) {
        GT_CU(cudaMemcpy(dst, src, n * 8, cudaMemcpyDeviceToHost));
        return GT_OK;
    }
    std::vector<float> t(n);
    GT_CU(cudaMemcpy(t.data(), src, n * 4, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++) dst[i] = t[i];
    return GT_OK;
}
void *hcalloc(size_t n, size_t s)
{
    return calloc(n ? n : 1, s);
}
} // namespace

extern "C" gt_status gt_cu_spd_download(const gt_spd *d, gt_sp_format f, gt_coo *coo, gt_ell *ell, gt_dia *dia,
                                        gt_hyb *hyb)
{
    GT_CU(cudaDeviceSynchronize());
    size_t n = (size_t)d->nrows;
    if ((f == GT_SP_ELL || f == GT_SP_HYB) && d->has_ell) {
        gt_ell *e = f == GT_SP_ELL ? ell : &hyb->ell;
        size_t cells = (size_t)d->ewidth * n;
        e->nrows = d->nrows, e->ncols = d->ncols, e->width = d->ewidth;
        e->col = (int32_t *)hcalloc(cells, 4), e->val = (double *)hcalloc(cells, 8);
        if (!e->col || !e->val) return gt_fail(GT_ERR_RUNTIME, "out of memory");
        if (cells) GT_CU(cudaMemcpy(e->col, d->ecol, cells * 4, cudaMemcpyDeviceToHost));
        GT_TRY(down_vals(d, d->eval, cells, e->val));
    }
    if ((f == GT_SP_COO || f == GT_SP_HYB) && d->has_coo) {
        gt_coo *c = f == GT_SP_COO ? coo : &hyb->coo;
        size_t z = (size_t)d->cnnz;
        c->nrows = d->nrows, c->ncols = d->ncols, c->nnz = d->cnnz;
        c->row = (int32_t *)hcalloc(z, 4), c->col = (int32_t *)hcalloc(z, 4), c->val = (double *)hcalloc(z, 8);
        if (!c->row || !c->col || !c->val) return gt_fail(GT_ERR_RUNTIME, "out of memory");
        if (z) {
            GT_CU(cudaMemcpy(c->row, d->crow, z * 4, cudaMemcpyDeviceToHost));
            GT_CU(cudaMemcpy(c->col, d->ccol, z * 4, cudaMemcpyDeviceToHost));
        }
        GT_TRY(down_vals(d, d->cval, z, c->val));
    }
    if (f == GT_SP_DIA && d->has_dia) {
        size_t cells = (size_t)d->ndiag * n;
        dia->nrows = d->nrows, dia->ncols = d->ncols, dia->ndiag = d->ndiag;
        dia->offsets = (int32_t *)hcalloc((size_t)d->ndiag, 4), dia->val = (double *)hcalloc(cells, 8);
        if (!dia->offsets || !dia->val) return gt_fail(GT_ERR_RUNTIME, "out of memory");
        if (d->ndiag) GT_CU(cudaMemcpy(dia->offsets, d->doff, (size_t)d->ndiag * 4, cudaMemcpyDeviceToHost));
        GT_TRY(down_vals(d, d->dval, cells, dia->val));
    }
    return GT_OK;
}
