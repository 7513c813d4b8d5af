#!/usr/bin/env bash
# CLI tests of stpsfit: fit/apply round trip, 2-D input, PLY mesh warp keeping
# properties and faces, GCV output, every bad input with its exit code and
# message, and no output file left behind on failure. Runs on the CPU.
set -u
prog=$1
td=${GT_TESTDATA:-$(dirname "$0")/../../testdata}/tps
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }
run() { out=$("$prog" --device cpu "$@" 2>&1); rc=$?; }

run --help; check "--help exits 0" '[ $rc -eq 0 ]'
for o in --lambda --kernel --params --apply --apply-volume --timings --device; do
  check "--help lists $o" '[[ "$out" == *"$o"* ]]'
done
run --version; check "--version" '[ $rc -eq 0 ] && [[ "$out" == *gputools* ]]'

# fit and apply: at lambda = 0 f(source) = target (1e-9 of the scale)
run "$td/src.txt" "$td/dst.txt" -o "$tmp/p.txt"
check "fit exits 0" '[ $rc -eq 0 ] && [ -s "$tmp/p.txt" ]'
check "params header" 'grep -q "^stpsfit-params 1" "$tmp/p.txt" && grep -q "^kernel r2logr" "$tmp/p.txt" && grep -q "^n 40" "$tmp/p.txt"'
run --params "$tmp/p.txt" --apply "$td/src.txt" -o "$tmp/w.txt"
check "apply exits 0" '[ $rc -eq 0 ]'
maxerr=$(paste "$tmp/w.txt" <(grep -v '^#' "$td/dst.txt") | awk '{for(i=1;i<=3;i++){d=$i-$(i+3); if(d<0)d=-d; if(d>m)m=d}} END{printf "%.3g", m+0}')
check "interpolates the targets (max err $maxerr)" 'awk -v e="$maxerr" "BEGIN{exit !(e < 1e-9)}"'

# smoothing and kernels
run --lambda 0.5 --kernel r "$td/src.txt" "$td/dst.txt" -o "$tmp/pr.txt"
check "--kernel r --lambda 0.5" '[ $rc -eq 0 ] && grep -q "^kernel r$" "$tmp/pr.txt" && grep -q "^lambda 0.5$" "$tmp/pr.txt"'
run -v --lambda gcv "$td/src.txt" "$td/dst.txt" -o "$tmp/pg.txt"
check "--lambda gcv prints the choice" '[ $rc -eq 0 ] && [[ "$out" == *"lambda chosen by GCV"* ]]'
check "-v prints the GCV curve" '[ $(printf "%s\n" "$out" | grep -cE "^[0-9.e+-]+ [0-9.e+-]+$") -gt 50 ]'

# 2-D input (x y lines, z = 0): accepted, fitted with the planar affine part
run "$td/src2d.txt" "$td/dst2d.txt" -o "$tmp/p2.txt"
check "2-D input accepted" '[ $rc -eq 0 ] && grep -q "^planar 1" "$tmp/p2.txt"'
run --params "$tmp/p2.txt" --apply "$td/src2d.txt" -o "$tmp/w2.txt"
maxerr=$(paste "$tmp/w2.txt" "$td/dst2d.txt" | awk '{for(i=1;i<=2;i++){d=$i-$(i+3); if(d<0)d=-d; if(d>m)m=d}; z=$3<0?-$3:$3; if(z>m)m=z} END{printf "%.3g", m+0}')
check "2-D warp interpolates, z stays 0 (max err $maxerr)" 'awk -v e="$maxerr" "BEGIN{exit !(e < 1e-9)}"'

