#!/bin/bash
# gsrender --fit as a user runs it (CPU path, so that it runs without a GPU):
# the views of testdata/gs rendered to PNGs named by img_name, refined for a
# few iterations; the log, the output PLY (read back by gsrender), held-out
# views, -r 2; the data errors (missing, mis-sized, unreadable image: exit 3
# naming the camera and the path, no output file), an image without a camera
# (a -v note), and the options that do not go with --fit (exit 2).
#   cli_fit.sh [DEVICE]   DEVICE cpu (default) or cuda (skips, exit 77,
#                         without a GPU)
set -u
BIN=${GSRENDER:-$GT_BUILD_DIR/tools/gsrender}
D=${1:-cpu}
TD=$GT_TESTDATA/gs
. "$(dirname "$0")/../lib/checks.sh"
if [ "$D" != cpu ]; then
    "$BIN" --device "$D" -q "$TD/scene.ply" --size 8x8 -o "$T/probe.png" 2>"$T/e"
    [ $? = 4 ] && { echo "SKIP: no GPU ($(cat "$T/e"))"; exit 77; }
fi
G="$BIN --device $D -q"
mkdir -p "$T/img"
for v in view000 view001 view002 view003; do
    $G "$TD/scene.ply" --cameras "$TD/cameras.json" --view $v --background 0,0,0 -o "$T/img/$v.png" 2>"$T/e"
done
# the fit starts from the scene that made the images: these tests are of the
# command, the recovery of a perturbed scene is test_gs_fit_train.c's
FIT="$G --fit $T/img --cameras $TD/cameras.json $TD/scene.ply"

$FIT --iterations 20 --log "$T/loss.csv" -o "$T/out.ply" 2>"$T/e"
check "fit runs" 0 $?
has "log header" "$T/loss.csv" "iteration,loss,l1,ssim,psnr,seconds,test_psnr,gaussians"
[ "$(grep -c '^[0-9]' "$T/loss.csv")" = 20 ] && ok "a log row per iteration" || bad "log rows: $(grep -c '^[0-9]' "$T/loss.csv")"
head -c 2000 "$T/out.ply" | strings >"$T/h"
has "output is a 3DGS PLY" "$T/h" "element vertex 1000"
has "output keeps SH rest" "$T/h" "f_rest_44"
$G "$T/out.ply" --cameras "$TD/cameras.json" --view 1 -o "$T/r.png" 2>"$T/e"
check "gsrender reads the refined scene" 0 $?

$FIT --iterations 10 --test-views view001,3 --eval-every 5 --log "$T/t.csv" -o "$T/t.ply" 2>"$T/e"
check "held-out views" 0 $?
matches "held-out PSNR logged at 5" "$T/t.csv" '^5,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[0-9][0-9.]*,1000$'
matches "held-out PSNR at the start" "$T/t.csv" '^0,,,,,'
# the scene made the images: at its own SH degree (--sh-start 3) the held-out
# view matches them to 8-bit rounding; the schedule for training from points
# (--sh-start 0) leaves out the view-dependent colour; the default is the
# scene's degree (the reference's for a scene loaded from a PLY)
$FIT --iterations 1 --test-views 1 --sh-start 3 --log "$T/s3.csv" -o "$T/s3.ply" 2>"$T/e"
check "--sh-start 3" 0 $?
$FIT --iterations 1 --test-views 1 --sh-start 0 --log "$T/s0.csv" -o "$T/s0.ply" 2>"$T/e"
$FIT --iterations 1 --test-views 1 --log "$T/sd.csv" -o "$T/sd.ply" 2>"$T/e"
p3=$(awk -F, '$1 == 0 {print $7}' "$T/s3.csv"); p0=$(awk -F, '$1 == 0 {print $7}' "$T/s0.csv")
pd=$(awk -F, '$1 == 0 {print $7}' "$T/sd.csv")
awk -v a="$p3" -v b="$p0" 'BEGIN {exit !(a > 45 && a > b + 5)}' && ok "--sh-start 3 renders the full SH ($p3 vs $p0 dB)" \
    || bad "held-out PSNR at --sh-start 3: $p3 dB, at 0: $p0 dB"
