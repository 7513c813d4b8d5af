/* Poisson surface reconstruction on an octree (Kazhdan et al. 2006; screened,
 * Kazhdan & Hoppe 2013), built data-parallel as in Zhou et al. 2011:
 *
 *   points -> bounding cube -> Morton keys at depth D -> sort -> unique leaves
 *   -> per level: parents (key >> 3), unique, all 8 siblings allocated per
 *   occupied parent -> parent/child links -> 27 neighbours of every node from
 *   its parent's 27 neighbours through LUTparent/LUTchild (no search)
 *   -> each sample's splat depth from the sampling density (PoissonRecon's
 *   adaptive depth: where a node holds samples_per_node samples) -> degree-2
 *   B-spline splat of the normals at the two levels around it -> divergence of
 *   every node's basis function against the splatted field (of all levels)
 *   -> cascadic solve, coarse
 *   to fine, of the functions within 2 cells of splatted data (pr_adapt.h's
 *   gt_pr_fn_active: none finer than the samples reach): at each level CG
 *   on (Laplacian + screening) with the coarser levels' solution moved to
 *   the right-hand side -> iso = average chi at the
 *   points (pr_iso.h) -> marching cubes (lib/mc's table) on the depth-D cells, grown
 *   until the surface is closed, vertices shared by edge at the root of chi;
 *   where no sample splats at depth D, coarse blocks of the extraction tree
 *   instead, crack-free against the cells around them (pr_adapt.h).
 *
 * Every node of every level carries one basis function: the tensor product of
 * centred quadratic B-splines of width 3 cells, so the Laplacian couples a
 * node with its 125 same-level neighbours (found from the parent's 27 by the
 * same LUT rule) and with the 125-neighbourhoods of its ancestors.
 *
 * The CPU path (this library) and the CUDA path (kernels/poisson) run the same
 * algorithm and produce the same octree (keys, links, neighbours). */
#ifndef GT_POISSON_H
#define GT_POISSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/device.h"
#include "common/status.h"
#include "common/timer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GT_PR_MAX_DEPTH 12
#define GT_PR_MIN_POINTS 16
/* sample area factor (int B^2 of the quadratic B-spline) and screening target */
#define GT_PR_KAPPA 0.55
#define GT_PR_TARGET (-0.5)

/* ------------------------------------------------------------------ octree */
typedef struct gt_pr_octree {
    int depth;
    size_t nnodes;
    size_t level_start[GT_PR_MAX_DEPTH + 2]; /* level l: [level_start[l], level_start[l+1]) */
    uint64_t *key;      /* Morton key at the node's level (3*l bits), sorted within a level */
    int32_t *parent;    /* -1 for the root */
    int32_t *child;     /* first of 8 consecutive children, -1 when none */
    int32_t *nbr;       /* 27 per node, index (dx+1)+3(dy+1)+9(dz+1); -1 when absent */
    uint32_t *pt_start; /* range in the key-sorted points (0,0 when empty) */
    uint32_t *pt_count;
    size_t npts;
    uint32_t *order;    /* sorted position -> input point index */
} gt_pr_octree;

/* Morton key of cell (x, y, z): bit 3i = x_i, 3i+1 = y_i, 3i+2 = z_i. */
uint64_t gt_pr_morton(uint32_t x, uint32_t y, uint32_t z);
void gt_pr_demorton(uint64_t k, uint32_t *x, uint32_t *y, uint32_t *z);

/* The LUTs of the neighbour rule. For a node that is child c (bits x,y,z) of
 * its parent, its neighbour at offset i (27-index) is child
 * gt_pr_lut_child[c][i] of the parent's neighbour gt_pr_lut_parent[c][i].
 * The 125 tables do the same for offsets -2..2 (index (dx+2)+5(dy+2)+25(dz+2)),
 * still within the parent's 27-neighbourhood. */
extern uint8_t gt_pr_lut_parent[8][27];
extern uint8_t gt_pr_lut_child[8][27];
extern uint8_t gt_pr_lut_parent125[8][125];
extern uint8_t gt_pr_lut_child125[8][125];
/* Fill the tables (idempotent; the octree builders call it). */
void gt_pr_luts_init(void);

