#!/usr/bin/env bash
# mcmesh on the GPU writes the same PLY bytes whichever way the mesh comes to
# the file: in one pass the mesh goes device -> file in pieces through pinned
# buffers (the --timings row "download+write (overlapped)"), with
# --max-gpu-mem in z-slabs each downloaded whole into host memory first (the
# way every mesh went before). Binary with normals, ascii, small pieces
# (GT_PLY_PIECE_ROWS) and the default. Skips (77) without a GPU.
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
[ $fails = 0 ] && echo "one-pass (pieces from the device) and slab PLYs are the same bytes"
exit $((fails > 0))
