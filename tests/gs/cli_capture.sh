#!/bin/bash
# gsrender --fit CAPTURE as a user runs it: a synthetic COLMAP capture
# (tests/gs/gen_capture: photographs rendered from Gaussians at its points)
# trained from its points3D with the defaults of a capture (every 8th view
# by name held out, densification); the outputs (the PLY, the views beside
# it as OUT.cameras.json and OUT.test.json that gsrender renders from, the
# --metrics rows, --save-at PLYs); -r 2 and -r WIDTH; --mcmc's cap; and bad captures
# (exit 3 naming what is wrong, no output file) and options that do not go
# together (exit 2).
#   cli_capture.sh GEN_CAPTURE [DEVICE]   DEVICE cpu (default) or cuda (skips,
#                                         exit 77, without a GPU)
set -u
BIN=${GSRENDER:-$GT_BUILD_DIR/tools/gsrender}
GEN=$1
D=${2:-cpu}
. "$(dirname "$0")/../lib/checks.sh"
if [ "$D" != cpu ]; then
    "$BIN" --device "$D" -q "$GT_TESTDATA/gs/scene.ply" --size 8x8 -o "$T/probe.png" 2>"$T/e"
    [ $? = 4 ] && { echo "SKIP: no GPU ($(cat "$T/e"))"; exit 77; }
fi
G="$BIN --device $D -q"
"$GEN" "$T/cap" --render --views 16 --points 400 --size 64x48 >/dev/null || { echo "FAIL gen_capture"; exit 1; }

# training from the points: 16 views, views 0 and 8 by name held out
$G --fit "$T/cap" -o "$T/o.ply" --iterations 300 --densify-from-iter 50 --densification-interval 50 \
    --eval-at 100 --save-at 100 --metrics "$T/m.csv" --log "$T/l.csv" 2>"$T/e"
check "fit a capture" 0 $?
for f in o.ply o.cameras.json o.test.json o-100.ply m.csv l.csv; do
    [ -s "$T/$f" ] && ok "wrote $f" || bad "no $f"
done
n_all=$(grep -c '"img_name"' "$T/o.cameras.json"); n_test=$(grep -c '"img_name"' "$T/o.test.json")
[ "$n_all" = 16 ] && [ "$n_test" = 2 ] && ok "cameras: 16 views, 2 held out" || bad "cameras: $n_all views, $n_test held out"
has "metrics header" "$T/m.csv" "iteration,view,psnr,ssim,gaussians"
# each held-out view scored at 0, 100 and 300, and their mean
rows=$(grep -c '^\(0\|100\|300\),' "$T/m.csv")
[ "$rows" = 9 ] && ok "metrics: 2 views and the mean at 3 evaluations" || bad "metrics rows: $rows"
p0=$(awk -F, '$1 == 0 && $2 == "mean" {print $3}' "$T/m.csv")
p3=$(awk -F, '$1 == 300 && $2 == "mean" {print $3}' "$T/m.csv")
awk -v a="$p0" -v b="$p3" 'BEGIN {exit !(b > a + 3)}' && ok "held-out PSNR rises ($p0 -> $p3 dB)" \
    || bad "held-out PSNR $p0 -> $p3 dB"
# the densification changed the count (the log's last column)
g0=$(awk -F, 'NR == 2 {print $8}' "$T/l.csv"); g1=$(tail -1 "$T/l.csv" | awk -F, '{print $8}')
[ -n "$g1" ] && [ "$g1" != "$g0" ] && ok "densified by default ($g0 -> $g1 Gaussians)" || bad "count $g0 -> $g1"
head -c 400 "$T/o.ply" | grep -qa "element vertex $g1" && ok "the PLY holds the log's count" || bad "PLY count"
# gsrender renders a held-out view from the result
view=$(grep -o '"img_name":[^,]*' "$T/o.test.json" | head -1 | sed 's/.*"\([^"]*\)"$/\1/')
$G "$T/o.ply" --cameras "$T/o.test.json" --view "$view" -o "$T/v.png" 2>"$T/e"
check "render held-out view $view" 0 $?
# -r 2: cameras of half the size
$G --fit "$T/cap" -r 2 -o "$T/h.ply" --iterations 5 2>"$T/e"
check "-r 2" 0 $?
has "-r 2 halves the cameras" "$T/h.cameras.json" '"width":	32'
# -r W: a width in pixels (64x48 -> 40x30); 9 to 15 are neither
$G --fit "$T/cap" -r 40 -o "$T/w.ply" --iterations 2 2>"$T/e"
check "-r 40" 0 $?
has "-r 40: cameras 40 wide" "$T/w.cameras.json" '"width":	40'
has "-r 40: and 30 high" "$T/w.cameras.json" '"height":	30'
$G --fit "$T/cap" -r 12 -o "$T/x.ply" --iterations 2 2>"$T/e"
check "-r 12 refused" 2 $?
# --mcmc with a cap, and no held-out view
$G --fit "$T/cap" -o "$T/k.ply" --iterations 60 --mcmc --cap-max 420 --densify-from-iter 10 \
    --densification-interval 10 --test-every 0 --log "$T/k.csv" 2>"$T/e"