/* Points in unit-cube coordinates ([0,1)^3, xyz interleaved, n of them).
 * The depth-D nodes: every cell within 2 cells of one with points (and its
 * siblings, pr_morton.h); every cell of the levels up to full_depth (clamped
 * to 0..depth; at most GT_PR_MAX_FULL_DEPTH) is a node. */
#define GT_PR_MAX_FULL_DEPTH 8
gt_status gt_pr_octree_build_cpu(const float *ucoords, size_t n, int depth, int full_depth, gt_pr_octree *o);
void gt_pr_octree_free(gt_pr_octree *o);
/* Node at `level` with cell coordinates (x,y,z) by binary search, or -1. */
int32_t gt_pr_find(const gt_pr_octree *o, int level, int64_t x, int64_t y, int64_t z);
/* Same-level neighbour at offset (dx,dy,dz) in -2..2 via the parent's 27
 * neighbours (the 125-LUT), or -1. */
int32_t gt_pr_nbr125(const gt_pr_octree *o, int32_t node, int i125);
static inline int gt_pr_node_level(const gt_pr_octree *o, size_t node)
{
    int l = 0;
    while (l < o->depth && node >= o->level_start[l + 1]) l++;
    return l;
}

/* ------------------------------------------------------------ basis/solve */
/* The B-spline, the basis functions and the per-element terms of the solve
 * are in pr_bspline.h (shared with the CUDA kernels). */
/* Integral over the real line of f^(a) g^(b), where f is the level-df
 * B-spline of cell i and g the level-dg B-spline of cell j (dg <= df),
 * a, b in {0, 1} (derivative order). Exact (Gauss on the finer knot spans). */
double gt_pr_integral1d(int df, int64_t i, int a, int dg, int64_t j, int b);
/* t[r * 5 + k] = gt_pr_integral1d(df, r, a, dg, k - 2, b) for the 2^(df-dg)
 * positions r of a level-df cell inside its level-dg ancestor: the tables
 * of the coarse-to-fine couplings (both paths build them on the host). */
void gt_pr_cross_fill(int df, int dg, int a, int b, double *t);
/* The level-d 125-point Laplacian stencil, index (dx+2)+5(dy+2)+25(dz+2). */
void gt_pr_stencil125(int d, double stencil[125]);
/* Its centre: the diagonal of the level's Laplacian, to which the screening's
 * diagonal is added for the Jacobi preconditioner of both paths' CG. */
static inline double gt_pr_stencil_centre(int d)
{
    double s[125];
    gt_pr_stencil125(d, s);
    return s[62];
}

typedef enum gt_pr_solver { GT_PR_SOLVER_MULTIGRID = 0, GT_PR_SOLVER_CG = 1 } gt_pr_solver;

typedef struct gt_pr_params {
    int depth;               /* octree depth (default 8) */
    int full_depth;          /* levels up to this one complete; the solve starts there (default 5) */
    double point_weight;     /* screening weight alpha (default 4) */
    double samples_per_node; /* samples per node at a sample's splat depth (default 1.5) */
    double scale;            /* bounding cube / data box (default 1.1) */
    int iters;               /* CG iterations per level (0: gt_pr_level_iters's defaults) */
    gt_pr_solver solver;
    double cg_tol;           /* relative residual to stop CG (default 1e-7 for cg, 0 for multigrid) */
    double finest_residual;  /* multigrid, iters 0: the finest level goes on while its relative residual
                              * is above this, the levels below to a 30th of it (default
                              * GT_PR_FINEST_RESIDUAL; gt_pr_level_residual) */
    bool want_density;       /* per-vertex density in the result */
    double trim;             /* drop triangles touching the lowest `trim` fraction of densities */
    bool want_colors;
    int volume_depth;        /* > 0: also sample chi on a (2^v)^3 grid */
    bool progress;
    bool host_state;         /* CUDA path: also copy the octree and solution to the host state */
    bool mesh_on_device;     /* CUDA path: leave the mesh on the device (gt_pr_mesh.dev) when nothing on
                              * the host needs it (no density, trim or colours), for gt_pr_write_mesh_ply
                              * to write in pieces as they come down */
    bool uniform_mesh;       /* extract every depth-D cell, no coarse blocks (pr_adapt.h; default false) */
    int coarse_levels;       /* coarse blocks at most this many levels above D (0 = the uniform
                              * mesh; default GT_PR_COARSE_AUTO: gt_pr_coarse_levels) */
    bool dense_solve;        /* every node's function in the solve; default false: above the
                              * full depth only those gt_pr_fn_active keeps (pr_adapt.h) */
} gt_pr_params;

