#!/bin/bash
# --gpu N and CUDA_VISIBLE_DEVICES in all six programs, each running one
# small real job (tests/gpu/jobs.sh).
#   select.sh cli PROBE PROG...  (suite cli, any machine) --help names --gpu
#       and CUDA_VISIBLE_DEVICES, the man page has the DEVICE section (the
#       same text in all six); a bad --gpu is a usage error (2); with
#       GT_NO_GPU=1, --device cuda --gpu 1 is exit 4 saying why and writes
#       nothing, and auto --gpu 7 computes on the CPU with its notice.
#   select.sh gpu PROBE PROG...  (suite gpu; skips, 77, without a GPU)
#       --gpu 0 works; --gpu N with N = the number of GPUs is exit 4 naming N
#       and the count, under auto too; CUDA_VISIBLE_DEVICES=0 works and then
#       --gpu 1 is exit 4 (one GPU seen); CUDA_VISIBLE_DEVICES= (empty) falls
#       back to the CPU under auto and is exit 4 under --device cuda; with two
#       GPUs or more, --gpu 1 and CUDA_VISIBLE_DEVICES=1 work.
set -u
MODE=${1:?usage: select.sh cli|gpu PROBE PROG...}
shift
# shellcheck source=tests/gpu/jobs.sh
. "$(dirname "$0")/jobs.sh"
gt_jobs_init "$@"
if [ "$MODE" = gpu ]; then
    gt_require_gpu
elif [ "$MODE" != cli ]; then
    echo "FAIL: mode '$MODE': give cli or gpu"
    exit 1
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
gt_make_inputs "$T/in" small >/dev/null || { echo "FAIL: cannot make the inputs"; exit 1; }
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
# run NAME WANT_RC [VAR=VALUE...] -- OPTIONS...: the job of $prog with OPTIONS
# in a fresh folder; its stderr in $T/e
run() {
    local name=$1 want=$2
    shift 2
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    rm -rf "$T/w" && mkdir "$T/w"
    (cd "$T/w" && env "${envs[@]}" "${GT_BIN[$JOB_PROG]}" "${args[@]}" "$@" >"$T/o" 2>"$T/e")
    local rc=$?
    if [ "$rc" != "$want" ]; then bad "$prog: $name: exit $rc, want $want ($(head -c 400 "$T/e"))"; return 1; fi
    ok "$prog: $name"
}
has() { # name pattern
    if grep -qF -- "$2" "$T/e"; then ok "$prog: $1"; else bad "$prog: $1: '$2' not in: $(head -c 400 "$T/e")"; fi
}
output() { # name yes|no
    if [ -e "$T/w/$JOB_OUT" ]; then [ "$2" = yes ] && ok "$prog: $1: output" || bad "$prog: $1: an output was left"
    else [ "$2" = no ] && ok "$prog: $1: no output" || bad "$prog: $1: no output written"; fi
}

if [ "$MODE" = gpu ]; then
    n=0
    while [ $n -lt 64 ] && "$GT_PROBE" --device cuda --gpu $n >/dev/null 2>&1; do n=$((n + 1)); done
    echo "GPUs seen: $n (CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset})"
fi
for prog in gsrender yuvstitch sparsesolve poissonrec mcmesh stpsfit; do
    gt_job "$prog" || exit 1
    args=("${JOB_ARGS[@]:0:${#JOB_ARGS[@]}-3}" -q) # less jobs.sh's --device cuda -q
    [ "${JOB_ARGS[*]: -3}" = "--device cuda -q" ] || { bad "$prog: jobs.sh's options changed"; continue; }
    if [ "$MODE" = cli ]; then
        # the man page's DEVICE section: there, and the same text in all six
        man=${GT_SOURCE_DIR:-$(dirname "$0")/../..}/man/man1
        awk '/^\.SH DEVICE/ { on = 1; next } /^\.SH / { on = 0 } on' "$man/$prog.1" >"$T/dev.$prog"
        if [ ! -s "$T/dev.$prog" ]; then bad "$prog: no DEVICE section in $prog.1"
        elif ! grep -q CUDA_VISIBLE_DEVICES "$T/dev.$prog"; then bad "$prog: DEVICE does not say CUDA_VISIBLE_DEVICES"
        elif ! cmp -s "$T/dev.$prog" "$T/dev.gsrender"; then bad "$prog: DEVICE differs from gsrender.1's"
        else ok "$prog: man page DEVICE section"; fi
        "${GT_BIN[$prog]}" --help >"$T/e"
        has "--help: --gpu N" "--gpu N"
        has "--help: CUDA_VISIBLE_DEVICES" "CUDA_VISIBLE_DEVICES"
        run "--gpu x" 2 -- --gpu x && has "--gpu x: message" "--gpu"
        run "GT_NO_GPU=1 --device cuda --gpu 1" 4 GT_NO_GPU=1 -- --device cuda --gpu 1 &&
            has "GT_NO_GPU: message" "--device cuda: no CUDA GPU is available (GT_NO_GPU is set)"
        output "GT_NO_GPU=1 --device cuda" no
        args=("${args[@]:0:${#args[@]}-1}") # the notice is not silenced
        run "GT_NO_GPU=1 auto --gpu 7" 0 GT_NO_GPU=1 -- --gpu 7 && has "auto: the CPU notice" "computing on the CPU"
        output "GT_NO_GPU=1 auto --gpu 7" yes
        continue
    fi
    run "--device cuda --gpu 0" 0 -- --device cuda --gpu 0 && output "--gpu 0" yes
    run "--device cuda --gpu $n" 4 -- --device cuda --gpu "$n" &&
        has "--gpu $n: message" "--gpu $n: no such GPU (this machine has $n, numbered 0..$((n - 1))"
    output "--gpu $n" no
    run "auto --gpu $n" 4 -- --gpu "$n" && has "auto --gpu $n: message" "--gpu $n: no such GPU"
    run "CUDA_VISIBLE_DEVICES=0" 0 CUDA_VISIBLE_DEVICES=0 -- --device cuda && output "CUDA_VISIBLE_DEVICES=0" yes
    run "CUDA_VISIBLE_DEVICES=0 --gpu 1" 4 CUDA_VISIBLE_DEVICES=0 -- --device cuda --gpu 1 &&
        has "CUDA_VISIBLE_DEVICES=0 --gpu 1: message" "--gpu 1: no such GPU (this machine has 1, numbered 0..0; CUDA_VISIBLE_DEVICES='0')"
    run "CUDA_VISIBLE_DEVICES= --device cuda" 4 CUDA_VISIBLE_DEVICES= -- --device cuda &&
        has "CUDA_VISIBLE_DEVICES= --device cuda: message" "no CUDA GPU is available"
    output "CUDA_VISIBLE_DEVICES= --device cuda" no
    args=("${args[@]:0:${#args[@]}-1}") # the notice is not silenced
    run "CUDA_VISIBLE_DEVICES= auto" 0 CUDA_VISIBLE_DEVICES= -- &&
        has "CUDA_VISIBLE_DEVICES= auto: the CPU notice" "CUDA_VISIBLE_DEVICES=''); computing on the CPU"
    output "CUDA_VISIBLE_DEVICES= auto" yes
    if [ "$n" -ge 2 ]; then
        run "--gpu 1 of $n" 0 -- --device cuda --gpu 1 -q && output "--gpu 1" yes
        run "CUDA_VISIBLE_DEVICES=1" 0 CUDA_VISIBLE_DEVICES=1 -- --device cuda -q && output "CUDA_VISIBLE_DEVICES=1" yes
    fi
done
exit $fail
