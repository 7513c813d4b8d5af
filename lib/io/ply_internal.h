/* Private to lib/io: read a PLY from an already open streaming reader (used
 * by points.c, which sniffs the content first and cannot reopen a pipe). */
#ifndef GT_IO_PLY_INTERNAL_H
#define GT_IO_PLY_INTERNAL_H

#include "io/ply.h"
#include "io/reader.h"

gt_status gt_ply_read_reader(gt_reader *r, gt_ply_mesh *m);

#endif
