#!/bin/bash
# gsrender as a user runs it: outputs, exit codes, messages, no output file
# on failure. CPU path (--device cpu) so that it runs without a GPU.
set -u
BIN=${GSRENDER:-$GT_BUILD_DIR/tools/gsrender}
TD=$GT_TESTDATA/gs
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
# expect CODE PATTERN NAME -- command...
expect() {
    local code=$1 pat=$2 name=$3
    shift 4
    "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    if [ $rc -ne "$code" ]; then bad "$name: exit $rc, want $code ($(head -c 300 "$T/err"))"; return; fi
    if [ -n "$pat" ] && ! grep -q -- "$pat" "$T/err" "$T/out"; then bad "$name: no '$pat' in: $(head -c 300 "$T/err")"; return; fi
    ok "$name"
}
png_wh() { od -An -tu1 -j16 -N8 "$1" | awk '{print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8}'; }
png_ctype() { od -An -tu1 -j25 -N1 "$1" | tr -d ' '; }

G="$BIN --device cpu -q"
expect 0 "--orbit" help -- $BIN --help
expect 2 "SCENE" no-args -- $BIN
expect 2 "-o" no-output -- $G "$TD/scene.ply"

expect 0 "" look-at -- $G "$TD/scene.ply" --eye 0,1,-6 --target 0,0,0 --size 64x48 -o "$T/a.png"
[ "$(png_wh "$T/a.png")" = 64x48 ] && ok "look-at size" || bad "look-at size $(png_wh "$T/a.png")"
[ "$(png_ctype "$T/a.png")" = 2 ] && ok "RGB png" || bad "png colour type $(png_ctype "$T/a.png")"

expect 0 "" view-index -- $G "$TD/scene.ply" --cameras "$TD/cameras.json" --view 2 -o "$T/v.png" --alpha --depth "$T/d.pfm"
[ "$(png_wh "$T/v.png")" = 160x90 ] && ok "view size from cameras.json" || bad "view size $(png_wh "$T/v.png")"
[ "$(png_ctype "$T/v.png")" = 6 ] && ok "--alpha gives RGBA" || bad "--alpha colour type $(png_ctype "$T/v.png")"
[ "$(head -c 2 "$T/d.pfm")" = Pf ] && ok "depth pfm" || bad "depth pfm header"
expect 0 "" view-name -- $G "$TD/scene.ply" --cameras "$TD/cameras.json" --view view001 -o "$T/n.png" --depth "$T/d.pgm"
[ "$(head -c 2 "$T/d.pgm")" = P5 ] && ok "depth pgm" || bad "depth pgm header"
expect 0 "" options -- $G "$TD/scene.ply" --background 1,1,1 --sh-degree 1 --scale-modifier 0.5 --antialias --tile-binning square --size 40x30 -o "$T/o.png"
expect 2 "tile-binning" binning-bad -- $G "$TD/scene.ply" --tile-binning round -o "$T/x0.png"
expect 2 "sh-precision" shprec-bad -- $G "$TD/scene.ply" --sh-precision double -o "$T/x0.png"
expect 0 "" shprec-float -- $G "$TD/scene.ply" --sh-precision float --size 40x30 -o "$T/o2.png"

expect 0 "" splat -- $G "$TD/scene.splat" --cameras "$TD/cameras.json" --view 0 -o "$T/sp.png"
[ "$(png_wh "$T/sp.png")" = 160x90 ] && ok "splat size" || bad "splat size $(png_wh "$T/sp.png")"
head -c 100 "$TD/scene.splat" >"$T/bad.splat"
expect 3 "multiple of 32" splat-broken -- $G "$T/bad.splat" -o "$T/xs.png"

# --background shows where nothing is drawn: a view away from the scene
expect 0 "" empty-view -- $G "$TD/scene.ply" --eye 0,0,50 --target 0,0,100 --background 0,1,0 --size 8x8 -o "$T/e.png"

expect 0 "" orbit-png -- $G "$TD/scene.ply" --orbit 3 --size 32x24 -o "$T/f_%02d.png"
[ -f "$T/f_00.png" ] && [ -f "$T/f_02.png" ] && [ ! -f "$T/f_03.png" ] && ok "orbit frames" || bad "orbit frames: $(ls "$T")"
$G "$TD/scene.ply" --orbit 2 --size 32x24 -o - >"$T/s.y4m" 2>"$T/err"
rc=$?
sz=$(stat -c %s "$T/s.y4m")
hdr=$(head -n1 "$T/s.y4m" | wc -c)
want=$((hdr + 2 * (6 + 32 * 24 * 3 / 2)))
[ $rc -eq 0 ] && [ "$(head -c 9 "$T/s.y4m")" = YUV4MPEG2 ] && [ "$sz" -eq "$want" ] && ok "orbit y4m ($sz bytes)" || bad "orbit y4m rc $rc size $sz want $want"

