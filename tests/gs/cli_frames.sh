#!/bin/bash
# gsrender --orbit N --frames A:B: slices of an orbit rendered apart give,
# joined, the whole run byte for byte: Y4M slices each a valid stream with
# the whole run's header (the frames after it concatenated), PNG slices the
# whole run's files under their global numbers. Empty ranges, ranges past the
# orbit and --frames without --orbit are usage errors (exit 2) naming the
# range, with no output. The same for --view all (every camera of
# cameras.json as a sequence), whose Y4M needs cameras of one size.
#   cli_frames.sh GSRENDER [DEVICE]   DEVICE cpu (default) or cuda (skips,
#                                     exit 77, without a GPU)
set -u
BIN=${1:?usage: cli_frames.sh GSRENDER [DEVICE]}
D=${2:-cpu}
TD=$GT_TESTDATA/gs
. "$(dirname "$0")/../lib/checks.sh"
if [ "$D" != cpu ]; then
    "$BIN" --device "$D" -q "$TD/scene.ply" --size 8x8 -o "$T/probe.png" 2>"$T/e"
    [ $? = 4 ] && { echo "SKIP: no GPU ($(cat "$T/e"))"; exit 77; }
fi
G=("$BIN" --device "$D" -q "$TD/scene.ply" --orbit 7 --size 32x24)
# frames of a Y4M file (its structure checked: header, then FRAME + 32x24 4:2:0)
nframes() {
    python3 - "$1" <<'PY'
import sys
d, fb = open(sys.argv[1], 'rb').read(), 32 * 24 * 3 // 2
assert d.startswith(b'YUV4MPEG2 ') and b' W32 ' in d[:d.index(b'\n')], d[:60]
p, n = d.index(b'\n') + 1, 0
while p < len(d):
    assert d[p:p + 6] == b'FRAME\n', p
    p, n = p + 6 + fb, n + 1
assert p == len(d), (p, len(d))
print(n)
PY
}
payload() { tail -c +$(($(head -1 "$1" | wc -c) + 1)) "$1"; }

"${G[@]}" -o "$T/whole.y4m" 2>"$T/e"; check "whole orbit (7 frames)" 0 $?
"${G[@]}" --frames 0:3 -o "$T/a.y4m" 2>"$T/e"; check "--frames 0:3" 0 $?
"${G[@]}" --frames 3:7 -o "$T/b.y4m" 2>"$T/e"; check "--frames 3:7" 0 $?
"${G[@]}" --frames 3: -o "$T/b2.y4m" 2>"$T/e"; check "--frames 3: (to the end)" 0 $?
"${G[@]}" --frames :3 -o - >"$T/a2.y4m" 2>"$T/e"; check "--frames :3 (from 0) to stdout" 0 $?
counts="$(nframes "$T/whole.y4m") $(nframes "$T/a.y4m") $(nframes "$T/b.y4m")"
if [ "$counts" = "7 3 4" ]; then ok "valid Y4M streams of 7, 3 and 4 frames"; else bad "frames: $counts, want 7 3 4"; fi
for s in a b; do
    [ "$(head -1 "$T/$s.y4m")" = "$(head -1 "$T/whole.y4m")" ] && ok "slice $s: the whole run's header" ||
        bad "slice $s: header '$(head -1 "$T/$s.y4m")'"
done
if command -v ffprobe >/dev/null; then # a real client reads a slice as a stream of its frames
    n=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$T/b.y4m")
    [ "$n" = 4 ] && ok "ffprobe reads slice 3:7 as 4 frames" || bad "ffprobe: slice 3:7 has '$n' frames"
fi
# Y4M joined: the first header, then every slice's frames
{ cat "$T/a.y4m"; payload "$T/b.y4m"; } >"$T/joined.y4m"
cmp -s "$T/joined.y4m" "$T/whole.y4m" && ok "Y4M: 0:3 + 3:7 joined = 0:7" || bad "Y4M: joined slices differ"
# raw: the frames alone, concatenated
{ payload "$T/a.y4m"; payload "$T/b.y4m"; } >"$T/joined.raw"
payload "$T/whole.y4m" >"$T/whole.raw"
cmp -s "$T/joined.raw" "$T/whole.raw" && ok "raw frames: 0:3 + 3:7 = 0:7" || bad "raw frames: joined slices differ"
cmp -s "$T/b.y4m" "$T/b2.y4m" && ok "3: = 3:7" || bad "3: differs from 3:7"
cmp -s "$T/a.y4m" "$T/a2.y4m" && ok ":3 = 0:3" || bad ":3 differs from 0:3"
# the slice's frames are not all one view: frame 3 (first of b) differs from frame 0
if cmp -s <(payload "$T/b.y4m" | head -c 1158) <(payload "$T/a.y4m" | head -c 1158); then
    bad "frame 3 renders like frame 0: the angle is not the global one"
else ok "frame 3 is not frame 0"; fi

# PNG patterns keep the global frame number
"${G[@]}" -o "$T/w_%02d.png" 2>"$T/e"; check "whole orbit as PNGs" 0 $?
"${G[@]}" --frames 2:5 -o "$T/s_%02d.png" 2>"$T/e"; check "--frames 2:5 as PNGs" 0 $?
names=$(cd "$T" && echo s_*.png)
[ "$names" = "s_02.png s_03.png s_04.png" ] && ok "PNG names: s_02..s_04" || bad "PNG names: $names"
same=1
for f in 02 03 04; do cmp -s "$T/s_$f.png" "$T/w_$f.png" || same=0; done
[ $same = 1 ] && ok "PNG slice frames = the whole run's" || bad "PNG slice frames differ from the whole run's"

