/* gen_tetmesh: write the P1 Laplacian of a jittered structured tetrahedral
 * mesh (gt_tetmesh_laplacian) as a Matrix Market file, for the benchmarks
 * (scripts/bench/sparsesolve) and for trying sparsesolve on an unstructured
 * SPD matrix by hand. Not installed.
 *   gen_tetmesh N OUT.mtx [JITTER (0.2)] [SEED (1)] [permute 1|0 (1)]
 * N unknowns per axis (N^3 rows; 74 gives 405,224 rows and ~6.0M nonzeros).
 * Prints the rows, nonzeros and the locality measure of --reorder. */
#include <stdio.h>
#include <stdlib.h>

#include "common/log.h"
#include "io/mtx.h"
#include "sparse/laplace.h"
#include "sparse/reorder.h"

int main(int argc, char **argv)
{
    gt_set_progname("gen_tetmesh");
    if (argc < 3 || argc > 6) {
        fprintf(stderr, "usage: gen_tetmesh N OUT.mtx [JITTER] [SEED] [PERMUTE 1|0]\n");
        return 2;
    }
    long n = strtol(argv[1], NULL, 10);
    double jit = argc > 3 ? strtod(argv[3], NULL) : 0.2;
    unsigned long long seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
    int permute = argc > 5 ? atoi(argv[5]) : 1;
    gt_csr a;
    gt_status s = gt_tetmesh_laplacian(n, jit, seed, permute != 0, &a);
    if (s != GT_OK) return gt_report(s);
    gt_locality l;
    gt_sp_locality(&a, &l);
    fprintf(stderr, "gen_tetmesh: %lld rows, %lld nonzeros (%.2f per row), bandwidth %lld, mean |i-j| %.0f, near %.1f%%\n",
            (long long)a.nrows, (long long)a.nnz, (double)a.nnz / (double)a.nrows, (long long)l.bandwidth,
            l.mean_dist, 100 * l.near);
    gt_coo c;
    s = gt_csr_to_coo(&a, &c);
    if (s == GT_OK) {
        char comment[160];
        snprintf(comment, sizeof comment, "P1 Laplacian, Kuhn tet mesh, %ld^3 unknowns, jitter %g, seed %llu%s", n,
                 jit, seed, permute ? ", randomly numbered" : "");
        s = gt_mtx_write_coo(argv[2], c.nrows, c.ncols, c.nnz, c.row, c.col, c.val, comment);
        gt_coo_free(&c);
    }
    gt_csr_free(&a);
    return gt_report(s);
}
