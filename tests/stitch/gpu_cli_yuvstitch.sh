#!/bin/bash
# The program on the GPU against the program on the CPU: for every format and
# blend mode, ffmpeg testsrc inputs (or a generated pattern), every output
# sample within 1. Skips (77) without a GPU.
set -u
Y=${1:?usage: gpu_cli_yuvstitch.sh YUVSTITCH}
TD=${GT_TESTDATA:-$(dirname "$0")/../../testdata}/stitch
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$Y" --rig "$TD/rig2.txt" --size 320x240 --pix-fmt yuyv422 /dev/null /dev/null -o "$T/probe.yuv" --device cuda -q 2>"$T/e"
[ $? = 4 ] && { echo "SKIP: no GPU ($(cat "$T/e"))"; exit 77; }
fail=0
for fmt in yuyv422 uyvy422 yuv420p nv12 yuv422p; do
  if command -v ffmpeg >/dev/null; then
    ffmpeg -nostdin -loglevel error -y -f lavfi -i testsrc=size=320x240:rate=25 -frames:v 5 -pix_fmt $fmt -f rawvideo "$T/a"
    ffmpeg -nostdin -loglevel error -y -f lavfi -i testsrc2=size=320x240:rate=25 -frames:v 5 -pix_fmt $fmt -f rawvideo "$T/b"
  else
    n=$((320*240*2*5)); [ $fmt = yuv420p ] || [ $fmt = nv12 ] && n=$((320*240*3/2*5))
    head -c $n /dev/urandom > "$T/a"; head -c $n /dev/urandom > "$T/b"
  fi
  for b in none feather multiband; do
    for d in cpu cuda; do
      "$Y" --rig "$TD/rig2.txt" --size 320x240 --pix-fmt $fmt "$T/a" "$T/b" -o "$T/o.$d" --blend $b --device $d -q \
        || { echo "FAIL $fmt $b $d run"; fail=1; }
    done
    python3 - "$T/o.cpu" "$T/o.cuda" "$fmt $b" <<'PY' || fail=1
import sys
a = open(sys.argv[1], 'rb').read(); b = open(sys.argv[2], 'rb').read()
if len(a) != len(b) or not a:
    print(f"FAIL {sys.argv[3]}: sizes {len(a)} {len(b)}"); sys.exit(1)
m = max(abs(x - y) for x, y in zip(a, b))
print(("ok  " if m <= 1 else "FAIL") + f" {sys.argv[3]}: max |gpu-cpu| = {m} over {len(a)} samples")
sys.exit(0 if m <= 1 else 1)
PY
  done
done
exit $fail
