/* Helpers shared by the job API tests (tests/api/<domain>_job.c): each is a
 * standalone program that includes only libcore's installed headers and this
 * file (found beside it), checks properties with CHECK, works in a temporary
 * folder and exits 0 when every check passed, 1 otherwise. */
#ifndef GT_API_TEST_H
#define GT_API_TEST_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int api_fails;
#define CHECK(cond, ...)                                          \
    do {                                                          \
        if (!(cond)) {                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);  \
            fprintf(stderr, __VA_ARGS__);                         \
            fprintf(stderr, "\n");                                \
            api_fails++;                                          \
        }                                                         \
    } while (0)

/* Path of testdata/<rel>: under $GT_TESTDATA, else beside this source tree. */
static inline const char *api_testdata(const char *rel)
{
    static char buf[8][4096];
    static int k;
    char *b = buf[k++ % 8];
    const char *td = getenv("GT_TESTDATA");
    if (td && *td) {
        snprintf(b, sizeof buf[0], "%s/%s", td, rel);
        return b;
    }
    snprintf(b, sizeof buf[0], "%s", __FILE__);
    char *s = strstr(b, "tests/api/");
    if (s) snprintf(s, sizeof buf[0] - (size_t)(s - b), "testdata/%s", rel);
    else snprintf(b, sizeof buf[0], "testdata/%s", rel);
    return b;
}

/* The test's temporary folder (api_begin makes it) and paths in it. */
static char api_dir[64];
static inline const char *api_tmp(const char *name)
{
    static char buf[8][4096];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", api_dir, name);
    return b;
}

static inline bool api_exists(const char *path) { return access(path, F_OK) == 0; }

/* Make the temporary folder; false (with a message) when `needed` (a test
 * data file) cannot be read or the folder cannot be made. */
static inline bool api_begin(const char *name, const char *needed)
{
    if (access(needed, R_OK) != 0) {
        fprintf(stderr, "%s: %s not found (set GT_TESTDATA)\n", name, needed);
        return false;
    }
    snprintf(api_dir, sizeof api_dir, "/tmp/%s.XXXXXX", name);
    if (!mkdtemp(api_dir)) {
        fprintf(stderr, "%s: cannot make a temporary folder\n", name);
        return false;
    }
    return true;
}

/* Remove the folder and return the exit status. */
static inline int api_end(const char *name)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", api_dir);
    if (system(cmd) != 0) fprintf(stderr, "%s: could not remove %s\n", name, api_dir);
    if (api_fails) fprintf(stderr, "%s: %d checks failed\n", name, api_fails);
    else printf("%s: ok\n", name);
    return api_fails ? 1 : 0;
}

#endif
