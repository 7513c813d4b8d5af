#!/bin/bash
# gsrender's output path when the output fails: an orbit on stdout to a
# full device (/dev/full), to a file that outgrows its limit (ulimit -f, SIGXFSZ ignored
# so the write fails with EFBIG), to a pipe closed early, and PNG frames into
# a folder that is not there. Each run fails (exit 1; a closed pipe: SIGPIPE
# or exit 1) with a message naming the output, leaves no file and no
# temporary beside it, and does not hang (the frame writer's error stops the
# render loop). --timings names the writer's stages; --png-level orders the
# file sizes and is checked.
#   cli_output.sh GSRENDER [DEVICE]   DEVICE cpu (default) or cuda (skips,
#                                     exit 77, without a GPU)
set -u
BIN=${1:?usage: cli_output.sh GSRENDER [DEVICE]}
D=${2:-cpu}
TD=$GT_TESTDATA/gs
. "$(dirname "$0")/../lib/checks.sh"
if [ "$D" != cpu ]; then
    "$BIN" --device "$D" -q "$TD/scene.ply" --size 8x8 -o "$T/probe.png" 2>"$T/e"
    [ $? = 4 ] && { echo "SKIP: no GPU ($(cat "$T/e"))"; exit 77; }
    rm -f "$T/probe.png"
fi
G=("$BIN" --device "$D" -q "$TD/scene.ply")

timeout 120 "${G[@]}" --orbit 8 --size 64x48 -o - >/dev/full 2>"$T/e"
check "orbit to /dev/full: exit 1" 1 $?
has "orbit to /dev/full: says why" "$T/e" "No space left"

mkdir "$T/lim"
# 320x240 4:2:0 is 115 KB a frame: the 300 KB limit is hit at the third
( trap '' XFSZ; ulimit -f 300; timeout 120 "${G[@]}" --orbit 12 --size 320x240 -o "$T/lim/o.y4m" ) 2>"$T/e"
check "orbit past the file size limit: exit 1" 1 $?
has "orbit past the file size limit: says where" "$T/e" "o.y4m"
left=$(ls -A "$T/lim")
[ -z "$left" ] && ok "orbit past the file size limit: no file left" || bad "files left: $left"

timeout 120 "${G[@]}" --orbit 40 --size 64x48 -o - 2>"$T/e" | head -c 100 >/dev/null
rc=${PIPESTATUS[0]}
[ "$rc" = 1 ] || [ "$rc" = 141 ] && ok "orbit to a pipe closed early: exit $rc" || bad "pipe closed early: exit $rc ($(head -c 300 "$T/e"))"

timeout 120 "${G[@]}" --orbit 3 --size 32x24 -o "$T/nodir/f_%02d.png" 2>"$T/e"
check "PNG frames into a missing folder: exit 1" 1 $?
has "PNG frames into a missing folder: says where" "$T/e" "nodir"

"${G[@]}" --orbit 3 --size 32x24 -o "$T/t.y4m" --timings 2>"$T/e"
check "orbit with --timings" 0 $?
has "--timings: the writer's stage" "$T/e" "write (overlapped)"
if [ "$D" != cpu ]; then
    has "--timings: the GPU conversion" "$T/e" "yuv convert"
    has "--timings: the overlapped download" "$T/e" "download (GPU, overlapped)"
fi
# --png-level: 0 stores (more than the 64x48x3 samples), 1 and 9 compress
# (which is smaller depends on the image: 9 is LZ77, 1 runs only)
for l in 0 1 9; do
    "${G[@]}" --size 64x48 --png-level $l -o "$T/l$l.png" 2>"$T/e"
    check "--png-level $l" 0 $?
done
s0=$(stat -c %s "$T/l0.png"); s1=$(stat -c %s "$T/l1.png"); s9=$(stat -c %s "$T/l9.png")
[ "$s0" -gt $((64 * 48 * 3)) ] && [ "$s9" -lt "$s0" ] && [ "$s1" -lt "$s0" ] &&
    ok "--png-level sizes: 0 $s0, 1 $s1, 9 $s9 bytes" || bad "--png-level sizes: 0 $s0, 1 $s1, 9 $s9 bytes"
"${G[@]}" --size 64x48 --png-level 10 -o "$T/l10.png" 2>"$T/e"
check "--png-level 10: usage error" 2 $?
[ ! -e "$T/l10.png" ] && ok "--png-level 10: no file" || bad "--png-level 10 left a file"
exit $fail
