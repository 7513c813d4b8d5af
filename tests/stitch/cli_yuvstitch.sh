#!/bin/bash
# CLI tests of yuvstitch: outputs, exit codes, messages, no partial output on
# failure. Inputs are made by the tool's own CPU path and by ffmpeg when
# present (testsrc); without ffmpeg the ffmpeg-fed cases are skipped.
set -u
Y=${1:?usage: cli_yuvstitch.sh YUVSTITCH}
TD=${GT_TESTDATA:-$(dirname "$0")/../../testdata}/stitch
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() { # name expected_rc actual_rc
    if [ "$2" != "$3" ]; then echo "FAIL $1: exit $3, expected $2"; fail=1; else echo "ok   $1"; fi
}
has() { # name file pattern
    if grep -q -- "$3" "$2"; then echo "ok   $1"; else echo "FAIL $1: '$3' not in: $(cat "$2")"; fail=1; fi
}
export GT_NO_GPU=${GT_NO_GPU:-}
# a 320x240 yuyv422 input: 3 frames of a deterministic pattern (no ffmpeg needed)
python3 - "$T/a.yuv" <<'PY'
import sys
w,h=320,240
out=bytearray()
for f in range(3):
    for y in range(h):
        for x in range(0,w,2):
            Y0=(x*3+y+f*7)%220+16; Y1=((x+1)*3+y+f*7)%220+16
            out+=bytes([Y0,(x+y)%200+28,Y1,(2*x-y)%200+28])
open(sys.argv[1],'wb').write(out)
PY
R="--rig $TD/rig2.txt --size 320x240 --pix-fmt yuyv422"
FB=$((560*240*2))

"$Y" $R "$T/a.yuv" "$T/a.yuv" -o "$T/o.yuv" --device cpu -q 2>"$T/e"; check "raw run" 0 $?
[ "$(stat -c %s "$T/o.yuv")" = $((3*FB)) ] && echo "ok   raw output is 3 frames" || { echo "FAIL raw size"; fail=1; }
for b in none feather multiband; do
    "$Y" $R "$T/a.yuv" "$T/a.yuv" -o "$T/$b.y4m" --blend $b --frames 2 --device cpu -q; check "blend $b" 0 $?
    head -c 9 "$T/$b.y4m" | grep -q YUV4MPEG || { echo "FAIL $b not y4m"; fail=1; }
done
"$Y" $R "$T/a.yuv" "$T/a.yuv" -o "$T/p.yuv" --frames 1 --preview "$T/p.png" --save-masks "$T/masks" --device cpu -q
check "preview + masks" 0 $?
[ -s "$T/p.png" ] && [ -s "$T/masks/mask_1.png" ] && [ -s "$T/masks/mask_2.png" ] && echo "ok   preview/masks written" || { echo "FAIL preview/masks"; fail=1; }
# masks reused through a rig: same output as the computed seams with --blend none
{ echo "panorama 560 240"; echo camera; echo "H 1 0 0 0 1 0 0 0 1"; echo "mask $T/masks/mask_1.png";
  echo camera; echo "H 1.0 0.02 240 0.01 1.0 -2 0.00002 0 1"; echo "gain 1.05"; echo "mask $T/masks/mask_2.png"; } > "$T/m.rig"
"$Y" --rig "$T/m.rig" --size 320x240 --pix-fmt yuyv422 "$T/a.yuv" "$T/a.yuv" -o "$T/m1.yuv" --blend none --device cpu -q
check "rig with masks" 0 $?
"$Y" $R "$T/a.yuv" "$T/a.yuv" -o "$T/m0.yuv" --blend none --device cpu -q
cmp -s "$T/m0.yuv" "$T/m1.yuv" && echo "ok   saved masks reproduce the seams" || { echo "FAIL masks differ"; fail=1; }
# stdin and stdout
cat "$T/a.yuv" | "$Y" $R - "$T/a.yuv" -o - --device cpu -q > "$T/s.yuv"; check "stdin/stdout" 0 $?
cmp -s "$T/s.yuv" "$T/o.yuv" && echo "ok   pipe output identical" || { echo "FAIL pipe output differs"; fail=1; }

