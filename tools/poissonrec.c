/* poissonrec: screened Poisson surface reconstruction on an octree, from
 * oriented points (PLY with x y z nx ny nz) to a watertight triangle mesh. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/cli.h"
#include "common/device.h"
#include "common/guard.h"
#include "common/log.h"
#include "common/trace.h"
#include "common/timer.h"
#include "poisson/poisson.h"

static const char *usage_text =
    "Usage: poissonrec [options] POINTS.ply -o MESH.ply\n"
    "Screened Poisson surface reconstruction (Kazhdan & Hoppe 2013) on an octree\n"
    "built data-parallel (Zhou et al. 2011): oriented points in, a watertight\n"
    "triangle mesh out (closed where the points enclose a volume).\n"
    "\n"
    "Input: a PLY whose vertices have x y z nx ny nz (other properties ignored;\n"
    "red green blue carried with --colors), or text as PoissonRecon's .npts:\n"
    "x y z nx ny nz [red green blue] per line ('-': stdin). Normals point out of\n"
    "the surface.\n"
    "A NaN or infinite coordinate or normal is an error (exit 3, naming the vertex).\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE        mesh (binary PLY; '-' = stdout); never the input\n"
    "      --out-format ply     write PLY even where FILE's extension names another\n"
    "                           format (refused otherwise)\n"
    "  -d, --depth D            octree depth, 1..12 (default 8): finest cell =\n"
    "                           cube side / 2^D\n"
    "      --full-depth F       levels 0..F complete and the solve starts at F\n"
    "                           (default 5, PoissonRecon's --fullDepth; 0..8)\n"
    "      --point-weight A     screening weight pulling the surface to the points\n"
    "                           (default 4; 0 = plain Poisson)\n"
    "      --samples-per-node S samples per octree node at the depth where a sample\n"
    "                           is splatted (default 1.5, PoissonRecon's); higher\n"
    "                           smooths sparse, noisy areas (see --coarse-levels)\n"
    "      --scale F            bounding cube side / data box's longest side\n"
    "                           (default 1.1; raise it when holes must close beyond\n"
    "                           the data's box)\n"
    "      --solver NAME        multigrid (cascadic: coarse to fine, --iters CG\n"
    "                           iterations per level, default 48, 24 at the\n"
    "                           finest; each goes on to --residual)\n"
    "                           or cg (each level to relative residual 1e-7, at most\n"
    "                           --iters, default 200)\n"
    "      --iters N            CG iterations per level, the finest included (see\n"
    "                           --solver)\n"
    "      --residual R         multigrid without --iters: the finest level goes on\n"
    "                           while its relative residual is above R, the levels\n"
    "                           below while theirs is above R/30, up to four times\n"
    "                           their iterations (default 3e-5)\n"
    "      --coarse-levels K    where the samples are too sparse for depth D, cut\n"
    "                           the mesh from cells up to K levels coarser, as\n"
    "                           PoissonRecon's tree ends there; auto (default):\n"
    "                           every level when a tenth of the samples splat at\n"
    "                           depth D-2 or coarser, else 1 (faster on dense\n"
    "                           points)\n"
    "      --uniform-mesh       cut the mesh from every depth-D cell (--coarse-levels 0)\n"
    "      --dense-solve        solve for every node's function, also the finest\n"
    "                           ones where no sample splats that deep (default: as\n"
    "                           PoissonRecon, only within 2 cells of splatted data)\n"
    "      --density            add a per-vertex 'density' property (samples per\n"
    "                           node at depth D-2 around the vertex)\n"
    "      --trim Q             drop triangles touching the lowest Q fraction\n"
    "                           (0..1) of vertex densities\n"
    "      --colors             carry the points' red green blue to the vertices\n"
    "      --volume FILE.nrrd   also write chi on a (2^V)^3 grid (float32, key iso)\n"
    "      --volume-depth V     grid depth for --volume (default min(D, 7))\n"
    GT_COMMON_HELP
    "\n"
    "Exit status: 0 ok, 1 runtime error, 2 usage, 3 bad input, 4 GPU unavailable\n"
    "or out of memory.\n";

enum { OPT_PW = GT_OPT_TOOL_BASE, OPT_FULLDEPTH, OPT_SPN, OPT_SCALE, OPT_SOLVER, OPT_ITERS, OPT_RESIDUAL, OPT_DENSITY, OPT_TRIM, OPT_COLORS,
       OPT_VOLUME, OPT_VOLDEPTH, OPT_OUTFMT, OPT_UNIFORM, OPT_COARSE, OPT_DENSE };

typedef struct args {
    gt_common_opts co;
    gt_poisson_job job;
} args;

/* Options into *a; returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, args *a)
{
    gt_common_opts_init(&a->co);
    gt_poisson_job_init(&a->job);
    gt_pr_params *p = &a->job.params;
    static const struct option longopts[] = {
        {"output", required_argument, 0, 'o'},
        {"depth", required_argument, 0, 'd'},
        {"point-weight", required_argument, 0, OPT_PW},
        {"full-depth", required_argument, 0, OPT_FULLDEPTH},
        {"samples-per-node", required_argument, 0, OPT_SPN},
        {"scale", required_argument, 0, OPT_SCALE},
        {"solver", required_argument, 0, OPT_SOLVER},
        {"iters", required_argument, 0, OPT_ITERS},
        {"residual", required_argument, 0, OPT_RESIDUAL},
        {"density", no_argument, 0, OPT_DENSITY},
        {"uniform-mesh", no_argument, 0, OPT_UNIFORM},
        {"coarse-levels", required_argument, 0, OPT_COARSE},
        {"dense-solve", no_argument, 0, OPT_DENSE},
        {"trim", required_argument, 0, OPT_TRIM},
        {"colors", no_argument, 0, OPT_COLORS},
        {"volume", required_argument, 0, OPT_VOLUME},
        {"volume-depth", required_argument, 0, OPT_VOLDEPTH},
        {"out-format", required_argument, 0, OPT_OUTFMT},
        GT_COMMON_LONGOPTS,
        {0, 0, 0, 0}};
    int c, outfmt = -1;
    gt_status st = GT_OK;
    while ((c = getopt_long(argc, argv, "o:d:" GT_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        gt_cli_result r = gt_common_option(&a->co, c, optarg);
        if (r == GT_CLI_HANDLED) continue;
        if (r == GT_CLI_EXIT_OK) return 0;
        if (r == GT_CLI_ERROR) return gt_report(GT_ERR_USAGE);
        switch (c) {
        case 'h': fputs(usage_text, stdout); return 0;
        case 'o': st = gt_parse_path_once("-o", optarg, &a->job.output); break;
        case OPT_OUTFMT: {
            static const char *const names[] = {"ply"};
            st = gt_parse_enum("--out-format", optarg, names, 1, &outfmt);
            break;
        }
        case 'd': st = gt_parse_int("--depth", optarg, 1, GT_PR_MAX_DEPTH, &p->depth); break;
        case OPT_FULLDEPTH:
            st = gt_parse_int("--full-depth", optarg, 0, GT_PR_MAX_FULL_DEPTH, &p->full_depth);
            break;
        case OPT_PW: st = gt_parse_double("--point-weight", optarg, 0, 1e6, &p->point_weight); break;
        case OPT_SPN: st = gt_parse_double("--samples-per-node", optarg, 0, 1e6, &p->samples_per_node); break;
        case OPT_SCALE: st = gt_parse_double("--scale", optarg, 1.0, 100, &p->scale); break;
        case OPT_SOLVER: {
            static const char *const names[] = {"multigrid", "cg"};
            int v;
            st = gt_parse_enum("--solver", optarg, names, 2, &v);
            p->solver = (gt_pr_solver)v;
            break;
        }
        case OPT_ITERS: st = gt_parse_int("--iters", optarg, 1, 100000, &p->iters); break;
        case OPT_RESIDUAL: st = gt_parse_double("--residual", optarg, 1e-15, 1, &p->finest_residual); break;
        case OPT_DENSITY: p->want_density = true; break;
        case OPT_UNIFORM: p->uniform_mesh = true; break;
        case OPT_DENSE: p->dense_solve = true; break;
        case OPT_COARSE:
            if (strcmp(optarg, "auto") == 0) p->coarse_levels = GT_PR_COARSE_AUTO;
            else if (gt_parse_int("--coarse-levels", optarg, 0, GT_PR_MAX_DEPTH, &p->coarse_levels) != GT_OK)
                st = gt_usage_error("invalid value '%s' for --coarse-levels: expected auto or an integer 0..%d", optarg,
                                    GT_PR_MAX_DEPTH);
            break;
        case OPT_TRIM: st = gt_parse_double("--trim", optarg, 0, 0.99, &p->trim); break;
        case OPT_COLORS: p->want_colors = true; break;
        case OPT_VOLUME: st = gt_parse_path_once("--volume", optarg, &a->job.volume); break;
        case OPT_VOLDEPTH: st = gt_parse_int("--volume-depth", optarg, 1, 9, &p->volume_depth); break;
        default: return gt_report(gt_usage_error("try 'poissonrec --help'"));
        }
        if (st != GT_OK) return gt_report(st);
    }
    if (optind + 1 != argc)
        return gt_report(gt_usage_error(optind >= argc ? "missing input POINTS.ply (try --help)"
                                                       : "one input file expected, got %d", argc - optind));
    if (!a->job.output) return gt_report(gt_usage_error("missing -o MESH.ply"));
    a->job.input = argv[optind];
    a->job.device = a->co.device, a->job.gpu = a->co.gpu;
    gt_guard g;
    gt_guard_init(&g);
    gt_guard_input(&g, a->job.input, "the points");
    gt_guard_output(&g, a->job.output, "-o", outfmt < 0 ? "ply" : NULL, "--out-format");
    gt_guard_output(&g, a->job.volume, "--volume", "nrrd", NULL);
    st = gt_guard_check(&g);
    gt_guard_free(&g);
    return st != GT_OK ? gt_report(st) : -1;
}

int main(int argc, char **argv)
{
    gt_set_progname("poissonrec");
    gt_trace("main entry");
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    gt_timings tm;
    gt_timings_init(&tm);
    gt_poisson_job_result res;
    gt_status st = gt_poisson_reconstruct_job(&a.job, &tm, &res);
    if (st == GT_OK && a.co.timings) {
        gt_timings_print(&tm, stderr, res.device == GT_DEVICE_CUDA ? "poissonrec (cuda)" : "poissonrec (cpu)");
        if (res.overlapped)
            fprintf(stderr, "download+write overlapped: the mesh came down in pieces (double-buffered, pinned when it takes more than one); "
                    "the writer waited %.3f ms for them\n", res.download_wait_ms);
    }
    gt_device_shutdown();
    return gt_report(st);
}
