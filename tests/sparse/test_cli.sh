#!/bin/bash
# CLI tests of sparsesolve: exit codes, messages, outputs, no output on failure.
set -u
B="${SPARSESOLVE:-${GT_BUILD_DIR:?}/tools/sparsesolve}"
[ -x "$B" ] || { echo "SKIP: $B not built"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0
check() { # name expected_rc cmd...
    local name=$1 want=$2; shift 2
    "$@" >"$T/out" 2>"$T/err"; local rc=$?
    if [ "$rc" != "$want" ]; then echo "FAIL $name: exit $rc, want $want"; cat "$T/err"; fail=1; else echo "ok $name"; fi
}
has() { # name file pattern
    if grep -q -- "$3" "$2"; then echo "ok $1"; else echo "FAIL $1: no '$3' in:"; cat "$2"; fail=1; fi
}
# 1-D Laplacian, n = 30, SPD
n=30
{ echo "%%MatrixMarket matrix coordinate real symmetric"; echo "$n $n $((2*n-1))"
  for i in $(seq 1 $n); do echo "$i $i 2"; done; for i in $(seq 2 $n); do echo "$i $((i-1)) -1"; done; } > "$T/lap.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n2 3 2\n1 1 1\n2 2 1\n' > "$T/rect.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n1 2 1\n2 1 1\n' > "$T/zerodiag.mtx"
printf '%%%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 1\n2 1 2\n2 2 1\n3 3 1\n' > "$T/indef.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 0\n' > "$T/empty.mtx"
printf '%%%%MatrixMarket matrix array real general\n5 1\n1\n2\n3\n4\n5\n' > "$T/b5.mtx"
printf '%%%%MatrixMarket matrix array real general\n3 1\n1\n-1\n1\n' > "$T/bind.mtx"

check help 0 "$B" --help; has help-bench "$T/out" "--spmv-bench"; has help-method "$T/out" "gauss-seidel"
check noargs 2 "$B"
check badmethod 2 "$B" --method nope "$T/lap.mtx" -o "$T/x.mtx"; has badmethod-msg "$T/err" "method"
check noout 2 "$B" "$T/lap.mtx"
for m in cg pcg bicgstab jacobi gauss-seidel richardson; do
    rm -f "$T/x.mtx"
    check "solve-$m" 0 "$B" --device cpu --method $m --tol 1e-10 --maxiter 100000 "$T/lap.mtx" -o "$T/x.mtx"
    has "solve-$m-msg" "$T/err" "converged"
    # the exact solution is all ones: every value within 1e-6 (cond ~ 400, tol 1e-10)
    if awk 'NR>3 && ($1 < 1-1e-6 || $1 > 1+1e-6) {bad=1} END {exit bad}' "$T/x.mtx"; then echo "ok solve-$m-ones"; else echo "FAIL solve-$m-ones"; fail=1; fi
done
check rect 3 "$B" --device cpu "$T/rect.mtx" -o "$T/r.mtx"; has rect-msg "$T/err" "not square"; [ ! -e "$T/r.mtx" ] || { echo "FAIL rect output"; fail=1; }
check blen 3 "$B" --device cpu "$T/lap.mtx" -b "$T/b5.mtx" -o "$T/r.mtx"; has blen-msg "$T/err" "b has 5 entries"
check zerodiag 3 "$B" --device cpu --method jacobi "$T/zerodiag.mtx" -o "$T/r.mtx"; has zerodiag-msg "$T/err" "row 2"
rm -f "$T/r.mtx"; check notspd 1 "$B" --device cpu --method cg "$T/indef.mtx" -b "$T/bind.mtx" -o "$T/r.mtx"; has notspd-msg "$T/err" "bicgstab"; [ ! -e "$T/r.mtx" ] || { echo "FAIL notspd output"; fail=1; }
rm -f "$T/r.mtx"; check maxiter 1 "$B" --device cpu --method jacobi --maxiter 3 "$T/lap.mtx" -o "$T/r.mtx"; has maxiter-msg "$T/err" "not converged after 3"; [ ! -e "$T/r.mtx" ] || { echo "FAIL maxiter output"; fail=1; }
check empty 3 "$B" --device cpu "$T/empty.mtx" -o "$T/r.mtx"; has empty-msg "$T/err" "empty"; has empty-size "$T/err" "(3x3, 0 nonzeros)"
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 x 1\n' > "$T/bad.mtx"
check badfile 3 "$B" --device cpu "$T/bad.mtx" -o "$T/r.mtx"; has badfile-line "$T/err" "bad.mtx:4"
check missing 1 "$B" --device cpu "$T/nonexistent.mtx" -o "$T/r.mtx"
GT_NO_GPU=1 check nogpu 4 "$B" --device cuda "$T/lap.mtx" -o "$T/r.mtx"
check info 0 "$B" --info "$T/lap.mtx"; has info-auto "$T/out" "auto format"; has info-sym "$T/out" "symmetric     yes"; has info-dia "$T/out" "^dia"
check history 0 "$B" --device cpu --method cg --history "$T/h.txt" "$T/lap.mtx" -o "$T/x.mtx"
it=$(grep -c -v '^#' "$T/h.txt"); grep -q "after $it iterations" "$T/err" && echo "ok history-lines" || { echo "FAIL history-lines ($it)"; cat "$T/err"; fail=1; }
check verbose 0 "$B" --device cpu -v "$T/lap.mtx" -o "$T/x.mtx"; has verbose-format "$T/err" "format dia"; has verbose-method "$T/err" "method pcg"
check bench 0 "$B" --device cpu --spmv-bench 2 "$T/lap.mtx"; has bench-table "$T/out" "GB/s"
check timings 0 "$B" --device cpu --timings "$T/lap.mtx" -o "$T/x.mtx"; has timings-solve "$T/err" "solve"
# --reorder: a randomly numbered path (node i is 7i mod 31) and a b that is not constant, solved with
# rcm and none: the same x in the file's order; -v says the choice, --timings has the stage; bad value 2
{ echo "%%MatrixMarket matrix coordinate real symmetric"; echo "$n $n $((2*n-1))"
  for i in $(seq 1 $n); do echo "$(( i*7 % 31 )) $(( i*7 % 31 )) 2"; done
  for i in $(seq 2 $n); do a=$(( i*7 % 31 )) b=$(( (i-1)*7 % 31 )); [ $a -lt $b ] && { t=$a; a=$b; b=$t; }; echo "$a $b -1"; done; } > "$T/perm.mtx"
{ echo "%%MatrixMarket matrix array real general"; echo "$n 1"; for i in $(seq 1 $n); do echo "$(( i*i % 11 ))"; done; } > "$T/bp.mtx"
check reorder-none 0 "$B" --device cpu --reorder none --method cg --tol 1e-12 "$T/perm.mtx" -b "$T/bp.mtx" -o "$T/x0.mtx"
check reorder-rcm 0 "$B" --device cpu -v --timings --reorder rcm --method cg --tol 1e-12 "$T/perm.mtx" -b "$T/bp.mtx" -o "$T/x1.mtx"
has reorder-rcm-msg "$T/err" "reorder rcm"; has reorder-rcm-band "$T/err" "bandwidth 2[0-9] -> 1,"; has reorder-stage "$T/err" "^ *reorder "
if paste "$T/x0.mtx" "$T/x1.mtx" | awk 'NR>3 { d = $1 - $2; if (d < 0) d = -d; s = $1 < 0 ? -$1 : $1; if (d > 1e-8 * (s + 1)) bad = 1 } END { exit bad }'; then echo "ok reorder-same-x"; else echo "FAIL reorder-same-x"; paste "$T/x0.mtx" "$T/x1.mtx" | head; fail=1; fi
check reorder-auto 0 "$B" --device cpu -v "$T/perm.mtx" -o "$T/x2.mtx"; has reorder-auto-msg "$T/err" "reorder none: one solve does not repay"
check reorder-auto-bench 0 "$B" --device cpu -v --spmv-bench 2 "$T/perm.mtx"; has reorder-auto-bench-msg "$T/err" "reorder none: x (0 KB) fits in cache"
check reorder-bad 2 "$B" --reorder nope "$T/perm.mtx" -o "$T/x2.mtx"; has reorder-bad-msg "$T/err" "--reorder"
check reorder-bench 0 "$B" --device cpu --reorder rcm --spmv-bench 2 "$T/perm.mtx"; has reorder-bench-msg "$T/out" "reorder rcm"
# single precision on the CPU: converges, says so with -v, and x is made of floats near all-ones
check cpu-single 0 "$B" --device cpu -v --precision single --tol 1e-6 "$T/lap.mtx" -o "$T/xs.mtx"; has cpu-single-msg "$T/err" "single"
if awk 'NR>3 && ($1 < 1-1e-3 || $1 > 1+1e-3) {bad=1} END {exit bad}' "$T/xs.mtx"; then echo "ok cpu-single-ones"; else echo "FAIL cpu-single-ones"; fail=1; fi
# the GPU path of the program, where a GPU is present (exit 4 otherwise)
"$B" --device cuda -q "$T/lap.mtx" -o "$T/g.mtx" 2>/dev/null; grc=$?
if [ $grc != 4 ]; then
    for m in cg pcg bicgstab jacobi gauss-seidel richardson; do
        for f in auto csr ell hyb; do
            rm -f "$T/g.mtx"
            check "gpu-$m-$f" 0 "$B" --device cuda --method $m --format $f --tol 1e-10 --maxiter 100000 "$T/lap.mtx" -o "$T/g.mtx"
            if awk 'NR>3 && ($1 < 1-1e-6 || $1 > 1+1e-6) {bad=1} END {exit bad}' "$T/g.mtx"; then echo "ok gpu-$m-$f-ones"; else echo "FAIL gpu-$m-$f-ones"; fail=1; fi
        done
    done
    check gpu-single 0 "$B" --device cuda --precision single --tol 1e-5 "$T/lap.mtx" -o "$T/g.mtx"
    # --reorder rcm on the GPU (split PCG in CSR and ELL): the CPU's x without reordering
    for f in csr ell; do
        check "gpu-reorder-$f" 0 "$B" --device cuda --reorder rcm --format $f --method pcg --tol 1e-12 "$T/perm.mtx" -b "$T/bp.mtx" -o "$T/g.mtx"
        if paste "$T/x0.mtx" "$T/g.mtx" | awk 'NR>3 { d = $1 - $2; if (d < 0) d = -d; s = $1 < 0 ? -$1 : $1; if (d > 1e-8 * (s + 1)) bad = 1 } END { exit bad }'; then echo "ok gpu-reorder-$f-x"; else echo "FAIL gpu-reorder-$f-x"; fail=1; fi
    done
    check gpu-bench 0 "$B" --device cuda --spmv-bench 5 "$T/lap.mtx"; has gpu-bench-merge "$T/out" "csr-merge"
    rm -f "$T/g.mtx"; check gpu-notspd 1 "$B" --device cuda --method cg "$T/indef.mtx" -b "$T/bind.mtx" -o "$T/g.mtx"; has gpu-notspd-msg "$T/err" "bicgstab"
else
    echo "(no GPU: GPU runs of the program skipped)"
fi
exit $fail
