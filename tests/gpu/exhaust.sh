#!/usr/bin/env bash
# GPU memory running out in the middle of a job, for every program.
#
# For each job below (a small but real run of one program, see jobs.sh) the
# test runs it once with GT_COUNT_DEVICE_ALLOC=1 to learn how many GPU
# allocations it makes (C), then once for each N = 1 .. C with
# GT_FAIL_DEVICE_ALLOC=N, which makes allocation N fail as cudaMalloc (or
# cudaMallocHost) does when memory is exhausted. Every such run must
#   - exit 4;
#   - print one error line naming what did not fit and where:
#       PROG: error: out of GPU memory: B bytes (X MiB) for WHAT (FILE:LINE;
#       allocation N of the run, failed by GT_FAIL_DEVICE_ALLOC=N)
#     ("out of pinned host memory" for a pinned buffer); mcmesh adds the
#     --max-gpu-mem to retry with (z-slabs of half the planes), which is then
#     tried once and must give the same mesh; gsrender adds what its memory
#     grows with (the scene's Gaussians, the view's size);
#   - leave its output directory empty: no output, no temporary file;
#   - free what it took: the count printed at exit says "held at exit: 0
#     bytes in 0 device blocks, 0 pinned blocks" (everything allocated
#     through libcore), and with GT_SANITIZE=1 compute-sanitizer's memcheck
#     with --leak-check full finds nothing.
# N = C + 1 must succeed with the same count (the count is stable).
#
# Environment:
#   GT_FAIL_DEVICE_ALLOC=N   fail the N-th GPU allocation of a run (1, 2, ...;
#                            device and pinned host allocations share one
#                            count); set by this test for each run
#   GT_COUNT_DEVICE_ALLOC=1  print "PROG: GPU allocations: C (D device, P
#                            pinned host); held at exit: ..." at exit; set by
#                            this test
#   GT_SANITIZE=1            run every program under compute-sanitizer
#                            --tool memcheck --leak-check full --error-exitcode 99
#   GT_EXHAUST_JOBS="a b"    only these jobs (default: all of the list below)
#   GT_EXHAUST_STEP=K        N = 1, 1+K, 1+2K, ... and C (default 1: every N)
#   GT_EXHAUST_PARALLEL=P    jobs swept at the same time (default 4; 8 under
#                            GT_SANITIZE=1)
# Skips (77) without a GPU.
#
# usage: exhaust.sh DEVICE_PROBE GSRENDER YUVSTITCH SPARSESOLVE POISSONREC MCMESH STPSFIT
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/jobs.sh"
gt_start small "$@"

all_jobs=(gsrender gsrender-view yuvstitch yuvstitch-feather sparsesolve sparsesolve-dia sparsesolve-richardson
          poissonrec poissonrec-density mcmesh mcmesh-slabs stpsfit stpsfit-apply stpsfit-volume)
read -r -a jobs <<<"${GT_EXHAUST_JOBS:-${all_jobs[*]}}"
step=${GT_EXHAUST_STEP:-1}
par=${GT_EXHAUST_PARALLEL:-$([ "${GT_SANITIZE:-0}" = 1 ] && echo 8 || echo 4)}
mkdir -p "$T/res" "$T/log"

held_re='held at exit: 0 bytes in 0 device blocks, 0 pinned blocks$'
mc_hint='; retry with --max-gpu-mem [0-9]+[KM] \(z-slabs of [0-9]+ planes instead of [0-9]+\), or --device cpu$|; z-slabs of one plane .* no --max-gpu-mem helps'
gs_hint="; (the scene's [0-9]+ Gaussians \(SH degree [0-3]\) must fit|a [0-9]+x[0-9]+ view needs memory)"

# the count line of a run's stderr: "C" (or "" when absent)
count_of() { sed -n "s/^$1: GPU allocations: \([0-9]*\) .*/\1/p" "$2" | tail -1; }

