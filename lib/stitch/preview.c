/* What the previews draw over the panorama: each camera's footprint in a
 * colour of its own, so that a camera the rig places badly (or out of
 * sight) shows at a glance. */
#include <stdbool.h>
#include <string.h>

#include "stitch/stitch.h"

const uint8_t *gt_stitch_palette(int i)
{
    static const uint8_t pal[GT_STITCH_MAX_CAMS][3] = {
        {0, 255, 0},     {0, 128, 255},   {255, 255, 0},   {255, 0, 255}, {0, 255, 255}, {255, 128, 0},
        {128, 0, 255},   {255, 255, 255}, {128, 255, 128}, {0, 0, 160},   {160, 80, 0},  {255, 160, 200},
        {0, 128, 64},    {128, 128, 128}, {200, 255, 0},   {80, 40, 120}};
    return pal[(unsigned)i % GT_STITCH_MAX_CAMS];
}

void gt_stitch_draw_footprints(const gt_stitch_plan *plan, uint8_t *rgb)
{
    int W = plan->pano_w, H = plan->pano_h;
    size_t np = (size_t)W * H;
    for (int i = 0; i < plan->ncam; i++) {
        const float *d = plan->dist_luma + np * i; /* > 0 inside camera i's region */
        const uint8_t *c = gt_stitch_palette(i);
#pragma omp parallel for schedule(static)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                size_t j = (size_t)y * W + x;
                if (!(d[j] > 0)) continue;
                bool edge = (x + 1 < W && !(d[j + 1] > 0)) || (x > 0 && !(d[j - 1] > 0)) ||
                            (y + 1 < H && !(d[j + W] > 0)) || (y > 0 && !(d[j - W] > 0));
                if (edge) memcpy(rgb + 3 * j, c, 3);
            }
    }
}