# PLY mesh: other properties and faces kept
run --params "$tmp/p.txt" --apply "$td/grid.ply" -o "$tmp/g.ply" --ascii
check "mesh warp exits 0" '[ $rc -eq 0 ]'
check "faces and properties kept" 'grep -q "element face 128" "$tmp/g.ply" && grep -q "property float quality" "$tmp/g.ply" && grep -q "property uchar red" "$tmp/g.ply" && grep -q "element vertex 81" "$tmp/g.ply"'
sed -n '/end_header/,$p' "$td/grid.ply" | sed -n 2,82p > "$tmp/gin.in"
sed -n '/end_header/,$p' "$tmp/g.ply" | sed -n 2,82p > "$tmp/gout.in"
qdiff=$(paste "$tmp/gin.in" "$tmp/gout.in" | awk '{d=$4-$9; if(d<0)d=-d; if(d>m)m=d; if($5!=$10)bad=1} END{print (bad?1:m+0)}')
check "quality/red columns unchanged" 'awk -v e="$qdiff" "BEGIN{exit !(e < 1e-6)}"'
check "vertices moved" '! cmp -s <(awk "{print \$1}" "$tmp/gin.in") <(awk "{print \$1}" "$tmp/gout.in")'

# bad inputs: exit 3, clear message, no output file
bad() { # name needle args...
  local name=$1 needle=$2; shift 2
  rm -f "$tmp/out.txt"
  run "$@" -o "$tmp/out.txt"
  check "$name: exit 3" '[ $rc -eq 3 ]'
  check "$name: message" '[[ "$out" == *"$needle"* ]] && [[ "$out" == "stpsfit: error: "* ]]'
  check "$name: no output" '[ ! -e "$tmp/out.txt" ] && [ -z "$(ls "$tmp" | grep -v -E "^(p|pr|pg|p2)\.txt$|^w2?\.txt$|^g\.ply$|^[a-z0-9]+\.in$")" ]'
}
printf '0 0 0\n1 0 0\n0 1 0\n0 0 1\n' > "$tmp/four.in"
bad "4 points" "at least 5" "$tmp/four.in" "$tmp/four.in"
head -n 30 "$td/src.txt" > "$tmp/short.in"
bad "different counts" "must pair up" "$td/src.txt" "$tmp/short.in"
printf '0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 0 0\n1 1 1\n' > "$tmp/dup.in"
bad "coincident points" "coincide" "$tmp/dup.in" "$tmp/dup.in"
printf '0 0 0\n1 1 1\n2 2 2\n3 3 3\n4 4 4\n' > "$tmp/line.in"
bad "collinear points" "collinear" "$tmp/line.in" "$tmp/line.in"
printf '0 0 1\n1 0 0\n0 1 0\n0.5 0.5 0\n0.2 0.3 0.5\n0.1 0.1 0.8\n' > "$tmp/plane.in"
bad "coplanar points" "coplanar" "$tmp/plane.in" "$tmp/plane.in"
bad "not positive definite at lambda = 0" "not positive definite" "$td/near.txt" "$td/near.txt"
run --lambda 0.1 "$td/near.txt" "$td/near.txt" -o "$tmp/pn.txt"
check "near-coincident points fit with lambda > 0" '[ $rc -eq 0 ]'
rm -f "$tmp/pn.txt"
printf '0 0 0\n1 0 0\n0 1 0\n0 0 1\nnan 1 1\n' > "$tmp/nan.in"
rm -f "$tmp/out.txt"; run "$tmp/nan.in" "$tmp/nan.in" -o "$tmp/out.txt"
check "NaN: exit 3, no output" '[ $rc -eq 3 ] && [ ! -e "$tmp/out.txt" ]'
check "NaN: message" '[[ "$out" == *NaN* ]] || [[ "$out" == *nan* ]]'

