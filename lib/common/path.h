/* Small path helpers of the readers of folders (captures, models). */
#ifndef GT_COMMON_PATH_H
#define GT_COMMON_PATH_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "a/b", malloc'ed (NULL when out of memory). */
char *gt_path_join(const char *a, const char *b);
/* p names a folder / a regular file (following links). */
bool gt_path_is_dir(const char *p);
bool gt_path_is_file(const char *p);

#ifdef __cplusplus
}
#endif
#endif
