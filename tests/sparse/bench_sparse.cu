// Benchmark executable (not a test): our SpMV kernels and CG against the
// cuSPARSE peer in the same run.
//   bench_sparse lap7 100 | lap27 100 | tet 74 | mtx FILE   [--reps N] [--cg] [--single]
//                [--rcm] [--fmt csr|ell|dia]
// tet N: the jittered, randomly numbered tet-mesh Laplacian (N^3 rows,
// gt_tetmesh_laplacian). --rcm: our kernels and solvers run on the matrix in
// reverse Cuthill-McKee order (time printed), cuSPARSE on the given order.
// --fmt: the format of our CG (default the automatic choice).
// Prints: measured device copy bandwidth; per kernel ms, bytes, GB/s, % of
// copy, GFLOP/s; cusparseSpMV CSR (int32, ALG default) the same; with --cg
// ms per iteration of our CG (DIA or auto format; the fused one-kernel and
// the two-kernel variants) and of a plain cuSPARSE+cuBLAS CG to the same
// tolerance, with iteration counts and the bytes each variant must move.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

#include "common/timer.h"
#include "sparse/laplace.h"
#include "sparse/reorder.h"
#include "sparse/sparse.h"
#include "sparse/sparse_gpu.h"
#include "kernels/sparse/sparse_cu.h"
extern "C" bool bench_read_mtx(const char *path, gt_csr *out); // bench_io.c

