/* chi volume as NRRD (raw float32, little endian, space directions, origin,
 * "iso:=" key), written atomically. A small writer of our own so poissonrec
 * does not wait for lib/io's volume module; the format is the one
 * gt_nrrd_write (lib/io/volume.h) writes. */
#include <stdint.h>
#include <string.h>

#include "common/output.h"
#include "poisson/poisson.h"

gt_status gt_pr_write_volume(const char *path, const gt_pr_mesh *m)
{
    if (!m->vol || m->vol_n <= 0) return gt_fail(GT_ERR_RUNTIME, "no volume to write");
    gt_out o;
    GT_TRY(gt_out_open(&o, path));
    int n = m->vol_n;
    double sp = m->vol_spacing;
    fprintf(o.fp,
            "NRRD0004\n# chi of poissonrec (screened Poisson indicator); surface at iso\n"
            "type: float\ndimension: 3\nspace: right-anterior-superior\nsizes: %d %d %d\n"
            "space directions: (%.17g,0,0) (0,%.17g,0) (0,0,%.17g)\n"
            "space origin: (%.17g,%.17g,%.17g)\nendian: little\nencoding: raw\niso:=%.9g\n\n",
            n, n, n, sp, sp, sp, m->vol_origin[0], m->vol_origin[1], m->vol_origin[2], m->iso);
    size_t count = (size_t)n * n * n;
    const uint16_t one = 1;
    int little = *(const uint8_t *)&one == 1;
    if (little) {
        if (fwrite(m->vol, sizeof(float), count, o.fp) != count) {
            gt_out_abort(&o);
            return gt_fail(GT_ERR_RUNTIME, "cannot write '%s'", path);
        }
    } else {
        for (size_t i = 0; i < count; i++) {
            uint8_t b[4];
            memcpy(b, &m->vol[i], 4);
            uint8_t r[4] = {b[3], b[2], b[1], b[0]};
            if (fwrite(r, 1, 4, o.fp) != 4) {
                gt_out_abort(&o);
                return gt_fail(GT_ERR_RUNTIME, "cannot write '%s'", path);
            }
        }
    }
    return gt_out_commit(&o);
}
