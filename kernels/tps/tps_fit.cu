// Smoothed thin-plate spline fit on the GPU, double precision throughout.
// The host does the O(n m) part with the CPU fit's own functions (lib/tps:
// the QR of X = [1 c] by 4 Householder reflectors, Q^T Y, and w = Q [0; z]
// at the end); the GPU forms the lower triangle of Q^T K Q in two passes,
// K's entries computed where they are used and written once (tps_qtkq.cu;
// never forming Q or reading K), the Cholesky of Q2^T K Q2 + lambda I in
// place in the trailing block and its solve (tps_chol.cu, tps_chol_solve.cu, no cuSOLVER) and
// the affine right-hand side (tps_top_rows). GCV: cuSOLVER's syevd on a
// copy, the only use of cuSOLVER and cuBLAS, which are opened for it alone.
// U(r) is lib/tps/tps_math.h's, as on the CPU.
//
// Launch shapes: tps_add_diag: one diagonal element per thread, 256-thread
// blocks; tps_top_rows: one 256-thread block per output, a fixed reduction
// order.
#include <cuda_runtime.h>

#include <cstdlib>

#include "kernels/common/cu_check.h"
#include "kernels/common/cu_libs.h"
#include "common/gpu_runtime.h"
#include "kernels/tps/tps_cuda.h"
#include "common/release.h"
#include "common/trace.h"
#include "tps/linalg.h"
#include "tps/tps_math.h"

static cublasHandle_t g_blas;
static cusolverDnHandle_t g_sol;
static cusolverDnParams_t g_par; // for the 64-bit API (syevd: n^2 > 2^31 elements)
static bool g_solver;

// The handles (GCV only) live for the process (created once: their cost is
// the "cuSOLVER" stage); destroyed at exit, before the CUDA runtime's own
// exit handler (registered earlier) tears the context down, so that their
// device workspaces are released and leak checkers see a clean exit.
static void release_handles(void)
{
    if (!g_solver || gt_release_armed()) return; // the helper's release ends them with the context
    gt_cusolver.DnDestroyParams(g_par);
    gt_cusolver.DnDestroy(g_sol);
    gt_cublas.Destroy(g_blas);
    g_solver = false;
}

static gt_status solver_init(gt_timings *tm)
{
    if (g_solver) return GT_OK;
    double t0 = gt_now_ms();
    GT_TRY(gt_cublas_load());
    GT_TRY(gt_cusolver_load());
    GT_CUBLAS(gt_cublas.Create(&g_blas));
    gt_status st = gt_cusolver_status_from(gt_cusolver.DnCreate(&g_sol), "gt_cusolver.DnCreate(&g_sol)", __FILE__, __LINE__);
    if (st != GT_OK) {
        gt_cublas.Destroy(g_blas); // a handle that failed half way leaves nothing behind
        return st;
    }
    st = gt_cusolver_status_from(gt_cusolver.DnCreateParams(&g_par), "gt_cusolver.DnCreateParams(&g_par)", __FILE__,
                                 __LINE__);
    if (st != GT_OK) {
        gt_cusolver.DnDestroy(g_sol);
        gt_cublas.Destroy(g_blas);
        return st;
    }
    g_solver = true;
    atexit(release_handles);
    if (tm) gt_timings_add(tm, "cuSOLVER", gt_now_ms() - t0);
    return GT_OK;
}

extern "C" gt_status gt_tps_cuda_init(gt_timings *tm)
{
    double t0 = gt_now_ms();
    GT_CU(cudaFree(0)); // make sure the context exists
    if (tm) gt_timings_add(tm, "context", gt_now_ms() - t0);
    return GT_OK;
}

struct gt_tps_cuda_fit {
    size_t n;
    int m;
    double *K, *V, *Y, *W;
    int *info;
    double *work; // the solve's (gt_tps_cuda_chol_solve_work)
};

