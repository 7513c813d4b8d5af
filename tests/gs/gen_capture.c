/* gen_capture: write a small synthetic COLMAP capture (gs_capture_gen.h)
 * for tests and the demo: DIR/images/, DIR/sparse/0/ (or sparse/), and
 * optionally DIR/images_N/.
 *
 *   gen_capture DIR [--model NAME] [--params p1,p2,...] [--views N]
 *               [--size WxH] [--points N] [--txt] [--flat] [--images-n N]
 *               [--render] [--seed S]
 *
 * --model: a COLMAP model name (PINHOLE by default; any model, so that the
 * refusals can be tested); --params: its parameters (default: f = 0.8 W,
 * the centre, and for the distorted models k1 = -0.05, k2 = 0.01, p1 =
 * 0.001, p2 = -0.001 where the model has them); --txt: the model as text;
 * --flat: DIR/sparse/ holds the files; --images-n N: also DIR/images_N/ at
 * round(W/N) x round(H/N); --render: photographs rendered from Gaussians at
 * the points (a fit can learn them) instead of the analytic pattern. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_capture_gen.h"

static int usage(void)
{
    fprintf(stderr, "usage: gen_capture DIR [--model NAME] [--params p1,p2,...] [--views N] [--size WxH] "
                    "[--points N] [--txt] [--flat] [--images-n N] [--render] [--seed S]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-') return usage();
    capgen g;
    capgen_defaults(&g);
    g.width = 64, g.height = 48, g.nviews = 12, g.npoints = 300;
    const char *params = NULL;
    int images_n = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--txt")) g.binary = false;
        else if (!strcmp(a, "--flat")) g.sparse0 = false;
        else if (!strcmp(a, "--render")) g.photo = capgen_photo_render;
        else if (!v) return usage();
        else if (!strcmp(a, "--model") && ++i) {
            g.model = gt_colmap_model_from_name(v);
            if (g.model < 0) return fprintf(stderr, "gen_capture: unknown model %s\n", v), 2;
        } else if (!strcmp(a, "--params") && ++i) params = v;
        else if (!strcmp(a, "--views") && ++i) g.nviews = atoi(v);
        else if (!strcmp(a, "--points") && ++i) g.npoints = (size_t)atol(v);
        else if (!strcmp(a, "--images-n") && ++i) images_n = atoi(v);
        else if (!strcmp(a, "--seed") && ++i) g.seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--size") && ++i) {
            if (sscanf(v, "%dx%d", &g.width, &g.height) != 2) return usage();
        } else return usage();
    }
    if (g.nviews < 1 || g.nviews % 7 == 0 || g.width < 2 || g.height < 2)
        return fprintf(stderr, "gen_capture: --views must be >= 1 and not a multiple of 7; sizes >= 2\n"), 2;
    int np = gt_colmap_model_nparams(g.model);
    memset(g.params, 0, sizeof g.params);
    if (params) {
        int k = 0;
        for (char *s = (char *)params, *e; *s && k < np; k++, s = *e ? e + 1 : e) g.params[k] = strtod(s, &e);
        if (k != np) return fprintf(stderr, "gen_capture: %s takes %d parameters\n", gt_colmap_model_name(g.model), np), 2;
    } else {
        /* f, centre, then the distortion of the models read here */
        double f = 0.8 * g.width, cx = g.width / 2.0, cy = g.height / 2.0;
        bool one_f = g.model == GT_COLMAP_SIMPLE_PINHOLE || g.model == GT_COLMAP_SIMPLE_RADIAL ||
                     g.model == GT_COLMAP_RADIAL || g.model == GT_COLMAP_SIMPLE_RADIAL_FISHEYE ||
                     g.model == GT_COLMAP_RADIAL_FISHEYE || g.model == GT_COLMAP_SIMPLE_DIVISION ||
                     g.model == GT_COLMAP_SIMPLE_FISHEYE;
        int k = 0;
        g.params[k++] = f;
        if (!one_f && np >= 4) g.params[k++] = f;
        g.params[k++] = cx, g.params[k++] = cy;
        const double dist[4] = {-0.05, 0.01, 0.001, -0.001};
        for (int j = 0; k < np && j < 4; j++) g.params[k++] = dist[j];
    }
    if (capgen_write(&g, argv[1])) return fprintf(stderr, "gen_capture: cannot write %s: %s\n", argv[1], gt_errmsg()), 1;
    if (images_n > 1 &&
        capgen_write_images_n(&g, argv[1], images_n, (int)nearbyint((double)g.width / images_n),
                              (int)nearbyint((double)g.height / images_n)))
        return fprintf(stderr, "gen_capture: cannot write images_%d: %s\n", images_n, gt_errmsg()), 1;
    printf("%s: %d views of a %dx%d %s camera, %zu points\n", argv[1], g.nviews, g.width, g.height,
           gt_colmap_model_name(g.model), g.npoints);
    return 0;
}