check "--mcmc --cap-max" 0 $?
[ "$(tail -1 "$T/k.csv" | awk -F, '{print $8}')" = 420 ] && ok "--mcmc grows to the cap" || bad "--mcmc: $(tail -1 "$T/k.csv")"
[ ! -e "$T/k.test.json" ] && ok "no held-out views: no OUT.test.json" || bad "k.test.json written"
# gsplat's MCMC recipe for the Gaussians made from the points
$G --fit "$T/cap" -o "$T/i.ply" --iterations 20 --mcmc --init-opacity 0.5 --init-scale 0.1 --test-every 0 2>"$T/e"
check "--init-opacity and --init-scale" 0 $?
# starting from a PLY instead of the points
$G --fit "$T/cap" "$T/o.ply" -o "$T/s.ply" --iterations 5 --no-densify 2>"$T/e"
check "start from a PLY" 0 $?

# bad captures: exit 3, the reason named, nothing written
cp -r "$T/cap" "$T/miss"; rm "$(ls "$T"/miss/images/* | head -1)"
$G --fit "$T/miss" -o "$T/x.ply" --iterations 2 2>"$T/e"
check "a photograph missing" 3 $?
[ ! -e "$T/x.ply" ] && [ ! -e "$T/x.cameras.json" ] && ok "nothing written" || bad "output left behind"
cp -r "$T/cap" "$T/size"; f=$(ls "$T"/size/images/* | head -1)
$G "$GT_TESTDATA/gs/scene.ply" --size 40x30 -o "$f" 2>/dev/null
$G --fit "$T/size" -o "$T/x.ply" --iterations 2 2>"$T/e"
check "a photograph of another size" 3 $?
has "the sizes named" "$T/e" "40x30"
"$GEN" "$T/fish" --model OPENCV_FISHEYE --views 4 >/dev/null
$G --fit "$T/fish" -o "$T/x.ply" --iterations 2 2>"$T/e"
check "an unsupported camera model" 3 $?
has "the model named" "$T/e" "OPENCV_FISHEYE"
has "how to undistort" "$T/e" "undistort"
"$GEN" "$T/nopts" --points 0 --views 4 >/dev/null
$G --fit "$T/nopts" -o "$T/x.ply" --iterations 2 2>"$T/e"
check "no 3-D points" 3 $?
mkdir -p "$T/empty/images"
$G --fit "$T/empty" -o "$T/x.ply" --iterations 2 2>"$T/e"
check "no sparse model" 3 $?
[ ! -e "$T/x.ply" ] && ok "nothing written by the failed fits" || bad "x.ply left behind"
# options that do not go together
$G --fit "$T/cap" -o "$T/x.ply" --mcmc --no-densify 2>"$T/e"
check "--mcmc with --no-densify" 2 $?
$G --fit "$T/cap" --cameras "$T/o.cameras.json" -o "$T/x.ply" 2>"$T/e"
check "--cameras without a scene" 2 $?
$G --fit "$T/cap" -o "$T/x.ply" --eval-at 10,x 2>"$T/e"
check "--eval-at with a word" 2 $?
$G --fit "$T/cap" "$T/o.ply" -o "$T/x.ply" --init-opacity 0.5 2>"$T/e"
check "--init-opacity with a starting scene" 2 $?
has "--init-opacity: why" "$T/e" "not with a SCENE"
$G --fit "$T/cap" -o "$T/x.ply" --init-opacity 1 2>"$T/e"
check "--init-opacity 1 refused" 2 $?
$G --fit "$T/cap" -o "$T/x.ply" --init-scale 0 2>"$T/e"
check "--init-scale 0 refused" 2 $?
cp "$T/o.ply" "$T/start-5.ply"
$G --fit "$T/cap" "$T/start-5.ply" -o "$T/start.ply" --save-at 5 --iterations 6 2>"$T/e"
check "a --save-at PLY over the starting scene refused" 2 $?
has "the --save-at file named" "$T/e" "start-5.ply"
exit $fail
