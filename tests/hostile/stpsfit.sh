#!/bin/bash
# Hostile inputs for stpsfit (see lib.sh and README.md).
. "$(dirname "$0")/lib.sh"
hostile_init "${1:-}"
S=("$PROG" --device cpu -q)
cp "$TD/tps/src.txt" "$TD/tps/dst.txt" "$TD/tps/grid.ply" "$W/"
"${S[@]}" "$W/src.txt" "$W/dst.txt" -o "$T/p.txt" || { echo "FAIL: cannot fit the test spline"; exit 1; }
mv "$T/p.txt" "$W/p.txt"
printf 'NRRD0004\ntype: uint8\ndimension: 3\nsizes: 4 4 4\nencoding: raw\n\n' > "$W/v.nrrd"
head -c 64 /dev/zero >> "$W/v.nrrd"
printf 'NRRD0004\ntype: uint8\ndimension: 3\nsizes: 4 4 4\nencoding: raw\ndata file: v.raw\n' > "$W/v.nhdr"
head -c 64 /dev/zero > "$W/v.raw"
head -c 80 "$W/v.nrrd" > "$W/vtrunc.nrrd"
head -30 "$W/p.txt" > "$W/ptrunc.txt"
sed '12s/^[^ ]*/nan/' "$W/p.txt" > "$W/pnan.txt"
sed 's/^n 40$/n 4000000000/' "$W/p.txt" > "$W/plying.txt"
: > "$W/empty.txt"
head -5 "$W/src.txt" > "$W/four.txt" # a comment and 4 points
head -30 "$W/dst.txt" > "$W/dst29.txt"
sed '5s/.*/0.1 nan 0.3/' "$W/src.txt" > "$W/srcnan.txt"
printf '0 0 0\n0 0 0\n1 1 1\n2 2 2\n3 3 3\n4 4 5\n' > "$W/coincide.txt"
printf '0 0 0\n1 1 1\n2 2 2\n3 3 3\n4 4 4\n5 5 5\n' > "$W/collinear.txt"
printf 'ply\nformat ascii 1.0\nelement vertex 6\nproperty float x\nproperty float y\nproperty float z\nend_header\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 1 inf\n2 3 1\n' > "$W/inf.ply"
printf '1 2 3\n4 5 x\n' > "$W/badtoken.txt"
head -c 2000 "$W/grid.ply" > "$W/gridtrunc.ply"
mkdir "$W/outdir"