void gt_pr_params_default(gt_pr_params *p);
/* p->full_depth clamped to 0..p->depth: the octree's complete levels and the
 * solve's first level (both paths) */
static inline int gt_pr_full_depth(const gt_pr_params *p)
{
    return p->full_depth < 0 ? 0 : p->full_depth > p->depth ? p->depth : p->full_depth;
}
/* gt_pr_params.coarse_levels: the default, chosen by the solve from the
 * samples' splat depths (gt_pr_coarse_levels) */
#define GT_PR_COARSE_AUTO (-1)
#define GT_PR_COARSE_LEVELS GT_PR_COARSE_AUTO
/* --coarse-levels auto: every level (the leaves tile the cube, as
 * PoissonRecon's) when at least a tenth of the n samples splat no deeper
 * than D - 2 (n_sparse of them: the points are too sparse for depth D over
 * a good part of the surface, and blocks more than one level above D make
 * most of the mesh there), else one level: where nearly every sample
 * splats at D - 1 or deeper, deeper blocks are rare and the one-level
 * extraction, which leaves the nodes without children out, is 3-5x faster
 * (1M points at depth 10: 65 against 330 ms on the H200). Else the
 * parameter as given. */
static inline int gt_pr_coarse_levels(const gt_pr_params *p, size_t n_sparse, size_t n)
{
    if (p->coarse_levels >= 0) return p->coarse_levels;
    return n_sparse >= n / 10 && n_sparse > 0 ? GT_PR_MAX_DEPTH : 1;
}
/* the extraction tree's mode (pr_adapt.h, gt_pr_tree_sub's virt) for K
 * (gt_pr_coarse_levels): with coarse blocks one level above D only, nodes
 * without children count as subdivided down to D */
static inline int gt_pr_tree_virtual(int K) { return K <= 1; }
/* the first level that may hold a coarse block for K: the full depth, at
 * most K levels above D (D + 1: none) */
static inline int gt_pr_coarse_top(const gt_pr_params *p, int K)
{
    const int F = gt_pr_full_depth(p), D = p->depth;
    if (p->uniform_mesh || K <= 0) return D + 1;
    return D - K > F ? D - K : F;
}

/* CG iterations at level d of a solve from level F to D (both paths):
 * --iters at every level when given; else the cg solver's cap of 200, and
 * for the cascade 24 at the finest level, which starts from the coarser
 * levels' solution with mostly high-frequency error left, the part CG
 * removes first, and holds two thirds of the nodes; 48 below it (and in a
 * one-level solve).
 * Measured with the Jacobi preconditioner (default against every level
 * doubled, max change of the mesh in finest cells): 48/24/12 (first, middle,
 * finest) left 0.026 (bunny, depth 8) and 0.051 (noisy disk, 1M points,
 * depth 10); 48/48/24 leaves at most 3e-4 on the depth-8 bunny, noisy bumpy
 * sphere, torus and disk, 3.8e-4 and 9.0e-4 on the 1M-point bumpy sphere and
 * noisy disk at depth 10 (issue 17: at most 1e-3). */
static inline int gt_pr_level_iters(const gt_pr_params *p, int d, int F, int D)
{
    if (p->iters > 0) return p->iters;
    if (p->solver == GT_PR_SOLVER_CG) return 200;
    return d == D && d > F ? 24 : 48; /* a one-level solve starts from nothing */
}
/* The default cascade stops each level on its residual as well as its
 * count: past gt_pr_level_iters a level goes on while its relative residual
 * |b - A x| / |b| is above its stop, up to four times the count. The finest
 * level's stop is p->finest_residual (--residual, default
 * GT_PR_FINEST_RESIDUAL); the levels below it stop GT_PR_COARSE_FACTOR times
 * lower, because a coarser level's error passes whole into the finer levels'
 * right-hand sides as smooth error, the part their Jacobi-CG removes slowest.
 * --iters, --solver cg and a one-level solve keep their counts (both paths).
 * Dense inputs meet the stops in about their counts (1M points at depth 10);
 * where points are sparse for the depth the levels converge slowly, and the
 * stops hold the mesh within 1e-3 finest cell of the converged one (the
 * bunny's 35k points at depth 10: 4.5e-4; with the finest level's stop
 * alone 0.0028; scripts/bench/RESULTS.md, 2026-11-28, ninth). */