[ -n "$pd" ] && [ "$pd" = "$p3" ] && ok "default SH start: the scene's degree ($pd dB)" || bad "default: $pd dB, --sh-start 3: $p3"
# every learning rate 0 (the reference's option names): nothing moves, the
# held-out views render as before the fit
$FIT --iterations 3 --test-views 1 --position-lr-init 0 --position-lr-final 0 --feature-lr 0 --opacity-lr 0 \
    --scaling-lr 0 --rotation-lr 0 --log "$T/z.csv" -o "$T/z.ply" 2>"$T/e"
check "all learning rates 0" 0 $?
z0=$(awk -F, '$1 == 0 {print $7}' "$T/z.csv"); z3=$(awk -F, '$1 == 3 {print $7}' "$T/z.csv")
[ -n "$z0" ] && [ "$z0" = "$z3" ] && ok "rates 0: held-out PSNR unchanged ($z0 dB)" || bad "rates 0: $z0 -> $z3 dB"
$FIT --iterations 3 --test-views 1 --feature-lr 0.05 --feature-rest-lr 0.01 --log "$T/f.csv" -o "$T/f.ply" 2>"$T/e"
check "--feature-lr, --feature-rest-lr" 0 $?
f3=$(awk -F, '$1 == 3 {print $7}' "$T/f.csv")
[ -n "$f3" ] && [ "$f3" != "$z0" ] && ok "a feature rate moves the colours" || bad "feature rates: $z0 -> $f3 dB"
# --lambda-dssim (the reference's lambda_dssim): the loss logged is
# (1 - X) L1 + X (1 - SSIM) of the same row's L1 and SSIM
for X in 0 1 0.5; do
    $FIT --iterations 3 --test-views 1 --lambda-dssim $X --log "$T/l$X.csv" -o "$T/l.ply" 2>"$T/e"
    check "--lambda-dssim $X" 0 $?
    awk -F, -v x=$X '$1 ~ /^[0-9]+$/ && $1 > 0 {n++; d = $2 - ((1 - x) * $3 + x * (1 - $4)); if (d < 0) d = -d; if (d > 2e-7) bad++}
        END {exit !(n == 3 && bad == 0)}' "$T/l$X.csv" && ok "--lambda-dssim $X: loss = (1 - X) L1 + X D-SSIM" \
        || bad "--lambda-dssim $X: $(head -5 "$T/l$X.csv" | tr '\n' ' ')"
done
$FIT --iterations 2 --lambda-dssim 1.5 -o "$T/x.ply" 2>"$T/e"
check "--lambda-dssim out of [0, 1]" 2 $?
# the reference's -w and --antialiasing: the same images as --background 1,1,1 and --antialias
$G "$TD/scene.ply" --cameras "$TD/cameras.json" --view 1 --background 1,1,1 -o "$T/bw.png" 2>"$T/e"
$G "$TD/scene.ply" --cameras "$TD/cameras.json" --view 1 -w -o "$T/w.png" 2>"$T/e"
check "-w" 0 $?
cmp -s "$T/w.png" "$T/bw.png" && ok "-w renders as --background 1,1,1" || bad "-w differs from --background 1,1,1"
cmp -s "$T/w.png" "$T/r.png" && bad "-w renders as the black background" || ok "-w is not the default background"
$G "$TD/scene.ply" --cameras "$TD/cameras.json" --view 1 --antialias -o "$T/aa.png" 2>"$T/e"
$G "$TD/scene.ply" --cameras "$TD/cameras.json" --view 1 --antialiasing -o "$T/aa2.png" 2>"$T/e"
check "--antialiasing" 0 $?
cmp -s "$T/aa.png" "$T/aa2.png" && ok "--antialiasing is --antialias" || bad "--antialiasing differs from --antialias"
$FIT --iterations 2 --position-lr-init 0 -o "$T/x.ply" 2>"$T/e"
check "--position-lr-init 0 with a final rate" 2 $?
$FIT --iterations 2 --opacity-lr -1 -o "$T/x.ply" 2>"$T/e"
check "negative learning rate" 2 $?
$G "$TD/scene.ply" --feature-lr 0.01 -o "$T/u.png" 2>"$T/e"
check "--feature-lr without --fit" 2 $?
$FIT --iterations 2 --test-views view000,view001,view002,view003 -o "$T/x.ply" 2>"$T/e"
check "every view held out" 2 $?
$FIT --iterations 2 --test-views nosuch -o "$T/x.ply" 2>"$T/e"
check "unknown held-out view" 2 $?
has "unknown view named" "$T/e" "nosuch"

