#!/bin/bash
# scripts/batch/gpu-hold: the command's exit status, output and signals pass
# through; usage errors exit 2; a command that cannot run exits 127. Where
# the driver can be initialised (the GPU machine), also: it says it holds,
# and --serve holds until SIGTERM and then exits 0. With --gpu the test needs
# that (77 without a GPU driver); without it, a CPU machine's warning is
# checked instead.
#   cli_gpu_hold.sh [--gpu]
set -u
H=$GT_SOURCE_DIR/scripts/batch/gpu-hold
. "$(dirname "$0")/../lib/checks.sh"
"$H" true 2>"$T/e"
check "a command that succeeds" 0 $?
"$H" sh -c 'echo out; echo err >&2; exit 3' >"$T/o" 2>"$T/e"
check "the command's status" 3 $?
has "the command's stdout" "$T/o" "out"
has "the command's stderr" "$T/e" "err"
"$H" -q sh -c 'kill -TERM $$' 2>"$T/e"
check "a command ended by SIGTERM: 128 + 15" 143 $?
"$H" 2>"$T/e"
check "no command" 2 $?
has "no command: says so" "$T/e" "gpu-hold: error: no COMMAND"
"$H" --bogus true 2>"$T/e"
check "unknown option" 2 $?
"$H" --serve true 2>"$T/e"
check "--serve with a command" 2 $?
"$H" "$T/none" 2>"$T/e"
check "a command that cannot run" 127 $?
has "cannot run: says so" "$T/e" "gpu-hold: error: cannot run"
"$H" true 2>"$T/e"
if grep -q "^gpu-hold: holding" "$T/e"; then
    ok "holds the GPUs: $(head -c 200 "$T/e")"
    "$H" --serve 2>"$T/s" &
    pid=$!
    for _ in $(seq 50); do grep -q holding "$T/s" && break; sleep 0.1; done
    has "--serve says it holds" "$T/s" "holding"
    kill -0 $pid 2>/dev/null && ok "--serve keeps running" || bad "--serve ended by itself"
    kill -TERM $pid
    wait $pid
    check "--serve ends with SIGTERM, exit 0" 0 $?
elif [ "${1:-}" = --gpu ]; then
    echo "SKIP: the GPU driver could not be initialised here: $(head -c 300 "$T/e")"
    exit 77
else
    has "no driver: a warning, the command still ran" "$T/e" "gpu-hold: warning: not holding the GPUs"
    "$H" --serve 2>"$T/e"
    check "no driver: --serve exits 1" 1 $?
fi
exit $fail
