/* The CPU reference's tile lists (gs_core.c), shared by the renderer and the
 * backward pass (gs_backward.c): every projected Gaussian listed in each tile
 * of its bounding square, each tile's list sorted front to back (depth,
 * then index). Internal to lib/gs. */
#ifndef GT_GS_TILES_H
#define GT_GS_TILES_H

#include <stdint.h>

#include "gs/gs.h"

typedef struct gt_gs_tile_entry {
    float depth;
    uint32_t idx;
} gt_gs_tile_entry;

/* Tile t (row-major in the gx x gy grid) holds list[start[t] .. start[t+1]);
 * *start (gx*gy+1) and *list are the caller's to free. */
gt_status gt_gs_tiles_cpu(const gt_gs_proj *pr, size_t n, int gx, int gy, size_t **start,
                          gt_gs_tile_entry **list);

#endif