$FIT --iterations 3 -r 2 -o "$T/r2.ply" 2>"$T/e"
check "-r 2 with full-size images" 0 $?
$FIT --iterations 3 -r 3 -o "$T/r3.ply" 2>"$T/e"
check "-r 3 refused" 2 $?

# --densify (the reference's adaptive density control): with a gradient
# threshold of 0 every Gaussian is a candidate at the first step (iteration
# 3: cloned when small, split in two when large), so the count grows; the
# log's last column and the output PLY say the same count; with a threshold
# no gradient reaches nothing is added; --max-gaussians caps the growth
$FIT --iterations 5 --densify --densify-from-iter 1 --densification-interval 3 --densify-grad-threshold 0 \
    --densify-until-iter 5 --log "$T/dn.csv" -o "$T/dn.ply" 2>"$T/e"
check "--densify" 0 $?
n2=$(awk -F, '$1 == 2 {print $8}' "$T/dn.csv"); n5=$(awk -F, '$1 == 5 {print $8}' "$T/dn.csv")
[ "$n2" = 1000 ] && [ -n "$n5" ] && [ "$n5" -gt 1500 ] && ok "densified: $n2 -> $n5 Gaussians" || bad "densify: $n2 -> $n5"
head -c 2000 "$T/dn.ply" | strings >"$T/h"
has "densified PLY holds the log's count" "$T/h" "element vertex $n5"
$G "$T/dn.ply" --cameras "$TD/cameras.json" --view 1 -o "$T/dn.png" 2>"$T/e"
check "gsrender reads the densified scene" 0 $?
$FIT --iterations 5 --densify --densify-from-iter 1 --densification-interval 3 --densify-grad-threshold 1e9 \
    --log "$T/dh.csv" -o "$T/dh.ply" 2>"$T/e"
check "--densify, threshold out of reach" 0 $?
nh=$(awk -F, '$1 == 5 {print $8}' "$T/dh.csv")
[ -n "$nh" ] && [ "$nh" -le 1000 ] && ok "nothing added above the gradients ($nh)" || bad "threshold 1e9: $nh Gaussians"
$FIT --iterations 5 --densify --densify-from-iter 1 --densification-interval 3 --densify-grad-threshold 0 \
    --densify-until-iter 5 --max-gaussians 1100 --log "$T/dc.csv" -o "$T/dc.ply" 2>"$T/e"
check "--max-gaussians" 0 $?
nc=$(awk -F, '$1 == 5 {print $8}' "$T/dc.csv")
[ -n "$nc" ] && [ "$nc" -le 1100 ] && [ "$nc" -gt 1000 ] && ok "--max-gaussians 1100: $nc" || bad "--max-gaussians 1100: $nc"
# --mcmc: no Gaussian is near transparent here, so each step grows the count
# by 5 % (1000 -> 1050 -> 1102), capped by --cap-max
$FIT --iterations 9 --mcmc --densify-from-iter 1 --densification-interval 4 --densify-until-iter 9 \
    --log "$T/mc.csv" -o "$T/mc.ply" 2>"$T/e"
