#!/usr/bin/env bash
# The job API tests: libcore used the way an outside C program uses it.
#   run-api-tests.sh BUILD_DIR        (meson test passes it; the sources are
#                                      the tree this script is in)
# Installs the build into a temporary folder (meson install --destdir), checks
# the installed headers (every public header of lib/ is there, and each one
# compiles on its own, twice, as C11 without warnings), then compiles every
# tests/api/*.c with
#   ${CC:-cc} FILE $(pkg-config --cflags --static --libs gputools-core)
# (PKG_CONFIG_PATH and the prefix pointed at the temporary installation) and
# runs it.
#
# A test program is one .c file (it may include api_test.h, beside it, for
# CHECK and a temporary folder). main returns 0 when its checks pass, 77 to
# skip, anything else is a failure. It runs in an empty folder of its own
# that holds a link `testdata` to the shipped test data; GT_TESTDATA and
# GT_SOURCE_DIR are set as for the other tests.
# Exit status: 0 when all passed (some may have skipped), 1 on any failure,
# 77 when nothing could run: no compiler, pkg-config or meson (the GPU test
# bundle's machine), not a configured meson build folder (the bundle), or
# every test skipped.
set -u
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
read -r -a cc <<< "${CC:-cc}"
for t in "${cc[0]}" pkg-config meson; do
  command -v "$t" > /dev/null || { echo "SKIP: $t not found"; exit 77; }
done
[ -f "$1/meson-private/install.dat" ] || { echo "SKIP: $1 is not a configured meson build folder"; exit 77; }
build=$(cd "$1" && pwd) || exit 1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dest=$work/dest
if ! meson install -C "$build" --destdir "$dest" --no-rebuild --quiet > "$work/install.log" 2>&1; then
  echo "FAIL: meson install --destdir"; cat "$work/install.log"; exit 1
fi
pc=$(find "$dest" -name gputools-core.pc -print -quit)
[ -n "$pc" ] || { echo "FAIL: gputools-core.pc was not installed"; exit 1; }
# The installed .pc with its prefix moved into the destdir (only ours: the
# packages it requires keep theirs).
prefix=$(sed -n 's/^prefix=//p' "$pc")
mkdir "$work/pkgconfig"
sed "s|^prefix=.*|prefix=$dest$prefix|" "$pc" > "$work/pkgconfig/gputools-core.pc"
export PKG_CONFIG_PATH="$work/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
if ! cflags=$(pkg-config --cflags --static gputools-core) || ! libs=$(pkg-config --libs --static gputools-core); then
  echo "FAIL: pkg-config gputools-core"; exit 1
fi
incdir=$(pkg-config --variable=includedir gputools-core)/gputools
echo "pkg-config gputools-core: $cflags $libs"
fails=0

# Every public header of lib/ installed: the list is taken at configure time.
missing=$(cd "$src/lib" && find . -name '*.h' ! -name '*_impl.h' ! -name '*_internal.h' -printf '%P\n' |
            while read -r h; do [ -f "$incdir/$h" ] || echo "lib/$h"; done)
if [ -n "$missing" ]; then
  echo "FAIL: not installed (added since the build was configured? meson setup --reconfigure):" "$missing"
  fails=$((fails + 1))
fi
# Each installed header stands alone (includes what it uses) and has a guard.
nh=0 hfails=0
while read -r h; do
  printf '#include "%s"\n#include "%s"\nint gt_api_header_check;\n' "$h" "$h" > "$work/h.c"
  # shellcheck disable=SC2086 # pkg-config's flags are words
  if ! "${cc[@]}" -std=c11 -Wall -Wextra -Werror -fsyntax-only "$work/h.c" $cflags 2> "$work/h.err"; then
    echo "FAIL: installed header $h does not compile on its own:"; head -20 "$work/h.err"; hfails=$((hfails + 1))
  fi
  nh=$((nh + 1))
done < <(cd "$incdir" && find . -name '*.h' -printf '%P\n' | sort)
[ "$hfails" -eq 0 ] && echo "ok   $nh installed headers compile on their own"
fails=$((fails + hfails))

ran=0 skipped=0
for t in "$src"/tests/api/*.c; do
  [ -e "$t" ] || continue
  name=$(basename "$t" .c)
  mkdir -p "$work/run/$name"
  ln -s "$src/testdata" "$work/run/$name/testdata"
  # shellcheck disable=SC2086
  if ! "${cc[@]}" -Wall -Wextra "$t" -o "$work/$name" $cflags $libs > "$work/$name.cc" 2>&1; then
    echo "FAIL $name: does not compile or link against the installed libcore:"; cat "$work/$name.cc"
    fails=$((fails + 1)); continue
  fi
  [ -s "$work/$name.cc" ] && cat "$work/$name.cc"
  (cd "$work/run/$name" && GT_TESTDATA="$src/testdata" GT_SOURCE_DIR="$src" "$work/$name") > "$work/$name.log" 2>&1
  rc=$?
  case $rc in
    0) echo "ok   $name"; ran=$((ran + 1)) ;;
    77) echo "SKIP $name"; sed 's/^/     /' "$work/$name.log"; skipped=$((skipped + 1)) ;;
    *) echo "FAIL $name: exit $rc"; sed 's/^/     /' "$work/$name.log"; fails=$((fails + 1)) ;;
  esac
done
echo "$ran passed, $skipped skipped, $fails failed"
[ "$fails" -eq 0 ] || exit 1
[ "$ran" -gt 0 ] || exit 77
exit 0
