#!/bin/bash
# Hostile inputs for yuvstitch (see lib.sh and README.md).
. "$(dirname "$0")/lib.sh"
hostile_init "${1:-}"
Y=("$PROG" --device cpu -q)
RAW=(--size 320x240 --pix-fmt yuyv422)
cp "$TD/stitch/rig2.txt" "$W/rig.txt"
python3 - "$W" <<'PY'
import sys
w, h, d = 320, 240, sys.argv[1]
frame = bytes([(x * 7 + y) % 200 + 16 for y in range(h) for x in range(w * 2)])
open(d + '/a.yuv', 'wb').write(frame * 2)                    # 2 frames of yuyv422
open(d + '/b.yuv', 'wb').write(frame * 2)
open(d + '/one.yuv', 'wb').write(frame)                      # 1 frame
open(d + '/short.yuv', 'wb').write(frame[:1000])             # less than a frame
y4m = b'YUV4MPEG2 W320 H240 F25:1 C420\n' + (b'FRAME\n' + bytes(320 * 240 * 3 // 2)) * 2
open(d + '/a.y4m', 'wb').write(y4m)
open(d + '/small.y4m', 'wb').write(b'YUV4MPEG2 W160 H120 F25:1 C420\n' + b'FRAME\n' + bytes(160 * 120 * 3 // 2))
open(d + '/lying.y4m', 'wb').write(b'YUV4MPEG2 W16000 H16000 F25:1 C420\nFRAME\nabc')
open(d + '/odd.y4m', 'wb').write(b'YUV4MPEG2 W321 H240 C420\n')
open(d + '/badmagic.y4m', 'wb').write(b'YUV4MPEG3 W320 H240 C420\n' + bytes(1000))
mask = bytes([137, 80, 78, 71])  # not a PNG beyond its first bytes
open(d + '/notpng.png', 'wb').write(mask + bytes(60))
PY
rig() { # file lines...: a two-camera rig with extra lines for camera 1
    local f=$1
    shift
    { echo "panorama 560 240"; echo camera; echo "H 1 0 0 0 1 0 0 0 1"; [ $# -gt 0 ] && printf '%s\n' "$@";
      echo camera; echo "H 1.0 0.02 240 0.01 1.0 -2 0.00002 0 1"; } > "$f"
}
"$PROG" --device cpu -q --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$T/o.yuv" --save-masks "$T/masks" \
    || { echo "FAIL: cannot make the masks"; exit 1; }
mkdir "$W/masks"
cp "$T/masks/mask_1.png" "$T/masks/mask_2.png" "$W/masks/"
rig "$W/mask.rig" "mask masks/mask_1.png"
rig "$W/nomask.rig" "mask nomask.png"
rig "$W/wrongmask.rig" "mask notpng.png"
rig "$W/singular.rig"
sed -i '3s/.*/H 1 0 0 0 1 0 0 0 0/' "$W/singular.rig"
rig "$W/nan.rig"
sed -i '3s/.*/H 1 0 nan 0 1 0 0 0 1/' "$W/nan.rig"
sed '1s/.*/panorama 100000 100000/' "$W/rig.txt" > "$W/huge.rig"
printf 'panorama 560 240\n' > "$W/nocam.rig"
: > "$W/empty.rig"
mkdir "$W/outdir"

# an output never replaces an input: streams, the rig, the masks
same_file_cases out-is-input-1 "$W/a.yuv" "input 1" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o @OUT@
run_case out-is-input-2 2 "-o '$W/b.yuv' is the same file as the input '$W/b.yuv' \(input 2\)" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/b.yuv"
run_case out-is-rig 2 "same file as the input '$W/rig.txt' \(--rig\)" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/rig.txt" --out-format raw
run_case preview-is-input 2 "--preview '$W/a.yuv' is the same file as the input" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/o.yuv" --preview "$W/a.yuv"
run_case saved-mask-is-rig-mask 2 "--save-masks '$W/masks/mask_1.png' is the same file as the input '$W/masks/mask_1.png' \(the mask of camera 1\)" -- "${Y[@]}" --rig "$W/mask.rig" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/o.yuv" --save-masks "$W/masks"
run_case out-and-preview-one-file 2 "are the same file" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/x" --preview "$W/outdir/../x"
run_case out-and-preview-both-stdout 2 "-o and --preview both write to standard output" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o - --preview -
run_case stdin-is-output 2 "same file as the input on standard input \(input 1\)" --stdin "$W/a.yuv" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" - "$W/b.yuv" -o "$W/a.yuv"
run_case stdout-appends-to-input 2 "standard output\) is the same file as the input '$W/b.yuv'" --stdout-append "$W/b.yuv" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o -
# where the outputs go, and in which format
run_case out-missing-directory 1 "cannot write '$W/nodir/o.yuv'.*does not exist" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/nodir/o.yuv"
run_case preview-missing-directory 1 "cannot write '$W/nodir/p.png' \(--preview\)" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/o.yuv" --preview "$W/nodir/p.png"
run_case out-is-a-directory 2 "outdir' is a directory" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/outdir"
run_case out-extension-png 2 "o.png': the name says a PNG image, but yuvstitch writes raw YUV video there.*--out-format raw" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/o.png"
run_case preview-extension-ply 2 "--preview '$W/p.ply': the name says a PLY file" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/o.yuv" --preview "$W/p.ply"
run_case save-masks-onto-a-file 2 "--save-masks '$W/rig.txt' is not a directory" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/o.yuv" --save-masks "$W/rig.txt"
run_case stdout-closed 1 "write error on (.-.|standard output)" --stdout-closed -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o -
# options
run_case output-twice 2 "-o given twice" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/o.yuv" -o "$W/p.yuv"
run_case rig-twice 2 "--rig given twice" -- "${Y[@]}" --rig "$W/rig.txt" --rig "$W/mask.rig" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/o.yuv"
run_case two-stdin-inputs 2 "only one input can be '-'" --stdin "$W/a.yuv" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" - - -o "$W/o.yuv"
run_case size-without-pix-fmt 2 "raw inputs need both --size and --pix-fmt" -- "${Y[@]}" --rig "$W/rig.txt" --size 320x240 "$W/a.yuv" "$W/b.yuv" -o "$W/o.yuv"
run_case inputs-differ-from-rig 2 "has 2 cameras but 1 inputs were given" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" -o "$W/o.yuv"
run_case bands-too-many 2 "--bands" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" --bands 13 "$W/a.yuv" "$W/b.yuv" -o "$W/o.yuv"
# paths that cannot be read
run_case missing-input 1 "cannot open '$W/nope.yuv' \(input 2\)" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/a.yuv" "$W/nope.yuv" -o "$W/o.yuv"
run_case missing-rig 1 "cannot open '$W/nope.rig'" -- "${Y[@]}" --rig "$W/nope.rig" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/o.yuv"
run_case input-is-a-directory 1 "cannot read '$W/outdir' \(input 1\): it is a directory" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/outdir" "$W/b.yuv" -o "$W/o.yuv"
run_case rig-mask-missing 1 "cannot open '$W/nomask.png' \(the mask of camera 1\)" -- "${Y[@]}" --rig "$W/nomask.rig" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/o.yuv"
U=$(unreadable_input "$W/a.yuv")
run_case unreadable-input 1 "cannot (open|read) '$U'" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$U" "$W/b.yuv" -o "$W/o.yuv"
# broken and lying rigs, masks and streams
run_case rig-empty 3 "no 'panorama W H' line" -- "${Y[@]}" --rig "$W/empty.rig" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/o.yuv"
run_case rig-no-cameras 3 "no cameras.*nocam.rig:1" -- "${Y[@]}" --rig "$W/nocam.rig" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/o.yuv"
run_case rig-huge-panorama 3 "panorama size 100000x100000 is not a whole size in 1..65536.*huge.rig:1" -- "${Y[@]}" --rig "$W/huge.rig" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/o.yuv"
run_case rig-singular-homography 3 "camera 1: singular homography.*singular.rig:3" -- "${Y[@]}" --rig "$W/singular.rig" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/o.yuv"
run_case rig-nan-homography 3 "bad H entry 'nan'.*nan.rig:3" -- "${Y[@]}" --rig "$W/nan.rig" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/o.yuv"
run_case rig-mask-not-a-png 3 "not a PNG or JPEG image.*notpng.png" -- "${Y[@]}" --rig "$W/wrongmask.rig" "${RAW[@]}" "$W/a.yuv" "$W/b.yuv" -o "$W/o.yuv"
run_case y4m-header-lies 3 "stream ends inside frame 1: the header says 16000x16000 yuv420p, 384000000 bytes a frame, and 9 bytes follow it" -- "${Y[@]}" --rig "$W/rig.txt" "$W/lying.y4m" "$W/a.y4m" -o "$W/o.y4m"
run_case raw-shorter-than-a-frame 3 "input 1: stream ends inside frame 1 \(1000 of 153600 bytes\)" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" "$W/short.yuv" "$W/b.yuv" -o "$W/o.yuv"
run_case raw-short-on-stdin 3 "stream ends inside frame 1 \(1000 of 153600 bytes\).*<stdin>" --stdin-pipe "$W/short.yuv" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" - "$W/b.yuv" -o "$W/o.yuv"
run_case y4m-wrong-magic 2 "is raw YUV \(no YUV4MPEG2 header\)" -- "${Y[@]}" --rig "$W/rig.txt" "$W/badmagic.y4m" "$W/a.y4m" -o "$W/o.y4m"
run_case y4m-odd-width 3 "width 321 must be even" -- "${Y[@]}" --rig "$W/rig.txt" "$W/odd.y4m" "$W/a.y4m" -o "$W/o.y4m"
run_case inputs-of-different-sizes 3 "input 2 .* is 160x120 yuv420p but input 1 is 320x240 yuv420p" -- "${Y[@]}" --rig "$W/rig.txt" "$W/a.y4m" "$W/small.y4m" -o "$W/o.y4m"
run_case strict-shorter-input 3 "input 2 .* ended after 1 frames while others continue \(--strict\)" -- "${Y[@]}" --rig "$W/rig.txt" "${RAW[@]}" --strict "$W/a.yuv" "$W/one.yuv" -o "$W/o.yuv"
hostile_finish
