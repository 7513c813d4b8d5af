/* A minimal program built on the common options, for the CLI tests of device
 * choice: prints the device it would compute on. */
#include <stdio.h>
#include <stdlib.h>

#include "common/cli.h"
#include "common/log.h"

int main(int argc, char **argv)
{
    gt_set_progname("device_probe");
    gt_common_opts co;
    gt_common_opts_init(&co);
    static const struct option longopts[] = {GT_COMMON_LONGOPTS, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, GT_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        switch (gt_common_option(&co, c, optarg)) {
        case GT_CLI_HANDLED: continue;
        case GT_CLI_EXIT_OK: return 0;
        case GT_CLI_ERROR: return gt_report(GT_ERR_USAGE);
        case GT_CLI_NOT_COMMON: break;
        }
        if (c == 'h') {
            printf("usage: device_probe [options]\n\n%s", GT_COMMON_HELP);
            return 0;
        }
        return gt_report(gt_usage_error("unknown option (try --help)"));
    }
    gt_device_kind k;
    gt_status st = gt_device_choose(co.device, co.gpu, &k);
    if (st != GT_OK) return gt_report(st);
    printf("%s\n", gt_device_name(k));
    return 0;
}
