/* Broken-input folders driven by an EXPECT list, shared by the parser tests
 * (tests/io, tests/stitch, tests/gs, tests/tps): every file in
 * <testdata>/<folder>/ must be rejected with GT_ERR_DATA and a message
 * naming the place.
 *
 * <folder>/EXPECT lists every case, one per line ('#' comments):
 *     <file name> <place> <words...>
 * <place> is the line number (checked as "<file>:<line>)"), "-" for a place
 * without a line ("(<file>)"), or "byte" for a byte offset ("<file>: byte ");
 * <words> must appear in the message. A file in the folder missing from
 * EXPECT (or the reverse) fails, so no case goes unchecked.
 *
 * Plain C (no cmocka): each case prints one "ok"/"FAIL" line. */
#ifndef GT_BROKEN_EXPECT_H
#define GT_BROKEN_EXPECT_H

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"

typedef gt_status (*broken_reader_fn)(const char *path);

/* The testdata root: $GT_TESTDATA, else "testdata". */
static inline const char *broken_testdata(void)
{
    const char *td = getenv("GT_TESTDATA");
    return td ? td : "testdata";
}

/* Check <testdata>/<folder> against its EXPECT; returns the number of failures. */
static inline int broken_expect_check(const char *folder, broken_reader_fn reader)
{
    char dir[1024], path[1200];
    snprintf(dir, sizeof dir, "%s/%s", broken_testdata(), folder);
    snprintf(path, sizeof path, "%s/EXPECT", dir);
    FILE *ex = fopen(path, "r");
    if (!ex) {
        printf("FAIL cannot open %s\n", path);
        return 1;
    }
    int failures = 0, cases = 0;
    char line[1024];
    static char listed[512][128];
    int nlisted = 0;
    while (fgets(line, sizeof line, ex)) {
        line[strcspn(line, "\n")] = 0;
        if (!line[0] || line[0] == '#') continue;
        char name[128], place[32];
        int off = 0;
        if (sscanf(line, "%127s %31s %n", name, place, &off) < 2) {
            printf("FAIL bad EXPECT line: %s\n", line);
            failures++;
            continue;
        }
        const char *words = line + off;
        if (nlisted < 512) snprintf(listed[nlisted++], 128, "%s", name);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        gt_errmsg_clear();
        gt_status st = reader(path);
        const char *msg = gt_errmsg();
        char want[1400];
        if (strcmp(place, "-") == 0) snprintf(want, sizeof want, "(%s)", path);
        else if (strcmp(place, "byte") == 0) snprintf(want, sizeof want, "(%s: byte ", path);
        else snprintf(want, sizeof want, "(%s:%s)", path, place);
        bool ok = st == GT_ERR_DATA && strstr(msg, want) && (!*words || strstr(msg, words));
        cases++;
        printf("%s %s: status %d, message: %s\n", ok ? "ok  " : "FAIL", name, (int)st, msg);
        if (!ok) {
            printf("     wanted status 3, place '%s', words '%s'\n", want, words);
            failures++;
        }
    }
    fclose(ex);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "EXPECT") == 0) continue;
        bool found = false;
        for (int i = 0; i < nlisted && !found; i++) found = strcmp(listed[i], e->d_name) == 0;
        if (!found) {
            printf("FAIL %s: not listed in EXPECT\n", e->d_name);
            failures++;
        }
    }
    if (d) closedir(d);
    printf("%s: %d cases, %d failures\n", folder, cases, failures);
    return failures;
}

/* <testdata>/<file> must be accepted; returns 1 (after a FAIL line) if not. */
static inline int broken_expect_accept_file(const char *file, broken_reader_fn reader)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/%s", broken_testdata(), file);
    gt_errmsg_clear();
    gt_status st = reader(path);
    printf("%s %s: status %d %s\n", st == GT_OK ? "ok  " : "FAIL", file, (int)st,
           st == GT_OK ? "" : gt_errmsg());
    return st != GT_OK;
}

/* The other half: every file in <testdata>/<folder> (the fuzz seeds, valid
 * inputs) must be accepted. Returns the number of failures; an empty or
 * missing folder is a failure. */
static inline int broken_expect_accept(const char *folder, broken_reader_fn reader)
{
    char dir[1024], path[1024];
    snprintf(dir, sizeof dir, "%s/%s", broken_testdata(), folder);
    DIR *d = opendir(dir);
    if (!d) {
        printf("FAIL cannot open %s\n", dir);
        return 1;
    }
    int failures = 0, cases = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", folder, e->d_name);
        cases++;
        failures += broken_expect_accept_file(path, reader);
    }
    closedir(d);
    printf("%s: %d valid inputs, %d failures\n", folder, cases, failures);
    return failures + (cases == 0);
}

#endif