check "--mcmc" 0 $?
m3=$(awk -F, '$1 == 3 {print $8}' "$T/mc.csv"); m4=$(awk -F, '$1 == 4 {print $8}' "$T/mc.csv")
m8=$(awk -F, '$1 == 8 {print $8}' "$T/mc.csv")
[ "$m3" = 1000 ] && [ "$m4" = 1050 ] && [ "$m8" = 1102 ] && ok "--mcmc grows 5 % a step" || bad "--mcmc: $m3 $m4 $m8"
head -c 2000 "$T/mc.ply" | strings >"$T/h"
has "MCMC PLY holds the log's count" "$T/h" "element vertex 1102"
$FIT --iterations 9 --mcmc --densify-from-iter 1 --densification-interval 4 --densify-until-iter 9 --cap-max 1020 \
    --log "$T/mk.csv" -o "$T/mk.ply" 2>"$T/e"
check "--cap-max" 0 $?
[ "$(awk -F, '$1 == 9 {print $8}' "$T/mk.csv")" = 1020 ] && ok "--cap-max 1020" || bad "--cap-max: $(tail -1 "$T/mk.csv")"
$FIT --iterations 2 --mcmc --densify -o "$T/x.ply" 2>"$T/e"
check "--mcmc with --densify" 2 $?
$FIT --iterations 2 --mcmc --percent-dense 0.02 -o "$T/x.ply" 2>"$T/e"
check "--percent-dense with --mcmc" 2 $?
$FIT --iterations 2 --densify --noise-lr 1000 -o "$T/x.ply" 2>"$T/e"
check "--noise-lr without --mcmc" 2 $?
$FIT --iterations 8 --densify --densify-from-iter 2 --densification-interval 3 --densify-until-iter 8 \
    --min-opacity 1 -o "$T/p0.ply" 2>"$T/e"
check "every Gaussian pruned" 1 $?
has "every Gaussian pruned: said" "$T/e" "pruned every Gaussian"
[ ! -e "$T/p0.ply" ] && ok "no output when nothing is left" || bad "p0.ply written"
# the opacity reset: every --opacity-reset-interval in the window, and on a
# white background once at --densify-from-iter (the reference's rule)
$BIN --device $D -v --fit "$T/img" --cameras "$TD/cameras.json" "$TD/scene.ply" --iterations 6 --densify \
    --densify-from-iter 2 --densification-interval 100 --densify-until-iter 6 --opacity-reset-interval 4 \
    -o "$T/or.ply" 2>"$T/e"
check "--opacity-reset-interval" 0 $?
has "opacities reset at 4" "$T/e" "iteration 4: opacities reset"
[ "$(grep -c "opacities reset" "$T/e")" = 1 ] && ok "one reset on a black background" || bad "resets: $(grep -c "opacities reset" "$T/e")"
$BIN --device $D -v --fit "$T/img" --cameras "$TD/cameras.json" "$TD/scene.ply" --iterations 6 --densify \
    --densify-from-iter 2 --densification-interval 100 --densify-until-iter 6 --opacity-reset-interval 4 \
    --background 1,1,1 -o "$T/ow.ply" 2>"$T/e"
check "white background" 0 $?
has "white background: reset at --densify-from-iter" "$T/e" "iteration 2: opacities reset"
# a window with no step in it (it ends before 550, the first step would be
# at 600; --iterations 1000 alone gives the same): said, not silent
$BIN --device $D --fit "$T/img" --cameras "$TD/cameras.json" "$TD/scene.ply" --iterations 3 --densify \
    --densify-until-iter 550 -o "$T/nw.ply" 2>"$T/e"
check "empty densification window" 0 $?
has "empty window: warned" "$T/e" "no step falls in the window"
$FIT --iterations 2 --percent-dense 0.02 -o "$T/x.ply" 2>"$T/e"
check "a densification option without --densify" 2 $?
has "densification options named" "$T/e" "go with --densify"
$G "$TD/scene.ply" --densify -o "$T/u.png" 2>"$T/e"
check "--densify without --fit" 2 $?