__global__ void tps_add_diag(double *A, size_t ld, size_t N, double v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N;
         i += (size_t)gridDim.x * blockDim.x)
        A[i + i * ld] += v;
}

// W[i, k] -= sum_c K[m + c, i] W[m + c, k] for i < m (block x) and k < 3
// (block y): the affine rows of the solution, (Q^T Y)[0:m] - (Q^T K Q)[0:m, m:] z,
// with Q^T K Q's row i read as its column i (symmetric; a row of K is one
// page per element: 0.5-1.6 ms where the column takes microseconds).
__global__ void __launch_bounds__(256) tps_top_rows(const double *__restrict__ K, double *__restrict__ W, size_t n, int m)
{
    __shared__ double part[256];
    const int i = blockIdx.x, k = blockIdx.y;
    double s = 0.0;
    for (size_t c = m + threadIdx.x; c < n; c += 256) s += K[c + i * n] * W[c + k * n];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if ((int)threadIdx.x < h) part[threadIdx.x] += part[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) W[i + k * n] -= part[0];
}

// After K <- Q^T K Q: lambda on the diagonal and the Cholesky of the
// trailing block (info: 0 or the order of the first minor that is not
// positive definite). Stream 0, asynchronous; the caller reads info.
static gt_status factor_async(double *K, size_t n, int m, double lambda, int *info)
{
    double *B = K + m + (size_t)m * n;
    const size_t N = n - m;
    if (lambda != 0.0) {
        tps_add_diag<<<gt_grid(N, 256, 4096), 256>>>(B, n, N, lambda);
        GT_CU_LAUNCH("tps_add_diag");
    }
    return gt_tps_cuda_cholesky(B, n, N, info);
}

// Then, from W = Q^T Y: W[m:] = z and W[0:m] the affine rows. Stream 0.
static gt_status solve_async(const double *K, size_t n, int m, double *W, double *work)
{
    GT_TRY(gt_tps_cuda_chol_solve(K + m + (size_t)m * n, n, n - m, W + m, n, 3, work));
    tps_top_rows<<<dim3((unsigned)m, 3), 256>>>(K, W, n, m);
    GT_CU_LAUNCH("tps_top_rows");
    return GT_OK;
}

static gt_status stage_end(gt_timer *t, gt_timings *tm, const char *name)
{
    double ms = gt_timer_stop(t);
    if (tm) gt_timings_add(tm, name, ms);
    return GT_OK;
}

extern "C" void gt_tps_cuda_fit_free(gt_tps_cuda_fit *f)
{
    if (!f) return;
    void *dev[] = {f->K, f->V, f->Y, f->W, f->info, f->work};
    for (void *d : dev) gt_cu_free(d);
    delete f;
}

