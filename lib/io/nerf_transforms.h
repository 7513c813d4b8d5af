/* NeRF "transforms" captures read as a COLMAP model (colmap.h), so that
 * gsrender --fit trains them as the reference trainer does its second scene
 * type (scene/dataset_readers.py, readNerfSyntheticInfo):
 *   DIR/transforms_train.json + DIR/transforms_test.json  the reference's
 *       "Blender" scenes (NeRF-synthetic): the split is the files' (a
 *       transforms_val.json is ignored, as the reference ignores it);
 *   DIR/transforms.json                                    instant-ngp and
 *       nerfstudio (ns-process-data): one file, no split of its own.
 * Each frame: "file_path" relative to DIR ("./train/r_0" without an
 * extension gets ".png", as the reference adds it) and "transform_matrix",
 * the camera-to-world 4x4 in OpenGL axes (x right, y up, z backwards), made
 * COLMAP's world-to-camera pose by negating its y and z columns and
 * inverting. Intrinsics per frame or for the file: nerfstudio's fl_x, fl_y,
 * cx, cy, w, h (and k1, k2, p1, p2: an OPENCV camera; "camera_model" names
 * another COLMAP model, e.g. OPENCV_FISHEYE, which gsrender then refuses by
 * name), else "camera_angle_x" with the photograph's own size, fx = fy =
 * w / (2 tan(angle / 2)), cx, cy at the centre, as the reference. Frames of
 * equal intrinsics share a camera.
 * The points: nerfstudio's "ply_file_path", else DIR/points3d.ply (the
 * reference writes its random start there), else, as the reference for a
 * Blender scene, 100,000 points uniform in [-1.3, 1.3]^3, grey (127),
 * seeded (*random_points set).
 * Broken input is GT_ERR_DATA naming the file and the frame. */
#ifndef GT_IO_NERF_TRANSFORMS_H
#define GT_IO_NERF_TRANSFORMS_H

#include <stdbool.h>

#include "common/status.h"
#include "io/colmap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The random start of a Blender scene without points. */
#define GT_NERF_RANDOM_POINTS 100000
#define GT_NERF_RANDOM_EXTENT 1.3

/* DIR holds transforms_train.json or transforms.json. */
bool gt_nerf_is_capture(const char *dir);

typedef struct gt_nerf_split {
    bool given;   /* transforms_test.json: the held-out frames are its */
    bool *test;   /* per image of the model, malloc'ed (NULL when !given) */
} gt_nerf_split;

/* The capture in DIR as a model: images named by their path relative to DIR
 * (ids 1.., in the files' order, train first), cameras (ids 1..), points. */
gt_status gt_nerf_read(const char *dir, gt_colmap_model *m, gt_nerf_split *split, bool *random_points);

#ifdef __cplusplus
}
#endif
#endif
