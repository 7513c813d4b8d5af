// The device's measured ceilings, against which every benchmark's floor is
// computed: device-to-device copy bandwidth (bytes read + written),
// host<->device pinned bandwidth, FP64 and FP32 matrix-product rates.
// Usage: bench_device   (prints "key value" lines and a table)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#define CK(x)                                                                  \
    do {                                                                       \
        cudaError_t e_ = (x);                                                  \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));           \
            return 1;                                                          \
        }                                                                      \
    } while (0)

template <typename F>
static float median_ms(F f, int reps)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    f(); // warm-up
    std::vector<float> t;
    for (int i = 0; i < reps; i++) {
        cudaEventRecord(a);
        f();
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return t[t.size() / 2];
}

__global__ void fill(double *p, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (double)((i * 2654435761u) % 1000) * 1e-3;
}

int main()
{
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("gpu %s\n", p.name);
    const size_t bytes = (size_t)2 << 30;
    void *a, *b, *h;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMallocHost(&h, bytes / 4));
    CK(cudaMemset(a, 1, bytes));
    float d2d = median_ms([&] { cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice); }, 10);
    float h2d = median_ms([&] { cudaMemcpy(a, h, bytes / 4, cudaMemcpyHostToDevice); }, 5);
    float d2h = median_ms([&] { cudaMemcpy(h, a, bytes / 4, cudaMemcpyDeviceToHost); }, 5);
    double bw = 2.0 * bytes / (d2d * 1e-3) / 1e9;
    printf("copy_GBps %.1f\n", bw);
    printf("h2d_GBps %.1f\n", bytes / 4 / (h2d * 1e-3) / 1e9);
    printf("d2h_GBps %.1f\n", bytes / 4 / (d2h * 1e-3) / 1e9);
    CK(cudaFree(a));
    CK(cudaFree(b));
    CK(cudaFreeHost(h));

    cublasHandle_t hb;
    if (cublasCreate(&hb) != CUBLAS_STATUS_SUCCESS) return 1;
    const int n = 8192;
    double *A, *B, *C;
    CK(cudaMalloc(&A, sizeof(double) * n * n));
    CK(cudaMalloc(&B, sizeof(double) * n * n));
    CK(cudaMalloc(&C, sizeof(double) * n * n));
    fill<<<1024, 256>>>(A, (size_t)n * n);
    fill<<<1024, 256>>>(B, (size_t)n * n);
    double one = 1, zero = 0;
    float dg = median_ms([&] { cublasDgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n); }, 5);
    printf("dgemm_TFLOPs %.2f\n", 2.0 * n * n * (double)n / (dg * 1e-3) / 1e12);
    float fone = 1, fzero = 0;
    float sg = median_ms([&] { cublasSgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &fone, (float *)A, n, (float *)B, n, &fzero, (float *)C, n); }, 5);
    printf("sgemm_TFLOPs %.2f\n", 2.0 * n * n * (double)n / (sg * 1e-3) / 1e12);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cublasDestroy(hb);
    return 0;
}