extern "C" gt_status gt_tps_cuda_prepare(int kernel, size_t n, int m, const double *c,
                                         const double *V, const double *tau, const double *QtY,
                                         gt_timings *tm, gt_tps_cuda_fit **out)
{
    *out = nullptr;
    if (n > (size_t)INT32_MAX / 2)
        return gt_fail(GT_ERR_GPU, "n = %zu is beyond the GPU fit's 32-bit sizes", n);
    gt_tps_cuda_fit *f = new gt_tps_cuda_fit();
    f->n = n;
    f->m = m;
    *out = f;
    double *dc = nullptr, *qs = nullptr;
    gt_timer t;
    double t_alloc = gt_now_ms();
    GT_TRY(gt_cu_malloc((void **)&f->K, n * n * sizeof(double), "kernel matrix"));
    GT_TRY(gt_cu_malloc((void **)&f->V, n * m * sizeof(double), "reflectors"));
    GT_TRY(gt_cu_malloc((void **)&f->Y, n * 3 * sizeof(double), "targets"));
    GT_TRY(gt_cu_malloc((void **)&f->W, n * 3 * sizeof(double), "weights"));
    GT_TRY(gt_cu_malloc((void **)&f->info, 2 * sizeof(int), "solver info"));
    GT_TRY(gt_cu_malloc((void **)&dc, n * 3 * sizeof(double), "control points"));
    if (tm) gt_timings_add(tm, "allocate", gt_now_ms() - t_alloc);
    gt_timer_start(&t, true, nullptr);
    gt_status st = GT_OK;
#define CHK(x) do { st = (x); if (st != GT_OK) goto done; } while (0)
    CHK(gt_cu_memcpy_h2d(dc, c, n * 3 * sizeof(double), nullptr));
    CHK(gt_cu_memcpy_h2d(f->V, V, n * m * sizeof(double), nullptr));
    CHK(gt_cu_memcpy_h2d(f->Y, QtY, n * 3 * sizeof(double), nullptr));
    stage_end(&t, tm, "transfer");
    CHK(gt_cu_malloc((void **)&f->work, gt_tps_cuda_chol_solve_work(n - m, 3) * sizeof(double), "solve workspace"));
    gt_timer_start(&t, true, nullptr);
    CHK(gt_cu_malloc((void **)&qs, 2 * n * (size_t)m * sizeof(double), "Q^T K Q factors"));
    CHK(gt_tps_cuda_qtkq(kernel, n, dc, m, V, tau, f->V, f->K, qs)); // K's entries formed there
    stage_end(&t, tm, "Q2^T K Q2");
done:
#undef CHK
    gt_cu_free(qs);
    gt_cu_free(dc);
    return st;
}

extern "C" gt_status gt_tps_cuda_spectrum(gt_tps_cuda_fit *f, double *d, double *z,
                                          gt_timings *tm)
{
    const size_t n = f->n, N = n - f->m;
    const int Ni = (int)N;
    double *S = nullptr, *dd = nullptr, *dz = nullptr;
    void *wk = nullptr, *hk = nullptr;
    GT_TRY(solver_init(tm));
    gt_status st = GT_OK;
    gt_timer t;
    gt_timer_start(&t, true, nullptr);
#define CHK(x) do { st = (x); if (st != GT_OK) goto done; } while (0)
    CHK(gt_cu_malloc((void **)&S, N * N * sizeof(double), "GCV matrix"));
    CHK(gt_cu_malloc((void **)&dd, N * sizeof(double), "GCV eigenvalues"));
    CHK(gt_cu_malloc((void **)&dz, N * 3 * sizeof(double), "GCV projections"));
    CHK(gt_cu_status_from(cudaMemcpy2D(S, N * sizeof(double), f->K + f->m + (size_t)f->m * n,
                                       n * sizeof(double), N * sizeof(double), N,
                                       cudaMemcpyDeviceToDevice),
                          "copy Q2^T K Q2", __FILE__, __LINE__));
    {
        size_t dbytes = 0, hbytes = 0;
        CHK(gt_cusolver_status_from(
            gt_cusolver.DnXsyevd_bufferSize(g_sol, g_par, CUSOLVER_EIG_MODE_VECTOR,
                                        CUBLAS_FILL_MODE_LOWER, (int64_t)N, CUDA_R_64F, S,
                                        (int64_t)N, CUDA_R_64F, dd, CUDA_R_64F, &dbytes, &hbytes),
            "Xsyevd_bufferSize", __FILE__, __LINE__));
        CHK(gt_cu_malloc(&wk, dbytes ? dbytes : 8, "syevd workspace"));
        if (hbytes) {
            hk = malloc(hbytes);
            if (!hk) CHK(gt_fail(GT_ERR_RUNTIME, "out of host memory for the syevd workspace"));
        }
        CHK(gt_cusolver_status_from(
            gt_cusolver.DnXsyevd(g_sol, g_par, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER,
                             (int64_t)N, CUDA_R_64F, S, (int64_t)N, CUDA_R_64F, dd, CUDA_R_64F, wk,
                             dbytes, hk, hbytes, f->info),
            "Xsyevd", __FILE__, __LINE__));
        int h = 0;
        CHK(gt_cu_status_from(cudaMemcpy(&h, f->info, sizeof h, cudaMemcpyDeviceToHost),
                              "syevd info", __FILE__, __LINE__));
        if (h != 0) {
            st = gt_fail(GT_ERR_RUNTIME, "syevd failed (info %d)", h);
            goto done;
        }
        const double one = 1.0, zero = 0.0;
        CHK(gt_cublas_status_from(gt_cublas.Dgemm(g_blas, CUBLAS_OP_T, CUBLAS_OP_N, Ni, 3, Ni, &one,
                                              S, Ni, f->Y + f->m, (int)n, &zero, dz, Ni),
                                  "gemm U^T Q2^T Y", __FILE__, __LINE__));
    }
    CHK(gt_cu_memcpy_d2h(d, dd, N * sizeof(double), nullptr));
    CHK(gt_cu_memcpy_d2h(z, dz, N * 3 * sizeof(double), nullptr));
    stage_end(&t, tm, "GCV eigen");
done:
#undef CHK
    gt_cu_free(S);
    gt_cu_free(dd);
    gt_cu_free(dz);
    gt_cu_free(wk);
    free(hk);
    return st;
}

