#include "common/pin_prefault.h"

#include <pthread.h>
#include <stdlib.h>

#include "common/alloc.h"

enum { PF_MAX = 16 };
static pthread_mutex_t pf_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void *p;
    size_t bytes;
} pf[PF_MAX];
static int npf;

void gt_pin_prefault(size_t bytes)
{
    if (bytes < ((size_t)4 << 20) || gt_hugepages_off()) return;
    void *p = gt_malloc_huge(bytes, "host memory to page-lock");
    if (!p) {
        gt_errmsg_clear();
        return;
    }
    /* one write per 4 KiB page faults it in (a whole huge page where the
     * system gives one), on every core: the kernel zeroes the pages */
    volatile char *c = p;
    long pages = (long)((bytes + 4095) / 4096);
#pragma omp parallel for schedule(static)
    for (long k = 0; k < pages; k++) c[(size_t)k * 4096] = 0;
    pthread_mutex_lock(&pf_mu);
    if (npf < PF_MAX) {
        pf[npf].p = p;
        pf[npf].bytes = bytes;
        npf++;
        p = NULL;
    }
    pthread_mutex_unlock(&pf_mu);
    free(p);
}

void *gt_pin_take_prefaulted(size_t bytes)
{
    void *p = NULL;
    pthread_mutex_lock(&pf_mu);
    for (int i = 0; i < npf; i++)
        if (pf[i].bytes == bytes) {
            p = pf[i].p;
            pf[i] = pf[--npf];
            break;
        }
    pthread_mutex_unlock(&pf_mu);
    return p;
}

void gt_pin_prefault_release(void)
{
    pthread_mutex_lock(&pf_mu);
    for (int i = 0; i < npf; i++) free(pf[i].p);
    npf = 0;
    pthread_mutex_unlock(&pf_mu);
}
