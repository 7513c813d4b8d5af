#!/bin/bash
# The recipes of scripts/batch as a user runs them, on the CPU path: a
# gsrender orbit (testdata/gs) and a yuvstitch stream cut into parts by
# slurm-array.sh (each array task run by hand with SLURM_ARRAY_TASK_ID set)
# and by xargs-gpus, joined by join: equal to a single run byte for byte.
# Then join's refusals (headers that differ, Y4M mixed with raw) and the
# scripts' usage errors.
#   cli_batch.sh GSRENDER YUVSTITCH
set -u
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
GS=${1:?usage: cli_batch.sh GSRENDER YUVSTITCH}
YS=${2:?usage: cli_batch.sh GSRENDER YUVSTITCH}
B=$GT_SOURCE_DIR/scripts/batch
TD=$GT_TESTDATA
. "$(dirname "$0")/../lib/checks.sh"
GSRUN=("$GS" --device cpu -q "$TD/gs/scene.ply" --orbit 10 --size 32x24)

# --- gsrender: the single run, then 4 Slurm array tasks (10 frames: 2, 3, 2, 3)
"${GSRUN[@]}" -o "$T/gs-whole.y4m" 2>"$T/e"; check "gsrender single run" 0 $?
mkdir "$T/slurm"
for i in 0 1 2 3; do
    SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=4 "$B/slurm-array.sh" --total 10 --out "$T/slurm" \
        -- "${GSRUN[@]}" 2>"$T/e"
    check "slurm-array.sh task $i" 0 $?
    has "slurm-array.sh task $i: its slice" "$T/e" "part $i of 4: frames $((i * 10 / 4))..$(((i + 1) * 10 / 4 - 1))"
done
names=$(cd "$T/slurm" && echo part-*)
[ "$names" = "part-0000.y4m part-0001.y4m part-0002.y4m part-0003.y4m" ] && ok "four parts" || bad "parts: $names"
"$B/join-parts" -o "$T/gs-slurm.y4m" "$T"/slurm/part-*.y4m 2>"$T/e"; check "join the Slurm parts" 0 $?
same "gsrender: Slurm parts joined = the single run" "$T/gs-slurm.y4m" "$T/gs-whole.y4m"
# an array that does not start at 0 (sbatch --array=5-8): the index is from SLURM_ARRAY_TASK_MIN
mkdir "$T/slurm5"
for i in 5 6 7 8; do
    SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=5 SLURM_ARRAY_TASK_COUNT=4 "$B/slurm-array.sh" --total 10 \
        --out "$T/slurm5" -- "${GSRUN[@]}" 2>"$T/e" || bad "array 5-8, task $i: $(cat "$T/e")"
done
"$B/join-parts" -o - "$T"/slurm5/part-*.y4m >"$T/gs-slurm5.y4m" 2>"$T/e"; check "join to stdout" 0 $?
same "array 5-8 joined = the single run" "$T/gs-slurm5.y4m" "$T/gs-whole.y4m"

# --- gsrender with xargs-gpus: 3 parts on 2 "GPUs" (the CPU path ignores them)
mkdir "$T/xargs"
"$B/xargs-gpus" --total 10 --out "$T/xargs" --gpus 2 --parts 3 --join "$T/gs-xargs.y4m" -- "${GSRUN[@]}" 2>"$T/e"
check "xargs-gpus --gpus 2 --parts 3 --join" 0 $?
same "gsrender: xargs parts joined = the single run" "$T/gs-xargs.y4m" "$T/gs-whole.y4m"
has "xargs-gpus: a job on GPU 0" "$T/e" "(CUDA_VISIBLE_DEVICES=0)"
has "xargs-gpus: a job on GPU 1" "$T/e" "(CUDA_VISIBLE_DEVICES=1)"
# the one-line recipe of the README (xargs -P alone)
mkdir "$T/xp"
# shellcheck disable=SC2016 # $0.., $SLOT: the job shell's
seq 0 3 | xargs -P 2 -I{} --process-slot-var=SLOT sh -c 'CUDA_VISIBLE_DEVICES=$SLOT "$0" --total 10 --parts 4 --index {} --out "$1" -- "$2" --device cpu -q "$3" --orbit 10 --size 32x24' \
    "$B/run-slice" "$T/xp" "$GS" "$TD/gs/scene.ply" 2>"$T/e"
check "xargs -P recipe" 0 $?
"$B/join-parts" -o "$T/gs-xp.y4m" "$T"/xp/part-*.y4m 2>"$T/e"
same "xargs -P recipe joined = the single run" "$T/gs-xp.y4m" "$T/gs-whole.y4m"

