#!/bin/bash
# CLI tests of wide and 360-degree rigs: views cut from the real
# equirectangular photograph with known rotations (sphere_views) calibrated
# into a full spherical rig (rotations within 0.1 degree, samples within 0.5
# px of the photograph), streamed into an equirectangular video whose luma is
# >= 40 dB from the photograph; a 167-degree pan gets a cylinder and is
# refused a plane; rigs that would hide a camera (a stretched or folded
# homography, a camera outside the panorama, frames of another size) are
# refused at stitching with exit 3, the camera and the fix named, no output;
# the new options' misuse is exit 2.
#   cli_wide.sh YUVSTITCH SPHERE_VIEWS [cpu|cuda]
set -u
Y=${1:?usage: cli_wide.sh YUVSTITCH SPHERE_VIEWS [cpu|cuda]}
V=${2:?usage: cli_wide.sh YUVSTITCH SPHERE_VIEWS [cpu|cuda]}
D=${3:-cpu}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() { # name expected_rc actual_rc
    if [ "$2" != "$3" ]; then echo "FAIL $1: exit $3, expected $2"; fail=1; else echo "ok   $1"; fi
}
has() { # name file pattern
    if grep -q -- "$3" "$2"; then echo "ok   $1"; else echo "FAIL $1: '$3' not in: $(head -c 2000 "$2")"; fail=1; fi
}
absent() { # name file
    if [ -e "$2" ]; then echo "FAIL $1: $2 exists"; fail=1; else echo "ok   $1"; fi
}
if [ "$D" = cuda ]; then
    TD=${GT_TESTDATA:-$(dirname "$0")/../../testdata}/stitch
    "$Y" --rig "$TD/rig2.txt" --size 320x240 --pix-fmt yuyv422 /dev/null /dev/null -o "$T/probe.yuv" --device cuda -q 2>"$T/e"
    [ $? = 4 ] && { echo "SKIP: no GPU ($(cat "$T/e"))"; exit 77; }
fi
"$V" make "$T/ci" ci y4m 2 >/dev/null || { echo "FAIL making the 360 views"; exit 1; }
"$V" make "$T/pan" pan150 png >/dev/null || { echo "FAIL making the pan views"; exit 1; }
C=("$T"/ci/cam{1,2,3,4,5,6,7,8}.y4m)

# calibrate all around: a full equirectangular rig of the photograph's size
"$Y" --calibrate "${C[@]}" --reference 1 --pano-width 512 -o "$T/rig.txt" --matches "$T/m.txt" \
    --preview "$T/cal.png" --device $D 2>"$T/e"; check "calibrate 8 cameras all around" 0 $?
has "spherical, the full sphere" "$T/rig.txt" "^projection spherical -180 180 90 -90"
has "panorama 512x256" "$T/rig.txt" "^panorama 512 256"
has "report: the adjustment" "$T/e" "bundle adjustment: [0-9]* inlier matches, reprojection error RMS 0\."
has "report: the footprints' colours" "$T/e" "preview footprints: 1 #"
has "--matches: pairs" "$T/m.txt" "^pair 1 2 [0-9]"
"$V" eval "$T/ci/truth.txt" "$T/rig.txt" 0.1 0.5 >"$T/ev"; check "rotations within 0.1 degree, samples within 0.5 px" 0 $?
tail -2 "$T/ev"
# stream it: an equirectangular Y4M, 40 dB from the photograph where cameras see
"$Y" --rig "$T/rig.txt" "${C[@]}" -o "$T/pano.y4m" --preview "$T/p.png" --device $D -q; check "stream 8 cameras" 0 $?
head -c 64 "$T/pano.y4m" | grep -q "YUV4MPEG2 W512 H256" && echo "ok   equirectangular 512x256" || { echo "FAIL pano header"; fail=1; }
"$V" psnr "$T/ci/truth.txt" "$T/pano.y4m" >"$T/ps"; cat "$T/ps"
awk '{ if ($3 + 0 >= 40) ok = 1 } END { exit !ok }' "$T/ps" && echo "ok   PSNR >= 40 dB" || { echo "FAIL PSNR"; fail=1; }
"$Y" --rig "$T/rig.txt" "${C[@]}" -o "$T/panof.y4m" --blend feather --device $D -q; check "stream, feather" 0 $?