#define GT_PR_FINEST_RESIDUAL 3e-5
#define GT_PR_COARSE_FACTOR 30
static inline double gt_pr_level_residual(const gt_pr_params *p, int d, int F, int D)
{
    if (p->iters > 0 || p->solver != GT_PR_SOLVER_MULTIGRID || p->finest_residual <= 0 || F == D) return 0;
    return d == D ? p->finest_residual : p->finest_residual / GT_PR_COARSE_FACTOR;
}
static inline int gt_pr_level_iters_max(const gt_pr_params *p, int d, int F, int D)
{
    const int n = gt_pr_level_iters(p, d, F, D);
    return gt_pr_level_residual(p, d, F, D) > 0 ? 4 * n : n;
}
/* The screening's weight at level d against the finest level's: 1 at D and
 * D - 1, halved with each level below (Kazhdan & Hoppe's 2^d per level,
 * PoissonRecon's adaptive exponent 1, from one level up). Every sample
 * weighs the same, the samples' mean area (PoissonRecon's rule; solve.c,
 * screen_area), but for those far sparser than the median (strays:
 * pr_bspline.h, gt_pr_screen_weight). Stray samples, sparse and so of large area, pinned chi to
 * the iso-value around them when each weighed its own area at every level:
 * 2,000 random points about a sphere of 100,000 (depth 8) grew 330 closed
 * blobs, 500 grew 212; equal weights at every level left 6, bubbles inside
 * the sphere among them; these rules none. Halving from the finest level
 * down (2^(d - D)) moved the surface of clean points (the disk's mean
 * distance 0.99x -> 1.01x PoissonRecon's, the bunny's Chamfer 0.90x ->
 * 1.00x). What equal weights cost: where the sampling is very uneven the
 * surface fits the sparse part more loosely (a thin disk sampled 20 times
 * more densely at one end: max distance 1.69x PoissonRecon's, 1.14x with
 * each sample's area; that area at the finest two levels only gave 1.26x
 * but blobs again at depth 7, where those are most of the levels, before
 * the strays' weight of pr_bspline.h; with it and clamped at 8 times the
 * median, 1.29x and no blobs: gt_pr_screen_own_level).
 * RESULTS.md, 2026-11-29, eighteenth. */
static inline double gt_pr_screen_level(int d, int D)
{
    return d < D - 1 ? 1.0 / (double)((uint64_t)1 << (D - 1 - d)) : 1.0;
}
/* whether at level d each sample screens with its own area (clamped at 8
 * times the median: pr_bspline.h, gt_pr_screen_own) rather than the mean
 * area: at D - 1 and D. There the sparse part of an unevenly sampled
 * surface is fitted as closely as the dense part (the thin disk's max
 * distance 1.69x -> 1.29x PoissonRecon's; at D alone 1.70x, the sparse
 * part's samples splat coarser; at every level, halved below D - 1, 1.22x
 * but 3 blobs from 2,000 strays about 100,000 points at depth 8); the
 * clamp keeps the strays from growing blobs. */
static inline bool gt_pr_screen_own_level(int d, int D)
{
    return d >= D - 1;
}

/* Input: n points, xyz + normals (+ rgb 0..255 when colors != NULL). */
typedef struct gt_pr_input {
    size_t n;
    const float *xyz;
    const float *nrm;
    const float *rgb; /* may be NULL */
} gt_pr_input;

typedef struct gt_pr_mesh {
    size_t nvert, ntri;
    float *xyz;      /* nvert*3 */
    float *density;  /* nvert, or NULL */
    float *rgb;      /* nvert*3 (0..255), or NULL */
    int32_t *tri;    /* ntri*3 */
    void *dev;       /* CUDA, with mesh_on_device: xyz and tri still on the device (then both NULL) */
    double iso;
    size_t nnodes;   /* octree size, for reports */
    size_t skipped_nonfinite, skipped_zero_normal;
    /* chi on a regular grid (volume_depth > 0) */
    int vol_n;       /* samples per axis */
    float *vol;      /* vol_n^3, x fastest */
    double vol_origin[3], vol_spacing;
    /* the points' origin (gt_pr_points.origin): xyz and vol_origin are
     * relative to it; the writers add it back (the PLY's x y z then double) */
    double origin[3];
} gt_pr_mesh;

