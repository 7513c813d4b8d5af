# gsrender demo: the small test scene from a training camera, a look-at view
# with depth, and a short orbit as PNG frames and as a Y4M stream.
set -euo pipefail
"$BIN/gsrender" "$TESTDATA/gs/scene.ply" --cameras "$TESTDATA/gs/cameras.json" --view 0 \
  -o "$OUT/gsrender_view0.png"
"$BIN/gsrender" "$TESTDATA/gs/scene.ply" --eye 0,2,-7 --target 0,0,0 --size 320x180 --background 1,1,1 \
  --depth "$OUT/gsrender_depth.pgm" -o "$OUT/gsrender_lookat.png"
"$BIN/gsrender" "$TESTDATA/gs/scene.ply" --orbit 8 --size 160x90 -o "$OUT/gsrender_orbit_%02d.png"
"$BIN/gsrender" "$TESTDATA/gs/scene.ply" --orbit 24 --size 160x90 --timings -o - > "$OUT/gsrender_orbit.y4m"