if command -v ffmpeg >/dev/null; then
  ffmpeg -v error -i "$T/s.y4m" -f null - 2>"$T/ff" && ok "ffmpeg reads the Y4M" || bad "ffmpeg: $(head -c 300 "$T/ff")"
fi

# the CUDA path through the CLI, where a GPU is present (exit 4 otherwise)
$BIN --device cuda -q "$TD/scene.ply" --cameras "$TD/cameras.json" --view 0 --timings -o "$T/g.png" 2>"$T/err"
rc=$?
if [ $rc -eq 4 ]; then echo "skip cuda path: no GPU"
elif [ $rc -eq 0 ] && [ "$(png_wh "$T/g.png")" = 160x90 ] && grep -q "peak GPU memory" "$T/err"; then ok "cuda render + timings"
else bad "cuda path rc $rc: $(head -c 300 "$T/err")"; fi

# bad input: clear errors, exit codes, no output file
expect 3 "not a 3D Gaussian Splatting scene" not-3dgs -- $G "$TD/notgs.ply" -o "$T/x1.png"
[ ! -e "$T/x1.png" ] && ok "no output on bad scene" || bad "output left on bad scene"
expect 1 "" missing-file -- $G "$T/nope.ply" -o "$T/x2.png"
expect 2 "out of range" view-range -- $G "$TD/scene.ply" --cameras "$TD/cameras.json" --view 9 -o "$T/x3.png"
[ ! -e "$T/x3.png" ] && ok "no output on bad view" || bad "output left on bad view"
expect 2 "img_name" view-name-bad -- $G "$TD/scene.ply" --cameras "$TD/cameras.json" --view nosuch -o "$T/x4.png"
expect 2 "same point" eye-target -- $G "$TD/scene.ply" --eye 1,2,3 --target 1,2,3 -o "$T/x5.png"
expect 2 "parallel" up-parallel -- $G "$TD/scene.ply" --eye 0,0,0 --target 0,5,0 -o "$T/x6.png"
expect 2 "size" size-zero -- $G "$TD/scene.ply" --size 0x10 -o "$T/x7.png"
expect 2 "size" size-huge -- $G "$TD/scene.ply" --size 20000x10 -o "$T/x8.png"
expect 2 "sh-degree" sh-degree -- $G "$TD/scene.ply" --sh-degree 4 -o "$T/x9.png"
expect 1 "" orbit-unwritable -- $G "$TD/scene.ply" --orbit 3 --size 16x16 -o "$T/nodir/f_%02d.png"
expect 2 "pattern" orbit-pattern -- $G "$TD/scene.ply" --orbit 2 -o "$T/frame.png"
expect 2 "background" background -- $G "$TD/scene.ply" --background 2,0,0 -o "$T/x10.png"
expect 2 "pfm" depth-ext -- $G "$TD/scene.ply" --depth "$T/d.tif" -o "$T/x11.png"
printf '[{"width": 10}]' >"$T/c.json"
expect 3 "lacks" cameras-missing-keys -- $G "$TD/scene.ply" --cameras "$T/c.json" -o "$T/x12.png"
head -c 3000 "$TD/scene.ply" >"$T/trunc.ply"
expect 3 "" truncated-ply -- $G "$T/trunc.ply" -o "$T/x13.png"
[ ! -e "$T/x13.png" ] && ok "no output on truncated scene" || bad "output left on truncated scene"
# every broken cameras.json (fuzz findings and hand-made cases): exit 3, naming the file, no output
for f in "$TD"/broken/*; do
    [ "${f##*/}" = EXPECT ] && continue
    expect 3 "$f:" "cameras-broken-${f##*/}" -- $G "$TD/scene.ply" --cameras "$f" -o "$T/xb.png"
    [ ! -e "$T/xb.png" ] || bad "output left for ${f##*/}"
done
ls "$T" | grep -q '\.tmp' && bad "temporary files left: $(ls "$T")" || ok "no temporary files left"

echo "$fails failures"
[ $fails -eq 0 ]
