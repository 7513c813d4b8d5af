#!/usr/bin/env bash
# scripts/bench/wallab without a GPU: the table, the outputs' comparison,
# failures, usage errors, and that a gap starts only once the release helper
# of the command before has gone (a stand-in process named gt-gpu-release
# that lives 0.4 s after its command exits). Skips (77) without python3.
#   bench_wallab.sh SOURCE_ROOT
set -uo pipefail
src=$1
command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
W=$src/scripts/bench/wallab
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$tmp/out" 2>/dev/null; exit 1; }

# two commands alternated over two gaps, same output, plus back-to-back runs
python3 "$W" --rounds 2 --gaps 0,0.05 --output "$tmp/o" --back-to-back 2 --csv "$tmp/runs.csv" \
  -- sh -c "echo same > '$tmp/o'" --- sh -c "sleep 0.02; echo same > '$tmp/o'" > "$tmp/out" 2>/dev/null ||
  fail "two agreeing commands: exit $?"
[ "$(grep -c '^| [AB]: ' "$tmp/out")" -eq 6 ] || fail "want 6 rows (2 commands x (2 gaps + back to back))"
grep -q '^| A: sh -c .* | 0.05 s | 2 | .* | identical |$' "$tmp/out" || fail "A's 0.05 s row"
grep -q '^| B: .* | back to back | 2 | ' "$tmp/out" || fail "B's back-to-back row"
[ "$(wc -l < "$tmp/runs.csv")" -eq 13 ] || fail "the CSV should hold a header and 12 runs"
# B sleeps 20 ms: its median above A's
a=$(awk -F'|' '/^\| A: .* 0 s /{print $6+0}' "$tmp/out"); b=$(awk -F'|' '/^\| B: .* 0 s /{print $6+0}' "$tmp/out")
awk -v a="$a" -v b="$b" 'BEGIN { exit !(b > a + 10) }' || fail "B (sleeps 20 ms) median $b ms not above A's $a ms"

# outputs that differ between runs: reported, exit 1
python3 "$W" --rounds 2 --output "$tmp/o" -- sh -c "date +%N > '$tmp/o'" > "$tmp/out" 2>&1
[ $? -eq 1 ] || fail "differing outputs should exit 1"
grep -q 'DIFFER' "$tmp/out" || fail "differing outputs not marked"

# a failing command: exit 1, no row
python3 "$W" --rounds 1 -- false > "$tmp/out" 2>&1
[ $? -eq 1 ] || fail "a failing command should exit 1"

# usage errors: exit 2
for args in "--gaps x -- true" "--gaps 0,700 -- true" "--rounds 0 -- true" "" "-- true ---"; do
  python3 "$W" $args > "$tmp/out" 2>&1
  [ $? -eq 2 ] || fail "wallab $args: want exit 2"
done

# the gap waits for a gt-gpu-release helper: the command leaves a process of
# that name behind for 1 s, so the second run waits for it; the same process
# under another name is not waited for
timed() { local t0; t0=$(date +%s%N); python3 "$W" --rounds 2 --gaps 0 -- sh -c "'$1' 1 > /dev/null 2>&1 &" \
  > /dev/null 2>&1 || fail "run leaving $1: exit $?"; echo $(( ($(date +%s%N) - t0) / 1000000 )); }
cp "$(command -v sleep)" "$tmp/gt-gpu-release"
cp "$(command -v sleep)" "$tmp/gt-other-proc"
sleep 1.1 # no helper of the runs above is left
with=$(timed "$tmp/gt-gpu-release")
sleep 1.1
without=$(timed "$tmp/gt-other-proc")
[ "$with" -ge 1000 ] || fail "two runs that each leave a 1 s helper took $with ms: the gap did not wait for it"
[ "$without" -lt "$with" ] && [ $((with - without)) -ge 700 ] ||
  fail "a process of another name was waited for ($without ms against $with ms)"
exit 0
