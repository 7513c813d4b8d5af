# Sourced by the shell tests: a temporary folder $T (removed at exit) and the
# pass/fail lines they print; a script ends with `exit $fail`.
#   . "$(dirname "$0")/../lib/checks.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
# check NAME EXPECTED_RC ACTUAL_RC: the start of $T/e (a run's stderr) on failure
check() {
    if [ "$2" = "$3" ]; then ok "$1"; return; fi
    local why=""
    [ -s "$T/e" ] && why=" ($(head -c 400 "$T/e"))"
    bad "$1: exit $3, expected $2$why"
}
# has NAME FILE TEXT: FILE contains TEXT (a fixed string)
has() {
    if grep -qF -- "$3" "$2"; then ok "$1"; else bad "$1: '$3' not in: $(head -c 2000 "$2")"; fi
}
# same NAME A B: byte-identical files
same() {
    if cmp -s "$2" "$3"; then ok "$1"; else bad "$1: $2 and $3 differ ($(stat -c %s "$2" "$3" 2>&1 | tr '\n' ' ')bytes)"; fi
}
# matches NAME FILE REGEX: a line of FILE matches the basic regular expression
matches() {
    if grep -q -- "$3" "$2"; then ok "$1"; else bad "$1: /$3/ not in: $(head -c 2000 "$2")"; fi
}
