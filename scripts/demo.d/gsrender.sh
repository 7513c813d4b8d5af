# gsrender demo: a small real capture trained end to end and rendered.
# testdata/gs/plush_mini is 25 phone photographs of a plush toy (246x183,
# every 4th view of shared/data/captures/plush, scripts/gen/mini-capture)
# with their COLMAP model: gsrender --fit trains a scene from its points
# (every 8th view held out, PSNR and SSIM of those printed), then renders a
# held-out view, and an orbit around the result as a Y4M stream (an MP4 when
# ffmpeg is installed). On a GPU 7000 iterations; on the CPU 300 (about a
# minute on two cores: a coarse scene, the held-out PSNR near 21 dB instead
# of the GPU run's). Then the small test scene from a training camera, a
# look-at view with depth and a short orbit.
set -euo pipefail
cap=$TESTDATA/gs/plush_mini
if "$BIN/gsrender" --device cuda -q "$TESTDATA/gs/scene.ply" --size 8x8 -o "$OUT/.probe.png" 2>/dev/null; then
  iters=7000
else
  iters=300
fi
rm -f "$OUT/.probe.png"
"$BIN/gsrender" --fit "$cap" -o "$OUT/plush.ply" --iterations $iters --densify-from-iter 100 \
  --densification-interval 100 --densify-until-iter $((iters / 2)) --metrics "$OUT/plush_metrics.csv" --timings
view=$(grep -o '"img_name":[^,]*' "$OUT/plush.test.json" | head -1 | sed 's/.*"\([^"]*\)"$/\1/')
"$BIN/gsrender" "$OUT/plush.ply" --cameras "$OUT/plush.test.json" --view "$view" -o "$OUT/plush_heldout_$view.png"
"$BIN/gsrender" "$OUT/plush.ply" --cameras "$OUT/plush.cameras.json" --orbit 60 --size 368x272 \
  -o "$OUT/plush_orbit.y4m"
if command -v ffmpeg >/dev/null; then
  ffmpeg -nostdin -loglevel error -y -i "$OUT/plush_orbit.y4m" -c:v libx264 -pix_fmt yuv420p "$OUT/plush_orbit.mp4"
fi
echo "gsrender: trained $OUT/plush.ply ($iters iterations; held-out scores in $OUT/plush_metrics.csv), a held-out view"
echo "  $OUT/plush_heldout_$view.png beside its photograph $cap/images/$view.jpg, an orbit $OUT/plush_orbit.y4m"

"$BIN/gsrender" "$TESTDATA/gs/scene.ply" --cameras "$TESTDATA/gs/cameras.json" --view 0 \
  -o "$OUT/gsrender_view0.png"
"$BIN/gsrender" "$TESTDATA/gs/scene.ply" --eye 0,2,-7 --target 0,0,0 --size 320x180 --background 1,1,1 \
  --depth "$OUT/gsrender_depth.pgm" -o "$OUT/gsrender_lookat.png"
"$BIN/gsrender" "$TESTDATA/gs/scene.ply" --orbit 8 --size 160x90 -o "$OUT/gsrender_orbit_%02d.png"
"$BIN/gsrender" "$TESTDATA/gs/scene.ply" --orbit 24 --size 160x90 --timings -o - > "$OUT/gsrender_orbit.y4m"
