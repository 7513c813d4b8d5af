#!/bin/bash
# sparsesolve's preconditioned methods as a user runs them (CPU path): GMRES
# with and without Jacobi on 3-D convection-diffusion (Pe 10) reaches tol
# with the true residual printed within it and x near all ones; the default
# for a nonsymmetric matrix with --precond is GMRES; a singular, inconsistent
# system (pure Neumann Laplacian, b not summing to 0) exits 1 with a message
# and writes no x, for every method; bad option combinations exit 2.
#   cli_krylov.sh SPARSESOLVE GEN_PROBLEM
set -u
S=${1:?usage: cli_krylov.sh SPARSESOLVE GEN_PROBLEM}
G=${2:?usage: cli_krylov.sh SPARSESOLVE GEN_PROBLEM}
. "$(dirname "$0")/../lib/checks.sh"

"$G" convdiff 10 10 "$T/cd.mtx" 2>"$T/e"; check "generate convection-diffusion" 0 $?
"$G" neumann 8 8 "$T/nm.mtx" 2>"$T/e"; check "generate the Neumann Laplacian" 0 $?
# b = 1 except b_1 = 2: sums to 65, not 0, so A x = b has no solution
{ echo "%%MatrixMarket matrix array real general"; echo "64 1"; echo 2
  for i in $(seq 2 64); do echo 1; done; } >"$T/b.mtx"

# true residual within tol, read from the report line
within_tol() { # NAME TOL
    local r
    r=$(sed -n 's/.*true relative residual \([0-9.e+-]*\).*/\1/p' "$T/e" | head -1)
    if [ -n "$r" ] && awk -v r="$r" -v t="$2" 'BEGIN { exit !(r <= t) }'; then ok "$1: $r <= $2"
    else bad "$1: true residual '$r' not within $2"; fi
}
ones() { # NAME FILE: every entry of x within 1e-5 of 1
    if awk 'NR > 3 && ($1 < 1 - 1e-5 || $1 > 1 + 1e-5) { b = 1 } END { exit b }' "$2"; then ok "$1"
    else bad "$1: x is not all ones"; fi
}

for pc in none jacobi; do
    rm -f "$T/x.mtx"
    "$S" --device cpu -m gmres --precond $pc --tol 1e-9 "$T/cd.mtx" -o "$T/x.mtx" 2>"$T/e"
    check "gmres+$pc converges on convection-diffusion Pe 10" 0 $?
    has "gmres+$pc: report" "$T/e" "gmres+$pc (csr, double, cpu): converged"
    within_tol "gmres+$pc" 1e-9
    ones "gmres+$pc: x = 1" "$T/x.mtx"
done
# ILU(0) (sp-ilu) through the same options: fewer iterations than Jacobi
iters() { sed -n 's/.*converged after \([0-9]*\) iterations.*/\1/p' "$T/e" | head -1; }
"$S" --device cpu -m gmres --precond jacobi --tol 1e-9 "$T/cd.mtx" -o "$T/x.mtx" 2>"$T/e"; ij=$(iters)
"$S" --device cpu -m gmres --precond ilu0 --tol 1e-9 "$T/cd.mtx" -o "$T/x.mtx" 2>"$T/e"
check "gmres+ilu0 converges" 0 $?
within_tol "gmres+ilu0" 1e-9
ones "gmres+ilu0: x = 1" "$T/x.mtx"
ii=$(iters)
[ -n "$ii" ] && [ -n "$ij" ] && [ "$ii" -lt "$ij" ] && ok "gmres+ilu0: $ii iterations < jacobi's $ij" \
    || bad "gmres+ilu0: '$ii' iterations, jacobi '$ij'"
"$S" --device cpu -m gmres --restart 5 --tol 1e-9 "$T/cd.mtx" -o "$T/x.mtx" 2>"$T/e"
check "gmres(5) converges" 0 $?
within_tol "gmres(5)" 1e-9
for m in bicgstab richardson; do
    "$S" --device cpu -m $m --precond jacobi --tol 1e-9 "$T/cd.mtx" -o "$T/x.mtx" 2>"$T/e"
    check "$m+jacobi converges" 0 $?
    within_tol "$m+jacobi" 1e-9
done
"$S" --device cpu -v --precond jacobi --timings "$T/cd.mtx" -o "$T/x.mtx" 2>"$T/e"
check "default with --precond on a nonsymmetric matrix" 0 $?
has "the default is gmres" "$T/e" "method gmres"
has "-v describes the preconditioner" "$T/e" "preconditioner jacobi, set-up"
matches "--timings has a setup stage" "$T/e" "setup"