# errors: exit 2, the range named, no output
err() { # name pattern args...
    local name=$1 pat=$2
    shift 2
    rm -f "$T/x.y4m"
    "$@" -o "$T/x.y4m" 2>"$T/e"
    check "$name" 2 $?
    has "$name: message" "$T/e" "$pat"
    [ -e "$T/x.y4m" ] && bad "$name: output left" || ok "$name: no output"
}
err "empty range 3:3" "--frames '3:3': an empty range" "${G[@]}" --frames 3:3
err "reversed range 5:2" "--frames '5:2': an empty range" "${G[@]}" --frames 5:2
err "empty range :0" "--frames ':0': an empty range" "${G[@]}" --frames :0
err "B past the end" "--frames '0:8': past the end of the orbit's 7 frames" "${G[@]}" --frames 0:8
err "A past the end" "--frames '7:': past the end of the orbit's 7 frames" "${G[@]}" --frames 7:
err "not a range" "--frames 'x'" "${G[@]}" --frames x
err "two colons" "--frames '1:2:3'" "${G[@]}" --frames 1:2:3
err "negative A" "--frames '-1:2'" "${G[@]}" --frames -1:2
err "without --orbit" "a slice of an --orbit" "$BIN" --device "$D" -q "$TD/scene.ply" --frames 0:2
rm -f "$T"/x_*.png
"${G[@]}" --frames 6:9 -o "$T/x_%d.png" 2>"$T/e"
check "PNG pattern past the end" 2 $?
[ -z "$(find "$T" -name 'x_*')" ] && ok "PNG pattern past the end: no files" || bad "PNG files left: $(ls "$T")"

# --view all: the cameras of cameras.json (4, 160x90) as a sequence, sliced the same way
C=("$BIN" --device "$D" -q "$TD/scene.ply" --cameras "$TD/cameras.json" --view all)
"${C[@]}" -o "$T/cams.y4m" 2>"$T/e"; check "--view all to Y4M" 0 $?
"${C[@]}" --frames 0:1 -o "$T/c0.y4m" 2>"$T/e"; check "--view all --frames 0:1" 0 $?
"${C[@]}" --frames 1: -o "$T/c1.y4m" 2>"$T/e"; check "--view all --frames 1:" 0 $?
n=$(python3 -c "import sys; d=open(sys.argv[1],'rb').read(); print(d.count(b'FRAME\n'), len(d) - d.index(b'\n') - 1)" "$T/cams.y4m")
[ "$n" = "4 $((4 * (6 + 160 * 90 * 3 / 2)))" ] && ok "--view all: 4 frames of 160x90" || bad "--view all: frames, bytes: $n"
{ cat "$T/c0.y4m"; payload "$T/c1.y4m"; } >"$T/cj.y4m"
cmp -s "$T/cj.y4m" "$T/cams.y4m" && ok "--view all: 0:1 + 1: joined = the whole list" || bad "--view all: joined slices differ"
"${C[@]}" --frames 1:3 -o "$T/v_%d.png" 2>"$T/e"; check "--view all --frames 1:3 as PNGs" 0 $?
names=$(cd "$T" && echo v_*.png)
[ "$names" = "v_1.png v_2.png" ] && ok "--view all PNG names: v_1, v_2" || bad "--view all PNG names: $names"
for v in 1 2; do
    "$BIN" --device "$D" -q "$TD/scene.ply" --cameras "$TD/cameras.json" --view $v -o "$T/one$v.png"
    cmp -s "$T/one$v.png" "$T/v_$v.png" && ok "--view all frame $v = --view $v" || bad "--view all frame $v differs from --view $v"
done
err "--view all: past the cameras" "--frames '2:5': past the end of the 4 cameras of $TD/cameras.json" "${C[@]}" --frames 2:5
"${C[@]}" -o "$T/x.png" 2>"$T/e"; check "--view all to a .png" 2 $?
has "--view all to a .png: message" "$T/e" "with --view all give a pattern"
err "--view all with --depth" "--depth is for a single view, not --view all" "${C[@]}" --depth "$T/d.pfm"
err "--frames with one view" "a slice of an --orbit or of --view all" "${C[@]:0:7}" --view 1 --frames 0:1
# cameras of two sizes: PNGs each of its camera's size; a Y4M stream is bad data (3)
python3 - "$TD/cameras.json" "$T/mixed.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c[2]['width'], c[2]['height'] = 80, 46
json.dump(c, open(sys.argv[2], 'w'))
PY
M=("$BIN" --device "$D" -q "$TD/scene.ply" --cameras "$T/mixed.json" --view all)
"${M[@]}" -o "$T/m_%d.png" 2>"$T/e"; check "cameras of two sizes to PNGs" 0 $?
sz=$(for f in 0 1 2 3; do od -An -tu1 -j16 -N8 "$T/m_$f.png" | awk '{printf "%dx%d ", $3*256+$4, $7*256+$8}'; done)
[ "$sz" = "160x90 160x90 80x46 160x90 " ] && ok "PNGs of two sizes" || bad "PNG sizes: $sz"
rm -f "$T/x.y4m"
"${M[@]}" -o "$T/x.y4m" 2>"$T/e"; check "cameras of two sizes to Y4M" 3 $?
has "two sizes: message" "$T/e" "camera 2 ('view002') is 80x46 but camera 0 ('view000') is 160x90"
[ -e "$T/x.y4m" ] && bad "two sizes: Y4M left" || ok "two sizes: no Y4M"
"${M[@]}" --frames 3: -o "$T/x.y4m" 2>"$T/e"; check "a slice of one size to Y4M" 0 $?
left=$(find "$T" -name '*.tmp*')
[ -z "$left" ] && ok "no temporary files left" || bad "temporary files left: $left"
exit $fail
