# Shared by the hostile-input scripts (sourced, bash). Each case runs one
# command in a work folder $W that holds the inputs, then asserts:
#   - the exit code (a signal or a timeout is never expected);
#   - on failure, a "<prog>: error: " line on stderr that matches a pattern
#     naming the problem;
#   - that $W is exactly as before: no output file, no temporary file beside
#     one, no input changed (checksums of every file, the type and target of
#     everything else). A success case names what it creates (--creates),
#     which is checked and removed before the comparison.
#
#   hostile_init PROG_PATH          work folders, traps; skips (77) without PROG
#   run_case NAME RC PATTERN [OPTS] -- COMMAND...
#       OPTS: --stdin FILE          standard input from FILE (default /dev/null)
#             --stdin-pipe FILE     standard input from `cat FILE |`
#             --stdout-append FILE  standard output appended to FILE
#             --stdout-closed       standard output closed
#             --creates PATH        a success case's output (must exist)
#   same_file_cases NAME INPUT WHAT -- COMMAND...   (see below)
#   unreadable_input FILE           prints a path that cannot be read: a copy
#                                   of FILE made mode 000, or (as root, where
#                                   mode 000 does not stop reads) a directory
#   hostile_finish                  summary; fails below 25 cases
set -u
TMO=${HOSTILE_TIMEOUT:-30}
N=0
F=0

hostile_init() {
    PROG=${1:?usage: <script> PROGRAM}
    PROGNAME=$(basename "$PROG")
    if [ ! -x "$PROG" ]; then
        echo "SKIP: $PROG is not built"
        exit 77
    fi
    T=$(mktemp -d "${TMPDIR:-/tmp}/hostile_${PROGNAME}.XXXXXX")
    W=$T/w
    mkdir "$W"
    trap 'chmod -R u+rwX "$T" 2>/dev/null; rm -rf "$T"' EXIT
    TD=${GT_TESTDATA:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../testdata" && pwd)}
    export GT_NO_GPU=${GT_NO_GPU:-}
}

# every file's checksum, and the type and link target of everything else
snapshot() {
    (
        cd "$W" || exit 1
        find . -mindepth 1 ! -type f -printf '%y %p -> %l\n' | LC_ALL=C sort
        find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r md5sum 2>&1
    )
}

unreadable_input() {
    if [ "$(id -u)" = 0 ]; then
        mkdir -p "$W/unreadable.d"
        echo "$W/unreadable.d"
    else
        local u
        u="$W/unreadable.$(basename "$1")"
        cp "$1" "$u"
        chmod 000 "$u"
        echo "$u"
    fi
}

run_case() {
    local name=$1 want=$2 pat=$3
    shift 3
    local stdin=/dev/null pipe='' append='' closed='' creates=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        case $1 in
        --stdin) stdin=$2; shift 2 ;;
        --stdin-pipe) pipe=$2; shift 2 ;;
        --stdout-append) append=$2; shift 2 ;;
        --stdout-closed) closed=1; shift ;;
        --creates) creates+=("$2"); shift 2 ;;
        *) echo "run_case $name: unknown option $1"; exit 99 ;;
        esac
    done
    shift
    N=$((N + 1))
    local before after rc why=''
    before=$(snapshot)
    if [ -n "$pipe" ]; then
        cat "$pipe" 2>/dev/null | timeout "$TMO" "$@" >"$T/out" 2>"$T/err"
        rc=${PIPESTATUS[1]}
    elif [ -n "$append" ]; then
        timeout "$TMO" "$@" <"$stdin" >>"$append" 2>"$T/err"
        rc=$?
    elif [ -n "$closed" ]; then
        timeout "$TMO" "$@" <"$stdin" >&- 2>"$T/err"
        rc=$?
    else
        timeout "$TMO" "$@" <"$stdin" >"$T/out" 2>"$T/err"
        rc=$?
    fi
    if [ "$rc" != "$want" ]; then
        why="exit $rc, expected $want"
    elif [ "$want" != 0 ] && ! grep -q "^$PROGNAME: error: " "$T/err"; then
        why="no '$PROGNAME: error:' line"
    elif [ "$want" != 0 ] && ! grep -Eq -- "$pat" "$T/err"; then
        why="message does not match /$pat/"
    fi
    local c
    for c in "${creates[@]+"${creates[@]}"}"; do
        if [ -z "$why" ] && [ ! -e "$c" ]; then why="did not create $c"; fi
        rm -f "$c"
    done
    after=$(snapshot)
    if [ -z "$why" ] && [ "$before" != "$after" ]; then
        why="the work folder changed (an input modified or a file left behind): $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | head -5 | tr '\n' ' ')"
    fi
    if [ -n "$why" ]; then
        F=$((F + 1))
        echo "FAIL $name: $why"
        sed 's/^/     stderr: /' "$T/err" | head -5
    else
        echo "ok   $name ($(head -1 "$T/err" | cut -c1-150))"
    fi
}

# Four cases of "the output is this input", each exit 2 naming both paths:
# the same path, another spelling (into a folder and back), a hard link and a
# symbolic link. The command holds @OUT@ where the output path goes.
#   same_file_cases NAME INPUT WHAT -- COMMAND...
same_file_cases() {
    local name=$1 in=$2 what=$3
    shift 4
    local dir base
    dir=$(dirname "$in")
    base=$(basename "$in")
    mkdir -p "$dir/sub.d"
    ln "$in" "$dir/hard.$base"
    ln -s "$base" "$dir/soft.$base"
    local suffix out a args
    for suffix in "" -dot-spelling -hard-link -symlink; do
        case $suffix in
        "") out=$in ;;
        -dot-spelling) out=$dir/sub.d/.././$base ;;
        -hard-link) out=$dir/hard.$base ;;
        -symlink) out=$dir/soft.$base ;;
        esac
        args=()
        for a in "$@"; do args+=("${a//@OUT@/$out}"); done
        run_case "$name$suffix" 2 "'$out' is the same file as the input '$in' \\($what\\): an output never replaces an input" \
            -- "${args[@]}"
    done
}

hostile_finish() {
    echo "$PROGNAME: $N cases, $F failed"
    if [ "$N" -lt 25 ]; then
        echo "FAIL: $N cases, at least 25 expected"
        exit 1
    fi
    [ "$F" -eq 0 ]
}
