#include "common/guard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"

/* ------------------------------------------------------------ extensions */

/* What an extension says a file is. Every extension a program reads or
 * writes, and common ones of other formats a path could be confused with. */
static const struct {
    const char *ext, *what;
} known_ext[] = {
    {"png", "a PNG image"},          {"jpg", "a JPEG image"},        {"jpeg", "a JPEG image"},
    {"pfm", "a PFM image"},          {"pgm", "a PGM image"},         {"ppm", "a PPM image"},
    {"tif", "a TIFF image"},         {"tiff", "a TIFF image"},       {"bmp", "a BMP image"},
    {"y4m", "a Y4M video"},          {"yuv", "raw YUV video"},       {"mp4", "an MP4 video"},
    {"mkv", "a Matroska video"},     {"avi", "an AVI video"},        {"ply", "a PLY file"},
    {"obj", "an OBJ mesh"},          {"stl", "an STL mesh"},         {"off", "an OFF mesh"},
    {"splat", "a .splat scene"},     {"mtx", "a Matrix Market file"}, {"mm", "a Matrix Market file"},
    {"nrrd", "a NRRD volume"},       {"nhdr", "a detached NRRD header"}, {"raw", "raw data"},
    {"json", "a JSON file"},         {"tps", "an stpsfit parameter file"}, {"txt", "text"},
    {"xyz", "point text"},           {"pts", "point text"},          {"csv", "a CSV table"},
    {"dat", "a data file"},          {"log", "a log"},               {"rig", "a yuvstitch rig file"},
};

/* What a program can write, and the extensions that fit it. */
static const struct {
    const char *name, *what, *exts[4];
} writers[] = {
    {"png", "a PNG image", {"png"}},
    {"y4m", "a Y4M video", {"y4m"}},
    {"raw", "raw YUV video", {"yuv", "raw"}},
    {"ply", "a PLY file", {"ply"}},
    {"mtx", "a Matrix Market file", {"mtx", "mm"}},
    {"nrrd", "a NRRD volume", {"nrrd"}},
    {"tps", "an stpsfit parameter file", {"tps", "txt"}},
    {"points", "point text", {"txt", "xyz", "pts"}},
    {"text", "text", {"txt", "dat", "log"}},
    {"rig", "a yuvstitch rig file", {"rig", "txt"}},
    {"pfm", "a PFM image", {"pfm"}},
    {"pgm", "a PGM image", {"pgm"}},
};

/* The extension of the last path component ("" when none; a leading dot
 * alone is a hidden name, not an extension). */
static const char *extension(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    return dot && dot != base ? dot + 1 : "";
}

gt_status gt_guard_format(const char *path, const char *what, const char *format, const char *force)
{
    if (!path || !format || strcmp(path, "-") == 0) return GT_OK;
    const char *ext = extension(path);
    const char *says = NULL;
    for (size_t i = 0; i < sizeof known_ext / sizeof known_ext[0]; i++)
        if (strcasecmp(ext, known_ext[i].ext) == 0) says = known_ext[i].what;
    if (!says) return GT_OK; /* unknown or no extension */
    for (size_t i = 0; i < sizeof writers / sizeof writers[0]; i++) {
        if (strcmp(writers[i].name, format) != 0) continue;
        for (int k = 0; k < 4 && writers[i].exts[k]; k++)
            if (strcasecmp(ext, writers[i].exts[k]) == 0) return GT_OK;
        if (force)
            return gt_fail(GT_ERR_USAGE,
                           "%s '%s': the name says %s, but %s writes %s there (give %s %s to write it anyway)",
                           what, path, says, gt_progname(), writers[i].what, force, format);
        return gt_fail(GT_ERR_USAGE, "%s '%s': the name says %s, but %s writes %s there", what, path,
                       says, gt_progname(), writers[i].what);
    }
    return gt_fail(GT_ERR_RUNTIME, "internal: unknown output format '%s'", format);
}

/* ----------------------------------------------------------------- lists */

void gt_guard_init(gt_guard *g)
{
    memset(g, 0, sizeof *g);
}

static void free_list(gt_guard_path *p, int n)
{
    for (int i = 0; i < n; i++) {
        free(p[i].path);
        free(p[i].what);
    }
    free(p);
}

void gt_guard_free(gt_guard *g)
{
    free_list(g->in, g->nin);
    free_list(g->out, g->nout);
    memset(g, 0, sizeof *g);
}