sweep() {
  local job=$1 out=$T/res/$1.log fails=0
  exec >"$out" 2>&1
  gt_job "$job" || { echo "FAIL $job: unknown"; return 1; }
  local prog=$JOB_PROG cmd=("${GT_BIN[$JOB_PROG]}" "${JOB_ARGS[@]}")
  local d=$T/run/$job ref=$T/ref/$job log=$T/log/$job
  mkdir -p "$d" "$ref"
  bad() { echo "FAIL $job $*"; fails=$((fails + 1)); }

  # 1. the clean run: its count and its outputs
  (cd "$d" && GT_COUNT_DEVICE_ALLOC=1 gt_run "$log.count" "${cmd[@]}")
  local rc=$? v
  v=$(gt_sanitizer_verdict "$log.count" $rc)
  [ -n "$v" ] && bad "clean run: $v"
  local C
  C=$(count_of "$prog" "$log.count.err")
  if [ $rc -ne 0 ] || [ -z "$C" ] || [ ! -s "$d/$JOB_OUT" ]; then
    bad "clean run: exit $rc, count '${C}', output $(ls "$d" | tr '\n' ' ')"
    sed 's/^/      /' "$log.count.err" | head -20
    echo "RESULT $job 0 $fails"
    return 1
  fi
  grep -q "$held_re" "$log.count.err" || bad "clean run holds GPU memory at exit: $(grep 'GPU allocations' "$log.count.err")"
  mv "$d"/* "$ref/"
  echo "ok   $job: $C GPU allocations in a clean run ($(grep "GPU allocations" "$log.count.err" | sed 's/.*(\(.*\)).*held.*/\1/'))"

  # 2. allocation N fails, N = 1 .. C
  local n tried=0 retried=0
  local re="^$prog: error: out of (GPU|pinned host) memory: [0-9]+ bytes \([0-9.]+ [KMG]iB\) for .+ \([A-Za-z0-9_./+-]+\.(cu|c):[0-9]+; allocation %N% of the run, failed by GT_FAIL_DEVICE_ALLOC=%N%\)"
  local ns
  ns=$(seq 1 "$step" "$C")
  [ "$(echo "$ns" | tail -1)" = "$C" ] || ns="$ns $C"
  for n in $ns; do
    tried=$((tried + 1))
    (cd "$d" && GT_FAIL_DEVICE_ALLOC=$n GT_COUNT_DEVICE_ALLOC=1 gt_run "$log.$n" "${cmd[@]}")
    rc=$?
    local e errs line
    e="$log.$n.err"
    errs=$(grep -c "^$prog: error: " "$e")
    line=$(grep -m1 "^$prog: error: " "$e")
    local want=${re//%N%/$n}
    if [ $rc -ne 4 ]; then
      bad "N=$n: exit $rc, expected 4: $(head -c 400 "$e")"
    elif [ "$errs" != 1 ]; then
      bad "N=$n: $errs error lines: $(head -c 400 "$e")"
    elif ! [[ $line =~ $want ]]; then
      bad "N=$n: message does not name what did not fit: $line"
    fi
    case $prog in
    mcmesh) [[ $line =~ $mc_hint ]] || bad "N=$n: no --max-gpu-mem advice: $line" ;;
    gsrender) [[ $line =~ $gs_hint ]] || bad "N=$n: no advice on what the memory grows with: $line" ;;
    esac
    if [ -n "$(ls -A "$d")" ]; then
      bad "N=$n: left files behind: $(ls -A "$d" | tr '\n' ' ')"
      rm -rf "${d:?}"/* "$d"/.[!.]* 2>/dev/null
    fi
    grep -q "$held_re" "$e" || bad "N=$n: GPU memory held at exit: $(grep 'GPU allocations' "$e" || echo 'no allocation count printed')"
    v=$(gt_sanitizer_verdict "$log.$n" $rc)
    [ -n "$v" ] && bad "N=$n: $v"
    # mcmesh's advice, taken once: the suggested budget gives the same mesh
    if [ $prog = mcmesh ] && [ $retried = 0 ] && [[ $line =~ retry\ with\ --max-gpu-mem\ ([0-9]+[KM]) ]]; then
      retried=1
      local budget=${BASH_REMATCH[1]} args=() skip=0 a
      for a in "${cmd[@]}"; do
        if [ $skip = 1 ]; then skip=0; continue; fi
        if [ "$a" = --max-gpu-mem ]; then skip=1; continue; fi
        args+=("$a")
      done
      (cd "$d" && gt_run "$log.retry" "${args[@]}" --max-gpu-mem "$budget")
      rc=$?
      if [ $rc -ne 0 ] || ! cmp -s "$d/$JOB_OUT" "$ref/$JOB_OUT"; then
        bad "N=$n: the advised --max-gpu-mem $budget: exit $rc, mesh $(cmp "$d/$JOB_OUT" "$ref/$JOB_OUT" 2>&1)"
      else
        echo "ok   $job: the advised --max-gpu-mem $budget gives the same mesh"
      fi
      v=$(gt_sanitizer_verdict "$log.retry" $rc)
      [ -n "$v" ] && bad "retry: $v"
      rm -rf "${d:?}"/*
    fi
  done

  # 3. past the last allocation nothing fails, and the count is the same
  (cd "$d" && GT_FAIL_DEVICE_ALLOC=$((C + 1)) GT_COUNT_DEVICE_ALLOC=1 gt_run "$log.past" "${cmd[@]}")
  rc=$?
  local C2
  C2=$(count_of "$prog" "$log.past.err")
  if [ $rc -ne 0 ] || [ "$C2" != "$C" ] || [ ! -s "$d/$JOB_OUT" ]; then
    bad "N=$((C + 1)) (past the last): exit $rc, count $C2 (clean run: $C), output $(ls "$d" | tr '\n' ' ')"
  fi
  v=$(gt_sanitizer_verdict "$log.past" $rc)
  [ -n "$v" ] && bad "N=$((C + 1)): $v"
  [ $fails = 0 ] && echo "ok   $job: allocations 1..$C failed one at a time ($tried runs): exit 4, message, no files, nothing held"
  echo "RESULT $job $tried $fails"
  return 0
}

running=0
for job in "${jobs[@]}"; do
  sweep "$job" &
  running=$((running + 1))
  if [ $running -ge "$par" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

fail=0 total=0
for job in "${jobs[@]}"; do
  if [ ! -f "$T/res/$job.log" ]; then echo "FAIL $job: no result"; fail=1; continue; fi
  grep -v '^RESULT ' "$T/res/$job.log"
  r=$(grep '^RESULT ' "$T/res/$job.log")
  [ -z "$r" ] && { echo "FAIL $job: the sweep did not finish"; fail=1; continue; }
  set -- $r
  total=$((total + $3))
  [ "$4" = 0 ] || fail=1
done
echo "exhaust: ${#jobs[@]} jobs, $total runs with an allocation failed$([ "${GT_SANITIZE:-0}" = 1 ] && echo ', under compute-sanitizer memcheck')"
exit $fail
