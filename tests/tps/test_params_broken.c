/* stpsfit parameter files from testdata/tps: every case in broken/ (fuzz
 * findings and hand-made ones) must fail with GT_ERR_DATA and a message
 * naming file:line, as broken/EXPECT says; the fuzz seeds in seeds/ (two of
 * them written by stpsfit) must load. */
#include "broken_expect.h"
#include "tps/tps.h"

static gt_status read_params(const char *path)
{
    gt_tps t;
    gt_status st = gt_tps_read(path, &t);
    if (st == GT_OK) gt_tps_free(&t);
    return st;
}

int main(void)
{
    int failures = broken_expect_check("tps/broken", read_params);
    failures += broken_expect_accept("tps/seeds", read_params);
    return failures ? 1 : 0;
}