# AMG's coarsening (--amg-coarsening): auto takes the grid of a symmetric
# stencil matrix, aggregation elsewhere; grid forced on a matrix that is not
# on one is a data error (exit 3), bad values and smoothers are usage errors
"$G" lap7 12 "$T/l12.mtx" 2>"$T/e"; check "generate the 7-point Laplacian" 0 $?
for co in auto aggregation grid; do
    rm -f "$T/x.mtx"
    "$S" --device cpu -v -m pcg --precond amg --amg-coarsening $co "$T/l12.mtx" -o "$T/x.mtx" 2>"$T/e"
    check "pcg+amg ($co) converges on the 12^3 Laplacian" 0 $?
    within_tol "pcg+amg ($co)" 1e-8
    ones "pcg+amg ($co): x = 1" "$T/x.mtx"
    if [ $co = aggregation ]; then has "-v: $co" "$T/e" "coarsening aggregation"
    else has "-v: $co takes the grid" "$T/e" "coarsening grid 12x12x12"; fi
done
"$S" --device cpu -v -m gmres --precond amg "$T/cd.mtx" -o "$T/x.mtx" 2>"$T/e"
check "gmres+amg on nonsymmetric convection-diffusion" 0 $?
has "auto: aggregation for a nonsymmetric matrix" "$T/e" "coarsening aggregation"
{ sed -n '1p' "$T/l12.mtx"; sed -n '2,/^[0-9]/p' "$T/l12.mtx" | grep -v '^%' | awk '{print $1, $2, $3 + 2}'
  sed '1,/^[0-9]/d' "$T/l12.mtx"; echo "1 1000 -0.01"; echo "1000 1 -0.01"; } >"$T/far.mtx"
rm -f "$T/x.mtx"
"$S" --device cpu -m pcg --precond amg --amg-coarsening grid "$T/far.mtx" -o "$T/x.mtx" 2>"$T/e"
check "grid coarsening of a matrix off the grid: exit 3" 3 $?
has "grid coarsening off the grid: names the way out" "$T/e" "--amg-coarsening aggregation"
[ ! -e "$T/x.mtx" ] && ok "grid coarsening off the grid: no x" || bad "grid coarsening off the grid: x written"
"$S" --device cpu -m pcg --precond amg "$T/far.mtx" -o "$T/x.mtx" 2>"$T/e"
check "auto on the same matrix: aggregation, converges" 0 $?
"$S" --device cpu -m pcg --precond amg --amg-coarsening nope "$T/l12.mtx" -o "$T/x.mtx" 2>"$T/e"
check "unknown coarsening" 2 $?
has "unknown coarsening: names the option" "$T/e" "--amg-coarsening"
"$S" --device cpu -m pcg --precond amg --amg-coarsening grid --amg-smoother l1-jacobi "$T/l12.mtx" -o "$T/x.mtx" 2>"$T/e"
check "grid coarsening with l1-jacobi is refused" 2 $?

for m in "gmres --precond none" "gmres --precond jacobi" "bicgstab --precond jacobi" "pcg --precond jacobi" \
         "richardson --precond jacobi" "bicgstab" "cg"; do
    rm -f "$T/x.mtx"
    "$S" --device cpu -m $m "$T/nm.mtx" -b "$T/b.mtx" -o "$T/x.mtx" 2>"$T/e"
    check "inconsistent system, $m: exit 1" 1 $?
    matches "inconsistent system, $m: a message" "$T/e" "sparsesolve: error: ."
    [ ! -e "$T/x.mtx" ] && ok "inconsistent system, $m: no x" || bad "inconsistent system, $m: x written"
done
has "gmres names the likely cause" <("$S" --device cpu -m gmres "$T/nm.mtx" -b "$T/b.mtx" -o "$T/x.mtx" 2>&1) \
    "singular or inconsistent"

"$S" --device cpu -m jacobi --precond jacobi "$T/cd.mtx" -o "$T/x.mtx" 2>"$T/e"
check "jacobi takes no --precond" 2 $?
"$S" --device cpu --precond ilu1 "$T/cd.mtx" -o "$T/x.mtx" 2>"$T/e"
check "unknown preconditioner" 2 $?
has "unknown preconditioner: names the option" "$T/e" "--precond"
"$S" --device cpu -m gmres --precision single "$T/cd.mtx" -o "$T/x.mtx" 2>"$T/e"
check "gmres in single precision is refused" 2 $?
"$S" --device cpu -m gmres --restart 0 "$T/cd.mtx" -o "$T/x.mtx" 2>"$T/e"
check "--restart 0 is refused" 2 $?
exit $fail
