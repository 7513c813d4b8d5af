/* Checks for the job API tests (the .c files of tests/api): CHECK counts a
 * failed condition and says where and why, so that one run reports every
 * failed property; api_finish returns the exit status. Plain C and stdio
 * only: the tests are built like outside programs, with the flags of
 * gputools-core.pc. */
#ifndef GT_API_CHECK_H
#define GT_API_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int api_fails;
#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                 \
            fputc('\n', stderr);                                          \
            api_fails++;                                                  \
        }                                                                 \
    } while (0)

/* testdata/<rel> (run-api-tests.sh sets GT_TESTDATA and links testdata/) */
static inline const char *api_testdata(const char *rel, char *buf, size_t len)
{
    const char *td = getenv("GT_TESTDATA");
    snprintf(buf, len, "%s/%s", td ? td : "testdata", rel);
    return buf;
}

static inline int api_finish(void)
{
    if (api_fails) fprintf(stderr, "%d checks failed\n", api_fails);
    return api_fails ? 1 : 0;
}

#endif
