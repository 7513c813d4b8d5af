/* Atomic output (temporary file, rename on commit, removed on a signal)
 * and the input helpers that go with it: open, name, read whole. See
 * output.h. */
#include "common/output.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"

/* Temporary files in flight, removed by the signal handler. */
#define MAX_PENDING 32
static char *volatile pending[MAX_PENDING];
static int handlers_installed;

static void on_signal(int sig)
{
    for (int i = 0; i < MAX_PENDING; i++)
        if (pending[i]) unlink(pending[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void track(char *tmp)
{
    if (!handlers_installed) {
        handlers_installed = 1;
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        signal(SIGHUP, on_signal);
        signal(SIGPIPE, on_signal);
        signal(SIGBUS, on_signal); /* a mapped output whose backing store failed */
    }
    for (int i = 0; i < MAX_PENDING; i++)
        if (!pending[i]) {
            pending[i] = tmp;
            return;
        }
}

static void untrack(char *tmp)
{
    for (int i = 0; i < MAX_PENDING; i++)
        if (pending[i] == tmp) pending[i] = NULL;
}

gt_status gt_out_open(gt_out *o, const char *path)
{
    memset(o, 0, sizeof *o);
    if (!path || !*path) return gt_fail(GT_ERR_USAGE, "empty output path");
    if (strcmp(path, "-") == 0) {
        o->fp = stdout;
        o->is_stdout = true;
        o->path = strdup("-");
        return GT_OK;
    }
    o->path = strdup(path);
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) {
        /* a device or a FIFO: renaming a temporary file over it would
         * replace it (as root, /dev/null itself) instead of writing to it */
        o->fp = o->path ? fopen(path, "wb") : NULL;
        if (!o->fp) {
            int e = errno;
            free(o->path);
            memset(o, 0, sizeof *o);
            return gt_fail(GT_ERR_RUNTIME, "cannot write '%s': %s", path, strerror(e));
        }
        o->direct = true;
        return GT_OK;
    }
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path + 1) : 0;
    const char *base = slash ? slash + 1 : path;
    size_t n = strlen(path) + 32;
    o->tmp = gt_malloc(n, "temporary file name");
    if (!o->path || !o->tmp) {
        free(o->path);
        free(o->tmp);
        memset(o, 0, sizeof *o);
        return GT_ERR_RUNTIME;
    }
    snprintf(o->tmp, n, "%.*s.%s.tmp.XXXXXX", (int)dirlen, path, base);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        int e = errno;
        free(o->path);
        free(o->tmp);
        memset(o, 0, sizeof *o);
        return gt_fail(GT_ERR_RUNTIME, "cannot write '%s': %s", path, strerror(e));
    }
    { /* mkstemp makes 0600; outputs are ordinary files honouring the umask */
        mode_t um = umask(0);
        umask(um);
        fchmod(fd, 0666 & ~um);
    }
    o->fp = fdopen(fd, "wb");
    if (!o->fp) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        free(o->path);
        free(o->tmp);
        memset(o, 0, sizeof *o);
        return gt_fail(GT_ERR_RUNTIME, "cannot write '%s': %s", path, strerror(e));
    }
    track(o->tmp);
    return GT_OK;
}

gt_status gt_out_commit(gt_out *o)
{
    gt_status st = GT_OK;
    if (!o->fp) return gt_fail(GT_ERR_RUNTIME, "output not open");
    if (o->is_stdout) {
        if (fflush(stdout) != 0 || ferror(stdout))
            st = gt_fail(GT_ERR_RUNTIME, "write error on standard output: %s", strerror(errno));
    } else if (o->direct) {
        int bad = fflush(o->fp) != 0 || ferror(o->fp);
        int e = errno;
        if (fclose(o->fp) != 0 && !bad) {
            bad = 1;
            e = errno;
        }
        if (bad) st = gt_fail(GT_ERR_RUNTIME, "write error on '%s': %s", o->path, strerror(e));
    } else {
        int bad = fflush(o->fp) != 0 || ferror(o->fp);
        int e = errno;
        if (fclose(o->fp) != 0 && !bad) {
            bad = 1;
            e = errno;
        }
        if (bad) {
            unlink(o->tmp);
            st = gt_fail(GT_ERR_RUNTIME, "write error on '%s': %s", o->path, strerror(e));
        } else if (rename(o->tmp, o->path) != 0) {
            e = errno;
            unlink(o->tmp);
            st = gt_fail(GT_ERR_RUNTIME, "cannot rename output into place '%s': %s", o->path,
                         strerror(e));
        }
        untrack(o->tmp);
    }
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    return st;
}

void gt_out_abort(gt_out *o)
{
    if (!o->fp) return;
    if (o->direct) {
        fclose(o->fp);
    } else if (!o->is_stdout) {
        fclose(o->fp);
        unlink(o->tmp);
        untrack(o->tmp);
    } else {
        fflush(stdout);
    }
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
}

const char *gt_in_name(const char *path)
{
    return (!path || strcmp(path, "-") == 0) ? "<stdin>" : path;
}

FILE *gt_in_open(const char *path, gt_status *st)
{
    *st = GT_OK;
    if (!path || strcmp(path, "-") == 0) return stdin;
    FILE *f = fopen(path, "rb");
    if (!f) *st = gt_fail(GT_ERR_RUNTIME, "cannot open '%s': %s", path, strerror(errno));
    return f;
}

void gt_in_close(FILE *f)
{
    if (f && f != stdin) fclose(f);
}

gt_status gt_in_read_all(const char *path, unsigned char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    gt_status st = GT_OK;
    FILE *f = gt_in_open(path, &st);
    if (!f) return st;
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = malloc(cap);
    while (b) {
        if (n == cap) {
            unsigned char *nb = cap <= SIZE_MAX / 2 ? realloc(b, cap * 2) : NULL;
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    int err = ferror(f);
    gt_in_close(f);
    if (!b) return gt_fail(GT_ERR_RUNTIME, "out of memory reading %s", gt_in_name(path));
    if (err) {
        free(b);
        return gt_fail(GT_ERR_RUNTIME, "read error on %s", gt_in_name(path));
    }
    *data = b;
    *len = n;
    return GT_OK;
}