# usage errors: exit 2
run "$td/src.txt" "$td/dst.txt"; check "missing -o: exit 2" '[ $rc -eq 2 ]'
run --lambda -1 "$td/src.txt" "$td/dst.txt" -o "$tmp/x"; check "negative lambda: exit 2" '[ $rc -eq 2 ] && [[ "$out" == *--lambda* ]]'
run --lambda abc "$td/src.txt" "$td/dst.txt" -o "$tmp/x"; check "bad lambda: exit 2" '[ $rc -eq 2 ]'
run --kernel gauss "$td/src.txt" "$td/dst.txt" -o "$tmp/x"; check "bad kernel: exit 2" '[ $rc -eq 2 ] && [[ "$out" == *r2logr* ]]'
run --apply "$td/src.txt" -o "$tmp/x"; check "--apply without --params: exit 2" '[ $rc -eq 2 ]'
run "$td/src.txt" -o "$tmp/x"; check "one operand: exit 2" '[ $rc -eq 2 ]'
run --params "$td/src.txt" --apply "$td/src.txt" -o "$tmp/x"; check "not a params file: exit 3" '[ $rc -eq 3 ] && [[ "$out" == *"not an stpsfit parameter file"* ]]'
# every broken parameter file (fuzz findings and hand-made cases): exit 3, naming the file
for f in "$td"/broken/*; do
  [ "${f##*/}" = EXPECT ] && continue
  run --params "$f" --apply "$td/src.txt" -o "$tmp/x"
  check "broken params ${f##*/}: exit 3 naming the file" '[ $rc -eq 3 ] && [[ "$out" == *"$f:"* ]]'
done
check "no stray outputs" '[ ! -e "$tmp/x" ]'
run "$tmp/missing.txt" "$td/dst.txt" -o "$tmp/x"; check "missing input: exit 1" '[ $rc -eq 1 ]'

# volume: an identity warp reproduces the volume (needs the NRRD writer/reader)
printf '0 0 0\n9 0 0\n0 7 0\n0 0 5\n9 7 5\n4 3 2\n' > "$tmp/id.in"
run "$tmp/id.in" "$tmp/id.in" -o "$tmp/pid.txt"
{ printf 'NRRD0004\ntype: uint8\ndimension: 3\nsizes: 10 8 6\nencoding: raw\n\n'; head -c 480 /dev/urandom; } > "$tmp/v.nrrd"
run --params "$tmp/pid.txt" --apply-volume "$tmp/v.nrrd" -o "$tmp/o.nrrd"
if [ $rc -eq 0 ]; then
  check "identity volume warp keeps the voxels" 'cmp -s <(tail -c 480 "$tmp/v.nrrd") <(tail -c 480 "$tmp/o.nrrd")'
else
  echo "note: --apply-volume unavailable here ($out)"
fi
# on a GPU host: the CUDA fit and apply agree with the CPU ones
out=$("$prog" --device cuda "$td/src.txt" "$td/dst.txt" -o "$tmp/pc.txt" 2>&1); rc=$?
if [ $rc -eq 4 ]; then
  echo "note: no GPU, CUDA comparison skipped"
else
  d=$(paste <(grep -E '^-?[0-9]' "$tmp/p.txt") <(grep -E '^-?[0-9]' "$tmp/pc.txt") | awk '{for(i=1;i<=6;i++){d=$i-$(i+6); if(d<0)d=-d; if(d>m)m=d; a=$i<0?-$i:$i; if(a>s)s=a}} END{printf "%.3g", m/s}')
  check "CUDA params = CPU params (rel $d)" '[ $rc -eq 0 ] && awk -v e="$d" "BEGIN{exit !(e < 1e-9)}"'
  out=$("$prog" --device cuda --params "$tmp/pc.txt" --apply "$td/src.txt" -o "$tmp/wc.txt" 2>&1); rc=$?
  d=$(paste "$tmp/wc.txt" <(grep -v '^#' "$td/dst.txt") | awk '{for(i=1;i<=3;i++){d=$i-$(i+3); if(d<0)d=-d; if(d>m)m=d}} END{printf "%.3g", m+0}')
  check "CUDA apply interpolates (max err $d)" '[ $rc -eq 0 ] && awk -v e="$d" "BEGIN{exit !(e < 1e-9)}"'
fi
exit $fail
