/* Marching cubes with shared vertices: an indexed, watertight mesh.
 *
 * Conventions (CPU reference and CUDA path compute the same function):
 * - Values are float32 (other voxel types are converted on load; 8/16-bit
 *   integers exactly). A corner is "in" when value >= iso; NaN is never in
 *   (NaN is "outside", the low side). One rule, used for topology everywhere.
 * - One vertex per grid edge whose two corners differ, identified by the edge
 *   id 3*(i + X*(j + Y*k)) + axis of its lower point (i,j,k); vertices are
 *   numbered in increasing edge id, so every path numbers them identically.
 * - The vertex lies at t = (iso - v0) / (v1 - v0) along the edge, clamped to
 *   [GT_MC_TMIN, 1 - GT_MC_TMIN] so that iso-valued corners give no zero-length
 *   edges (t = 0.5 when a value is not finite).
 * - Triangles come from a 256-case table derived at run time from a face rule
 *   that looks only at a face's four corners (on an ambiguous face the two
 *   "in" corners are separated), so neighbouring cubes agree on every shared
 *   face: the mesh is closed and manifold wherever it does not reach the
 *   volume's border (see mc_table.c).
 * - Triangles are wound so that their normals point toward decreasing field
 *   values (from "in" to "out") in world space; flip reverses both winding and
 *   normals. Normals: minus the central-difference gradient (one-sided at the
 *   border) interpolated along the edge, in world units, normalised.
 * - A volume thinner than 2 points along an axis has no voxels: empty mesh. */
#ifndef GT_MC_H
#define GT_MC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/device.h"
#include "common/status.h"
#include "common/timer.h"
#include "io/ply.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GT_MC_MAXTRI 12
#define GT_MC_TMIN 1e-3

/* The case table: for cube index c (bit n set when corner n is in, corner
 * n = dx + 2*dy + 4*dz), ntri[c] triangles of edge numbers tri[c][3*t..].
 * Edge e: axis a = e >> 2; along the two other axes u < v its offsets are
 * (e & 1, (e >> 1) & 1). */
typedef struct gt_mc_table {
    uint8_t ntri[256];
    uint8_t tri[256][GT_MC_MAXTRI * 3];
    int bad_cases; /* cases where no face-diagonal-free triangulation exists (0 expected) */
} gt_mc_table;
const gt_mc_table *gt_mc_table_get(void);

typedef struct gt_mc_params {
    double iso;
    bool normals;
    bool flip;
    double dir[3][3];   /* space directions (rows: axis 0,1,2) */
    double origin[3];
} gt_mc_params;
/* identity directions, zero origin */
void gt_mc_params_init(gt_mc_params *p, double iso);

/* Derived constants shared by both paths. */
typedef struct gt_mc_geom {
    int64_t dims[3];
    float isof;          /* smallest float f with (double)f >= iso: v >= isof <=> v >= iso */
    double iso;
    double dir[3][3];
    double origin[3];
    double dinv[3][3];   /* inverse of dir (gradient to world) */
    double nsign;        /* -1: normals toward decreasing values, +1 with flip */
    bool reverse;        /* reverse triangle winding (flip xor left-handed dir) */
    bool normals;
} gt_mc_geom;
gt_status gt_mc_geom_init(gt_mc_geom *g, const int64_t dims[3], const gt_mc_params *p);

/* An indexed triangle mesh (host). */
typedef struct gt_mc_mesh {
    size_t nvert, ntri;
    float *xyz;          /* nvert*3 */
    float *nrm;          /* nvert*3 or NULL */
    int32_t *tris;       /* ntri*3 */
    size_t cap_v, cap_t;
} gt_mc_mesh;
void gt_mc_mesh_free(gt_mc_mesh *m);
/* make room for nv more vertices and nt more triangles (fails past INT32_MAX vertices) */
gt_status gt_mc_mesh_reserve(gt_mc_mesh *m, size_t nv, size_t nt, bool normals);

/* One z-slab of the extraction (both paths have one). `buf` holds planes
 * [zb, zb + nzb) of the volume (x fastest); the slab owns point planes
 * [z0, z1): the vertices of edges starting there and the triangles of voxels
 * whose lower corner is there. Needs zb <= max(z0-1, 0) and
 * zb + nzb >= min(z1+2, Z). Vertices get global numbers from m->nvert on;
 * appends to m. */
gt_status gt_mc_slab_cpu(const float *buf, int64_t zb, int64_t nzb, int64_t z0, int64_t z1,
                         const gt_mc_geom *g, gt_mc_mesh *m);

/* Whole volume in memory (float32, X*Y*Z). */
gt_status gt_mc_extract(gt_device_kind dev, const float *vol, const int64_t dims[3],
                        const gt_mc_params *p, gt_mc_mesh *m, gt_timings *tm);

/* Streamed: read(ctx, z0, nz, dst) fills planes [z0, z0+nz) as float32,
 * called with increasing z0. Slabs are sized so that the working set stays
 * under max_mem bytes (device memory on CUDA, host buffer on CPU; 0 = one
 * pass when it fits). The mesh is the same as one pass gives. */
typedef gt_status (*gt_mc_read_fn)(void *ctx, int64_t z0, int64_t nz, float *dst);
/* A volume already in host memory as the source of the streamed calls:
 * read = gt_mc_read_host, ctx = a gt_mc_host_volume. On CUDA its planes go
 * to the device straight from it, each slab in one copy (at the bus's speed
 * where the memory is registered, gt_cu_host_register), not through the
 * pinned staging slots. */
