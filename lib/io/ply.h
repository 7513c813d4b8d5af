/* PLY reader and writer (ascii, binary_little_endian, binary_big_endian).
 *
 * Reading loads the vertex element's scalar properties (any type, converted
 * to float) into one row-major array, and the face element's first list
 * property ("vertex_indices" or "vertex_index") as polygons. Other elements
 * are read past and dropped; list properties inside the vertex element are
 * skipped. Works on pipes ("-" = stdin). A broken file gives GT_ERR_DATA and
 * a message naming the file and line (header, ascii) or byte offset (binary). */
#ifndef GT_PLY_H
#define GT_PLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gt_ply_format {
    GT_PLY_ASCII = 0,
    GT_PLY_BINARY_LE = 1,
    GT_PLY_BINARY_BE = 2
} gt_ply_format;

typedef enum gt_ply_type {
    GT_PLY_INT8, GT_PLY_UINT8, GT_PLY_INT16, GT_PLY_UINT16,
    GT_PLY_INT32, GT_PLY_UINT32, GT_PLY_FLOAT32, GT_PLY_FLOAT64
} gt_ply_type;

typedef struct gt_ply_prop {
    char name[64];
    gt_ply_type type; /* type in the file (read) or to write */
} gt_ply_prop;

/* A vertex table plus optional polygons. */
typedef struct gt_ply_mesh {
    size_t nvert;
    int nprops;
    gt_ply_prop *props;     /* nprops vertex properties */
    float *vdata;           /* nvert * nprops, row-major: vdata[v*nprops + p] */
    size_t nface;
    uint32_t *face_start;   /* nface + 1 offsets into face_idx (NULL when nface == 0) */
    int32_t *face_idx;      /* face_start[nface] vertex indices */
    gt_ply_format format;   /* format it was read in */
    char **comments;        /* comment lines read (without "comment "), ncomments of them */
    int ncomments;
    /* NULL, or nprops origins: property p's value is origin[p] +
     * vdata[v*nprops + p], exactly as far as float allows near the origin.
     * Only readers asked to keep coordinates relative (gt_points_read_table's
     * nrel) set it; gt_ply_read never does. */
    double *origin;
} gt_ply_mesh;

/* Read a whole PLY (vertex + face elements). Face indices are checked to be
 * within [0, nvert). */
gt_status gt_ply_read(const char *path, gt_ply_mesh *m);

/* Column of vertex property `name`, or -1. */
int gt_ply_find(const gt_ply_mesh *m, const char *name);

/* Copy the named properties into `out` (nvert * k floats, row-major). When a
 * property is missing: GT_ERR_DATA naming all missing ones and the file. */
gt_status gt_ply_gather(const gt_ply_mesh *m, const char *path, const char *const *names, int k,
                        float *out);

/* True when every face is a triangle. */
bool gt_ply_all_triangles(const gt_ply_mesh *m);

/* Write `m`: vertex properties with their `type` (float32/uint8 typical; any
 * type allowed), faces as "property list uchar int vertex_indices".
 * Atomic (temp file + rename); "-" = stdout. */
gt_status gt_ply_write(const char *path, const gt_ply_mesh *m, gt_ply_format fmt);

/* Convenience writer for a triangle mesh: xyz (nvert*3), optional normals
 * (nvert*3, may be NULL), optional extra float columns (nvert*nextra,
 * names in extra_names), tris (ntri*3). */
gt_status gt_ply_write_trimesh(const char *path, size_t nvert, const float *xyz,
                               const float *normals, int nextra, const char *const *extra_names,
                               const float *extra, size_t ntri, const int32_t *tris,
                               gt_ply_format fmt);
/* The same for a mesh computed relative to origin (3 doubles; NULL: as
 * gt_ply_write_trimesh): x, y, z written as float64, origin + xyz. */
gt_status gt_ply_write_trimesh_at(const char *path, const double *origin, size_t nvert, const float *xyz,
                                  const float *normals, int nextra, const char *const *extra_names,
                                  const float *extra, size_t ntri, const int32_t *tris, gt_ply_format fmt);

/* A triangle mesh that arrives in pieces (from GPU memory, say), for
 * gt_ply_write_trisrc. The writer asks for vertex rows [v0, v0+n) and then
 * triangles [t0, t0+n) in increasing order, `chunk` rows at a time (0: 1M),
 * all vertices before any triangle. The pointers an answer gives stay valid
 * until the next call (of either function) returns, so a source can fetch
 * piece k+1 while the writer formats piece k; the writer formats a piece
 * completely before it asks for the next one. Columns: xyz, then normals
 * (when `normals`), then nextra extra float columns named extra_names. */
typedef struct gt_ply_trisrc {
    size_t nvert, ntri;
    bool normals;
    int nextra;
    const char *const *extra_names;
    size_t chunk;
    /* NULL, or added to x, y, z (in double) as they are written: a mesh
     * computed relative to an origin (gt_ply_mesh.origin) written where it
     * belongs */
    const double *origin;
    bool xyz_double; /* x, y, z as float64 properties (with origin added) */
    /* xyz and nrm: n*3 floats; extra: n*nextra floats (NULL when nextra is 0) */
    gt_status (*verts)(void *ctx, size_t v0, size_t n, const float **xyz, const float **nrm,
                       const float **extra);
    /* n*3 vertex indices */
    gt_status (*tris)(void *ctx, size_t t0, size_t n, const int32_t **tris);
    void *ctx;
} gt_ply_trisrc;

/* Write the mesh of `src` as a PLY (the same bytes gt_ply_write_trimesh
 * gives). Binary output formats each piece on several threads and hands it
 * to an output thread (the parallel mmap appender, common/mapout.h, for
 * regular files), which writes piece k while piece k+1 is fetched and
 * formatted; ascii is printed in order on one thread. Atomic; "-" = stdout.
 * An error of a source callback is returned as it is (its message kept). */
gt_status gt_ply_write_trisrc(const char *path, const gt_ply_trisrc *src, gt_ply_format fmt);

/* Build an empty mesh with given vertex properties (all float32 unless
 * types is non-NULL) and room for nvert vertices. */
gt_status gt_ply_mesh_alloc(gt_ply_mesh *m, size_t nvert, int nprops, const char *const *names,
                            const gt_ply_type *types);
void gt_ply_free(gt_ply_mesh *m);

const char *gt_ply_type_name(gt_ply_type t);

#ifdef __cplusplus
}
#endif
#endif
