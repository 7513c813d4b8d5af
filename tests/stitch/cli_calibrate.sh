#!/bin/bash
# CLI tests of yuvstitch --calibrate on views of a real photograph with known
# homographies (calib_views, the CI rig of calib_views.h): the rig it writes,
# with the rotation model (default; these narrow views get a plane whose
# homographies the dense refinement polishes) and the homography model, is
# accurate (calib_views eval: mean corner error <= 0.5 px, gains within 3 %),
# deterministic, streams (with --gain-update), from Y4M, raw YUV and PNG; bad
# requests are refused with the documented exit code, a message and no
# output file. (Wide rigs: cli_wide.sh.)
set -u
Y=${1:?usage: cli_calibrate.sh YUVSTITCH CALIB_VIEWS}
V=${2:?usage: cli_calibrate.sh YUVSTITCH CALIB_VIEWS}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() { # name expected_rc actual_rc
    if [ "$2" != "$3" ]; then echo "FAIL $1: exit $3, expected $2"; fail=1; else echo "ok   $1"; fi
}
has() { # name file pattern
    if grep -q -- "$3" "$2"; then echo "ok   $1"; else echo "FAIL $1: '$3' not in: $(cat "$2")"; fail=1; fi
}
absent() { # name file
    if [ -e "$2" ]; then echo "FAIL $1: $2 exists"; fail=1; else echo "ok   $1"; fi
}
export GT_NO_GPU=${GT_NO_GPU:-}
D=${CALIB_DEVICE:-cpu}
"$V" make "$T/y" ci y4m 2 >/dev/null || { echo "FAIL making views"; exit 1; }
"$V" make "$T/r" ci yuv 1 >/dev/null || { echo "FAIL making views"; exit 1; }
"$V" make "$T/p" ci png >/dev/null || { echo "FAIL making views"; exit 1; }

# Y4M, the second frame
"$Y" --calibrate "$T"/y/cam{1,2,3,4}.y4m --frame 1 -o "$T/rig.txt" --device $D 2>"$T/e"; check "calibrate y4m (rotation model)" 0 $?
has "report: pairs" "$T/e" "pair 1-2: [0-9]* matches, [0-9]* inliers, reprojection error RMS"
has "report: reference and size" "$T/e" "reference camera 2, panorama [0-9]*x[0-9]*"
has "report: gains" "$T/e" "gains U:"
has "rig: chroma gains" "$T/rig.txt" "gain_u"
"$V" eval "$T/y/truth.txt" "$T/rig.txt" 0.5 0.03 >"$T/ev"; check "corner error <= 0.5 px, gains within 3 %" 0 $?
cat "$T/ev"
"$Y" --calibrate "$T"/y/cam{1,2,3,4}.y4m --frame 1 -o "$T/rig2.txt" --device $D -q
cmp -s "$T/rig.txt" "$T/rig2.txt" && echo "ok   deterministic (the same rig twice)" || { echo "FAIL rig differs between runs"; fail=1; }
has "a narrow rig gets a plane" "$T/e" "^projection plane"
has "its homographies polished" "$T/e" "a plane: its homographies polished by the dense refinement"
grep -q "^rig" "$T/rig.txt" && { echo "FAIL a plane of homographies is not version 1"; fail=1; } || echo "ok   a plane of homographies: rig version 1"
has "report: the adjustment's error" "$T/e" "bundle adjustment: [0-9]* inlier matches, reprojection error RMS"
# the homography model: rig 1, as before
"$Y" --calibrate "$T"/y/cam{1,2,3,4}.y4m --frame 1 -o "$T/righ.txt" --model homography --device $D -q; check "--model homography" 0 $?
"$V" eval "$T/y/truth.txt" "$T/righ.txt" 0.5 0.03 >/dev/null; check "--model homography accuracy" 0 $?
grep -q "^rig" "$T/righ.txt" && { echo "FAIL homography rig is not version 1"; fail=1; } || echo "ok   homography rig is version 1"
"$Y" --calibrate "$T"/y/cam{1,2,3,4}.y4m --frame 1 -o "$T/rigg.txt" --model homography --global-refine --device $D -q; check "--global-refine" 0 $?
"$V" eval "$T/y/truth.txt" "$T/rigg.txt" 0.5 0.03 >/dev/null; check "--global-refine accuracy" 0 $?
"$Y" --calibrate "$T"/y/cam{1,2,3,4}.y4m -o "$T/rig1.txt" --model homography --reference 1 --device $D -q; check "--reference 1" 0 $?
"$V" eval "$T/y/truth.txt" "$T/rig1.txt" 0.5 0.03 >"$T/ev1"; check "--reference 1 accuracy" 0 $?
has "--reference 1 is the panorama's frame" "$T/ev1" "reference camera 1:"
"$Y" --calibrate "$T"/y/cam{1,2,3,4}.y4m -o "$T/rig1r.txt" --reference 1 --device $D -q; check "rotation --reference 1" 0 $?
"$V" eval "$T/y/truth.txt" "$T/rig1r.txt" 0.5 0.03 1 >/dev/null; check "rotation --reference 1 accuracy" 0 $?

