/* gt_dynlib_load and gt_dynlib_mapped (dynlib.h). */
#include "common/dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gt_status gt_dynlib_load(const char *what, const char *const *sonames, const gt_dynsym *syms, size_t n,
                         void **handle)
{
    char tried[768] = "";
    size_t used = 0;
    void *h = NULL;
    const char *name = NULL;
    for (const char *const *s = sonames; *s && !h; s++) {
        h = dlopen(*s, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            name = *s;
            break;
        }
        const char *why = dlerror();
        int k = snprintf(tried + used, sizeof tried - used, "%s%s: %s", used ? "; " : "", *s,
                         why ? why : "cannot open");
        if (k > 0) used = used + (size_t)k < sizeof tried ? used + (size_t)k : sizeof tried - 1;
    }
    if (!h)
        return gt_fail(GT_ERR_GPU, "%s not found (%s)", what, sonames[0] ? tried : "no library name given");
    /* resolve all before writing any slot: a failure leaves the table as it was */
    void *addr[64];
    if (n > sizeof addr / sizeof addr[0]) {
        dlclose(h);
        return gt_fail(GT_ERR_RUNTIME, "%s: %zu entry points is more than gt_dynlib_load takes (64)", what, n);
    }
    for (size_t i = 0; i < n; i++) {
        dlerror();
        addr[i] = dlsym(h, syms[i].name);
        if (!addr[i]) {
            const char *why = dlerror();
            gt_status st = gt_fail(GT_ERR_GPU, "%s: %s has no %s (%s)", what, name, syms[i].name,
                                   why ? why : "null address");
            dlclose(h);
            return st;
        }
    }
    for (size_t i = 0; i < n; i++) *syms[i].slot = addr[i];
    if (handle) *handle = h;
    return GT_OK;
}

int gt_dynlib_mapped(const char *prefix)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return 0;
    char line[4096];
    size_t plen = strlen(prefix);
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/');
        if (!path) continue;
        char *base = strrchr(path, '/') + 1;
        found = strncmp(base, prefix, plen) == 0;
    }
    fclose(f);
    return found;
}
