#!/bin/bash
# yuvstitch --start N --frames M: a run split into slices gives, joined, the
# frames of the whole run byte for byte: raw outputs concatenated; Y4M
# outputs each with the whole run's stream header, their frames (after the
# header) concatenated. Inputs raw (seeked in one go) and Y4M (seeked frame by
# frame; FRAME lines of two lengths), as files and through pipes (read and
# dropped). A start at or past the end of an input is a usage error (exit 2)
# naming the input and its length, with no output.
#   cli_slices.sh YUVSTITCH [DEVICE]   DEVICE cpu (default) or cuda (skips,
#                                      exit 77, without a GPU)
set -u
# OpenMP threads that spin while they wait make the CPU path 40 times slower
# on a loaded machine with few cores; this test is about bytes, not speed
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
Y=${1:?usage: cli_slices.sh YUVSTITCH [DEVICE]}
D=${2:-cpu}
. "$(dirname "$0")/../lib/checks.sh"
# Two 128x96 cameras, 10 frames each, a different pattern per frame; raw
# yuyv422 and Y4M 4:2:0 (every other FRAME line with a parameter); a third
# camera stream 6 frames long; one of 9.5 frames (cut inside its last); a
# Y4M stream cut inside its fifth frame.
python3 - "$T" <<'PY'
import sys
d = sys.argv[1]
w, h, n = 128, 96, 10
def luma(cam, f):
    return bytes((x * 3 + y * (cam + 2) + f * 17 + cam * 40) % 219 + 16 for y in range(h) for x in range(w))
def chroma(cam, f, cw, ch, s):
    return bytes((x * (s + 1) + y * 2 + f * 9 + cam * 25) % 224 + 16 for y in range(ch) for x in range(cw))