# errors: exit codes, messages, no output file
head -c $((2*320*240*2)) "$T/a.yuv" > "$T/short.yuv"
"$Y" $R "$T/a.yuv" "$T/short.yuv" -o "$T/e1.yuv" --device cpu 2>"$T/e"; check "early end stops cleanly" 0 $?
has "early end notice" "$T/e" "ended after 2 frames"
[ "$(stat -c %s "$T/e1.yuv")" = $((2*FB)) ] && echo "ok   stopped at the shortest" || { echo "FAIL shortest"; fail=1; }
"$Y" $R "$T/a.yuv" "$T/short.yuv" -o "$T/e2.yuv" --strict --device cpu 2>"$T/e"; check "early end --strict" 3 $?
has "strict message" "$T/e" "ended after 2 frames while others continue"
[ ! -e "$T/e2.yuv" ] && echo "ok   no partial output" || { echo "FAIL partial output"; fail=1; }
"$Y" --rig "$TD/rig2.txt" --size 321x240 --pix-fmt yuyv422 "$T/a.yuv" "$T/a.yuv" -o "$T/e3.yuv" 2>"$T/e"; check "odd width" 2 $?
has "odd width message" "$T/e" "even"
"$Y" $R "$T/a.yuv" -o "$T/e4.yuv" 2>"$T/e"; check "input count" 2 $?
has "input count message" "$T/e" "has 2 cameras but 1 inputs"
printf 'panorama 560 240\ncamera\nH 1 0 0 0 1 0 0 0 1\ncamera\nH 1 2 3\n 2 4 6\n 0 0 1\n' > "$T/s.rig"
"$Y" --rig "$T/s.rig" --size 320x240 --pix-fmt yuyv422 "$T/a.yuv" "$T/a.yuv" -o "$T/e5.yuv" 2>"$T/e"; check "singular H" 3 $?
has "singular message" "$T/e" "singular homography.*s.rig:5"
printf 'panorama 560 240\ncamera\nH 1 0 0 0 1 0 0 0 1\nmask %s\ncamera\nH 1 0 240 0 1 0 0 0 1\n' "$T/p.png" > "$T/w.rig"
"$Y" --rig "$T/w.rig" --size 320x240 --pix-fmt yuyv422 "$T/a.yuv" "$T/a.yuv" -o "$T/e6.yuv" --device cpu 2>"$T/e"
check "mask size ok" 0 $?
python3 -c "
import zlib,struct,sys
def png(w,h):
    raw=b''.join(b'\0'+b'\xff'*w for _ in range(h))
    c=lambda t,d: struct.pack('>I',len(d))+t+d+struct.pack('>I',zlib.crc32(t+d)&0xffffffff)
    return b'\x89PNG\r\n\x1a\n'+c(b'IHDR',struct.pack('>IIBBBBB',w,h,8,0,0,0,0))+c(b'IDAT',zlib.compress(raw))+c(b'IEND',b'')
open(sys.argv[1],'wb').write(png(100,50))" "$T/small.png"
printf 'panorama 560 240\ncamera\nH 1 0 0 0 1 0 0 0 1\nmask %s\ncamera\nH 1 0 240 0 1 0 0 0 1\n' "$T/small.png" > "$T/w2.rig"
"$Y" --rig "$T/w2.rig" --size 320x240 --pix-fmt yuyv422 "$T/a.yuv" "$T/a.yuv" -o "$T/e7.yuv" --device cpu 2>"$T/e"; check "mask wrong size" 3 $?
has "mask size message" "$T/e" "is 100x50, the panorama is 560x240"
[ ! -e "$T/e7.yuv" ] && echo "ok   no output on error" || { echo "FAIL output on error"; fail=1; }
printf 'panorama 560 240\ncamera\nH 1 0 0 0 1 0 0 0 1\ncamera\nH 1 0 240 0 1 0 0 0 1\n' > "$T/ok.rig"
head -c $((320*240*3/2*2)) /dev/zero > "$T/z420.yuv"
"$Y" --rig "$T/ok.rig" "$T/a.yuv" -o "$T/e8.yuv" "$T/a.yuv" 2>"$T/e"; check "raw without --size" 2 $?
"$Y" --rig "$T/ok.rig" --size 320x240 --pix-fmt yuyv422 "$T/a.yuv" "$T/nope.yuv" -o "$T/e9.yuv" 2>"$T/e"; check "missing input" 1 $?
"$Y" --help | grep -q -- "--feather-alpha" && echo "ok   help" || { echo "FAIL help"; fail=1; }
"$Y" --blend fancy --rig x a -o b 2>"$T/e"; check "bad --blend" 2 $?
exit $fail