static void add(gt_guard *g, gt_guard_path **list, int *n, int *cap, const char *path, const char *what,
                const char *format, const char *force)
{
    if (!path) return;
    if (*n == *cap) {
        int nc = *cap ? 2 * *cap : 8;
        gt_guard_path *p = realloc(*list, (size_t)nc * sizeof *p);
        if (!p) {
            g->oom = true;
            return;
        }
        *list = p;
        *cap = nc;
    }
    gt_guard_path *e = &(*list)[*n];
    e->path = strdup(path);
    e->what = strdup(what ? what : "");
    e->format = format;
    e->force = force;
    if (!e->path || !e->what) {
        free(e->path);
        free(e->what);
        g->oom = true;
        return;
    }
    (*n)++;
}

void gt_guard_input(gt_guard *g, const char *path, const char *what)
{
    add(g, &g->in, &g->nin, &g->cap_in, path, what, NULL, NULL);
}

void gt_guard_output(gt_guard *g, const char *path, const char *what, const char *format, const char *force)
{
    add(g, &g->out, &g->nout, &g->cap_out, path, what, format, force);
}

/* ---------------------------------------------------------------- checks */

/* A file's identity: an existing file by device and inode; an output that
 * does not exist yet by its directory's device and inode and its name. */
typedef struct {
    int kind; /* 0: nothing to compare (a pipe, a terminal), 1: existing file, 2: new file */
    dev_t dev;
    ino_t ino;
    const char *name; /* kind 2: the last path component */
    int index;        /* into the list it came from */
} ident;

static bool is_std(const char *p) { return strcmp(p, "-") == 0; }

static gt_status input_ident(const gt_guard_path *e, ident *id)
{
    struct stat sb;
    memset(id, 0, sizeof *id);
    if (is_std(e->path)) {
        if (fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode)) *id = (ident){1, sb.st_dev, sb.st_ino, NULL, 0};
        return GT_OK;
    }
    if (stat(e->path, &sb) != 0)
        return gt_fail(GT_ERR_RUNTIME, "cannot open '%s' (%s): %s", e->path, e->what, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return gt_fail(GT_ERR_RUNTIME, "cannot read '%s' (%s): it is a directory", e->path, e->what);
    if (!S_ISREG(sb.st_mode)) return GT_OK; /* a device or a pipe: nothing an output could replace */
    if (access(e->path, R_OK) != 0)
        return gt_fail(GT_ERR_RUNTIME, "cannot open '%s' (%s): %s", e->path, e->what, strerror(errno));
    *id = (ident){1, sb.st_dev, sb.st_ino, NULL, 0};
    return GT_OK;
}

static gt_status output_ident(const gt_guard_path *e, ident *id)
{
    struct stat sb;
    memset(id, 0, sizeof *id);
    const char *p = e->path;
    if (is_std(p)) {
        if (fstat(STDOUT_FILENO, &sb) == 0 && S_ISREG(sb.st_mode)) *id = (ident){1, sb.st_dev, sb.st_ino, NULL, 0};
        return GT_OK;
    }
    if (!*p) return gt_fail(GT_ERR_USAGE, "%s: empty output path", e->what);
    const char *slash = strrchr(p, '/');
    const char *base = slash ? slash + 1 : p;
    if (stat(p, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return gt_fail(GT_ERR_USAGE, "%s '%s' is a directory: give a file name", e->what, p);
        /* a device or a FIFO is written in place (common/output.h): it
         * cannot be replaced, whatever else reads it (-o /dev/null) */
        if (S_ISREG(sb.st_mode)) *id = (ident){1, sb.st_dev, sb.st_ino, NULL, 0};
        return GT_OK;
    }
    int err = errno;
    if (err != ENOENT) {
        if (err == ENOTDIR)
            return gt_fail(GT_ERR_RUNTIME, "cannot write '%s' (%s): a part of its directory is not a directory",
                           p, e->what);
        return GT_OK; /* e.g. no permission to look: the writer reports it */
    }
    if (!*base) return gt_fail(GT_ERR_RUNTIME, "cannot write '%s' (%s): the directory does not exist", p, e->what);
    /* a new file: its directory must exist */
    char dir[4096];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == p) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - p), p);
    if (stat(dir, &sb) != 0) {
        err = errno;
        if (err == ENOENT)
            return gt_fail(GT_ERR_RUNTIME, "cannot write '%s' (%s): directory '%s' does not exist", p, e->what, dir);
        if (err == ENOTDIR)
            return gt_fail(GT_ERR_RUNTIME, "cannot write '%s' (%s): '%s' is not a directory", p, e->what, dir);
        return GT_OK;
    }
    if (!S_ISDIR(sb.st_mode))
        return gt_fail(GT_ERR_RUNTIME, "cannot write '%s' (%s): '%s' is not a directory", p, e->what, dir);
    *id = (ident){2, sb.st_dev, sb.st_ino, base, 0};
    return GT_OK;
}

