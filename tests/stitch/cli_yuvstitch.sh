#!/bin/bash
# CLI tests of yuvstitch: outputs, exit codes, messages, no partial output on
# failure. Inputs are made by the tool's own CPU path and by ffmpeg when
# present (testsrc); without ffmpeg the ffmpeg-fed cases are skipped.
set -u
Y=${1:?usage: cli_yuvstitch.sh YUVSTITCH}
TD=${GT_TESTDATA:-$(dirname "$0")/../../testdata}/stitch
T=$(mktemp -d)
trap 'umount "$T/small" 2>/dev/null; rm -rf "$T"' EXIT
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

# output writer: a regular file goes through the parallel mmap appender
# (common/mapout: auto, or forced to mmap (sparse growth, or fallocate) or
# pwrite), stdio when
# GT_NO_MMAP_WRITE is set, and a pipe through stdio: the same bytes. Frames of
# 1.15 MB (1200x480), above the appender's 1 MiB threshold for its thread pool.
python3 - "$T/b.yuv" <<'PY'
import sys
w,h=640,480
out=bytearray()
for f in range(3):
    row=bytearray()
    for y in range(h):
        for x in range(0,w,2):
            row+=bytes([(x*5+y*3+f*11)%219+16,(x+2*y+f)%224+16,((x+1)*5+y*3+f*11)%219+16,(3*x-y+7*f)%224+16])
    out+=row
open(sys.argv[1],'wb').write(out)
PY
printf 'panorama 1200 480\ncamera\nH 1 0 0 0 1 0 0 0 1\ncamera\nH 1.0 0.01 560 -0.005 1.0 2 0.00001 0 1\ngain 1.1\n' > "$T/big.rig"
RB="--rig $T/big.rig --size 640x480 --pix-fmt yuyv422 $T/b.yuv $T/b.yuv --device cpu -q"
BFB=$((1200*480*2))
for fmt in raw y4m; do
    "$Y" $RB --out-format $fmt -o - | cat > "$T/pipe.$fmt"; check "writer: $fmt to a pipe" 0 $?
    for mode in auto mmap fallocate pwrite stdio; do
        if [ $mode = stdio ]; then GT_NO_MMAP_WRITE=1 "$Y" $RB --out-format $fmt -o "$T/w_$mode.$fmt"
        elif [ $mode = fallocate ]; then GT_MAPOUT_MODE=mmap GT_MAPOUT_FALLOCATE=1 "$Y" $RB --out-format $fmt -o "$T/w_$mode.$fmt"
        else GT_MAPOUT_MODE=$mode "$Y" $RB --out-format $fmt -o "$T/w_$mode.$fmt"; fi
        check "writer: $fmt to a file ($mode)" 0 $?
        cmp -s "$T/pipe.$fmt" "$T/w_$mode.$fmt" && echo "ok   writer: $fmt $mode file = pipe" || { echo "FAIL writer: $fmt $mode file differs from the pipe"; fail=1; }
    done
done
[ "$(stat -c %s "$T/w_auto.raw")" = $((3*BFB)) ] && echo "ok   writer: raw size exact" || { echo "FAIL writer: raw size $(stat -c %s "$T/w_auto.raw")"; fail=1; }
python3 - "$T/w_mmap.y4m" $BFB 3 <<'PY' && echo "ok   writer: y4m header, 3 FRAME markers, exact size" || { echo "FAIL writer: y4m structure"; fail=1; }
import sys
d=open(sys.argv[1],'rb').read(); fb=int(sys.argv[2]); n=int(sys.argv[3])
hdr=b"YUV4MPEG2 W1200 H480 F25:1 Ip A1:1 C422\n"
assert d.startswith(hdr), d[:60]
p=len(hdr)
for k in range(n):
    assert d[p:p+6]==b"FRAME\n", (k, d[p:p+6]); p+=6+fb
assert p==len(d), (p, len(d))
PY
GT_MAPOUT_MODE=mmap "$Y" $RB --frames 2 -o "$T/two.yuv"; check "writer: --frames 2" 0 $?
[ "$(stat -c %s "$T/two.yuv")" = $((2*BFB)) ] && echo "ok   writer: 2 frames written" || { echo "FAIL writer: --frames 2 size"; fail=1; }
# a full disk: a 2 MB tmpfs (when this user may mount one; skipped otherwise)
# cannot hold 3 frames: exit 1 naming ENOSPC, no output, no temporary file
# (the appender writes only pages it has allocated, so ENOSPC is an error, not SIGBUS)
mkdir -p "$T/small"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=2m gt_small "$T/small" 2>/dev/null; then
    for mode in mmap fallocate pwrite auto stdio; do
        if [ $mode = stdio ]; then GT_NO_MMAP_WRITE=1 "$Y" $RB -o "$T/small/o.yuv" 2>"$T/e"
        elif [ $mode = fallocate ]; then GT_MAPOUT_MODE=mmap GT_MAPOUT_FALLOCATE=1 "$Y" $RB -o "$T/small/o.yuv" 2>"$T/e"
        else GT_MAPOUT_MODE=$mode "$Y" $RB -o "$T/small/o.yuv" 2>"$T/e"; fi
        check "writer: disk full ($mode)" 1 $?
        has "writer: disk full message ($mode)" "$T/e" "No space left on device"
        [ -z "$(ls -A "$T/small")" ] && echo "ok   writer: nothing left on the full disk ($mode)" || { echo "FAIL writer: left on the full disk: $(ls -A "$T/small")"; fail=1; }
    done
    umount "$T/small"
else
    echo "skip writer: disk full (cannot mount a small tmpfs here)"
fi
"$Y" $RB -o "$T/nodir/x.yuv" 2>"$T/e"; check "writer: missing directory" 1 $?
has "writer: missing directory message" "$T/e" "cannot write '$T/nodir/x.yuv'"
"$Y" $RB -o "$T/b.yuv/x.yuv" 2>"$T/e"; check "writer: path under a file" 1 $?
"$Y" $RB -o - > /dev/full 2>"$T/e"; check "writer: full device (stdout)" 1 $?
has "writer: full device message" "$T/e" "write error"
ls -a "$T" | grep -q '\.tmp\.' && { echo "FAIL writer: temporary files left: $(ls -a "$T" | grep '\.tmp\.')"; fail=1; } || echo "ok   writer: no temporary files left"

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
# every broken rig (fuzz findings and hand-made cases): exit 3, the message names the file
nb=0
for f in "$TD"/broken/*; do
    [ "${f##*/}" = EXPECT ] && continue
    "$Y" --rig "$f" --size 320x240 --pix-fmt yuyv422 "$T/a.yuv" "$T/a.yuv" -o "$T/eb.yuv" --device cpu 2>"$T/e"
    rc=$?
    if [ $rc -ne 3 ] || ! grep -qF -- "$f:" "$T/e" || [ -e "$T/eb.yuv" ]; then
        echo "FAIL broken rig ${f##*/}: exit $rc: $(cat "$T/e")"; fail=1
    fi
    nb=$((nb + 1))
done
[ $nb -gt 0 ] && echo "ok   $nb broken rigs: exit 3 naming the file, no output" || { echo "FAIL no broken rigs found"; fail=1; }
ls -a "$T" | grep -q '\.tmp\.' && { echo "FAIL temporary files left after the error cases"; fail=1; } || echo "ok   no temporary files left after the error cases"
exit $fail
