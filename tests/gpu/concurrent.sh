#!/usr/bin/env bash
# The six programs at once on one GPU: each output must equal the output of
# the same job run alone.
#
# Each job (jobs.sh, the "large" inputs: long enough to overlap) first runs
# alone twice; if the two outputs differ, a third time. Then all six start
# together, GT_CONCURRENT_ROUNDS times (default 2), and every run must exit
# 0 with an output that compare.py accepts against the solo runs:
#   - byte-identical, where the solo runs were byte-identical (the program is
#     reproducible alone; when a concurrent output differs from identical
#     solo runs, the job runs alone twice more before that counts as a
#     failure, so that a program that is identical alone only by chance is
#     not failed for it);
#   - otherwise within 4 times the largest solo-vs-solo difference (poissonrec:
#     its GPU solve sums with floating-point atomics, so its meshes differ in
#     the last bits from run to run even alone; the test says so and prints
#     both differences). poissonrec runs --solver cg here (each level to a
#     relative residual of 1e-7): the default cascadic solver stops after 24
#     iterations per level, where the atomics' rounding moves the
#     coefficients by up to 1e-3 of the largest from run to run
#     (scripts/bench/RESULTS.md), and a tolerance that wide would hide real
#     damage.
# The report gives, for each round, how long all six were running at the
# same time; a round in which they never all ran together fails (it would
# test nothing).
#
# Environment:
#   GT_SANITIZE=1            run every program (alone and together) under
#                            compute-sanitizer --tool memcheck --leak-check
#                            full --error-exitcode 99; any error fails the
#                            test. The jobs are made smaller (memcheck slows
#                            kernels down many times).
#   GT_CONCURRENT_ROUNDS=R   rounds of six at once (default 2)
# Skips (77) without a GPU.
#
# usage: concurrent.sh DEVICE_PROBE GSRENDER YUVSTITCH SPARSESOLVE POISSONREC MCMESH STPSFIT
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/jobs.sh"
scale=large
[ "${GT_SANITIZE:-0}" = 1 ] && scale=small
gt_start $scale "$@"
jobs=(gsrender yuvstitch sparsesolve poissonrec mcmesh stpsfit)
rounds=${GT_CONCURRENT_ROUNDS:-2}
fail=0
bad() { echo "FAIL $*"; fail=1; }

# run_one JOB DIR: the job in DIR (fresh), logs under $T/log; its status
run_one() {
  gt_job "$1"
  rm -rf "$2"
  mkdir -p "$2" "$T/log"
  local log=$T/log/$(echo "$2" | tr / _)
  local t0 t1 rc
  t0=$(date +%s.%N)
  (cd "$2" && gt_run "$log" "${GT_BIN[$JOB_PROG]}" "${JOB_ARGS[@]}")
  rc=$?
  t1=$(date +%s.%N)
  echo "$t0 $t1" >"$2.time"
  if [ $rc -ne 0 ]; then
    echo "FAIL $1 in $2: exit $rc: $(head -c 600 "$log.err")"
  fi
  local v
  v=$(gt_sanitizer_verdict "$log" $rc)
  [ -n "$v" ] && echo "FAIL $1 in $2: $v"
  return $rc
}

# alone
for job in "${jobs[@]}"; do
  gt_job "$job"
  for k in 1 2; do run_one "$job" "$T/solo$k/$job" || fail=1; done
  if ! cmp -s "$T/solo1/$job/$JOB_OUT" "$T/solo2/$job/$JOB_OUT"; then
    run_one "$job" "$T/solo3/$job" || fail=1
  fi
  s=$(awk '{ printf "%.2f", $2 - $1 }' "$T/solo1/$job.time")
  echo "     $job alone: ${s} s"
done
[ $fail = 0 ] || { echo "the solo runs failed: nothing to compare"; exit 1; }

# together
for ((r = 1; r <= rounds; r++)); do
  pids=()
  for job in "${jobs[@]}"; do
    run_one "$job" "$T/conc$r/$job" >"$T/conc$r.$job.msg" &
    pids+=($!)
  done
  i=0
  for job in "${jobs[@]}"; do
    wait "${pids[$i]}" || fail=1
    [ -s "$T/conc$r.$job.msg" ] && { cat "$T/conc$r.$job.msg"; fail=1; }
    i=$((i + 1))
  done
  # all six running together: from the last start to the first end
  overlap=$(cat "$T"/conc$r/*.time | awk 'NR == 1 || $1 > s { s = $1 } NR == 1 || $2 < e { e = $2 } END { printf "%.3f", e - s }')
  if awk -v o="$overlap" 'BEGIN { exit !(o > 0) }'; then
    echo "     round $r: all six ran together for $overlap s"
  else
    bad "round $r: the six never ran at the same time (overlap $overlap s)"
  fi
  for job in "${jobs[@]}"; do
    gt_job "$job"
    solos=()
    for k in 1 2 3 4 5; do [ -f "$T/solo$k/$job/$JOB_OUT" ] && solos+=("$T/solo$k/$job/$JOB_OUT"); done
    if [ ! -f "$T/conc$r/$job/$JOB_OUT" ]; then
      bad "$job round $r: no output"
      continue
    fi
    python3 "$here/compare.py" "$job (round $r)" "$T/conc$r/$job/$JOB_OUT" "${solos[@]}"
    rc=$?
    if [ $rc = 3 ]; then
      # identical alone so far: two more solo runs tell whether it really is
      for k in 4 5; do
        [ -f "$T/solo$k/$job/$JOB_OUT" ] || run_one "$job" "$T/solo$k/$job" || fail=1
        [ -f "$T/solo$k/$job/$JOB_OUT" ] && solos+=("$T/solo$k/$job/$JOB_OUT")
      done
      python3 "$here/compare.py" "$job (round $r)" "$T/conc$r/$job/$JOB_OUT" "${solos[@]}"
      rc=$?
      [ $rc = 3 ] && echo "FAIL $job (round $r): ${#solos[@]} solo runs are byte-identical, the concurrent output is not"
    fi
    [ $rc = 0 ] || fail=1
  done
done
echo "concurrent: ${#jobs[@]} programs, $rounds rounds$([ "${GT_SANITIZE:-0}" = 1 ] && echo ', under compute-sanitizer memcheck')"
exit $fail
