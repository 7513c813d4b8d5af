#!/usr/bin/env bash
# mcmesh on the GPU writes the same PLY bytes whichever way the mesh comes to
# the file: in one pass the mesh goes device -> file in pieces through pinned
# buffers (the --timings row "download+write (overlapped)"), with
# --max-gpu-mem in z-slabs each downloaded whole into host memory first (the
# way every mesh went before). Binary with normals, ascii, small pieces
# (GT_PLY_PIECE_ROWS) and the default. And the volume read whole while CUDA
# starts (registered, one upload per slab) against the streamed read.
# Skips (77) without a GPU.
#   gpu_cli_mcmesh_ply.sh DEVICE_PROBE MCMESH      (env GT_TESTDATA)
set -u
probe=$1 prog=$2
td=${GT_TESTDATA:?}/mc
[ "$("$probe" --device auto 2>/dev/null)" = cuda ] || { echo "no GPU: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
in=$td/bunny_dist.nrrd
for opts in "--normals" "--normals --ascii" "" ; do
  for pieces in 1000 ""; do
    # shellcheck disable=SC2086
    GT_PLY_PIECE_ROWS=$pieces "$prog" --device cuda --timings $opts "$in" -o "$tmp/one.ply" 2>"$tmp/one.err" ||
      { fail "one pass ($opts, pieces ${pieces:-default}): exit $?: $(head -c 300 "$tmp/one.err")"; continue; }
    grep -q "download+write (overlapped)" "$tmp/one.err" ||
      fail "one pass ($opts): no 'download+write (overlapped)' row: $(cat "$tmp/one.err")"
    grep -q "the writer waited" "$tmp/one.err" || fail "one pass ($opts): no download wait line"
    # shellcheck disable=SC2086
    "$prog" --device cuda --timings --max-gpu-mem 200K $opts "$in" -o "$tmp/slabs.ply" 2>"$tmp/slabs.err" ||
      { fail "slabs ($opts): exit $?: $(head -c 300 "$tmp/slabs.err")"; continue; }
    grep -q "overlapped" "$tmp/slabs.err" && fail "slabs ($opts): says overlapped"
    cmp "$tmp/one.ply" "$tmp/slabs.ply" || fail "one pass and slabs differ ($opts, pieces ${pieces:-default})"
  done
done
# the volume read whole while CUDA starts and uploaded from page-locked host
# memory (the default for a regular file) against the streamed read through
# the pinned staging slots: same bytes, one pass and slabs
for budget in "" "--max-gpu-mem 200K"; do
  # shellcheck disable=SC2086
  "$prog" --device cuda --timings $budget "$in" -o "$tmp/pre.ply" 2>"$tmp/pre.err" ||
    { fail "prefetched ($budget): exit $?: $(head -c 300 "$tmp/pre.err")"; continue; }
  grep -q "read (whole volume, while CUDA starts)" "$tmp/pre.err" && grep -q "register the volume" "$tmp/pre.err" ||
    fail "prefetched ($budget): no whole-volume read or register row: $(cat "$tmp/pre.err")"
  # shellcheck disable=SC2086
  GT_MC_NO_PREFETCH=1 "$prog" --device cuda --timings $budget "$in" -o "$tmp/str.ply" 2>"$tmp/str.err" ||
    { fail "streamed ($budget): exit $?: $(head -c 300 "$tmp/str.err")"; continue; }
  grep -q "read (overlaps upload)" "$tmp/str.err" || fail "streamed ($budget): no staged read row"
  cmp "$tmp/pre.ply" "$tmp/str.ply" || fail "prefetched and streamed PLYs differ ($budget)"
done
[ $fails = 0 ] && echo "one-pass (pieces from the device) and slab PLYs are the same bytes; prefetched = streamed"
exit $((fails > 0))
