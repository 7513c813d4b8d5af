/* Stencil (Laplacian) matrices, as in Bell & Garland's structured set. */
#include <stdlib.h>
#include <string.h>

#include "sparse/laplace.h"

gt_status gt_laplacian(int points, int64_t nx, int64_t ny, int64_t nz, gt_csr *out)
{
    int dim, full;
    switch (points) {
    case 3: dim = 1, full = 0; break;
    case 5: dim = 2, full = 0; break;
    case 9: dim = 2, full = 1; break;
    case 7: dim = 3, full = 0; break;
    case 27: dim = 3, full = 1; break;
    default: return gt_fail(GT_ERR_USAGE, "no %d-point Laplacian (3, 5, 7, 9 or 27)", points);
    }
    if (dim < 2) ny = 1;
    if (dim < 3) nz = 1;
    int64_t n = nx * ny * nz;
    if (nx < 1 || ny < 1 || nz < 1 || n > INT32_MAX)
        return gt_fail(GT_ERR_USAGE, "Laplacian grid %lldx%lldx%lld out of range", (long long)nx,
                       (long long)ny, (long long)nz);
    memset(out, 0, sizeof *out);
    out->nrows = out->ncols = n;
    out->ptr = calloc((size_t)n + 1, sizeof *out->ptr);
    out->col = malloc((size_t)n * (size_t)points * sizeof *out->col);
    out->val = malloc((size_t)n * (size_t)points * sizeof *out->val);
    if (!out->ptr || !out->col || !out->val) {
        gt_csr_free(out);
        return gt_fail(GT_ERR_RUNTIME, "out of memory");
    }
    int zr = dim == 3 ? 1 : 0, yr = dim >= 2 ? 1 : 0;
    int64_t p = 0, row = 0;
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++, row++) {
                for (int dz = -zr; dz <= zr; dz++)
                    for (int dy = -yr; dy <= yr; dy++)
                        for (int dx = -1; dx <= 1; dx++) {
                            int nzero = (dx != 0) + (dy != 0) + (dz != 0);
                            if (!full && nzero > 1) continue;
                            int64_t X = x + dx, Y = y + dy, Z = z + dz;
                            if (X < 0 || X >= nx || Y < 0 || Y >= ny || Z < 0 || Z >= nz) continue;
                            out->col[p] = (int32_t)((Z * ny + Y) * nx + X);
                            out->val[p] = nzero == 0 ? (double)(points - 1) : -1.0;
                            p++;
                        }
                out->ptr[row + 1] = p;
            }
    out->nnz = p;
    return GT_OK;
}