static int cmp_ident(const void *a, const void *b)
{
    const ident *x = a, *y = b;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino) return x->ino < y->ino ? -1 : 1;
    if (x->kind == 2) {
        int c = strcmp(x->name, y->name);
        if (c) return c;
    }
    return (x->index > y->index) - (x->index < y->index);
}

static bool same(const ident *a, const ident *b)
{
    return a->kind && a->kind == b->kind && a->dev == b->dev && a->ino == b->ino &&
           (a->kind == 1 || strcmp(a->name, b->name) == 0);
}

/* identities of a list; '-' may appear once */
static gt_status identify(const gt_guard_path *list, int n, ident *ids, const char *verb, const char *noun,
                          gt_status (*fn)(const gt_guard_path *, ident *))
{
    int first_std = -1;
    for (int i = 0; i < n; i++) {
        if (is_std(list[i].path)) {
            if (first_std >= 0)
                return gt_fail(GT_ERR_USAGE, "%s and %s both %s ('-'): only one %s can", list[first_std].what,
                               list[i].what, verb, noun);
            first_std = i;
        }
        GT_TRY(fn(&list[i], &ids[i]));
        ids[i].index = i;
    }
    return GT_OK;
}

gt_status gt_guard_check(const gt_guard *g)
{
    if (g->oom) return gt_fail(GT_ERR_RUNTIME, "out of memory checking the paths");
    ident *in = calloc((size_t)g->nin + 1, sizeof *in), *out = calloc((size_t)g->nout + 1, sizeof *out);
    gt_status st = GT_OK;
    if (!in || !out) {
        st = gt_fail(GT_ERR_RUNTIME, "out of memory checking the paths");
        goto done;
    }
    st = identify(g->in, g->nin, in, "read standard input", "input", input_ident);
    if (st == GT_OK) st = identify(g->out, g->nout, out, "write to standard output", "output", output_ident);
    /* an output onto an input */
    for (int o = 0; o < g->nout && st == GT_OK; o++) {
        if (out[o].kind != 1) continue;
        for (int i = 0; i < g->nin; i++) {
            if (!same(&out[o], &in[i])) continue;
            const gt_guard_path *eo = &g->out[o], *ei = &g->in[i];
            char od[4200], id[4200];
            if (is_std(eo->path)) snprintf(od, sizeof od, "%s - (standard output)", eo->what);
            else snprintf(od, sizeof od, "%s '%s'", eo->what, eo->path);
            if (is_std(ei->path)) snprintf(id, sizeof id, "on standard input");
            else snprintf(id, sizeof id, "'%s'", ei->path);
            st = gt_fail(GT_ERR_USAGE, "%s is the same file as the input %s (%s): an output never replaces an input",
                         od, id, ei->what);
            break;
        }
    }
    /* two outputs onto one file: sort by identity, compare neighbours */
    if (st == GT_OK && g->nout > 1) {
        qsort(out, (size_t)g->nout, sizeof *out, cmp_ident);
        for (int k = 1; k < g->nout; k++)
            if (same(&out[k - 1], &out[k])) {
                const gt_guard_path *a = &g->out[out[k - 1].index], *b = &g->out[out[k].index];
                st = gt_fail(GT_ERR_USAGE, "%s '%s' and %s '%s' are the same file: give each output its own name",
                             a->what, a->path, b->what, b->path);
                break;
            }
    }
    for (int o = 0; o < g->nout && st == GT_OK; o++) {
        const gt_guard_path *e = &g->out[o];
        st = gt_guard_format(e->path, e->what, e->format, e->force);
    }
done:
    free(in);
    free(out);
    return st;
}
