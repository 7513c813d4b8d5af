#!/bin/bash
# Y4M / raw YUV interop with ffmpeg (suite interop; exit 77 without ffmpeg).
#  1. ffmpeg reads the Y4M we write: its rawvideo decode equals our frames.
#  2. ffmpeg reads our raw streams in every pixel format and writes Y4M; we
#     read that Y4M and compare with our own packed->planar conversion
#     (lossless for these pairs: same chroma resolution).
#  3. we read what ffmpeg writes: testsrc as Y4M (4:2:0, 4:2:2, 4:4:4) equals
#     testsrc as rawvideo, frame by frame.
set -u
TOOL=$1
command -v ffmpeg >/dev/null 2>&1 || { echo "SKIP: ffmpeg not installed"; exit 77; }
D=$(mktemp -d /tmp/gt_interop_yuv.XXXXXX)
trap 'rm -rf "$D"' EXIT
FF="ffmpeg -nostdin -hide_banner -loglevel error -y"
fails=0
check() { if "$@"; then echo "ok: $DESC"; else echo "FAIL: $DESC"; fails=$((fails + 1)); fi; }
W=64; H=48; N=3

for f in yuv420p yuv422p yuv444p; do
  $TOOL gen "$D/ours.y4m" y4m $f $W $H $N || exit 1
  $FF -f yuv4mpegpipe -i "$D/ours.y4m" -f rawvideo -pix_fmt $f "$D/ff.raw"
  $TOOL dump "$D/ours.y4m" > "$D/ours.raw" 2>/dev/null
  DESC="ffmpeg reads our $f Y4M, same pixels"; check cmp -s "$D/ff.raw" "$D/ours.raw"
  DESC="ffmpeg decodes $N frames of our $f Y4M"
  check test "$(stat -c %s "$D/ff.raw")" -eq $(( $(stat -c %s "$D/ours.raw") )) -a -s "$D/ff.raw"
done

for f in yuyv422 uyvy422 nv12 yuv420p yuv422p yuv444p; do
  case $f in yuyv422|uyvy422|yuv422p) p=yuv422p ;; nv12|yuv420p) p=yuv420p ;; *) p=yuv444p ;; esac
  $TOOL gen "$D/ours.yuv" raw $f $W $H $N || exit 1
  $FF -f rawvideo -pix_fmt $f -s ${W}x${H} -i "$D/ours.yuv" -pix_fmt $p -f yuv4mpegpipe "$D/ff.y4m"
  $TOOL dump "$D/ff.y4m" > "$D/got.raw" 2>"$D/info"
  $TOOL convert "$D/ours.yuv" $f $p $W $H > "$D/want.raw"
  DESC="ffmpeg reads our raw $f, we read its Y4M ($(cat "$D/info")), same pixels"
  check cmp -s "$D/got.raw" "$D/want.raw"
  # and round trip through ffmpeg rawvideo in the same format
  $FF -f rawvideo -pix_fmt $f -s ${W}x${H} -i "$D/ours.yuv" -f rawvideo -pix_fmt $f "$D/rt.yuv"
  $TOOL dump "$D/rt.yuv" $W $H $f > "$D/rt.raw" 2>/dev/null
  DESC="raw $f round trip through ffmpeg rawvideo"; check cmp -s "$D/rt.raw" "$D/ours.yuv"
done

for f in yuv420p yuv422p yuv444p; do
  $FF -f lavfi -i testsrc=size=${W}x${H}:rate=25 -frames:v $N -pix_fmt $f -f yuv4mpegpipe "$D/src.y4m"
  $FF -f lavfi -i testsrc=size=${W}x${H}:rate=25 -frames:v $N -pix_fmt $f -f rawvideo "$D/src.raw"
  $TOOL dump "$D/src.y4m" > "$D/got.raw" 2>"$D/info"
  DESC="we read ffmpeg's testsrc $f Y4M ($(cat "$D/info")) = its rawvideo"
  check cmp -s "$D/got.raw" "$D/src.raw"
  # the same through a pipe (no seeking)
  $FF -f lavfi -i testsrc=size=${W}x${H}:rate=25 -frames:v $N -pix_fmt $f -f yuv4mpegpipe - |
    $TOOL dump - > "$D/pipe.raw" 2>/dev/null
  DESC="we read ffmpeg's $f Y4M from a pipe"; check cmp -s "$D/pipe.raw" "$D/src.raw"
done
exit $((fails > 0))
