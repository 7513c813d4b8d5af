#!/bin/bash
# PNG / 16-bit PGM interop with ffmpeg (suite interop; exit 77 without ffmpeg):
# ffmpeg decodes the PNG and PGM we write to the same samples; we decode the
# 8-bit and 16-bit PNGs ffmpeg writes to the same samples as its rawvideo.
set -u
TOOL=$1
command -v ffmpeg >/dev/null 2>&1 || { echo "SKIP: ffmpeg not installed"; exit 77; }
D=$(mktemp -d /tmp/gt_interop_img.XXXXXX)
trap 'rm -rf "$D"' EXIT
FF="ffmpeg -nostdin -hide_banner -loglevel error -y"
fails=0
# deterministic pseudo-random bytes (fixed seed)
gen() { python3 -c "import random,sys; random.seed($2); sys.stdout.buffer.write(bytes(random.getrandbits(8) for _ in range($1)))"; }
check() { if "$@"; then echo "ok: $DESC"; else echo "FAIL: $DESC"; fails=$((fails + 1)); fi; }
W=40; H=30
i=0
for spec in "1 gray" "2 ya8" "3 rgb24" "4 rgba"; do
  set -- $spec
  gen $((W * H * $1)) $1 > "$D/px.raw"
  $TOOL png $W $H $1 "$D/px.raw" "$D/ours.png" || exit 1
  $FF -i "$D/ours.png" -f rawvideo -pix_fmt $2 "$D/ff.raw"
  DESC="ffmpeg decodes our $1-channel PNG to the same samples"; check cmp -s "$D/ff.raw" "$D/px.raw"
done
gen $((W * H * 2)) 16 > "$D/px16.raw"
$TOOL pgm16 $W $H "$D/px16.raw" "$D/ours.pgm" || exit 1
$FF -i "$D/ours.pgm" -f rawvideo -pix_fmt gray16le "$D/ff16.raw"
DESC="ffmpeg decodes our 16-bit PGM to the same samples"; check cmp -s "$D/ff16.raw" "$D/px16.raw"
for spec in "rgb24 0" "rgba 0" "gray 0" "gray16be gray16le" "rgba64be rgba64le" "rgb48be rgb48le"; do
  set -- $spec
  want16=0; raw=$1; [ "$2" != 0 ] && { want16=1; raw=$2; }
  $FF -f lavfi -i testsrc=size=${W}x${H} -frames:v 1 -pix_fmt $1 "$D/src.png"
  $FF -i "$D/src.png" -f rawvideo -pix_fmt $raw "$D/src.raw"
  $TOOL dump "$D/src.png" $want16 > "$D/got.raw" 2>"$D/info"
  DESC="we decode ffmpeg's $1 PNG ($(cat "$D/info")) to its samples"; check cmp -s "$D/got.raw" "$D/src.raw"
done
exit $((fails > 0))