/* Whole pipeline on the chosen device (GT_DEVICE_CPU or GT_DEVICE_CUDA). */
gt_status gt_poisson_reconstruct(const gt_pr_input *in, const gt_pr_params *p, gt_device_kind dev,
                                 gt_timings *tm, gt_pr_mesh *out);
void gt_pr_mesh_free(gt_pr_mesh *m);
/* A mesh left on the device (m->dev) brought to m->xyz and m->tri; a no-op
 * for a host mesh. */
gt_status gt_pr_mesh_to_host(gt_pr_mesh *m);
/* The mesh as binary little-endian PLY, with density and colours as p asks
 * (atomic). A mesh on the device goes to the file in pieces through pinned
 * buffers, each download overlapping the write of the piece before;
 * *download_wait_ms (may be NULL) gets how long the writer waited for them
 * (0 for a host mesh). */
gt_status gt_pr_write_mesh_ply(const char *path, const gt_pr_params *p, const gt_pr_mesh *m, double *download_wait_ms);
/* m->vol as NRRD (float32 raw, space directions/origin, key iso), atomically */
gt_status gt_pr_write_volume(const char *path, const gt_pr_mesh *m);

/* ------------------------------------------------------------------ job
 * What the poissonrec program does, for any C program: read oriented points
 * from a PLY file, reconstruct on the chosen device, write the mesh (and chi)
 * atomically, with the program's warnings and -v line on stderr (common/log.h),
 * progress bars and per-stage timings. For example:
 *
 *     #include "common/log.h"             // gt_report
 *     #include "poisson/poisson.h"
 *     ...
 *     gt_poisson_job job;
 *     gt_poisson_job_init(&job);          // gt_pr_params_default, auto device
 *     job.input = "scan.ply";
 *     job.output = "mesh.ply";
 *     job.params.depth = 9;
 *     job.params.want_density = true;
 *     gt_timings tm;
 *     gt_timings_init(&tm);
 *     gt_poisson_job_result res;
 *     gt_status s = gt_poisson_reconstruct_job(&job, &tm, &res);
 *     if (s != GT_OK) return gt_report(s);
 *     printf("%zu triangles\n", res.ntri);
 *     gt_timings_print(&tm, stderr, "poisson");
 *     gt_device_shutdown();               // before exit, as the program does */
typedef struct gt_poisson_job {
    const char *input;       /* PLY with x y z nx ny nz (and red green blue for want_colors); "-": stdin */
    const char *output;      /* the mesh, binary little-endian PLY with the density and colour
                                properties asked for; "-": stdout */
    const char *volume;      /* NULL (default), or chi as NRRD (gt_pr_write_volume) */
    gt_pr_params params;     /* gt_pr_params_default; with a volume, volume_depth <= 0 means
                                min(depth, 7) (without one it is ignored); progress is the job's */
    gt_device_kind device;   /* default auto; resolved with gt_device_choose */
    int gpu;                 /* default 0 */
    bool progress;           /* default true: bars where gt_progress_enabled() */
} gt_poisson_job;
void gt_poisson_job_init(gt_poisson_job *job);

typedef struct gt_poisson_job_result {
    gt_device_kind device;   /* GT_DEVICE_CPU or GT_DEVICE_CUDA */
    size_t npoints;          /* points in the file */
    size_t skipped_nonfinite, skipped_zero_normal;
    size_t nnodes;           /* octree nodes */
    double iso;
    size_t nvert, ntri;      /* the mesh written */
    bool overlapped;         /* CUDA: the mesh went device -> file in pieces ("download+write (overlapped)") */
    double download_wait_ms; /* then: how long the writer waited for downloads */
} gt_poisson_job_result;

/* The whole job: stages "read", the pipeline's stages and "write" (on CUDA,
 * where the mesh is written from the device: "download+write (overlapped)"
 * and "write" for the volume alone) are added
 * to tm (may be NULL). Errors in the data name the input file. Each output is
 * written atomically (no partial file), the mesh before the volume. */
