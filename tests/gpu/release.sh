#!/bin/bash
# A command ends when it returns (lib/common/release.h), in all six
# programs, each running one small real job (tests/gpu/jobs.sh):
#  - by default, once the command has returned no process of ours holds a
#    /dev/nvidia* file (every /proc/PID/fd of a process carrying this run's
#    tag in its environment is scanned right after the return: a helper
#    shares the program's memory, environment included), and with
#    GT_STARTUP_TRACE=1 the program says nothing of a hand-off;
#  - with GT_DEFER_RELEASE=1 (opt-in) the program says it handed the release
#    to a helper (but under compute-sanitizer: GT_SANITIZE=1 runs the
#    programs under it, and then no hand-off is expected), the status and the
#    output are those of the default exit (byte for byte, but poissonrec,
#    whose GPU sums use atomics: a mesh either way), a pipeline's reader gets
#    the whole output, and every helper has exited a few seconds later.
# The hand-off is never taken on a GPU whose compute mode is not Default
# (tests/common/test_release.c checks that choice; the mode of the GPU here
# is printed). Skips (77) without a GPU.
#   release.sh PROBE PROG...
set -u
# shellcheck source=tests/gpu/jobs.sh
. "$(dirname "$0")/jobs.sh"
gt_start small "$@"
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
TAG=GT_RELEASE_TEST_TAG=$$.$RANDOM
mode=$(nvidia-smi --query-gpu=compute_mode --format=csv,noheader -i 0 2>/dev/null | head -1)
echo "GPU 0 compute mode: ${mode:-unknown (no nvidia-smi)}"
deferred=handed
[ "${GT_SANITIZE:-0}" = 1 ] && deferred=none
[ -n "$mode" ] && [ "$mode" != Default ] && deferred=none

# "PID:COMM:FILE" for each /dev/nvidia* file held by a process of this run
held_by_ours() {
  local p f
  for p in /proc/[0-9]*; do
    tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qx "$TAG" || continue
    for f in "$p"/fd/*; do
      case $(readlink "$f" 2>/dev/null) in
        /dev/nvidia*) echo "${p#/proc/}:$(cat "$p/comm" 2>/dev/null):$(readlink "$f")" ;;
      esac
    done
  done
}
live_helpers() {
  local p n=0
  for p in /proc/[0-9]*; do
    [ "$(cat "$p/comm" 2>/dev/null)" = gt-gpu-release ] || continue
    tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qx "$TAG" || continue
    # a zombie has released its files; only its reaping is left
    [ "$(sed 's/.*) \(.\).*/\1/' "$p/stat" 2>/dev/null)" = Z ] || n=$((n + 1))
  done
  echo $n
}

for job in gsrender yuvstitch sparsesolve poissonrec mcmesh stpsfit; do
  gt_job $job || { fail=1; continue; }
  for how in default deferred; do
    d=$T/$job.$how
    mkdir -p "$d"
    envs=("$TAG" GT_STARTUP_TRACE=1)
    [ $how = deferred ] && envs+=(GT_DEFER_RELEASE=1)
    (cd "$d" && gt_run "$d/log" env "${envs[@]}" "${GT_BIN[$JOB_PROG]}" "${JOB_ARGS[@]}")
    rc=$?
    held=$(held_by_ours)
    v=$(gt_sanitizer_verdict "$d/log" $rc)
    [ -z "$v" ] || bad "$job ($how): $v"
    [ $rc = 0 ] || { bad "$job ($how): exit $rc ($(head -c 300 "$d/log.err"))"; continue; }
    [ -s "$d/$JOB_OUT" ] || bad "$job ($how): no output $JOB_OUT"
    got=none
    grep -q "startup: .* exit: GPU release handed to a helper" "$d/log.err" && got=handed
    exp=none
    [ $how = deferred ] && exp=$deferred
    if [ $got = "$exp" ]; then ok "$job ($how): release $got"; else bad "$job ($how): release $got, expected $exp"; fi
    if [ $how = default ]; then
      if [ -z "$held" ]; then ok "$job: no process of ours holds the GPU once the command has returned"
      else bad "$job: after the command returned, held: $(echo $held)"; fi
    fi
  done
  if [ -s "$T/$job.default/$JOB_OUT" ] && [ -s "$T/$job.deferred/$JOB_OUT" ] && [ $job != poissonrec ]; then
    if cmp -s "$T/$job.default/$JOB_OUT" "$T/$job.deferred/$JOB_OUT"; then ok "$job: same output either way"
    else bad "$job: the outputs differ between the two exits"; fi
  fi
done
# a pipeline, deferred: the reader sees the end of the output when the program exits
gt_job stpsfit
args=()
for a in "${JOB_ARGS[@]}"; do if [ "$a" = "$JOB_OUT" ]; then args+=(-); else args+=("$a"); fi; done
env "$TAG" GT_DEFER_RELEASE=1 "${GT_BIN[stpsfit]}" "${args[@]}" | cat >"$T/piped.tps"
rc=${PIPESTATUS[0]}
if [ "$rc" = 0 ] && cmp -s "$T/piped.tps" "$T/stpsfit.default/$JOB_OUT"; then ok "stpsfit -o - | cat (deferred): the whole output"
else bad "stpsfit -o - | cat (deferred): exit $rc, $(stat -c %s "$T/piped.tps") bytes against $(stat -c %s "$T/stpsfit.default/$JOB_OUT")"; fi
for _ in $(seq 100); do [ "$(live_helpers)" = 0 ] && break; sleep 0.1; done
n=$(live_helpers)
if [ "$n" = 0 ]; then ok "every helper has exited"; else bad "$n gt-gpu-release helpers still running after 10 s"; fi
held=$(held_by_ours)
if [ -z "$held" ]; then ok "nothing of ours holds the GPU at the end"; else bad "held at the end: $(echo $held)"; fi
exit $fail
