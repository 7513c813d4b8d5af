#!/usr/bin/env bash
# yuvstitch demo: one real scene (testdata/stitch/scene_chelsea.jpg, a CC0
# photograph) seen by four 480x270 cameras of a rotating rig with different
# exposures and colour casts (calib_views, built with the tests; camera 3's
# exposure drifts over the clip like an auto-exposure); --calibrate finds the
# rig from the first frames (preview with the seams), then the streams are
# stitched with each blend mode, and with the gains followed (--gain-update).
# Then a 360-degree rig: six 640x360 cameras all around, cut from a real
# equirectangular photograph (testdata/stitch/equirect_rocks.jpg, CC BY-SA)
# with known rotations and exposures (sphere_views), calibrated with the
# rotation model into a full spherical rig and stitched into an
# equirectangular video that ffmpeg plays (an MP4 when ffmpeg is installed,
# with a perspective look-around frame through its v360 filter).
#   env: BIN TESTDATA OUT
set -euo pipefail
d=$OUT/yuvstitch
mkdir -p "$d"
CV=$BIN/../tests/stitch/calib_views
[ -x "$CV" ] || { echo "yuvstitch demo skipped: $CV not built (configure with -Dtests=true)"; exit 0; }
GT_TESTDATA=$TESTDATA "$CV" make "$d/views" demo y4m 20
"$BIN/yuvstitch" --calibrate "$d"/views/cam{1,2,3,4}.y4m -o "$d/rig.txt" --preview "$d/calibrated_seams.png" --timings
"$CV" eval "$d/views/truth.txt" "$d/rig.txt"
for b in none feather multiband; do
  "$BIN/yuvstitch" --rig "$d/rig.txt" "$d"/views/cam{1,2,3,4}.y4m -o "$d/pano_$b.y4m" --blend $b \
      --preview "$d/pano_$b.png" -q
done
# camera 3 ends 0.7 stops brighter than at calibration: the clip with the
# calibrated gains only, and with the gains followed every 5 frames (compare
# their last frames)
"$BIN/yuvstitch" --rig "$d/rig.txt" "$d"/views/cam{1,2,3,4}.y4m -o "$d/pano_fixed_gains.y4m" -q
"$BIN/yuvstitch" --rig "$d/rig.txt" "$d"/views/cam{1,2,3,4}.y4m -o "$d/pano_gain_update.y4m" --gain-update 5 --timings
echo "yuvstitch: views in $d/views, rig $d/rig.txt (seams: $d/calibrated_seams.png), panoramas (Y4M) and previews in $d"

# the 360-degree rig
SV=$BIN/../tests/stitch/sphere_views
[ -x "$SV" ] || { echo "yuvstitch 360 demo skipped: $SV not built"; exit 0; }
w=$d/wide
GT_TESTDATA=$TESTDATA "$SV" make "$w" demo y4m 30
"$BIN/yuvstitch" --calibrate "$w"/cam{1,2,3,4,5,6}.y4m --reference 1 --pano-width 1280 -o "$w/rig360.txt" \
    --preview "$w/calibrated360.png" --timings
GT_TESTDATA=$TESTDATA "$SV" eval "$w/truth.txt" "$w/rig360.txt"
"$BIN/yuvstitch" --rig "$w/rig360.txt" "$w"/cam{1,2,3,4,5,6}.y4m -o "$w/pano360.y4m" --preview "$w/pano360.png" --timings
GT_TESTDATA=$TESTDATA "$SV" psnr "$w/truth.txt" "$w/pano360.y4m"
if command -v ffmpeg >/dev/null; then
    ffmpeg -nostdin -loglevel error -y -i "$w/pano360.y4m" -c:v libx264 -pix_fmt yuv420p "$w/pano360.mp4"
    ffmpeg -nostdin -loglevel error -y -i "$w/pano360.y4m" -frames:v 1 \
        -vf v360=input=e:output=flat:h_fov=90:v_fov=60:yaw=90 "$w/look_right.png"
    echo "yuvstitch: 360 video $w/pano360.mp4 (equirectangular; tag it for 360 players as yuvstitch(1) says, e.g."
    echo "  python spatialmedia -i $w/pano360.mp4 $w/pano360_tagged.mp4), a look to the right: $w/look_right.png"
fi
echo "yuvstitch: 360 rig $w/rig360.txt, panorama $w/pano360.y4m (preview with the footprints: $w/pano360.png)"
