#!/bin/bash
# Hostile inputs for sparsesolve (see lib.sh and README.md).
. "$(dirname "$0")/lib.sh"
hostile_init "${1:-}"
S=("$PROG" --device cpu -q)
cp "$TD/sparse/poisson4009_sub1000.mtx" "$W/A.mtx"
vec() { # file n value
    { echo '%%MatrixMarket matrix array real general'; echo "$2 1"; awk -v n="$2" -v v="$3" 'BEGIN{for(i=0;i<n;i++)print v}'; } > "$1"
}
vec "$W/b.mtx" 1000 1
vec "$W/x0.mtx" 1000 0
mm() { printf '%s\n' "$@"; }
mm '%%MatrixMarket matrix coordinate real general' '3 3 3' '1 1 4' '2 2 nan' '3 3 4' > "$W/nan.mtx"
mm '%%MatrixMarket matrix array real general' '3 1' '1' 'inf' '1' > "$W/binf.mtx"
mm '%%MatrixMarket matrix coordinate real general' '2000000000 2000000000 2' '1 1 1' '2 2 1' > "$W/hugerows.mtx"
mm '%%MatrixMarket matrix coordinate real general' '3000000 3000000 4000000000' '1 1 1' > "$W/lyingnnz.mtx"
mm '%%MatrixMarket matrix coordinate real general' '0 0 0' > "$W/zero.mtx"
mm '%%MatrixMarket matrix coordinate real general' '3 3 2' '1 1 1' '4 1 1' > "$W/range.mtx"
mm '%%MatrixMarket matrix coordinate real general' '3 2 2' '1 1 1' '2 2 1' > "$W/notsquare.mtx"
mm '%%MatrixMarket matrix coordinate real general' '3 3 0' > "$W/noentries.mtx"
mm '%%MatrixMarket matrix coordinate real symmetric' '2 2 3' '1 1 4' '2 1 1' '2 2 4' > "$W/sym2.mtx"
mm '%%MatrixMarket matrix coordinate real general' '3 3 3' '1 1 4' '2 2 4' '3 3 4' > "$W/diag3.mtx"
mm '%%MatrixMarket matrix coordinate real symmetric' '3 3 3' '1 1 4' '2 2 0' '3 3 4' > "$W/zerodiag.mtx"
head -c 5000 "$W/A.mtx" > "$W/trunc.mtx"
: > "$W/empty.mtx"
printf 'ply\nformat ascii 1.0\nelement vertex 0\nend_header\n' > "$W/wrongmagic.mtx"
mkdir "$W/outdir"

