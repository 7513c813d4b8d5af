/* A minimal program built on the common options, for the CLI tests of device
 * choice: prints the device it would compute on. With GT_PROBE_QUEUES=N it
 * asks for N hardware queues first (gt_device_set_queues); with
 * GT_PROBE_ENV set it prints CUDA_DEVICE_MAX_CONNECTIONS as the device
 * choice left it, on a second line. */
#include <stdio.h>
#include <stdlib.h>

#include "common/cli.h"
#include "common/device.h"
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
    const char *q = getenv("GT_PROBE_QUEUES");
    if (q) gt_device_set_queues(atoi(q));
    gt_device_kind k;
    gt_status st = gt_device_choose(co.device, co.gpu, &k);
    if (st != GT_OK) return gt_report(st);
    printf("%s\n", gt_device_name(k));
    if (getenv("GT_PROBE_ENV")) {
        const char *v = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
        printf("CUDA_DEVICE_MAX_CONNECTIONS=%s\n", v ? v : "(unset)");
    }
    return 0;
}
