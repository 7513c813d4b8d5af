#!/usr/bin/env bash
# yuvstitch demo: two 320x240 camera streams (made here; ffmpeg's testsrc
# when installed) stitched into a 560x240 panorama with each blend mode;
# a PNG preview of each and the seam masks.   env: BIN TESTDATA OUT
set -euo pipefail
d=$OUT/yuvstitch
mkdir -p "$d"
if command -v ffmpeg >/dev/null; then
  ffmpeg -nostdin -loglevel error -y -f lavfi -i testsrc=size=320x240:rate=25 -frames:v 10 -pix_fmt yuyv422 -f rawvideo "$d/cam1.yuv"
  ffmpeg -nostdin -loglevel error -y -f lavfi -i testsrc2=size=320x240:rate=25 -frames:v 10 -pix_fmt yuyv422 -f rawvideo "$d/cam2.yuv"
else
  python3 - "$d" <<'PY'
import sys, math
w, h = 320, 240
for c in (1, 2):
    out = bytearray()
    for f in range(10):
        for y in range(h):
            for x in range(0, w, 2):
                v = lambda xx: int(128 + 90 * math.sin((xx + 240 * (c - 1)) / 23.0 + f / 5) * math.cos(y / 31.0))
                out += bytes([v(x), 100 + c * 20, v(x + 1), 150 - c * 20])
    open(f"{sys.argv[1]}/cam{c}.yuv", "wb").write(out)
PY
fi
for b in none feather multiband; do
  "$BIN/yuvstitch" --rig "$TESTDATA/stitch/rig2.txt" --size 320x240 --pix-fmt yuyv422 \
      "$d/cam1.yuv" "$d/cam2.yuv" -o "$d/pano_$b.y4m" --blend $b --preview "$d/pano_$b.png" --timings
done
"$BIN/yuvstitch" --rig "$TESTDATA/stitch/rig2.txt" --size 320x240 --pix-fmt yuyv422 \
    "$d/cam1.yuv" "$d/cam2.yuv" -o "$d/pano_none.yuv" --blend none --frames 1 --save-masks "$d/masks" -q
echo "yuvstitch: panoramas (Y4M) and previews in $d; seams in $d/masks"
