/* The job of poissonrec, for any C program (see poisson.h): oriented points
 * from a PLY file to a mesh PLY file (and chi as NRRD), with the program's
 * device choice, warnings, progress, per-stage timings and atomic output. */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/output.h"
#include "common/progress.h"
#include "common/trace.h"
#include "io/ply.h"
#include "io/points.h"
#include "poisson/poisson.h"

void gt_poisson_job_init(gt_poisson_job *job)
{
    memset(job, 0, sizeof job[0]);
    gt_pr_params_default(&job->params);
    job->device = GT_DEVICE_AUTO;
    job->progress = true;
}

static const char *const xyz_names[] = {"x", "y", "z"};

/* xyz (relative to origin) and normals (and red green blue when
 * p->want_colors) of the points. */
static gt_status gather_points(const gt_ply_mesh *pm, const char *in_path, const gt_pr_params *p, float **xyz,
                               double origin[3], float **nrm, float **rgb)
{
    static const char *const *const pn = xyz_names, *const nn[] = {"nx", "ny", "nz"},
                                    *const cn[] = {"red", "green", "blue"};
    *xyz = malloc(pm->nvert * 3 * sizeof(float) + 4), *nrm = malloc(pm->nvert * 3 * sizeof(float) + 4);
    if (!*xyz || !*nrm) return gt_fail(GT_ERR_RUNTIME, "out of memory");
    GT_TRY(gt_ply_gather(pm, in_path, pn, 3, *xyz));
    for (int a = 0; a < 3; a++) origin[a] = pm->origin ? pm->origin[gt_ply_find(pm, pn[a])] : 0.0;
    gt_status st = gt_ply_gather(pm, in_path, nn, 3, *nrm);
    if (st != GT_OK) {
        gt_errmsg_prefix("no normals: poissonrec needs oriented points");
        return st;
    }
    /* a NaN or infinite point or normal means nothing here: bad data, named */
    GT_TRY(gt_points_check_finite(*xyz, pm->nvert, 3, pn, in_path));
    GT_TRY(gt_points_check_finite(*nrm, pm->nvert, 3, nn, in_path));
    if (p->want_colors) {
        if (gt_ply_find(pm, "red") < 0 || gt_ply_find(pm, "green") < 0 || gt_ply_find(pm, "blue") < 0)
            return gt_fail_at(GT_ERR_DATA, in_path, 0,
                              "--colors: the points have no colours (PLY vertex properties red green blue, or the "
                              "7th to 9th numbers of a text line)");
        *rgb = malloc(pm->nvert * 3 * sizeof(float) + 4);
        if (!*rgb) return gt_fail(GT_ERR_RUNTIME, "out of memory");
        GT_TRY(gt_ply_gather(pm, in_path, cn, 3, *rgb));
    }
    return GT_OK;
}

/* The reconstruction of the normalised points, its report lines and the outputs. */
static gt_status reconstruct_write(const gt_poisson_job *job, const gt_pr_params *p, size_t npoints,
                                   gt_pr_points *pts, gt_timings *tm, gt_poisson_job_result *res)
{
    gt_pr_mesh mesh;
    memset(&mesh, 0, sizeof mesh);
    gt_status st = gt_poisson_reconstruct_points(pts, p, res->device, tm, &mesh);
    gt_trace("job done");
    if (st != GT_OK && st != GT_ERR_GPU) /* a GPU failure is not the file's */
        gt_errmsg_prefix("%s", gt_in_name(job->input));
    if (st == GT_OK) {
        if (mesh.skipped_nonfinite)
            gt_warn("skipped %zu points with NaN/Inf coordinates or normals", mesh.skipped_nonfinite);
        if (mesh.skipped_zero_normal) gt_warn("skipped %zu points with zero normals", mesh.skipped_zero_normal);
        gt_info("%zu points, depth %d, %zu octree nodes, iso %.6g: %zu vertices, %zu triangles", npoints,
                p->depth, mesh.nnodes, mesh.iso, mesh.nvert, mesh.ntri);
        if (mesh.ntri == 0) gt_warn("the mesh is empty (no iso-surface found)");
        res->nvert = mesh.nvert, res->ntri = mesh.ntri, res->nnodes = mesh.nnodes, res->iso = mesh.iso;
        res->skipped_nonfinite = mesh.skipped_nonfinite, res->skipped_zero_normal = mesh.skipped_zero_normal;
        double t0 = gt_now_ms();
        res->overlapped = mesh.dev != NULL;
        st = gt_pr_write_mesh_ply(job->output, p, &mesh, &res->download_wait_ms);
        if (tm && res->overlapped) {
            gt_timings_add(tm, "download+write (overlapped)", gt_now_ms() - t0);
            t0 = gt_now_ms();
        }
        if (st == GT_OK && job->volume) st = gt_pr_write_volume(job->volume, &mesh);
        if (tm && (!res->overlapped || job->volume)) gt_timings_add(tm, "write", gt_now_ms() - t0);
        if (st == GT_OK) gt_trace("output written");
        gt_pr_mesh_free(&mesh);
    }
    return st;
}

