#!/usr/bin/env bash
# CLI tests of mcmesh: runs the built program as a user would.
#   cli_mcmesh.sh PATH/TO/mcmesh      (env GT_TESTDATA)
set -u
prog=$1
td=${GT_TESTDATA:?}/mc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect CODE DESC -- command...
expect() {
  local code=$1 desc=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" != "$code" ]; then fail "$desc: exit $rc, expected $code; stderr: $(head -c 400 "$tmp/err")"; return 1; fi
  return 0
}
has_err() { grep -q "$1" "$tmp/err" || fail "$2: stderr lacks '$1': $(head -c 300 "$tmp/err")"; }
no_file() { [ ! -e "$1" ] || fail "$2: output file left behind"; ls "$(dirname "$1")" | grep -q '\.tmp\|~' && fail "$2: temp file left"; true; }
dev=(--device cpu)

expect 0 help -- "$prog" --help
grep -q -- "--iso" "$tmp/out" && grep -q -- "--max-gpu-mem" "$tmp/out" && grep -q -- "--normals" "$tmp/out" || fail "help incomplete"

# a closed sphere: header, counts, watertight (python numpy when present)
expect 0 sphere -- "$prog" "${dev[@]}" --iso 0 --normals "$td/sphere.nrrd" -o "$tmp/s.ply"
head -c 400 "$tmp/s.ply" | grep -q "element face" || fail "sphere: no face element"
head -c 400 "$tmp/s.ply" | grep -q "property float nx" || fail "sphere: no normals"
head -c 400 "$tmp/s.ply" | grep -q "binary_little_endian" || fail "sphere: not binary LE"
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  /usr/bin/python3 - "$tmp/s.ply" <<'PY' || fail "sphere: PLY check"
import sys, numpy as np
b = open(sys.argv[1], 'rb').read()
h, _, body = b.partition(b'end_header\n')
lines = h.decode().splitlines()
nv = int([l for l in lines if l.startswith('element vertex')][0].split()[2])
nf = int([l for l in lines if l.startswith('element face')][0].split()[2])
props = [l for l in lines if l.startswith('property float')]
v = np.frombuffer(body[:nv * 4 * len(props)], dtype='<f4').reshape(nv, len(props))
f = np.frombuffer(body[nv * 4 * len(props):], dtype=np.dtype([('n', 'u1'), ('i', '<i4', 3)]), count=nf)
assert (f['n'] == 3).all(), "not triangles"
t = f['i'].astype(np.int64)
e = np.concatenate([t[:, [0, 1]], t[:, [1, 2]], t[:, [2, 0]]])
key = np.minimum(e[:, 0], e[:, 1]) * nv + np.maximum(e[:, 0], e[:, 1])
_, cnt = np.unique(key, return_counts=True)
assert (cnt == 2).all(), "edge not in exactly two triangles"
assert nv - len(cnt) + nf == 2, "Euler characteristic != 2"
# world units: radius 8 voxels * spacing 0.25 = 2 around the centre (-3 + 11.5*0.25)
c = -3 + 11.5 * 0.25
r = np.linalg.norm(v[:, :3] - c, axis=1)
assert abs(r - 2.0).max() < 0.25, f"radius off: {abs(r - 2).max()}"
# normals toward decreasing values: outward
assert ((v[:, 3:6] * (v[:, :3] - c)).sum(1) > 0).all(), "normals not outward"
PY
fi

# the NRRD's iso key is used without --iso; ascii output to stdout
expect 0 "iso key" -- "$prog" "${dev[@]}" --ascii "$td/gyroid.nrrd" -o -
head -1 "$tmp/out" | grep -q '^ply' || fail "stdout: not a PLY"
grep -q "format ascii" "$tmp/out" || fail "stdout: not ascii"

# soup: 3 vertices per face
expect 0 soup -- "$prog" "${dev[@]}" --soup --ascii "$td/gyroid.nrrd" -o "$tmp/soup.ply"
nv=$(sed -n 's/element vertex //p' "$tmp/soup.ply"); nf=$(sed -n 's/element face //p' "$tmp/soup.ply")
[ -n "$nv" ] && [ "$nv" = $((3 * nf)) ] || fail "soup: $nv vertices for $nf faces"