gt_status gt_poisson_reconstruct_job(const gt_poisson_job *job, gt_timings *tm, gt_poisson_job_result *res);

/* ------------------------------------------- the stages, exposed for tests */
typedef struct gt_pr_state {
    gt_pr_octree oct;
    double center[3], side;  /* unit coords u = (p - center)/side + 0.5 */
    float *u;                /* sorted points in unit coords (npts*3) */
    float *n;                /* sorted normals */
    float *area;             /* per sorted point: sample area weight */
    float *sw;               /* per sorted point: its weight in the screening and the iso-value
                              * (gt_pr_screen_weight: 1 but for samples far sparser than the median) */
    int density_depth;
    double *wdens;           /* per node at density_depth (indexed by node), else 0 */
    float *rgb;              /* sorted point colours (NULL without --colors) */
    double *cdens;           /* 3 * nnodes, channel-major: colour sums like wdens */
    double *coef;            /* solution per node */
    int coef_lmin;           /* the solve's first level (the full depth): the levels below hold no
                              * coefficients, so chi is evaluated from this one (0 before a solve) */
    double *rhs;             /* divergence per node */
    uint8_t *tree;           /* per node: the extraction tree's flags (pr_adapt.h, GT_PR_T_*: coarse
                              * blocks are the nodes with GT_PR_T_LEAF), or NULL for none */
    int coarse_levels;       /* the solve's --coarse-levels (gt_pr_coarse_levels), for the extraction */
    double alpha;            /* screening weight in the energy */
    bool eval_on_gpu;        /* extraction evaluates chi at the corners on the GPU */
    void *dev;               /* CUDA path: the device-resident octree and solution, or NULL */
    double iso;
} gt_pr_state;

/* The usable points of an input, normalised into the unit cube
 * (gt_pr_normalize): the first step of both paths. poissonrec makes them
 * while the CUDA context starts. */
typedef struct gt_pr_points {
    float *u, *nrm, *rgb; /* m*3 each (rgb: NULL without p->want_colors) */
    size_t m;
    double center[3], side;
    /* zero from gt_pr_points_make; where the input's xyz were relative to an
     * origin (points far from 0, UTM say, read in double: gt_points_read_table),
     * the caller sets it, and the mesh carries it (gt_pr_mesh.origin) */
    double origin[3];
    size_t skipped_nonfinite, skipped_zero;
} gt_pr_points;
/* gt_pr_normalize of `in` with p's scale; its time is stage "normalise" */
gt_status gt_pr_points_make(const gt_pr_input *in, const gt_pr_params *p, gt_timings *tm, gt_pr_points *out);
void gt_pr_points_free(gt_pr_points *pts);
/* gt_poisson_reconstruct from points made by gt_pr_points_make. The arrays
 * of pts are freed (and set to NULL) as soon as the pipeline is done with
 * them; the counts, centre and side stay. */
gt_status gt_poisson_reconstruct_points(gt_pr_points *pts, const gt_pr_params *p, gt_device_kind dev,
                                        gt_timings *tm, gt_pr_mesh *out);

/* Build the octree of the points and sort them into it, on the CPU (then
 * gt_pr_solve_cpu solves). Frees pts' arrays as gt_poisson_reconstruct_points
 * says. */
gt_status gt_pr_prepare_cpu(gt_pr_points *pts, const gt_pr_params *p, gt_timings *tm, gt_pr_state *s);
gt_status gt_pr_solve_cpu(gt_pr_state *s, const gt_pr_params *p, gt_timings *tm);
/* colour sums per density-depth node (s->cdens) from s->rgb; needs wdens' depth */
gt_status gt_pr_colors_cpu(gt_pr_state *s);
/* s->iso: the average of chi at the points, summed per depth-D leaf
 * (pr_iso.h; not at the leaves' means as PoissonRecon does, which moves the
 * level set off a curved surface), from s->u, s->coef and the octree's point
 * ranges */
gt_status gt_pr_iso_cpu(gt_pr_state *s);
/* chi at unit-cube point q (sum over all levels). */
double gt_pr_eval(const gt_pr_state *s, const double q[3]);
/* value at unit point q of the functions of levels lmin..lmax with per-node
 * values arr (descending the octree; binary search only where a cell does not
 * exist): chi with arr = coef, 0, depth */
double gt_pr_eval_levels(const gt_pr_octree *o, const double q[3], const double *arr, int lmin, int lmax);