# an output never replaces an input, by any name
same_file_cases out-is-matrix "$W/A.mtx" "the matrix" -- "${S[@]}" "$W/A.mtx" -o @OUT@
run_case out-is-rhs 2 "same file as the input '$W/b.mtx' \(-b\)" -- "${S[@]}" "$W/A.mtx" -b "$W/b.mtx" -o "$W/b.mtx"
run_case out-is-x0 2 "same file as the input '$W/x0.mtx' \(--x0\)" -- "${S[@]}" "$W/A.mtx" --x0 "$W/x0.mtx" -o "$W/x0.mtx"
run_case history-is-matrix 2 "--history '$W/A.mtx' is the same file" -- "${S[@]}" "$W/A.mtx" -o "$W/x.mtx" --history "$W/A.mtx"
run_case out-and-history-one-file 2 "are the same file" -- "${S[@]}" "$W/A.mtx" -o "$W/x.txt" --history "$W/outdir/../x.txt"
run_case stdin-is-output 2 "same file as the input on standard input" --stdin "$W/A.mtx" -- "${S[@]}" - -o "$W/A.mtx"
run_case stdout-appends-to-matrix 2 "standard output\) is the same file as the input '$W/A.mtx'" --stdout-append "$W/A.mtx" -- "${S[@]}" "$W/A.mtx" -o -
# where outputs go
run_case out-missing-directory 1 "cannot write '$W/nodir/x.mtx'.*does not exist" -- "${S[@]}" "$W/A.mtx" -o "$W/nodir/x.mtx"
run_case out-is-a-directory 2 "is a directory" -- "${S[@]}" "$W/A.mtx" -o "$W/outdir"
run_case out-under-a-file 1 "not a directory" -- "${S[@]}" "$W/A.mtx" -o "$W/b.mtx/x.mtx"
run_case out-extension-png 2 "x.png': the name says a PNG image, but sparsesolve writes a Matrix Market file.*--out-format mtx" -- "${S[@]}" "$W/A.mtx" -o "$W/x.png"
run_case stdout-closed 1 "write error on standard output" --stdout-closed -- "${S[@]}" "$W/A.mtx" -o -
# options
run_case output-twice 2 "-o given twice" -- "${S[@]}" "$W/A.mtx" -o "$W/x.mtx" -o "$W/y.mtx"
run_case rhs-twice 2 "-b given twice" -- "${S[@]}" "$W/A.mtx" -b "$W/b.mtx" -b "$W/x0.mtx" -o "$W/x.mtx"
run_case two-stdin-inputs 2 "the matrix and -b both read standard input" --stdin "$W/A.mtx" -- "${S[@]}" - -b - -o "$W/x.mtx"
run_case tol-nan 2 "invalid value 'nan' for --tol" -- "${S[@]}" "$W/A.mtx" --tol nan -o "$W/x.mtx"
run_case out-format-unknown 2 "invalid value 'csv' for --out-format" -- "${S[@]}" "$W/A.mtx" --out-format csv -o "$W/x.mtx"
# paths that cannot be read
run_case missing-matrix 1 "cannot open '$W/nope.mtx'" -- "${S[@]}" "$W/nope.mtx" -o "$W/x.mtx"
run_case matrix-is-a-directory 1 "cannot read '$W/outdir' \(the matrix\): it is a directory" -- "${S[@]}" "$W/outdir" -o "$W/x.mtx"
U=$(unreadable_input "$W/A.mtx")
run_case unreadable-matrix 1 "cannot (open|read) '$U'" -- "${S[@]}" "$U" -o "$W/x.mtx"
# broken and lying files
run_case empty-file 3 "empty file.*empty.mtx:1" -- "${S[@]}" "$W/empty.mtx" -o "$W/x.mtx"
run_case wrong-magic 3 "not a Matrix Market file.*wrongmagic.mtx:1" -- "${S[@]}" "$W/wrongmagic.mtx" -o "$W/x.mtx"
run_case truncated 3 "file ends after [0-9]+ of [0-9]+ entries.*trunc.mtx:" -- "${S[@]}" "$W/trunc.mtx" -o "$W/x.mtx"
run_case nan-entry 3 "value 'nan' of entry \(2, 2\) is not a finite number.*nan.mtx:4" -- "${S[@]}" "$W/nan.mtx" -o "$W/x.mtx"
run_case inf-in-rhs 3 "value 'inf' \(number 2 of the array\) is not a finite number.*binf.mtx:4" -- "${S[@]}" "$W/diag3.mtx" -b "$W/binf.mtx" -o "$W/x.mtx"
run_case huge-rows-few-entries 3 "2000000000 x 2000000000 coordinate matrix with only 2 entries is implausible" -- "${S[@]}" "$W/hugerows.mtx" -o "$W/x.mtx"
run_case lying-entry-count 3 "file ends after 1 of 4000000000 entries" -- "${S[@]}" "$W/lyingnnz.mtx" -o "$W/x.mtx"
run_case zero-size 3 "sizes must be >= 1.*zero.mtx:2" -- "${S[@]}" "$W/zero.mtx" -o "$W/x.mtx"
run_case no-entries 3 "the matrix is empty \(3x3, 0 nonzeros\)" -- "${S[@]}" "$W/noentries.mtx" -o "$W/x.mtx"
run_case index-out-of-range 3 "index \(4, 1\) outside the 3 x 3 matrix.*range.mtx:4" -- "${S[@]}" "$W/range.mtx" -o "$W/x.mtx"
run_case not-square 3 "not square \(3x2\)" -- "${S[@]}" "$W/notsquare.mtx" -o "$W/x.mtx"
run_case rhs-wrong-length 3 "b has 1000 entries but the matrix has 2 rows" -- "${S[@]}" "$W/sym2.mtx" -b "$W/b.mtx" -o "$W/x.mtx"
run_case x0-wrong-length 3 "x0 has 1000 entries but the matrix has 2 rows" -- "${S[@]}" "$W/sym2.mtx" --x0 "$W/x0.mtx" -o "$W/x.mtx"
run_case zero-diagonal-pcg 3 "zero" -- "${S[@]}" "$W/zerodiag.mtx" -o "$W/x.mtx"
run_case truncated-on-stdin 3 "file ends after [0-9]+ of [0-9]+ entries.*<stdin>" --stdin-pipe "$W/trunc.mtx" -- "${S[@]}" - -o "$W/x.mtx"
# the solve itself stops early: nothing written
run_case not-converged 1 "iteration limit|stopped|not converge" -- "${S[@]}" "$W/A.mtx" --maxiter 2 -o "$W/x.mtx"
hostile_finish