# raw input; slab streaming (tiny budget) gives the same bytes as one pass
raw="$td/blobs_24x20x16.u8.raw"
expect 0 raw -- "$prog" "${dev[@]}" --dims 24,20,16 --type uint8 --spacing 0.5,0.5,1 --iso 128 "$raw" -o "$tmp/r1.ply"
expect 0 "raw slabs" -- "$prog" "${dev[@]}" --max-gpu-mem 8K --dims 24,20,16 --type uint8 --spacing 0.5,0.5,1 --iso 128 "$raw" -o "$tmp/r2.ply"
cmp -s "$tmp/r1.ply" "$tmp/r2.ply" || fail "slab streaming differs from one pass"
# stdin
expect 0 stdin -- sh -c "\"$prog\" --device cpu --dims 24,20,16 --type uint8 --spacing 0.5,0.5,1 --iso 128 - -o \"$tmp/r3.ply\" < \"$raw\""
cmp -s "$tmp/r1.ply" "$tmp/r3.ply" || fail "stdin output differs"

# usage errors: exit 2, no output file
expect 2 "no iso" -- "$prog" "${dev[@]}" "$td/sphere.nrrd" -o "$tmp/x.ply"; has_err "iso" "no iso"; no_file "$tmp/x.ply" "no iso"
expect 2 "bad iso" -- "$prog" "${dev[@]}" --iso abc "$td/sphere.nrrd" -o "$tmp/x.ply"; has_err "iso" "bad iso"; no_file "$tmp/x.ply" "bad iso"
expect 2 "nan iso" -- "$prog" "${dev[@]}" --iso nan "$td/sphere.nrrd" -o "$tmp/x.ply"; no_file "$tmp/x.ply" "nan iso"
expect 2 "no output" -- "$prog" "${dev[@]}" --iso 0 "$td/sphere.nrrd"
expect 2 "no input" -- "$prog" "${dev[@]}" --iso 0 -o "$tmp/x.ply"
expect 2 "raw without dims" -- "$prog" "${dev[@]}" --iso 0 "$raw" -o "$tmp/x.ply"; has_err "dims" "raw without dims"; no_file "$tmp/x.ply" "raw without dims"
expect 2 "bad dims" -- "$prog" "${dev[@]}" --iso 0 --dims 24,0,16 --type uint8 "$raw" -o "$tmp/x.ply"; no_file "$tmp/x.ply" "bad dims"
expect 2 "bad type" -- "$prog" "${dev[@]}" --iso 0 --dims 24,20,16 --type complex "$raw" -o "$tmp/x.ply"
expect 2 "bad max-gpu-mem" -- "$prog" "${dev[@]}" --iso 0 --max-gpu-mem lots "$td/sphere.nrrd" -o "$tmp/x.ply"
expect 2 "bad option" -- "$prog" --no-such-option

# bad data: exit 3, clear message, no output
expect 3 "raw too short" -- "$prog" "${dev[@]}" --iso 1 --dims 24,20,17 --type uint8 "$raw" -o "$tmp/x.ply"; no_file "$tmp/x.ply" "raw too short"
printf 'NRRD0004\ntype: float\ndimension: 3\nsizes: 4 4\nencoding: raw\n\n' > "$tmp/bad1.nrrd"
expect 3 "bad sizes" -- "$prog" "${dev[@]}" --iso 0 "$tmp/bad1.nrrd" -o "$tmp/x.ply"; has_err "bad1.nrrd" "bad sizes"; no_file "$tmp/x.ply" "bad sizes"
{ printf 'NRRD0004\ntype: float\ndimension: 3\nsizes: 8 8 8\nendian: little\nencoding: raw\n\n'; head -c 100 /dev/zero; } > "$tmp/short.nrrd"
expect 3 "truncated data" -- "$prog" "${dev[@]}" --iso 0 "$tmp/short.nrrd" -o "$tmp/x.ply"; no_file "$tmp/x.ply" "truncated data"
printf 'NRRD0004\ntype: wibble\ndimension: 3\nsizes: 2 2 2\nencoding: raw\n\n' > "$tmp/bad2.nrrd"
expect 3 "bad type field" -- "$prog" "${dev[@]}" --iso 0 "$tmp/bad2.nrrd" -o "$tmp/x.ply"; no_file "$tmp/x.ply" "bad type field"
printf 'NRRD0004\ntype: float\ndimension: 3\nsizes: 2 2 2\nendian: little\nencoding: raw\niso:=banana\n\n' > "$tmp/bad3.nrrd"
head -c 32 /dev/zero >> "$tmp/bad3.nrrd"
"$prog" "${dev[@]}" "$tmp/bad3.nrrd" -o "$tmp/x.ply" >/dev/null 2>"$tmp/err"; rc=$?
{ [ $rc = 2 ] || [ $rc = 3 ]; } || fail "bad iso key: exit $rc"; no_file "$tmp/x.ply" "bad iso key"
expect 1 "missing file" -- "$prog" "${dev[@]}" --iso 0 "$tmp/nope.nrrd" -o "$tmp/x.ply" || true

