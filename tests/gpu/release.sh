#!/bin/bash
# The GPU's release handed to a helper at exit (lib/common/release.h), in all
# six programs, each running one small real job (tests/gpu/jobs.sh): with
# GT_STARTUP_TRACE=1 a program says it handed the release off (and not with
# GT_SYNC_EXIT=1, nor under compute-sanitizer: GT_SANITIZE=1 runs the
# programs under it, and then no hand-off is expected); the status and the
# output are those of the ordinary exit (byte for byte, but poissonrec, whose
# GPU sums use atomics: a mesh either way); a pipeline's reader gets the
# whole output; every helper has exited a few seconds later. Skips (77)
# without a GPU.
#   release.sh PROBE PROG...
set -u
# shellcheck source=tests/gpu/jobs.sh
. "$(dirname "$0")/jobs.sh"
gt_start small "$@"
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
want=handed
[ "${GT_SANITIZE:-0}" = 1 ] && want=none
live_helpers() {
  local p n=0
  for p in /proc/[0-9]*; do
    [ "$(cat "$p/comm" 2>/dev/null)" = gt-gpu-release ] || continue
    # a zombie has released its files; only its reaping is left
    [ "$(sed 's/.*) \(.\).*/\1/' "$p/stat" 2>/dev/null)" = Z ] || n=$((n + 1))
  done
  echo $n
}
for job in gsrender yuvstitch sparsesolve poissonrec mcmesh stpsfit; do
  gt_job $job || { fail=1; continue; }
  for mode in default sync; do
    d=$T/$job.$mode
    mkdir -p "$d"
    envs=(GT_STARTUP_TRACE=1)
    [ $mode = sync ] && envs+=(GT_SYNC_EXIT=1)
    (cd "$d" && gt_run "$d/log" env "${envs[@]}" "${GT_BIN[$JOB_PROG]}" "${JOB_ARGS[@]}")
    rc=$?
    v=$(gt_sanitizer_verdict "$d/log" $rc)
    [ -z "$v" ] || bad "$job ($mode): $v"
    [ $rc = 0 ] || { bad "$job ($mode): exit $rc ($(head -c 300 "$d/log.err"))"; continue; }
    [ -s "$d/$JOB_OUT" ] || bad "$job ($mode): no output $JOB_OUT"
    got=none
    grep -q "startup: .* exit: GPU release handed to a helper" "$d/log.err" && got=handed
    exp=$want
    [ $mode = sync ] && exp=none
    if [ $got = "$exp" ]; then ok "$job ($mode): release $got"; else bad "$job ($mode): release $got, expected $exp"; fi
  done
  if [ -s "$T/$job.default/$JOB_OUT" ] && [ -s "$T/$job.sync/$JOB_OUT" ] && [ $job != poissonrec ]; then
    if cmp -s "$T/$job.default/$JOB_OUT" "$T/$job.sync/$JOB_OUT"; then ok "$job: same output either way"
    else bad "$job: the outputs differ between the two exits"; fi
  fi
done
# a pipeline: the reader sees the end of the output when the program exits
gt_job stpsfit
args=()
for a in "${JOB_ARGS[@]}"; do if [ "$a" = "$JOB_OUT" ]; then args+=(-); else args+=("$a"); fi; done
"${GT_BIN[stpsfit]}" "${args[@]}" | cat >"$T/piped.tps"
rc=${PIPESTATUS[0]}
if [ "$rc" = 0 ] && cmp -s "$T/piped.tps" "$T/stpsfit.sync/$JOB_OUT"; then ok "stpsfit -o - | cat: the whole output"
else bad "stpsfit -o - | cat: exit $rc, $(stat -c %s "$T/piped.tps") bytes against $(stat -c %s "$T/stpsfit.sync/$JOB_OUT")"; fi
for _ in $(seq 100); do [ "$(live_helpers)" = 0 ] && break; sleep 0.1; done
n=$(live_helpers)
if [ "$n" = 0 ]; then ok "every helper has exited"; else bad "$n gt-gpu-release helpers still running after 10 s"; fi
exit $fail