# an output never replaces an input, in every mode
same_file_cases out-is-source "$W/src.txt" SOURCE -- "${S[@]}" "$W/src.txt" "$W/dst.txt" -o @OUT@
run_case out-is-target 2 "-o '$W/dst.txt' is the same file as the input '$W/dst.txt' \(TARGET\)" -- "${S[@]}" "$W/src.txt" "$W/dst.txt" -o "$W/dst.txt"
run_case out-is-params 2 "same file as the input '$W/p.txt' \(--params\)" -- "${S[@]}" --params "$W/p.txt" --apply "$W/src.txt" -o "$W/p.txt"
run_case out-is-apply-input 2 "same file as the input '$W/grid.ply' \(--apply\)" -- "${S[@]}" --params "$W/p.txt" --apply "$W/grid.ply" -o "$W/grid.ply"
run_case out-is-apply-volume 2 "same file as the input '$W/v.nrrd' \(--apply-volume\)" -- "${S[@]}" --params "$W/p.txt" --apply-volume "$W/v.nrrd" -o "$W/v.nrrd"
run_case out-is-volume-data-file 2 "same file as the input '$W/v.raw' \(the NRRD's data file\)" -- "${S[@]}" --params "$W/p.txt" --apply-volume "$W/v.nhdr" -o "$W/v.raw"
run_case stdin-is-output 2 "same file as the input on standard input \(SOURCE\)" --stdin "$W/src.txt" -- "${S[@]}" - "$W/dst.txt" -o "$W/src.txt"
run_case stdout-appends-to-source 2 "standard output\) is the same file as the input '$W/src.txt'" --stdout-append "$W/src.txt" -- "${S[@]}" "$W/src.txt" "$W/dst.txt" -o -
# where the output goes, and in which format
run_case out-missing-directory 1 "cannot write '$W/nodir/p.txt'.*does not exist" -- "${S[@]}" "$W/src.txt" "$W/dst.txt" -o "$W/nodir/p.txt"
run_case out-is-a-directory 2 "outdir' is a directory" -- "${S[@]}" "$W/src.txt" "$W/dst.txt" -o "$W/outdir"
run_case fit-extension-ply 2 "p.ply': the name says a PLY file, but stpsfit writes an stpsfit parameter file there.*--out-format tps" -- "${S[@]}" "$W/src.txt" "$W/dst.txt" -o "$W/p.ply"
run_case apply-text-extension-ply 2 "w.ply': the name says a PLY file, but stpsfit writes point text there" -- "${S[@]}" --params "$W/p.txt" --apply "$W/src.txt" -o "$W/w.ply"
run_case apply-ply-extension-txt 2 "w.txt': the name says text, but stpsfit writes a PLY file there" -- "${S[@]}" --params "$W/p.txt" --apply "$W/grid.ply" -o "$W/w.txt"
run_case volume-extension-raw 2 "o.raw': the name says raw data, but stpsfit writes a NRRD volume there" -- "${S[@]}" --params "$W/p.txt" --apply-volume "$W/v.nrrd" -o "$W/o.raw"
run_case out-format-other-mode 2 "--out-format ply: this mode writes a parameter file" -- "${S[@]}" "$W/src.txt" "$W/dst.txt" --out-format ply -o "$W/p.ply"
run_case stdout-closed 1 "write error on ('-'|standard output)" --stdout-closed -- "${S[@]}" "$W/src.txt" "$W/dst.txt" -o -
# options
run_case output-twice 2 "-o given twice" -- "${S[@]}" "$W/src.txt" "$W/dst.txt" -o "$W/a.txt" -o "$W/b.txt"
run_case params-twice 2 "--params given twice" -- "${S[@]}" -p "$W/p.txt" -p "$W/p.txt" --apply "$W/src.txt" -o "$W/w.txt"
run_case apply-and-apply-volume 2 "cannot be combined" -- "${S[@]}" -p "$W/p.txt" --apply "$W/src.txt" --apply-volume "$W/v.nrrd" -o "$W/w.txt"
run_case lambda-negative 2 "--lambda" -- "${S[@]}" --lambda -1 "$W/src.txt" "$W/dst.txt" -o "$W/a.txt"
run_case one-operand 2 "expected SOURCE and TARGET \(got 1 operands\)" -- "${S[@]}" "$W/src.txt" -o "$W/a.txt"
run_case two-stdin-inputs 2 "SOURCE and TARGET both read standard input" --stdin "$W/src.txt" -- "${S[@]}" - - -o "$W/a.txt"
# paths that cannot be read
run_case missing-source 1 "cannot open '$W/nope.txt' \(SOURCE\)" -- "${S[@]}" "$W/nope.txt" "$W/dst.txt" -o "$W/a.txt"
run_case missing-params 1 "cannot open '$W/nope.txt' \(--params\)" -- "${S[@]}" -p "$W/nope.txt" --apply "$W/src.txt" -o "$W/a.txt"
run_case target-is-a-directory 1 "cannot read '$W/outdir' \(TARGET\): it is a directory" -- "${S[@]}" "$W/src.txt" "$W/outdir" -o "$W/a.txt"
U=$(unreadable_input "$W/src.txt")
run_case unreadable-source 1 "cannot (open|read) '$U'" -- "${S[@]}" "$U" "$W/dst.txt" -o "$W/a.txt"
# broken, lying and degenerate landmarks and parameter files
run_case empty-source 3 "at least 5 control points, got 0" -- "${S[@]}" "$W/empty.txt" "$W/empty.txt" -o "$W/a.txt"
run_case four-points 3 "at least 5 control points, got 4" -- "${S[@]}" "$W/four.txt" "$W/four.txt" -o "$W/a.txt"
run_case counts-differ 3 "has 40 points but TARGET '$W/dst29.txt' has 29" -- "${S[@]}" "$W/src.txt" "$W/dst29.txt" -o "$W/a.txt"
run_case nan-landmark-text 3 "non-finite coordinate 'nan'.*srcnan.txt:5" -- "${S[@]}" "$W/srcnan.txt" "$W/dst.txt" -o "$W/a.txt"
run_case inf-landmark-ply 3 "vertex 4 \(of 6, counting from 0\) is \(1, 1, inf\).*inf.ply" -- "${S[@]}" "$W/inf.ply" "$W/inf.ply" -o "$W/a.txt"
run_case bad-token-on-stdin 3 "not a number: 'x' \(<stdin>:2\)" --stdin-pipe "$W/badtoken.txt" -- "${S[@]}" - "$W/dst.txt" -o "$W/a.txt"
run_case coincident-points 3 "control points 1 and 2 coincide" -- "${S[@]}" "$W/coincide.txt" "$W/coincide.txt" -o "$W/a.txt"
run_case collinear-points 3 "collinear" -- "${S[@]}" "$W/collinear.txt" "$W/collinear.txt" -o "$W/a.txt"
run_case params-empty 3 "not an stpsfit parameter file" -- "${S[@]}" -p "$W/empty.txt" --apply "$W/src.txt" -o "$W/a.txt"
run_case params-truncated 3 "file ends after 19 of 40 control points.*ptrunc.txt:30" -- "${S[@]}" -p "$W/ptrunc.txt" --apply "$W/src.txt" -o "$W/a.txt"
run_case params-nan 3 "6 finite numbers.*pnan.txt:12" -- "${S[@]}" -p "$W/pnan.txt" --apply "$W/src.txt" -o "$W/a.txt"
run_case params-lying-count 3 "file ends after 40 of 4000000000 control points" -- "${S[@]}" -p "$W/plying.txt" --apply "$W/src.txt" -o "$W/a.txt"
run_case apply-truncated-ply 3 "record 41: missing value for .red.*gridtrunc.ply:54" -- "${S[@]}" -p "$W/p.txt" --apply "$W/gridtrunc.ply" -o "$W/a.ply"
run_case apply-volume-truncated 3 "volume data needs 64 bytes \(4 x 4 x 4 uint8\), the file has [0-9]+ after the header" -- "${S[@]}" -p "$W/p.txt" --apply-volume "$W/vtrunc.nrrd" -o "$W/a.nrrd"
hostile_finish
