// Internal to kernels/sparse/amg_*.cu: the device hierarchy and the stage
// functions the driver (amg_cu.cu) calls in order. Every array is a device
// pointer unless named _h. Stages queue on `st` and synchronise only where
// they need a count on the host (sizes of the next arrays).
#ifndef GT_AMG_CU_IMPL_CUH
#define GT_AMG_CU_IMPL_CUH

#include <cuda_runtime.h>

#include "common/status.h"
#include "kernels/common/cu_check.h"
#include "common/gpu_runtime.h"
#include "sparse/amg.h"

struct amg_dcsr {
    int64_t n = 0, m = 0, nnz = 0;
    int64_t *ptr = nullptr;
    int32_t *col = nullptr;
    double *val = nullptr;
    bool borrowed = false; // level 0's A belongs to the caller's gt_spd
};

// a level's stencil slots (amg_grid.h) and their offsets, by value into kernels
struct amg_slots {
    int s[GT_AMG_GRID_SLOTS];
};
struct amg_offs {
    int64_t o[GT_AMG_GRID_SLOTS];
};

struct amg_dlevel {
    amg_dcsr a, p, r; // p, r empty on grid levels (the transfers are stencils)
    gt_amg_grid g{};  // grid levels (nx > 0): the grid and the DIA form of a
    int nd = 0;
    int8_t slot[GT_AMG_GRID_SLOTS] = {};
    double *dia = nullptr; // nd x n
    int32_t *agg = nullptr;
    int64_t nagg = 0;
    double *dinv = nullptr, *l1inv = nullptr;
    double rho = 0;
    int32_t *colour_rows = nullptr; // rows by colour (multicolour Gauss-Seidel)
    int64_t *colour_ptr_h = nullptr; // host offsets, ncolours + 1
    int32_t ncolours = 0;
    double *x = nullptr, *b = nullptr, *t = nullptr, *sr = nullptr, *sd = nullptr;
    int vw = 8; // subwarp width of this level's SpMV
};

struct amg_dhier {
    int nlevels = 0;
    amg_dlevel *lev = nullptr; // host array of opts.amg_max_levels
    gt_precond_opts opts{};
    int64_t nc = 0;
    double *cinv = nullptr; // dense inverse of the coarsest A, row-major nc x nc
    double stage_ms[GT_AMG_NSTAGES] = {};
    double setup_ms = 0;
    cudaStream_t st = nullptr;
    int64_t *scratch_i64 = nullptr; // one int64 / flags for host read-backs
    double *work = nullptr;         // the levels' x, b, t, sr, sd (one allocation)
    // the V-cycle captured as a CUDA graph for the last (r, z, stream) it was
    // applied to (a solver applies to the same vectors every iteration)
    cudaGraphExec_t graph = nullptr;
    const double *graph_r = nullptr;
    double *graph_z = nullptr;
    cudaStream_t graph_st = nullptr;
    bool graph_off = false; // capture failed once: launch directly
    // the (r, z, stream) of the last applies and how many in a row
    const double *seen_r = nullptr;
    double *seen_z = nullptr;
    cudaStream_t seen_st = nullptr;
    int seen_uses = 0;
};

void amg_dcsr_free(amg_dcsr *a);
gt_status amg_dcsr_alloc(amg_dcsr *a, int64_t n, int64_t m, int64_t nnz, bool vals, const char *what);
// ptr[0..n] from counts in ptr[1..n] (ptr[0] = 0): inclusive scan; returns nnz = ptr[n] (synchronises)
gt_status amg_rows_to_ptr(int64_t *ptr, int64_t n, cudaStream_t st, int64_t *nnz);

// amg_strength.cu
gt_status amg_cu_dinv(const amg_dcsr *a, double *dinv, int64_t *scratch, cudaStream_t st);
// the first bad diagonal's row a kernel left in *scratch (~0: none) as the error (synchronises)
gt_status amg_cu_diag_check(int64_t *scratch, cudaStream_t st);
gt_status amg_cu_strength(const amg_dcsr *a, const double *dinv, double theta, amg_dcsr *s, cudaStream_t st);
// amg_aggregate.cu
gt_status amg_cu_aggregate(const amg_dcsr *s, int dist, int32_t *agg, int64_t *nagg, int64_t *scratch, cudaStream_t st);
// amg_prolong.cu
gt_status amg_cu_rho(const amg_dcsr *a, const double *dinv, double *rho, cudaStream_t st);
gt_status amg_cu_prolong(const amg_dcsr *a, const double *dinv, const int32_t *agg, int64_t nagg, double w,
                         amg_dcsr *p, cudaStream_t st);
gt_status amg_cu_transpose(const amg_dcsr *a, amg_dcsr *t, cudaStream_t st);
// amg_galerkin.cu
gt_status amg_cu_spgemm(const amg_dcsr *a, const amg_dcsr *b, amg_dcsr *c, cudaStream_t st);
// amg_coarse.cu
gt_status amg_cu_coarse_inverse(const amg_dcsr *a, double **inv, cudaStream_t st);
void amg_cu_coarse_apply(int64_t n, const double *inv, const double *b, double *x, cudaStream_t st);
// amg_grid.cu: the grid of level L's a (gi; L->g, nd, slot, dia set when
// one is found), and one grid coarsening step (L's end weights and rho, C's
// grid, DIA and CSR)
gt_status amg_cu_grid_detect(amg_dlevel *L, gt_amg_grid_info *gi, cudaStream_t st);
gt_status amg_cu_grid_coarsen(amg_dlevel *L, amg_dlevel *C, cudaStream_t st);
amg_offs amg_grid_offsets(const amg_dlevel *L);
// a coarse grid level's CSR form from its DIA (levels below the finest keep
// only a.n, a.m, a.nnz until asked), and its 1 / a_ii from the centre slot
gt_status amg_cu_grid_csr(const amg_dlevel *C, amg_dcsr *a, cudaStream_t st);
gt_status amg_cu_grid_dinv(const amg_dlevel *L, double *dinv, int64_t *scratch, cudaStream_t st);
// amg_grid_cycle.cu: the V-cycle's work on grid level l (smoothing,
// residual, transfers; amg_cu_cycle for the level below)
void amg_cu_grid_level(const amg_dhier *h, int l, const double *b, double *x, cudaStream_t st);
// amg_cycle.cu
gt_status amg_cu_smoother_setup(amg_dlevel *l, const gt_csr *host_a, gt_amg_smoother kind, cudaStream_t st);
void amg_cu_spmv(const amg_dcsr *a, int vw, const double *x, double *y, double alpha, double beta, const double *z,
                 cudaStream_t st); // y = alpha A x + beta z (z may be y or nullptr when beta 0)
gt_status amg_cu_vcycle(const amg_dhier *h, const double *r, double *z, cudaStream_t st);
void amg_cu_cycle(const amg_dhier *h, int l, const double *b, double *x, cudaStream_t st); // level l from x = 0
void amg_cu_cheb_coeffs(double rho, bool grid, double *theta, double *c1, double *c2); // the Chebyshev step's numbers
int amg_cu_vec_width(const amg_dcsr *a);

#endif
