#!/bin/bash
#SBATCH --job-name=gputools-slices
#SBATCH --array=0-3
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=4
#SBATCH --output=slice-%A_%a.log
# slurm-array.sh: one part of a gsrender orbit or a yuvstitch stream per task
# of a Slurm job array. Task SLURM_ARRAY_TASK_ID (less SLURM_ARRAY_TASK_MIN)
# of SLURM_ARRAY_TASK_COUNT renders its slice of the TOTAL frames into
# DIR/part-NNNN.EXT through scripts/batch/run-slice; Slurm's --gres=gpu:1
# sets CUDA_VISIBLE_DEVICES to the task's GPU, which the program sees as
# GPU 0. Join the parts when every task is done (scripts/batch/join-parts).
#
# usage: sbatch [--array=0-(P-1)] scripts/batch/slurm-array.sh --total N --out DIR
#               [--parts P] [--ext EXT] -- PROGRAM ARGS...
#   --parts  number of parts (default SLURM_ARRAY_TASK_COUNT, the array's size)
#   e.g. mkdir -p parts
#        job=$(sbatch --parsable --array=0-3 scripts/batch/slurm-array.sh --total 64 --out parts \
#                  -- gsrender scene.ply --orbit 64 --size 1920x1080)
#        sbatch --dependency=afterok:$job --wrap 'scripts/batch/join-parts -o orbit.y4m parts/part-*.y4m'
# Without Slurm (a test, or to redo one task): set the variables by hand,
#        SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=4 scripts/batch/slurm-array.sh --total 64 ...
# run-slice is found next to this script, else in $GT_BATCH_DIR, else in
# $SLURM_SUBMIT_DIR/scripts/batch (sbatch runs a copy of the script from its
# spool directory), else on PATH.
set -u
prog=slurm-array.sh
die() { echo "$prog: error: $*" >&2; exit 2; }
[ -n "${SLURM_ARRAY_TASK_ID:-}" ] ||
    die "SLURM_ARRAY_TASK_ID is not set: submit with sbatch --array=0-(P-1), or set it (and SLURM_ARRAY_TASK_COUNT) by hand"
[[ $SLURM_ARRAY_TASK_ID =~ ^[0-9]+$ ]] || die "SLURM_ARRAY_TASK_ID='$SLURM_ARRAY_TASK_ID': not a task number"
args=() parts=${SLURM_ARRAY_TASK_COUNT:-}
while [ $# -gt 0 ]; do
    case $1 in
        --parts) parts=${2-}; shift 2 || die "--parts needs a value" ;;
        --) break ;;
        *) args+=("$1"); shift ;;
    esac
done
[ -n "$parts" ] || die "the number of parts is unknown: set SLURM_ARRAY_TASK_COUNT or give --parts P"
index=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0}))
for d in "$(dirname "$0")" "${GT_BATCH_DIR:-}" "${SLURM_SUBMIT_DIR:-}/scripts/batch"; do
    if [ -n "$d" ] && [ -x "$d/run-slice" ]; then
        exec "$d/run-slice" --parts "$parts" --index "$index" "${args[@]}" "$@"
    fi
done
command -v run-slice >/dev/null || die "run-slice not found: set GT_BATCH_DIR to gputools' scripts/batch"
exec run-slice --parts "$parts" --index "$index" "${args[@]}" "$@"
