/* Rig files from testdata/stitch: every case in broken/ (fuzz findings and
 * hand-made ones) must fail with GT_ERR_DATA and a message naming
 * file:line, as broken/EXPECT says; the fuzz seeds in seeds/ and the demo
 * rig must load. */
#include <stdio.h>

#include "broken_expect.h"
#include "stitch/stitch.h"

static gt_status load_rig(const char *path)
{
    gt_stitch_rig rig;
    gt_status st = gt_stitch_rig_load(path, &rig);
    if (st == GT_OK) gt_stitch_rig_free(&rig);
    return st;
}

int main(void)
{
    int failures = broken_expect_check("stitch/broken", load_rig);
    failures += broken_expect_accept("stitch/seeds", load_rig);
    failures += broken_expect_accept_file("stitch/rig2.txt", load_rig);
    return failures ? 1 : 0;
}