for cam in (1, 2):
    raw, y4m = bytearray(), bytearray(b'YUV4MPEG2 W128 H96 F25:1 Ip A1:1 C420jpeg\n')
    for f in range(n):
        Y = luma(cam, f)
        U, V = chroma(cam, f, w // 2, h, 1), chroma(cam, f, w // 2, h, 2)
        for y in range(h):
            for x in range(0, w, 2):
                i, c = y * w + x, y * (w // 2) + x // 2
                raw += bytes([Y[i], U[c], Y[i + 1], V[c]])
        y4m += b'FRAME\n' if f % 2 == 0 else b'FRAME Ixyz\n'
        y4m += Y + chroma(cam, f, w // 2, h // 2, 1) + chroma(cam, f, w // 2, h // 2, 2)
    open(f'{d}/c{cam}.yuv', 'wb').write(raw)
    open(f'{d}/c{cam}.y4m', 'wb').write(y4m)
    if cam == 2:  # 4 frames, then the FRAME line and 100 bytes of the fifth
        cut = y4m.index(b'\n') + 1 + 2 * (6 + 11 + 2 * w * h * 3 // 2) + 6 + 100
        open(f'{d}/c2cut.y4m', 'wb').write(y4m[:cut])
fb = w * h * 2
open(f'{d}/c2short.yuv', 'wb').write(open(f'{d}/c2.yuv', 'rb').read()[:6 * fb])
open(f'{d}/c2cut.yuv', 'wb').write(open(f'{d}/c2.yuv', 'rb').read()[:9 * fb + fb // 2])
PY
# camera 2 to the right of camera 1, turned a little (a perspective term)
printf 'panorama 224 104\ncamera\nH 1 0 0 0 1 4 0 0 1\n' > "$T/rig.txt"
printf 'camera\nH 1.0 0.02 100 0.01 1.0 2 0.0002 0 1\ngain 1.05\n' >> "$T/rig.txt"
RAW=(--size 128x96 --pix-fmt yuyv422)
run() { "$Y" --rig "$T/rig.txt" --device "$D" -q "$@"; }
if [ "$D" != cpu ]; then
    run "${RAW[@]}" "$T/c1.yuv" "$T/c2.yuv" --frames 1 -o "$T/probe.yuv" 2>"$T/e"
    [ $? = 4 ] && { echo "SKIP: no GPU ($(cat "$T/e"))"; exit 77; }
fi

# frames in a raw or Y4M output of FRAME_BYTES a frame (Y4M: its structure checked)
nframes() { # FILE FRAME_BYTES
    python3 - "$1" "$2" <<'PY'
import sys
d, fb = open(sys.argv[1], 'rb').read(), int(sys.argv[2])
if d.startswith(b'YUV4MPEG2 '):
    p, n = d.index(b'\n') + 1, 0
    while p < len(d):
        assert d[p:p + 5] == b'FRAME', p
        p, n = d.index(b'\n', p) + 1 + fb, n + 1
    assert p == len(d)
    print(n)
else:
    print(len(d) // fb if len(d) % fb == 0 else -1)
PY
}
# the frames of a Y4M file after its stream header
payload() { tail -c +$(($(head -1 "$1" | wc -c) + 1)) "$1"; }
# every run of slices() reads input 1 from a fresh pipe on stdin when $feed is set
feed=
# shellcheck disable=SC2002 # a pipe on stdin, not a file
go() { if [ -n "$feed" ]; then cat "$feed" | run "$@"; else run "$@"; fi; }
# slices NAME EXT FRAME_BYTES INPUT_ARGS...: the whole run (10 frames), then
# frames 0-2, 3-6 and 7-9 (the last to the end); joined, they are the whole
slices() {
    local name=$1 ext=$2 fb=$3
    shift 3
    go "$@" -o "$T/whole.$ext"; check "$name: whole run" 0 $?
    go "$@" --start 0 --frames 3 -o "$T/s1.$ext"; check "$name: --start 0 --frames 3" 0 $?
    go "$@" --start 3 --frames 4 -o "$T/s2.$ext"; check "$name: --start 3 --frames 4" 0 $?
    go "$@" --start 7 -o "$T/s3.$ext"; check "$name: --start 7 (to the end)" 0 $?
    local counts="" f
    for f in whole s1 s2 s3; do counts="$counts $(nframes "$T/$f.$ext" "$fb")"; done
    if [ "$counts" = " 10 3 4 3" ]; then ok "$name: 10 frames; slices of 3, 4 and 3"
    else bad "$name: frames$counts, want 10 3 4 3"; fi
    if [ "$ext" = y4m ]; then
        for s in s1 s2 s3; do
            [ "$(head -1 "$T/$s.y4m")" = "$(head -1 "$T/whole.y4m")" ] || bad "$name: $s's stream header differs"
        done
        payload "$T/whole.y4m" > "$T/whole.frames"
        { payload "$T/s1.y4m"; payload "$T/s2.y4m"; payload "$T/s3.y4m"; } > "$T/joined.frames"
    else
        cp "$T/whole.$ext" "$T/whole.frames"
        cat "$T/s1.$ext" "$T/s2.$ext" "$T/s3.$ext" > "$T/joined.frames"
    fi
    if cmp -s "$T/whole.frames" "$T/joined.frames"; then ok "$name: the slices joined = the whole run"
    else bad "$name: the joined slices differ from the whole run"; fi
    rm -f "$T"/whole.* "$T"/s[123].* "$T"/joined.frames
}
FB=$((224 * 104 * 2)) FB420=$((224 * 104 * 3 / 2))
slices "raw files -> raw" yuv $FB "${RAW[@]}" "$T/c1.yuv" "$T/c2.yuv"
slices "raw files -> y4m" y4m $FB "${RAW[@]}" "$T/c1.yuv" "$T/c2.yuv"
slices "y4m files -> y4m" y4m $FB420 "$T/c1.y4m" "$T/c2.y4m"
feed=$T/c1.y4m
slices "y4m on stdin (a pipe)" y4m $FB420 - "$T/c2.y4m"
feed=$T/c1.yuv
slices "raw on stdin (a pipe)" yuv $FB "${RAW[@]}" - "$T/c2.yuv"
feed=

# a slice that runs past the shorter input stops there, naming its length
run "${RAW[@]}" "$T/c1.yuv" "$T/c2short.yuv" --start 4 --frames 5 -o "$T/short.yuv" -q 2>"$T/e"
check "slice past the shorter input" 0 $?
if [ "$(stat -c %s "$T/short.yuv")" = $((2 * FB)) ]; then ok "slice past the shorter input: 2 frames"
else bad "slice past the shorter input: $(stat -c %s "$T/short.yuv") bytes, want 2 frames"; fi
"$Y" --rig "$T/rig.txt" --device "$D" "${RAW[@]}" "$T/c1.yuv" "$T/c2short.yuv" --start 4 -o "$T/short2.yuv" 2>"$T/e"
has "notice names the input's length" "$T/e" "input 2 ('$T/c2short.yuv') ended after 6 frames"
run "${RAW[@]}" "$T/c1.yuv" "$T/c2short.yuv" --start 4 --strict -o "$T/strict.yuv" 2>"$T/e"
check "--strict: the shorter input" 3 $?
has "--strict message names the input's length" "$T/e" "ended after 6 frames while others continue"

# --start at or past the end: exit 2, the input and its length, no output
past() { # name pattern args...
    local name=$1 pat=$2
    shift 2
    rm -f "$T/past.yuv"
    "$@" -o "$T/past.yuv" 2>"$T/e"
    check "$name" 2 $?
    matches "$name: message" "$T/e" "$pat"
    if [ -e "$T/past.yuv" ]; then bad "$name: an output was left"; else ok "$name: no output"; fi
}
past "--start 10 of 10 frames (raw file)" "--start 10 is past the end of input 1 ('$T/c1.yuv'), which has 10 frames (0..9)" \
    run "${RAW[@]}" "$T/c1.yuv" "$T/c2.yuv" --start 10
past "--start 25 of 10 frames (y4m file)" "--start 25 is past the end of input 1 ('$T/c1.y4m'), which has 10 frames" \
    run "$T/c1.y4m" "$T/c2.y4m" --start 25
past "--start 6 of a 6-frame input" "past the end of input 2 ('$T/c2short.yuv'), which has 6 frames" \
    run "${RAW[@]}" "$T/c1.yuv" "$T/c2short.yuv" --start 6
: > "$T/empty.yuv"
past "--start 1 of an empty input" "--start 1 is past the end of input 2 ('$T/empty.yuv'), which has 0 frames$" \
    run "${RAW[@]}" "$T/c1.yuv" "$T/empty.yuv" --start 1
feed=$T/c1.yuv
past "--start 12 on a pipe" "--start 12 is past the end of input 1 ('-'), which has 10 frames" \
    go "${RAW[@]}" - "$T/c2.yuv" --start 12
feed=
past "--start with --calibrate" "--start is for streaming" \
    "$Y" --calibrate --start 2 "$T/c1.y4m" "$T/c2.y4m"
# a Y4M file cut inside a frame the start passes over: bad data, the frame named
run "$T/c1.y4m" "$T/c2cut.y4m" --start 7 -o "$T/cut.y4m" 2>"$T/e"
check "--start over a cut Y4M frame" 3 $?
has "cut Y4M frame message" "$T/e" "input 2 ('$T/c2cut.y4m'): stream ends inside frame 5 (100 of 18432 bytes)"
# a raw file cut inside its last frame: the frame is named (bad data)
run "${RAW[@]}" "$T/c1.yuv" "$T/c2cut.yuv" --start 9 -o "$T/cut.yuv" 2>"$T/e"
check "--start onto a cut frame" 3 $?
has "cut frame message" "$T/e" "input 2 ('$T/c2cut.yuv'): stream ends inside frame 10"
left=$(find "$T" -name '*.tmp.*')
if [ -n "$left" ]; then bad "temporary files left: $left"; else ok "no temporary files left"; fi
exit $fail
