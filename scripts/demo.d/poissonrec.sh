#!/usr/bin/env bash
# poissonrec demo: the Stanford bunny (8000 points sampled from the scan's
# triangles) to a closed mesh with per-vertex density, and a trimmed copy.
set -euo pipefail
"$BIN/poissonrec" --depth 6 --density --timings "$TESTDATA/poisson/bunny_8k.ply" -o "$OUT/poissonrec_bunny.ply"
"$BIN/poissonrec" --depth 6 --trim 0.05 -q "$TESTDATA/poisson/bunny_8k.ply" -o "$OUT/poissonrec_bunny_trim.ply"
echo "poissonrec: $OUT/poissonrec_bunny.ply (closed), $OUT/poissonrec_bunny_trim.ply (trimmed)"
