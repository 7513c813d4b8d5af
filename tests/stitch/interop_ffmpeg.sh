#!/bin/bash
# Interop: ffmpeg-generated inputs (testsrc, Y4M and raw in every supported
# format) stitched, our output decoded by ffmpeg. Skips (77) without ffmpeg.
set -u
Y=${1:?usage: interop_ffmpeg.sh YUVSTITCH}
command -v ffmpeg >/dev/null && command -v ffprobe >/dev/null || { echo "SKIP: no ffmpeg"; exit 77; }
TD=${GT_TESTDATA:-$(dirname "$0")/../../testdata}/stitch
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
ff() { ffmpeg -nostdin -loglevel error -y "$@"; }
probe() { ffprobe -loglevel error -count_frames -show_entries stream=width,height,nb_read_frames -of csv=p=0 "$@"; }
# Y4M 4:2:2 inputs from ffmpeg, Y4M output read back by ffmpeg
ff -f lavfi -i testsrc=size=320x240:rate=30 -frames:v 4 -pix_fmt yuv422p "$T/a.y4m"
ff -f lavfi -i testsrc2=size=320x240:rate=30 -frames:v 4 -pix_fmt yuv422p "$T/b.y4m"
"$Y" --rig "$TD/rig2.txt" "$T/a.y4m" "$T/b.y4m" -o "$T/o.y4m" --device cpu -q || { echo "FAIL y4m run"; fail=1; }
got=$(probe "$T/o.y4m")
[ "$got" = "560,240,4" ] && echo "ok   y4m out decoded by ffmpeg: $got" || { echo "FAIL ffprobe: $got"; fail=1; }
ff -i "$T/o.y4m" -f null - && echo "ok   ffmpeg decodes every frame" || { echo "FAIL decode"; fail=1; }
# piped: ffmpeg -> yuvstitch -> ffmpeg
ff -f lavfi -i testsrc=size=320x240:rate=30 -frames:v 3 -pix_fmt yuv422p -f yuv4mpegpipe - |
    "$Y" --rig "$TD/rig2.txt" - "$T/b.y4m" -o - --out-format y4m --device cpu -q |
    ffmpeg -nostdin -loglevel error -y -i - -c:v rawvideo -pix_fmt yuv422p "$T/piped.nut"
got=$(probe "$T/piped.nut")
[ "$got" = "560,240,3" ] && echo "ok   pipeline ffmpeg|yuvstitch|ffmpeg: $got" || { echo "FAIL pipe: $got"; fail=1; }
# raw formats from ffmpeg; raw output decoded by ffmpeg with the same format
for fmt in yuyv422 uyvy422 yuv420p nv12 yuv422p; do
    ff -f lavfi -i testsrc=size=320x240:rate=25 -frames:v 2 -pix_fmt $fmt -f rawvideo "$T/a.$fmt"
    ff -f lavfi -i testsrc2=size=320x240:rate=25 -frames:v 2 -pix_fmt $fmt -f rawvideo "$T/b.$fmt"
    "$Y" --rig "$TD/rig2.txt" --size 320x240 --pix-fmt $fmt "$T/a.$fmt" "$T/b.$fmt" -o "$T/o.$fmt" --blend feather \
        --device cpu -q || { echo "FAIL $fmt run"; fail=1; continue; }
    got=$(probe -f rawvideo -pixel_format $fmt -video_size 560x240 "$T/o.$fmt")
    [ "$got" = "560,240,2" ] && echo "ok   raw $fmt decoded by ffmpeg" || { echo "FAIL raw $fmt: $got"; fail=1; }
    # the left part of the panorama is camera 1 unchanged (identity H, gain 1,
    # single coverage): compare with ffmpeg's own crop of the input
    ff -f rawvideo -pixel_format $fmt -video_size 560x240 -i "$T/o.$fmt" -vf crop=160:240:0:0 -f rawvideo -pix_fmt gray "$T/oc.gray"
    ff -f rawvideo -pixel_format $fmt -video_size 320x240 -i "$T/a.$fmt" -vf crop=160:240:0:0 -f rawvideo -pix_fmt gray "$T/ac.gray"
    cmp -s "$T/oc.gray" "$T/ac.gray" && echo "ok   $fmt: single-coverage luma identical to the input" || { echo "FAIL $fmt luma differs"; fail=1; }
done
exit $fail