# the pan: a cylinder; a plane refused with the camera and the fix
P=("$T"/pan/cam{1,2,3,4,5}.png)
"$Y" --calibrate "${P[@]}" -o "$T/pan.txt" --device $D -q; check "calibrate a 167-degree pan" 0 $?
has "a cylinder" "$T/pan.txt" "^projection cylindrical"
"$Y" --calibrate "${P[@]}" -o "$T/no.txt" --projection plane --device $D 2>"$T/e"; check "a plane for 167 degrees" 3 $?
has "names the camera and the fix" "$T/e" "a plane cannot hold camera [0-9]*: .*use --projection cylindrical or spherical"
absent "no rig written" "$T/no.txt"
"$Y" --calibrate "${P[@]}" -o "$T/pans.txt" --projection spherical --pano-width 800 --device $D -q; check "--projection spherical --pano-width" 0 $?
has "spherical" "$T/pans.txt" "^projection spherical"
has "800 wide" "$T/pans.txt" "^panorama 800 "

# rigs that would hide a camera, refused at stitching
printf 'panorama 1200 480\ncamera\n  H 1 0 0 0 1 0 0 0 1\ncamera\n  H 0.28 0 600 0 1 0 -0.0012 0 1\n' > "$T/stretch.txt"
"$Y" --rig "$T/stretch.txt" "${C[0]}" "${C[1]}" -o "$T/no.y4m" --device $D 2>"$T/e"; check "a stretched homography" 3 $?
has "stretch message" "$T/e" "camera 2: its homography stretches its view [0-9.]*x .*stretch.txt:4)"
has "stretch fix" "$T/e" "calibrate again with a cylindrical or spherical projection"
absent "no output" "$T/no.y4m"
printf 'panorama 1200 480\ncamera\n  H 1 0 0 0 1 0 0 0 1\ncamera\n  H -0.2 0 600 0 1 0 -0.002 0 1\n' > "$T/fold.txt"
"$Y" --rig "$T/fold.txt" "${C[0]}" "${C[1]}" -o "$T/no.y4m" --device $D 2>"$T/e"; check "a folded homography" 3 $?
has "fold message" "$T/e" "camera 2: its homography folds its view"
# a camera outside a partial sphere's extent owns nothing
sed 's/^projection spherical -180 180 90 -90/projection spherical -100 100 60 -60/' "$T/rig.txt" > "$T/part.txt"
"$Y" --rig "$T/part.txt" "${C[@]}" -o "$T/no.y4m" --save-masks "$T/masks" --device $D 2>"$T/e"; check "a camera outside the panorama" 3 $?
has "owns no pixel" "$T/e" "camera 4 owns no pixel of the 512x256 panorama.*part.txt:[0-9]*)"
[ -s "$T/masks/mask_4.png" ] && echo "ok   --save-masks still written to look at" || { echo "FAIL masks"; fail=1; }
absent "no output" "$T/no.y4m"
"$V" make "$T/demo" demo y4m >/dev/null
"$Y" --rig "$T/rig.txt" "$T"/demo/cam{1,2,3,4,5,6,1,2}.y4m -o "$T/no.y4m" --device $D 2>"$T/e"; check "frames of another size" 3 $?
has "size message" "$T/e" "camera 1 is calibrated for 640x480 frames but the inputs are 640x360"

# misuse
"$Y" --calibrate "${P[@]}" -o "$T/no.txt" --pano-width 513 2>"$T/e"; check "--pano-width odd" 2 $?
"$Y" --calibrate "${P[@]}" -o "$T/no.txt" --projection fisheye 2>"$T/e"; check "--projection unknown" 2 $?
"$Y" --rig "$T/rig.txt" "${C[@]}" -o "$T/no.y4m" --projection spherical 2>"$T/e"; check "--projection when streaming" 2 $?
has "message" "$T/e" "are for --calibrate"
"$Y" --calibrate "${P[@]}" -o "$T/no.txt" --global-refine 2>"$T/e"; check "--global-refine with the rotation model" 2 $?
"$Y" --calibrate "${P[@]}" -o "$T/no.txt" --model homography --projection spherical 2>"$T/e"; check "--projection with homographies" 2 $?
"$Y" --calibrate "${P[@]}" -o "$T/no.txt" --distortion 0.1 2>"$T/e"; check "--distortion without K2" 2 $?
"$Y" --calibrate "${P[@]}" -o "$T/no.txt" --matches "${P[0]}" 2>"$T/e"; check "--matches over an input" 2 $?
absent "no rig after misuse" "$T/no.txt"
exit $fail
