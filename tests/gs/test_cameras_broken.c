/* cameras.json files from testdata/gs: every case in broken/ (fuzz findings
 * and hand-made ones) must fail with GT_ERR_DATA and a message naming
 * file:line, as broken/EXPECT says; the fuzz seeds in seeds/ and the demo
 * cameras.json must load. */
#include <stdio.h>
#include <stdlib.h>

#include "broken_expect.h"
#include "gs/gs.h"

static gt_status read_cameras(const char *path)
{
    gt_gs_camera *cams = NULL;
    int n;
    gt_status st = gt_gs_cameras_read(path, &cams, &n);
    if (st == GT_OK) free(cams);
    return st;
}

int main(void)
{
    int failures = broken_expect_check("gs/broken", read_cameras);
    failures += broken_expect_accept("gs/seeds", read_cameras);
    failures += broken_expect_accept_file("gs/cameras.json", read_cameras);
    return failures ? 1 : 0;
}
