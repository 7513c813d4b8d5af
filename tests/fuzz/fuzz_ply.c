/* libFuzzer target: PLY reader (all formats) and the mesh helpers. */
#include "fuzz_common.h"

#include <stdlib.h>

#include "io/ply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_memfd(data, size, path, sizeof path);
    if (fd < 0) return 0;
    gt_ply_mesh m;
    if (gt_ply_read(path, &m) == GT_OK) {
        (void)gt_ply_all_triangles(&m);
        /* every index was checked: touch them all */
        volatile float sink = 0;
        for (size_t f = 0; f < m.nface; f++)
            for (uint32_t j = m.face_start[f]; j < m.face_start[f + 1]; j++)
                if (m.nprops) sink += m.vdata[(size_t)m.face_idx[j] * (size_t)m.nprops];
        const char *names[] = {"x", "y", "z"};
        float *out = malloc((m.nvert ? m.nvert : 1) * 3 * sizeof *out);
        if (out) (void)gt_ply_gather(&m, path, names, 3, out);
        free(out);
        gt_ply_free(&m);
    }
    close(fd);
    return 0;
}