# degenerate: iso outside the data range, a one-voxel-thin volume -> empty mesh, exit 0, notice
expect 0 "iso above range" -- "$prog" "${dev[@]}" --iso 1000 "$td/sphere.nrrd" -o "$tmp/e.ply"; has_err "empty mesh" "iso above range"
grep -aq "element vertex 0" "$tmp/e.ply" || fail "iso above range: vertices written"
grep -aq "element face [1-9]" "$tmp/e.ply" && fail "iso above range: faces written"
head -c $((24 * 20)) "$raw" > "$tmp/thin.raw"
expect 0 thin -- "$prog" "${dev[@]}" --iso 128 --dims 24,20,1 --type uint8 "$tmp/thin.raw" -o "$tmp/t.ply"; has_err "empty mesh" thin
# the data range and NaN count of a volume large enough that the scan runs on
# several threads (2^20 voxels): values (i mod 1000) - 333.5, one NaN
if [ -x /usr/bin/python3 ]; then
  /usr/bin/python3 -c '
import struct, sys
n = 128 * 128 * 64
v = [(i % 1000) - 333.5 for i in range(n)]
v[777777] = float("nan")
open(sys.argv[1], "wb").write(struct.pack("<%df" % n, *v))' "$tmp/range.raw"
  expect 0 "range scan" -- "$prog" "${dev[@]}" -v --iso 5000 --dims 128,128,64 --type float32 "$tmp/range.raw" -o "$tmp/r.ply"
  has_err "outside the data range \[-333.5, 665.5\]" "range scan"
  has_err "1 NaN voxels" "range scan"
fi

# GPU when present: same bytes as the CPU (auto picks it)
if [ "${GT_NO_GPU:-0}" != 1 ] && "$prog" --device cuda --iso 0 "$td/sphere.nrrd" -o "$tmp/g.ply" 2>/dev/null; then
  "$prog" --device cpu --iso 0 "$td/sphere.nrrd" -o "$tmp/c.ply"
  cmp -s "$tmp/g.ply" "$tmp/c.ply" || echo "note: GPU and CPU PLY bytes differ (positions may differ in the last bit; tests/mc/test_mc_gpu checks 1e-5)"
fi

# where a GPU may be used (--device auto), a seekable volume is read whole
# while the CUDA context starts and the extraction takes it from memory (on
# the GPU, uploaded from it; without one, the CPU fallback reads it there):
# the same bytes as the streamed read (GT_MC_NO_PREFETCH=1), with and
# without a memory budget (slabs on the GPU; its register-and-upload path in
# slabs: gpu_cli_mcmesh_ply), uint8 (converted) or float; a file too short
# is still named
for case in "raw|--dims 24,20,16 --type uint8 --spacing 0.5,0.5,1 --iso 128 $raw" "nrrd|--iso 0 --normals $td/sphere.nrrd"; do
  name=${case%%|*} args=${case#*|}
  for budget in "" "--max-gpu-mem 200K"; do
    # shellcheck disable=SC2086
    expect 0 "prefetch $name $budget" -- "$prog" --device auto $budget $args -o "$tmp/p1.ply"
    # shellcheck disable=SC2086
    expect 0 "streamed $name $budget" -- env GT_MC_NO_PREFETCH=1 "$prog" --device auto $budget $args -o "$tmp/p2.ply"
    cmp -s "$tmp/p1.ply" "$tmp/p2.ply" || fail "prefetched and streamed reads differ ($name $budget)"
  done
done
expect 3 "prefetch: raw too short" -- "$prog" --device auto --iso 1 --dims 24,20,17 --type uint8 "$raw" -o "$tmp/x.ply"
has_err "volume data needs" "prefetch: raw too short"; no_file "$tmp/x.ply" "prefetch: raw too short"

[ $fails = 0 ] && echo "all mcmesh CLI checks passed"
exit $((fails > 0))