extern "C" gt_status gt_tps_cuda_solve(gt_tps_cuda_fit *f, double lambda, double *w, double *top,
                                       int *not_pd, gt_timings *tm)
{
    const size_t n = f->n;
    const int m = f->m;
    *not_pd = 0;
    gt_timer t;
    gt_timer_start(&t, true, nullptr);
    GT_TRY(factor_async(f->K, n, m, lambda, f->info));
    int h = 0;
    GT_CU(cudaMemcpy(&h, f->info, sizeof h, cudaMemcpyDeviceToHost));
    stage_end(&t, tm, "Cholesky");
    if (h > 0) {
        *not_pd = 1;
        return GT_OK;
    }
    gt_timer_start(&t, true, nullptr);
    GT_CU(cudaMemcpyAsync(f->W, f->Y, n * 3 * sizeof(double), cudaMemcpyDeviceToDevice, 0));
    GT_TRY(solve_async(f->K, n, m, f->W, f->work));
    stage_end(&t, tm, "back-substitution");
    gt_timer_start(&t, false, nullptr);
    GT_CU(cudaMemcpy2D(top, m * sizeof(double), f->W, n * sizeof(double), m * sizeof(double), 3,
                       cudaMemcpyDeviceToHost));
    GT_CU(cudaMemset2D(f->W, n * sizeof(double), 0, m * sizeof(double), 3));
    GT_TRY(gt_cu_memcpy_d2h(w, f->W, n * 3 * sizeof(double), nullptr));
    stage_end(&t, tm, "transfer");
    return GT_OK;
}

extern "C" void gt_tps_cuda_load_libs(void)
{
    (void)gt_cublas_load();
    (void)gt_cusolver_load();
}