/* ----------------------------------------------- extraction: the mesh
 * Marching cubes on depth-D cells; the mesh is defined with no dependence on
 * a visiting order, so that the CPU reference and the CUDA path
 * (gt_pr_extract_cuda) produce the same one:
 *  - corners: points of the (2^D+1)^3 grid, key gt_pr_morton(x, y, z); a
 *    corner is inside when chi < iso.
 *  - cells: the depth-D nodes' cells, then in rounds: the face neighbours
 *    (inside the grid) of the last round's mixed cells (inside and outside
 *    corners) across faces with mixed corners, that are not in the set yet.
 *    This is the fixed point of the growth; gt_pr_extract_cell_cap(number of
 *    depth-D nodes) bounds the set: a round that would pass it keeps its
 *    first cells in key order (and the mesh may be open). Cells in key order.
 *  - vertices: one per crossed cube edge (one end inside, one not), edge key
 *    GT_PR_EKEY(corner key of its lower end, direction mask 1, 2 or 4),
 *    numbered by increasing edge key; at the root of chi - iso on the edge
 *    (gt_pr_edge_root, pr_mc.h: chi is quadratic along a depth-D edge, so its
 *    values at the ends and the middle give the exact root), position lower +
 *    t (upper - lower) in corner units, u = ldexp(that, -D), stored as
 *    (float)((u - 0.5) * side + center), all in double.
 *  - triangles: cells in key order, each its triangles from the marching
 *    cubes table of lib/mc (gt_mc_table_get, "in" = inside: on a face with
 *    diagonal inside corners the inside corners are separated, a rule of the
 *    face's corners alone, so the two cells sharing it agree and the mesh is
 *    closed and manifold), oriented with the normal towards increasing chi.
 *  - iso: the average of chi at the points, each weighted by its sw (strays
 *    less; gt_pr_iso_cpu).
 *  - coarse blocks (s->tree's leaves above level D, unless
 *    p->uniform_mesh): the cells inside a coarse block make nothing (mask
 *    taken as 0); the block makes its loops' triangles instead (pr_adapt.h),
 *    after every cell's, blocks in node order (level, then key). Their
 *    vertices are depth-D edge vertices as above (in the same numbering;
 *    chi at an edge end that is no cell's corner is evaluated), and for
 *    loops without a fan root one added vertex each, at the mean of the
 *    loop's vertex positions (summed in double in loop order, divided,
 *    rounded to float), numbered after the edge vertices in block and loop
 *    order. */
#define GT_PR_EKEY(corner_key, mask) ((uint64_t)(corner_key) << 3 | (uint64_t)(mask))
/* a cell's local edge: lower local corner a (bits x, y, z) and mask m, a & m == 0 */
#define GT_PR_LEDGE(a, m) ((a) | (m) << 3)
size_t gt_pr_extract_cell_cap(size_t nfine);

/* The mesh (xyz, tri, iso) on the CPU, then gt_pr_mesh_post. */
gt_status gt_pr_extract_cpu(const gt_pr_state *s, const gt_pr_params *p, gt_pr_mesh *out);
/* The mesh alone (xyz, tri, iso; nothing else of out is touched). */
gt_status gt_pr_extract_mesh_cpu(const gt_pr_state *s, const gt_pr_params *p, gt_pr_mesh *out);
/* The same, also giving the vertices' edge keys (nvert of them, malloc'ed)
 * through *vkeys (UINT64_MAX for the vertices coarse blocks add): for
 * tests. */
gt_status gt_pr_extract_mesh_keys_cpu(const gt_pr_state *s, const gt_pr_params *p, gt_pr_mesh *out,
                                      uint64_t **vkeys);
/* On the host, from out->xyz/tri: density (want_density or trim), colours,
 * trim, and the volume, as asked by p. Frees the mesh on failure. */
gt_status gt_pr_mesh_post(const gt_pr_state *s, const gt_pr_params *p, gt_pr_mesh *out);
void gt_pr_state_free(gt_pr_state *s);
/* s->u, s->n (and s->rgb when rgb != NULL) in the octree's key order */
gt_status gt_pr_sort_points(gt_pr_state *s, const float *u, const float *nn, const float *rgb);

#ifdef __cplusplus
}
#endif
#endif