typedef struct gt_mc_host_volume {
    const float *vol; /* float32, x fastest, whole planes in z order */
    size_t plane;     /* voxels per plane: X*Y */
} gt_mc_host_volume;
gt_status gt_mc_read_host(void *ctx, int64_t z0, int64_t nz, float *dst);
gt_status gt_mc_extract_stream(gt_device_kind dev, const int64_t dims[3], gt_mc_read_fn read,
                               void *ctx, const gt_mc_params *p, size_t max_mem,
                               int64_t slab_planes /* 0 = from max_mem */, gt_mc_mesh *m,
                               gt_timings *tm);

/* The streamed extraction and the PLY of its mesh in one call (what
 * gt_mc_extract_stream then gt_ply_write_trimesh would write, same bytes).
 * On CUDA with the whole volume in one pass the mesh does not come to the
 * host whole: it goes from device memory to the file in pieces through
 * pinned buffers, the download of each piece running while the piece before
 * is formatted and written (out->overlapped). The counts are set once known,
 * also when the write then fails. Timings: "download+write (overlapped)" on
 * that path, else the slab downloads in "transfers" and the write in
 * "file I/O". */
typedef struct gt_mc_ply_result {
    size_t nvert, ntri;
    double extract_ms;        /* extraction incl. slab reads */
    bool overlapped;          /* the mesh went device -> file in pieces */
    double download_wait_ms;  /* (overlapped) time the writer waited for downloads */
    size_t download_bytes;    /* (overlapped) bytes downloaded */
} gt_mc_ply_result;
gt_status gt_mc_extract_stream_ply(gt_device_kind dev, const int64_t dims[3], gt_mc_read_fn read, void *ctx,
                                   const gt_mc_params *p, size_t max_mem, int64_t slab_planes, const char *path,
                                   gt_ply_format fmt, gt_mc_ply_result *out, gt_timings *tm);

/* Most device memory held at once by libcore's CUDA allocations (0 without CUDA). */
size_t gt_mc_device_peak_bytes(void);

/* Soup: each triangle gets its own three vertices (for comparison output). */
gt_status gt_mc_mesh_to_soup(const gt_mc_mesh *m, gt_mc_mesh *soup);

/* ---- the mcmesh job (mc_job.c): what the program does, as one call ----
 * Fill a gt_mc_job (defaults from gt_mc_job_init: iso from the NRRD's "iso"
 * key, no normals, binary PLY, one pass when it fits, device auto) and call
 * gt_mc_extract_job. It chooses the device, streams the volume from the file
 * in z-slabs (within max_gpu_mem on the GPU), writes the PLY atomically (no
 * partial file on failure), says why a mesh is empty (a notice) and, with
 * `timings`, prints the stage table on stderr, as mcmesh does.
 *
 *     gt_mc_job j;
 *     gt_mc_job_init(&j);
 *     j.input = "chi.nrrd";
 *     j.output = "iso.ply";
 *     j.have_iso = true, j.iso = 0.5;
 *     j.normals = true;
 *     if (gt_mc_extract_job(&j) != GT_OK) fprintf(stderr, "%s\n", gt_errmsg());
 *
 *     // a headerless raw volume: its size and voxel type must be given
 *     j.input = "ct_512x512x300.u16.raw";
 *     j.have_dims = true, j.dims[0] = 512, j.dims[1] = 512, j.dims[2] = 300;
 *     j.type = GT_VOL_UINT16;              // io/volume.h
 *     j.have_spacing = true, j.spacing[2] = 2.5;
 *     gt_status st = gt_mc_extract_job(&j); */
typedef struct gt_mc_job {
    const char *input;   /* NRRD, or raw (with dims and type); "-" = stdin */
    const char *output;  /* PLY; "-" = stdout */
    bool have_iso;       /* else the NRRD's "iso" key (GT_ERR_USAGE when it has none) */
    double iso;
    bool normals;        /* per-vertex normals */
    bool flip;           /* reverse triangles and normals */
    bool soup;           /* 3 vertices per triangle instead of shared ones */
    bool ascii;          /* ascii PLY instead of binary little endian */
    size_t max_gpu_mem;  /* working-set budget in bytes; 0: one pass when it fits */
    /* raw input (ignored for a NRRD) */
    bool have_dims, have_spacing, have_origin;
    int64_t dims[3];     /* voxels, x fastest */
    int type;            /* gt_voltype, or -1 */
    double spacing[3];   /* voxel spacing (1,1,1) */
    double origin[3];    /* world position of voxel (0,0,0) */
    gt_device_kind device; /* auto, cuda or cpu */
    int gpu;             /* CUDA device index */
    bool timings;        /* stage table, extraction and total time on stderr */
} gt_mc_job;
void gt_mc_job_init(gt_mc_job *j);
/* j->type from a sample type's name, as the volume reader spells them
 * (uint8, int16, float32, ... and NRRD's aliases); GT_ERR_USAGE naming opt. */
gt_status gt_mc_job_set_type(gt_mc_job *j, const char *opt, const char *name);
/* Before any work, as mcmesh does (common/guard.h): the input (and a NRRD's
 * detached data file) can be opened and is not the output, the output's
 * folder exists and, unless format_given, its name is a PLY's. */
gt_status gt_mc_job_check_paths(const gt_mc_job *j, bool format_given);
gt_status gt_mc_extract_job(const gt_mc_job *j);

#ifdef __cplusplus
}
#endif
#endif