# an image no camera names: a note with -v
cp "$T/img/view000.png" "$T/img/extra.png"
$BIN --device $D -v --fit "$T/img" --cameras "$TD/cameras.json" "$TD/scene.ply" --iterations 1 -o "$T/v.ply" 2>"$T/e"
check "extra image" 0 $?
has "extra image noted" "$T/e" "extra.png: no camera"
has "-v counts the memory" "$T/e" "Adam moments"
[ "$D" = cpu ] || has "8-bit photographs kept as bytes on the GPU" "$T/e" "(8-bit)"
rm "$T/img/extra.png"
# RGBA images (gsrender --alpha): alpha over the background, kept as floats
mkdir -p "$T/rgba"
for v in view000 view001 view002 view003; do
    $G "$TD/scene.ply" --cameras "$TD/cameras.json" --view $v --alpha -o "$T/rgba/$v.png" 2>"$T/e"
done
$BIN --device $D -v --fit "$T/rgba" --cameras "$TD/cameras.json" "$TD/scene.ply" --iterations 3 --background 0.5,0.5,0.5 \
    --test-views 0 -o "$T/a.ply" 2>"$T/e"
check "RGBA images" 0 $?
[ "$D" = cpu ] || has "composited images kept as floats on the GPU" "$T/e" "(float)"
has "RGBA images: held-out PSNR" "$T/e" "held-out PSNR"

# data errors: exit 3, the camera and the path named, no output
mkdir -p "$T/bad"
cp "$T/img/view000.png" "$T/img/view001.png" "$T/img/view003.png" "$T/bad/"
BAD="$G --fit $T/bad --cameras $TD/cameras.json $TD/scene.ply --iterations 2 -o $T/bad.ply"
$BAD 2>"$T/e"
check "missing image" 3 $?
has "missing image: camera" "$T/e" "camera 'view002'"
has "missing image: path" "$T/e" "$T/bad/view002"
$G "$TD/scene.ply" --eye 0,1,-6 --target 0,0,0 --size 64x48 -o "$T/bad/view002.png" 2>"$T/e"
$BAD 2>"$T/e"
check "wrong size" 3 $?
has "wrong size: both sizes" "$T/e" "is 64x48 but camera 'view002' is 160x90"
echo "not an image" >"$T/bad/view002.png"
$BAD 2>"$T/e"
check "unreadable image" 3 $?
has "unreadable image: camera" "$T/e" "camera 'view002'"
[ ! -e "$T/bad.ply" ] && ok "no output after a data error" || bad "bad.ply written"
$BIN --device $D --fit "$T/nodir" --cameras "$TD/cameras.json" "$TD/scene.ply" -o "$T/nd.ply" 2>"$T/e"
check "no images directory" 3 $?

# usage
$G "$TD/scene.ply" --iterations 5 -o "$T/u.png" 2>"$T/e"
check "--iterations without --fit" 2 $?
$G "$TD/scene.ply" --sh-start 1 -o "$T/u.png" 2>"$T/e"
check "--sh-start without --fit" 2 $?
# without --cameras IMAGES is read as a COLMAP capture, which a folder of
# photographs is not: a data error that says what a capture holds
$G --fit "$T/img" "$TD/scene.ply" -o "$T/u.ply" 2>"$T/e"
check "--fit IMAGES without --cameras" 3 $?
has "not a capture: what one holds" "$T/e" "no sparse/0/ or sparse/ folder (a COLMAP model"
$FIT --orbit 3 -o "$T/u.ply" 2>"$T/e"
check "--fit with --orbit" 2 $?
$FIT --scale-modifier 0.5 -o "$T/u.ply" 2>"$T/e"
check "--fit with --scale-modifier" 2 $?
$FIT -o "$TD/scene.ply" 2>"$T/e"
check "output over the scene refused" 2 $?
exit $fail
