#!/bin/bash
# The GNU parallel recipe of scripts/batch/README.md on the CPU path: a
# gsrender orbit in 4 parts, --jobs 2 with the job slot {%} picking the GPU
# (CUDA_VISIBLE_DEVICES={%}-1), joined, equal to a single run. Skips (77)
# where GNU parallel is not installed; GT_PARALLEL names another one (e.g.
# unpacked from the Debian package with dpkg -x).
#   cli_parallel.sh GSRENDER
set -u
GS=${1:?usage: cli_parallel.sh GSRENDER}
PAR=${GT_PARALLEL:-parallel}
if ! command -v "$PAR" >/dev/null || ! "$PAR" --version 2>/dev/null | grep -q '^GNU parallel'; then
    echo "SKIP: GNU parallel is not installed (apt-get install parallel, or GT_PARALLEL=/path/to/parallel)"
    exit 77
fi
B=$GT_SOURCE_DIR/scripts/batch
TD=$GT_TESTDATA
. "$(dirname "$0")/../lib/checks.sh"
"$GS" --device cpu -q "$TD/gs/scene.ply" --orbit 10 --size 32x24 -o "$T/whole.y4m" || bad "single run"
mkdir "$T/parts"
export B T GS TD
# shellcheck disable=SC2016 # expanded by parallel's job shell
seq 0 3 | "$PAR" --will-cite --jobs 2 --halt now,fail=1 \
    'CUDA_VISIBLE_DEVICES=$(({%} - 1)) "$B/run-slice" --total 10 --parts 4 --index {} --out "$T/parts" -- "$GS" --device cpu -q "$TD/gs/scene.ply" --orbit 10 --size 32x24' \
    2>"$T/e"
rc=$?
[ $rc = 0 ] && ok "parallel --jobs 2, 4 parts" || bad "parallel: exit $rc ($(cat "$T/e"))"
grep -q "CUDA_VISIBLE_DEVICES=0)" "$T/e" && grep -q "CUDA_VISIBLE_DEVICES=1)" "$T/e" && ok "slots 1 and 2 -> GPUs 0 and 1" ||
    bad "GPUs of the jobs: $(cat "$T/e")"
if grep -q "CUDA_VISIBLE_DEVICES=[^01]" "$T/e"; then bad "a job outside GPUs 0..1: $(cat "$T/e")"; fi
"$B/join-parts" -o "$T/joined.y4m" "$T"/parts/part-*.y4m || bad "join"
cmp -s "$T/joined.y4m" "$T/whole.y4m" && ok "parallel parts joined = the single run" || bad "joined parts differ"
exit $fail
