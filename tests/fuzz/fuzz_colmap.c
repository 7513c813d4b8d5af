/* libFuzzer target: the COLMAP model readers (io/colmap.h), all six (the
 * three binary and the three text files) on the same bytes, keeping the 2-D
 * points and tracks, then every record they returned is touched. */
#include "fuzz_common.h"

#include "io/colmap.h"

static void touch(const gt_colmap_model *m)
{
    volatile double s = 0;
    for (size_t i = 0; i < m->ncameras; i++) {
        if (m->cameras[i].nparams != gt_colmap_model_nparams(m->cameras[i].model)) fuzz_broken_promise("nparams");
        s += m->cameras[i].params[m->cameras[i].nparams - 1] + m->cameras[i].width;
    }
    for (size_t i = 0; i < m->nimages; i++) {
        const gt_colmap_image *im = &m->images[i];
        s += (double)strlen(im->name) + im->qvec[3];
        for (uint64_t k = 0; k < im->npoints2d; k++) s += im->xy[2 * k + 1] + (double)im->point3d_id[k];
    }
    for (size_t i = 0; i < m->points.n; i++) {
        s += m->points.xyz[3 * i + 2] + m->points.rgb[3 * i + 2];
        for (uint64_t k = 0; k < m->points.track_len[i]; k++) s += m->points.track[i][2 * k + 1];
    }
    (void)s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfd(data, size, path, sizeof path);
    if (fd < 0) return 0;
    gt_status (*readers[6])(const char *, gt_colmap_model *) = {gt_colmap_read_cameras_bin, NULL, NULL,
                                                                 gt_colmap_read_cameras_txt, NULL, NULL};
    for (int k = 0; k < 6; k++) {
        gt_colmap_model m = {0};
        gt_status st;
        switch (k) {
        case 1: st = gt_colmap_read_images_bin(path, true, &m); break;
        case 2: st = gt_colmap_read_points_bin(path, true, &m); break;
        case 4: st = gt_colmap_read_images_txt(path, true, &m); break;
        case 5: st = gt_colmap_read_points_txt(path, true, &m); break;
        default: st = readers[k](path, &m);
        }
        if (st == GT_OK) {
            touch(&m);
            if (gt_colmap_check(&m) != GT_OK && gt_errmsg()[0] == 0) fuzz_broken_promise("a check without a message");
        } else if (st != GT_ERR_DATA && st != GT_ERR_RUNTIME) {
            fuzz_broken_promise("a status other than 1 or 3");
        }
        gt_colmap_free(&m);
    }
    close(fd);
    return 0;
}