/* The points of pm in the unit cube (gather_points, then gt_pr_points_make):
 * host work that runs while the CUDA context starts. A data error is named
 * after the input. */
static gt_status make_points(const gt_poisson_job *job, const gt_pr_params *p, const gt_ply_mesh *pm,
                             gt_timings *tm, gt_pr_points *pts)
{
    memset(pts, 0, sizeof *pts);
    float *xyz = NULL, *nrm = NULL, *rgb = NULL;
    double origin[3];
    gt_status st = gather_points(pm, job->input, p, &xyz, origin, &nrm, &rgb);
    if (st == GT_OK) {
        gt_pr_input in = {pm->nvert, xyz, nrm, rgb};
        st = gt_pr_points_make(&in, p, tm, pts);
        memcpy(pts->origin, origin, sizeof origin);
        if (st != GT_OK) gt_errmsg_prefix("%s", gt_in_name(job->input));
    }
    free(xyz), free(nrm), free(rgb);
    return st;
}

gt_status gt_poisson_reconstruct_job(const gt_poisson_job *job, gt_timings *tm, gt_poisson_job_result *res)
{
    memset(res, 0, sizeof res[0]);
    gt_pr_params p = job->params;
    int vd = p.volume_depth;
    p.volume_depth = job->volume ? (vd > 0 ? vd : (p.depth < 7 ? p.depth : 7)) : 0;
    p.progress = job->progress && gt_progress_enabled();
    p.mesh_on_device = true; /* on CUDA, when no host step needs it: written from there */
    /* the CUDA start overlaps reading the points; the device is chosen (and
     * its errors reported) here, after the read */
    gt_device_prep prep;
    gt_device_prepare_start(&prep, job->device, job->gpu, NULL);
    double t0 = gt_now_ms();
    gt_ply_mesh pm;
    memset(&pm, 0, sizeof pm);
    /* PLY, or PoissonRecon's text points (.npts/.xyz: x y z nx ny nz [r g b]
     * per line); x y z given in double relative to the first point where
     * they lie far from 0 (UTM), and the mesh written so */
    static const char *const cols[] = {"x", "y", "z", "nx", "ny", "nz", "red", "green", "blue"};
    gt_status rs = gt_points_read_table(job->input, cols, 6, 9, 3, &pm);
    if (tm) gt_timings_add(tm, "read", gt_now_ms() - t0);
    gt_trace("input read");
    /* the points into the unit cube while the context still starts; a data
     * error there is reported after the device's own errors, as before */
    gt_pr_points pts;
    memset(&pts, 0, sizeof pts);
    char data_err[512] = "";
    gt_status ds = GT_OK;
    if (rs == GT_OK) {
        ds = make_points(job, &p, &pm, tm, &pts);
        if (ds != GT_OK) snprintf(data_err, sizeof data_err, "%s", gt_errmsg());
        gt_trace("points normalised");
    }
    res->npoints = pm.nvert;
    gt_ply_free(&pm);
    if (rs == GT_OK) rs = gt_device_prepare_finish(&prep, &res->device);
    gt_device_prepare_join(&prep);
    if (rs == GT_OK && ds != GT_OK) rs = gt_fail(ds, "%s", data_err);
    if (rs != GT_OK) {
        gt_pr_points_free(&pts);
        return rs;
    }
    gt_trace(res->device == GT_DEVICE_CUDA ? "first kernel" : "computing on the CPU");
    gt_status st = reconstruct_write(job, &p, res->npoints, &pts, tm, res);
    gt_pr_points_free(&pts);
    return st;
}
