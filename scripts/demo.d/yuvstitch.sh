#!/usr/bin/env bash
# yuvstitch demo: one real scene (testdata/stitch/scene_chelsea.jpg, a CC0
# photograph) seen by four 480x270 cameras of a rotating rig with different
# exposures and colour casts (calib_views, built with the tests; camera 3's
# exposure drifts over the clip like an auto-exposure); --calibrate finds the
# rig from the first frames (preview with the seams), then the streams are
# stitched with each blend mode, and with the gains followed (--gain-update).
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