# --- yuvstitch: two 128x96 Y4M cameras of 9 frames, Y4M and raw outputs
python3 - "$T" <<'PY'
import sys
d, w, h = sys.argv[1], 128, 96
for cam in (1, 2):
    s = bytearray(b'YUV4MPEG2 W128 H96 F25:1 Ip A1:1 C420jpeg\n')
    for f in range(9):
        s += b'FRAME\n'
        s += bytes((x * 3 + y * (cam + 2) + f * 17 + cam * 40) % 219 + 16 for y in range(h) for x in range(w))
        for c in (1, 2):
            s += bytes((x * (c + 1) + y * 2 + f * 9 + cam * 25) % 224 + 16 for y in range(h // 2) for x in range(w // 2))
    open(f'{d}/c{cam}.y4m', 'wb').write(s)
PY
printf 'panorama 224 104\ncamera\nH 1 0 0 0 1 4 0 0 1\ncamera\nH 1.0 0.02 100 0.01 1.0 2 0.0002 0 1\ngain 1.05\n' >"$T/rig.txt"
YSRUN=("$YS" --device cpu -q --rig "$T/rig.txt" "$T/c1.y4m" "$T/c2.y4m")
for ext in y4m yuv; do
    "${YSRUN[@]}" -o "$T/ys-whole.$ext" 2>"$T/e"; check "yuvstitch single run ($ext)" 0 $?
    mkdir "$T/ys-$ext"
    for i in 0 1 2; do
        SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=3 "$B/slurm-array.sh" --total 9 --out "$T/ys-$ext" \
            --ext $ext -- "${YSRUN[@]}" 2>"$T/e"
        check "yuvstitch slurm-array.sh task $i ($ext)" 0 $?
    done
    "$B/join-parts" -o "$T/ys-joined.$ext" "$T/ys-$ext"/part-*.$ext 2>"$T/e"; check "join yuvstitch parts ($ext)" 0 $?
    same "yuvstitch: parts joined = the single run ($ext)" "$T/ys-joined.$ext" "$T/ys-whole.$ext"
done
mkdir "$T/ys-xargs"
"$B/xargs-gpus" --total 9 --out "$T/ys-xargs" --gpus 0,1 --join "$T/ys-xargs.y4m" -- "${YSRUN[@]}" 2>"$T/e"
check "yuvstitch xargs-gpus --gpus 0,1" 0 $?
same "yuvstitch: xargs parts joined = the single run" "$T/ys-xargs.y4m" "$T/ys-whole.y4m"

# --- join refuses parts that are not of one run; no output then
err() { # name rc pattern args...
    local name=$1 rc=$2 pat=$3
    shift 3
    rm -f "$T/bad.out"
    "$@" 2>"$T/e"
    check "$name" "$rc" $?
    has "$name: message" "$T/e" "$pat"
    [ -e "$T/bad.out" ] && bad "$name: output left" || ok "$name: no output"
}
sed '1s/W224/W226/' "$T/ys-y4m/part-0001.y4m" >"$T/other.y4m"
err "join: headers differ" 3 "'$T/other.y4m' has the stream header 'YUV4MPEG2 W226" \
    "$B/join-parts" -o "$T/bad.out" "$T/ys-y4m/part-0000.y4m" "$T/other.y4m"
err "join: Y4M then raw" 3 "'$T/ys-yuv/part-0000.yuv' is raw but '$T/ys-y4m/part-0000.y4m' is Y4M" \
    "$B/join-parts" -o "$T/bad.out" "$T/ys-y4m/part-0000.y4m" "$T/ys-yuv/part-0000.yuv"
err "join: raw then Y4M" 3 "is Y4M but" "$B/join-parts" -o "$T/bad.out" "$T/ys-yuv/part-0000.yuv" "$T/ys-y4m/part-0000.y4m"
err "join: a missing part" 1 "cannot read part '$T/nope.y4m'" "$B/join-parts" -o "$T/bad.out" "$T/ys-y4m/part-0000.y4m" "$T/nope.y4m"
err "join: no -o" 2 "missing -o OUT" "$B/join-parts" "$T/ys-y4m/part-0000.y4m"
# usage errors of the scripts
err "slurm-array.sh outside Slurm" 2 "SLURM_ARRAY_TASK_ID is not set" \
    "$B/slurm-array.sh" --total 10 --out "$T" -- "${GSRUN[@]}"
err "run-slice: index past the parts" 2 "--index '4': give a part number 0..3" \
    "$B/run-slice" --total 10 --parts 4 --index 4 --out "$T" -- "${GSRUN[@]}"
err "run-slice: another program" 2 "PROGRAM 'mcmesh': give gsrender or yuvstitch" \
    "$B/run-slice" --total 10 --parts 4 --index 0 --out "$T" -- mcmesh x
err "xargs-gpus: no --out directory" 2 "--out '$T/none': no such directory" \
    "$B/xargs-gpus" --total 10 --out "$T/none" --gpus 2 -- "${GSRUN[@]}"
# more parts than frames: the empty parts write nothing, the join is still the whole
mkdir "$T/many"
"$B/xargs-gpus" --total 10 --out "$T/many" --gpus 3 --parts 12 --join "$T/gs-many.y4m" -- "${GSRUN[@]}" 2>"$T/e"
check "12 parts of 10 frames" 0 $?
[ "$(find "$T/many" -name 'part-*' | wc -l)" = 10 ] && ok "12 parts of 10 frames: 10 files" ||
    bad "12 parts of 10 frames: $(ls "$T/many")"
same "12 parts joined = the single run" "$T/gs-many.y4m" "$T/gs-whole.y4m"
left=$(find "$T" -name '*.tmp*')
[ -z "$left" ] && ok "no temporary files left" || bad "temporary files left: $left"
exit $fail
