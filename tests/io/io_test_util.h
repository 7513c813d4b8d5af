/* Helpers shared by the io tests: temp dirs, writing byte buffers to files,
 * feeding a file to stdin through a pipe, iterating a broken-input folder. */
#ifndef IO_TEST_UTIL_H
#define IO_TEST_UTIL_H

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/status.h"

static char io_tmpdir[256];

static inline const char *io_tmp(const char *name)
{
    static char buf[8][512];
    static int k;
    if (!io_tmpdir[0]) {
        snprintf(io_tmpdir, sizeof io_tmpdir, "/tmp/gt_iotest_XXXXXX");
        if (!mkdtemp(io_tmpdir)) abort();
    }
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", io_tmpdir, name);
    return buf[k];
}

static inline void io_rm_tmpdir(void)
{
    if (!io_tmpdir[0]) return;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", io_tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", io_tmpdir);
}

static inline void io_write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static inline void io_write_text(const char *path, const char *text)
{
    io_write_file(path, text, strlen(text));
}

/* Replace stdin with a pipe fed by a child process that copies `path`.
 * Returns the child pid; call io_stdin_restore afterwards. */
static inline pid_t io_stdin_from_pipe(const char *path, int *saved)
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        FILE *f = fopen(path, "rb");
        if (!f) _exit(1);
        char b[65536];
        size_t n;
        while ((n = fread(b, 1, sizeof b, f)) > 0)
            if (write(fd[1], b, n) != (ssize_t)n) _exit(0); /* reader may stop early */
        _exit(0);
    }
    close(fd[1]);
    *saved = dup(0);
    dup2(fd[0], 0);
    close(fd[0]);
    clearerr(stdin);
    return pid;
}

static inline void io_stdin_restore(pid_t pid, int saved)
{
    /* drain, so the child can finish */
    char b[65536];
    while (read(0, b, sizeof b) > 0) {
    }
    dup2(saved, 0);
    close(saved);
    clearerr(stdin);
    int ws;
    waitpid(pid, &ws, 0);
}

/* Message must name the file and a place: "(<file>:<n>)" or "(<file>: byte <n>)". */
static inline void io_check_place(const char *msg, const char *file)
{
    char a[2200], b[2200];
    snprintf(a, sizeof a, "(%s:", file);
    snprintf(b, sizeof b, "(%s: byte ", file);
    const char *p = strstr(msg, a);
    bool ok = false;
    if (p) {
        p += strlen(a);
        ok = (*p >= '0' && *p <= '9') || strncmp(p, " byte ", 6) == 0;
    }
    if (!ok) fail_msg("message does not name a place in %s: %s", file, msg);
    (void)b;
}

typedef gt_status (*io_reader_fn)(const char *path);

/* Every file in dir must fail with GT_ERR_DATA and a message naming it and a
 * place. Returns the number of files checked. */
static inline int io_check_broken_dir(const char *dir, io_reader_fn fn, bool verbose)
{
    DIR *d = opendir(dir);
    if (!d) fail_msg("cannot open %s", dir);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (strstr(e->d_name, ".txt") && strstr(e->d_name, "README")) continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        gt_errmsg_clear();
        gt_status st = fn(path);
        if (verbose) printf("%-50s -> %s: %s\n", e->d_name, gt_status_name(st), gt_errmsg());
        if (st != GT_ERR_DATA) fail_msg("%s: expected GT_ERR_DATA, got %d (%s)", path, (int)st, gt_errmsg());
        io_check_place(gt_errmsg(), path);
        n++;
    }
    closedir(d);
    return n;
}

#endif