# the rig streams, also with the gains re-estimated
"$Y" --rig "$T/rig.txt" "$T"/y/cam{1,2,3,4}.y4m -o "$T/pano.y4m" --gain-update 1 --device $D -q; check "stream with --gain-update" 0 $?
read -r W H < <(awk '/^panorama/ { print $2, $3 }' "$T/rig.txt")
head -c 64 "$T/pano.y4m" | grep -q "YUV4MPEG2 W$W H$H" && echo "ok   panorama is ${W}x$H" || { echo "FAIL panorama header"; fail=1; }

# raw YUV and PNG inputs, the preview
"$Y" --calibrate "$T"/r/cam{1,2,3,4}.yuv --size 256x192 --pix-fmt yuv420p -o "$T/rigr.txt" --model homography --device $D -q; check "calibrate raw" 0 $?
"$V" eval "$T/r/truth.txt" "$T/rigr.txt" 0.5 0.03 >/dev/null; check "raw accuracy" 0 $?
"$Y" --calibrate "$T"/p/cam{1,2}.png -o "$T/rigp.txt" --preview "$T/seams.png" --device $D -q; check "calibrate png + preview" 0 $?
head -c 8 "$T/seams.png" | grep -q PNG && echo "ok   preview is a PNG" || { echo "FAIL preview"; fail=1; }
[ "$(grep -c '^camera' "$T/rigp.txt")" = 2 ] && echo "ok   two cameras" || { echo "FAIL rig of 2"; fail=1; }

# refusals
"$Y" --calibrate "$T"/y/cam1.y4m "$T"/y/cam4.y4m -o "$T/no.txt" --device $D 2>"$T/e"; check "views that do not overlap" 3 $?
has "names the pair and counts" "$T/e" "camera 2 cannot be placed: its best pair 1-2 has [0-9]* inliers of [0-9]* matches"
absent "no rig written" "$T/no.txt"
"$Y" --calibrate "$T"/y/cam{1,2}.y4m --frame 5 -o "$T/no.txt" --device $D 2>"$T/e"; check "--frame past the end" 3 $?
has "frame message" "$T/e" "has 2 frames, frame 5 was asked for"
absent "no rig written" "$T/no.txt"
"$Y" --calibrate "$T"/y/cam{1,2}.y4m --reference 3 -o "$T/no.txt" --device $D 2>"$T/e"; check "--reference out of range" 2 $?
has "reference message" "$T/e" "there are 2 cameras"
"$Y" --calibrate --rig "$T/rig.txt" "$T"/y/cam{1,2}.y4m -o "$T/no.txt" 2>"$T/e"; check "--calibrate with --rig" 2 $?
"$Y" --calibrate "$T"/y/cam1.y4m -o "$T/no.txt" 2>"$T/e"; check "one camera" 2 $?
"$Y" --calibrate "$T"/y/cam1.y4m "$T"/p/cam2.png "$T"/r/cam3.yuv -o "$T/no.txt" 2>"$T/e"; check "raw without --size" 2 $?
"$V" make "$T/big" demo png >/dev/null
"$Y" --calibrate "$T"/p/cam1.png "$T"/big/cam2.png -o "$T/no.txt" --device $D 2>"$T/e"; check "sizes differ" 3 $?
has "size message" "$T/e" "all cameras must match"
absent "no rig written" "$T/no.txt"
exit $fail