#define CK(x)                                                                                \
    do {                                                                                     \
        int e_ = (int)(x);                                                                   \
        if (e_) {                                                                            \
            fprintf(stderr, "bench_sparse: %s failed (%d) at line %d\n", #x, e_, __LINE__); \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

static double copy_bandwidth()
{
    size_t bytes = (size_t)1 << 30;
    void *a, *b;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemset(a, 1, bytes));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    CK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
    cudaEventRecord(e0);
    for (int r = 0; r < 10; r++) CK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    cudaFree(a), cudaFree(b);
    return 2.0 * (double)bytes * 10 / (ms * 1e6); // read + write
}

struct Cusp {
    cusparseHandle_t h;
    cusparseSpMatDescr_t A;
    int *ptr, *col;
    double *val;
    void *buf;
    int64_t n, nnz;
};

static void cusp_init(Cusp &c, const gt_csr *a)
{
    c.n = a->nrows, c.nnz = a->nnz;
    std::vector<int> p((size_t)a->nrows + 1);
    for (int64_t i = 0; i <= a->nrows; i++) p[(size_t)i] = (int)a->ptr[i];
    CK(cudaMalloc(&c.ptr, p.size() * 4));
    CK(cudaMalloc(&c.col, (size_t)a->nnz * 4));
    CK(cudaMalloc(&c.val, (size_t)a->nnz * 8));
    CK(cudaMemcpy(c.ptr, p.data(), p.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(c.col, a->col, (size_t)a->nnz * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(c.val, a->val, (size_t)a->nnz * 8, cudaMemcpyHostToDevice));
    CK(cusparseCreate(&c.h));
    CK(cusparseCreateCsr(&c.A, a->nrows, a->ncols, a->nnz, c.ptr, c.col, c.val, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    c.buf = nullptr;
}

static void cusp_spmv(Cusp &c, cusparseDnVecDescr_t x, cusparseDnVecDescr_t y)
{
    double one = 1, zero = 0;
    if (!c.buf) {
        size_t sz = 0;
        CK(cusparseSpMV_bufferSize(c.h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, c.A, x, &zero, y, CUDA_R_64F,
                                   CUSPARSE_SPMV_ALG_DEFAULT, &sz));
        CK(cudaMalloc(&c.buf, sz ? sz : 8));
    }
    CK(cusparseSpMV(c.h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, c.A, x, &zero, y, CUDA_R_64F,
                    CUSPARSE_SPMV_ALG_DEFAULT, c.buf));
}

static double cusp_spmv_ms(Cusp &c, int reps)
{
    double *x, *y;
    CK(cudaMalloc(&x, (size_t)c.n * 8));
    CK(cudaMalloc(&y, (size_t)c.n * 8));
    CK(cudaMemset(x, 0, (size_t)c.n * 8));
    cusparseDnVecDescr_t vx, vy;
    CK(cusparseCreateDnVec(&vx, c.n, x, CUDA_R_64F));
    CK(cusparseCreateDnVec(&vy, c.n, y, CUDA_R_64F));
    for (int w = 0; w < 3; w++) cusp_spmv(c, vx, vy);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    cudaEventRecord(e0);
    for (int r = 0; r < reps; r++) cusp_spmv(c, vx, vy);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    cusparseDestroyDnVec(vx), cusparseDestroyDnVec(vy);
    cudaFree(x), cudaFree(y);
    return ms / reps;
}

// Plain CG with cuSPARSE SpMV and cuBLAS vector operations (host pointer
// mode: each dot returns to the host), as in the CUDA samples.
static void cusp_cg(Cusp &c, const double *hb, double tol, int maxit, int *iters, double *ms_per_iter,
                    double *relres)
{
    int64_t n = c.n;
    double *x, *r, *p, *q;
    CK(cudaMalloc(&x, n * 8));
    CK(cudaMalloc(&r, n * 8));
    CK(cudaMalloc(&p, n * 8));
    CK(cudaMalloc(&q, n * 8));
    cublasHandle_t bl;
    CK(cublasCreate(&bl));
    CK(cudaMemset(x, 0, n * 8));
    CK(cudaMemcpy(r, hb, n * 8, cudaMemcpyHostToDevice)); // x0 = 0: r = b
    CK(cudaMemcpy(p, r, n * 8, cudaMemcpyDeviceToDevice));
    cusparseDnVecDescr_t vp, vq;
    CK(cusparseCreateDnVec(&vp, n, p, CUDA_R_64F));
    CK(cusparseCreateDnVec(&vq, n, q, CUDA_R_64F));
    double rr, bb;
    CK(cublasDdot(bl, (int)n, r, 1, r, 1, &rr));
    bb = rr;
    cusp_spmv(c, vp, vq); // buffer allocation outside the timing
    CK(cudaDeviceSynchronize());
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    cudaEventRecord(e0);
    int k = 0;
    while (k < maxit && rr > tol * tol * bb) {
        cusp_spmv(c, vp, vq);
        double pq;
        CK(cublasDdot(bl, (int)n, p, 1, q, 1, &pq));
        double alpha = rr / pq, nalpha = -alpha;
        CK(cublasDaxpy(bl, (int)n, &alpha, p, 1, x, 1));
        CK(cublasDaxpy(bl, (int)n, &nalpha, q, 1, r, 1));
        double rr2;
        CK(cublasDdot(bl, (int)n, r, 1, r, 1, &rr2));
        double beta = rr2 / rr, one = 1;
        rr = rr2;
        CK(cublasDscal(bl, (int)n, &beta, p, 1));
        CK(cublasDaxpy(bl, (int)n, &one, r, 1, p, 1));
        k++;
    }
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    *iters = k;
    *ms_per_iter = k ? ms / k : 0;
    *relres = sqrt(rr / bb);
    cusparseDestroyDnVec(vp), cusparseDestroyDnVec(vq);
    cublasDestroy(bl);
    cudaFree(x), cudaFree(r), cudaFree(p), cudaFree(q);
}

// The CSR vector kernel at each subwarp width (the library picks one from
// the mean row length, csr_row.cuh): ms and % of the copy bandwidth at the
// CSR floor (row offsets, columns, values, x and y once).
static void csr_width_sweep(const gt_csr *a, int prec, int reps, double copy)
{
    gt_spd d;
    if (gt_cu_spd_upload(a, prec, &d) != GT_OK) {
        printf("csr width sweep: %s\n", gt_errmsg());
        return;
    }
    int chosen = d.csr_vec_width;
    void *x, *y;
    CK(cudaMalloc(&x, (size_t)a->ncols * prec));
    CK(cudaMalloc(&y, (size_t)a->nrows * prec));
    CK(cudaMemset(x, 0, (size_t)a->ncols * prec));
    double bytes = (double)gt_cu_spmv_bytes(&d, GT_SPMV_CSR_VECTOR);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    printf("csr-vector width sweep (library's choice %d):", chosen);
    for (int v = 2; v <= 32; v *= 2) {
        d.csr_vec_width = v;
        for (int w = 0; w < 3; w++) CK(gt_cu_spmv(&d, GT_SPMV_CSR_VECTOR, x, y, NULL));
        cudaEventRecord(e0);
        for (int r = 0; r < reps; r++) CK(gt_cu_spmv(&d, GT_SPMV_CSR_VECTOR, x, y, NULL));
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        ms /= reps;
        printf("  V=%d %.4f ms (%.0f%%)", v, ms, 100 * bytes / (ms * 1e6) / copy);
    }
    printf("\n");
    d.csr_vec_width = chosen;
    cudaFree(x), cudaFree(y);
    gt_cu_spd_free(&d);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_sparse lap7|lap27|tet N | mtx FILE [--reps N] [--cg] [--single] [--nospmv] "
                        "[--rcm] [--fmt csr|ell|dia]\n");
        return 2;
    }
    int reps = 50, cg = 0, prec = 8, spmv = 1, rcm = 0;
    const char *fmt = NULL;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--rcm")) rcm = 1;
        else if (!strcmp(argv[i], "--fmt") && i + 1 < argc) fmt = argv[++i];
        else
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cg")) cg = 1;
        else if (!strcmp(argv[i], "--single")) prec = 4;
        else if (!strcmp(argv[i], "--nospmv")) spmv = 0;
    }
    gt_csr a;
    char name[256];
    if (!strcmp(argv[1], "mtx")) {
        if (!bench_read_mtx(argv[2], &a)) {
            fprintf(stderr, "bench_sparse: cannot read %s\n", argv[2]);
            return 1;
        }
        const char *base = strrchr(argv[2], '/');
        snprintf(name, sizeof name, "%s", base ? base + 1 : argv[2]);
    } else if (!strcmp(argv[1], "tet")) {
        long g = atol(argv[2]);
        if (gt_tetmesh_laplacian(g, 0.2, 1, true, &a) != GT_OK) {
            fprintf(stderr, "bench_sparse: %s\n", gt_errmsg());
            return 1;
        }
        snprintf(name, sizeof name, "tet-mesh P1 Laplacian %ld^3, random numbering", g);
    } else {
        int pts = !strcmp(argv[1], "lap27") ? 27 : 7;
        long g = atol(argv[2]);
        if (gt_laplacian(pts, g, g, g, &a) != GT_OK) {
            fprintf(stderr, "bench_sparse: %s\n", gt_errmsg());
            return 1;
        }
        snprintf(name, sizeof name, "%d-pt Laplacian %ld^3", pts, g);
    }
    cudaFree(0);
    char dev[256] = "";
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) snprintf(dev, sizeof dev, "%s", prop.name);
    double copy = copy_bandwidth();
    printf("# %s: %lld rows, %lld nnz, %s; device %s; copy bandwidth %.0f GB/s\n", name, (long long)a.nrows,
           (long long)a.nnz, prec == 8 ? "double" : "single", dev, copy);
    Cusp c;
    gt_csr orig;
    memset(&orig, 0, sizeof orig);
    cusp_init(c, &a); // cuSPARSE: the matrix in the given order
    if (rcm) {
        gt_csr r;
        std::vector<int32_t> perm((size_t)a.nrows);
        gt_locality l0, l1;
        gt_sp_locality(&a, &l0);
        double t0 = gt_now_ms();
        if (gt_rcm(&a, false, perm.data()) != GT_OK || gt_csr_permute(&a, perm.data(), &r) != GT_OK) {
            fprintf(stderr, "bench_sparse: %s\n", gt_errmsg());
            return 1;
        }
        double ms = gt_now_ms() - t0;
        gt_sp_locality(&r, &l1);
        printf("# ours on the RCM order (%.1f ms on the CPU): bandwidth %lld -> %lld, mean |i-j| %.0f -> %.0f, "
               "near %.1f%% -> %.1f%%; cuSPARSE on the given order\n",
               ms, (long long)l0.bandwidth, (long long)l1.bandwidth, l0.mean_dist, l1.mean_dist, 100 * l0.near,
               100 * l1.near);
        orig = a; // kept for cuSPARSE's right-hand side
        a = r;
    }
    if (spmv) {
        double cms = cusp_spmv_ms(c, reps);
        // cuSPARSE CSR bytes: int32 ptr, int32 col, double val, x and y once
        double cbytes = (double)(a.nrows + 1) * 4 + (double)a.nnz * 12 + (double)(a.nrows + a.ncols) * 8;
        printf("%-18s %9s %12s %8s %7s %8s %8s\n", "kernel", "ms", "bytes", "GB/s", "%copy", "GFLOP/s",
               "vs cusp");
        printf("%-18s %9.4f %12.0f %8.0f %6.0f%% %8.1f %8s\n", "cusparse-csr(f64)", cms, cbytes, cbytes / (cms * 1e6),
               100 * cbytes / (cms * 1e6) / copy, 2.0 * a.nnz / (cms * 1e6), "1.00x");
        for (int k = 0; k < GT_SPMV_K_N; k++) {
            gt_spmv_bench b;
            if (gt_spmv_gpu_bench(&a, (gt_spmv_kind)k, prec, reps, &b) != GT_OK) {
                printf("%-18s %s\n", gt_spmv_kind_name((gt_spmv_kind)k), gt_errmsg());
                continue;
            }
            printf("%-18s %9.4f %12zu %8.0f %6.0f%% %8.1f %7.2fx\n", gt_spmv_kind_name((gt_spmv_kind)k), b.ms,
                   b.bytes, b.gbs, 100 * b.gbs / copy, b.gflops, prec == 8 ? cms / b.ms : 0.0);
        }
        csr_width_sweep(&a, prec, reps, copy);
    }
    if (cg) {
        std::vector<double> one((size_t)a.nrows, 1.0), b((size_t)a.nrows), x((size_t)a.nrows, 0.0);
        gt_csr_spmv(&a, one.data(), b.data());
        int it;
        double cms, crel;
        std::vector<double> b0 = b; // cuSPARSE's b = A*1 in its own order
        if (orig.ptr) gt_csr_spmv(&orig, one.data(), b0.data());
        cusp_cg(c, b0.data(), 1e-8, 10000, &it, &cms, &crel);
        printf("cg-cusparse+cublas  iterations %5d  %.4f ms/iter  relres %.2e\n", it, cms, crel);
        gt_sp_info in;
        gt_sp_analyze(&a, &in);
        char why[256];
        gt_sp_format f = gt_sp_choose_format(&in, why, sizeof why);
        if (fmt) f = !strcmp(fmt, "csr") ? GT_SP_CSR : !strcmp(fmt, "ell") ? GT_SP_ELL : GT_SP_DIA;
        gt_solve_opts o;
        gt_solve_opts_init(&o);
        o.method = GT_SOLVE_CG, o.tol = 1e-8, o.maxiter = 10000, o.check_every = 32;
        gt_solve_result r;
        double ms;
        // the GPU CG variants: 1 = one fused kernel per iteration (the default for DIA), 2 = two
        // kernels, 3 = split (p stored; the default for CSR and ELL)
        for (int kern = 1; kern <= 3; kern++) {
            o.cg_kernels = kern;
            std::fill(x.begin(), x.end(), 0.0);
            if (gt_solve_gpu(&a, f, 8, b.data(), x.data(), &o, &r, &ms) != GT_OK) {
                printf("cg-ours: %s\n", gt_errmsg());
                continue;
            }
            double per = r.iters ? r.loop_ms / (double)r.iters : 0;
            printf("cg-ours(%s,%dk)%*s iterations %5lld  %.4f ms/iter  true relres %.2e  ratio %.2fx of cusparse  "
                   "iterations %s\n",
                   gt_sp_format_name(f), kern, 2 - (int)strlen(gt_sp_format_name(f)) + 2, "", (long long)r.iters, per,
                   r.true_relres, cms > 0 ? per / cms : 0, r.iters == it ? "match" : "DIFFER");
            // floor: the matrix once + the vectors each variant must move per iteration
            // (1 kernel: r, q, p, x read and written = 8; 2 kernels: A reads z, p and
            // writes p, q; B reads x, p, r, q and writes x, r = 10; split CG: the product
            // reads p, r, writes q, the update reads x, p, r, q, writes x, r, p = 10)
            double mat = (double)in.bytes[f][1], vec = (kern == 1 ? 8.0 : 10.0) * (double)a.nrows * 8;
            printf("  floor %dk: %.0f MB/iter (%.0f B/row) -> %.4f ms at copy bandwidth; achieved %.0f GB/s\n", kern,
                   (mat + vec) / 1e6, (mat + vec) / (double)a.nrows, (mat + vec) / (copy * 1e6),
                   per > 0 ? (mat + vec) / (per * 1e6) : 0);
        }
        o.cg_kernels = 0;
        // the same with PCG (Jacobi)
        o.method = GT_SOLVE_PCG;
        for (int kern = 1; kern <= 3; kern++) {
            o.cg_kernels = kern;
            std::fill(x.begin(), x.end(), 0.0);
            if (gt_solve_gpu(&a, f, 8, b.data(), x.data(), &o, &r, &ms) == GT_OK) {
                double per = r.iters ? r.loop_ms / (double)r.iters : 0;
                // split PCG floor: + D read twice = 12 vectors
                double mat = (double)in.bytes[f][1], vec = (kern == 3 ? 12.0 : kern == 1 ? 9.0 : 11.0) * (double)a.nrows * 8;
                printf("pcg-ours(%s,%dk)     iterations %5lld  %.4f ms/iter  true relres %.2e  floor %.4f ms (%.0f%%)\n",
                       gt_sp_format_name(f), kern, (long long)r.iters, per, r.true_relres, (mat + vec) / (copy * 1e6),
                       per > 0 ? 100 * (mat + vec) / (copy * 1e6) / per : 0);
            }
        }
    }
    gt_csr_free(&a), gt_csr_free(&orig);
    return 0;
}
