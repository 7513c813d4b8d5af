/* Matrix Market reading for bench_sparse (C, shares the tests' reader). */
#include "sparse_testutil.h"

bool bench_read_mtx(const char *path, gt_csr *out);
bool bench_read_mtx(const char *path, gt_csr *out)
{
    return sp_read_mtx(path, out);
}