// ---- Warm-up: each routine a fit calls, once, in the same order and with
// the same types, at a small size on synthetic points, so that CUDA's lazy
// loading of their kernels happens on the job's preparing thread while the
// input is read; with gcv also cuSOLVER's handles and syevd (tens of ms for
// its first call). Plain cudaMalloc: the allocation hook walks the job's own
// allocations only. Errors are dropped: the fit meets them again.
extern "C" void gt_tps_cuda_warm(int kernel, int gcv)
{
    if (gt_tps_cuda_init(nullptr) != GT_OK) return;
    if (gcv && solver_init(nullptr) != GT_OK) return;
    const int n = GT_TPS_WARM_N, m = 4, N = n - m;
    const size_t nn = (size_t)n * n;
    // K | V | Y | W | c | S (doubles), then info
    const size_t nd = nn + (size_t)n * m + 3 * (size_t)n * 3 + (size_t)N * N;
    double *buf = nullptr, *hbuf = nullptr, tau[4], R[16];
    void *xdev = nullptr, *hwork = nullptr;
    if (cudaMalloc((void **)&buf, nd * sizeof(double) + 64) != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    double *K = buf, *V = K + nn, *Y = V + (size_t)n * m, *W = Y + (size_t)n * 3, *c = W + (size_t)n * 3;
    double *S = c + (size_t)n * 3;
    int *info = (int *)(S + (size_t)N * N);
    hbuf = (double *)malloc((size_t)n * (3 + m + 3) * sizeof(double));
    if (!hbuf) goto done;
    {
        // points on a jittered lattice in the unit cube: distinct, not coplanar
        double *hc = hbuf, *hX = hc + (size_t)n * 3, *hY = hX + (size_t)n * m;
        for (int i = 0; i < n; i++) {
            double p[3] = {(i % 8) / 8.0 + 0.01 * (i % 7), ((i / 8) % 8) / 8.0 + 0.013 * (i % 5),
                           (i / 64) / 8.0 + 0.007 * (i % 3)};
            for (int k = 0; k < 3; k++) {
                hc[3 * i + k] = p[k];
                hX[i + (size_t)(k + 1) * n] = p[k];
                hY[i + (size_t)k * n] = p[k] + 0.1 * p[(k + 1) % 3];
            }
            hX[i] = 1.0;
        }
        tps_house_qr(hX, (size_t)n, m, tau, R); // as gt_tps_fit does on the host
        for (int j = 0; j < m; j++) tps_reflect(hY, (size_t)n, (size_t)n, 3, hX + (size_t)j * n, tau[j]);
        if (cudaMemcpy(c, hc, (size_t)n * 3 * sizeof(double), cudaMemcpyHostToDevice) != cudaSuccess ||
            cudaMemcpy(V, hX, (size_t)n * m * sizeof(double), cudaMemcpyHostToDevice) != cudaSuccess ||
            cudaMemcpy(Y, hY, (size_t)n * 3 * sizeof(double), cudaMemcpyHostToDevice) != cudaSuccess)
            goto done;
    }
    {
        double *B = K + m + (size_t)m * n;
        gt_tps_cuda_qtkq(kernel, (size_t)n, c, m, hbuf + (size_t)n * 3, tau, V, K, S); // S: scratch here (2 n m <= N^2)
        if (gcv) {
            cusolverDnHandle_t s = g_sol;
            size_t sd = 0, sh = 0;
            const double one = 1.0, zero = 0.0;
            if (gt_cusolver.DnXsyevd_bufferSize(s, g_par, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, N,
                                                CUDA_R_64F, S, N, CUDA_R_64F, W, CUDA_R_64F, &sd, &sh))
                goto done;
            if (cudaMalloc(&xdev, sd + 8) != cudaSuccess) goto done;
            hwork = malloc(sh + 8);
            if (!hwork) goto done;
            cudaMemcpy2D(S, N * sizeof(double), B, n * sizeof(double), N * sizeof(double), N,
                         cudaMemcpyDeviceToDevice);
            gt_cusolver.DnXsyevd(s, g_par, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, N, CUDA_R_64F, S, N,
                                 CUDA_R_64F, W, CUDA_R_64F, xdev, sd + 8, hwork, sh + 8, info);
            gt_cublas.Dgemm(g_blas, CUBLAS_OP_T, CUBLAS_OP_N, N, 3, N, &one, S, N, Y + m, n, &zero, W, N);
        }
        cudaMemcpyAsync(W, Y, (size_t)n * 3 * sizeof(double), cudaMemcpyDeviceToDevice, 0);
        factor_async(K, (size_t)n, m, 1e3, info);
        solve_async(K, (size_t)n, m, W, S); // S: the solve's workspace here (3 N + 8 * 64^2 <= N^2)
        cudaDeviceSynchronize();
    }
done:
    cudaFree(xdev);
    cudaFree(buf);
    free(hwork);
    free(hbuf);
    cudaGetLastError(); // nothing of the warm-up reaches the job
    gt_trace("kernels warmed: tps fit");
}
