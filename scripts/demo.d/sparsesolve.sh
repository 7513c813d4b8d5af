#!/bin/bash
# sparsesolve demo: structure report, auto format choice and a solve on a
# real matrix (a principal submatrix of poisson4009) and a 2-D Laplacian.
set -eu
: "${BIN:?}" "${TESTDATA:?}" "${OUT:?}"
A="$TESTDATA/sparse/poisson4009_sub1000.mtx"
echo "== sparsesolve --info $A"
"$BIN/sparsesolve" --info "$A"
echo "== PCG (auto method for a symmetric matrix), b = A*1"
echo "   (this block of poisson4009 is singular: x may differ from all ones by a null-space"
echo "    vector while the residual is at the tolerance)"
"$BIN/sparsesolve" -v "$A" --history "$OUT/sparsesolve_history.txt" -o "$OUT/sparsesolve_x.mtx"
# a 5-point Laplacian on a 40x40 grid, written here
n=40; N=$((n*n))
{ echo "%%MatrixMarket matrix coordinate real symmetric"
  awk -v n=$n 'BEGIN { c = 0
      for (y = 0; y < n; y++) for (x = 0; x < n; x++) { i = y*n + x + 1; e[c++] = i " " i " 4"
          if (x > 0) e[c++] = i " " i-1 " -1"; if (y > 0) e[c++] = i " " i-n " -1" }
      print n*n, n*n, c; for (k = 0; k < c; k++) print e[k] }'; } > "$OUT/lap40.mtx"
echo "== 5-point Laplacian $N x $N: auto format, CG vs Jacobi vs Gauss-Seidel"
for m in cg jacobi gauss-seidel; do
    "$BIN/sparsesolve" -v --method $m --tol 1e-6 --maxiter 20000 "$OUT/lap40.mtx" -o "$OUT/lap40_x_$m.mtx" || true
done
echo "== SpMV per format"
"$BIN/sparsesolve" --spmv-bench 20 "$OUT/lap40.mtx"
