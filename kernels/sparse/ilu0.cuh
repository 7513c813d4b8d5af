// Shared by kernels/sparse/ilu0.cu (set-up, factorisation) and
// ilu0_solve.cu (the triangular solves): the device state of one IC(0) /
// ILU(0) preconditioner.
#ifndef GT_KERNELS_SPARSE_ILU0_CUH
#define GT_KERNELS_SPARSE_ILU0_CUH

#include <cuda_runtime.h>

#include <stdint.h>

#include "kernels/sparse/ilu0_cu.h"

namespace gt_ilu {

constexpr int BLOCK = 256;

// what the sync-free solves share on the device: the epoch of the current
// apply (a row is ready when its flag equals it, so the flags never need
// clearing) and the two row counters
struct Sync {
    int epoch;
    unsigned int next[2];
};

struct Ctx {
    bool ic;
    gt_cu_ilu0_opts o;
    int64_t n, nnz;
    const int64_t *ptr; // borrowed from the gt_spd
    const int32_t *col;
    double *val;        // the factors
    int64_t *diag;
    int *ready;         // 2n flags: lower, upper
    Sync *sync;
    int width;          // lanes per row in the solves (2..32)
    // level sets (levels scheme): host offsets, device rows
    int64_t nlev[2];
    int64_t *lptr[2];
    int32_t *lrows[2];
    // levels scheme: the launches of both solves captured once as a CUDA
    // graph over rbuf -> zbuf (the apply copies r in and z out); launched
    // directly instead when the caller's stream is itself being captured
    double *rbuf, *zbuf;
    cudaGraphExec_t exec;
};

// capture the graph of the levels scheme (no-op for sync-free)
gt_status prepare(Ctx *c);
// queue z = (L U)^-1 r on stream
gt_status solve(Ctx *c, const double *r, double *z, cudaStream_t st);

} // namespace gt_ilu
#endif
